"""Locust ``PREFIX_stats_history.csv``."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..errors import ParseError
from ..sources import Collector, Input
from ._common import finish
from ._schemas import DISTRIBUTION_SCHEMA
from ._table import split_table, to_float

_PCT_RE = re.compile(r"^(\d+(?:\.\d+)?)%$")
_CARRY = {
    "User Count": "user_count",
    "Requests/s": "requests_per_s",
    "Failures/s": "failures_per_s",
    "Total Request Count": "total_request_count",
    "Total Failure Count": "total_failure_count",
}


def read_locust(inp: Input, col: Collector) -> pd.DataFrame:
    """Read Locust's stats history as a distribution, one row per (row, percentile column).

    Columns: timestamp_s (epoch s), tag (Name: endpoint or "Aggregated"),
    request_type (Type), percentile, latency_s (ms / 1000; Locust rounds response
    times to ~2 significant digits), user_count, requests_per_s, failures_per_s,
    total_request_count, total_failure_count.

    The percentiles are **cumulative over the run so far** in a default history
    file; with ``--csv-full-history`` (rows per endpoint) they cover Locust's ~10 s
    sliding window (attrs["percentiles_over"]). Rows before the first request
    (``N/A``) and full-history rows whose window is empty (all 0) are counted in
    attrs["skipped"].
    """
    tab = split_table(inp, col, comments=False)
    header = tab.header
    pcts = [(h, float(m[1])) for h in header if (m := _PCT_RE.match(h))]
    missing = [h for h in ("Timestamp", "Name") if h not in header]
    if missing or not pcts:
        raise ParseError(inp.name, tab.header_line, ",".join(header),
                   "expected Locust stats_history header: Timestamp,User Count,Type,Name,Requests/s,"
                   "Failures/s,50%,…,Total Request Count,…")
    df = tab.frame()
    full_history = bool((df["Name"] != "Aggregated").any())
    pct_cols = df[[h for h, _ in pcts]]
    na = pct_cols.apply(lambda s: s.astype(str).str.strip().eq("N/A"))
    vals = pct_cols.apply(to_float)
    ts = to_float(df["Timestamp"])
    reason = pd.Series("", index=df.index, dtype=object)
    reason[ts.isna()] = "Timestamp: expected integer epoch seconds"
    partial = ~na.all(axis=1) & (vals.isna() & ~na).any(axis=1)
    reason[partial & reason.eq("")] = "percentile columns: expected numbers (ms) or N/A"
    mixed = na.any(axis=1) & ~na.all(axis=1) & reason.eq("")
    reason[mixed] = "percentile columns: some N/A, some numbers"
    carried = {}
    for src, dst in _CARRY.items():
        if src in header:
            v = to_float(df[src])
            reason[v.isna() & reason.eq("")] = f"{src}: expected a number"
            carried[dst] = v
    for line in df.index[reason.ne("")]:
        col.reject(int(line), inp.line(int(line)), reason[line])
    ok_rows = reason.eq("")
    no_data = ok_rows & na.all(axis=1)
    col.skip("rows before the first request (N/A)", int(no_data.sum()))
    empty_window = pd.Series(False, index=df.index)
    if full_history and "total_request_count" in carried:
        empty_window = ok_rows & ~no_data & vals.fillna(0).eq(0).all(axis=1) & carried["total_request_count"].gt(0)
        col.skip("full-history rows with an empty sliding window (all 0)", int(empty_window.sum()))
    use = ok_rows & ~no_data & ~empty_window
    idx = df.index[use]
    n = len(idx)
    k = len(pcts)
    frame = pd.DataFrame({
        "timestamp_s": np.repeat(ts[idx].to_numpy(dtype="float64"), k),
        "tag": np.repeat(df.loc[idx, "Name"].to_numpy(dtype=object), k),
        "request_type": np.repeat(df.loc[idx, "Type"].to_numpy(dtype=object), k) if "Type" in header
        else np.full(n * k, np.nan, dtype=object),
        "percentile": np.tile(np.array([p for _, p in pcts], dtype="float64"), n),
        "latency_s": vals.loc[idx].to_numpy(dtype="float64").reshape(-1) * 1e-3,
    })
    for dst, v in carried.items():
        arr = v[idx].to_numpy(dtype="float64")
        if dst.endswith("_count"):
            frame[dst] = np.repeat(arr.astype("int64"), k)
        else:
            frame[dst] = np.repeat(arr, k)
    frame["tag"] = frame["tag"].astype(object)
    frame["request_type"] = frame["request_type"].astype(object)
    over = ("last ~10 s (sliding window, --csv-full-history)" if full_history
            else "run so far (cumulative)")
    return finish(frame, DISTRIBUTION_SCHEMA, "distribution", "locust", col, cumulative=not full_history,
                  percentiles_over=over, timestamp_origin="epoch")
