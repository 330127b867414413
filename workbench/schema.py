"""Documented frame schemas and the one validator every loader uses.

A :class:`Schema` lists columns with their dtype kind and unit. Loaders build
their frame, then call :func:`validate` before returning it, so a frame that
leaves the library always matches its documentation. Rejected input lines
travel with the frame in ``frame.attrs["rejects"]`` (see :func:`attach_rejects`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .errors import SchemaError

# dtype kinds understood by the validator (numpy ``dtype.kind`` letters plus a
# few names for pandas extension types).
_KIND_CHECKS = {
    "float": lambda s: pd.api.types.is_float_dtype(s),
    "int": lambda s: pd.api.types.is_integer_dtype(s),
    "bool": lambda s: pd.api.types.is_bool_dtype(s),
    "string": lambda s: pd.api.types.is_string_dtype(s) or pd.api.types.is_object_dtype(s),
    "datetime": lambda s: pd.api.types.is_datetime64_any_dtype(s),
    "category": lambda s: isinstance(s.dtype, pd.CategoricalDtype),
    "number": lambda s: pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s),
}


@dataclass(frozen=True)
class Column:
    """One documented column: name, dtype kind, unit and meaning."""

    name: str
    kind: str
    unit: str = ""
    doc: str = ""
    required: bool = True

    def __post_init__(self) -> None:
        if self.kind not in _KIND_CHECKS:
            raise ValueError(f"unknown column kind {self.kind!r}; one of {sorted(_KIND_CHECKS)}")


@dataclass(frozen=True)
class Schema:
    """A named, documented set of columns."""

    name: str
    columns: tuple[Column, ...]
    doc: str = ""
    extra_columns_allowed: bool = True
    attrs: dict = field(default_factory=dict, compare=False, hash=False)

    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def describe(self) -> pd.DataFrame:
        """The schema as a small table (column, kind, unit, required, meaning)."""
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
        if not _KIND_CHECKS[col.kind](frame[col.name]):
            problems.append(f"column {col.name!r} has dtype {frame[col.name].dtype}, expected {col.kind}")
    if not schema.extra_columns_allowed:
        extra = [c for c in frame.columns if c not in schema.names()]
        if extra:
            problems.append(f"unexpected columns {extra}")
    if problems:
        raise SchemaError(f"frame does not match schema {schema.name!r}: " + "; ".join(problems))
    frame.attrs.setdefault("schema", schema.name)
    return frame


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


def rejects_frame(rows: list[tuple[str, int, str, str]]) -> pd.DataFrame:
    """Build a rejects table from ``(source, line, text, reason)`` tuples."""
    df = pd.DataFrame(rows, columns=["source", "line", "text", "reason"])
    df["line"] = df["line"].astype("int64")
    for c in ("source", "text", "reason"):
        df[c] = df[c].astype(object)
    return validate(df, REJECTS_SCHEMA)


def attach_rejects(frame: pd.DataFrame, rows: list[tuple[str, int, str, str]]) -> pd.DataFrame:
    """Store the rejected lines on ``frame.attrs["rejects"]`` and return the frame."""
    frame.attrs["rejects"] = rejects_frame(rows)
    return frame
