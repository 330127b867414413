"""Notebook 05 on captures it was not built on: an asyncio actor benchmark (two designs, another grid,
a cores table that is a real fixed demand, no lines of code) and a lab run with only its runs table."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest

from workbench.report import execute_notebook

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "05_actor_bottlenecks.ipynb"
DATA = ROOT / "tests" / "data" / "nb05"
NONE = {"iteration_times": "", "cores_times": "", "lines_of_code": "", "sim_runs": "", "sim_actors": ""}


def _run(tmp_path: Path, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], str]:
    res = execute_notebook(NOTEBOOK, params, out_dir=tmp_path, render=False)
    assert res.status == "ok", res.error
    nb = nbformat.read(str(tmp_path / "05_actor_bottlenecks.ipynb"), as_version=4)
    text = "\n".join(o.get("data", {}).get("text/markdown", "") for c in nb.cells if c.cell_type == "code"
                     for o in c.get("outputs", []))
    return {k: v.value for k, v in res.findings.items()}, res.findings, text


@pytest.mark.slow
def test_notebook_05_on_an_asyncio_benchmark(tmp_path: Path) -> None:
    d = DATA / "asyncio_bank"
    f, full, text = _run(tmp_path, {**NONE, "iteration_times": str(d / "iteration_times.csv"),
                                    "cores_times": str(d / "cores_times.csv"), "sim_runs": str(d / "runs.csv"),
                                    "sim_actors": str(d / "actors.csv.gz"), "cores_banks": 4,
                                    "cores_clients_per_bank": 8})
    # two iterations, a 4 × 3 grid, times printed to 0.1 ms: resolution and floor come from the data
    assert "Timing resolution: **0.0001 s** (inferred from the printed decimals)" in text
    e = f["exponent_by_iteration"]
    assert set(e) == {"1", "2"} and all(v["n_used"] + v["n_excluded"] == 12 for v in e.values())
    # the exponents neither differ nor agree: no "scales worse" sentence, no pooled fit
    assert f["exponents_differ"]["verdict"] == "inconclusive"
    assert "scales worse, not only slower" not in text.replace("one scales worse, not only slower", "")
    assert "Scaling differences: inconclusive" in text
    assert f["max_speedup_1_over_2"] == pytest.approx(0.0624 / 0.0493, rel=1e-6)
    assert f["design_comparisons"]["1_vs_2"]["verdict"] == "inconclusive"
    assert f["iteration3_vs_2_distinguishable"] is None
    assert "not both in the grid" in full["iteration3_vs_2_distinguishable"].explain
    # the cores table here is a real fixed demand split over worker processes
    assert f["cores_table_reading"] == "fixed demand"
    assert {k: v["verdict"] for k, v in f["usl_describes_cores"].items()} == {"1": "yes", "2": "yes"}
    assert "the peak is not identified" in text
    # no lines-of-code table: that section is skipped with its reason, nothing else is
    assert f["loc_total_change_pct"] is None
    assert "skipped: needs lines_of_code" in full["loc_total_change_pct"].explain
    assert text.count("skipped: needs") == 1
    # per-actor metrics: the central coordinator is the bottleneck of every cell of design 1;
    # design 2's cells mostly name a bank, but a settled cell names the coordinator: the largest
    # cell's answer (bank) would hide it
    b = f["bottleneck_by_cell"]
    assert b["1"] == {"verdict": "yes", "kind_cells": {"coordinator": 12}, "settled_kind_cells": {"coordinator": 12}}
    assert b["2"] == {"verdict": "no", "kind_cells": {"bank": 10, "coordinator": 2},
                      "settled_kind_cells": {"bank": 9, "coordinator": 1}}
    assert "cells disagree for iteration(s) 2" in full["bottleneck_actor_by_iteration"].explain
    assert f["bottleneck_actor_by_iteration"] == {"1": "coordinator", "2": "bank"}
    assert f["money_conserved"] is True
    assert "your per-actor metrics" in text and "bundled" not in text


@pytest.mark.slow
def test_notebook_05_on_runs_only(tmp_path: Path) -> None:
    f, full, text = _run(tmp_path, {**NONE, "sim_runs": str(DATA / "lab_runs_only" / "runs.csv")})
    for name in ("exponent_by_iteration", "exponents_differ", "max_speedup_1_over_2", "design_comparisons",
                 "iteration3_vs_2_distinguishable", "usl_by_iteration", "usl_describes_cores",
                 "cores_table_reading", "loc_total_change_pct", "bottleneck_by_cell",
                 "bottleneck_actor_by_iteration"):
        assert f[name] is None, name
        assert full[name].explain.startswith("skipped: needs"), name
    assert "sim_actors (per-actor metrics)" in full["bottleneck_by_cell"].explain
    for section in ("1. The tables as heatmaps", "2. Power laws per iteration", "5. The cores table under the USL",
                    "6. Lines of code", "8. The bottleneck actor of every cell"):
        assert f"{section.replace('_', chr(92) + '_')} — skipped: needs" in text, section
    # what the runs alone show: complete runs, money conserved, naive design scaling worse (Holm-corrected)
    assert f["money_conserved"] is True
    sim = f["sim_exponent_by_iteration"]
    assert set(sim) == {"1", "2"} and sim["1"] > sim["2"] + 0.25
    assert "yes: 1 of 1 pair(s) differ" in full["sim_exponent_by_iteration"].explain
    assert "Simulated scaling, exponents differ**: yes" in text
    assert "32 of 32 runs completed" in text and "bundled" not in text


@pytest.mark.slow
def test_notebook_05_with_no_input_at_all(tmp_path: Path) -> None:
    f, _, text = _run(tmp_path, NONE)
    assert all(v is None for v in f.values())
    assert "No section ran: give at least one input." in text


@pytest.mark.slow
def test_notebook_05_on_one_design_and_a_short_cores_table(tmp_path: Path) -> None:
    """One design (numbered 4) timed in ms, a cores table of another design with 3 points, one LOC iteration."""
    grid = tmp_path / "grid.csv"
    grid.write_text("iteration,banks,clients_per_bank,time_ms\n4,1,2,0.5\n4,2,2,3\n4,2,3,11\n4,3,3,40\n4,4,4,300\n")
    cores = tmp_path / "cores.csv"
    cores.write_text("iteration,cores,time_s\n9,1,0.5\n9,2,0.3\n9,4,0.2\n")
    loc = tmp_path / "loc.csv"
    loc.write_text("iteration,actor,lines\n4,coordinator,10\n4,bank,20\n")
    runs = tmp_path / "runs.csv"  # another benchmark's run times: no invariant columns
    runs.write_text("iteration,banks,clients_per_bank,wall_s,host\n"
                    + "".join(f"4,{b},{c},{2e-5 * (b * c * (b * c - 1)) ** 1.2:.6f},h\n" for b in (1, 2, 3) for c in (2, 4, 8)))
    acts = tmp_path / "actors.csv"  # another benchmark's busy time per actor, its own actor kinds
    acts.write_text("iteration,banks,clients_per_bank,repeat,actor,kind,busy_s\n"
                    "4,1,2,1,r,router,0.5\n4,1,2,1,w1,worker,0.1\n4,2,2,1,r,router,0.2\n4,2,2,1,w1,worker,0.9\n")
    f, full, text = _run(tmp_path / "out", {**NONE, "iteration_times": str(grid), "cores_times": str(cores),
                                            "lines_of_code": str(loc), "sim_runs": str(runs),
                                            "sim_actors": str(acts)})
    assert set(f["exponent_by_iteration"]) == {"4"} and f["exponent_by_iteration"]["4"]["n_used"] == 4
    assert f["exponents_differ"]["verdict"] == "inconclusive" and "only 1 group" in f["exponents_differ"]["because"]
    assert f["max_speedup_1_over_2"] is None and "found 1" in full["max_speedup_1_over_2"].explain
    assert f["usl_describes_cores"]["9"]["verdict"] == "inconclusive"
    assert f["cores_table_reading"] == "inconclusive"
    assert f["loc_total_change_pct"] is None and "only one iteration" in full["loc_total_change_pct"].explain
    assert f["money_conserved"] is None and "needs the run invariant columns" in full["money_conserved"].explain
    assert f["sim_exponent_by_iteration"]["4"] == pytest.approx(1.2, abs=0.01)
    assert f["bottleneck_by_cell"]["4"] == {"verdict": "no", "kind_cells": {"router": 1, "worker": 1},
                                            "settled_kind_cells": {"router": 1, "worker": 1}}
    assert f["bottleneck_actor_by_iteration"] == {"4": "worker"}
    assert "Timing resolution: **0.0001 s**" in text


@pytest.mark.slow
def test_notebook_05_pooled_exponent_when_designs_scale_alike(tmp_path: Path) -> None:
    """Two designs 3× apart with one exponent: slower, not worse-scaling; a pooled fit is shown."""
    lines = ["iteration,banks,clients_per_bank,time_s"]
    wiggle = [1.01, 0.99, 1.0, 1.02, 0.98]
    for it, a in ((1, 3e-6), (2, 1e-6)):
        for i, b in enumerate((1, 2, 3, 4, 5)):
            for j, c in enumerate((2, 4, 6, 8)):
                n = b * c
                lines.append(f"{it},{b},{c},{a * (n * (n - 1)) ** 1.5 * wiggle[(i + j + it) % 5]:.6f}")
    grid = tmp_path / "grid.csv"
    grid.write_text("\n".join(lines) + "\n")
    f, _, text = _run(tmp_path / "out", {**NONE, "iteration_times": str(grid)})
    assert f["exponents_differ"]["verdict"] == "no" and f["exponents_differ"]["evidence"]["pooled_warranted"]
    assert "Pooled exponent (one slope, a prefactor per iteration): 1.50" in text
    assert "Scales worse, not only slower" not in text and "The iterations scale alike" in text
    d = f["design_comparisons"]["1_vs_2"]
    assert d["verdict"] == "yes" and d["evidence"]["ratio"] == pytest.approx(3, rel=0.05)
