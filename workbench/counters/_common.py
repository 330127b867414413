"""Shared pieces of the counter loaders: inputs, reject collection, the long frame."""
from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np
import pandas as pd

from ..errors import ParseError
from ..schema import Column, Schema, attach_rejects, validate
from ..sources import Source, Stream, Text, read_stream, split_sources

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

COLUMNS = [c.name for c in COUNTERS_SCHEMA.columns]


@dataclass
class Input:
    """One input text with the name used in messages (a path or '<text>')."""

    name: str
    text: str


@dataclass
class Collector:
    """Collects rejected lines; with ``strict`` the first one raises ParseError."""

    source: str
    strict: bool = False
    rows: list[tuple[str, int, str, str]] = field(default_factory=list)

    def reject(self, line: int, text: str, reason: str) -> None:
        if self.strict:
            raise ParseError(self.source, line, text, reason)
        self.rows.append((self.source, int(line), text, reason))


def _read_path(p: Path) -> Input:
    return Input(str(p), p.read_bytes().decode("utf-8", errors="replace"))


def open_inputs(source: Source, what: str) -> list[Input]:
    """Named texts from a path, glob, list of paths, open text stream or a string of text.

    A ``str`` containing a newline is the text itself; otherwise it is a path
    (a glob when it contains ``*?[``). Directories are expanded to their files
    (sorted, recursively). ``what`` names the format in error messages.
    """
    out: list[Input] = []
    for item in split_sources(source, what):
        if isinstance(item, Text):
            out.append(Input(item.name, item.text))
        elif isinstance(item, Stream):
            out.append(Input(item.name, read_stream(item.stream)))
        elif item.is_dir():
            files = sorted(q for q in item.rglob("*") if q.is_file())
            if not files:
                raise FileNotFoundError(f"{item}: directory holds no {what} file")
            out.extend(_read_path(q) for q in files)
        else:
            out.append(_read_path(item))
    return out


def parse_int(tok: str) -> float:
    """An integer token as float64 (exact below 2**53); ValueError otherwise."""
    return float(int(tok, 10))


def finish(rows: list[tuple], rejects: list[tuple[str, int, str, str]], *, host: str = "",
           timestamp: float | None = None, attrs: dict | None = None) -> pd.DataFrame:
    """Build, validate and return the long counters frame from row tuples.

    Each row is ``(source, instance, item, counter, value, unit, kind)``.
    """
    ts = math.nan if timestamp is None else float(timestamp)
    frame = pd.DataFrame(rows, columns=["source", "instance", "item", "counter", "value", "unit", "kind"])
    frame.insert(0, "host", host)
    frame.insert(0, "timestamp", np.float64(ts))
    frame["timestamp"] = frame["timestamp"].astype("float64")
    frame["value"] = frame["value"].astype("float64")
    for c in ("host", "source", "instance", "item", "counter", "unit", "kind"):
        frame[c] = frame[c].astype(object)
    frame = frame[COLUMNS]
    attach_rejects(frame, rejects)
    for k, v in (attrs or {}).items():
        frame.attrs[k] = v
    return validate(frame, COUNTERS_SCHEMA)


def load_rows(source: Source, what: str, parser, *, host: str = "", timestamp: float | None = None,
              strict: bool = False, **kwargs) -> pd.DataFrame:
    """Run a per-text ``parser(inp, collector, **kwargs) -> rows`` over every input; one frame out."""
    rows: list[tuple] = []
    rejects: list[tuple[str, int, str, str]] = []
    for inp in open_inputs(source, what):
        col = Collector(inp.name, strict)
        rows.extend(parser(inp, col, **kwargs))
        rejects.extend(col.rows)
    return finish(rows, rejects, host=host, timestamp=timestamp)


def finish_snapshots(rows: list[tuple], rejects: list[tuple[str, int, str, str]]) -> pd.DataFrame:
    """Build the long frame from rows that carry their own ``(timestamp, host, ...)`` prefix."""
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["timestamp"] = frame["timestamp"].astype("float64")
    frame["value"] = frame["value"].astype("float64")
    for c in ("host", "source", "instance", "item", "counter", "unit", "kind"):
        frame[c] = frame[c].astype(object)
    attach_rejects(frame, rejects)
    return validate(frame, COUNTERS_SCHEMA)


def concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate long frames, keeping every frame's rejects."""
    if not frames:
        return finish([], [])
    rej = [r for f in frames for r in f.attrs.get("rejects", pd.DataFrame()).itertuples(index=False, name=None)]
    bare = []
    for f in frames:
        g = f.copy(deep=False)
        g.attrs = {}
        bare.append(g)
    out = pd.concat(bare, ignore_index=True)
    attach_rejects(out, rej)
    return validate(out, COUNTERS_SCHEMA)


def empty_text_error(inp: Input, what: str) -> ParseError:
    return ParseError(inp.name, None, inp.text[:80], f"no {what} lines found; is this a {what} file?")


def as_text_stream(text: str) -> TextIO:
    return io.StringIO(text)
