"""JUnit XML for CI services (Jenkins, GitLab, GitHub test reporters).

:func:`report_junit` writes one test case per notebook (``failure`` when it
failed, with the cell's error) and one per check (``failure`` when the value
breaks the rule, ``error`` when the rule is wrong); :func:`compare_junit` one
test case per compared finding (``failure`` when it regressed). The layout is
the common JUnit one: ``<testsuites>`` → ``<testsuite>`` → ``<testcase
classname name time>`` with optional ``<failure>``/``<error>`` (``message``,
``type``, text) and ``<system-out>``. Text is stripped of terminal colour codes
and of characters XML 1.0 cannot hold.
"""
from __future__ import annotations

import os
import re
import socket
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from ..findings import format_value
from .checks import CheckResult
from .compare import Comparison, change_text
from .results import NotebookResult

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_NOT_XML = re.compile(r"[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """Text an XML 1.0 document can hold: colour codes and control characters removed."""
    return _NOT_XML.sub("", _ANSI.sub("", text))


@dataclass(frozen=True)
class Case:
    """One test case: where it belongs, its name, run time and outcome."""

    classname: str
    name: str
    seconds: float = 0.0
    outcome: str = "passed"  # passed | failed | error
    message: str = ""
    detail: str = ""
    out: str = ""


def notebook_cases(results: list[NotebookResult]) -> list[Case]:
    """A case per notebook: passed when it ran cleanly, failed with the failing cell's error."""
    cases = []
    for r in results:
        n = len(r.findings)
        out = f"{r.title}: {n} finding{'s' if n != 1 else ''}" + (f"; page {Path(r.html).name}" if r.html else "")
        if r.error is None:
            cases.append(Case("workbench.notebooks", r.name, r.seconds, out=out))
        else:
            where = f" in cell {r.error.execution_count}" if r.error.execution_count is not None else ""
            cases.append(Case("workbench.notebooks", r.name, r.seconds, "failed",
                              f"{r.error.ename}{where}: {r.error.evalue.splitlines()[0] if r.error.evalue else ''}",
                              r.error.traceback, out))
    return cases


def check_cases(results: list[CheckResult]) -> list[Case]:
    """A case per (rule, notebook): failed when broken, error when the rule is wrong."""
    return [Case(f"workbench.checks.{r.notebook or r.check.notebook}", f"{r.check.finding} ({r.check.describe()})",
                 outcome=r.outcome, message=r.message if r.outcome != "passed" else "", out=r.message)
            for r in results]


def compare_cases(comp: Comparison) -> list[Case]:
    """A case per compared finding (and changed notebook status): failed when it regressed."""
    cases = []
    for c in comp.changes:
        text = (f"{c.verdict}: {format_value(c.before, c.unit) if c.before is not None else '—'} → "
                f"{format_value(c.after, c.unit) if c.after is not None else '—'} {change_text(c)} ({c.rule})")
        cases.append(Case(f"workbench.compare.{c.notebook}", c.finding or "notebook status",
                          outcome="failed" if c.verdict == "regressed" else "passed",
                          message=text if c.verdict == "regressed" else "", out=text))
    return cases


def _suite(parent: ET.Element, name: str, cases: list[Case], stamp: str, host: str) -> None:
    suite = ET.SubElement(parent, "testsuite", {
        "name": name, "tests": str(len(cases)),
        "failures": str(sum(c.outcome == "failed" for c in cases)),
        "errors": str(sum(c.outcome == "error" for c in cases)), "skipped": "0",
        "time": f"{sum(c.seconds for c in cases):.3f}", "timestamp": stamp, "hostname": host})
    for c in cases:
        case = ET.SubElement(suite, "testcase", {"classname": xml_text(c.classname), "name": xml_text(c.name),
                                                 "time": f"{c.seconds:.3f}"})
        if c.outcome in ("failed", "error"):
            tag = "failure" if c.outcome == "failed" else "error"
            el = ET.SubElement(case, tag, {"message": xml_text(c.message)[:1000], "type": tag})
            el.text = xml_text(c.detail or c.message)
        if c.out:
            ET.SubElement(case, "system-out").text = xml_text(c.out)


def write_junit(path: str | Path, suites: dict[str, list[Case]], name: str = "workbench") -> Path:
    """Write ``<testsuites>`` with one ``<testsuite>`` per entry of ``suites`` (name → cases)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    host = socket.gethostname()
    cases = [c for cs in suites.values() for c in cs]
    root = ET.Element("testsuites", {
        "name": name, "tests": str(len(cases)), "failures": str(sum(c.outcome == "failed" for c in cases)),
        "errors": str(sum(c.outcome == "error" for c in cases)), "time": f"{sum(c.seconds for c in cases):.3f}"})
    for suite_name, suite_cases in suites.items():
        _suite(root, suite_name, suite_cases, stamp, host)
    ET.indent(root)
    tmp = out.with_name(f".{out.name}.tmp")
    ET.ElementTree(root).write(tmp, encoding="utf-8", xml_declaration=True)
    os.replace(tmp, out)
    return out


def report_junit(path: str | Path, results: list[NotebookResult], checks: list[CheckResult] | None = None) -> Path:
    """JUnit XML of a report run: suite ``workbench.notebooks`` and, with checks, ``workbench.checks``."""
    suites = {"workbench.notebooks": notebook_cases(results)}
    if checks:
        suites["workbench.checks"] = check_cases(checks)
    return write_junit(path, suites, "workbench report")


def compare_junit(path: str | Path, comp: Comparison) -> Path:
    """JUnit XML of a comparison: suite ``workbench.compare``, one case per row."""
    return write_junit(path, {"workbench.compare": compare_cases(comp)}, "workbench compare")
