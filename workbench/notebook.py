"""What an investigation notebook needs around its analyses: inputs, sections that may be skipped, safe text.

A notebook takes each input as one parameter (a path in any format the
loaders read; empty when the user has no such data). :class:`Inputs` loads
them, remembers what was read (rows, rejects, time span, where it came from)
and decides, section by section, what can run:

.. code-block:: python

    inputs = Inputs(sections={"1. The symptom": ["samples_path"], "2. The suspects": ["ping_path"]})
    samples = inputs.load("samples_path", samples_path, read_latency, what="latency samples")
    ping = inputs.load("ping_path", ping_path, read_latency, what="TCP connect pings")
    inputs.show()                      # the inputs table and the plan of sections
    ...
    if inputs.section("2. The suspects", findings=["ping_p99_ms"]):
        ...                            # runs only when its inputs are there

A skipped section says "Skipped: needs …" in the notebook and records each of
its findings as ``None`` with that reason, so the report shows what is missing
instead of failing. :func:`esc` escapes text that came from data (file names,
column names, metadata) before it reaches Markdown or HTML.
"""
from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from .errors import UsageError
from .findings import record_finding
from .paths import project_root, resolve

if TYPE_CHECKING:
    import pandas as pd

    from .verdicts import Decision

T = TypeVar("T")

__all__ = ["InputRecord", "Inputs", "decision_markdown", "esc", "show_markdown"]

# ``<``, ``>`` and ``&`` are made entities first; the Markdown specials are then backslash-escaped
# (entities contain none of them), so apostrophes and quotes stay readable.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~])")


def esc(text: object) -> str:
    """``text`` safe inside Markdown and HTML: markup characters escaped, so data never becomes markup."""
    s = html.escape(str(text), quote=False)
    # "://" as an entity: a URL in data is shown as text, not turned into a link by the renderer
    return _MD_SPECIAL.sub(r"\\\1", s).replace("://", "&#58;//")


def show_markdown(text: str) -> None:
    """Display Markdown in a notebook (print it elsewhere). Data inside ``text`` must already be :func:`esc`-aped."""
    try:
        from IPython import get_ipython
        from IPython.display import Markdown, display
    except ImportError:  # pragma: no cover - ipykernel is a dependency
        print(text)
        return
    if get_ipython() is None:
        print(text)
    else:
        display(Markdown(text))


def decision_markdown(decision: Decision) -> str:
    """A :class:`~workbench.verdicts.Decision` as one Markdown paragraph (question, verdict, because, caveats)."""
    mark = {"yes": "yes", "no": "no", "inconclusive": "inconclusive"}[decision.verdict]
    text = f"**{esc(decision.question)}** — **{mark}**: {esc(decision.because)}"
    if decision.caveats:
        text += " *Caveats:* " + "; ".join(esc(c) for c in decision.caveats) + "."
    return text


@dataclass
class InputRecord:
    """What one input parameter gave: where from, what was read, or why it is absent."""

    param: str
    what: str
    path: str | None
    origin: str  # "bundled", "yours", "live" or "absent"
    format: str | None = None
    rows: int | None = None
    rejects: int | None = None
    start_s: float | None = None
    end_s: float | None = None

    @property
    def present(self) -> bool:
        return self.origin != "absent"

    def describe(self) -> str:
        """A phrase for sentences: "the bundled capture `x`", "your capture `x`", "a live capture made just now"."""
        if self.origin == "live":
            what = self.what if "capture" in self.what else f"{self.what} capture"
            return f"a live {what} made just now on this machine"
        if self.origin == "bundled":
            return f"the bundled {self.what} <code>{esc(self.path)}</code>"
        if self.origin == "yours":
            return f"your {self.what} <code>{esc(self.path)}</code>"
        return f"no {self.what}"


def _bundled(path: Path) -> bool:
    try:
        data = (project_root() / "data").resolve()
    except FileNotFoundError:
        return False
    try:
        path.resolve().relative_to(data)
    except ValueError:
        return False
    return True


def _span(frame: pd.DataFrame) -> tuple[float | None, float | None]:
    """First and last time in a frame (epoch or relative seconds), from its usual time columns."""
    import numpy as np
    import pandas as pd

    for col in ("timestamp_s", "timestamp", "start_s", "time_s"):
        if col in frame.columns and pd.api.types.is_numeric_dtype(frame[col]):
            v = frame[col].to_numpy(dtype="float64")
            v = v[np.isfinite(v)]
            if v.size:
                return float(v.min()), float(v.max())
    return None, None


def _is_empty(path: object) -> bool:
    return path is None or (isinstance(path, str) and not path.strip())


