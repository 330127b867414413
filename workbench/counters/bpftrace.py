"""bpftrace output: ``@map[key]: value`` lines, ``hist()``/``lhist()`` ASCII histograms, ``-f json``.

:func:`read_bpftrace` detects text or JSON output and returns a :class:`BpftraceOutput`:

- ``maps``: the long counters frame (``source='bpftrace'``, instance = file name, item = map
  key — multi-keys joined with ``,`` as bpftrace's JSON does —, counter = map name with its
  ``@``, unit from ``units={"@name": "bytes"}`` else ``''``). ``stats()`` maps give three
  counters ``@x:count``, ``@x:average``, ``@x:total``.
- ``hists``: one row per bucket (:data:`HIST_SCHEMA`), bounds half-open ``[lo, hi)`` in the
  map's value units whatever the input (JSON's inclusive ``min..max`` become ``[min, max+1)``;
  ``(..., 0)`` has lo = -inf, ``[10, ...)`` hi = +inf; ``K/M/G`` suffixes are powers of 1024).
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import pandas as pd

from ..errors import ParseError, UsageError
from ..schema import Column, RejectRow, Schema, attach_rejects, validate
from ..sources import Collector, Input, Source, open_inputs
from ._common import CounterRow, concat, finish, parse_count, parse_int

HIST_SCHEMA = Schema(
    name="bpftrace_hist",
    doc="Histogram buckets printed by bpftrace hist()/lhist(); one row per bucket.",
    columns=(
        Column("instance", "string", doc="input file name"),
        Column("map", "string", doc="map name with its @"),
        Column("key", "string", doc="map key ('' for an unkeyed histogram), multi-keys joined by ','"),
        Column("lo", "float", doc="lower bound, inclusive (value units; -inf for the negative bucket)"),
        Column("hi", "float", doc="upper bound, exclusive (+inf for the overflow bucket)"),
        Column("count", "int", "count", "events in the bucket"),
    ),
    extra_columns_allowed=False,
)


@dataclass(frozen=True)
class BpftraceOutput:
    """Parsed bpftrace output: scalar/keyed maps (long counters frame) and histogram buckets."""

    maps: pd.DataFrame
    hists: pd.DataFrame
    attached_probes: int | None


_MAP_LINE = re.compile(r"^@(?P<name>\w*)(?:\[(?P<key>.*)\])?:(?P<rest>.*)$")
_STATS = re.compile(r"^count (?P<count>-?\d+), average (?P<average>-?\d+), total (?P<total>-?\d+)$")
_BUCKET = re.compile(r"^(?P<label>\(\.\.\., [^)]*\)|\[[^\]\)]*[\]\)])\s+(?P<count>\d+)\s+\|[@ ]*\|\s*$")
_ATTACH = re.compile(r"^Attaching (\d+) probes?\.\.\.\s*$")
_SUFFIX = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5, "E": 1024**6}


#: one histogram bucket: (instance, map, key, lo, hi, count)
HistRow = tuple[str, str, str, float, float, int]


def _num(tok: str, label: str) -> float:
    m = re.fullmatch(r"(-?\d+)([KMGTPE]?)", tok.strip())
    if not m:
        raise UsageError(f"histogram bucket label {label!r}: bound {tok.strip()!r} is not an integer with an "
                         "optional K/M/G/T/P/E suffix")
    return parse_int(m[1]) * _SUFFIX[m[2]]


def bucket_bounds(label: str) -> tuple[float, float]:
    """``[lo, hi)`` of a text histogram label such as ``[4K, 8K)``, ``[0]``, ``(..., 0)``, ``[10, ...)``.

    A bound that is not an integer (with an optional K/M/G/T/P/E suffix) raises
    :class:`~workbench.errors.UsageError` (a ``ValueError``) naming the label.
    """
    if label.startswith("(..., "):
        return -math.inf, _num(label[6:-1], label)
    inner, close = label[1:-1], label[-1]
    parts = [p.strip() for p in inner.split(",")]
    lo = _num(parts[0], label)
    if len(parts) == 1:
        return lo, lo + 1
    if parts[1] == "...":
        return lo, math.inf
    hi = _num(parts[1], label)
    return lo, hi + 1 if close == "]" else hi


def _key(k: str | None) -> str:
    return "" if k is None else ",".join(p.strip() for p in k.split(","))


_Parsed = tuple[list[CounterRow], list[HistRow], int | None]


def _parse_text(inp: Input, inst: str, col: Collector, units: dict[str, str]) -> _Parsed:
    rows: list[CounterRow] = []
    hist: list[HistRow] = []
    attached = None
    current: tuple[str, str] | None = None
    for n, raw in enumerate(inp.text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        m = _ATTACH.match(line)
        if m:
            try:
                attached = parse_count(m[1])
            except ValueError as exc:
                col.reject(n, raw, f"attached probes: {exc}")
            continue
        m = _MAP_LINE.match(line)
        if m:
            name, key, rest = "@" + m["name"], _key(m["key"]), m["rest"].strip()
            unit = units.get(name, "")
            current = None
            if rest == "":
                current = (name, key)
            elif re.fullmatch(r"-?\d+", rest):
                try:
                    rows.append(("bpftrace", inst, key, name, parse_int(rest), unit, "counter"))
                except ValueError as exc:
                    col.reject(n, raw, f"map value: {exc}")
            elif s := _STATS.match(rest):
                try:
                    stats = {f: parse_int(s[f]) for f in ("count", "average", "total")}
                except ValueError as exc:
                    col.reject(n, raw, f"stats value: {exc}")
                    continue
                for f, v in stats.items():
                    rows.append(("bpftrace", inst, key, f"{name}:{f}", v, "count" if f == "count" else unit,
                                 "counter"))
            else:
                col.reject(n, raw, "map value is not an integer nor 'count N, average N, total N'")
            continue
        m = _BUCKET.match(line)
        if m:
            if current is None:
                col.reject(n, raw, "histogram bucket outside a '@name:' block")
                continue
            try:
                lo, hi = bucket_bounds(m["label"])
                count = parse_count(m["count"])
            except ValueError as exc:
                col.reject(n, raw, f"cannot read bucket {m['label']!r}: {exc}")
                continue
            hist.append((inst, current[0], current[1], lo, hi, count))
            continue
        col.reject(n, raw, "not a bpftrace map, stats or histogram line (printf output?)")
    return rows, hist, attached


def _json_buckets(inst: str, name: str, key: str, buckets: Any, n: int, col: Collector,
                  hist: list[HistRow]) -> None:
    if not isinstance(buckets, list):
        col.reject(n, json.dumps(buckets)[:200], "histogram data is not a list of buckets")
        return
    for b in buckets:
        if not isinstance(b, dict) or "count" not in b:
            col.reject(n, json.dumps(b)[:200], "bucket without a count")
            continue
        try:
            lo = float(b["min"]) if "min" in b else -math.inf
            hi = float(b["max"]) + 1 if "max" in b else math.inf
            count = parse_count(b["count"])
            if math.isnan(lo) or math.isnan(hi) or math.isinf(lo) and "min" in b or math.isinf(hi) and "max" in b:
                raise ValueError("bounds must be finite")
        except (TypeError, ValueError, OverflowError):
            col.reject(n, json.dumps(b)[:200], "bucket min, max and count must be numbers")
            continue
        hist.append((inst, name, key, lo, hi, count))


def _json_number(v: object) -> float | None:
    """A JSON number as a finite float, or None (text, bools, NaN/Infinity, integers past float range)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        x = float(v)
    except OverflowError:
        return None
    return x if math.isfinite(x) else None


