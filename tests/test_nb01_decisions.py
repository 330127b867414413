"""The verdicts behind notebook 01, each on synthetic cases for every outcome, and the clocks of its joins."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from workbench.errors import UsageError
from workbench.models.stalls import (
    LatencyModes,
    after_fix_decision,
    baseline_check,
    global_stall_test,
    interference_ab,
    interference_decision,
    latency_modes,
    latency_sample,
    network_decision,
    parse_phases,
    phase_decision,
    quantized_decision,
    select_rows,
    stall_decision,
)
from workbench.stats import Mode
from workbench.syscalls import read_strace
from workbench.syscalls.waits import (
    duration_peaks,
    long_waits,
    match_waits,
    other_long_calls,
    read_wait_log,
    timed_wait_peaks,
)

from .test_stalls import _steps

T0 = 1_796_000_000.0  # 2026-11-30 00:53:20 UTC
FUTEX = "futex(0x7f0000000010, FUTEX_WAIT_PRIVATE, 0, {{tv_sec=0, tv_nsec={ns}}}) = -1 ETIMEDOUT (Connection timed out)"
POLL = "poll([{{fd=3<TCPv6:[1]>, events=POLLIN}}], 1, 500) = 0 (Timeout)"
SEND = 'sendto(4<TCP:[2]>, "ok", 2, 0, NULL, 0) = 2'
WRITE = 'write(5</tmp/f>, "x", 1) = 1'


def _line(t: float, call: str, d: float, pid: int = 100, tt: bool = False) -> str:
    if tt:
        day = t % 86400
        stamp = f"{int(day // 3600):02d}:{int(day % 3600 // 60):02d}:{day % 60:09.6f}"
    else:
        stamp = f"{t:.6f}"
    return f"{pid} {stamp} {call} <{d:.6f}>"


def _futex_trace(waits_ms: list[int], *, extra: int = 0, tt: bool = False) -> tuple[str, pd.DataFrame]:
    """A trace of futex timeouts (one per wait, each followed by a send) and the server's epoch log of them."""
    lines, log = [], []
    t = T0
    for k in waits_ms:
        d = k / 1e3 + 0.0003
        lines.append(_line(t, FUTEX.format(ns=k * 1_000_000), d, tt=tt))
        log.append((t - 0.00005, t + d + 0.00005, k))
        lines.append(_line(t + d + 0.0001, SEND, 0.00002, tt=tt))
        t += d + 0.05
    for _ in range(extra):  # long futex calls nobody logged
        lines.append(_line(t, FUTEX.format(ns=250_000_000), 0.2503, tt=tt))
        t += 0.3
    frame = pd.DataFrame(log, columns=["start_s", "end_s", "wait_ms"])
    return "\n".join(lines) + "\n", frame


# ------------------------------------------------------------------ clocks

def test_tt_trace_joins_an_epoch_log_only_with_its_date_and_zone() -> None:
    text, log = _futex_trace([250] * 6 + [500] * 6)
    # the same events as -tt time of day, written by strace running in UTC
    tt_text, _ = _futex_trace([250] * 6 + [500] * 6, tt=True)
    plain = read_strace(tt_text)
    assert plain.attrs["time_base"] == "midnight" and "no date" in plain.attrs["time_base_from"]
    m = match_waits(plain, log)
    assert m.decision.verdict == "inconclusive" and m.n_calls_matched == 0
    assert "do not overlap" in m.decision.because and "date" in m.decision.caveats[0]
    dated = read_strace(tt_text, date="2026-11-30", tz="UTC")
    assert dated.attrs["time_base"] == "epoch"
    assert dated.attrs["time_base_from"] == "time of day + date 2026-11-30 (UTC)"
    assert np.allclose(dated["timestamp_s"].dropna(), read_strace(text)["timestamp_s"].dropna(), atol=1e-6)
    m = match_waits(dated, log)
    assert m.decision.verdict == "yes" and m.n_calls_matched == 12
    # a zone shifts the epoch by its offset (Berlin is UTC+1 in November)
    berlin = read_strace(tt_text, date="2026-11-30", tz="Europe/Berlin")
    assert berlin["timestamp_s"].iloc[0] == pytest.approx(dated["timestamp_s"].iloc[0] - 3600)
    based = read_strace(tt_text, time_base_s=1_795_996_800.0)  # that day's UTC midnight
    assert based["timestamp_s"].iloc[0] == pytest.approx(dated["timestamp_s"].iloc[0])
    assert based.attrs["time_base_from"].startswith("time of day + 1795996800")


