"""Time-series database exports as CSV: ``timestamp,host,metric,labels,value``.

The plain shape most TSDBs can export (Prometheus ``/api/v1/query_range`` flattened,
InfluxDB CSV, Graphite render ``format=csv`` after a rename). ``timestamp`` is seconds
since the epoch; ``labels`` is ``k=v;k=v`` (may be empty). Metrics ending in ``_total``
are counters, others gauges; ``unit`` is ``bytes`` for names containing ``bytes``, else
``count``. Returns the long counters frame (``source='tsdb'``, item = the ``device``
label when present, else the whole label string).
"""
from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator

import pandas as pd

from ..errors import ParseError
from ..sources import Collector, Source, open_inputs
from ._common import CounterRow, concat, finish_snapshots

REQUIRED = ("timestamp", "host", "metric", "value")


def _labels(s: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in s.split(";"))):
        k, _, v = part.partition("=")
        out[k.strip()] = v.strip()
    return out


def read_tsdb_csv(source: Source, *, strict: bool = False) -> pd.DataFrame:
    """Read a TSDB CSV export (columns timestamp, host, metric, [labels,] value) into the long frame."""
    frames = []
    for inp in open_inputs(source, "TSDB CSV", directories=True):
        col = Collector(inp.name, strict)
        inp = inp.complete(col)
        reader = csv.reader(io.StringIO(inp.text))
        try:
            by_ts = _records(inp.name, reader, col)
        except csv.Error as exc:
            raise ParseError(inp.name, reader.line_num, inp.line(reader.line_num), f"not a readable CSV: {exc}") \
                from None
        col.check()
        # one frame for the whole file (a frame per timestamp made a 25 kB export take seconds)
        frames.append(finish_snapshots([(t, h, *r) for (t, h), rows in sorted(by_ts.items()) for r in rows],
                                       col.sorted_rows()))
    return concat(frames)


def _records(name: str, reader: Iterator[list[str]], col: Collector) -> dict[tuple[float, str], list[CounterRow]]:
    """Readings grouped by (timestamp, host); bad records go to ``col``."""
    header = next(reader, None)
    if header is None or any(c not in header for c in REQUIRED):
        raise ParseError(name, 1, ",".join(header or []),
                         f"TSDB CSV needs a header with columns {', '.join(REQUIRED)} (and optional labels)")
    idx = {c: header.index(c) for c in header}
    by_ts: dict[tuple[float, str], list[CounterRow]] = {}
    for n, rec in enumerate(reader, 2):
        if not rec or all(not c.strip() for c in rec):
            continue
        if len(rec) != len(header):
            col.reject(n, ",".join(rec), f"expected {len(header)} fields, got {len(rec)}")
            continue
        try:
            ts = float(rec[idx["timestamp"]])
            val = float(rec[idx["value"]])
        except ValueError:
            col.reject(n, ",".join(rec), f"timestamp and value must be numbers, got "
                       f"{rec[idx['timestamp']]!r} and {rec[idx['value']]!r}")
            continue
        if not math.isfinite(ts):
            col.reject(n, ",".join(rec), "timestamp is not finite")
            continue
        metric = rec[idx["metric"]]
        lab = rec[idx["labels"]] if "labels" in idx else ""
        labels = _labels(lab)
        item = labels.get("device", lab)
        unit = "bytes" if "bytes" in metric else "count"
        kind = "counter" if metric.endswith("_total") else "gauge"
        host = rec[idx["host"]]
        by_ts.setdefault((ts, host), []).append(("tsdb", "", item, metric, val, unit, kind))
    return by_ts
