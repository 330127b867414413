"""fortio JSON results (``fortio load -json``)."""
from __future__ import annotations

from typing import Any

import pandas as pd

from ..errors import ParseError
from ..sources import Collector, Input
from ._common import finish, iso_to_epoch
from ._json import compact, entries, load_json, number
from ._schemas import DISTRIBUTION_SCHEMA


def read_fortio(inp: Input, col: Collector) -> pd.DataFrame:
    """Read a fortio result's DurationHistogram as a distribution.

    Columns: latency_s (bucket End), bucket_start_s (bucket Start), count,
    cumulative_count and percentile (fortio's cumulative Percent). attrs:
    reported_percentiles_s (fortio's interpolated Percentiles), summary (RunType,
    StartTime, start_time_s, RequestedQPS, ActualQPS, actual_duration_s, NumThreads,
    Version, RetCodes, URL, count, min_s, max_s, avg_s, stddev_s, errors_count,
    Uniform, Jitter, NoCatchUp when present).
    """
    obj = load_json(inp, "fortio result")
    dh = obj.get("DurationHistogram")
    if not isinstance(dh, dict):
        raise ParseError(inp.name, None, "", "not a fortio result: expected a DurationHistogram object")
    data = entries(inp, dh, "Data", "DurationHistogram.")
    if not data:
        raise ParseError(inp.name, None, "", "fortio DurationHistogram has no Data buckets")
    rows: list[tuple[float, float, float, float]] = []
    for i, b in enumerate(data):
        start, end, pct, count = (number(b.get(k)) if isinstance(b, dict) else None
                                  for k in ("Start", "End", "Percent", "Count"))
        if (start is None or end is None or pct is None or count is None
                or count < 0 or count != int(count) or end < start):
            col.reject(0, compact(b), f"Data[{i}]: expected Start <= End (s), Percent and integer Count")
            continue
        rows.append((start, end, pct, count))
    frame = pd.DataFrame(rows, columns=["bucket_start_s", "latency_s", "percentile", "count"])
    frame = frame.astype({"bucket_start_s": "float64", "latency_s": "float64", "percentile": "float64",
                          "count": "int64"})
    frame["cumulative_count"] = frame["count"].cumsum().astype("int64")
    frame = frame[["latency_s", "percentile", "count", "cumulative_count", "bucket_start_s"]]
    reported: dict[float, float] = {}
    for i, p in enumerate(entries(inp, dh, "Percentiles", "DurationHistogram.")):
        pk, pv = (number(p.get("Percentile")), number(p.get("Value"))) if isinstance(p, dict) else (None, None)
        if pk is None or pv is None:
            col.reject(0, compact(p), f"Percentiles[{i}]: expected Percentile and Value numbers")
            continue
        reported[pk] = pv
    summary: dict[str, Any] = {}
    for k in ("RunType", "Labels", "StartTime", "RequestedQPS", "RequestedDuration", "ActualQPS", "NumThreads",
              "Version", "RetCodes", "URL", "Destination", "Uniform", "Jitter", "NoCatchUp", "Exactly"):
        if k in obj:
            summary[k] = obj[k]
    actual = number(obj.get("ActualDuration"))
    if actual is not None:
        summary["actual_duration_s"] = actual * 1e-9
    if isinstance(obj.get("StartTime"), str):
        summary["start_time_s"] = float(iso_to_epoch(pd.Series([obj["StartTime"]], dtype=object)).iloc[0])
    for k, name in (("Count", "count"), ("Min", "min_s"), ("Max", "max_s"), ("Avg", "avg_s"), ("StdDev", "stddev_s")):
        if k in dh:
            summary[name] = dh[k]
    edh = obj.get("ErrorsDurationHistogram")
    if isinstance(edh, dict):
        summary["errors_count"] = edh.get("Count")
    res = number(obj.get("Resolution"))
    return finish(frame, DISTRIBUTION_SCHEMA, "distribution", "fortio", col,
                  resolution_s=res, resolution_rule="fortio's Resolution field (seconds)" if res is not None
                  else "fortio float seconds; no Resolution field in the file",
                  reported_percentiles_s=reported, summary=summary)
