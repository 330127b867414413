"""Snapshot series: many timestamped counter snapshots → one tidy long frame, then deltas and rates.

Two on-disk conventions are read (``scripts/collect_counters.sh`` writes the first):

1. **One log with markers** — each snapshot starts with a marker line, followed by the
   file's text verbatim::

       #== snapshot ts=1764489600.000 host=fe01 path=/proc/net/dev
       Inter-|   Receive ...

   ``ts`` is seconds since the epoch; ``host`` and ``path`` must not contain spaces.
2. **A directory tree** — ``<root>/<host>/<ts>/<absolute path without the leading />``,
   e.g. ``snap/fe01/1764489600.000/proc/net/dev``; when the first level is already a
   timestamp, the host is the ``host=`` argument.

The source family is detected from the path (``net/dev``, ``vmstat``, ``diskstats``,
``<pid>/io``, ``read_ahead_kb``, ``ceph/.../metrics``, ``*.bt.txt``) and otherwise from
the text. :func:`deltas` turns cumulative counters into per-interval deltas and rates;
a counter that goes down is **reported** as a ``reset`` (the new value is counted from
zero) or, when ``wrap_bits`` says the counter is N-bit, as a ``wrap`` — never smoothed away.
"""
from __future__ import annotations

import functools
import math
import os
import re
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Literal, TextIO, overload

import numpy as np
import pandas as pd

from ..errors import InputNotFoundError, ParseError, UsageError
from ..schema import Column, RejectRow, Schema, SideTable, requires, validate
from ..sources import (
    Collector,
    Input,
    Source,
    Stream,
    Text,
    expand,
    read_path,
    read_stream,
    split_sources,
)
from ._common import COLUMNS, COUNTERS_SCHEMA, Parser, SnapshotRow, finish_snapshots
from .bdi import parse_read_ahead_kb
from .bpftrace import parse_bpftrace_maps
from .cephfs import parse_cephfs_metrics
from .procfs import parse_diskstats, parse_net_dev, parse_pid_io, parse_vmstat

MARKER = re.compile(r"^#== snapshot (?P<fields>.*)$")

DELTAS_SCHEMA = Schema(
    name="counter_deltas",
    doc="Per-interval change of each cumulative counter between consecutive snapshots.",
    columns=(
        Column("timestamp", "float", "s", "end of the interval, seconds since the epoch"),
        Column("start_timestamp", "float", "s", "start of the interval"),
        Column("interval_s", "float", "s", "length of the interval"),
        Column("host", "string"), Column("source", "string"), Column("instance", "string"),
        Column("item", "string"), Column("counter", "string"),
        Column("unit", "string", doc="unit of delta (rate_per_s is unit per second)"),
        Column("start_value", "float", doc="reading at the start"),
        Column("value", "float", doc="reading at the end"),
        Column("delta", "float", doc="increase over the interval, reset/wrap-corrected"),
        Column("rate_per_s", "float", doc="delta / interval_s"),
        Column("event", "string", doc="'' normally, 'reset' or 'wrap' when the counter went down"),
    ),
)

KEYS = ["host", "source", "instance", "item", "counter"]

if TYPE_CHECKING:
    import dask.dataframe as dd
    from distributed import Client


def _parser_for(path: str, text: str) -> tuple[str, Parser] | None:
    """(family, per-text parser) for a snapshot's path, else sniffed from its text."""
    p = path.replace("\\", "/")
    if p.endswith("net/dev"):
        return "net_dev", parse_net_dev
    if p.endswith("vmstat"):
        return "vmstat", parse_vmstat
    if p.endswith("diskstats"):
        return "diskstats", parse_diskstats
    if re.search(r"(^|/)(\d+|self)/io$", p):
        return "pid_io", parse_pid_io
    if p.endswith("read_ahead_kb"):
        return "bdi", parse_read_ahead_kb
    if "/ceph/" in p and re.search(r"metrics(/(file|latency|size|caps))?$", p):
        return "cephfs_metrics", parse_cephfs_metrics
    if p.endswith((".bt.txt", ".bpftrace", ".bpftrace.txt")):
        return "bpftrace", parse_bpftrace_maps
    head = text.lstrip()[:200]
    if head.startswith("Inter-|"):
        return "net_dev", parse_net_dev
    if head.startswith("item "):
        return "cephfs_metrics", parse_cephfs_metrics
    if head.startswith(("rchar:", "rchar ")):
        return "pid_io", parse_pid_io
    if re.match(r"^nr_\w+ \d+", head):
        return "vmstat", parse_vmstat
    if head.startswith(("@", "Attaching")):
        return "bpftrace", parse_bpftrace_maps
    return None


