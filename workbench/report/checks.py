"""Gates on a report's findings: ``workbench report --check FILE`` and ``workbench check``.

A check file is TOML, one rule per finding, keyed ``"<notebook>.<finding>"``::

    "02_low_qps_nagle.quantum_ms" = {max = 5}
    "04_event_loop_yields.fit_r2" = {min = 0.99}
    "*.parse_rejects" = {max = 0}
    "05_actor_bottlenecks.money_conserved" = {equals = true}

The rules may also sit in a ``[checks]`` table of that file, or in the
``[tool.workbench.checks]`` table of a ``pyproject.toml``. The notebook part is a
notebook name or a shell pattern (``*``, ``?``, ``[...]``). ``min`` / ``max`` are
inclusive bounds for a number (every element of a list or dict must keep them);
``equals`` compares the value exactly (``true`` is not ``1``).

Each rule gives one :class:`CheckResult` per notebook it applies to, with an
outcome: ``passed``; ``failed`` (the value breaks the rule, is None, or the
notebook failed before recording it); ``error`` (the rule names a notebook that
did not run or a finding it does not record: a mistake in the check file, never a pass).
"""
from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputNotFoundError, UsageError
from ..findings import format_plain, is_number, leaves
from .results import NotebookResult

#: the keys a rule may have
RULE_KEYS = ("min", "max", "equals")
_UNSET: Any = object()


@dataclass(frozen=True)
class Check:
    """One rule of a check file: which notebook(s) and finding, and its bounds."""

    key: str
    notebook: str
    finding: str
    min: Any = _UNSET
    max: Any = _UNSET
    equals: Any = _UNSET
    source: str = "<checks>"

    @property
    def is_pattern(self) -> bool:
        return any(ch in self.notebook for ch in "*?[")

    def describe(self) -> str:
        """``min = 0.99, max = 1`` — the rule as written."""
        parts = [f"{k} = {_toml_text(getattr(self, k))}" for k in RULE_KEYS if getattr(self, k) is not _UNSET]
        return ", ".join(parts)


@dataclass(frozen=True)
class CheckResult:
    """A rule applied to one notebook: outcome ``passed`` / ``failed`` / ``error`` and a message."""

    check: Check
    notebook: str | None
    value: Any
    outcome: str
    message: str

    @property
    def name(self) -> str:
        """``04_event_loop_yields.fit_r2 (min = 0.99)``."""
        return f"{self.notebook or self.check.notebook}.{self.check.finding} ({self.check.describe()})"


def _toml_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    return format_plain(v)


def read_checks(path: str | Path) -> list[Check]:
    """The rules of a check file (see the module doc).

    A missing file raises :class:`~workbench.errors.InputNotFoundError`; invalid
    TOML, a ``pyproject.toml`` without ``[tool.workbench.checks]``, a key that is
    not ``notebook.finding`` or a rule with unknown or wrong keys raise
    :class:`~workbench.errors.UsageError` naming the file and the key.
    """
    p = Path(path)
    if not p.is_file():
        raise InputNotFoundError(f"check file {p}: no such file")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"check file {p}: not valid TOML ({exc})") from exc
    if p.name == "pyproject.toml":
        table = data.get("tool", {}).get("workbench", {}).get("checks")
        if not isinstance(table, dict):
            raise UsageError(f"check file {p}: no [tool.workbench.checks] table")
        return checks_from_table(table, f"{p} [tool.workbench.checks]")
    if isinstance(data.get("checks"), dict) and all(isinstance(v, dict) for v in data["checks"].values()):
        extra = sorted(k for k in data if k != "checks")
        if extra:
            raise UsageError(f"check file {p}: rules both in [checks] and at the top level ({extra[:3]}); "
                             "keep them in one place")
        data = data["checks"]
    return checks_from_table(data, str(p))


def checks_from_table(table: dict[str, Any], source: str) -> list[Check]:
    """Rules from a parsed TOML table ``{"notebook.finding": {"max": 5}, ...}``."""
    checks = []
    for key, rule in table.items():
        notebook, dot, finding = key.rpartition(".")
        if not dot or not notebook or not finding or not finding.replace("_", "").isalnum():
            raise UsageError(f"{source}: key {key!r}: expected \"<notebook>.<finding>\" "
                             "(e.g. \"04_event_loop_yields.fit_r2\" or \"*.parse_rejects\")")
        if not isinstance(rule, dict) or not rule:
            raise UsageError(f"{source}: {key!r}: expected a rule such as {{max = 5}}, {{min = 0.99}} or "
                             f"{{equals = true}}, got {rule!r}")
        unknown = sorted(set(rule) - set(RULE_KEYS))
        if unknown:
            raise UsageError(f"{source}: {key!r}: unknown rule key(s) {unknown}; a rule has {', '.join(RULE_KEYS)}")
        for bound in ("min", "max"):
            if bound in rule and not is_number(rule[bound]):
                raise UsageError(f"{source}: {key!r}: {bound} must be a number, got {rule[bound]!r}")
        if "equals" in rule and isinstance(rule["equals"], dict):
            raise UsageError(f"{source}: {key!r}: equals must be a number, text, bool or list")
        checks.append(Check(key=key, notebook=notebook, finding=finding, source=source,
                            **{k: rule[k] for k in RULE_KEYS if k in rule}))
    return checks


