"""Documented frame schemas, the one validator every loader uses, and what analyses require.

- :class:`Schema` lists columns with their dtype kind and unit. Loaders build
  their frame, then call :func:`validate` before returning it, so a frame that
  leaves the library always matches its documentation.
- :func:`requires` is the first call of every analysis: the columns (and, for
  latency, the frame kind) it needs, or a :class:`~workbench.errors.SchemaError`
  naming the analysis, what is missing and what the frame has.
- :class:`Rejects` — the input lines a loader could not parse — travels with the
  frame in ``frame.attrs["rejects"]``; :class:`SideTable` carries other side
  tables (strace messages, the ``-C`` table). Both are immutable values that
  pandas copies, concatenates and compares without complaint; ``len()`` counts
  rows and ``.frame()`` gives a DataFrame.
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import SchemaError, UsageError

if TYPE_CHECKING:  # pandas is imported where a frame is touched: declaring a schema stays light
    import pandas as pd

# dtype kinds understood by the validator (numpy ``dtype.kind`` letters plus a
# few names for pandas extension types).
_KINDS = ("float", "int", "bool", "string", "datetime", "category", "number")


def _kind_check(kind: str) -> Callable[[pd.Series], bool]:
    """The dtype test of a column kind (pandas imported on first use)."""
    import pandas as pd

    t = pd.api.types
    checks: dict[str, Callable[[pd.Series], bool]] = {
        "float": t.is_float_dtype,
        "int": t.is_integer_dtype,
        "bool": t.is_bool_dtype,
        "string": lambda s: t.is_string_dtype(s) or t.is_object_dtype(s),
        "datetime": t.is_datetime64_any_dtype,
        "category": lambda s: isinstance(s.dtype, pd.CategoricalDtype),
        "number": lambda s: t.is_numeric_dtype(s) and not t.is_bool_dtype(s),
    }
    return checks[kind]


@dataclass(frozen=True)
class Column:
    """One documented column: name, dtype kind, unit and meaning."""

    name: str
    kind: str
    unit: str = ""
    doc: str = ""
    required: bool = True

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise UsageError(f"unknown column kind {self.kind!r}; one of {sorted(_KINDS)}")


@dataclass(frozen=True)
class Schema:
    """A named, documented set of columns."""

    name: str
    columns: tuple[Column, ...]
    doc: str = ""
    extra_columns_allowed: bool = True
    attrs: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def names(self) -> list[str]:
        """The column names, in order."""
        return [c.name for c in self.columns]

    def describe(self) -> pd.DataFrame:
        """The schema as a small table (column, kind, unit, required, meaning)."""
        import pandas as pd

        return pd.DataFrame(
            [(c.name, c.kind, c.unit, c.required, c.doc) for c in self.columns],
            columns=["column", "kind", "unit", "required", "meaning"],
        )


def validate(frame: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """Check ``frame`` against ``schema``; return it unchanged or raise SchemaError.

    Missing required columns, wrong dtype kinds and (unless allowed) unexpected
    columns are all reported in one message.
    """
    problems: list[str] = []
    for col in schema.columns:
        if col.name not in frame.columns:
            if col.required:
                problems.append(f"missing column {col.name!r} ({col.kind}, {col.unit or 'no unit'})")
            continue
        if not _kind_check(col.kind)(frame[col.name]):
            problems.append(f"column {col.name!r} has dtype {frame[col.name].dtype}, expected {col.kind}")
    if not schema.extra_columns_allowed:
        extra = [c for c in frame.columns if c not in schema.names()]
        if extra:
            problems.append(f"unexpected columns {extra}")
    if problems:
        raise SchemaError(f"frame does not match schema {schema.name!r}: " + "; ".join(problems))
    frame.attrs.setdefault("schema", schema.name)
    return frame


def requires(frame: object, *columns: str, kind: str | None = None, by: str | None = None) -> pd.DataFrame:
    """Check that ``frame`` is a DataFrame with ``columns`` (and ``attrs["kind"] == kind``); return it.

    The first call of every analysis. ``by`` names the analysis in the message
    (default: the calling function's name). Raises :class:`SchemaError` listing
    what is missing and what the frame has, or :class:`UsageError` when
    ``frame`` is not a DataFrame at all.
    """
    import pandas as pd

    who = by or sys._getframe(1).f_code.co_name
    if not isinstance(frame, pd.DataFrame):
        raise UsageError(f"{who} needs a pandas DataFrame, got {type(frame).__name__}")
    if kind is not None:
        have = frame.attrs.get("kind")
        if have is not None and have != kind:
            raise SchemaError(f"{who} needs a {kind!r} frame, got a {have!r} frame"
                              + (": pre-aggregated distributions cannot be resampled or counted per second"
                                 if kind == "samples" else ""))
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise SchemaError(f"{who} needs column(s) {missing}; the frame has {list(frame.columns)}")
    return frame


class SideTable:
    """An immutable table that travels in ``frame.attrs``: ``len()``, ``.frame()``, equality by content.

    pandas deep-copies and compares ``attrs`` when it copies, concatenates or
    compares frames; a DataFrame kept there breaks those operations (its ``==``
    has no truth value) and costs a copy each time. This wrapper is copied by
    reference (it never changes), compares by content and pickles as its frame.
    """

    __slots__ = ("_frame",)

    def __init__(self, frame: pd.DataFrame) -> None:
        import pandas as pd

        if not isinstance(frame, pd.DataFrame):
            raise UsageError(f"{type(self).__name__} wraps a DataFrame, got {type(frame).__name__}")
        self._frame = frame

    def frame(self) -> pd.DataFrame:
        """The table as a DataFrame (a copy-on-write view: changing it leaves this table as it was)."""
        out = self._frame.copy(deep=False)
        out.attrs = {}
        return out

    @property
    def columns(self) -> list[str]:
        """The table's column names."""
        return list(self._frame.columns)

    def __len__(self) -> int:
        return len(self._frame)

    def __bool__(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not type(self):
            return NotImplemented
        return bool(self._frame.equals(other._frame))

    def __hash__(self) -> int:
        return hash((type(self).__name__, len(self._frame), tuple(self._frame.columns)))

    def __copy__(self) -> SideTable:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> SideTable:
        return self

    def __reduce__(self) -> tuple[type, tuple[pd.DataFrame]]:
        return (type(self), (self._frame,))

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {len(self)} rows>\n{self._frame.head(10).to_string()}"

    def _repr_html_(self) -> str:
        return str(self._frame.head(50).to_html(escape=True, index=False))


REJECTS_SCHEMA = Schema(
    name="rejects",
    doc="Input lines a loader could not parse, kept so nothing is lost silently.",
    columns=(
        Column("source", "string", doc="file path or '<text>'"),
        Column("line", "int", doc="1-based line number (0 when the record is not line-based)"),
        Column("text", "string", doc="the raw text of the line or record"),
        Column("reason", "string", doc="why it was rejected"),
    ),
    extra_columns_allowed=False,
)

RejectRow = tuple[str, int, str, str]


class Rejects(SideTable):
    """The input lines a loader could not parse: source, line, text, reason (:data:`REJECTS_SCHEMA`).

    ``len(rejects)`` counts them, ``rejects.frame()`` is the table,
    ``rejects.by_reason()`` counts them per reason.
    """

    __slots__ = ()

    def __init__(self, frame: pd.DataFrame | None = None) -> None:
        super().__init__(_rejects_frame([]) if frame is None else validate(frame, REJECTS_SCHEMA))

    @classmethod
    def from_rows(cls, rows: Iterable[RejectRow]) -> Rejects:
        """Rejects from ``(source, line, text, reason)`` tuples."""
        return cls(_rejects_frame(list(rows)))

    @classmethod
    def concat(cls, items: Iterable[Rejects | pd.DataFrame | None]) -> Rejects:
        """One table of the rejects of several loads, in the order given."""
        frames = [it._frame if isinstance(it, SideTable) else it for it in items
                  if it is not None and len(it)]
        if not frames:
            return cls()
        if len(frames) == 1:
            return cls(frames[0])
        import pandas as pd

        return cls(pd.concat(frames, ignore_index=True))

    def rows(self) -> list[RejectRow]:
        """The rejects as ``(source, line, text, reason)`` tuples."""
        return [(str(s), int(n), str(t), str(r)) for s, n, t, r in self._frame.itertuples(index=False, name=None)]

    def by_reason(self) -> pd.Series:
        """Number of rejects per reason, most common first."""
        return self._frame["reason"].value_counts()


def _rejects_frame(rows: list[RejectRow]) -> pd.DataFrame:
    import pandas as pd

    df = pd.DataFrame(rows, columns=["source", "line", "text", "reason"])
    df["line"] = df["line"].astype("int64")
    for c in ("source", "text", "reason"):
        df[c] = df[c].astype(object)
    return validate(df, REJECTS_SCHEMA)


def rejects_frame(rows: list[RejectRow]) -> pd.DataFrame:
    """Build a rejects DataFrame from ``(source, line, text, reason)`` tuples."""
    return _rejects_frame(rows)


def rejects_of(frame: pd.DataFrame) -> Rejects:
    """The rejects a frame carries (an empty table when it carries none)."""
    r = frame.attrs.get("rejects")
    if isinstance(r, Rejects):
        return r
    if r is not None and type(r).__name__ == "DataFrame":
        return Rejects(r)
    return Rejects()


def attach_rejects(frame: pd.DataFrame, rows: Iterable[RejectRow] | Rejects) -> pd.DataFrame:
    """Store the rejected lines on ``frame.attrs["rejects"]`` (a :class:`Rejects`) and return the frame."""
    frame.attrs["rejects"] = rows if isinstance(rows, Rejects) else Rejects.from_rows(rows)
    return frame
