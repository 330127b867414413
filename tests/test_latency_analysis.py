"""Rate-sweep summary, percentiles with CIs, over-threshold counts and bisection replay."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.errors import SchemaError, UsageError
from workbench.latency.analysis import (
    option_bisection,
    over_threshold,
    over_threshold_series,
    percentiles,
    quantile_column,
    rate_sweep,
)

BUNDLED = "data/02_low_qps_nagle/nagle_samples.csv"


def run_frame(rate: float, latencies_s, t0: float = 1.7e9, **extra) -> pd.DataFrame:
    lat = np.asarray(latencies_s, dtype=float)
    ts = t0 + np.arange(lat.size) / rate
    f = pd.DataFrame({"timestamp_s": ts, "latency_s": lat, "recv_s": ts + lat, "rate_per_s": float(rate)})
    for k, v in extra.items():
        f[k] = v
    f.attrs["kind"] = "samples"
    return f


def test_quantile_column_names():
    assert quantile_column(50) == "p50" and quantile_column(99.9) == "p99_9"


def test_percentiles_per_group_with_ci_and_tail_count():
    rng = np.random.default_rng(0)
    f = pd.concat([run_frame(100, rng.exponential(0.01, 1000), cond="a"),
                   run_frame(100, rng.exponential(0.03, 1000), cond="b")], ignore_index=True)
    f.loc[3, "latency_s"] = np.nan  # one unanswered request
    out = percentiles(f, by="cond", qs=(50, 99), n_resamples=200).set_index("cond")
    assert out.loc["a", "n"] == 999 and out.loc["a", "n_unanswered"] == 1
    assert out.loc["b", "p50_s"] == pytest.approx(0.03 * np.log(2), rel=0.15)
    assert (out["p99_low_s"] < out["p99_s"]).all() and (out["p99_s"] < out["p99_high_s"]).all()
    assert out.loc["b", "p99_n_beyond"] == 10
    plain = percentiles(f, by="cond", qs=(50,), ci=False)
    assert np.isnan(plain["p50_low_s"]).all()


def test_over_threshold_counts_slow_and_unanswered_per_second():
    lat = np.full(200, 0.001)
    lat[::10] = 0.050  # 20 slow requests
    lat[5] = np.nan    # and one without reply
    f = run_frame(100, lat)  # 2 s of requests
    (row,) = over_threshold(f, 0.010).to_dict("records")
    assert row["n_over"] == 21 and row["duration_s"] == pytest.approx(2.0)
    assert row["over_per_s"] == pytest.approx(10.5)
    series = over_threshold_series(f, 0.010, bin_s=1.0)
    assert series["n"].tolist() == [100, 100] and series["n_over"].sum() == 21


def test_rate_sweep_marks_overload_as_not_sustained():
    ok = run_frame(50, np.full(200, 0.002))
    # offered 500/s but replies pile up: latency grows linearly (a queue)
    n = 1000
    lat = 0.001 + np.arange(n) * 0.0008
    slow = run_frame(500, lat)
    sweep = rate_sweep(pd.concat([ok, slow], ignore_index=True), threshold_s=0.01, n_resamples=100)
    s = sweep.set_index("offered_per_s")
    assert bool(s.loc[50.0, "sustained"]) and not bool(s.loc[500.0, "sustained"])
    assert s.loc[50.0, "achieved_per_s"] == pytest.approx(50, rel=0.02)
    assert s.loc[500.0, "backlog_growth_s"] > 0.3
    assert s.loc[50.0, "over_per_s"] == 0
    for q in ("p50", "p90", "p99", "p99_9"):
        assert {f"{q}_s", f"{q}_low_s", f"{q}_high_s", f"{q}_n_beyond"} <= set(sweep.columns)


def test_analyses_refuse_distributions_and_missing_columns():
    dist = pd.DataFrame({"latency_s": [0.001, 0.002], "percentile": [50.0, 99.0]})
    dist.attrs["kind"] = "distribution"
    with pytest.raises(SchemaError, match="percentiles needs a 'samples' frame, got a 'distribution'"):
        percentiles(dist)
    with pytest.raises(SchemaError, match="over_threshold needs column.*timestamp_s"):
        over_threshold(pd.DataFrame({"latency_s": [0.1]}), 0.01)
    with pytest.raises(SchemaError, match="rate_sweep needs column.*rate_per_s"):
        rate_sweep(pd.DataFrame({"latency_s": [0.1], "timestamp_s": [1.0]}))


def _trial(run: int, opts: str, lat_s: float, n: int = 50) -> pd.DataFrame:
    return run_frame(20, np.full(n, lat_s), run=run, client_options=opts)


def test_option_bisection_replays_removal_and_names_culprit():
    trials = pd.concat([
        _trial(0, "A+B+C", 0.001),
        _trial(1, "B+C", 0.001),    # A removed: fine
        _trial(2, "C", 0.044),      # B removed: stall back -> B kept
        _trial(3, "B", 0.001),      # C removed: fine
    ], ignore_index=True)
    alone = pd.concat([_trial(10, "A", 0.044), _trial(11, "B", 0.001), _trial(12, "C", 0.044)],
                      ignore_index=True)
    res = option_bisection(trials, threshold_s=0.02, alone=alone)
    assert res.culprits == ("B",)
    assert res.steps["removed"].tolist() == ["", "A", "B", "C"]
    assert res.steps["regressed"].tolist() == [False, False, True, False]
    assert res.alone == {"A": False, "B": True, "C": False}
    bad = pd.concat([_trial(0, "A+B", 0.001), _trial(1, "C", 0.001)], ignore_index=True)
    with pytest.raises(UsageError, match="trials run 1: .* minus one option"):
        option_bisection(bad)


def test_rate_sweep_on_bundled_capture_shows_the_paradox():
    from workbench import resolve
    from workbench.latency import read_latency

    f = read_latency(resolve(BUNDLED))
    assert f.attrs["kind"] == "samples" and len(f.attrs["rejects"]) == 0
    sweep = rate_sweep(f[f["phase"] == "sweep"], threshold_s=0.01, n_resamples=100)
    s = sweep.set_index("offered_per_s").sort_index()
    top = s[s["sustained"]].index.max()
    assert s.index.min() < top
    assert s.loc[s.index.min(), "p99_s"] > 2 * s.loc[top, "p99_s"]
    assert s.loc[s.index.min(), "p50_s"] > 0.030