def pyproject_checks(folder: str | Path = ".") -> Path | None:
    """``folder/pyproject.toml`` when it has a ``[tool.workbench.checks]`` table, else None."""
    p = Path(folder) / "pyproject.toml"
    if not p.is_file():
        return None
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    return p if isinstance(data.get("tool", {}).get("workbench", {}).get("checks"), dict) else None


def validate_checks(checks: list[Check], notebooks: list[str]) -> None:
    """Refuse, before anything runs, a rule whose notebook part matches none of ``notebooks``."""
    for c in checks:
        if not [n for n in notebooks if fnmatch.fnmatchcase(n, c.notebook)]:
            raise UsageError(f"{c.source}: {c.key!r}: no notebook of this run matches {c.notebook!r} "
                             f"(this run: {', '.join(notebooks) or 'none'})")


def evaluate_checks(checks: list[Check], results: list[NotebookResult]) -> list[CheckResult]:
    """Apply every rule to the notebooks it names; one result per (rule, notebook)."""
    out: list[CheckResult] = []
    names = [r.name for r in results]
    for c in checks:
        targets = [r for r in results if fnmatch.fnmatchcase(r.name, c.notebook)]
        if not targets:
            out.append(CheckResult(c, None, None, "error",
                                   f"{c.key}: no notebook of this report matches {c.notebook!r} "
                                   f"(report has: {', '.join(names) or 'none'})"))
            continue
        if c.is_pattern:
            having = [r for r in targets if c.finding in r.findings or r.status == "failed"]
            if not having:
                out.append(CheckResult(c, None, None, "error",
                                       f"{c.key}: no notebook matching {c.notebook!r} records a finding "
                                       f"{c.finding!r} (unknown finding name)"))
                continue
            targets = having
        for r in targets:
            out.append(_apply(c, r))
    return out


def _apply(c: Check, r: NotebookResult) -> CheckResult:
    label = f"{r.name}.{c.finding}"
    if c.finding not in r.findings:
        if r.status == "failed":
            return CheckResult(c, r.name, None, "failed",
                               f"{label}: not recorded: the notebook failed before it (rule {c.describe()})")
        known = ", ".join(sorted(r.findings)) or "none"
        return CheckResult(c, r.name, None, "error",
                           f"{label}: unknown finding: {r.name} records no {c.finding!r} (it records: {known})")
    f = r.findings[c.finding]
    shown = format_plain(f.value, f.unit)
    if f.value is None:
        return CheckResult(c, r.name, None, "failed", f"{label} = None (not computed), rule {c.describe()}")
    broken: list[str] = []
    if c.equals is not _UNSET and not _equal(f.value, c.equals):
        broken.append(f"equals {_toml_text(c.equals)}")
    for bound in ("min", "max"):
        limit = getattr(c, bound)
        if limit is _UNSET:
            continue
        for path, v in leaves(f.value).items():
            if not is_number(v):
                return CheckResult(c, r.name, f.value, "error",
                                   f"{label}{path} = {v!r}: rule {bound} = {limit} needs a number")
            if (bound == "min" and v < limit) or (bound == "max" and v > limit):
                broken.append(f"{bound} = {_toml_text(limit)}" + (f" (element {path} = {format_plain(v)})" if path else ""))
                break
    if broken:
        return CheckResult(c, r.name, f.value, "failed", f"{label} = {shown}: breaks {'; '.join(broken)}")
    return CheckResult(c, r.name, f.value, "passed", f"{label} = {shown}: keeps {c.describe()}")


def _equal(value: Any, expected: Any) -> bool:
    if isinstance(expected, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(expected, bool) and value == expected
    if isinstance(expected, list):
        return isinstance(value, list) and len(value) == len(expected) and all(
            _equal(a, b) for a, b in zip(value, expected, strict=True))
    if is_number(expected):
        return is_number(value) and float(value) == float(expected)
    return bool(value == expected)


def checks_exit_code(results: list[CheckResult]) -> int:
    """2 when a rule is wrong (error), 1 when one is broken, else 0."""
    if any(r.outcome == "error" for r in results):
        return 2
    return 1 if any(r.outcome == "failed" for r in results) else 0
