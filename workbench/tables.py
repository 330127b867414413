"""The one reader of small documented CSV tables: published figures, lab captures, step timings.

:func:`read_table` parses a comma-separated table into the columns of a
:class:`~workbench.schema.Schema`: a header first (blank lines and ``#``
comment lines are skipped anywhere), then one record per line. Every cell is
parsed by its column's kind and checked by the column's :class:`Rule`; a
record that fails is kept in ``frame.attrs["rejects"]`` with the reason, or,
with ``strict=True``, raises :class:`~workbench.errors.ParseError` for the
first one. A header that lacks a required column raises
:class:`~workbench.errors.SchemaError` naming the file, the line, the
expected columns and their units.

A table with nothing to reject is parsed and converted a column at a time in
Arrow (76,200 records in about 0.3 s); a table with any cell to reject, or any
cell Arrow might read otherwise than Python's ``int``/``float`` (``+4``,
``1_000``, ``0x10``, quoted fields), is read record by record, so both ways
give the same frame and every reject keeps its reason.

The source is anything :mod:`workbench.sources` accepts (path, stream, text;
gzip, bzip2, xz and zstd files are decompressed). A file's or stream's last
line without its line end (cut while written) is rejected as "incomplete last
line", never read as a record; text passed inline by the program is whole.
"""
from __future__ import annotations

import csv
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .errors import SchemaError, UsageError
from .schema import Schema, attach_rejects, validate
from .sources import Collector, Source, open_inputs

__all__ = ["AtLeast", "Above", "NonEmpty", "OneOf", "Rule", "read_table"]


@dataclass(frozen=True)
class AtLeast:
    """The value must be ≥ ``bound``."""

    bound: float

    def __call__(self, value: Any) -> str | None:
        return None if value >= self.bound else f"expected >= {self.bound:g}, got {value!r}"


@dataclass(frozen=True)
class Above:
    """The value must be > ``bound``."""

    bound: float

    def __call__(self, value: Any) -> str | None:
        return None if value > self.bound else f"expected > {self.bound:g}, got {value!r}"


@dataclass(frozen=True)
class OneOf:
    """The value must be one of ``values``."""

    values: frozenset[Any]

    def __call__(self, value: Any) -> str | None:
        return None if value in self.values else f"expected one of {sorted(self.values)}, got {value!r}"


@dataclass(frozen=True)
class NonEmpty:
    """The text must not be empty."""

    def __call__(self, value: Any) -> str | None:
        return None if value != "" else "expected text, got an empty cell"


Rule = AtLeast | Above | OneOf | NonEmpty

_INT64_MAX = 2**63 - 1


def _parse_int(cell: str) -> int:
    try:
        v = int(cell)
    except ValueError:
        try:
            f = float(cell)
        except ValueError:
            raise ValueError(f"expected a whole number, got {cell!r}") from None
        if not math.isfinite(f) or not f.is_integer():
            raise ValueError(f"expected a whole number, got {cell!r}") from None
        v = int(f)
    if not -_INT64_MAX - 1 <= v <= _INT64_MAX:
        raise ValueError(f"expected a whole number within 64 bits, got {cell[:40]!r}")
    return v


def _parse_float(cell: str) -> float:
    try:
        f = float(cell)
    except ValueError:
        raise ValueError(f"expected a number, got {cell!r}") from None
    if not math.isfinite(f):
        raise ValueError(f"expected a finite number, got {cell!r}")
    return f


def _parse_bool(cell: str) -> bool:
    low = cell.lower()
    if low in {"true", "1"}:
        return True
    if low in {"false", "0"}:
        return False
    raise ValueError(f"expected true/false, got {cell!r}")


_PARSERS: dict[str, Callable[[str], Any]] = {
    "int": _parse_int, "float": _parse_float, "number": _parse_float, "bool": _parse_bool, "string": str,
}
_DTYPES: dict[str, Any] = {"int": "int64", "float": "float64", "number": "float64", "bool": "bool", "string": object}


