"""Findings: named, JSON-serialisable conclusions a notebook records.

``record_finding("fit_slope", 1.07, unit="ms/ms", explain="...")`` shows the
finding in the notebook and emits it as a display output with the MIME type
:data:`FINDING_MIME` (``application/vnd.workbench.finding.v2+json``; the version
is the payload's format). The executed notebook therefore carries its own
findings: :func:`read_findings` gets them back from the ``.ipynb`` with no side
file, which is how ``workbench report`` and the tests read a notebook's conclusions.

A finding may carry what a comparison between two runs needs
(``workbench compare``):

- ``ci=(low, high)`` — the confidence interval the notebook computed (same shape
  as the value: two numbers for a number, two lists for a list, two dicts for a dict);
- ``tolerance=`` / ``rel_tolerance=`` — for a value without a CI, the smallest
  change that matters (absolute, in the finding's unit; or relative, 0.05 = 5 %);
- ``better="lower"`` or ``"higher"`` — which way is an improvement (without it a
  significant move is "changed", never "regressed").

Payload versions: v2 is ``{"name", "value", "unit", "explain"}`` plus the optional
``"ci"``, ``"tolerance"``, ``"rel_tolerance"``, ``"better"`` (left out when not
given); v1 is the same without those four keys. Both read, as does the
unversioned MIME type of notebooks executed before the type carried a version
(``application/vnd.workbench.finding+json``, the v1 payload).
"""
from __future__ import annotations

import html
import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ParseError, UsageError

if TYPE_CHECKING:
    import nbformat

#: version of the finding payload written by :func:`record_finding` (v1, v2 and v3 are read)
FINDING_VERSION = 3
#: MIME type of the display output that carries a finding in a notebook
FINDING_MIME = f"application/vnd.workbench.finding.v{FINDING_VERSION}+json"
#: MIME type written before the payload carried a version (same payload as version 1)
LEGACY_FINDING_MIME = "application/vnd.workbench.finding+json"
_MIME_RE = re.compile(r"application/vnd\.workbench\.finding(?:\.v(\d+))?\+json")


#: payload keys of a v1 finding
_V1_KEYS = ("name", "value", "unit", "explain")
#: optional payload keys a v2 finding adds: what a comparison needs
UNCERTAINTY_KEYS = ("ci", "tolerance", "rel_tolerance", "better")
#: optional payload key a v3 finding adds: one of the few answers the index leads with
HEADLINE_KEY = "headline"
#: directions a finding may declare
DIRECTIONS = ("lower", "higher")


@dataclass(frozen=True)
class Finding:
    """One recorded conclusion: name, value, unit, one-line explanation and, optionally,
    its confidence interval ``ci`` (``[low, high]``), a ``tolerance`` / ``rel_tolerance``
    and the direction ``better`` ("lower" or "higher") that makes a change "worse"."""

    name: str
    value: Any
    unit: str | None = None
    explain: str | None = None
    ci: list[Any] | None = None
    tolerance: float | None = None
    rel_tolerance: float | None = None
    better: str | None = None
    headline: bool = False

    def to_json(self) -> dict[str, Any]:
        """The payload: the four v1 keys always, the uncertainty keys only when set, ``headline`` only when true."""
        d = asdict(self)
        if not d.pop(HEADLINE_KEY):
            return {k: v for k, v in d.items() if k in _V1_KEYS or v is not None}
        return {**{k: v for k, v in d.items() if k in _V1_KEYS or v is not None}, HEADLINE_KEY: True}

    def uncertainty(self) -> dict[str, Any]:
        """The uncertainty keys that are set (``{}`` for a finding that declares none)."""
        return {k: getattr(self, k) for k in UNCERTAINTY_KEYS if getattr(self, k) is not None}


