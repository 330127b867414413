"""CephFS kernel client debugfs metrics (``/sys/kernel/debug/ceph/<fsid>.client<id>/metrics``).

Every layout the kernel has printed is read by the same code, block by block:

- 2020 proposal (``sum_lat(us)`` column), 2020 merged (jiffy-quantised µs, decimal stdev),
- ≈5.11–5.15 single ``metrics`` file (opened-files block ``a / b`` cells, size table from ≈5.14),
- 5.16+ ``metrics/`` directory with ``file``, ``latency``, ``size`` and ``caps`` (+ ``copyfrom`` rows).

A block starts with an ``item ...`` header and a dashed rule; headers are split on two
or more spaces (the ``total_sz(bytes)`` header is misaligned by a space), rows on
whitespace. Counter names in the long frame:

========== ============================================================ ==========
block      counters (item = read / write / metadata / copyfrom ...)       unit
========== ============================================================ ==========
latency    lat_ops (count), sum_lat_us, avg_lat_us, min_lat_us,           count, us
           max_lat_us, stdev_lat_us
size       size_ops (count), avg_sz_bytes, min_sz_bytes, max_sz_bytes,    count, bytes
           total_sz_bytes
caps       total, miss, hit (item d_lease / caps)                        count
file       opened_files, total_inodes, pinned_i_caps, opened_inodes       count
           (item ``inodes``)
========== ============================================================ ==========

``size/read total_sz_bytes`` is the bytes the client pulled from the OSDs: the
anchor counter of a readahead investigation. One row increment per OSD request.
"""
from __future__ import annotations

import re
from pathlib import PurePath
from typing import NamedTuple

import pandas as pd

from ..errors import ParseError
from ..schema import RejectRow
from ..sources import Collector, Input, Source, open_inputs
from ._common import CounterRow, finish, parse_int

SOURCE = "cephfs_metrics"

_LAT_COLS = {"total": ("lat_ops", "count", "counter"), "sum_lat(us)": ("sum_lat_us", "us", "counter"),
             "avg_lat(us)": ("avg_lat_us", "us", "gauge"), "min_lat(us)": ("min_lat_us", "us", "gauge"),
             "max_lat(us)": ("max_lat_us", "us", "gauge"), "stdev(us)": ("stdev_lat_us", "us", "gauge")}
_SIZE_COLS = {"total": ("size_ops", "count", "counter"), "avg_sz(bytes)": ("avg_sz_bytes", "bytes", "gauge"),
              "min_sz(bytes)": ("min_sz_bytes", "bytes", "gauge"), "max_sz(bytes)": ("max_sz_bytes", "bytes", "gauge"),
              "total_sz(bytes)": ("total_sz_bytes", "bytes", "counter")}
_CAPS_COLS = {"total": ("total", "count", "counter"), "miss": ("miss", "count", "counter"),
              "hit": ("hit", "count", "counter")}
_TAIL = re.compile(r"(?P<a>-?\d+)(?:/(?P<b>-?\d+))?")


class _FileRow(NamedTuple):
    label: str
    a: str
    b: str | None


def _file_row(line: str) -> _FileRow | None:
    """``<label>  <a>`` or ``<label a> / <label b>  <a> / <b>``, split on white space (no backtracking); else None."""
    toks = line.split()
    for k in (3, 2, 1):
        tail = "".join(toks[-k:])
        if len(toks) > k and (k == 1 or "/" in tail) and (m := _TAIL.fullmatch(tail)):
            return _FileRow(" ".join(toks[:-k]), m["a"], m["b"])
    return None
_NUM = re.compile(r"^-?\d+(?:\.\d+)?$")
_DECIMAL_END = re.compile(r"\d+\.\d+")  # a line's last token: linear, never scanned from every offset


_Mapping = dict[str, tuple[str, str, str]]


def _block_kind(cols: list[str]) -> tuple[str, _Mapping] | None:
    if any("lat" in c for c in cols):
        return "latency", _LAT_COLS
    if any("_sz" in c for c in cols):
        return "size", _SIZE_COLS
    if "miss" in cols and "hit" in cols:
        return "caps", _CAPS_COLS
    if cols == ["item", "total"]:
        return "file", {}
    return None


def _snake(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.strip().lower()).strip("_")


def _instance(name: str) -> str:
    """The client directory (``<fsid>.client<id>``) from a path, '' when absent."""
    parts = PurePath(name).parts
    for i, part in enumerate(parts):
        if part in ("metrics", "file", "latency", "size", "caps") and i > 0 and ".client" in parts[i - 1]:
            return parts[i - 1]
    for part in parts:
        if ".client" in part:
            return part
    return ""