def read_table(
    source: Source,
    schema: Schema,
    *,
    strict: bool = False,
    rules: Mapping[str, Rule] | None = None,
    key: Sequence[str] = (),
    check: Callable[[dict[str, Any]], str | None] | None = None,
) -> pd.DataFrame:
    """Parse a small CSV table into ``schema``'s columns (in schema order; other input columns dropped).

    ``rules``: column → :class:`Rule` every value must pass. ``key``: columns
    whose combined value must be unique (a repeat is rejected). ``check``: a
    function of the parsed record (column → value) returning a reason to
    reject it, or None. Optional schema columns may be absent from the header;
    they are then absent from the frame. Returns the validated frame with
    ``attrs["source"]`` and ``attrs["rejects"]``.
    """
    rules = dict(rules or {})
    unknown = [c for c in (*rules, *key) if c not in schema.names()]
    if unknown:
        raise UsageError(f"read_table: rule or key column(s) {unknown} are not in schema {schema.name!r}")
    frames = []
    all_rejects: list[tuple[str, int, str, str]] = []
    for inp in open_inputs(source, f"{schema.name} table"):
        col = Collector(inp.name, strict)
        inp = inp.complete(col)
        frames.append(_parse(inp.name, inp.text, schema, rules, key, check, col))
        col.check()
        all_rejects.extend(col.sorted_rows())
    frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    frame.attrs["source"] = frames[0].attrs["source"] if len(frames) == 1 else [f.attrs["source"] for f in frames]
    attach_rejects(frame, all_rejects)
    return validate(frame, schema)


def _parse(name: str, text: str, schema: Schema, rules: dict[str, Rule], key: Sequence[str],
           check: Callable[[dict[str, Any]], str | None] | None, col: Collector) -> pd.DataFrame:
    kinds = {c.name: c.kind for c in schema.columns}
    lines = text.splitlines()
    records = [(n, raw) for n, raw in enumerate(lines, start=1) if raw.strip() and not raw.lstrip().startswith("#")]
    if not records:
        raise SchemaError(f"{name}: empty table; expected a CSV header with columns {schema.names()}")
    header_line, raw_header = records[0]
    try:
        header = [f.strip() for f in next(csv.reader([raw_header]))]
    except csv.Error as exc:  # e.g. a field over the csv module's size limit
        raise SchemaError(f"{name}:{header_line}: the header is not CSV ({exc})") from None
    missing = [c.name for c in schema.columns if c.required and c.name not in header]
    if missing:
        units = ", ".join(f"{c.name} ({c.unit or c.kind})" for c in schema.columns)
        raise SchemaError(f"{name}:{header_line}: the header lacks column(s) {missing}; "
                          f"expected columns {units}; got {header}")
    index = {c: header.index(c) for c in schema.names() if c in header}
    absent = [c for c in (*rules, *key) if c not in index]
    if absent:
        raise SchemaError(f"{name}:{header_line}: the header lacks column(s) {absent}, which this "
                          f"table's checks need; got {header}")
    body = records[1:]
    data = _columns_at_once([raw for _, raw in body], len(header), index, kinds, rules, key, check)
    if data is None:  # something to reject (or to read as the csv module does): record by record
        data = _columns_by_record(body, header, index, kinds, rules, key, check, col)
    frame = pd.DataFrame({c: pd.Series(v, dtype=_DTYPES[kinds[c]]) for c, v in data.items()})
    frame.attrs["source"] = name
    return frame


_INT_TEXT = r"^-?[0-9]+$"  # what both Python's int() and Arrow's cast read, to the same value
_FLOAT_TEXT = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"  # finite decimals, as float() reads them