def _parse_json(inp: Input, inst: str, col: Collector, units: dict[str, str]) -> _Parsed:
    rows: list[CounterRow] = []
    hist: list[HistRow] = []
    attached = None
    dec = json.JSONDecoder()
    text, pos = inp.text, 0
    n, counted = 1, 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        n += text.count("\n", counted, pos)  # line of this record, counted incrementally (linear)
        counted = pos
        try:
            rec, end = dec.raw_decode(text, pos)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, numbers over the digit limit, depth
            stop = text.find("\n", pos)
            stop = len(text) if stop < 0 else stop
            why = (exc.msg if isinstance(exc, json.JSONDecodeError) else
                   "nested deeper than a bpftrace record can be" if isinstance(exc, RecursionError) else str(exc))
            col.reject(n, text[pos:stop], f"invalid JSON: {why}")
            pos = stop + 1
            continue
        pos = end
        kind = rec.get("type") if isinstance(rec, dict) else None
        data = rec.get("data") if isinstance(rec, dict) else None
        if kind == "attached_probes" and isinstance(data, dict):
            probes = data.get("probes", 0)
            if isinstance(probes, int) and not isinstance(probes, bool):
                attached = probes
            else:
                col.reject(n, json.dumps(rec)[:200], "attached_probes count is not an integer")
            continue
        if kind not in ("map", "hist", "stats") or not isinstance(data, dict):
            col.reject(n, json.dumps(rec)[:200], f"record type {kind!r} is not map/hist/stats")
            continue
        for name, payload in data.items():
            unit = units.get(name, "")
            if kind == "hist":
                if isinstance(payload, dict):
                    for key, buckets in payload.items():
                        _json_buckets(inst, name, _key(key), buckets, n, col, hist)
                else:
                    _json_buckets(inst, name, "", payload, n, col, hist)
            elif kind == "stats":
                if not isinstance(payload, dict):
                    col.reject(n, f"{name}: {payload!r}"[:200], "stats value is not an object")
                    continue
                items = payload.items() if payload and all(isinstance(v, dict) for v in payload.values()) \
                    else [("", payload)]
                for key, st in items:
                    for f in ("count", "average", "total"):
                        v = st.get(f)
                        if v is None:
                            continue
                        x = _json_number(v)
                        if x is not None:
                            rows.append(("bpftrace", inst, _key(key), f"{name}:{f}", x,
                                         "count" if f == "count" else unit, "counter"))
                        else:
                            col.reject(n, f"{name}[{key}] {f}: {v!r}"[:200], f"stats {f} is not a finite number")
            elif isinstance(payload, dict):
                for key, v in payload.items():
                    x = _json_number(v)
                    if x is not None:
                        rows.append(("bpftrace", inst, _key(key), name, x, unit, "counter"))
                    else:
                        col.reject(n, f"{name}[{key}]: {v!r}"[:200], "map value is not a finite number")
            elif (x := _json_number(payload)) is not None:
                rows.append(("bpftrace", inst, "", name, x, unit, "counter"))
            else:
                col.reject(n, f"{name}: {payload!r}"[:200], "map value is not a finite number")
    return rows, hist, attached


