"""Linux procfs counters: ``/proc/net/dev``, ``/proc/vmstat``, ``/proc/diskstats``, ``/proc/<pid>/io``.

Each reader returns the long counters frame (:data:`COUNTERS_SCHEMA`):

- :func:`read_net_dev` — item = interface, counters ``rx_bytes rx_packets rx_errs rx_drop rx_fifo
  rx_frame rx_compressed rx_multicast tx_bytes tx_packets tx_errs tx_drop tx_fifo tx_colls
  tx_carrier tx_compressed`` (bytes / count, cumulative since boot; may wrap at 2**32 on
  32-bit kernels). Lines split on the *first* ``:`` (wide counters can abut the colon).
- :func:`read_vmstat` — item '', counter = the vmstat key. ``nr_*`` are gauges in pages,
  ``pgpgin``/``pgpgout`` are KiB counters, everything else an event count.
- :func:`read_diskstats` — item = device; 14, 18 or 20 fields (and the old 7-field
  partition lines). Sectors are 512 B and converted: ``read_bytes``, ``write_bytes``,
  ``discard_bytes``; times in ms; ``in_flight`` is a gauge.
- :func:`read_pid_io` — item = pid (from a ``/proc/<pid>/io`` path, else ''); ``rchar wchar
  syscr syscw read_bytes write_bytes cancelled_write_bytes``.
"""
from __future__ import annotations

import re
from pathlib import PurePath

import pandas as pd

from ..sources import Collector, Input, Source
from ._common import CounterRow, load_rows, no_rows_error, parse_int

_NET_FIELDS = ["bytes", "packets", "errs", "drop", "fifo", "frame", "compressed", "multicast"]
_NET_TX = ["bytes", "packets", "errs", "drop", "fifo", "colls", "carrier", "compressed"]
NET_DEV_COUNTERS = [f"rx_{f}" for f in _NET_FIELDS] + [f"tx_{f}" for f in _NET_TX]

# (name, unit, kind, scale) per diskstats stat position
_DISK = [
    ("reads_completed", "count", "counter", 1), ("reads_merged", "count", "counter", 1),
    ("read_bytes", "bytes", "counter", 512), ("read_time_ms", "ms", "counter", 1),
    ("writes_completed", "count", "counter", 1), ("writes_merged", "count", "counter", 1),
    ("write_bytes", "bytes", "counter", 512), ("write_time_ms", "ms", "counter", 1),
    ("in_flight", "count", "gauge", 1), ("io_time_ms", "ms", "counter", 1),
    ("weighted_io_time_ms", "ms", "counter", 1),
    ("discards_completed", "count", "counter", 1), ("discards_merged", "count", "counter", 1),
    ("discard_bytes", "bytes", "counter", 512), ("discard_time_ms", "ms", "counter", 1),
    ("flushes_completed", "count", "counter", 1), ("flush_time_ms", "ms", "counter", 1),
]
# old (< 2.6.25) partition lines: reads, sectors read, writes, sectors written
_DISK_OLD_PART = [("reads_completed", "count", "counter", 1), ("read_bytes", "bytes", "counter", 512),
                  ("writes_completed", "count", "counter", 1), ("write_bytes", "bytes", "counter", 512)]


def _ints(toks: list[str]) -> list[float] | None:
    try:
        return [parse_int(t) for t in toks]
    except ValueError:
        return None


def parse_net_dev(inp: Input, col: Collector) -> list[CounterRow]:
    """Rows of one ``/proc/net/dev`` text (see :func:`read_net_dev`)."""
    rows: list[CounterRow] = []
    for n, raw in enumerate(inp.text.splitlines(), 1):
        if not raw.strip() or "|" in raw:
            continue  # the two header lines
        name, sep, rest = raw.partition(":")
        if not sep:
            col.reject(n, raw, "expected '<iface>: <16 counters>'")
            continue
        vals = _ints(rest.split())
        if vals is None or len(vals) != 16:
            col.reject(n, raw, f"expected 16 integer counters after '{name.strip()}:', got "
                       f"{len(rest.split())} fields")
            continue
        for c, v in zip(NET_DEV_COUNTERS, vals, strict=True):
            rows.append(("net_dev", "", name.strip(), c, v, "bytes" if c.endswith("bytes") else "count", "counter"))
    if not rows:
        raise no_rows_error(inp, col, "/proc/net/dev")
    return rows


def read_net_dev(source: Source, *, host: str = "", timestamp: float | None = None,
                 strict: bool = False) -> pd.DataFrame:
    """Read ``/proc/net/dev`` snapshots into the long counters frame (``source='net_dev'``)."""
    return load_rows(source, "/proc/net/dev", parse_net_dev, host=host, timestamp=timestamp, strict=strict)


