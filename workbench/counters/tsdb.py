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

import pandas as pd

from ..errors import ParseError
from ._common import Collector, Source, concat, finish, open_inputs

REQUIRED = ("timestamp", "host", "metric", "value")


def _labels(s: str) -> dict[str, str]:
    out = {}
    for part in filter(None, (p.strip() for p in s.split(";"))):
        k, _, v = part.partition("=")
        out[k.strip()] = v.strip()
    return out


def read_tsdb_csv(source: Source, *, strict: bool = False) -> pd.DataFrame:
    """Read a TSDB CSV export (columns timestamp, host, metric, [labels,] value) into the long frame."""
    frames = []
    for inp in open_inputs(source, "TSDB CSV"):
        col = Collector(inp.name, strict)
        reader = csv.reader(io.StringIO(inp.text))
        header = next(reader, None)
        if header is None or any(c not in header for c in REQUIRED):
            raise ParseError(inp.name, 1, ",".join(header or []),
                             f"TSDB CSV needs a header with columns {', '.join(REQUIRED)} (and optional labels)")
        idx = {c: header.index(c) for c in header}
        by_ts: dict[float, tuple[str, list[tuple]]] = {}
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
                col.reject(n, ",".join(rec), "timestamp and value must be numbers")
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
        parts = [finish(rows, [], host=h, timestamp=t) for (t, h), rows in sorted(by_ts.items())]
        f = concat(parts) if parts else finish([], [])
        from ..schema import attach_rejects

        attach_rejects(f, col.rows)
        frames.append(f)
    return concat(frames)