def to_jsonable(value: Any) -> Any:
    """Convert numpy/pandas scalars, arrays, series and tuples into plain JSON values.

    Non-finite floats become ``None`` (strict JSON has no NaN); mapping keys become strings.
    Raises :class:`~workbench.errors.UsageError` for values that have no faithful JSON form.
    """
    try:
        import numpy as np
        import pandas as pd
    except ImportError:  # pragma: no cover - both are hard dependencies
        np = pd = None  # type: ignore[assignment]
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int) and not (np is not None and isinstance(value, np.generic)):
        return int(value)
    if isinstance(value, float):
        value = float(value)  # also unwraps np.float64, a float subclass
        return value if math.isfinite(value) else None
    if np is not None:
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, np.floating):
            return to_jsonable(float(value))
        if isinstance(value, np.ndarray):
            return [to_jsonable(v) for v in value.tolist()]
        if isinstance(value, pd.Series):
            return {_key(k): to_jsonable(v) for k, v in value.items()}
        if isinstance(value, pd.Timestamp):
            return value.isoformat()
    if isinstance(value, dict):
        return {_key(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    raise UsageError(f"finding value of type {type(value).__name__} is not JSON-serialisable: {value!r:.200} "
                     "(expected numbers, strings, bools, None, lists, dicts, numpy values or a pandas Series)")


def _key(k: Any) -> str:
    if isinstance(k, float) and k.is_integer():
        return str(int(k))
    try:
        import numpy as np

        if isinstance(k, np.generic):
            return _key(k.item())
    except ImportError:  # pragma: no cover
        pass
    return str(k)


def format_value(value: Any, unit: str | None = None) -> str:
    """A short human rendering of a finding's value (used in notebooks and the index).

    Numbers go through :mod:`workbench.readable` (no scientific notation, counts as
    integers, known units rescaled to fit); a decision's summary reads "verdict — because".
    """
    from . import readable

    if is_decision(value):
        return f"{value['verdict']} — {value['because']}" if value.get("because") else str(value["verdict"])
    return readable.value(value, unit)


def format_plain(value: Any, unit: str | None = None) -> str:
    """A finding's value for gates and comparisons: four significant digits, the unit once, no rescaling
    (``{5: 41, 50: 3} ms``), so the number a rule was checked against is the number shown."""

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        if isinstance(v, dict):
            try:
                items = sorted(v.items(), key=lambda kv: float(kv[0]))
            except (TypeError, ValueError):
                items = list(v.items())
            return "{" + ", ".join(f"{k}: {fmt(x)}" for k, x in items) + "}"
        if isinstance(v, list):
            return "[" + ", ".join(fmt(x) for x in v) + "]"
        return str(v)

    text = fmt(value)
    return f"{text} {unit}" if unit else text


def is_decision(value: Any) -> bool:
    """True for the summary of a :class:`~workbench.verdicts.Decision` (``verdict``, ``because``, …)."""
    return isinstance(value, dict) and value.get("verdict") in ("yes", "no", "inconclusive") and "because" in value


def leaves(value: Any, prefix: str = "") -> dict[str, Any]:
    """A value's scalars by path: ``{"": 1.5}`` for a scalar, ``{"[0]": …, "[1]": …}`` for a
    list, ``{"[10]": …}`` for a dict keyed ``"10"`` (nested paths concatenate)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(leaves(v, f"{prefix}[{k}]"))
        return out
    if isinstance(value, list):
        out = {}
        for i, v in enumerate(value):
            out.update(leaves(v, f"{prefix}[{i}]"))
        return out
    return {prefix: value}


def is_number(v: Any) -> bool:
    """A real number (bools are not numbers here)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _plain_number(v: Any) -> Any:
    """A numpy scalar as its Python number; anything else as it is."""
    item = getattr(v, "item", None)
    return item() if callable(item) and getattr(v, "shape", None) == () else v


def _check_uncertainty(name: str, value: Any, ci: Any, tolerance: Any, rel_tolerance: Any,
                       better: Any) -> list[Any] | None:
    """Validate the comparison keys of ``record_finding``; returns the CI as a JSON pair (or None)."""
    where = f"record_finding({name!r}, ...)"
    if better is not None and better not in DIRECTIONS:
        raise UsageError(f"{where}: better= must be 'lower' or 'higher' (or left out), got {better!r}")
    for key, raw in (("tolerance", tolerance), ("rel_tolerance", rel_tolerance)):
        tol = _plain_number(raw)
        if tol is not None and (not is_number(tol) or not math.isfinite(float(tol)) or float(tol) < 0):
            raise UsageError(f"{where}: {key}= must be a finite number >= 0, got {tol!r}")
    if ci is None:
        return None
    pair = to_jsonable(ci)
    if not isinstance(pair, list) or len(pair) != 2:
        raise UsageError(f"{where}: ci= must be a pair (low, high), got {ci!r:.200}")
    low, high = leaves(pair[0]), leaves(pair[1])
    vals = leaves(value)
    if set(low) != set(vals) or set(high) != set(vals):
        raise UsageError(f"{where}: ci= bounds must have the value's shape (paths {sorted(vals)[:5]}), "
                         f"got low {sorted(low)[:5]} and high {sorted(high)[:5]}")
    for path in vals:
        lo, hi = low[path], high[path]
        if lo is None or hi is None:  # a bound that could not be computed (NaN): no CI for this element
            continue
        if not is_number(lo) or not is_number(hi) or lo > hi:
            raise UsageError(f"{where}: ci{path} = ({lo!r}, {hi!r}) must be two numbers with low <= high")
    return pair


def describe_uncertainty(finding: Finding) -> str:
    """``CI [1.02, 1.12], ±0.1, lower is better`` — the declared uncertainty as short text ('' if none)."""
    parts = []
    if finding.ci is not None:
        parts.append(f"CI [{format_value(finding.ci[0])}, {format_value(finding.ci[1])}]")
    if finding.tolerance is not None:
        parts.append(f"tolerance ±{format_value(finding.tolerance, finding.unit)}")
    if finding.rel_tolerance is not None:
        parts.append(f"tolerance ±{finding.rel_tolerance:.4g}×")
    if finding.better is not None:
        parts.append(f"{finding.better} is better")
    return ", ".join(parts)


def record_finding(name: str, value: Any, unit: str | None = None, explain: str | None = None, *,
                   ci: Any = None, tolerance: float | None = None, rel_tolerance: float | None = None,
                   better: str | None = None, headline: bool = False) -> Finding:
    """Record a named finding: display it and embed it in the notebook's outputs.

    ``value`` must be JSON-serialisable after :func:`to_jsonable` (numbers,
    strings, bools, lists, dicts, numpy scalars/arrays, pandas Series).
    ``ci=(low, high)`` is its confidence interval (bounds shaped like the value; a
    NaN bound means none for that element); ``tolerance`` / ``rel_tolerance`` the
    smallest change that matters for a value without a CI; ``better`` ("lower" or
    "higher") which way is an improvement; ``headline=True`` puts it among the
    two to four answers the report's index leads with. Wrong ones raise
    :class:`~workbench.errors.UsageError`. Returns the :class:`Finding`; outside
    IPython it only returns it.
    """
    if not isinstance(name, str) or not name or not name.replace("_", "").isalnum():
        raise UsageError(f"record_finding(name=...): expected an identifier-like string (letters, digits, _), "
                         f"got {name!r}")
    json_value = to_jsonable(value)
    pair = _check_uncertainty(name, json_value, ci, tolerance, rel_tolerance, better)
    finding = Finding(name=name, value=json_value, unit=unit, explain=explain, ci=pair,
                      tolerance=None if tolerance is None else float(_plain_number(tolerance)),
                      rel_tolerance=None if rel_tolerance is None else float(_plain_number(rel_tolerance)),
                      better=better, headline=bool(headline))
    json.dumps(finding.to_json(), allow_nan=False)  # fail here, not in the report
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - ipykernel is a dependency
        return finding
    if get_ipython() is None:
        return finding
    shown = format_value(finding.value, unit)
    noise = describe_uncertainty(finding)
    if noise:
        shown = f"{shown} ({noise})"
    text = f"Finding {name} = {shown}" + (f" — {explain}" if explain else "")
    html_text = (
        '<div style="border-left:4px solid #3a7; padding:4px 10px; margin:4px 0; background:#f4fbf6">'
        f"<b>Finding</b> <code>{html.escape(name)}</code> = <b>{html.escape(shown)}</b>"
        + (f"<br><span style='color:#555'>{html.escape(explain)}</span>" if explain else "")
        + "</div>"
    )
    display({FINDING_MIME: finding.to_json(), "text/html": html_text, "text/plain": text}, raw=True)
    return finding


def read_findings(notebook: str | Path | nbformat.NotebookNode) -> dict[str, Finding]:
    """Read the findings embedded in an executed notebook (name → Finding; last one wins).

    Reads the current MIME type (:data:`FINDING_MIME`, v2), v1 and the unversioned
    one of notebooks executed before it (:data:`LEGACY_FINDING_MIME`). A finding of a
    newer format, or a payload that is not a finding, raises
    :class:`~workbench.errors.ParseError` naming the notebook and the cell.
    """
    import nbformat

    if isinstance(notebook, nbformat.NotebookNode):
        nb, source = notebook, "<notebook>"
    else:
        nb, source = nbformat.read(str(notebook), as_version=4), str(notebook)
    found: dict[str, Finding] = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            for mime, payload in out.get("data", {}).items():
                m = _MIME_RE.fullmatch(mime)
                if m is None:
                    continue
                version = int(m.group(1)) if m.group(1) else 1
                if version > FINDING_VERSION:
                    raise ParseError(source, None, mime, f"cell {index}: finding format v{version} is newer "
                                     f"than this workbench reads (up to v{FINDING_VERSION}); upgrade workbench")
                finding = finding_from_json(payload, source, f"cell {index}", version)
                found[finding.name] = finding
    return found


def finding_from_json(payload: Any, source: str, where: str, version: int = FINDING_VERSION) -> Finding:
    """A :class:`Finding` from its payload (a dict, or its JSON text) of this format version.

    Anything else raises :class:`~workbench.errors.ParseError` naming ``source`` and ``where``
    (the cell, or the notebook of a ``report.json``).
    """
    text = payload if isinstance(payload, str) else repr(payload)
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except json.JSONDecodeError as exc:
            raise ParseError(source, None, text, f"{where}: a finding is not valid JSON ({exc})") from exc
    allowed = (set(_V1_KEYS) | (set(UNCERTAINTY_KEYS) if version >= 2 else set())
               | ({HEADLINE_KEY} if version >= 3 else set()))
    reason = None
    if not isinstance(payload, dict) or not isinstance(payload.get("name"), str) or "value" not in payload:
        reason = "expected an object with 'name' (text) and 'value'"
    elif set(payload) - allowed:
        reason = f"unexpected keys {sorted(set(payload) - allowed)} for a v{version} finding"
    else:
        try:
            _check_uncertainty(payload["name"], payload["value"], payload.get("ci"), payload.get("tolerance"),
                               payload.get("rel_tolerance"), payload.get("better"))
        except UsageError as exc:
            reason = str(exc)
    if reason is not None:
        raise ParseError(source, None, text, f"{where}: not a finding: {reason}")
    if not isinstance(payload.get(HEADLINE_KEY, False), bool):
        raise ParseError(source, None, text, f"{where}: not a finding: 'headline' must be true or false")
    return Finding(**payload)
