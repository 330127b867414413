"""The report runner: success, failure, parameters passed through, findings read back."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.errors import InputNotFoundError, ParseError, UsageError
from workbench.report import (
    FINDINGS_JSON_VERSION,
    REPORT_JSON_VERSION,
    coerce_value,
    discover,
    execute_notebook,
    parse_parameters,
    resolve_parameters,
    run_report,
    select,
)

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
    assert FINDINGS_JSON_VERSION == 1
    assert findings == {"version": 1,
                        "findings": {"01_ok": {"double": 10, "label": "a"}, "02_fails": {"before_failure": 1}},
                        "uncertainty": {}}  # none of these findings declares a CI, tolerance or direction
    index = (out / "index.html").read_text()
    assert "01_ok.html" in index and "02_fails.html" in index
    assert "asked to fail" in index and "papermill-error-cell" in index
    report = json.loads((out / "report.json").read_text())
    assert REPORT_JSON_VERSION == 1 and report["version"] == 1
    assert report["notebooks"][0]["findings"]["double"] == {"name": "double", "value": 10, "unit": "ms",
                                                            "explain": "twice x"}
    statuses = {n["name"]: n["status"] for n in report["notebooks"]}
    assert statuses == {"01_ok": "ok", "02_fails": "failed"}


def test_cli_parameters_are_typed_by_default(tiny_notebooks: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    rc = main(["report", "01", "--notebooks", str(tiny_notebooks), "--out", str(out), "-p", "label", "123"])
    assert rc == 0
    assert json.loads((out / "findings.json").read_text())["findings"]["01_ok"]["label"] == "123"  # str default stays str
    rc = main(["report", "02", "--notebooks", str(tiny_notebooks), "--out", str(out), "-p", "fail", "false"])
    assert rc == 0


def test_unknown_parameter_is_refused_before_running(tiny_notebooks: Path, tmp_path: Path, capsys) -> None:
    with pytest.raises(UsageError, match=r"\['nope'\] are not declared by any selected notebook \(01_ok, 02_fails\)"):
        run_report(discover(tiny_notebooks), {"nope": "1"}, out_dir=tmp_path / "r")
    assert not (tmp_path / "r" / "01_ok.ipynb").exists()  # nothing ran
    assert main(["report", "--notebooks", str(tiny_notebooks), "--out", str(tmp_path / "r"), "-p", "nope", "1"]) == 2
    assert "workbench report: parameter(s) ['nope'] are not declared" in capsys.readouterr().err


def test_usage_errors_name_the_parameter_or_notebook(tiny_notebooks: Path, tmp_path: Path, capsys) -> None:
    with pytest.raises(UsageError, match=r"02_fails.ipynb: parameter 'fail': expected a boolean.*'maybe'"):
        resolve_parameters(tiny_notebooks / "02_fails.ipynb", {"fail": "maybe"})
    with pytest.raises(UsageError, match="parameter 'live': expected a boolean"):
        coerce_value("2", False, name="live")
    assert coerce_value("off", True) is False and coerce_value("3", 1.0) == 3.0
    assert main(["report", "02", "--notebooks", str(tiny_notebooks), "--out", str(tmp_path / "r"),
                 "-p", "fail", "maybe"]) == 2
    assert "parameter 'fail': expected a boolean" in capsys.readouterr().err
    assert main(["list", "09", "--notebooks", str(tiny_notebooks)]) == 2
    assert "workbench list: notebook '09' matches no notebook; available: 01_ok, 02_fails" in capsys.readouterr().err
    with pytest.raises(InputNotFoundError, match="no such folder of notebooks"):
        discover(tmp_path / "nowhere")
    assert main(["report", "--notebooks", str(tmp_path / "nowhere"), "--out", str(tmp_path / "r")]) == 2
    assert "nowhere: no such folder of notebooks" in capsys.readouterr().err


def test_parameters_cell_with_a_statement_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match=r"^nb.ipynb:2: only 'name = value' assignments .*: 'print\(a\)'$"):
        parse_parameters("a = 1  # one\nprint(a)\n", name="nb.ipynb")
    assert [p.default_source for p in parse_parameters("a = 2 * 3  # an expression stays text")] == ["2 * 3"]


def test_select_by_prefix_and_errors(tiny_notebooks: Path) -> None:
    nbs = discover(tiny_notebooks)
    assert [p.stem for p in select(nbs, ["02"])] == ["02_fails"]
    with pytest.raises(UsageError, match="'09' matches no notebook; available: 01_ok, 02_fails"):
        select(nbs, ["09"])
    with pytest.raises(UsageError, match="'0' matches several"):
        select(nbs, ["0"])


def test_no_input_hides_code(tiny_notebooks: Path, tmp_path: Path) -> None:
    res = execute_notebook(tiny_notebooks / "01_ok.ipynb", out_dir=tmp_path / "o", no_input=True)
    html = Path(res.html).read_text()
    assert "record_finding(" not in html
    assert "twice x" in html