def test_time_base_options_are_checked_and_ignored_on_epoch_traces() -> None:
    text, _ = _futex_trace([250])
    f = read_strace(text, date="2026-11-30")
    assert f.attrs["time_base"] == "epoch" and "date ignored" in f.attrs["time_base_from"]
    assert f["timestamp_s"].iloc[0] == pytest.approx(T0)
    tt_text, _ = _futex_trace([250], tt=True)
    with pytest.raises(UsageError, match="YYYY-MM-DD"):
        read_strace(tt_text, date="29/11/2026")
    with pytest.raises(UsageError, match="tz= needs date="):
        read_strace(tt_text, tz="Europe/Berlin")
    with pytest.raises(UsageError, match="not both"):
        read_strace(tt_text, date="2026-11-30", time_base_s=1.0)
    with pytest.raises(UsageError, match="Mars/Olympus"):
        read_strace(tt_text, date="2026-11-30", tz="Mars/Olympus")


def test_wait_log_reads_epoch_time_of_day_and_iso_and_keeps_bad_rows() -> None:
    text = ("start_s,end_s,wait_ms,result\n"
            f"{T0:.6f},{T0 + 0.25:.6f},250,ETIMEDOUT\n"
            "00:53:21.000000,00:53:21.500000,500,ETIMEDOUT\n"
            "2026-11-30T00:53:22,,1000,\n"
            "yesterday,,250,\n")
    log = read_wait_log(text, date="2026-11-30", tz="UTC")
    assert log["start_s"].tolist() == pytest.approx([T0, T0 + 1, T0 + 2])
    assert log["end_s"].iloc[1] == pytest.approx(T0 + 1.5) and math.isnan(log["end_s"].iloc[2])
    assert log["wait_ms"].tolist() == [250, 500, 1000]
    rej = log.attrs["rejects"].frame()
    assert len(rej) == 1 and "yesterday" in rej["text"].iloc[0] and "start_s" in rej["reason"].iloc[0]
    # a time of day without a date cannot be placed: rejected with the reason, not guessed
    undated = read_wait_log(text)
    assert len(undated) == 2 and len(undated.attrs["rejects"]) == 2


# ------------------------------------------------------------------ do the long waits match the log?

def test_match_waits_every_outcome() -> None:
    text, log = _futex_trace([250] * 6 + [500] * 6 + [1000] * 6)
    trace = read_strace(text)
    yes = match_waits(trace, log)
    assert yes.decision.verdict == "yes"
    assert yes.per_kind["found"].tolist() == [6, 6, 6] and yes.per_kind["within_bounds"].tolist() == [6, 6, 6]
    # 19 long futex calls against 18 logged waits: an honest "no", with the counts
    text19, _ = _futex_trace([250] * 6 + [500] * 6 + [1000] * 6, extra=1)
    no = match_waits(read_strace(text19), log)
    assert no.decision.verdict == "no"
    assert no.decision.evidence["long_calls"] == 19 and no.decision.evidence["logged_waits"] == 18
    assert no.decision.evidence["calls_unexplained"] == 1 and "19 long futex calls against 18" in no.decision.because
    # a logged wait missing from the trace is a "no" too
    no2 = match_waits(trace, pd.concat([log, log.tail(1).assign(start_s=log["start_s"].max() + 0.01)]))
    assert no2.decision.verdict == "no" and no2.decision.evidence["logged_not_found"] == 1
    # overlapping in time but almost nothing matches: a clock problem, not a finding
    shifted = log.assign(start_s=log["start_s"] + 0.2, end_s=log["end_s"] + 0.2)
    shifted = shifted.iloc[::2]
    inc = match_waits(trace, shifted.assign(start_s=shifted["start_s"] + 0.01, end_s=shifted["start_s"] + 0.02))
    assert inc.decision.verdict == "inconclusive" and "check the clocks" in inc.decision.caveats[0]
    empty = match_waits(trace, log.iloc[:0])
    assert empty.decision.verdict == "inconclusive" and "nothing to compare" in empty.decision.because


# ------------------------------------------------------------------ peaks

def test_peak_straddling_a_bin_edge_is_found_whole() -> None:
    edge = 10 ** (-4 + 170 / 50)  # an edge of the 50-per-decade grid from 100 µs, at 251.2 ms
    durations = [edge * (1 - 0.002)] * 3 + [edge * (1 + 0.002)] * 3
    lines = [_line(T0 + i, FUTEX.format(ns=250_000_000), d) for i, d in enumerate(durations)]
    trace = read_strace("\n".join(lines) + "\n")
    peaks = duration_peaks(trace)
    assert len(peaks) == 1 and peaks[0].count == 6
    assert peaks[0].low_s <= min(durations) and max(durations) < peaks[0].high_s