def _parse(inp: Input, col: Collector, instance: str | None) -> tuple[list[CounterRow], set[str]]:
    """Rows and the kinds of block found; with ``strict`` the earliest bad line raises, and no block at all
    is a ParseError."""
    inst = _instance(inp.name) if instance is None else instance
    rows: list[CounterRow] = []
    kinds: set[str] = set()
    seen: dict[tuple[str, str], float] = {}
    lines = inp.text.splitlines()
    kind: str | None = None
    cols: list[str] = []
    mapping: _Mapping = {}
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip()
        if not line.strip():
            continue  # blank lines separate blocks; the next header decides the block
        if line.startswith("item"):
            cols = re.split(r"\s{2,}", line.strip())
            found = _block_kind(cols)
            if found is None:
                col.reject(n, raw, f"unknown metrics block header (columns {cols})")
                kind = None
                continue
            kind, mapping = found
            kinds.add(kind)
            continue
        if set(line.strip()) == {"-"}:
            continue
        if kind is None:
            col.reject(n, raw, "row outside a metrics block (expected an 'item ...' header first)")
            continue
        if kind == "file":
            m = _file_row(line)
            if not m:
                col.reject(n, raw, "expected '<label>  <n>' or '<a> / <b>  <n> / <m>' in the file block")
                continue
            labels = re.split(r"\s*/\s*", m.label) if m.b is not None else [m.label]
            values = [m.a, m.b] if m.b is not None else [m.a]
            if len(labels) != len(values):
                col.reject(n, raw, f"{len(labels)} labels for {len(values)} values")
                continue
            try:
                nums = [parse_int(val) for val in values]
            except ValueError as exc:
                col.reject(n, raw, str(exc))
                continue
            for lab, v in zip(labels, nums, strict=True):
                key = ("inodes", _snake(lab))
                if key in seen:
                    if seen[key] != v:
                        col.reject(n, raw, f"{lab!r} repeated with a different value ({seen[key]:g} before)")
                    continue
                seen[key] = v
                rows.append((SOURCE, inst, "inodes", key[1], v, "count", "gauge"))
            continue
        toks = line.split()
        if len(toks) != len(cols):
            col.reject(n, raw, f"expected {len(cols)} fields ({' '.join(cols)}), got {len(toks)}")
            continue
        if not all(_NUM.match(t) for t in toks[1:]):
            col.reject(n, raw, "non-numeric value in a metrics row")
            continue
        item = toks[0]
        for name, tok in zip(cols[1:], toks[1:], strict=True):
            counter, unit, ckind = mapping.get(name, (_snake(name), "", "gauge"))
            rows.append((SOURCE, inst, item, counter, float(tok), unit, ckind))
    col.check()
    if not kinds:
        first = next((ln for ln in lines if ln.strip()), "")
        raise ParseError(inp.name, 1, first, "no 'item ...' metrics block found; expected CephFS debugfs "
                         "metrics (header like 'item          total       avg_lat(us) ...')")
    return rows, kinds


def _layout(kinds: set[str], text: str) -> str:
    if "sum_lat(us)" in text:
        return "2020-proposal"
    if "opened files  / total inodes" in text or "/ total inodes" in text:
        return "5.11-5.15 (single file)"
    if "latency" in kinds and any(_DECIMAL_END.fullmatch(ln.rsplit(None, 1)[-1])
                                  for ln in text.splitlines() if ln.strip()):
        return "2020 (jiffies, decimal stdev)"
    if "copyfrom" in text or kinds <= {"file", "latency", "size", "caps"} and len(kinds) == 1:
        return "5.16+ (metrics/ directory)"
    return "single file"


def parse_cephfs_metrics(inp: Input, col: Collector, instance: str | None = None) -> list[CounterRow]:
    """Rows of one metrics text (any layout); ParseError when it holds no metrics block."""
    return _parse(inp, col, instance)[0]


def read_cephfs_metrics(source: Source, *, host: str = "", timestamp: float | None = None,
                        instance: str | None = None, strict: bool = False) -> pd.DataFrame:
    """Read CephFS debugfs metrics (any layout, a file, a ``metrics/`` dir or text).

    Returns the long counters frame (see :data:`workbench.counters.COUNTERS_SCHEMA`)
    with ``source='cephfs_metrics'``; ``instance`` is the client directory name when
    the path shows it. ``frame.attrs['layouts']`` lists the layout detected per input.
    Raises ParseError when an input holds no metrics block.
    """
    rows: list[CounterRow] = []
    rejects: list[RejectRow] = []
    layouts = {}
    for inp in open_inputs(source, "CephFS metrics", directories=True):
        col = Collector(inp.name, strict)
        inp = inp.complete(col)
        got, kinds = _parse(inp, col, instance)
        rows.extend(got)
        layouts[inp.name] = _layout(kinds, inp.text)
        rejects.extend(col.sorted_rows())
    out = finish(rows, rejects, host=host, timestamp=timestamp)
    out.attrs["layouts"] = layouts
    return out