def _vmstat_unit(key: str) -> tuple[str, str]:
    if key in ("pgpgin", "pgpgout"):
        return "KiB", "counter"
    if key in ("nr_dirtied", "nr_written"):
        return "pages", "counter"
    if key.startswith("nr_") and key not in ("nr_foll_pin_acquired", "nr_foll_pin_released", "nr_unstable",
                                             "nr_vmscan_write", "nr_vmscan_immediate_reclaim"):
        return "pages", "gauge"
    return "count", "counter"


def parse_vmstat(inp: Input, col: Collector) -> list[CounterRow]:
    """Rows of one ``/proc/vmstat`` text (see :func:`read_vmstat`)."""
    rows: list[CounterRow] = []
    for n, raw in enumerate(inp.text.splitlines(), 1):
        if not raw.strip():
            continue
        toks = raw.split()
        vals = _ints(toks[1:]) if len(toks) == 2 and re.fullmatch(r"[a-z0-9_]+", toks[0]) else None
        if vals is None:
            col.reject(n, raw, "expected '<name> <integer>' (an integer of at most 64 bits)")
            continue
        unit, kind = _vmstat_unit(toks[0])
        rows.append(("vmstat", "", "", toks[0], vals[0], unit, kind))
    if not rows:
        raise no_rows_error(inp, col, "/proc/vmstat")
    return rows


def read_vmstat(source: Source, *, host: str = "", timestamp: float | None = None,
                strict: bool = False) -> pd.DataFrame:
    """Read ``/proc/vmstat`` snapshots into the long counters frame (``source='vmstat'``)."""
    return load_rows(source, "/proc/vmstat", parse_vmstat, host=host, timestamp=timestamp, strict=strict)


def parse_diskstats(inp: Input, col: Collector) -> list[CounterRow]:
    """Rows of one ``/proc/diskstats`` text (see :func:`read_diskstats`)."""
    rows: list[CounterRow] = []
    for n, raw in enumerate(inp.text.splitlines(), 1):
        if not raw.strip():
            continue
        toks = raw.split()
        stats = _ints(toks[3:]) if len(toks) > 3 else None
        if len(toks) < 4 or _ints(toks[:2]) is None or stats is None:
            col.reject(n, raw, "expected '<major> <minor> <device> <integer stats...>'")
            continue
        if len(toks) == 7:
            spec = _DISK_OLD_PART
        elif len(toks) in (14, 18, 20):
            spec = _DISK[: len(toks) - 3]
        else:
            col.reject(n, raw, f"expected 7, 14, 18 or 20 fields, got {len(toks)}")
            continue
        for (name, unit, kind, scale), v in zip(spec, stats, strict=False):
            rows.append(("diskstats", "", toks[2], name, v * scale, unit, kind))
    if not rows:
        raise no_rows_error(inp, col, "/proc/diskstats")
    return rows


def read_diskstats(source: Source, *, host: str = "", timestamp: float | None = None,
                   strict: bool = False) -> pd.DataFrame:
    """Read ``/proc/diskstats`` (14, 18 or 20 fields per line) into the long counters frame."""
    return load_rows(source, "/proc/diskstats", parse_diskstats, host=host, timestamp=timestamp, strict=strict)


_PID_IO_KEYS = {"rchar", "wchar", "syscr", "syscw", "read_bytes", "write_bytes", "cancelled_write_bytes"}


def parse_pid_io(inp: Input, col: Collector, pid: str | None = None) -> list[CounterRow]:
    """Rows of one ``/proc/<pid>/io`` text (see :func:`read_pid_io`)."""
    item = pid
    if item is None:
        parts = PurePath(inp.name).parts
        item = next((p for p in reversed(parts[:-1]) if p.isdigit() or p == "self"), "")
    rows: list[CounterRow] = []
    for n, raw in enumerate(inp.text.splitlines(), 1):
        if not raw.strip():
            continue
        m = re.fullmatch(r"\s*([a-z_]+):\s*(\d+)\s*", raw)
        if not m or m[1] not in _PID_IO_KEYS:
            col.reject(n, raw, f"expected '<key>: <integer>' with key in {sorted(_PID_IO_KEYS)}")
            continue
        vals = _ints([m[2]])
        if vals is None:
            col.reject(n, raw, f"{m[1]}: the value does not fit in 64 bits")
            continue
        unit = "count" if m[1].startswith("sysc") else "bytes"
        rows.append(("pid_io", "", item, m[1], vals[0], unit, "counter"))
    if not rows:
        raise no_rows_error(inp, col, "/proc/<pid>/io")
    return rows


def read_pid_io(source: Source, *, host: str = "", timestamp: float | None = None,
                pid: str | None = None, strict: bool = False) -> pd.DataFrame:
    """Read ``/proc/<pid>/io`` snapshots into the long counters frame (``source='pid_io'``)."""
    return load_rows(source, "/proc/<pid>/io", parse_pid_io, host=host, timestamp=timestamp, strict=strict, pid=pid)
