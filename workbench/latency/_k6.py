"""k6 JSON-lines output (``k6 run --out json=FILE``, optionally gzipped)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import ParseError
from ..sources import Collector, Input
from ._common import failure_warnings, finish, iso_to_epoch, totals, value_step
from ._json import number, parse_json
from ._schemas import DISTRIBUTION_SCHEMA, SAMPLES_SCHEMA

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
            rec = parse_json(s)
        except ValueError as e:
            col.reject(n, raw[:200], f"not a JSON object ({getattr(e, 'msg', e)}); expected one k6 JSON record per line")
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


_STAT_PCT = {"min": 0.0, "med": 50.0, "max": 100.0}


def looks_like_k6_summary(obj: object) -> bool:
    """k6's end-of-test summary JSON: ``metrics`` of trend stats (``--summary-export`` or handleSummary)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("metrics"), dict):
        return False
    for v in obj["metrics"].values():
        stats = v.get("values", v) if isinstance(v, dict) else None
        if isinstance(stats, dict) and ("med" in stats or any(str(k).startswith("p(") for k in stats)):
            return True
    return False


def read_k6_summary(inp: Input, col: Collector, *, metric: str = "http_req_duration") -> pd.DataFrame:
    """Read k6's end-of-test summary JSON (``--summary-export`` or ``handleSummary``'s data) for one trend.

    A distribution of k6's own statistics of ``metric`` (ms): min → percentile 0,
    med → 50, each ``p(N)`` → N, max → 100 (avg and count in attrs["summary"]).
    Both shapes are read: legacy flat stats, and ``{"type": "trend", "values": {…}}``.
    attrs["totals"]: requests from ``http_reqs.count``; failures from
    ``http_req_failed`` — whose ``passes`` count the **failed** requests (a Rate
    metric counts samples equal to 1) — and the other sub-metrics in
    attrs["submetrics"] (e.g. ``http_req_duration{expected_response:true}``).
    """
    from ._json import load_json

    obj = load_json(inp, "k6 summary")
    metrics = obj.get("metrics")
    if not isinstance(metrics, dict) or metric not in metrics or not isinstance(metrics[metric], dict):
        raise ParseError(inp.name, None, "", f"k6 summary without metrics[{metric!r}]; pass metric= naming a trend")
    entry = metrics[metric]
    stats = entry.get("values", entry)
    if entry.get("contains") not in (None, "time"):
        raise ParseError(inp.name, None, "", f"k6 metric {metric!r} is {entry.get('contains')!r}, not a time trend")
    rows: list[tuple[float, float]] = []
    summary: dict[str, float] = {}
    for k, v in stats.items():
        x = number(v)
        if x is None:
            if k != "thresholds":
                col.reject(0, f"{metric}.{k}", "expected a number (ms)")
            continue
        if k in _STAT_PCT:
            rows.append((_STAT_PCT[k], x * 1e-3))
        elif k.startswith("p(") and k.endswith(")") and number_text(k[2:-1]) is not None:
            rows.append((float(k[2:-1]), x * 1e-3))
        summary[k] = x
    rows.sort()
    frame = pd.DataFrame({"latency_s": [v for _, v in rows], "percentile": [p for p, _ in rows]})

    def stat(name: str, key: str) -> float | None:
        m = metrics.get(name)
        if not isinstance(m, dict):
            return None
        return number(m.get("values", m).get(key))

    reqs = stat("http_reqs", "count")
    failed = stat("http_req_failed", "passes")
    tot = totals(int(reqs) if reqs is not None else None, failures=int(failed) if failed is not None else None,
                 included_in_latency=f"k6's {metric} covers every request, failed ones included "
                 "(its {expected_response:true} sub-metric excludes them)")
    subs = {k: v.get("values", v) for k, v in metrics.items() if k.startswith(metric + "{") and isinstance(v, dict)}
    return finish(frame, DISTRIBUTION_SCHEMA, "distribution", "k6_summary", col,
                  resolution_s=None, resolution_rule="k6 writes float ms (full precision)", metric=metric,
                  summary=summary, totals=tot, warnings=failure_warnings(tot), submetrics=subs,
                  rows_from="k6's min (0), med (50), p(N) (N), max (100)")


def number_text(s: str) -> float | None:
    """A float from text, or None."""
    try:
        return float(s)
    except ValueError:
        return None
