"""Notebook 04 on captures it was not built on (tests/data/nb04, see its README).

- ``asyncio_executor/capture.csv``: every file call awaited through ``run_in_executor``;
  only the columns mode, sections, yields, lag_ms_measured, duration_ms (no passes,
  fs_ms, hog_ms); no table of saves. Each yield costs about two loop passes there.
- ``node_callbacks/table.csv``: a Node.js (libuv) callback save in the table layout,
  with other section counts (3-24) and loop lags (2-22 ms); no capture.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import NOTEBOOKS, ROOT, run_notebook

NB = NOTEBOOKS / "04_event_loop_yields.ipynb"
DATA = ROOT / "tests" / "data" / "nb04"


def _execute(tmp_path: Path, params: dict) -> tuple[dict, dict, str]:
    return run_notebook(NB, tmp_path, params)


@pytest.mark.slow
def test_executor_capture_without_table(tmp_path: Path) -> None:
    f, why, text = _execute(tmp_path, {"published_path": "", "capture_path": str(DATA / "asyncio_executor" / "capture.csv")})
    # the table's sections are skipped, with their findings recorded as None and the reason
    for name in ("fit_slope", "yield_cost", "yields_per_section", "lag_threshold_ms", "timeout_risk", "options"):
        assert f[name] is None and "published_path" in why[name]
    for title in ("2. The published measurements", "3. Does the save take yields × loop-pass time?",
                  "6. Scenario: the slowest of N instances decides", "10. Scenario: the options weighed"):
        assert f"**{title} — skipped: needs published\\_path" in text
    # no passes column: the direct count is skipped, and says why; nothing else is lost (36 rows, 0 rejected)
    assert f["lab_pass_count_cost"] is None and "passes column" in why["lab_pass_count_cost"]
    assert "Loop passes counted during each save — skipped: needs a passes column" in text
    assert "36 saves (18 yielding), 0 rows rejected" in text
    # each yield costs about two passes through the executor: a confident "no"
    assert 1.7 < f["lab_fit_slope"] < 2.4
    d = f["lab_yield_cost"]
    assert d["verdict"] == "no" and d["evidence"]["ci_lo"] > 1.25
    assert "each yield costs more than one loop pass" in d["because"]
    assert "**no**" in text and "`lag_ms_measured`" in text
    # offloading the whole save flattens it
    assert f["offload_verdict"]["verdict"] == "yes"
    assert 8 < f["offload_speedup"] < 40
    assert "top quarter of measured lag" in why["offload_speedup"]
    assert "bundled" not in text and "your event-loop save capture" in text


@pytest.mark.slow
def test_node_table_without_capture(tmp_path: Path) -> None:
    f, why, text = _execute(tmp_path, {"capture_path": "", "published_path": str(DATA / "node_callbacks" / "table.csv")})
    for name in ("lab_fit_slope", "lab_yield_cost", "lab_pass_count_cost", "offload_verdict", "offload_speedup"):
        assert f[name] is None and "capture_path" in why[name]
    for title in ("7. Reproduction on an event loop", "8. Loop passes counted during each save",
                  "9. The fix side by side: offload the file work"):
        assert f"**{title} — skipped: needs capture\\_path" in text
    # 1.24 passes per yield (CI 1.20-1.28) straddles the 1.25 edge: inconclusive, and it says so
    assert f["fit_slope"] == pytest.approx(1.24, abs=0.02)
    d = f["yield_cost"]
    assert d["verdict"] == "inconclusive" and d["evidence"]["ci_lo"] < 1.25 < d["evidence"]["ci_hi"]
    assert "straddles" in d["because"]
    assert f["yields_per_section"] == pytest.approx(4.0) and f["base_yields"] == pytest.approx(2.0)
    assert 200 < f["lag_threshold_ms"] < 280
    # the scenario: below the target risk already, so no remedy is claimed; never a finding
    assert f["timeout_risk"] is None and f["options"] is None
    assert "already within the 1% budget, so no remedy is needed" in text
    assert "Offload `save`" not in text
    assert "it has 3–24 sections" in text
    assert "bundled" not in text and "your table of saves" in text
    assert "mktree" not in text  # the cartridge-specific explanation belongs to the bundled table only


@pytest.mark.slow
def test_thin_inputs_skip_what_they_cannot_support(tmp_path: Path) -> None:
    table = tmp_path / "two_rows.csv"
    table.write_text("sections,event_loop_ms,duration_ms,yields\n4,25,1532,59\n8,50,5682,107\n")
    capture = tmp_path / "yielding_only.csv"
    capture.write_text("# only yielding saves, no optional columns\n"
                       "mode,sections,yields,lag_ms_measured,duration_ms\n"
                       "yielding,2,20,5.0,104\nyielding,4,40,5.0,197\nyielding,8,80,10.0,806\n"
                       "yielding,8,80,2.0,170\n")
    f, why, text = _execute(tmp_path / "out", {"published_path": str(table), "capture_path": str(capture)})
    # two rows: the table is shown, but no line (or prediction, or scenario) is fitted through them
    assert f["fit_slope"] is None and "at least 3 rows" in why["fit_slope"]
    assert f["yields_per_section"] is None and "3 or more rows" in why["yields_per_section"]
    assert "2 rows loaded, 0 rejected" in text
    # yielding saves only: the fit runs (4 saves, about one pass per yield), the comparison is skipped
    assert f["lab_fit_slope"] == pytest.approx(1.0, abs=0.05)
    assert f["lab_yield_cost"]["verdict"] in ("yes", "inconclusive")
    assert f["offload_verdict"] is None and "both modes" in why["offload_verdict"]
    assert f["lab_pass_count_cost"] is None
