"""k6 JSON-lines output (``k6 run --out json=FILE``, optionally gzipped)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ..errors import ParseError
from ..sources import Collector, Input
from ._common import finish, iso_to_epoch, value_step
from ._json import number
from ._schemas import SAMPLES_SCHEMA

_RESERVED = {"latency_s", "timestamp_s", "end_timestamp_s", "ok"}


def read_k6(inp: Input, col: Collector, *, metric: str = "http_req_duration") -> pd.DataFrame:
    """Read ``Point`` records of one time metric (default ``http_req_duration``, ms).

    Columns: latency_s; end_timestamp_s (the point's time: k6 stamps a request's
    samples when it ends); timestamp_s = end − duration (start of sending, after
    any connection set-up); ok from the ``expected_response`` tag when every point
    has it; every tag as a column (``tag_`` prefix on a name clash). Metric
    declarations and points of other metrics are counted in attrs["skipped"].
    """
    rows: list[tuple[int, float, str, dict]] = []
    declared = None
    for n, raw in enumerate(inp.text.splitlines(), start=1):
        s = raw.strip()
        if not s:
            continue
        try:
            rec = json.loads(s)
        except json.JSONDecodeError as e:
            col.reject(n, raw, f"not a JSON object ({e.msg}); expected one k6 JSON record per line")
            continue
        if not isinstance(rec, dict) or rec.get("type") not in ("Metric", "Point") or "metric" not in rec:
            col.reject(n, raw, 'expected {"type": "Metric"|"Point", "data": …, "metric": …}')
            continue
        name = rec["metric"]
        data = rec.get("data")
        if rec["type"] == "Metric":
            if name == metric and isinstance(data, dict):
                declared = data
            col.skip("Metric declarations")
            continue
        if name != metric:
            col.skip(f"Point {name}")
            continue
        if not isinstance(data, dict):
            col.reject(n, raw, "Point without a data object")
            continue
        v = number(data.get("value"))
        t = data.get("time")
        if v is None or v < 0 or not isinstance(t, str):
            col.reject(n, raw, "expected data.value (non-negative ms) and data.time (RFC 3339)")
            continue
        tags = data.get("tags") or {}
        rows.append((n, v * 1e-3, t, tags if isinstance(tags, dict) else {}))
    if declared is not None and declared.get("contains") not in (None, "time"):
        raise ParseError(inp.name, None, "", f"k6 metric {metric!r} is declared as {declared.get('contains')!r}, "
                                         "not a time metric; pass metric= naming a time metric")
    if not rows:
        col.check()
        if not col.skipped:
            raise ParseError(inp.name, None, "", 'no k6 JSON records found: expected one {"type": "Metric"|"Point", …} object per line')
        raise ParseError(inp.name, None, "", f"no Point records of metric {metric!r} "
                                        f"(found: {', '.join(sorted(col.skipped))})")
    lines = [r[0] for r in rows]
    end = iso_to_epoch(pd.Series([r[2] for r in rows], dtype=object))
    bad = end.isna().to_numpy()
    for i in np.nonzero(bad)[0]:
        col.reject(lines[i], inp.line(lines[i]), "data.time is not RFC 3339")
    keep = [r for r, b in zip(rows, bad, strict=True) if not b]
    lat = np.array([r[1] for r in keep], dtype="float64")
    end_v = end[~bad].to_numpy(dtype="float64")
    frame = pd.DataFrame({"timestamp_s": end_v - lat, "latency_s": lat, "end_timestamp_s": end_v})
    keys: list[str] = []
    for r in keep:
        for k in r[3]:
            if k not in keys:
                keys.append(k)
    for k in keys:
        colname = f"tag_{k}" if k in _RESERVED else k
        frame[colname] = pd.Series([r[3].get(k, np.nan) for r in keep], dtype=object)
    if "expected_response" in keys and frame["expected_response"].notna().all():
        frame["ok"] = frame["expected_response"].astype(str).str.lower().eq("true")
    return finish(frame, SAMPLES_SCHEMA, "samples", "k6", col, metric=metric, timestamp_origin="epoch",
                  resolution_s=value_step(lat) if len(lat) else None,
                  resolution_rule="decimal step of the JSON values (k6 writes float ms)")