def test_timed_wait_peaks_every_outcome() -> None:
    text, _ = _futex_trace([250] * 8)
    trace = read_strace(text)
    d = timed_wait_peaks(trace, duration_peaks(trace))
    assert d.verdict == "yes" and d.evidence["peaks"][0]["count"] == 8
    rng = np.random.default_rng(3)
    smooth = read_strace("\n".join(_line(T0 + i, FUTEX.format(ns=1), float(v))
                                   for i, v in enumerate(rng.lognormal(np.log(0.3), 0.6, 200))) + "\n")
    assert timed_wait_peaks(smooth, duration_peaks(smooth)).verdict == "no"
    untimed = read_strace("\n".join(f"100 {T0 + i:.6f} {FUTEX.format(ns=1)}" for i in range(10)) + "\n")
    d = timed_wait_peaks(untimed, duration_peaks(untimed))
    assert d.verdict == "inconclusive" and "-T" in d.because


# ------------------------------------------------------------------ idle loops versus request-path stalls

def test_idle_loop_is_not_a_stall_but_a_one_off_wait_or_kernel_work_is() -> None:
    loop = [_line(T0 + 0.6 * i, POLL, 0.5004) for i in range(6)] + [_line(T0 + 4, SEND, 0.00002)]
    trace = read_strace("\n".join(loop) + "\n")
    lw = long_waits(trace, 0.2)
    assert lw["role"].tolist() == ["loop"] * 5 + ["one-off"]  # the last poll was followed by a send
    d = other_long_calls(read_strace("\n".join(loop[:-1] + [_line(T0 + 4, POLL, 0.0001)]) + "\n"), 0.2)
    assert d.verdict == "no" and d.evidence["idle_loops"] == [{"syscall": "poll", "calls": 6, "median_ms": 500.4}]
    assert "100 ms" not in d.because and "about 500 ms" in d.because
    one_off = other_long_calls(trace, 0.2)
    assert one_off.verdict == "yes" and one_off.evidence["stalls"][0]["syscall"] == "poll"
    kernel = other_long_calls(read_strace(_line(T0, WRITE, 0.3) + "\n"), 0.2)
    assert kernel.verdict == "yes" and kernel.evidence["stalls"][0]["wait_class"] == "kernel"
    untimed = other_long_calls(read_strace(f"100 {T0:.6f} {WRITE}\n"), 0.2)
    assert untimed.verdict == "inconclusive"


# ------------------------------------------------------------------ quantized, after the fix

def _bulk_and_clusters(n_bulk: int = 543, bulk_ms: float = 505.0, clusters: dict[float, int] | None = None,
                       seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    parts = [bulk_ms * rng.lognormal(0, 0.01, n_bulk)]
    for loc, n in (clusters or {}).items():
        parts.append(loc * rng.lognormal(0, 0.005, n))
    return np.concatenate(parts) / 1e3


def test_small_slow_cluster_beside_a_big_bulk_keeps_its_count() -> None:
    m = latency_modes(_bulk_and_clusters(clusters={1000.0: 9}))
    assert len(m.modes) == 2
    assert abs(m.modes[0].location - 505) < 10 and abs(m.modes[1].location - 1000) < 10
    assert [x.count for x in m.modes] == [543, 9]
    # a lone outlier far out is no cluster and joins none
    m = latency_modes(np.append(_bulk_and_clusters(clusters={1000.0: 9}), 5.0))
    assert [x.count for x in m.modes] == [543, 9]


def test_quantized_decision_every_outcome() -> None:
    x = _bulk_and_clusters(n_bulk=150, bulk_ms=3.0, clusters={250.0: 10, 500.0: 10, 1000.0: 10})
    yes = quantized_decision(latency_modes(x), x.size)
    assert yes.verdict == "yes" and abs(yes.evidence["quantum_ms"] - 250) < 12
    one = _bulk_and_clusters(n_bulk=200, bulk_ms=3.0)
    assert quantized_decision(latency_modes(one), one.size).verdict == "no"
    assert quantized_decision(latency_modes(x[:12]), 12).verdict == "inconclusive"
    unspaced = LatencyModes(modes=(Mode(3.0, 2.9, 3.1, 100, 0.9, 1.0), Mode(47.0, 46, 48, 10, 0.1, 0.1)),
                            raw_modes=(), quantum_ms=None, bandwidth_decades=0.05)
    d = quantized_decision(unspaced, 110)
    assert d.verdict == "inconclusive" and "without a common spacing" in d.because


def test_after_fix_decision_every_outcome() -> None:
    before = _bulk_and_clusters(n_bulk=150, bulk_ms=3.0, clusters={250.0: 10, 500.0: 10, 1000.0: 10})
    modes = latency_modes(before)
    fixed = _bulk_and_clusters(n_bulk=100, bulk_ms=3.0, seed=1)
    yes = after_fix_decision(before, fixed, modes)
    assert yes.verdict == "yes" and yes.evidence["slow_after"] == 0
    still = _bulk_and_clusters(n_bulk=100, bulk_ms=3.0, clusters={250.0: 8, 500.0: 7}, seed=2)
    no = after_fix_decision(before, still, modes)
    assert no.verdict == "no" and no.evidence["slow_after"] == 15
    none = after_fix_decision(before, None, modes)
    assert none.verdict == "inconclusive" and "no after-fix data" in none.because
    assert after_fix_decision(before, np.array([]), modes).verdict == "inconclusive"
    few = after_fix_decision(before, fixed[:5], modes)
    assert few.verdict == "inconclusive" and "too rare" in few.because
    flat = _bulk_and_clusters(n_bulk=100, bulk_ms=3.0)
    assert after_fix_decision(flat, fixed, latency_modes(flat)).verdict == "inconclusive"


# ------------------------------------------------------------------ network baseline

def _series(t0: float, n: int, step_s: float, lat: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"timestamp_s": t0 + step_s * np.arange(n), "latency_s": lat})


