"""Notebook 05 (actor bottlenecks) runs on its bundled data and live, and concludes what the data say."""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.report import execute_notebook

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "05_actor_bottlenecks.ipynb"


def _run(tmp_path: Path, params: dict) -> dict:
    res = execute_notebook(NOTEBOOK, params, out_dir=tmp_path, render=False)
    assert res.status == "ok", res.error
    return {k: v.value for k, v in res.findings.items()}, res.findings


@pytest.mark.slow
def test_notebook_05_findings_on_bundled_data(tmp_path: Path) -> None:
    f, full = _run(tmp_path, {})
    e = f["exponent_by_iteration"]
    # iteration 1 scales clearly worse than iteration 2: the CIs do not overlap
    assert e["1"]["low"] > e["2"]["high"]
    assert e["1"]["n_excluded"] > 0 and e["1"]["n_used"] + e["1"]["n_excluded"] == 25
    # the maximum speed-up of 2 over 1 is the 5×10 cell, 2.892 / 0.047 ≈ 60
    assert f["max_speedup_1_over_2"] == pytest.approx(2.892 / 0.047, rel=1e-6)
    assert 55 < f["max_speedup_1_over_2"] < 65
    # the exponents differ (Holm-corrected) and iteration 1 is the steepest: "scales worse" is earned
    assert f["exponents_differ"]["verdict"] == "yes" and f["exponents_differ"]["evidence"]["steepest"] == 1
    assert not f["exponents_differ"]["evidence"]["pooled_warranted"]
    assert f["exponents_differ"]["evidence"]["worse_than"] == [[1, 2], [1, 3]]
    assert f["design_comparisons"]["1_vs_2"]["verdict"] == "yes"
    assert f["design_comparisons"]["2_vs_3"]["verdict"] == "inconclusive"
    # no claim that 3 differs from 2 without CI support; the reason is given
    assert f["iteration3_vs_2_distinguishable"] is False
    assert "includes 1" in full["iteration3_vs_2_distinguishable"].explain
    assert "overlap" in full["iteration3_vs_2_distinguishable"].explain
    # the cores table: retrograde under the USL, a poor fit, and read as growing demand
    usl = f["usl_by_iteration"]
    assert set(usl) == {"1", "2", "3"}
    for v in usl.values():
        assert {"sigma", "kappa", "n_star"} <= set(v)
        assert v["retrograde"] and v["n_star"] < 1 and not v["adequate"]
    assert f["cores_table_reading"] == "demand grows with the column"
    assert {v["verdict"] for v in f["usl_describes_cores"].values()} == {"no"}
    # the simulation: coordinator for iteration 1, another kind for iteration 2; money conserved
    b = f["bottleneck_actor_by_iteration"]
    assert b["1"] == "coordinator" and b["2"] != "coordinator"
    # per cell (busy time): iteration 1 is the coordinator everywhere; in 2 and 3 the cells disagree,
    # which the largest cell alone would hide
    cells = f["bottleneck_by_cell"]
    assert cells["1"]["verdict"] == "yes" and cells["1"]["kind_cells"] == {"coordinator": 25}
    assert cells["2"]["verdict"] == "no" and cells["3"]["verdict"] == "no"
    assert sum(cells["3"]["kind_cells"].values()) == 25 and len(cells["3"]["kind_cells"]) == 2
    assert "cells disagree for iteration(s) 2, 3" in full["bottleneck_actor_by_iteration"].explain
    assert f["money_conserved"] is True
    assert f["loc_total_change_pct"] < -10
    sim = f["sim_exponent_by_iteration"]
    assert sim["1"] > sim["2"]


@pytest.mark.slow
def test_notebook_05_live_simulation(tmp_path: Path) -> None:
    # counted work (not the measured busy time) names the bottleneck here: it is deterministic
    f, full = _run(tmp_path, {"live": True, "live_banks": [2, 3, 4], "live_clients_per_bank": [2, 4, 6],
                              "live_repeats": 1, "live_time_limit_s": 60.0, "bottleneck_metric": "work"})
    assert f["money_conserved"] is True
    b = f["bottleneck_actor_by_iteration"]
    assert b["1"] == "coordinator" and b["2"] != "coordinator"
    cells = f["bottleneck_by_cell"]
    assert cells["1"]["verdict"] == "yes" and cells["1"]["kind_cells"] == {"coordinator": 9}
    assert "live per-actor metrics" in full["bottleneck_actor_by_iteration"].explain
