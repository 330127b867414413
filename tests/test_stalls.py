"""The global-stall test, phase split, uptime, network baseline, A/B interference, quantised modes."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.errors import SchemaError, UsageError
from workbench.models.stalls import (
    baseline_check,
    global_stall_test,
    group_modes,
    interference_ab,
    latency_modes,
    phase_split,
    step_table,
    uptime_effect,
    wilson_interval,
)

STEPS_MS = np.array([0.3, 0.6, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0, 0.8])


def _steps(n_requests: int = 300, stall_rate_per_s: float = 0.0, stall_ms: float = 30.0,
           own_slow_step: int | None = None, own_slow_p: float = 0.0, seed: int = 0) -> pd.DataFrame:
    """Synthetic per-step timings: jittered base time, plus stalls hitting steps ∝ their length."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(n_requests):
        for s, ms in enumerate(STEPS_MS, 1):
            d = ms * rng.lognormal(0, 0.1)
            # Poisson stalls during the step's running time
            d += stall_ms * rng.poisson(stall_rate_per_s * ms / 1e3)
            if own_slow_step == s and rng.random() < own_slow_p:
                d += 25.0
            rows.append((r, s, d / 1e3))
    return pd.DataFrame(rows, columns=["request", "step", "duration_s"])


def test_wilson_interval_contains_the_proportion() -> None:
    lo, hi = wilson_interval(np.array([0, 5, 50]), np.array([100, 100, 100]))
    assert lo[0] == 0 and 0 < hi[0] < 0.05
    assert lo[1] < 0.05 < hi[1] and lo[2] < 0.5 < hi[2]


def test_global_stall_detected_with_positive_slope() -> None:
    res = global_stall_test(_steps(stall_rate_per_s=10.0), n_resamples=400)
    assert res.verdict == "global stall", res.reason
    assert res.slope_low > 0 and res.correlation > 0.9
    # P(slow) ≈ rate × duration: slope ≈ 10 per s = 0.01 per ms
    assert 0.005 < res.slope_per_ms < 0.02
    assert abs(res.intercept) < 0.03
    assert res.n_requests == 300 and res.n_steps == 15
    assert set(res.steps.columns) >= {"step", "mean_ms", "p_slow", "p_slow_low", "p_slow_high"}


def test_no_effect_without_pauses() -> None:
    for seed in range(3):
        res = global_stall_test(_steps(seed=seed), n_resamples=300)
        assert res.verdict == "no effect", res.reason
        assert res.n_slow == 0
        assert res.outliers == ()


def test_random_slowness_unrelated_to_length_is_not_a_global_stall() -> None:
    """Every step slow with the same probability: no slope, so no global stall."""
    rng = np.random.default_rng(3)
    df = _steps(seed=3)
    hit = rng.random(len(df)) < 0.05
    df.loc[hit, "duration_s"] += 0.03
    res = global_stall_test(df, n_resamples=400)
    assert res.verdict != "global stall", res.reason
    assert res.slope_low <= 0 <= res.slope_high


def test_step_with_its_own_cause_stands_off_the_line() -> None:
    df = _steps(stall_rate_per_s=10.0, own_slow_step=2, own_slow_p=0.3, seed=4)
    res = global_stall_test(df, n_resamples=400)
    assert 2 in res.outliers
    excluded = global_stall_test(df, n_resamples=400, exclude_steps=[2])
    assert excluded.verdict == "global stall" and excluded.correlation > res.correlation


def test_step_table_counts() -> None:
    df = _steps(n_requests=50, seed=5)
    df.loc[(df["request"] < 5) & (df["step"] == 14), "duration_s"] += 0.05
    t = step_table(df)
    row = t[t["step"] == 14].iloc[0]
    assert row["n"] == 50 and row["n_slow"] == 5 and row["p_slow"] == pytest.approx(0.1)
    assert row["mean_excess_ms"] == pytest.approx(50, abs=3)