class Inputs:
    """The inputs of one notebook run and the sections they allow (see the module docstring).

    ``sections`` maps a section title to the inputs it needs: parameter names,
    or free-text requirements set later with :meth:`require`.
    """

    def __init__(self, sections: Mapping[str, Sequence[str]] | None = None) -> None:
        self.records: dict[str, InputRecord] = {}
        self.sections: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in (sections or {}).items()}
        self.requirements: dict[str, tuple[bool, str]] = {}

    # ---------------------------------------------------------------- loading
    def load(self, param: str, path: object, loader: Callable[[Path], T], *, what: str) -> T | None:
        """Load ``path`` with ``loader`` (None when ``path`` is empty); remember what was read.

        A path that is given but cannot be read raises the loader's error: a
        broken input is never mistaken for a missing one.
        """
        if _is_empty(path):
            self.records[param] = InputRecord(param, what, None, "absent")
            return None
        if not isinstance(path, (str, Path)):
            raise UsageError(f"parameter {param!r} takes a path, got {type(path).__name__}")
        p = resolve(path)
        result = loader(p)
        self._note(param, what, str(path), "bundled" if _bundled(p) else "yours", result)
        return result

    def add(self, param: str, result: T, *, what: str, origin: str = "live", path: str | None = None) -> T:
        """Record an input that did not come from a path parameter (a live capture, a simulation)."""
        if origin not in ("live", "bundled", "yours"):
            raise UsageError(f"origin must be live, bundled or yours, got {origin!r}")
        self._note(param, what, path, origin, result)
        return result

    def _note(self, param: str, what: str, path: str | None, origin: str, result: object) -> None:
        import pandas as pd

        rec = InputRecord(param, what, path, origin)
        if isinstance(result, pd.DataFrame):
            rec.rows = len(result)
            rej = result.attrs.get("rejects")
            rec.rejects = len(rej) if rej is not None else 0
            fmt = result.attrs.get("format")
            rec.format = str(fmt) if fmt is not None else None
            rec.start_s, rec.end_s = _span(result)
        self.records[param] = rec

    def require(self, name: str, ok: bool, reason: str) -> None:
        """A requirement that is not an input (e.g. "the ping series overlaps the calls"); ``reason`` says why not."""
        self.requirements[name] = (bool(ok), reason)

    # -------------------------------------------------------------- questions
    def __getitem__(self, param: str) -> InputRecord:
        if param not in self.records:
            raise UsageError(f"input {param!r} was not loaded; known: {sorted(self.records)}")
        return self.records[param]

    def has(self, *params: str) -> bool:
        """True when every named input (or requirement) is present."""
        return not self.missing(params)

    def missing(self, needs: Sequence[str]) -> list[str]:
        """Human reasons for each need that is not met."""
        out = []
        for n in needs:
            if n in self.requirements:
                ok, reason = self.requirements[n]
                if not ok:
                    out.append(reason)
            elif n in self.records:
                if not self.records[n].present:
                    out.append(f"{n} ({self.records[n].what})")
            else:
                out.append(f"{n} (not given)")
        return out

    def section(self, title: str, findings: Sequence[str] = (), needs: Sequence[str] | None = None) -> bool:
        """Whether the section can run. If not: show "Skipped: needs …" and record its findings as None."""
        wanted = self.sections.get(title, ()) if needs is None else tuple(needs)
        gaps = self.missing(wanted)
        if not gaps:
            return True
        reason = "skipped: needs " + "; ".join(gaps)
        show_markdown(f"**{esc(title)} — {esc(reason)}.**")
        for name in findings:
            record_finding(name, None, explain=reason)
        return False

    # ---------------------------------------------------------------- tables
    def table(self) -> pd.DataFrame:
        """One row per input: input, what, origin, path, format, rows, rejects, first/last time, span."""
        import pandas as pd

        rows = []
        for r in self.records.values():
            span = (r.end_s - r.start_s) if r.start_s is not None and r.end_s is not None else None
            rows.append({
                "input": r.param, "what": r.what, "origin": r.origin, "path": r.path or "",
                "format": r.format or "", "rows": r.rows, "rejects": r.rejects,
                "first": _when(r.start_s), "last": _when(r.end_s),
                "span_s": None if span is None or not math.isfinite(span) else round(span, 3),
            })
        frame = pd.DataFrame(rows, columns=["input", "what", "origin", "path", "format", "rows", "rejects",
                                            "first", "last", "span_s"])
        for c in ("rows", "rejects"):
            frame[c] = frame[c].astype("Int64")
        return frame

    def plan(self) -> pd.DataFrame:
        """One row per declared section: section, runs (bool), why not (the missing needs)."""
        import pandas as pd

        rows = [{"section": t, "runs": not self.missing(n), "why_not": "; ".join(self.missing(n))}
                for t, n in self.sections.items()]
        return pd.DataFrame(rows, columns=["section", "runs", "why_not"])

    def show(self) -> None:
        """Display the inputs table and the plan of sections (plain text outside a notebook)."""
        from IPython import get_ipython
        from IPython.display import display

        if get_ipython() is None:
            print(self.table().to_string(index=False))
            print(self.plan().to_string(index=False))
            return
        from .readable import table

        display(table(self.table()))  # counts as integers, the span as a duration, text escaped
        display(self.plan().style.hide(axis="index").format(escape="html"))


def _when(t: float | None) -> str:
    """An epoch time as UTC text; a small (relative) time as seconds."""
    if t is None or not math.isfinite(t):
        return ""
    if t > 1e8:
        import datetime as dt

        return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"{t:.3f} s"
