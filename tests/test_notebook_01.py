"""Notebook 01 (quantized latency) concludes what the data say: bundled capture, live, and foreign captures."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from workbench.report import execute_notebook

from .conftest import NOTEBOOKS

NB = NOTEBOOKS / "01_quantized_latency.ipynb"
FOREIGN = Path(__file__).resolve().parent / "data" / "nb01"
#: every optional input left empty: a test names only the inputs its capture has
NO_INPUTS = {k: "" for k in ("calls_path", "calls_after_path", "strace_path", "strace_after_path", "injections_path",
                             "ping_path", "steps_path", "pauses_path", "interference_path", "overnight_path")}


def _run(tmp_path: Path, params: dict | None = None) -> dict:
    res = execute_notebook(NB, params or {}, out_dir=tmp_path, render=False)
    assert res.status == "ok", res.error
    return {k: v.value for k, v in res.findings.items()}


def _markdown(tmp_path: Path) -> str:
    """All Markdown the executed notebook displayed."""
    import nbformat

    nb = nbformat.read(str(tmp_path / NB.name), as_version=4)
    return "\n".join(o["data"]["text/markdown"] for c in nb.cells if c.cell_type == "code"
                     for o in c.get("outputs", []) if "text/markdown" in o.get("data", {}))


def _check(f: dict) -> None:
    assert f["parse_rejects"] == 0
    # futex peaks at 250, 500 and 1000 ms (± 5 %), one per injected timeout, counts = the server's log
    peaks = f["futex_peaks_ms"]
    assert len(peaks) == 3, peaks
    for got, want in zip(peaks, (250, 500, 1000), strict=True):
        assert abs(got - want) <= 0.05 * want, peaks
    # every logged injection is in its peak, or explained as a late wake-up (a loaded machine)
    assert set(f["injections_logged"]) == {"250", "500", "1000"}
    for k, n in f["injections_logged"].items():
        assert f["futex_peak_counts"][k] + f["futex_late_wakeups"][k] == n, (k, f)
    assert sum(f["futex_late_wakeups"].values()) <= 3
    assert f["unexplained_long_futex"] == 0
    # nothing but futex spends hundreds of ms in the kernel
    assert f["slowest_kernel_call_ms"] < 200
    # the calls are quantized on ~250 ms
    modes = f["latency_modes_ms"]
    for want in (250, 500, 1000):
        assert any(abs(m - want) <= 0.1 * want for m in modes), modes
    assert f["latency_quantum_ms"] is not None and abs(f["latency_quantum_ms"] - 250) <= 0.05 * 250
    # the global-stall test on the per-step timings
    assert f["stall_slope_per_ms"] > 0
    assert f["stall_correlation"] > 0.8
    assert f["stall_verdict"] == "global stall"
    # without pauses the effect is weaker: a busy machine's CPU contention is a global stall of its own,
    # which the injected pauses add to
    assert f["control_slope_per_ms"] is None or f["control_slope_per_ms"] < f["stall_slope_per_ms"]
    assert f["network_verdict"] == "network ruled out"
    assert f["after_futex_peaks_ms"] == []
    assert f["after_p99_ms"] < 0.2 * f["before_p99_ms"]
    assert f["after_fix_verdict"] == "yes"
    assert f["injections_match_verdict"] == "yes" and f["timed_wait_peaks"] == "yes"
    assert f["quantized_verdict"] == "yes"
    assert f["interference_ratio"] is not None and f["interference_ratio"] > 0


@pytest.mark.slow
def test_notebook_01_bundled_capture(tmp_path: Path) -> None:
    f = _run(tmp_path)
    _check(f)
    assert f["futex_peak_counts"] == {"250": 10, "500": 10, "1000": 10}
    assert f["futex_peak_counts"] == f["injections_logged"]
    assert f["futex_late_wakeups"] == {"250": 0, "500": 0, "1000": 0}
    assert f["other_syscalls_in_range"] == [] and f["other_syscalls_verdict"] == "no"
    assert f["slowest_non_futex_syscall"] == "poll" and f["slowest_non_futex_syscall_ms"] < 200
    assert f["strace_time_base"] == "epoch seconds in the trace (-ttt)"
    assert f["stall_outlier_steps"] == []
    assert f["phase_verdict"] == "no"  # the pauses hit every phase in proportion to its time
    assert f["network_overlap_s"] > 10
    assert f["control_stall_verdict"] == "no effect"
    assert f["control_slope_per_ms"] is None or f["control_slope_per_ms"] < 0.5 * f["stall_slope_per_ms"]
    assert f["interference_ratio"] > 1.2 and f["interference_ratio_ci"][0] > 1.0
    assert f["interference_verdict"] == "interference"
    assert f["ping_p99_ms"] < 5  # the loopback baseline is flat next to 250 ms stalls
    assert f["overnight_change_points"] >= 2
    assert f["uptime_spearman_rho"] is not None and abs(f["uptime_spearman_rho"]) < 0.3


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed (apt-get install strace)")
def test_notebook_01_live(tmp_path: Path) -> None:
    f = _run(tmp_path, {"live": True})
    _check(f)
    # on a loaded machine an idle wait may stretch; a request-path stall other than futex may not
    assert set(f["other_syscalls_in_range"]) <= {"poll", "restart_syscall"}


@pytest.mark.slow
def test_notebook_01_foreign_tt_trace_with_epoch_log(tmp_path: Path) -> None:
    """An HTTP server of its own: hey CSV, a -tt trace in Berlin time, an epoch wait log, no baseline or steps."""
    d = FOREIGN / "http_tt"
    f = _run(tmp_path, {**NO_INPUTS, "calls_path": str(d / "calls.csv"), "calls_after_path": str(d / "calls_after.csv"),
                        "strace_path": str(d / "trace.txt"), "injections_path": str(d / "waits.csv"),
                        "strace_date": "2026-12-02", "strace_tz": "Europe/Berlin", "range_ms": 100.0})
    assert f["strace_time_base"] == "time of day + date 2026-12-02 (Europe/Berlin)"
    assert f["parse_rejects"] == 0
    # 126 fast calls, 7 + 8 + 8 at the injected timeouts (the eighth 150 ms wait's call took 198 ms: in no
    # cluster), quantized on 150 ms
    assert f["latency_cluster_counts"] == [126, 7, 8, 8]
    for got, want in zip(f["latency_modes_ms"][1:], (150, 300, 600), strict=True):
        assert abs(got - want) <= 0.05 * want
    assert abs(f["latency_quantum_ms"] - 150) <= 7.5 and f["quantized_verdict"] == "yes"
    # the trace joins the epoch log once its date and zone are known: 24 of 24
    assert f["injections_logged"] == {"150": 8, "300": 8, "600": 8}
    assert f["injections_matched"] == 24 and f["unexplained_long_futex"] == 0
    assert f["futex_peak_counts"] == {"150": 8, "300": 8, "600": 8}
    assert f["injections_match_verdict"] == "yes" and f["timed_wait_peaks"] == "yes"
    # the accept loop's 0.5 s polls are an idle loop, not a stall, and no heartbeat is invented
    assert f["slowest_non_futex_syscall"] == "poll" and 495 < f["slowest_non_futex_syscall_ms"] < 520
    assert f["other_syscalls_verdict"] == "no" and f["other_syscalls_in_range"] == []
    # 0 of 100 after-fix calls in the slow clusters against 24 of 150 before
    assert f["after_fix_verdict"] == "yes" and f["after_p99_ms"] < 50
    for name in ("network_verdict", "ping_p99_ms", "phase_excess_share", "phase_verdict", "uptime_spearman_rho", "stall_verdict",
                 "interference_verdict", "overnight_change_points", "after_futex_peaks_ms"):
        assert f[name] is None, name
    md = _markdown(tmp_path)
    for section in ("3. Is it the network?", "7. The global-stall test", "2. Is there long-run structure?"):
        assert f"**{section} — skipped: needs" in md
    assert md.count("skipped: needs") >= 5 and "skipped: needs ping\\_path" in md
    assert "bundled" not in md and "heartbeat" not in md
    assert "**Do the long futex calls match the logged waits?** — **yes**: all 24 logged waits" in md
    assert "6 × poll of about 501 ms" in md or "6 × poll of about 500 ms" in md
    assert "**Are the slow clusters gone after the fix?** — **yes**: 0 of 100 after-fix calls" in md


@pytest.mark.slow
def test_notebook_01_foreign_tt_trace_without_its_date_says_the_clocks_differ(tmp_path: Path) -> None:
    d = FOREIGN / "http_tt"
    f = _run(tmp_path, {**NO_INPUTS, "strace_path": str(d / "trace.txt"), "injections_path": str(d / "waits.csv"),
                        "range_ms": 100.0})
    assert f["strace_time_base"] == "time of day in the trace (-t/-tt), no date"
    assert f["injections_matched"] == 0 and f["injections_match_verdict"] == "inconclusive"
    assert f["quantized_verdict"] is None and f["after_fix_verdict"] is None
    md = _markdown(tmp_path)
    assert "do not overlap in time" in md and "needs its date" in md


@pytest.mark.slow
def test_notebook_01_foreign_hdr_log_only(tmp_path: Path) -> None:
    """Only an HdrHistogram interval log: 543 calls at ~100 ms and 9 at ~200 ms; every other section skipped."""
    f = _run(tmp_path, {**NO_INPUTS, "calls_path": str(FOREIGN / "hlog_only" / "calls.hlog")})
    assert f["latency_cluster_counts"] == [543, 9]
    assert abs(f["latency_modes_ms"][0] - 101) < 3 and abs(f["latency_modes_ms"][1] - 201) < 5
    assert f["quantized_verdict"] == "yes"
    assert f["after_fix_verdict"] == "inconclusive" and f["after_p99_ms"] is None
    for name in ("strace_time_base", "parse_rejects", "futex_peaks_ms", "injections_match_verdict", "network_verdict",
                 "stall_verdict", "interference_verdict", "other_syscalls_verdict", "overnight_change_points"):
        assert f[name] is None, name
    md = _markdown(tmp_path)
    assert "there is no after-fix data" in md and "gone" not in md.split("there is no after-fix data")[1][:80]
    assert md.count("skipped: needs") == 9 and "bundled" not in md
