"""Compare two reports: which findings moved beyond their noise, and which way.

:func:`compare_reports` takes a BASE and a NEW report (folders or their
``report.json``) and returns a :class:`Comparison`: one :class:`Change` for every
finding present in either run, plus one for each notebook whose status changed,
each with its verdict and the rule that decided it.

Verdicts (:data:`VERDICTS`):

- ``regressed`` / ``improved`` — a significant move in the declared direction
  (``better="lower"|"higher"``; for a bool, true is higher), or a notebook that went from ok to failed (failed to ok);
- ``changed`` — a significant move of a finding without a direction, a verdict
  string (or a bool without a direction) that changed, a number without CI or tolerance
  that differs, a value that appeared or became None;
- ``within noise`` — the same value, or a move the CIs or the tolerance cover;
- ``added`` / ``removed`` — recorded in one run only.

A numeric move is significant when the two CIs do not overlap (with one CI
only, the other run's value gets an interval of the same widths) and, if a ``tolerance`` /
``rel_tolerance`` is declared, the difference is also larger than it; without a
CI, when the difference exceeds the tolerance. Declarations (tolerance,
direction) come from NEW, else from BASE; each run's CI is its own. A list or
dict is compared element by element and takes its worst element's verdict
(regressed, changed, improved, within noise, in that order).

:meth:`Comparison.to_json` is the ``--json`` output, versioned by
:data:`COMPARE_JSON_VERSION`; :func:`format_comparison` the terminal text.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..findings import Finding, format_plain, is_number, leaves
from .reading import RunReport, read_report

#: layout version of ``workbench compare --json``
COMPARE_JSON_VERSION = 1
#: every verdict, most serious first
VERDICTS = ("regressed", "improved", "changed", "within noise", "added", "removed")
#: which verdict of a list's or dict's elements decides for the whole value
_SEVERITY = {"regressed": 3, "changed": 2, "improved": 1, "within noise": 0}


@dataclass(frozen=True)
class Change:
    """One row of a comparison: a finding (or, with ``finding`` None, a notebook's status)."""

    notebook: str
    finding: str | None
    before: Any
    after: Any
    verdict: str
    rule: str
    difference: float | None = None
    relative_change: float | None = None
    unit: str | None = None
    better: str | None = None
    before_ci: list[Any] | None = None
    after_ci: list[Any] | None = None
    explain: str | None = None

    @property
    def label(self) -> str:
        """``notebook.finding``, or ``notebook (status)`` for a notebook's row."""
        return f"{self.notebook}.{self.finding}" if self.finding is not None else f"{self.notebook} (status)"

    def to_json(self) -> dict[str, Any]:
        return {
            "notebook": self.notebook, "finding": self.finding, "before": self.before, "after": self.after,
            "difference": _finite(self.difference), "relative_change": _finite(self.relative_change),
            "unit": self.unit, "better": self.better, "before_ci": self.before_ci, "after_ci": self.after_ci,
            "verdict": self.verdict, "rule": self.rule, "explain": self.explain,
        }


@dataclass(frozen=True)
class Comparison:
    """Every change between BASE and NEW, in run order (NEW's notebooks, then BASE-only ones)."""

    base: RunReport
    new: RunReport
    changes: list[Change] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """How many rows have each verdict (every verdict present, zeros included)."""
        return {v: sum(c.verdict == v for c in self.changes) for v in VERDICTS}

    def with_verdict(self, *verdicts: str) -> list[Change]:
        return [c for c in self.changes if c.verdict in verdicts]

    @property
    def exit_code(self) -> int:
        """1 when anything regressed, else 0."""
        return 1 if self.with_verdict("regressed") else 0

    def to_json(self) -> dict[str, Any]:
        """``{"version", "base", "new", "counts", "changes": [Change.to_json(), ...]}``."""
        return {"version": COMPARE_JSON_VERSION, "base": str(self.base.path.parent),
                "new": str(self.new.path.parent), "counts": self.counts(),
                "changes": [c.to_json() for c in self.changes]}


def _finite(x: float | None) -> float | None:
    return x if x is None or math.isfinite(x) else None


def compare_reports(base: str | Path | RunReport, new: str | Path | RunReport) -> Comparison:
    """Compare two reports (folders, ``report.json`` files or :class:`RunReport`). See the module doc."""
    b = base if isinstance(base, RunReport) else read_report(base, "BASE")
    n = new if isinstance(new, RunReport) else read_report(new, "NEW")
    changes: list[Change] = []
    names = list(n.notebooks) + [k for k in b.notebooks if k not in n.notebooks]
    for name in names:
        rb, rn = b.notebooks.get(name), n.notebooks.get(name)
        if rb is None or rn is None:
            only = rn if rb is None else rb
            assert only is not None
            verdict = "added" if rb is None else "removed"
            where = "NEW" if rb is None else "BASE"
            changes.append(Change(name, None, None if rb is None else only.status,
                                  None if rn is None else only.status, verdict, f"notebook only in {where}"))
        elif rb.status != rn.status:
            verdict = "regressed" if rn.status == "failed" else "improved"
            changes.append(Change(name, None, rb.status, rn.status, verdict,
                                  f"notebook went from {rb.status} to {rn.status}"))
        fb = rb.findings if rb is not None else {}
        fn = rn.findings if rn is not None else {}
        for key in list(fn) + [k for k in fb if k not in fn]:
            changes.append(compare_finding(name, fb.get(key), fn.get(key),
                                           new_failed=rn is not None and rn.status == "failed"))
    return Comparison(base=b, new=n, changes=changes)


def compare_finding(notebook: str, before: Finding | None, after: Finding | None, new_failed: bool = False) -> Change:
    """The verdict for one finding recorded in BASE (``before``), NEW (``after``) or both."""
    if before is None and after is None:
        raise ValueError("compare_finding needs a finding from at least one run")
    if before is None or after is None:
        only = after if before is None else before
        assert only is not None
        if before is None:
            return Change(notebook, only.name, None, only.value, "added", "recorded in NEW only",
                          unit=only.unit, better=only.better, after_ci=only.ci, explain=only.explain)
        rule = "not recorded in NEW" + (" (the notebook failed)" if new_failed else "")
        return Change(notebook, only.name, only.value, None, "removed", rule, unit=only.unit,
                      better=only.better, before_ci=only.ci, explain=only.explain)
    tolerance = after.tolerance if after.tolerance is not None else before.tolerance
    rel_tolerance = after.rel_tolerance if after.rel_tolerance is not None else before.rel_tolerance
    better = after.better if after.better is not None else before.better
    verdict, rule = _decide_value(before, after, tolerance, rel_tolerance, better)
    diff = rel = None
    if is_number(before.value) and is_number(after.value):
        diff = float(after.value) - float(before.value)
        rel = diff / abs(before.value) if before.value != 0 else None
    return Change(notebook, after.name, before.value, after.value, verdict, rule, difference=diff,
                  relative_change=rel, unit=after.unit or before.unit, better=better,
                  before_ci=before.ci, after_ci=after.ci, explain=after.explain or before.explain)


def _decide_value(before: Finding, after: Finding, tolerance: float | None, rel_tolerance: float | None,
                  better: str | None) -> tuple[str, str]:
    lb, la = leaves(before.value), leaves(after.value)
    if set(lb) != set(la):
        return "changed", "the value's shape changed (elements added or removed)"
    cib = (leaves(before.ci[0]), leaves(before.ci[1])) if before.ci is not None else None
    cia = (leaves(after.ci[0]), leaves(after.ci[1])) if after.ci is not None else None
    worst: tuple[str, str] | None = None
    for path in lb:
        bci = (cib[0].get(path), cib[1].get(path)) if cib is not None else None
        aci = (cia[0].get(path), cia[1].get(path)) if cia is not None else None
        verdict, rule = decide_scalar(lb[path], la[path], bci, aci, tolerance, rel_tolerance, better)
        if path:
            rule = f"{path}: {rule}"
        if worst is None or _SEVERITY[verdict] > _SEVERITY[worst[0]]:
            worst = (verdict, rule)
    if worst is None:  # an empty list or dict on both sides
        return "within noise", "same value"
    if worst[0] == "within noise" and len(lb) > 1:
        same = all(_same(lb[p], la[p]) for p in lb)
        return "within noise", "same value" if same else f"every element within noise ({len(lb)} elements)"
    return worst


def _same(a: Any, b: Any) -> bool:
    if is_number(a) and is_number(b):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)
    return bool(a == b) and type(a) is type(b)


