"""Findings: named, JSON-serialisable conclusions a notebook records.

``record_finding("fit_slope", 1.07, unit="ms/ms", explain="...")`` shows the
finding in the notebook and emits it as a display output with the MIME type
:data:`FINDING_MIME` (``application/vnd.workbench.finding.v1+json``; the version
is the payload's format: ``{"name", "value", "unit", "explain"}``). The executed
notebook therefore carries its own findings: :func:`read_findings` gets them back
from the ``.ipynb`` with no side file, which is how ``workbench report`` and the
tests read a notebook's conclusions. Notebooks executed before the MIME type
carried a version (``application/vnd.workbench.finding+json``, the same payload)
read the same way.
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

#: version of the finding payload written by :func:`record_finding`
FINDING_VERSION = 1
#: MIME type of the display output that carries a finding in a notebook
FINDING_MIME = f"application/vnd.workbench.finding.v{FINDING_VERSION}+json"
#: MIME type written before the payload carried a version (same payload as version 1)
LEGACY_FINDING_MIME = "application/vnd.workbench.finding+json"
_MIME_RE = re.compile(r"application/vnd\.workbench\.finding(?:\.v(\d+))?\+json")


@dataclass(frozen=True)
class Finding:
    """One recorded conclusion: its name, value, unit and a one-line explanation."""

    name: str
    value: Any
    unit: str | None = None
    explain: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


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


def _ordered(d: dict) -> list[tuple[Any, Any]]:
    """Items in numeric key order when every key is a number (JSON keys are strings: "10" < "5")."""
    try:
        return sorted(d.items(), key=lambda kv: float(kv[0]))
    except (TypeError, ValueError):
        return list(d.items())


def format_value(value: Any, unit: str | None = None) -> str:
    """A short human rendering of a finding's value (used in notebooks and the index)."""

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k}: {fmt(x)}" for k, x in _ordered(v)) + "}"
        if isinstance(v, list):
            return "[" + ", ".join(fmt(x) for x in v) + "]"
        return str(v)

    text = fmt(value)
    return f"{text} {unit}" if unit else text


def record_finding(name: str, value: Any, unit: str | None = None, explain: str | None = None) -> Finding:
    """Record a named finding: display it and embed it in the notebook's outputs.

    ``value`` must be JSON-serialisable after :func:`to_jsonable` (numbers,
    strings, bools, lists, dicts, numpy scalars/arrays, pandas Series).
    Returns the :class:`Finding`. Outside IPython it only returns it.
    """
    if not isinstance(name, str) or not name or not name.replace("_", "").isalnum():
        raise UsageError(f"record_finding(name=...): expected an identifier-like string (letters, digits, _), "
                         f"got {name!r}")
    finding = Finding(name=name, value=to_jsonable(value), unit=unit, explain=explain)
    json.dumps(finding.to_json(), allow_nan=False)  # fail here, not in the report
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - ipykernel is a dependency
        return finding
    if get_ipython() is None:
        return finding
    shown = format_value(finding.value, unit)
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

    Reads the current MIME type (:data:`FINDING_MIME`) and the unversioned one of
    notebooks executed before it (:data:`LEGACY_FINDING_MIME`). A finding of a
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
                finding = _finding_from(payload, source, index)
                found[finding.name] = finding
    return found


def _finding_from(payload: Any, source: str, cell_index: int) -> Finding:
    """A :class:`Finding` from one output's payload (a dict, or its JSON text)."""
    text = payload if isinstance(payload, str) else repr(payload)
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except json.JSONDecodeError as exc:
            raise ParseError(source, None, text, f"cell {cell_index}: a finding is not valid JSON ({exc})") from exc
    reason = None
    if not isinstance(payload, dict) or not isinstance(payload.get("name"), str) or "value" not in payload:
        reason = "expected an object with 'name' (text) and 'value'"
    elif set(payload) - {"name", "value", "unit", "explain"}:
        reason = f"unexpected keys {sorted(set(payload) - {'name', 'value', 'unit', 'explain'})}"
    if reason is not None:
        raise ParseError(source, None, text, f"cell {cell_index}: not a finding: {reason}")
    return Finding(**payload)