def _load_one(col: Collector, path: str, text: str, host: str, ts: float, rows: list[SnapshotRow],
              line_offset: int = 0) -> None:
    """Parse one snapshot's text and append its rows, prefixed with (timestamp, host).

    Rejected lines go to ``col`` (the collector of the file holding the snapshot) at
    ``line_offset`` + their line in the snapshot.
    """
    found = _parser_for(path, text)
    if found is None:
        col.reject(line_offset, path, f"cannot tell which counter file {path!r} is; expected a path ending in "
                   "net/dev, vmstat, diskstats, <pid>/io, read_ahead_kb, ceph/.../metrics or .bt.txt")
        return
    family, parser = found
    inner = Collector(col.source)
    options = {}
    if family == "cephfs_metrics":
        options["instance"] = next((part for part in PurePosixPath(path).parts if ".client" in part), "")
    try:
        got = parser(Input(path, text), inner, **options)
    except ParseError as exc:  # the snapshot holds nothing of its kind: one reject for the whole snapshot
        col.reject(line_offset + (exc.line or 0), exc.text, exc.reason)
        return
    for _, line, t, reason in inner.rows:
        col.reject(line_offset + line, t, reason)
    rows.extend((ts, host, *r) for r in got)


def _parse_fields(s: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in s.split() if "=" in kv)


def _from_log(inp: Input, host: str | None, col: Collector, rows: list[SnapshotRow]) -> None:
    """Every snapshot of one marker log; bad markers, stray text and bad lines go to ``col``."""
    lines = inp.text.splitlines(keepends=True)
    current: dict[str, str] | None = None
    start = 0
    body: list[str] = []

    def flush() -> None:
        if current is None:
            return
        try:
            ts = float(current["ts"])
            path = current["path"]
        except (KeyError, ValueError):
            col.reject(start, inp.line(start), "snapshot marker needs ts=<seconds> and path=<path>")
            return
        _load_one(col, path, "".join(body), current.get("host", host or ""), ts, rows, line_offset=start)

    for n, line in enumerate(lines, 1):
        m = MARKER.match(line.rstrip("\r\n"))
        if m:
            flush()
            current, start, body = _parse_fields(m["fields"]), n, []
        elif current is None:
            if line.strip():
                col.reject(n, line.rstrip("\r\n"), "text before the first '#== snapshot' marker")
        else:
            body.append(line)
    flush()


