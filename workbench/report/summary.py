"""Markdown summaries for a CI job page (GitHub Actions' ``$GITHUB_STEP_SUMMARY``).

:func:`report_markdown` — notebooks (status, run time, findings) and checks;
:func:`compare_markdown` — the comparison's counts and every row that is not
``within noise``. :func:`write_step_summary` appends Markdown to the file named
by ``$GITHUB_STEP_SUMMARY`` when that variable is set, and does nothing otherwise.
Data text is escaped for Markdown table cells.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..findings import format_value
from .checks import CheckResult
from .compare import VERDICTS, Comparison, change_text
from .results import NotebookResult

#: the environment variable GitHub Actions sets to the job summary file
STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def cell(text: object) -> str:
    """Text safe inside a Markdown table cell: no pipes, newlines, HTML or emphasis markers."""
    s = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")
    for ch in "<>*_`[]":
        s = s.replace(ch, "\\" + ch)
    return s


def report_markdown(results: list[NotebookResult], checks: list[CheckResult] | None = None) -> str:
    """A Markdown summary of a report run and its checks."""
    n_ok = sum(r.status == "ok" for r in results)
    lines = ["## workbench report", "", f"{n_ok} of {len(results)} notebooks ran cleanly.", "",
             "| notebook | status | run time | findings |", "|---|---|---|---|"]
    for r in results:
        status = "ok" if r.status == "ok" else f"**failed**: {cell(r.error.ename + ': ' + r.error.evalue) if r.error else ''}"
        lines.append(f"| {cell(r.name)} | {status} | {r.seconds:.1f} s | {len(r.findings)} |")
    if checks:
        bad = [c for c in checks if c.outcome != "passed"]
        lines += ["", f"### checks: {len(checks) - len(bad)} of {len(checks)} passed", ""]
        if bad:
            lines += ["| outcome | check | message |", "|---|---|---|"]
            lines += [f"| **{c.outcome}** | {cell(c.name)} | {cell(c.message)} |" for c in bad]
    return "\n".join(lines) + "\n"


def compare_markdown(comp: Comparison, max_rows: int = 100) -> str:
    """A Markdown summary of a comparison: counts, then the rows that moved (most serious first)."""
    counts = comp.counts()
    moved = sorted((c for c in comp.changes if c.verdict != "within noise"), key=lambda c: VERDICTS.index(c.verdict))
    lines = ["## workbench compare", "",
             f"BASE `{cell(comp.base.folder)}` → NEW `{cell(comp.new.folder)}`: "
             + ", ".join(f"{v} {k}" for k, v in counts.items()), ""]
    if moved:
        lines += ["| verdict | finding | before | after | change | rule |", "|---|---|---|---|---|---|"]
        for c in moved[:max_rows]:
            verdict = f"**{c.verdict}**" if c.verdict == "regressed" else c.verdict
            before = "—" if c.before is None else format_value(c.before, c.unit)
            after = "—" if c.after is None else format_value(c.after, c.unit)
            lines.append(f"| {verdict} | {cell(c.label)} | {cell(before)} | {cell(after)} | "
                         f"{cell(change_text(c))} | {cell(c.rule)} |")
        if len(moved) > max_rows:
            lines.append(f"\n… and {len(moved) - max_rows} more.")
    else:
        lines.append("Nothing moved beyond its noise.")
    return "\n".join(lines) + "\n"


def write_step_summary(markdown: str) -> Path | None:
    """Append ``markdown`` to ``$GITHUB_STEP_SUMMARY`` if set; returns the file, or None."""
    target = os.environ.get(STEP_SUMMARY_ENV)
    if not target:
        return None
    path = Path(target)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(markdown + "\n")
    return path