def _pair(ci: tuple[Any, Any] | None) -> tuple[float, float] | None:
    if ci is None or not is_number(ci[0]) or not is_number(ci[1]):
        return None
    return float(ci[0]), float(ci[1])


def decide_scalar(before: Any, after: Any, before_ci: tuple[Any, Any] | None, after_ci: tuple[Any, Any] | None,
                  tolerance: float | None = None, rel_tolerance: float | None = None,
                  better: str | None = None) -> tuple[str, str]:
    """Verdict and rule for one scalar element (see the module doc for the rules)."""
    if _same(before, after):
        return "within noise", "same value"
    if before is None or after is None:
        return "changed", "no value in BASE" if before is None else "no value in NEW (not computed)"
    if isinstance(before, bool) and isinstance(after, bool) and better is not None:
        worse = after if better == "lower" else before  # for "higher", True is the better value
        return ("regressed" if worse else "improved"), f"value changed; {better} is better (true > false)"
    if not (is_number(before) and is_number(after)):
        what = "a verdict string changed" if isinstance(before, str) or isinstance(after, str) else "value changed"
        return "changed", what
    b, a = float(before), float(after)
    diff = a - b
    cb, ca = _pair(before_ci), _pair(after_ci)
    ci_rule: tuple[bool, str] | None = None
    if cb is not None and ca is not None:
        apart = ca[0] > cb[1] or ca[1] < cb[0]
        shown = f"[{cb[0]:.4g}, {cb[1]:.4g}] vs [{ca[0]:.4g}, {ca[1]:.4g}]"
        ci_rule = (apart, f"CIs do not overlap ({shown})" if apart else f"CIs overlap ({shown})")
    elif cb is not None or ca is not None:
        # one run has no CI (e.g. a baseline from before the notebook declared one): lend it the
        # other run's widths, so that one noisy point estimate is not taken for a move
        has, value, other, role, lent = (cb, b, a, "BASE", "NEW") if cb is not None else (ca, a, b, "NEW", "BASE")
        assert has is not None
        lo, hi = other - max(value - has[0], 0.0), other + max(has[1] - value, 0.0)
        apart = lo > has[1] or hi < has[0]
        shown = (f"{role}'s CI [{has[0]:.4g}, {has[1]:.4g}] vs {lent} {other:.4g} with the same widths "
                 f"[{lo:.4g}, {hi:.4g}]")
        ci_rule = (apart, f"CIs do not overlap ({shown})" if apart else f"CIs overlap ({shown})")
    tol_rule: tuple[bool, str] | None = None
    if tolerance is not None or rel_tolerance is not None:
        limits = []
        if tolerance is not None:
            limits.append((tolerance, f"±{tolerance:.4g}"))
        if rel_tolerance is not None:
            limits.append((rel_tolerance * abs(b), f"±{rel_tolerance:.4g}× of {b:.4g}"))
        limit, text = max(limits, key=lambda t: t[0])
        beyond = abs(diff) > limit
        tol_rule = (beyond, f"beyond tolerance {text}" if beyond else f"within tolerance {text}")
    if ci_rule is None and tol_rule is None:
        return "changed", "value differs; no CI or tolerance declared"
    if ci_rule is not None and tol_rule is not None:
        significant = ci_rule[0] and tol_rule[0]
        rule = ci_rule[1] if not ci_rule[0] else f"{ci_rule[1]}, {tol_rule[1]}"
    else:
        only = ci_rule or tol_rule
        assert only is not None
        significant, rule = only
    if not significant:
        return "within noise", rule
    if better is None:
        return "changed", rule
    worse = diff > 0 if better == "lower" else diff < 0
    return ("regressed" if worse else "improved"), f"{rule}; {better} is better"


