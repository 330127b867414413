"""Notebook 02 (low-QPS Nagle) concludes what the data say, on the bundled capture and live."""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.report import execute_notebook

from .conftest import NOTEBOOKS

NB = NOTEBOOKS / "02_low_qps_nagle.ipynb"


def _run(tmp_path: Path, params: dict | None = None) -> dict:
    res = execute_notebook(NB, params or {}, out_dir=tmp_path, render=False)
    assert res.status == "ok", res.error
    return {k: v.value for k, v in res.findings.items()}


def _check(f: dict, nodelay_max_ms: float = 5.0, live: bool = False) -> None:
    # a delayed-ACK step: Linux's 40 ms minimum plus timer granularity, found per rate and setting
    assert f["quantum_ms"] is not None and 35.0 <= f["quantum_ms"] <= 60.0
    assert f["delayed_ack_quantum"]["verdict"] == "yes"
    assert f["tail_worse_at_low_rate"]["verdict"] == "yes"
    if live:
        # measured live beside other work, the per-side TCP_NODELAY decision (intervals must be disjoint at every
        # low rate) may stay undecided; the fix itself is asserted below on the measured no-delay p99
        assert f["nagle_explains_it"] in (True, False)
    else:
        assert f["nagle_explains_it"] is True
    p99 = {float(k): v for k, v in f["p99_ms_by_rate"].items()}
    lowest, top = min(p99), f["highest_sustained_rate"]
    assert top in p99 and top > lowest
    assert p99[lowest] > p99[top]                 # the paradox: less load, worse tail
    assert p99[lowest] > 30.0                     # a delayed-ACK stall, not noise
    assert f["worst_rate"] in p99 and f["worst_rate"] <= top
    assert p99[f["worst_rate"]] >= max(p99[lowest], p99[top])
    over = {float(k): v for k, v in f["over_threshold_per_s_by_rate"].items()}
    assert set(over) == set(p99)
    assert over[lowest] >= 0.8 * lowest  # at the lowest rate (nearly) every request is over 10 ms
    nd = f["nodelay_p99_ms"]
    if live:
        # beside other work the scheduler adds its own ms to a 1 % tail (5-19 ms seen with two CPU hogs); what
        # the fix must remove is the measured delayed-ACK step: no-delay p99 under it at every rate, and the
        # median at the lowest rate many times faster
        assert nd and all(v < f["quantum_ms"] for v in nd.values()), (nd, f["quantum_ms"])
        assert f["nodelay_speedup_p50_lowest_rate"] > 5, f["nodelay_speedup_p50_lowest_rate"]
    else:
        assert nd and all(v < nodelay_max_ms for v in nd.values()), nd
    assert f["culprit_option"] == "TCP_NODELAY" and f["bisection"]["verdict"] == "yes"
    assert f["ping_p99_ms"] < 10.0


@pytest.mark.slow
def test_notebook_02_bundled_capture(tmp_path: Path) -> None:
    f = _run(tmp_path)
    _check(f)
    assert "TCP_NODELAY" in f["sufficient_alone"]
    assert f["nodelay_speedup_p50_lowest_rate"] > 10
    # measured on the bundled capture: only both sides keep p99 under 10 ms at every rate
    assert f["nodelay_side"]["verdict"] == "yes" and "only TCP_NODELAY on both sides" in f["nodelay_side"]["because"]
    assert f["path_is_fast"]["verdict"] == "yes" and f["work_ruled_out"]["verdict"] == "yes"
    # the most slow requests per second come at 200/s (200/s against 18.7/s at 5000/s): less load, more slow
    # requests per second, Holm-corrected over the ten lower rates
    slow = f["slow_per_s_at_low_rate"]
    assert slow["verdict"] == "yes" and slow["evidence"]["most_over_rate_per_s"] == 200
    assert 200 in slow["evidence"]["more_than_highest"]
    text = (tmp_path / "02_low_qps_nagle.ipynb").read_text()
    assert "the bundled rate sweep" in text


@pytest.mark.slow
def test_notebook_02_live(tmp_path: Path) -> None:
    f = _run(tmp_path, {"live": True})
    _check(f, live=True)
