"""Two report runs into one folder: neither loses its results, and no half-written file is left."""
from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

from workbench.report import run_report

from .conftest import make_notebook


def _run(notebook: str, out: str) -> None:
    run_report([Path(notebook)], out_dir=out, echo=False)


def test_two_runs_of_different_notebooks_into_one_folder_keep_both(tmp_path: Path) -> None:
    a = make_notebook(tmp_path / "nb" / "01_a.ipynb", "x = 1  # a number",
                      ["from workbench import record_finding\nimport time\ntime.sleep(1)\nrecord_finding('a', x)"])
    b = make_notebook(tmp_path / "nb" / "02_b.ipynb", "y = 2  # a number",
                      ["from workbench import record_finding\nrecord_finding('b', y)"])
    out = tmp_path / "out"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_run, args=(str(nb), str(out))) for nb in (a, b)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=600)
        assert p.exitcode == 0
    report = json.loads((out / "report.json").read_text())
    assert sorted(n["name"] for n in report["notebooks"]) == ["01_a", "02_b"]
    findings = json.loads((out / "findings.json").read_text())["findings"]
    assert findings == {"01_a": {"a": 1}, "02_b": {"b": 2}}
    index = (out / "index.html").read_text()
    assert 'href="01_a.html"' in index and 'href="02_b.html"' in index
    assert [p.name for p in out.iterdir() if p.name.endswith(".tmp")] == []


def test_a_later_run_keeps_earlier_results_only_while_their_pages_exist(tmp_path: Path) -> None:
    a = make_notebook(tmp_path / "nb" / "01_a.ipynb", "x = 1  # a number",
                      ["from workbench import record_finding\nrecord_finding('a', x)"])
    b = make_notebook(tmp_path / "nb" / "02_b.ipynb", "y = 2  # a number",
                      ["from workbench import record_finding\nrecord_finding('b', y)"])
    out = tmp_path / "out"
    run_report([a], out_dir=out, echo=False)
    run_report([b], out_dir=out, echo=False)
    assert sorted(json.loads((out / "findings.json").read_text())["findings"]) == ["01_a", "02_b"]
    (out / "01_a.html").unlink()
    run_report([b], out_dir=out, echo=False)
    assert sorted(json.loads((out / "findings.json").read_text())["findings"]) == ["02_b"]