def test_phase_split_global_stall_spreads_excess_like_time() -> None:
    phases = {"before": [1, 2, 3, 4, 5], "evaluate": list(range(6, 13)), "after": [13, 14, 15]}
    per, summ = phase_split(_steps(n_requests=600, stall_rate_per_s=10.0, seed=6), phases)
    assert np.allclose(per[[f"{p}_s" for p in phases]].sum(axis=1), per["total_s"])
    assert summ["share_of_time"].sum() == pytest.approx(1.0)
    assert summ["share_of_excess"].sum() == pytest.approx(1.0)
    assert np.max(np.abs(summ["share_of_excess"] - summ["share_of_time"])) < 0.15
    with pytest.raises(ValueError, match="belong to no phase"):
        phase_split(_steps(n_requests=5), {"before": [1, 2]})


def test_phase_split_local_cause_concentrates_excess() -> None:
    phases = {"before": [1, 2, 3, 4, 5], "rest": list(range(6, 16))}
    _per, summ = phase_split(_steps(n_requests=300, own_slow_step=2, own_slow_p=0.3, seed=7), phases)
    assert summ.set_index("phase").loc["before", "share_of_excess"] > 0.9


def test_uptime_effect_none_and_strong() -> None:
    rng = np.random.default_rng(8)
    up = rng.uniform(0, 3600, 400)
    lat = rng.lognormal(np.log(0.1), 0.2, 400)
    assert uptime_effect(up, lat).verdict == "none"
    strong = uptime_effect(up, lat * (1 + up / 3600))
    assert strong.verdict == "strong" and strong.spearman_rho > 0.3
    assert strong.median_old_ms > strong.median_young_ms
    with pytest.raises(ValueError):
        uptime_effect([1, 2], [1, 2])


def test_baseline_check_rules_out_a_flat_network_only() -> None:
    rng = np.random.default_rng(9)
    t = np.arange(400) * 0.1
    calls = pd.DataFrame({"timestamp_s": t, "latency_s": 0.003 + 0.25 * rng.poisson(0.1, 400)})
    tp = np.arange(2000) * 0.02
    ping = pd.DataFrame({"timestamp_s": tp, "latency_s": 1e-4 * rng.lognormal(0, 0.2, 2000)})
    res = baseline_check(calls, ping)
    assert res.verdict == "network ruled out", res.reason
    assert res.baseline_spread_ms < 0.01 * res.calls_spread_ms
    # a network that stalls with the calls is not ruled out
    slow_net = ping.copy()
    for t0, lat in zip(calls["timestamp_s"], calls["latency_s"], strict=True):
        if lat > 0.1:
            m = (slow_net["timestamp_s"] >= t0) & (slow_net["timestamp_s"] <= t0 + lat)
            slow_net.loc[m, "latency_s"] = lat
    assert baseline_check(calls, slow_net).verdict == "network may contribute"


def test_interference_ab_resamples_blocks() -> None:
    rng = np.random.default_rng(10)
    rows = []
    for b in range(10):
        cond = "writer_on" if b % 2 else "writer_off"
        level = (0.008 if cond == "writer_on" else 0.004) * rng.lognormal(0, 0.1)
        rows += [(b, cond, x) for x in level * rng.lognormal(0, 0.2, 100)]
    df = pd.DataFrame(rows, columns=["block", "condition", "latency_s"])
    res = interference_ab(df, n_resamples=500)
    assert res.verdict == "interference"
    assert res.median.low > 1.3 and res.median.ratio == pytest.approx(2.0, rel=0.25)
    assert res.n_blocks_a == 5 and res.n_blocks_b == 5 and res.median.unit == "group"
    same = df.assign(latency_s=np.where(df["condition"] == "writer_on", df["latency_s"] / 2, df["latency_s"]))
    assert interference_ab(same, n_resamples=500).verdict == "no clear effect"
    with pytest.raises(ValueError, match="both conditions"):
        interference_ab(df[df["condition"] == "writer_on"])


