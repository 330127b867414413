"""`workbench compare`: every verdict with the rule that decided it, the outputs, the exit codes."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from tests.ci_reports import finding, write_report
from workbench.cli import main
from workbench.errors import InputNotFoundError, ParseError, UsageError
from workbench.findings import Finding
from workbench.report.compare import (
    COMPARE_JSON_VERSION,
    VERDICTS,
    compare_finding,
    compare_reports,
    decide_scalar,
    format_comparison,
)
from workbench.report.compare_page import write_compare_html
from workbench.report.reading import read_report

NB = "04_event_loop_yields"


def _one(before: Finding | None, after: Finding | None) -> tuple[str, str]:
    c = compare_finding(NB, before, after)
    return c.verdict, c.rule


def F(value, **kw) -> Finding:  # noqa: N802 - reads like a constructor
    return Finding(name="x", value=value, **kw)


@pytest.mark.parametrize(("before", "after", "verdict", "rule"), [
    # CIs that do not overlap: direction decides
    (F(10.0, ci=[9.0, 11.0], better="lower"), F(20.0, ci=[19.0, 21.0]), "regressed",
     "CIs do not overlap ([9, 11] vs [19, 21]); lower is better"),
    (F(10.0, ci=[9.0, 11.0], better="higher"), F(20.0, ci=[19.0, 21.0], better="higher"), "improved",
     "CIs do not overlap ([9, 11] vs [19, 21]); higher is better"),
    (F(1.07, ci=[1.0, 1.1]), F(2.14, ci=[2.0, 2.3]), "changed", "CIs do not overlap ([1, 1.1] vs [2, 2.3])"),
    # overlapping CIs: noise, whatever the direction
    (F(10.0, ci=[9.0, 11.0], better="lower"), F(10.8, ci=[10.5, 11.5], better="lower"), "within noise",
     "CIs overlap ([9, 11] vs [10.5, 11.5])"),
    # one CI only (an older baseline): the other value against it
    # one CI only (an older baseline): the other value gets an interval of the same widths
    (F(10.0), F(13.0, ci=[12.0, 14.0], better="lower"), "regressed",
     "CIs do not overlap (NEW's CI [12, 14] vs BASE 10 with the same widths [9, 11]); lower is better"),
    (F(10.0, ci=[9.0, 11.0]), F(11.5), "within noise",
     "CIs overlap (BASE's CI [9, 11] vs NEW 11.5 with the same widths [10.5, 12.5])"),
    # tolerance, absolute and relative
    (F(100, tolerance=5, better="lower"), F(106, tolerance=5, better="lower"), "regressed",
     "beyond tolerance ±5; lower is better"),
    (F(100, tolerance=5, better="lower"), F(96, tolerance=5, better="lower"), "within noise", "within tolerance ±5"),
    (F(100.0), F(89.0, rel_tolerance=0.1, better="lower"), "improved",
     "beyond tolerance ±0.1× of 100; lower is better"),
    # CI and tolerance: both must say it moved
    (F(10.0, ci=[9.9, 10.1], tolerance=1.0), F(10.5, ci=[10.4, 10.6], tolerance=1.0), "within noise",
     "CIs do not overlap ([9.9, 10.1] vs [10.4, 10.6]), within tolerance ±1"),
    # nothing declared: any difference is a change, never a regression
    (F(3.0, better="lower"), F(3.5, better="lower"), "changed", "value differs; no CI or tolerance declared"),
    (F(3.0), F(3.0), "within noise", "same value"),
    # verdict strings, bools, None
    (F("disjoint"), F("overlap"), "changed", "a verdict string changed"),
    (F(True), F(False), "changed", "value changed"),
    (F(True, better="higher"), F(False, better="higher"), "regressed", "value changed; higher is better (true > false)"),
    (F(True, better="lower"), F(False), "improved", "value changed; lower is better (true > false)"),
    (F(True), F(1), "changed", "value changed"),
    (F(2.5), F(None), "changed", "no value in NEW (not computed)"),
    (F(None), F(None), "within noise", "same value"),
    # lists and dicts: element by element, the worst element decides
    (F({"10": 1.0, "20": 2.0}, ci=[{"10": 0.9, "20": 1.9}, {"10": 1.1, "20": 2.1}], better="lower"),
     F({"10": 1.05, "20": 3.0}, ci=[{"10": 0.95, "20": 2.9}, {"10": 1.15, "20": 3.1}]), "regressed",
     "[20]: CIs do not overlap ([1.9, 2.1] vs [2.9, 3.1]); lower is better"),
    (F([1.0, 2.0], tolerance=0.5), F([1.2, 1.9]), "within noise", "every element within noise (2 elements)"),
    (F([1.0, 2.0]), F([1.0, 2.0, 3.0]), "changed", "the value's shape changed (elements added or removed)"),
])
def test_verdict_and_rule(before: Finding, after: Finding, verdict: str, rule: str) -> None:
    assert _one(before, after) == (verdict, rule)


def test_added_and_removed_findings() -> None:
    assert _one(None, F(1.0)) == ("added", "recorded in NEW only")
    assert _one(F(1.0), None) == ("removed", "not recorded in NEW")
    c = compare_finding(NB, F(1.0), None, new_failed=True)
    assert (c.verdict, c.rule) == ("removed", "not recorded in NEW (the notebook failed)")


def test_difference_and_relative_change() -> None:
    c = compare_finding(NB, F(2.0), F(3.0))
    assert c.difference == 1.0 and c.relative_change == 0.5
    assert compare_finding(NB, F(0.0), F(3.0)).relative_change is None
    assert decide_scalar(1, 1.0 + 1e-15, None, None) == ("within noise", "same value")


def _pair(tmp_path: Path, base: dict, new: dict) -> tuple[Path, Path]:
    return write_report(tmp_path / "base", base), write_report(tmp_path / "new", new)


def test_reports_every_finding_and_status_change(tmp_path: Path) -> None:
    base, new = _pair(tmp_path, {
        NB: [finding("fit_slope", 1.07, ci=[1.0, 1.1]), finding("fit_r2", 0.99, tolerance=0.01, better="higher"),
             finding("old_only", 3)],
        "05_actor_bottlenecks": [finding("money_conserved", True)],
        "02_low_qps_nagle": [finding("quantum_ms", 40.0)],
    }, {
        NB: [finding("fit_slope", 2.14, ci=[2.0, 2.3]), finding("fit_r2", 0.95, tolerance=0.01, better="higher"),
             finding("new_only", 4)],
        "05_actor_bottlenecks": ("failed", []),
        "01_quantized_latency": [finding("latency_quantum_ms", 1.0)],
    })
    comp = compare_reports(base, new)
    got = {(c.notebook, c.finding): (c.verdict, c.rule) for c in comp.changes}
    assert got == {
        (NB, "fit_slope"): ("changed", "CIs do not overlap ([1, 1.1] vs [2, 2.3])"),
        (NB, "fit_r2"): ("regressed", "beyond tolerance ±0.01; higher is better"),
        (NB, "new_only"): ("added", "recorded in NEW only"),
        (NB, "old_only"): ("removed", "not recorded in NEW"),
        ("05_actor_bottlenecks", None): ("regressed", "notebook went from ok to failed"),
        ("05_actor_bottlenecks", "money_conserved"): ("removed", "not recorded in NEW (the notebook failed)"),
        ("01_quantized_latency", None): ("added", "notebook only in NEW"),
        ("01_quantized_latency", "latency_quantum_ms"): ("added", "recorded in NEW only"),
        ("02_low_qps_nagle", None): ("removed", "notebook only in BASE"),
        ("02_low_qps_nagle", "quantum_ms"): ("removed", "not recorded in NEW"),
    }
    assert comp.exit_code == 1
    assert comp.counts() == {"regressed": 2, "improved": 0, "changed": 1, "within noise": 0, "added": 3, "removed": 4}
    # and back: failed → ok is an improvement
    back = compare_reports(new, base)
    assert ("improved", "notebook went from failed to ok") in {(c.verdict, c.rule) for c in back.changes
                                                               if c.finding is None}


def test_cli_json_is_versioned_and_lists_every_finding(tmp_path: Path, capsys) -> None:
    base, new = _pair(tmp_path, {NB: [finding("fit_slope", 1.07, ci=[1.0, 1.1], unit="ms/ms"),
                                      finding("fit_r2", 0.999)]},
                      {NB: [finding("fit_slope", 2.14, ci=[2.0, 2.3], unit="ms/ms"), finding("fit_r2", 0.999)]})
    assert main(["compare", str(base), str(new / "report.json"), "--json"]) == 0  # changed is not regressed
    out = json.loads(capsys.readouterr().out)
    assert out["version"] == COMPARE_JSON_VERSION == 1
    assert out["base"] == str(base) and out["new"] == str(new)
    assert out["changes"] == [
        {"notebook": NB, "finding": "fit_slope", "before": 1.07, "after": 2.14, "difference": pytest.approx(1.07),
         "relative_change": pytest.approx(1.0), "unit": "ms/ms", "better": None, "before_ci": [1.0, 1.1],
         "after_ci": [2.0, 2.3], "verdict": "changed", "rule": "CIs do not overlap ([1, 1.1] vs [2, 2.3])",
         "explain": None},
        {"notebook": NB, "finding": "fit_r2", "before": 0.999, "after": 0.999, "difference": 0.0,
         "relative_change": 0.0, "unit": None, "better": None, "before_ci": None, "after_ci": None,
         "verdict": "within noise", "rule": "same value", "explain": None},
    ]
    assert set(out["counts"]) == set(VERDICTS)


def test_cli_exit_codes(tmp_path: Path, capsys) -> None:
    base, new = _pair(tmp_path, {NB: [finding("p99_ms", 10.0, ci=[9.0, 11.0], better="lower")]},
                      {NB: [finding("p99_ms", 30.0, ci=[28.0, 32.0], better="lower")]})
    assert main(["compare", str(base), str(base), "--no-html"]) == 0
    assert main(["compare", str(base), str(new), "--no-html"]) == 1
    assert "REGRESSED" in capsys.readouterr().out
    assert main(["compare", str(new), str(base), "--no-html"]) == 0  # improved
    # usage errors: 2, and the message says what is wrong
    (tmp_path / "empty").mkdir()
    newer = write_report(tmp_path / "newer", {NB: []}, version=2)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    capsys.readouterr()
    for args, message in [
        ([str(tmp_path / "missing"), str(new)], f"BASE {tmp_path / 'missing'}: no such report folder or file"),
        ([str(base), str(tmp_path / "empty")], "NEW " + str(tmp_path / "empty") + ": folder has no report.json"),
        ([str(base), str(newer)], "report.json layout version 2 is newer than this workbench reads (up to 1)"),
        ([str(broken), str(new)], "not valid JSON"),
    ]:
        assert main(["compare", *args, "--no-html"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("workbench compare: ") and message in err, err
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(base)])
    assert exc.value.code == 2
    assert "the following arguments are required: NEW" in capsys.readouterr().err


def test_reading_errors_name_the_report(tmp_path: Path) -> None:
    with pytest.raises(InputNotFoundError, match="BASE .*no such report"):
        read_report(tmp_path / "nope", "BASE")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"version": 1, "notebooks": [{"name": NB, "status": "maybe"}]}))
    with pytest.raises(ParseError, match=r"notebooks\[0\] \(04_event_loop_yields\): expected status"):
        read_report(bad)
    bad.write_text(json.dumps({"version": 1, "notebooks": [{"name": NB, "status": "ok",
                                                             "findings": {"x": {"name": "x"}}}]}))
    with pytest.raises(ParseError, match=r"04_event_loop_yields\.x: not a finding"):
        read_report(bad)
    bad.write_text(json.dumps({"version": 9, "notebooks": []}))
    with pytest.raises(UsageError, match="version 9 is newer"):
        read_report(bad)


def test_terminal_output_fits_in_20_lines(tmp_path: Path) -> None:
    many = 40
    base, new = _pair(tmp_path, {NB: [finding(f"f{i}", float(i)) for i in range(many)]},
                      {NB: [finding(f"f{i}", float(i) + 1) for i in range(many)]})
    text = format_comparison(compare_reports(base, new), html_path=new / "compare.html")
    lines = text.splitlines()
    assert len(lines) <= 20
    assert lines[1] == "regressed 0, improved 0, changed 40, within noise 0, added 0, removed 0"
    assert "… and 25 more" in text and lines[-1] == "result: no regression (exit 0)"


def test_html_page_is_self_contained_and_links_both_runs(tmp_path: Path) -> None:
    base, new = _pair(tmp_path, {NB: [finding("p99_ms", 10.0, ci=[9.0, 11.0], better="lower",
                                              explain="<script>alert(1)</script>")]},
                      {NB: [finding("p99_ms", 30.0, ci=[28.0, 32.0], better="lower")],
                       "05_<b>": [finding("x", 1)]})
    page = write_compare_html(compare_reports(base, new), tmp_path / "pages" / "compare.html")
    text = page.read_text()
    assert "<script" not in text.lower() and "http://" not in text and "https://" not in text
    assert "Content-Security-Policy" in text and "05_&lt;b&gt;" in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text  # the finding's explanation, escaped
    hrefs = [unquote(html.unescape(h)) for h in re.findall(r'href="([^"]+)"', text)]
    assert f"../base/{NB}.html" in hrefs and f"../new/{NB}.html" in hrefs
    for h in hrefs:  # every link resolves to a file beside the page
        assert (page.parent / h).resolve().exists() or h.endswith("index.html"), h
    assert 'class="regressed">regressed' in text


def test_default_html_is_written_into_new(tmp_path: Path, capsys) -> None:
    base, new = _pair(tmp_path, {NB: [finding("a", 1)]}, {NB: [finding("a", 1)]})
    assert main(["compare", str(base), str(new)]) == 0
    assert (new / "compare.html").is_file()
    out = capsys.readouterr().out
    assert f"page: {new / 'compare.html'}" in out and len(out.splitlines()) <= 20


def test_step_summary_and_junit(tmp_path: Path, monkeypatch) -> None:
    import xml.etree.ElementTree as ET

    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    base, new = _pair(tmp_path, {NB: [finding("p99_ms", 10.0, ci=[9.0, 11.0], better="lower"),
                                      finding("verdict", "a|b")]},
                      {NB: [finding("p99_ms", 30.0, ci=[28.0, 32.0], better="lower"), finding("verdict", "c")]})
    assert main(["compare", str(base), str(new), "--junit", str(tmp_path / "c.xml"), "--no-html"]) == 1
    md = summary.read_text()
    assert "| **regressed** | 04\\_event\\_loop\\_yields.p99\\_ms | 10 | 30 |" in md
    assert "a\\|b" in md  # a pipe in data cannot break the table
    root = ET.parse(tmp_path / "c.xml").getroot()
    assert root.tag == "testsuites" and root.get("tests") == "2" and root.get("failures") == "1"
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["p99_ms"].find("failure") is not None and cases["verdict"].find("failure") is None
    assert "CIs do not overlap" in cases["p99_ms"].find("failure").get("message")