def _columns_at_once(rows: list[str], width: int, index: dict[str, int], kinds: dict[str, str],
                     rules: dict[str, Rule], key: Sequence[str],
                     check: Callable[[dict[str, Any]], str | None] | None) -> dict[str, Any] | None:
    """The columns of a table with nothing to reject, parsed and converted in Arrow; None otherwise.

    Only plain records are taken (no quotes, no NUL, no field over the csv
    module's limit, every record ``width`` fields), and only cells whose text
    :func:`_columns_by_record` would read to the same value: whole numbers of
    decimal digits, decimal numbers with an optional exponent, true/false/1/0.
    None (the table is then read record by record, which names each reason)
    on anything else and on the first rule, key or check that fails, so both
    ways give the same frame.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    if not rows:
        return None
    body = "\n".join(rows)
    # quotes follow the csv module's rules; U+001F is whitespace to str.strip() but not to Arrow's trim
    if '"' in body or "\0" in body or "\x1f" in body or max(map(len, rows)) > csv.field_size_limit():
        return None
    names = [f"c{i}" for i in range(width)]
    try:
        table = pcsv.read_csv(
            pa.py_buffer(body.encode("utf-8")),
            read_options=pcsv.ReadOptions(column_names=names, use_threads=False),
            parse_options=pcsv.ParseOptions(quote_char=False, newlines_in_values=False, ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(column_types={n: pa.string() for n in names}, null_values=[],
                                                strings_can_be_null=False, include_columns=[names[i] for i in index.values()]))
    except (pa.ArrowInvalid, UnicodeEncodeError):  # a record of another width, text that is not UTF-8
        return None
    if table.num_rows != len(rows):
        return None
    out: dict[str, Any] = {}
    for c, i in index.items():
        text = pc.utf8_trim_whitespace(table.column(names[i]))
        kind = kinds[c]
        values: Any
        if kind in ("int", "float", "number"):
            pattern, typ = (_INT_TEXT, pa.int64()) if kind == "int" else (_FLOAT_TEXT, pa.float64())
            if not pc.all(pc.match_substring_regex(text, pattern)).as_py():
                return None
            try:
                values = pc.cast(text, typ).to_numpy()
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # e.g. a whole number over 64 bits
                return None
            if kind != "int" and not bool(np.isfinite(values).all()):
                return None
        elif kind == "bool":
            low = pc.utf8_lower(text)
            yes = pc.is_in(low, value_set=pa.array(["true", "1"]))
            if not pc.all(pc.or_(yes, pc.is_in(low, value_set=pa.array(["false", "0"])))).as_py():
                return None
            values = yes.to_numpy(zero_copy_only=False)
        elif kind == "string":
            values = text.to_numpy(zero_copy_only=False)
        else:
            return None
        rule = rules.get(c)
        if rule is not None and not _all_pass(rule, values):
            return None
        out[c] = values
    if not key and check is None:
        return out
    cols = list(out)
    py = [out[c].tolist() for c in cols]
    if key and len(set(zip(*(py[cols.index(c)] for c in key), strict=True))) != len(rows):
        return None  # a repeated key (equal as Python compares the values)
    if check is not None:
        if any(check(dict(zip(cols, rec, strict=True))) is not None for rec in zip(*py, strict=True)):
            return None
    return out


def _all_pass(rule: Rule, values: np.ndarray) -> bool:
    """Whether every value passes ``rule`` (the rule's own test, over a whole column)."""
    if values.dtype != object:
        if isinstance(rule, AtLeast):
            return bool((values >= rule.bound).all())
        if isinstance(rule, Above):
            return bool((values > rule.bound).all())
    elif isinstance(rule, NonEmpty):
        return bool((values != "").all())
    return all(rule(v) is None for v in values.tolist())


def _columns_by_record(body: list[tuple[int, str]], header: list[str], index: dict[str, int],
                       kinds: dict[str, str], rules: dict[str, Rule], key: Sequence[str],
                       check: Callable[[dict[str, Any]], str | None] | None, col: Collector) -> dict[str, list[Any]]:
    """The columns, record by record: each record parsed and checked, or rejected with its reason."""
    data: dict[str, list[Any]] = {c: [] for c in index}
    seen: set[tuple[Any, ...]] = set()
    for lineno, raw in body:
        try:
            fields = [f.strip() for f in next(csv.reader([raw]))]
        except csv.Error as exc:  # e.g. a field over the csv module's size limit
            col.reject(lineno, raw, f"not a CSV record ({exc})")
            continue
        reason = None
        values: dict[str, Any] = {}
        if len(fields) != len(header):
            reason = f"expected {len(header)} fields ({', '.join(header)}), got {len(fields)}"
        else:
            for c, i in index.items():
                try:
                    v = _PARSERS[kinds[c]](fields[i])
                except ValueError as exc:
                    reason = f"column {c!r}: {exc}"
                    break
                rule = rules.get(c)
                bad = rule(v) if rule is not None else None
                if bad is not None:
                    reason = f"column {c!r}: {bad}"
                    break
                values[c] = v
        if reason is None and check is not None:
            reason = check(values)
        if reason is None and key:
            k = tuple(values[c] for c in key)
            if k in seen:
                reason = f"duplicate {dict(zip(key, k, strict=True))}"
            seen.add(k)
        if reason is not None:
            col.reject(lineno, raw, reason)
            continue
        for c in index:
            data[c].append(values[c])
    return data