def _short(value: Any, unit: str | None, width: int = 22) -> str:
    text = format_plain(value, unit) if value is not None else "—"
    return text if len(text) <= width else text[: width - 1] + "…"


def change_text(c: Change) -> str:
    """``+1.07 (+100%)`` for a number that moved, '' otherwise."""
    if c.difference is None:
        return ""
    rel = f" ({c.relative_change:+.0%})" if c.relative_change is not None and math.isfinite(c.relative_change) else ""
    return f"{c.difference:+.4g}{rel}"


def format_comparison(comp: Comparison, max_rows: int = 15, html_path: str | Path | None = None) -> str:
    """The terminal summary: at most ``max_rows`` rows (most serious first) plus four lines."""
    counts = comp.counts()
    n_findings = sum(c.finding is not None for c in comp.changes)
    lines = [f"compare BASE {comp.base.folder} → NEW {comp.new.folder}: {n_findings} findings",
             ", ".join(f"{k} {v}" for k, v in counts.items())]
    shown = sorted((c for c in comp.changes if c.verdict != "within noise"),
                   key=lambda c: VERDICTS.index(c.verdict))
    if shown:
        rows = [(c.verdict.upper() if c.verdict == "regressed" else c.verdict, c.label,
                 f"{_short(c.before, c.unit)} → {_short(c.after, c.unit)}", change_text(c), c.rule)
                for c in shown[:max_rows]]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        for r in rows:
            line = "  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4]
            lines.append(line.rstrip())
        if len(shown) > max_rows:
            lines.append(f"… and {len(shown) - max_rows} more (all rows: --json, or the HTML page)")
    else:
        lines.append("nothing moved beyond its noise")
    if html_path is not None:
        lines.append(f"page: {html_path}")
    lines.append("result: " + (f"{counts['regressed']} regressed (exit 1)" if comp.exit_code else "no regression (exit 0)"))
    return "\n".join(lines)