def test_network_decision_needs_a_baseline_from_the_same_time() -> None:
    rng = np.random.default_rng(0)
    calls = _series(T0, 200, 0.1, np.where(rng.random(200) < 0.1, 0.25, 0.003))
    flat = _series(T0, 400, 0.05, 0.0001 + 0.00001 * rng.random(400))
    yes = network_decision(baseline_check(calls, flat))
    assert yes.verdict == "yes"
    noisy = _series(T0, 400, 0.05, np.where(rng.random(400) < 0.1, 0.3, 0.0001))
    assert network_decision(baseline_check(calls, noisy)).verdict == "no"
    earlier = _series(T0 - 3600, 400, 0.05, 0.0001 + 0.00001 * rng.random(400))
    chk = baseline_check(calls, earlier)
    assert chk.verdict == "no overlap" and chk.probes_in_span == 0 and chk.overlap_s == 0
    d = network_decision(chk)
    assert d.verdict == "inconclusive" and "another time" in d.because and d.caveats


# ------------------------------------------------------------------ global stall, Holm

def test_stall_decision_every_outcome_and_holm_over_steps() -> None:
    yes = global_stall_test(_steps(stall_rate_per_s=10.0), n_resamples=300)
    d = stall_decision(yes)
    assert d.verdict == "yes" and not d.caveats and yes.outliers == ()
    assert {"p_value", "p_holm"} <= set(yes.steps.columns)
    assert (yes.steps["p_holm"] >= yes.steps["p_value"]).all()
    own = global_stall_test(_steps(stall_rate_per_s=10.0, own_slow_step=1, own_slow_p=0.3), n_resamples=300)
    assert 1 in own.outliers
    assert own.steps.loc[own.steps["step"] == 1, "p_holm"].iloc[0] < 0.05
    assert "Holm correction over 15 steps" in stall_decision(own).caveats[0]
    nothing = global_stall_test(_steps(), n_resamples=200)
    assert stall_decision(nothing).verdict == "no"
    not_prop = global_stall_test(_steps(stall_rate_per_s=3.0, own_slow_step=7, own_slow_p=0.6), n_resamples=300)
    assert not_prop.verdict == "not proportional to step length", not_prop.reason
    # a real global stall (3/s) plus a step slow for its own reason: r's CI straddles 0.5, so neither yes nor no
    # until that step is set aside, and then the stall shows
    d = stall_decision(not_prop)
    assert d.verdict == "inconclusive" and "straddles" in d.because and 7 in not_prop.outliers
    assert not_prop.correlation_low < not_prop.min_correlation < not_prop.correlation_high
    assert global_stall_test(_steps(stall_rate_per_s=3.0, own_slow_step=7, own_slow_p=0.6), n_resamples=300,
                             exclude_steps=[7]).verdict == "global stall"
    flat_slope = global_stall_test(_steps(stall_rate_per_s=1.0, own_slow_step=9, own_slow_p=0.7), n_resamples=300)
    assert "includes zero" in flat_slope.reason, flat_slope.reason
    assert stall_decision(flat_slope).verdict == "inconclusive"
    control_also = stall_decision(yes, yes)
    assert "control run shows the same effect" in control_also.caveats[0]