def test_latency_modes_find_the_quantum() -> None:
    rng = np.random.default_rng(11)
    base = 0.003 * rng.lognormal(0, 0.15, 300)
    slow = np.concatenate([0.25 * k + 0.003 * rng.lognormal(0, 0.1, 15) for k in (1, 2, 4)])
    m = latency_modes(np.concatenate([base, slow]))
    assert len(m.modes) == 4
    assert [round(x, -1) for x in m.locations_ms[1:]] == [250, 500, 1000]
    assert m.quantum_ms == pytest.approx(250, rel=0.05)
    smooth = latency_modes(0.003 * rng.lognormal(0, 0.3, 400))
    assert len(smooth.modes) == 1 and smooth.quantum_ms is None


def test_split_fast_bulk_is_grouped_before_the_quantum() -> None:
    rng = np.random.default_rng(12)
    bulk = np.concatenate([0.0032 * rng.lognormal(0, 0.03, 80), 0.0046 * rng.lognormal(0, 0.03, 100)])
    slow = np.concatenate([0.25 * k + 0.004 * rng.lognormal(0, 0.05, 10) for k in (1, 2, 4)])
    m = latency_modes(np.concatenate([bulk, slow]))
    assert len(m.raw_modes) == 5 and len(m.modes) == 4
    assert m.modes[0].count == 180
    assert m.quantum_ms == pytest.approx(250, rel=0.05)


def test_group_modes_keeps_an_even_lattice() -> None:
    from workbench.stats import Mode

    lattice = tuple(Mode(3 + 250 * k, 250 * k, 250 * k + 5, 10, 0.2, 0.5) for k in range(5))
    assert group_modes(lattice) == lattice


def test_analyses_name_the_columns_they_need_and_the_bad_parameter() -> None:
    no_duration = pd.DataFrame({"request": [1, 2], "step": [1, 1]})
    with pytest.raises(SchemaError, match=r"step_table needs column\(s\) \['duration_s'\]"):
        step_table(no_duration)
    with pytest.raises(SchemaError, match=r"global_stall_test needs column\(s\) \['duration_s'\]"):
        global_stall_test(no_duration)
    with pytest.raises(SchemaError, match=r"phase_split needs column\(s\) \['duration_s'\]"):
        phase_split(no_duration, {"all": [1]})
    samples = pd.DataFrame({"latency_s": [0.1, 0.2]})
    with pytest.raises(SchemaError, match=r"baseline_check needs column\(s\) \['timestamp_s'\]"):
        baseline_check(samples, samples)
    with pytest.raises(SchemaError, match=r"interference_ab needs column\(s\) \['condition', 'block'\]"):
        interference_ab(samples)
    with pytest.raises(UsageError, match="confidence must be in"):
        global_stall_test(_steps(n_requests=5), confidence=1.5)
    with pytest.raises(UsageError, match="uptime_effect: need at least 10"):
        uptime_effect([1, 2], [1, 2])


@pytest.mark.parametrize("stall_rate_per_s", [0.0, 10.0])
def test_bootstrap_fits_equal_a_fit_per_resample(stall_rate_per_s: float) -> None:
    """The resamples' slopes and correlations, computed in blocks of matrix products, are the
    least-squares line and Pearson's r of each resample (steps missing in some requests included)."""
    from workbench.models.stalls import _bootstrap_fits, _slow_matrix

    frame = _steps(stall_rate_per_s=stall_rate_per_s)
    rng = np.random.default_rng(3)
    frame = frame[~((frame["step"] == 2) & (rng.random(len(frame)) < 0.3))]  # step 2 absent in ~30 % of requests
    _, dur, slow, valid = _slow_matrix(frame, 0.010)
    got = _bootstrap_fits(dur, slow, valid, 60, np.random.default_rng(7))
    draw = np.random.default_rng(7)
    for b in range(60):
        pick = draw.integers(0, dur.shape[0], dur.shape[0])
        x = 1e3 * np.nanmean(dur[pick], axis=0)
        y = slow[pick].sum(axis=0) / np.maximum(valid[pick].sum(axis=0), 1)
        slope = np.polyfit(x, y, 1)[0]
        r = np.corrcoef(x, y)[0, 1] if np.ptp(y) > 0 else np.nan
        assert got[b, 0] == pytest.approx(slope, rel=1e-9, abs=1e-12)
        assert (np.isnan(got[b, 1]) and np.isnan(r)) or got[b, 1] == pytest.approx(r, rel=1e-9)
