"""Gates: check files, rules applied to findings, `workbench check` exit codes and JUnit XML."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.ci_reports import finding, write_report
from workbench.cli import main
from workbench.errors import InputNotFoundError, UsageError
from workbench.report.checks import (
    checks_exit_code,
    checks_from_table,
    evaluate_checks,
    pyproject_checks,
    read_checks,
    validate_checks,
)
from workbench.report.reading import read_report

ROOT = Path(__file__).resolve().parent.parent


def _report(tmp_path: Path) -> Path:
    return write_report(tmp_path / "r", {
        "02_low_qps_nagle": [finding("quantum_ms", 40.0, unit="ms"), finding("parse_rejects", 0),
                             finding("p99_ms_by_rate", {"5": 41.0, "50": 3.0}, unit="ms")],
        "04_event_loop_yields": [finding("fit_r2", 0.95), finding("parse_rejects", 2), finding("skipped", None)],
        "05_actor_bottlenecks": [finding("money_conserved", True), finding("verdict", "conserved")],
        "06_broken": ("failed", [finding("early", 1)]),
    })


def _run(tmp_path: Path, table: dict) -> dict[str, tuple[str, str]]:
    results = list(read_report(_report(tmp_path)).notebooks.values())
    return {r.name: (r.outcome, r.message) for r in evaluate_checks(checks_from_table(table, "t.toml"), results)}


def test_rules_pass_fail_and_name_notebook_finding_value_and_rule(tmp_path: Path) -> None:
    got = _run(tmp_path, {
        "02_low_qps_nagle.quantum_ms": {"max": 5},
        "04_event_loop_yields.fit_r2": {"min": 0.99},
        "05_actor_bottlenecks.money_conserved": {"equals": True},
        "05_actor_bottlenecks.verdict": {"equals": "conserved"},
        "02_low_qps_nagle.p99_ms_by_rate": {"max": 10},
        "04_event_loop_yields.skipped": {"max": 1},
        "06_broken.late": {"equals": 1},
    })
    assert got == {
        "02_low_qps_nagle.quantum_ms (max = 5)": ("failed", "02_low_qps_nagle.quantum_ms = 40 ms: breaks max = 5"),
        "04_event_loop_yields.fit_r2 (min = 0.99)": ("failed", "04_event_loop_yields.fit_r2 = 0.95: breaks min = 0.99"),
        "05_actor_bottlenecks.money_conserved (equals = true)": (
            "passed", "05_actor_bottlenecks.money_conserved = True: keeps equals = true"),
        '05_actor_bottlenecks.verdict (equals = "conserved")': (
            "passed", '05_actor_bottlenecks.verdict = conserved: keeps equals = "conserved"'),
        "02_low_qps_nagle.p99_ms_by_rate (max = 10)": (
            "failed", "02_low_qps_nagle.p99_ms_by_rate = {5: 41, 50: 3} ms: breaks max = 10 (element [5] = 41)"),
        "04_event_loop_yields.skipped (max = 1)": (
            "failed", "04_event_loop_yields.skipped = None (not computed), rule max = 1"),
        "06_broken.late (equals = 1)": ("failed", "06_broken.late: not recorded: the notebook failed before it "
                                                  "(rule equals = 1)"),
    }


def test_patterns_apply_to_every_notebook_that_records_the_finding(tmp_path: Path) -> None:
    got = _run(tmp_path, {"*.parse_rejects": {"max": 0}})
    assert got == {
        "02_low_qps_nagle.parse_rejects (max = 0)": ("passed", "02_low_qps_nagle.parse_rejects = 0: keeps max = 0"),
        "04_event_loop_yields.parse_rejects (max = 0)": (
            "failed", "04_event_loop_yields.parse_rejects = 2: breaks max = 0"),
        "06_broken.parse_rejects (max = 0)": (  # a failed notebook may not have reached it: not a pass
            "failed", "06_broken.parse_rejects: not recorded: the notebook failed before it (rule max = 0)"),
    }


def test_equals_is_exact(tmp_path: Path) -> None:
    got = _run(tmp_path, {"05_actor_bottlenecks.money_conserved": {"equals": 1},
                          "02_low_qps_nagle.parse_rejects": {"equals": False}})
    assert [v[0] for v in got.values()] == ["failed", "failed"]  # true is not 1, 0 is not false


def test_unknown_names_are_errors_not_passes(tmp_path: Path) -> None:
    got = _run(tmp_path, {"04_event_loop_yields.fit_r3": {"min": 0.9}, "0[245]_*.nope": {"max": 0},
                          "07_missing.x": {"max": 0}, "05_actor_bottlenecks.verdict": {"max": 1}})
    assert [v[0] for v in got.values()] == ["error"] * 4
    # with a failed notebook among the matches the name may simply not have been reached: failed, still no pass
    assert list(_run(tmp_path, {"*.nope": {"max": 0}}).values()) == [
        ("failed", "06_broken.nope: not recorded: the notebook failed before it (rule max = 0)")]
    messages = " ".join(m for _, m in got.values())
    assert "04_event_loop_yields.fit_r3: unknown finding: 04_event_loop_yields records no 'fit_r3' " \
           "(it records: fit_r2, parse_rejects, skipped)" in messages
    assert "no notebook matching '0[245]_*' records a finding 'nope'" in messages
    assert "no notebook of this report matches '07_missing'" in messages
    assert "05_actor_bottlenecks.verdict = 'conserved': rule max = 1 needs a number" in messages


@pytest.mark.parametrize(("text", "message"), [
    ('"04.fit_r2" = {min = 0.99', "not valid TOML"),
    ('"fit_r2" = {min = 0.99}', "expected \"<notebook>.<finding>\""),
    ('"04.fit_r2" = {minimum = 0.99}', r"unknown rule key\(s\) \['minimum'\]"),
    ('"04.fit_r2" = {min = "high"}', "min must be a number"),
    ('"04.fit_r2" = 0.99', "expected a rule such as"),
])
def test_wrong_check_files_are_usage_errors(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "checks.toml"
    f.write_text(text)
    with pytest.raises(UsageError, match=message):
        read_checks(f)


def test_check_file_forms_and_pyproject(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('[checks]\n"04_x.fit_r2" = {min = 0.5}\n')
    assert [c.key for c in read_checks(tmp_path / "a.toml")] == ["04_x.fit_r2"]
    assert pyproject_checks(tmp_path) is None
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert pyproject_checks(tmp_path) is None
    with pytest.raises(UsageError, match=r"no \[tool.workbench.checks\] table"):
        read_checks(tmp_path / "pyproject.toml")
    (tmp_path / "pyproject.toml").write_text('[tool.workbench.checks]\n"*.parse_rejects" = {max = 0}\n')
    assert pyproject_checks(tmp_path) == tmp_path / "pyproject.toml"
    [c] = read_checks(tmp_path / "pyproject.toml")
    assert (c.notebook, c.finding, c.max, c.is_pattern) == ("*", "parse_rejects", 0, True)
    with pytest.raises(InputNotFoundError, match="check file .*nope.toml: no such file"):
        read_checks(tmp_path / "nope.toml")
    with pytest.raises(UsageError, match=r"no notebook of this run matches '02_low_qps_nagle' \(this run: 04_x\)"):
        validate_checks(checks_from_table({"02_low_qps_nagle.quantum_ms": {"max": 5}}, "t"), ["04_x"])


def test_example_check_file_reads() -> None:
    checks = read_checks(ROOT / "examples" / "ci" / "checks.toml")
    assert {c.key for c in checks} >= {"04_event_loop_yields.fit_r2", "04_event_loop_yields.fit_slope"}


def test_cli_check_exit_codes_junit_and_summary(tmp_path: Path, capsys, monkeypatch) -> None:
    report = _report(tmp_path)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.chdir(tmp_path)  # no pyproject.toml here
    ok = tmp_path / "ok.toml"
    ok.write_text('"05_actor_bottlenecks.money_conserved" = {equals = true}\n"02_*.quantum_ms" = {max = 50}\n')
    # the report has a failed notebook: the run fails even when every check passes
    assert main(["check", str(report), "--check", str(ok), "--junit", str(tmp_path / "ok.xml")]) == 1
    good = write_report(tmp_path / "good", {"05_actor_bottlenecks": [finding("money_conserved", True)],
                                            "02_low_qps_nagle": [finding("quantum_ms", 40.0)]})
    assert main(["check", str(good), "--check", str(ok)]) == 0
    bad = tmp_path / "bad.toml"
    bad.write_text('"02_low_qps_nagle.quantum_ms" = {max = 5}\n')
    capsys.readouterr()
    assert main(["check", str(good), "--check", str(bad), "--junit", str(tmp_path / "bad.xml")]) == 1
    out = capsys.readouterr().out
    assert "check FAILED: 02_low_qps_nagle.quantum_ms = 40: breaks max = 5" in out
    unknown = tmp_path / "unknown.toml"
    unknown.write_text('"02_low_qps_nagle.quantum_us" = {max = 5}\n')
    assert main(["check", str(good), "--check", str(unknown), "--junit", str(tmp_path / "unknown.xml")]) == 2
    assert main(["check", str(good)]) == 2  # no rules at all is a usage error, not a pass
    assert "no checks: pass --check FILE" in capsys.readouterr().err
    assert main(["check", str(tmp_path / "nope"), "--check", str(ok)]) == 2

    root = ET.parse(tmp_path / "ok.xml").getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"workbench.notebooks", "workbench.checks"}
    nb = suites["workbench.notebooks"]
    assert (nb.get("tests"), nb.get("failures"), nb.get("errors")) == ("4", "1", "0")
    [broken] = [c for c in nb.iter("testcase") if c.find("failure") is not None]
    assert broken.get("name") == "06_broken"
    assert broken.find("failure").get("message") == "RuntimeError in cell 2: boom"
    assert broken.find("failure").text == "RuntimeError: boom"  # colour codes stripped: XML 1.0 cannot hold ESC
    assert (suites["workbench.checks"].get("tests"), suites["workbench.checks"].get("failures")) == ("2", "0")
    bad_root = ET.parse(tmp_path / "bad.xml").getroot()
    [case] = [c for c in bad_root.iter("testcase") if c.get("classname") == "workbench.checks.02_low_qps_nagle"]
    assert case.get("name") == "quantum_ms (max = 5)"
    assert case.find("failure").get("message") == "02_low_qps_nagle.quantum_ms = 40: breaks max = 5"
    err_root = ET.parse(tmp_path / "unknown.xml").getroot()
    assert err_root.get("errors") == "1" and next(err_root.iter("error")).get("message").startswith(
        "02_low_qps_nagle.quantum_us: unknown finding")
    md = summary.read_text()
    assert "### checks: 0 of 1 passed" in md and "**failed**" in md


def test_exit_code_of_outcomes(tmp_path: Path) -> None:
    results = list(read_report(_report(tmp_path)).notebooks.values())
    run = lambda t: checks_exit_code(evaluate_checks(checks_from_table(t, "t"), results))  # noqa: E731
    assert run({"02_low_qps_nagle.parse_rejects": {"max": 0}}) == 0
    assert run({"02_low_qps_nagle.quantum_ms": {"max": 5}}) == 1
    assert run({"02_low_qps_nagle.quantum_ms": {"max": 5}, "02_low_qps_nagle.x": {"max": 5}}) == 2


def test_report_refuses_a_rule_for_a_notebook_it_does_not_run(tiny_notebooks: Path, tmp_path: Path, capsys,
                                                               monkeypatch) -> None:
    gate = tmp_path / "gate.toml"
    gate.write_text('"02_low_qps_nagle.quantum_ms" = {max = 5}\n')
    out = tmp_path / "out"
    assert main(["report", "01", "--notebooks", str(tiny_notebooks), "--out", str(out), "--check", str(gate)]) == 2
    assert "no notebook of this run matches '02_low_qps_nagle' (this run: 01_ok)" in capsys.readouterr().err
    assert not out.exists()  # nothing ran
    # without --check, ./pyproject.toml's [tool.workbench.checks] is the check file
    (tmp_path / "pyproject.toml").write_text('[tool.workbench.checks]\n"09_*.x" = {max = 0}\n')
    monkeypatch.chdir(tmp_path)
    assert main(["report", "--notebooks", str(tiny_notebooks), "--out", str(out)]) == 2
    assert "pyproject.toml [tool.workbench.checks]: '09_*.x': no notebook of this run matches '09_*'" in \
        capsys.readouterr().err
    assert not out.exists()