def _is_ts(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


#: a snapshot file named ``<timestamp>-<source>.txt`` (e.g. ``1796016241717136078-proc_net_dev.txt``),
#: optionally compressed
SNAPSHOT_FILE = re.compile(r"^(?P<ts>\d{9,20})-(?P<source>[^/]+?)\.txt(?:\.(?:gz|bz2|xz|zst))?$")
_EPOCH_SCALE = ((1e11, 1.0), (1e14, 1e-3), (1e17, 1e-6), (math.inf, 1e-9))


def snapshot_file_time(digits: str) -> float:
    """Epoch seconds from a file name's integer timestamp, its unit by magnitude (s, ms, µs or ns)."""
    v = int(digits)
    scale = next(s for limit, s in _EPOCH_SCALE if v < limit)
    return v * scale if scale != 1e-9 else v // 1_000_000_000 + (v % 1_000_000_000) * 1e-9


def snapshot_file_path(source: str) -> str:
    """The file a ``<source>`` name stands for: ``proc_net_dev`` → ``/proc/net/dev``,
    ``proc_1234_io`` → ``/proc/1234/io``, ``sys_class_bdi_8:0_read_ahead_kb`` → ``…/8:0/read_ahead_kb``."""
    path = "/" + source.replace("_", "/")
    return path.replace("read/ahead/kb", "read_ahead_kb")


def _from_dir(root: Path, host: str | None, strict: bool, rows: list[SnapshotRow],
              rejects: list[RejectRow]) -> None:
    """Every file of a snapshot tree ``<host>/<ts>/<path>`` (or ``<ts>/<path>``), each its own input.

    Files named ``<timestamp>-<source>.txt`` (timestamp in s, ms, µs or ns by
    magnitude; source the file's path with ``_`` for ``/``) are read wherever
    they are: directly in the folder (host from ``host=``) or in ``<host>/``.
    """
    files = sorted(p for p in root.rglob("*") if p.is_file())
    if not files:
        raise InputNotFoundError(f"{root}: folder holds no snapshot file; expected *.snapshots marker logs "
                                 "or a tree <host>/<ts>/<path>")
    for f in files:
        col = Collector(str(f), strict)
        rel = f.relative_to(root).parts
        named = SNAPSHOT_FILE.match(rel[-1])
        if named is not None and len(rel) <= 2:
            h = rel[0] if len(rel) == 2 else host or ""
            _load_one(col, snapshot_file_path(named["source"]), read_path(f).complete(col).text, h,
                      snapshot_file_time(named["ts"]), rows)
            col.check()
            rejects.extend(col.sorted_rows())
            continue
        if len(rel) == 1 and rel[0].lower() in ("readme.md", "readme", "readme.txt"):
            continue  # a folder's notes, not a snapshot
        if len(rel) >= 2 and _is_ts(rel[0]):
            h, ts, rest = host or "", float(rel[0]), rel[1:]
        elif len(rel) >= 3 and _is_ts(rel[1]):
            h, ts, rest = rel[0], float(rel[1]), rel[2:]
        else:
            col.reject(0, "/".join(rel), "path is not <host>/<ts>/<path> nor <ts>/<path>")
            h, ts, rest = "", math.nan, ()
        if rest:
            _load_one(col, "/" + "/".join(rest), read_path(f).complete(col).text, h, ts, rows)
        col.check()
        rejects.extend(col.sorted_rows())


def _items(source: Source) -> list[str | os.PathLike[str] | TextIO]:
    """The entries of a list source (each may be text, a path or a glob), else the source itself."""
    if isinstance(source, (list, tuple)):
        if not source:
            raise UsageError("read_series: empty list of sources; expected marker logs, snapshot folders or text")
        return list(source)
    return [source]  # type: ignore[list-item]  # a single path, glob, stream or text


def _dask_parts(source: Source) -> list[Path]:
    """One part per marker log (a folder's ``*.snapshots`` each) or per snapshot tree."""
    parts: list[Path] = []
    for it in _items(source):
        if not isinstance(it, (str, os.PathLike)) or (isinstance(it, str) and "\n" in it):
            raise UsageError('read_series: engine="dask" reads files: give paths of snapshot logs or folders, '
                             "not text or streams")
        for p in expand(it, "snapshot series"):
            logs = sorted(p.glob("*.snapshots")) if p.is_dir() else []
            parts.extend(logs or [p])
    return parts


def _read_part(path: Path, host: str | None, strict: bool) -> pd.DataFrame:
    return _read_pandas(path, host, strict)


def _read_pandas(source: Source, host: str | None, strict: bool) -> pd.DataFrame:
    rows: list[SnapshotRow] = []
    rejects: list[RejectRow] = []

    def log(inp: Input) -> None:
        col = Collector(inp.name, strict)
        _from_log(inp.complete(col), host, col, rows)
        col.check()
        rejects.extend(col.sorted_rows())

    for it in _items(source):
        for item in split_sources(it, "snapshot series"):
            if isinstance(item, Text):
                log(Input(item.name, item.text, inline=True))
            elif isinstance(item, Stream):
                log(Input(item.name, read_stream(item.stream)))
            elif item.is_dir():
                logs = sorted(item.glob("*.snapshots"))
                if logs:
                    for lg in logs:
                        log(read_path(lg))
                else:
                    _from_dir(item, host, strict, rows, rejects)
            else:
                log(read_path(item))
    out = finish_snapshots(rows, rejects).sort_values(["timestamp", *KEYS], kind="stable").reset_index(drop=True)
    return validate(out, COUNTERS_SCHEMA)


@overload
def read_series(source: Source, *, host: str | None = None, strict: bool = False,
                engine: Literal["pandas"] = "pandas", client: None = None) -> pd.DataFrame: ...


@overload
def read_series(source: Source, *, host: str | None = None, strict: bool = False,
                engine: Literal["dask"], client: Client | str | None = None) -> dd.DataFrame: ...


@overload
def read_series(source: Source, *, host: str | None = None, strict: bool = False,
                engine: str, client: Client | str | None = None) -> pd.DataFrame | dd.DataFrame: ...


def read_series(source: Source, *, host: str | None = None, strict: bool = False,
                engine: str = "pandas", client: Client | str | None = None) -> pd.DataFrame | dd.DataFrame:
    """Read snapshot series (marker logs, snapshot folders, text, or a list of them) into one long frame.

    Returns the long counters frame (:data:`COUNTERS_SCHEMA`) sorted by timestamp; lines
    that could not be read are in ``attrs['rejects']`` (``strict=True`` raises the first
    bad line of a file instead). Files may be compressed (gzip, bzip2, xz, zstd).

    ``engine="dask"`` (paths only) returns a dask DataFrame with the same columns and
    dtypes: one lazy partition per marker log (each ``*.snapshots`` of a folder) or
    snapshot tree, sorted by timestamp **within** its partition, partitions in source
    order (not merged by time across them as here). ``client``: None (current Client,
    else a local in-process cluster), a scheduler address or a Client. Rejects:
    :func:`workbench.engine.rejects` / :func:`workbench.engine.compute`.
    """
    from ..engine import check_engine

    if check_engine(engine, source):
        from ..engine import dask_frame

        return dask_frame(_dask_parts(source), functools.partial(_read_part, host=host, strict=strict),
                          client=client)
    return _read_pandas(source, host, strict)


def deltas(frame: pd.DataFrame, *, wrap_bits: int | dict[str, int] | None = None) -> pd.DataFrame:
    """Per-interval deltas and rates of the cumulative counters (``kind == 'counter'``) in a series.

    ``wrap_bits`` (an int, or a dict source → bits such as ``{"net_dev": 32}``) declares
    counters that wrap: a decrease is then a ``wrap`` and the delta adds ``2**bits``.
    Any other decrease is a ``reset``: the delta is the new value (counted from zero).
    Returns :data:`DELTAS_SCHEMA`; ``attrs['events']`` (a :class:`~workbench.schema.SideTable`:
    ``len()``, ``.frame()``) lists every reset and wrap.
    """
    requires(frame, *COLUMNS)
    bits_given = [wrap_bits] if isinstance(wrap_bits, int) else list((wrap_bits or {}).values())
    bad = [b for b in bits_given if isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= 64]
    if bad:
        raise UsageError(f"deltas: wrap_bits={wrap_bits!r}; expected a counter width in bits from 1 to 64 "
                         "(an int, or a dict source -> bits such as {'net_dev': 32})")
    c = frame[(frame["kind"] == "counter") & frame["timestamp"].notna()]
    c = c.sort_values([*KEYS, "timestamp"], kind="stable")
    g = c.groupby(KEYS, sort=False)
    prev_v = g["value"].shift(1)
    prev_t = g["timestamp"].shift(1)
    d = c.assign(start_value=prev_v, start_timestamp=prev_t)
    d = d[d["start_value"].notna()].copy()
    raw = d["value"] - d["start_value"]
    event = np.where(raw < 0, "reset", "")
    delta = raw.to_numpy(dtype="float64").copy()
    if wrap_bits is not None:
        bits = d["source"].map(wrap_bits if isinstance(wrap_bits, dict) else {s: wrap_bits for s in d["source"]})
        modulus = np.power(2.0, bits.astype("float64").to_numpy())
        wrapped = (raw.to_numpy() < 0) & np.isfinite(modulus) & (d["start_value"].to_numpy() < modulus)
        delta = np.where(wrapped, raw.to_numpy() + modulus, delta)
        event = np.where(wrapped, "wrap", event)
    reset = event == "reset"
    delta = np.where(reset, d["value"].to_numpy(), delta)
    d["delta"] = delta
    d["event"] = event
    d["interval_s"] = d["timestamp"] - d["start_timestamp"]
    with np.errstate(divide="ignore", invalid="ignore"):
        d["rate_per_s"] = np.where(d["interval_s"] > 0, d["delta"] / d["interval_s"], math.nan)
    cols = DELTAS_SCHEMA.names()
    out = d[cols].reset_index(drop=True)
    for col in ("host", "source", "instance", "item", "counter", "unit", "event"):
        out[col] = out[col].astype(object)
    out.attrs["events"] = SideTable(out[out["event"] != ""].reset_index(drop=True))
    return validate(out, DELTAS_SCHEMA)


def window_totals(d: pd.DataFrame, start: float | None = None, end: float | None = None) -> pd.DataFrame:
    """Sum deltas per counter over ``[start, end]`` (intervals wholly inside; None = open).

    Returns columns host, source, instance, item, counter, unit, delta, interval_s,
    rate_per_s (delta / covered seconds), events (resets + wraps inside the window).
    """
    requires(d, *KEYS, "unit", "start_timestamp", "timestamp", "delta", "interval_s", "event")
    m = pd.Series(True, index=d.index)
    if start is not None:
        m &= d["start_timestamp"] >= start - 1e-9
    if end is not None:
        m &= d["timestamp"] <= end + 1e-9
    w = d[m]
    out = w.groupby([*KEYS, "unit"], sort=True).agg(
        delta=("delta", "sum"), interval_s=("interval_s", "sum"),
        events=("event", lambda s: int((s != "").sum()))).reset_index()
    out["rate_per_s"] = out["delta"] / out["interval_s"].where(out["interval_s"] > 0)
    return out
