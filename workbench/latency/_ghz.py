"""ghz JSON reports (``ghz -O json``)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..errors import ParseError
from ..sources import Collector, Input
from ._common import finish, iso_to_epoch
from ._json import compact, entries, load_json, number
from ._schemas import DISTRIBUTION_SCHEMA, SAMPLES_SCHEMA

_NS = 1e-9


def _summary(obj: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in ("date", "name", "endReason", "count", "rps", "errorDistribution", "statusCodeDistribution", "options"):
        if k in obj:
            out[k] = obj[k]
    for k in ("total", "average", "fastest", "slowest"):
        v = number(obj.get(k))
        if v is not None:
            out[f"{k}_s"] = v * _NS
    return out


def read_ghz(inp: Input, col: Collector) -> pd.DataFrame:
    """Read a ghz JSON report.

    With ``details``: samples (latency_s from integer ns, timestamp_s from RFC 3339,
    ok = no error and status OK, columns status and error). Without: a distribution
    from ``histogram`` (latency_s = bucket mark, count, cumulative_count,
    percentile) or else from ``latencyDistribution`` (latency_s, percentile).
    attrs: summary (count, rps, total/average/fastest/slowest in s, …) and
    reported_percentiles_s. Bad entries are rejects with line 0 and the entry's JSON.
    """
    obj = load_json(inp, "ghz report")
    reported: dict[float, float] = {}
    for i, e in enumerate(entries(inp, obj, "latencyDistribution")):
        p, v = (number(e.get("percentage")), number(e.get("latency"))) if isinstance(e, dict) else (None, None)
        if p is None or v is None:
            col.reject(0, compact(e), f"latencyDistribution[{i}]: expected percentage and latency (ns) numbers")
            continue
        reported[p] = v * _NS
    attrs: dict[str, Any] = {"summary": _summary(obj), "reported_percentiles_s": reported}
    details = entries(inp, obj, "details")
    if details:
        rows: list[tuple[int, float, Any, Any, Any]] = []
        for i, d in enumerate(details):
            lat = number(d.get("latency")) if isinstance(d, dict) else None
            if lat is None or lat < 0:
                col.reject(0, compact(d), f"details[{i}]: expected a non-negative latency in ns")
                continue
            err = d.get("error") or ""
            status = d.get("status") or ""
            rows.append((i, lat * _NS, d.get("timestamp"), status, err))
        df = pd.DataFrame(rows, columns=["index", "latency_s", "ts", "status", "error"])
        ts = iso_to_epoch(df["ts"].astype(object))
        bad = ts.isna() & df["ts"].notna()
        for k in df.loc[bad, "index"].astype("int64"):
            col.reject(0, compact(details[int(k)]), f"details[{int(k)}]: timestamp is not RFC 3339")
        df = df[~bad]
        frame = pd.DataFrame({
            "timestamp_s": ts[~bad].astype("float64"),
            "latency_s": df["latency_s"].astype("float64"),
            "ok": (df["error"].eq("") & df["status"].isin(["OK", ""])).astype(bool),
            "status": df["status"].astype(object),
            "error": df["error"].astype(object),
        })
        attrs["timestamp_origin"] = "epoch"
        return finish(frame, SAMPLES_SCHEMA, "samples", "ghz", col, resolution_s=1e-9,
                      resolution_rule="ghz details: Go durations in integer ns", **attrs)
    hist = entries(inp, obj, "histogram")
    if hist:
        buckets: list[tuple[float, int]] = []
        for i, b in enumerate(hist):
            m, c = (number(b.get("mark")), b.get("count")) if isinstance(b, dict) else (None, None)
            if m is None or not isinstance(c, int) or isinstance(c, bool) or c < 0:
                col.reject(0, compact(b), f"histogram[{i}]: expected mark (s) and a non-negative integer count")
                continue
            buckets.append((m, c))
        frame = pd.DataFrame(buckets, columns=["latency_s", "count"]).astype({"latency_s": "float64", "count": "int64"})
        frame["cumulative_count"] = frame["count"].cumsum().astype("int64")
        total = int(frame["count"].sum())
        frame["percentile"] = (100.0 * frame["cumulative_count"] / total) if total else np.nan
        frame["percentile"] = frame["percentile"].astype("float64")
        return finish(frame, DISTRIBUTION_SCHEMA, "distribution", "ghz", col, rows_from="histogram",
                      resolution_s=None, resolution_rule="ghz histogram marks: float seconds (10 equal buckets)",
                      **attrs)
    if reported:
        frame = pd.DataFrame({"latency_s": list(reported.values()), "percentile": list(reported.keys())},
                             dtype="float64")
        return finish(frame, DISTRIBUTION_SCHEMA, "distribution", "ghz", col, rows_from="latencyDistribution",
                      resolution_s=1e-9, resolution_rule="ghz latencyDistribution: Go durations in integer ns",
                      **attrs)
    col.check()
    raise ParseError(inp.name, None, "", "ghz report has no details, histogram or latencyDistribution to read")
