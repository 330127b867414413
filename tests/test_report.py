"""The report runner: success, failure, parameters passed through, findings read back."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.report import discover, execute_notebook, run_report, select

pytestmark = pytest.mark.slow


def test_success_writes_notebook_html_and_findings(tiny_notebooks: Path, tmp_path: Path) -> None:
    res = execute_notebook(tiny_notebooks / "01_ok.ipynb", {"x": 21}, out_dir=tmp_path / "out")
    assert res.status == "ok", res.error
    assert res.findings["double"].value == 42
    assert res.findings["double"].unit == "ms"
    assert res.findings["double"].explain == "twice x"
    assert res.parameters == {"x": 21, "label": "a"}
    html = Path(res.html).read_text()
    assert "data:image/png;base64" in html  # figures embedded, no kernel needed to see them
    assert "twice x" in html


def test_failing_notebook_reports_cell_error_and_keeps_earlier_findings(tiny_notebooks: Path, tmp_path: Path) -> None:
    res = execute_notebook(tiny_notebooks / "02_fails.ipynb", out_dir=tmp_path / "out")
    assert res.status == "failed"
    assert res.error is not None
    assert res.error.ename == "RuntimeError"
    assert "asked to fail" in res.error.evalue
    assert set(res.findings) == {"before_failure"}
    assert Path(res.html).exists()


def test_cli_report_runs_all_exits_nonzero_and_writes_index(tiny_notebooks: Path, tmp_path: Path) -> None:
    out = tmp_path / "reports"
    rc = main(["report", "--notebooks", str(tiny_notebooks), "--out", str(out), "--jobs", "2",
               "-p", "x", "5"])
    assert rc == 1  # one notebook failed
    findings = json.loads((out / "findings.json").read_text())
    assert findings == {"01_ok": {"double": 10, "label": "a"}, "02_fails": {"before_failure": 1}}
    index = (out / "index.html").read_text()
    assert "01_ok.html" in index and "02_fails.html" in index
    assert "asked to fail" in index and "papermill-error-cell" in index
    report = json.loads((out / "report.json").read_text())
    statuses = {n["name"]: n["status"] for n in report["notebooks"]}
    assert statuses == {"01_ok": "ok", "02_fails": "failed"}


def test_cli_parameters_are_typed_by_default(tiny_notebooks: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    rc = main(["report", "01", "--notebooks", str(tiny_notebooks), "--out", str(out), "-p", "label", "123"])
    assert rc == 0
    assert json.loads((out / "findings.json").read_text())["01_ok"]["label"] == "123"  # str default stays str
    rc = main(["report", "02", "--notebooks", str(tiny_notebooks), "--out", str(out), "-p", "fail", "false"])
    assert rc == 0


def test_unknown_parameter_is_refused_before_running(tiny_notebooks: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not declared"):
        run_report(discover(tiny_notebooks), {"nope": "1"}, out_dir=tmp_path / "r")
    assert main(["report", "--notebooks", str(tiny_notebooks), "--out", str(tmp_path / "r"), "-p", "nope", "1"]) == 2


def test_select_by_prefix_and_errors(tiny_notebooks: Path) -> None:
    nbs = discover(tiny_notebooks)
    assert [p.stem for p in select(nbs, ["02"])] == ["02_fails"]
    with pytest.raises(ValueError, match="matches no"):
        select(nbs, ["09"])
    with pytest.raises(ValueError, match="matches several"):
        select(nbs, ["0"])


def test_no_input_hides_code(tiny_notebooks: Path, tmp_path: Path) -> None:
    res = execute_notebook(tiny_notebooks / "01_ok.ipynb", out_dir=tmp_path / "o", no_input=True)
    html = Path(res.html).read_text()
    assert "record_finding(" not in html
    assert "twice x" in html
