"""What the counter loaders share: the long frame's schema, building it, and running a per-text parser.

Inputs and rejects go through :mod:`workbench.sources` (:func:`~workbench.sources.open_inputs`,
:class:`~workbench.sources.Collector`): every loader parses a whole input, then calls
``Collector.check()``, so ``strict=True`` raises the earliest rejected line of that input.

A file or stream whose last line has no line end (cut while written) has that
line rejected as "incomplete last line", never read as a counter
(:meth:`~workbench.sources.Input.complete`; compressed files are judged by
their decompressed text). bpftrace and fincore JSON are judged whole by their
JSON parser; text passed inline by the program is whole.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ParseError
from ..schema import Column, RejectRow, Rejects, Schema, attach_rejects, rejects_of, validate
from ..sources import Collector, Input, Source, open_inputs

__all__ = ["COLUMNS", "COUNTERS_SCHEMA", "CounterRow", "Parser", "SnapshotRow", "concat", "finish", "finish_snapshots",
           "load_rows", "no_rows_error", "parse_count", "parse_int"]

COUNTERS_SCHEMA = Schema(
    name="counters",
    doc=(
        "One counter reading per row (tidy long form). A single snapshot has timestamp NaN "
        "unless given; a snapshot series (workbench.counters.series) fills it."
    ),
    columns=(
        Column("timestamp", "float", "s", "snapshot time, seconds since the epoch (NaN when unknown)"),
        Column("host", "string", doc="machine the snapshot came from ('' when unknown)"),
        Column("source", "string", doc="source family: cephfs_metrics, net_dev, vmstat, diskstats, pid_io, "
               "bdi, bpftrace, tsdb"),
        Column("instance", "string", doc="which copy of the source: CephFS client dir, pid, bpftrace file; '' if one"),
        Column("item", "string", doc="device, interface, metrics row (read/write/...), map key"),
        Column("counter", "string", doc="counter name, normalised (rx_bytes, total_sz_bytes, pgpgin, ...)"),
        Column("value", "float", doc="the reading, in `unit` (float64: exact below 2**53)"),
        Column("unit", "string", doc="bytes, KiB, pages, count, us, ms"),
        Column("kind", "string", doc="'counter' (monotonic, deltas make sense) or 'gauge'"),
    ),
)

COLUMNS = COUNTERS_SCHEMA.names()
_TEXT_COLUMNS = ("host", "source", "instance", "item", "counter", "unit", "kind")

#: one parsed reading: (source, instance, item, counter, value, unit, kind)
CounterRow = tuple[str, str, str, str, float, str, str]
#: one reading of a snapshot series: (timestamp, host, source, instance, item, counter, value, unit, kind)
SnapshotRow = tuple[float, str, str, str, str, str, float, str, str]
#: a per-text parser: ``parser(inp, collector, **options) -> rows``
Parser = Callable[..., list[CounterRow]]


_U64 = 2**64


def parse_int(tok: str) -> float:
    """An integer token of at most 64 bits (as kernel counters are) as float64 (exact below 2**53).

    ValueError, with the reason, for anything else: not a whole number, or more than 64 bits.
    """
    t = tok.strip()
    if len(t.lstrip("+-")) > 20:
        raise ValueError(f"integer {t[:24]}… has more digits than a 64-bit counter")
    v = int(t, 10)
    if not -_U64 < v < _U64:
        raise ValueError(f"integer {t} does not fit in 64 bits")
    return float(v)


_I64 = 2**63


def parse_count(tok: object) -> int:
    """A count (text or JSON number) that fits the frame's int64 column; ValueError otherwise."""
    if isinstance(tok, bool) or not isinstance(tok, (int, str)):
        raise ValueError(f"expected a whole number, got {tok!r}"[:120])
    t = tok.strip() if isinstance(tok, str) else tok
    if isinstance(t, str) and len(t.lstrip("+-")) > 19:
        raise ValueError(f"count {t[:24]}… does not fit in 64 bits")
    v = int(t)
    if not -_I64 <= v < _I64:
        raise ValueError(f"count {v} does not fit in 64 bits")
    return v


def _typed(frame: pd.DataFrame, rejects: Iterable[RejectRow] | Rejects) -> pd.DataFrame:
    frame["timestamp"] = frame["timestamp"].astype("float64")
    frame["value"] = frame["value"].astype("float64")
    for c in _TEXT_COLUMNS:
        frame[c] = frame[c].astype(object)
    attach_rejects(frame, rejects)
    return validate(frame, COUNTERS_SCHEMA)


def finish(rows: list[CounterRow], rejects: Iterable[RejectRow] | Rejects, *, host: str = "",
           timestamp: float | None = None) -> pd.DataFrame:
    """Build, validate and return the long counters frame (:data:`COUNTERS_SCHEMA`) from row tuples.

    Each row is ``(source, instance, item, counter, value, unit, kind)``; every row gets
    ``host`` and ``timestamp`` (NaN when None). ``rejects`` go to ``attrs["rejects"]``.
    """
    ts = math.nan if timestamp is None else float(timestamp)
    frame = pd.DataFrame(rows, columns=COLUMNS[2:])
    frame.insert(0, "host", host)
    frame.insert(0, "timestamp", np.float64(ts))
    return _typed(frame[COLUMNS], rejects)


def finish_snapshots(rows: list[SnapshotRow], rejects: Iterable[RejectRow] | Rejects) -> pd.DataFrame:
    """Build the long frame from rows that carry their own ``(timestamp, host, ...)`` prefix."""
    return _typed(pd.DataFrame(rows, columns=COLUMNS), rejects)


def no_rows_error(inp: Input, col: Collector, what: str) -> ParseError:
    """The error for an input with no ``what`` line at all; with ``strict`` its first bad line raises first."""
    col.check()
    line, first = next(((n, ln) for n, ln in enumerate(inp.text.splitlines(), 1) if ln.strip()), (None, ""))
    return ParseError(inp.name, line, first, f"no {what} lines found; is this a {what} file?")


def load_rows(source: Source, what: str, parser: Parser, *, host: str = "", timestamp: float | None = None,
              strict: bool = False, **options: Any) -> pd.DataFrame:
    """Run ``parser(inp, collector, **options) -> rows`` over every input (folders: every file in them).

    One long frame out; each input's rejects in line order, or with ``strict`` its
    earliest rejected line raised as :class:`~workbench.errors.ParseError`.
    """
    rows: list[CounterRow] = []
    rejects: list[RejectRow] = []
    for inp in open_inputs(source, what, directories=True):
        col = Collector(inp.name, strict)
        rows.extend(parser(inp.complete(col), col, **options))
        col.check()
        rejects.extend(col.sorted_rows())
    return finish(rows, rejects, host=host, timestamp=timestamp)


def concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate long frames; the result carries every frame's rejects, in frame order."""
    if not frames:
        return finish([], [])
    out = pd.concat(frames, ignore_index=True)
    attach_rejects(out, Rejects.concat(rejects_of(f) for f in frames))
    return validate(out, COUNTERS_SCHEMA)