def test_interference_decision_every_outcome() -> None:
    rng = np.random.default_rng(0)

    def ab(ratio: float, blocks: int = 6) -> pd.DataFrame:
        rows = []
        for b in range(2 * blocks):
            cond = "off" if b % 2 == 0 else "on"
            scale = 0.004 * (ratio if cond == "on" else 1.0) * rng.lognormal(0, 0.2)  # blocks differ
            rows += [(b, cond, v) for v in scale * rng.lognormal(0, 0.1, 40)]
        return pd.DataFrame(rows, columns=["block", "condition", "latency_s"])

    kw = {"a": "off", "b": "on", "n_resamples": 300}
    assert interference_decision(interference_ab(ab(1.6), **kw)).verdict == "yes"
    assert interference_decision(interference_ab(ab(0.6), **kw)).verdict == "no"
    assert interference_decision(interference_ab(ab(1.0), **kw)).verdict == "inconclusive"
    assert interference_decision(interference_ab(ab(1.6, blocks=1), **kw)).verdict == "inconclusive"


# ------------------------------------------------------------------ input helpers

def test_select_rows_and_phases_and_distribution_samples() -> None:
    f = pd.DataFrame({"run": ["before", "fixed", "before"], "latency_s": [1.0, 2.0, 3.0]})
    assert select_rows(f, "run", "before")["latency_s"].tolist() == [1.0, 3.0]
    assert len(select_rows(f.drop(columns="run"), "run", "before")) == 3
    assert select_rows(f.drop(columns="run"), "run", "before").attrs["selected"] == "all rows (no 'run' column)"
    with pytest.raises(UsageError, match=r"no row has run == 'after'.*\['before', 'fixed'\]"):
        select_rows(f, "run", "after")
    assert parse_phases("before:1-5;evaluate=6-12;after:13,14,15") == {
        "before": (1, 2, 3, 4, 5), "evaluate": tuple(range(6, 13)), "after": (13, 14, 15)}
    with pytest.raises(UsageError, match="name:1-5"):
        parse_phases("before 1-5")
    dist = pd.DataFrame({"latency_s": [0.1, 0.2], "count": [3, 2]})
    dist.attrs["kind"] = "distribution"
    assert latency_sample(dist).tolist() == [0.1, 0.1, 0.1, 0.2, 0.2]
    pct = pd.DataFrame({"latency_s": [0.1], "percentile": [50.0]})
    pct.attrs["kind"] = "distribution"
    with pytest.raises(UsageError, match="percentiles without counts"):
        latency_sample(pct)


def test_phase_decision_every_outcome() -> None:
    def summary(excess: list[float]) -> pd.DataFrame:
        return pd.DataFrame({"phase": ["before", "evaluate", "after"], "share_of_time": [0.2, 0.5, 0.3],
                             "share_of_excess": excess})

    spread = phase_decision(summary([0.22, 0.48, 0.30]), slow_requests=40)
    assert spread.verdict == "no" and "hits all of them" in spread.because and "fixed threshold" in spread.caveats[0]
    one = phase_decision(summary([0.7, 0.2, 0.1]), slow_requests=40)
    assert one.verdict == "yes" and "before takes 50% more than its share" in one.because
    assert phase_decision(summary([0.7, 0.2, 0.1]), slow_requests=2).verdict == "inconclusive"
    none = phase_decision(summary([math.nan] * 3), slow_requests=0)
    assert none.verdict == "inconclusive" and "no slow request" in none.because


def test_a_single_step_must_stand_clear_of_the_bulk() -> None:
    """A real capture with nothing planted (TCP_NODELAY at 10/s): 143 calls at 1.2 ms, 6 at 3.5 ms — one step
    under 3× the bulk, a fast and a slow path as much as a fixed wait: inconclusive. 41 ms above it: a step."""
    from pathlib import Path

    csv = Path(__file__).parent / "data" / "diagnose" / "low_rate_tail" / "absent" / "samples.csv"
    calls = pd.read_csv(csv)
    near = calls.loc[calls["rate_per_s"] == 10.0, "latency_s"].to_numpy()
    d_near = quantized_decision(latency_modes(near), near.size, latency_s=near)
    assert d_near.verdict == "inconclusive" and "slow path" in d_near.because and "3×" in d_near.because
    rng = np.random.default_rng(3)
    bulk = rng.normal(1.2e-3, 0.03e-3, 300)
    far = np.concatenate([bulk, rng.normal(41.2e-3, 0.3e-3, 30)])
    d_far = quantized_decision(latency_modes(far), far.size, latency_s=far)
    assert d_far.verdict == "yes" and abs(float(d_far.evidence["quantum_ms"]) - 40.0) < 2.0
