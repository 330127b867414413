"""The decision rules of the low-rate latency investigation: every outcome on synthetic data."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.errors import InputNotFoundError, SchemaError
from workbench.latency.analysis import (
    bisection_culprit,
    bisection_trials,
    delayed_ack_quantum,
    lab_phases,
    low_rates,
    nodelay_side,
    option_bisection,
    path_is_fast,
    read_runs,
    slow_per_second_at_low_rate,
    tail_worse_at_low_rate,
    work_is_not_the_cause,
)

RNG = np.random.default_rng(7)


def _run(rate: float, lat_s: np.ndarray, **cols: object) -> pd.DataFrame:
    n = lat_s.size
    f = pd.DataFrame({"timestamp_s": 1.7e9 + np.arange(n) / rate, "latency_s": lat_s, "rate_per_s": float(rate)})
    for k, v in cols.items():
        f[k] = v
    return f


def _frame(*runs: pd.DataFrame) -> pd.DataFrame:
    f = pd.concat(runs, ignore_index=True)
    f.attrs = {"kind": "samples"}
    return f


def _fast(n: int, base_s: float = 0.001) -> np.ndarray:
    return base_s + RNG.exponential(0.0001, n)


def _stalled(n: int, share: float = 1.0, step_s: float = 0.04) -> np.ndarray:
    x = _fast(n)
    x[RNG.random(n) < share] += step_s
    return x


# ---------------------------------------------------------------- tail worse at low rate ----

def test_tail_worse_yes_when_low_rate_stalls() -> None:
    f = _frame(_run(10, _stalled(300)), _run(100, _stalled(300, 0.3)), _run(1000, _fast(300)))
    d = tail_worse_at_low_rate(f, n_resamples=300)
    assert d.verdict == "yes" and d.evidence["low_rate_per_s"] == 10 and d.evidence["high_rate_per_s"] == 1000
    assert d.evidence["p99_ms_by_rate"]["10"] > 40 and 1000 in d.evidence["better_than_lowest"]
    assert "worse with 100× less load" in d.because and "Holm-adjusted" in d.because


def test_tail_worse_no_when_high_rate_is_worse() -> None:
    f = _frame(_run(10, _fast(300)), _run(1000, _stalled(300)))
    d = tail_worse_at_low_rate(f, n_resamples=300)
    assert d.verdict == "no" and "not worse at the lowest rate" in d.because


def test_tail_worse_inconclusive_on_few_noisy_samples_or_one_rate() -> None:
    f = _frame(_run(10, RNG.exponential(0.01, 30)), _run(1000, RNG.exponential(0.01, 30)))
    d = tail_worse_at_low_rate(f, n_resamples=300)
    assert d.verdict == "inconclusive" and "neither clears zero" in d.because
    one = tail_worse_at_low_rate(_frame(_run(10, _stalled(100))), n_resamples=100)
    assert one.verdict == "inconclusive" and "needs two rates" in one.because
    few = tail_worse_at_low_rate(_frame(_run(10, _stalled(10)), _run(1000, _fast(300))), n_resamples=100)
    assert few.verdict == "inconclusive" and "too few" in few.caveats[0]


def test_tail_worse_compares_only_the_rates_given() -> None:
    f = _frame(_run(10, _stalled(300)), _run(1000, _fast(300)), _run(5000, _stalled(300)))
    assert tail_worse_at_low_rate(f, rates=[10, 1000], n_resamples=200).verdict == "yes"
    assert tail_worse_at_low_rate(f, n_resamples=200).verdict == "no"


# ---------------------------------------------------------------- slow requests per second ----

def test_slow_per_second_yes_no_inconclusive() -> None:
    yes = slow_per_second_at_low_rate(_frame(_run(100, _stalled(1000)), _run(1000, _stalled(10000, 0.01))), 0.01)
    assert yes.verdict == "yes" and yes.evidence["more_than_highest"] == [100.0]
    assert "less load, more slow requests per second" in yes.because
    no = slow_per_second_at_low_rate(_frame(_run(10, _stalled(100)), _run(1000, _stalled(10000, 0.1))), 0.01)
    assert no.verdict == "no" and no.evidence["most_over_rate_per_s"] == 1000
    assert "less load, more" not in no.because
    even = slow_per_second_at_low_rate(_frame(_run(10, _stalled(100)), _run(1000, _stalled(10000, 0.01))), 0.01)
    assert even.verdict == "inconclusive" and "less load, more" not in even.because
    assert slow_per_second_at_low_rate(_frame(_run(10, _stalled(100))), 0.01).verdict == "inconclusive"


# ---------------------------------------------------------------- delayed-ACK quantum ----

def test_quantum_yes_per_group_and_never_pooled_across_disagreeing_groups() -> None:
    f = _frame(_run(10, _stalled(400, 0.3)), _run(20, _stalled(400, 0.3)), _run(1000, _fast(400)))
    d = delayed_ack_quantum(f)
    assert d.verdict == "yes" and d.quantum_s is not None and abs(d.quantum_s - 0.04) < 0.004
    t = d.table.set_index("rate_per_s")
    assert bool(t.loc[10, "delayed_ack"]) and not bool(t.loc[1000, "delayed_ack"]) and t.loc[1000, "n_modes"] == 1
    mixed = delayed_ack_quantum(_frame(_run(10, _stalled(400, 0.3)), _run(20, _stalled(400, 0.3, step_s=0.06))))
    assert mixed.verdict == "yes" and mixed.quantum_s is None and "no common one" in mixed.caveats[0]


def test_quantum_no_on_single_mode_and_inconclusive_on_few_samples() -> None:
    no = delayed_ack_quantum(_frame(_run(10, _fast(400)), _run(1000, _fast(400))))
    assert no.verdict == "no" and no.quantum_s is None and "none of the 2 group(s)" in no.because
    few = delayed_ack_quantum(_frame(_run(10, _stalled(30, 0.3))))
    assert few.verdict == "inconclusive" and "fewer than 50" in few.caveats[-1]


# ---------------------------------------------------------------- TCP_NODELAY side ----

def _settings(ok: set[str], rates: tuple[int, ...] = (10, 100)) -> pd.DataFrame:
    runs = []
    for s in ("default", "nodelay_client", "nodelay_server", "nodelay_both"):
        for r in rates:
            runs.append(_run(r, _fast(300) if s in ok else _stalled(300), options=s))
    return _frame(*runs)


@pytest.mark.parametrize(("ok", "side", "verdict"), [
    ({"nodelay_client", "nodelay_both"}, "client", "yes"),
    ({"nodelay_server", "nodelay_both"}, "server", "yes"),
    ({"nodelay_client", "nodelay_server", "nodelay_both"}, "client or server", "yes"),
    ({"nodelay_both"}, "both", "yes"),
    (set(), "none", "no"),
])
def test_nodelay_side_each_outcome(ok: set[str], side: str, verdict: str) -> None:
    d = nodelay_side(_settings(ok), 0.01, n_resamples=200)
    assert (d.side, d.verdict) == (side, verdict)
    assert set(d.table["setting"]) == {"default", "nodelay_client", "nodelay_server", "nodelay_both"}


def test_nodelay_side_inconclusive_when_the_tail_straddles_the_budget() -> None:
    x = _fast(150)
    x[:2] += 0.045  # p99 of 150 rests on two samples: its CI runs from 1 ms to 46 ms
    f = _frame(_run(10, _stalled(150), options="default"), _run(10, x, options="nodelay_client"))
    d = nodelay_side(f, 0.01, n_resamples=300)
    assert d.side == "inconclusive" and d.verdict == "inconclusive" and "the client: undecided" in d.because
    assert any("server" in c for c in d.caveats)


def test_nodelay_side_is_a_fail_when_a_request_goes_unanswered() -> None:
    x = _fast(300)
    x[5] = np.nan
    f = _frame(_run(10, x, options="nodelay_both"))
    assert nodelay_side(f, 0.01, n_resamples=100).side == "none"


# ---------------------------------------------------------------- bisection ----

def _trials(sets: list[str], bad: list[bool]) -> pd.DataFrame:
    runs = [_run(20, _stalled(60) if b else _fast(60), run=i, client_options=s)
            for i, (s, b) in enumerate(zip(sets, bad, strict=True))]
    return _frame(*runs)


def test_bisection_culprit_each_outcome() -> None:
    sets = ["A+B+C", "B+C", "C", "none"]
    yes = bisection_culprit(option_bisection(_trials(sets, [False, False, False, True])))
    assert yes.verdict == "yes" and yes.evidence["culprits"] == ["C"] and "removing C" in yes.because
    no = bisection_culprit(option_bisection(_trials(sets, [False, False, False, False])))
    assert no.verdict == "no" and no.evidence["culprits"] == []
    first = bisection_culprit(option_bisection(_trials(["A+B+C", "B+C"], [True, True])))
    assert first.verdict == "inconclusive" and "already has" in first.because
    two = bisection_culprit(option_bisection(_trials(["A+B", "B", "A"], [False, True, True])))
    assert two.verdict == "inconclusive" and "no single culprit" in two.because


def test_bisection_trials_split_by_phase() -> None:
    t = _trials(["A+B", "B"], [False, True])
    assert bisection_trials(t)[1] is None
    t["phase"] = ["bisect"] * 60 + ["alone"] * 60
    trials, alone = bisection_trials(t)
    assert len(trials) == 60 and alone is not None and len(alone) == 60


# ---------------------------------------------------------------- suspects ----

def test_path_is_fast_each_outcome() -> None:
    assert path_is_fast(_frame(_run(100, _fast(200))), 0.01, n_resamples=200).verdict == "yes"
    assert path_is_fast(_frame(_run(100, _stalled(200))), 0.01, n_resamples=200).verdict == "no"
    x = _fast(200)
    x[:2] += 0.045
    assert path_is_fast(_frame(_run(100, x)), 0.01, n_resamples=300).verdict == "inconclusive"
    assert path_is_fast(_frame(_run(100, _fast(10))), 0.01).verdict == "inconclusive"


def test_work_is_not_the_cause_each_outcome() -> None:
    base = _frame(_run(10, _stalled(300)))
    assert work_is_not_the_cause(base, _frame(_run(10, _stalled(300)))).verdict == "yes"
    assert work_is_not_the_cause(base, _frame(_run(10, _stalled(300) * 3))).verdict == "no"
    assert work_is_not_the_cause(base, _frame(_run(20, _stalled(300)))).verdict == "inconclusive"


# ---------------------------------------------------------------- inputs ----

def test_low_rates_are_the_lowest_present_or_up_to_a_bound() -> None:
    assert low_rates([50, 500, 2000, 5000]) == [50.0, 500.0]
    assert low_rates([5000, 50]) == [50.0]
    assert low_rates([5, 10, 20, 50, 100], 20) == [5.0, 10.0, 20.0]
    assert low_rates([]) == []


def test_read_runs_takes_rates_from_a_column_a_file_name_or_the_run(tmp_path: Path) -> None:
    plain = tmp_path / "plain.csv"
    plain.write_text("timestamp,latency_ms,rate_per_s\n1700000000.0,40.1,50\n1700000000.02,1.2,50\nx,y,z\n")
    f = read_runs(plain)
    assert list(f["rate_per_s"]) == [50.0, 50.0] and f.attrs["rate_from"] == "column rate_per_s"
    assert len(f.attrs["rejects"]) == 1
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "README.md").write_text("not a capture\n")
    for rate in (20, 400):
        lines = ["response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset"]
        lines += [f"0.0440,0.0000,0.0000,0.0001,0.0430,0.0001,200,{i / rate:.4f}" for i in range(10)]
        (folder / f"rate_{rate}.csv").write_text("\n".join(lines) + "\n")
    g = read_runs(folder)
    assert sorted(g["rate_per_s"].unique()) == [20.0, 400.0] and g.attrs["rate_from"] == "file name"
    by = g.groupby("file")["timestamp_s"].agg(["min", "max"]).sort_values("min")
    assert by["min"].iloc[1] > by["max"].iloc[0]  # relative times laid end to end
    (folder / "rate_20.csv").rename(folder / "first.csv")
    h = read_runs(folder)
    assert set(h["rate_per_s"]) == {20.0, 400.0}  # first.csv: 10 requests in 0.5 s, its achieved rate
    assert h.attrs["rate_from"] == "achieved rate of each file, file name"


def test_read_runs_errors_name_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(InputNotFoundError):
        read_runs(tmp_path / "nope.csv")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputNotFoundError, match="holds no latency file"):
        read_runs(empty)
    hgrm = tmp_path / "x.hgrm"
    hgrm.write_text("       Value     Percentile TotalCount 1/(1-Percentile)\n\n"
                    "       1.250 0.000000000000          1           1.00\n"
                    "       2.500 1.000000000000          2\n"
                    "#[Mean    =        1.875, StdDeviation   =        0.625]\n"
                    "#[Max     =        2.500, Total count    =            2]\n"
                    "#[Buckets =           27, SubBuckets     =         2048]\n")
    with pytest.raises(SchemaError, match="needs raw samples"):
        read_runs(hgrm)


def test_lab_phases_split_a_lab_capture() -> None:
    f = _frame(_run(10, _fast(20), phase="sweep", options="default"),
               _run(10, _fast(20), phase="nodelay", options="nodelay_both"),
               _run(100, _fast(20), phase="ping", options="default"))
    parts = lab_phases(f)
    assert set(parts) == {"sweep", "nodelay_both", "ping"} and len(parts["sweep"]) == 20
    assert lab_phases(f.drop(columns="phase")) == {}


def test_quantum_counts_steps_from_the_base_at_the_same_rate_when_every_request_stalls() -> None:
    # every default-socket request stalls once (5/s) or twice (10/s): no fast mode of its own
    one = _stalled(200, 1.0) + np.where(RNG.random(200) < 0.3, 0.004, 0.0)
    two = _stalled(200, 1.0, step_s=0.08)
    f = _frame(_run(5, one, setting="default"), _run(10, two, setting="default"),
               _run(5, _fast(200), setting="nodelay_both"), _run(10, _fast(200), setting="nodelay_both"))
    own = delayed_ack_quantum(f, by=["setting", "rate_per_s"])
    assert own.verdict == "no"  # counted from their own first mode, the stalled groups show no 40 ms step
    based = delayed_ack_quantum(f, by=["setting", "rate_per_s"], base_by="rate_per_s")
    assert based.verdict == "yes" and "fastest mode at the same rate_per_s" in based.because
    t = based.table.set_index(["setting", "rate_per_s"])
    assert t.loc[("default", 10.0), "quantum_ms"] == pytest.approx(80, rel=0.1)
    assert t.loc[("default", 10.0), "base_ms"] == pytest.approx(1.0, abs=0.3)
    # 40 and 80 ms are multiples of one step: the common quantum is that step
    assert based.quantum_s == pytest.approx(0.04, rel=0.1)
