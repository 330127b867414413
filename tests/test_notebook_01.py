"""Notebook 01 (quantized latency) concludes what the data say, on the bundled capture and live."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from workbench.report import execute_notebook

from .conftest import NOTEBOOKS

NB = NOTEBOOKS / "01_quantized_latency.ipynb"


def _run(tmp_path: Path, params: dict | None = None) -> dict:
    res = execute_notebook(NB, params or {}, out_dir=tmp_path, render=False)
    assert res.status == "ok", res.error
    return {k: v.value for k, v in res.findings.items()}


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
    # without pauses the effect vanishes (a loaded machine may leave a trace of CPU contention)
    assert f["control_slope_per_ms"] is None or f["control_slope_per_ms"] < 0.5 * f["stall_slope_per_ms"]
    assert f["network_verdict"] == "network ruled out"
    assert f["after_futex_peaks_ms"] == []
    assert f["after_p99_ms"] < 0.2 * f["before_p99_ms"]
    assert f["interference_ratio"] is not None and f["interference_ratio"] > 0


@pytest.mark.slow
def test_notebook_01_bundled_capture(tmp_path: Path) -> None:
    f = _run(tmp_path)
    _check(f)
    assert f["futex_peak_counts"] == {"250": 10, "500": 10, "1000": 10}
    assert f["futex_peak_counts"] == f["injections_logged"]
    assert f["futex_late_wakeups"] == {"250": 0, "500": 0, "1000": 0}
    assert f["other_syscalls_in_range"] == []
    assert f["slowest_non_futex_syscall"] == "poll" and f["slowest_non_futex_syscall_ms"] < 200
    assert f["control_stall_verdict"] == "no effect"
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
    # other idle waits may stretch on a loaded machine, but only the heartbeat's timer
    assert set(f["other_syscalls_in_range"]) <= {"poll", "restart_syscall"}