def _none_found(inp: Input, col: Collector, fmt: str) -> ParseError:
    col.check()
    first = next((ln for ln in inp.text.splitlines() if ln.strip()), "")
    return ParseError(inp.name, 1, first, f"no bpftrace map or histogram found ({fmt} output expected)")


def parse_bpftrace_maps(inp: Input, col: Collector, units: dict[str, str] | None = None) -> list[CounterRow]:
    """Map rows (no histograms) of one bpftrace output, text or JSON; ParseError when none."""
    inst = PurePath(inp.name).name if not inp.name.startswith("<") else ""
    fmt = "json" if inp.text.lstrip().startswith("{") else "text"
    rows, hist, _ = (_parse_json if fmt == "json" else _parse_text)(inp, inst, col, units or {})
    if not rows and not hist:
        raise _none_found(inp, col, fmt)
    return rows


def read_bpftrace(source: Source, *, host: str = "", timestamp: float | None = None,
                  units: dict[str, str] | None = None, format: str | None = None,
                  instance: str | None = None, strict: bool = False) -> BpftraceOutput:
    """Read bpftrace text or ``-f json`` output (detected, or ``format='text'|'json'``).

    Returns :class:`BpftraceOutput` (``maps`` long counters frame, ``hists`` bucket frame,
    ``attached_probes``); both frames carry every input's rejected lines. Raises ParseError
    when an input holds no map at all (``strict``: its first bad line).
    """
    if format not in (None, "text", "json"):
        raise UsageError(f"read_bpftrace: format={format!r}; expected 'text', 'json' or None (detect)")
    units = units or {}
    frames: list[pd.DataFrame] = []
    hists: list[HistRow] = []
    attached = None
    all_rej: list[RejectRow] = []
    for inp in open_inputs(source, "bpftrace output", directories=True):
        inst = instance if instance is not None else (
            PurePath(inp.name).name if not inp.name.startswith("<") else "")
        col = Collector(inp.name, strict)
        fmt = format or ("json" if inp.text.lstrip().startswith("{") else "text")
        if fmt == "text":  # (JSON output is judged whole by its parser)
            inp = inp.complete(col)
        rows, hist, att = (_parse_json if fmt == "json" else _parse_text)(inp, inst, col, units)
        if not rows and not hist:
            raise _none_found(inp, col, fmt)
        col.check()
        attached = att if att is not None else attached
        frames.append(finish(rows, col.sorted_rows(), host=host, timestamp=timestamp))
        hists.extend(hist)
        all_rej.extend(col.sorted_rows())
    h = pd.DataFrame(hists, columns=["instance", "map", "key", "lo", "hi", "count"])
    h = h.astype({"lo": "float64", "hi": "float64", "count": "int64"})
    for c in ("instance", "map", "key"):
        h[c] = h[c].astype(object)
    attach_rejects(h, all_rej)
    return BpftraceOutput(maps=concat(frames), hists=validate(h, HIST_SCHEMA), attached_probes=attached)
