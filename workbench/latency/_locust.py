"""Locust ``PREFIX_stats_history.csv``."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..errors import ParseError
from ..sources import Collector, Input
from ._common import failure_warnings, finish, totals
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
                  resolution_s=1e-3, resolution_rule="integer ms, after Locust rounds each response time to "
                  "~2 significant digits (<100 ms: 1 ms, <1 s: 10 ms, <10 s: 100 ms, else 1 s)",
                  percentiles_over=over, timestamp_origin="epoch")


_STATS_HEADER = ["Type", "Name", "Request Count", "Failure Count"]
_STATS_SUMMARY = {
    "Request Count": "requests", "Failure Count": "failures", "Median Response Time": "median_ms",
    "Average Response Time": "average_ms", "Min Response Time": "min_ms", "Max Response Time": "max_ms",
    "Average Content Size": "average_content_bytes", "Requests/s": "requests_per_s", "Failures/s": "failures_per_s",
}
FAILURES_HEADER = ["Method", "Name", "Error", "Occurrences"]


def _failures_beside(name: str) -> tuple[str | None, dict[str, int]]:
    """``PREFIX_failures.csv`` next to a ``PREFIX_stats.csv`` file: (its path, {error: occurrences})."""
    import csv
    from pathlib import Path

    from ..sources import read_path

    if not name.endswith("_stats.csv"):
        return None, {}
    path = Path(name[: -len("_stats.csv")] + "_failures.csv")
    if not path.is_file():
        return None, {}
    out: dict[str, int] = {}
    rows = list(csv.reader(read_path(path).text.splitlines()))
    if not rows or rows[0][:4] != FAILURES_HEADER:
        return None, {}
    for r in rows[1:]:
        if len(r) >= 4 and r[3].strip().isdigit():
            key = f"{r[0]} {r[1]}: {r[2]}".strip()
            out[key] = out.get(key, 0) + int(r[3])
    return str(path), out


def read_locust_stats(inp: Input, col: Collector) -> pd.DataFrame:
    """Read Locust's ``PREFIX_stats.csv`` (the run's totals per endpoint) as a distribution.

    One row per (Name, percentile column): latency_s (ms / 1000, after Locust's
    ~2-significant-digit rounding), percentile, tag (Name; ``Aggregated`` is the
    whole run), request_type (Type). attrs["summary"]: per Name requests,
    failures, median/average/min/max ms, content size, rates as Locust prints
    them; attrs["totals"] from the Aggregated row, with ``errors`` from a
    ``PREFIX_failures.csv`` beside the file when there is one. Locust rewrites
    the file while it runs: the last write can lag the run's final console
    summary. Locust's percentiles include failed requests.
    """
    tab = split_table(inp, col, comments=False)
    header = tab.header
    pcts = [(h, float(m[1])) for h in header if (m := _PCT_RE.match(h))]
    if header[:4] != _STATS_HEADER or not pcts:
        raise ParseError(inp.name, tab.header_line, ",".join(header),
                         "expected Locust stats header: Type,Name,Request Count,Failure Count,…,50%,…,100%")
    df = tab.frame()
    vals = df[[h for h, _ in pcts]].apply(to_float)
    na = df[[h for h, _ in pcts]].apply(lambda s: s.astype(str).str.strip().eq("N/A"))
    reason = pd.Series("", index=df.index, dtype=object)
    reason[(vals.isna() & ~na).any(axis=1)] = "percentile columns: expected numbers (ms) or N/A"
    summary: dict[str, dict[str, float]] = {}
    for line in df.index:
        name = str(df.at[line, "Name"])
        s = {}
        for src, dst in _STATS_SUMMARY.items():
            if src in header:
                v = to_float(pd.Series([df.at[line, src]])).iloc[0]
                if pd.isna(v) and reason[line] == "":
                    reason[line] = f"{src}: expected a number"
                s[dst] = float(v)
        summary[name] = s
    for line in df.index[reason.ne("")]:
        col.reject(int(line), inp.line(int(line)), reason[line])
    use = reason.eq("") & ~na.all(axis=1)
    col.skip("rows without requests (N/A)", int((reason.eq("") & na.all(axis=1)).sum()))
    idx = df.index[use]
    k = len(pcts)
    frame = pd.DataFrame({
        "latency_s": vals.loc[idx].to_numpy(dtype="float64").reshape(-1) * 1e-3,
        "percentile": np.tile(np.array([p for _, p in pcts], dtype="float64"), len(idx)),
        "tag": np.repeat(df.loc[idx, "Name"].astype(str).to_numpy(dtype=object), k),
        "request_type": np.repeat(df.loc[idx, "Type"].to_numpy(dtype=object), k),
    })
    frame["tag"] = frame["tag"].astype(object)
    frame["request_type"] = frame["request_type"].astype(object)
    agg = summary.get("Aggregated") or (next(iter(summary.values())) if len(summary) == 1 else {})
    failures_file, errors = _failures_beside(inp.name)
    tot = totals(int(agg["requests"]) if "requests" in agg else None,
                 failures=int(agg["failures"]) if "failures" in agg else None, errors=errors,
                 included_in_latency="Locust's percentiles include failed requests")
    return finish(frame, DISTRIBUTION_SCHEMA, "distribution", "locust_stats", col, resolution_s=1e-3,
                  resolution_rule="integer ms, after Locust rounds each response time to ~2 significant digits",
                  summary=summary, totals=tot, warnings=failure_warnings(tot), failures_file=failures_file,
                  rows_from="the percentile columns of each row; 'Aggregated' is the whole run")


def read_locust_failures_text(inp: Input, col: Collector) -> pd.DataFrame:
    """Refuse Locust's ``PREFIX_failures.csv`` as latency: it counts failures by error, with no times."""
    raise ParseError(inp.name, 1, inp.line(1),
                     "this is Locust's PREFIX_failures.csv (failure counts by Method, Name, Error), which holds no "
                     "latencies; read PREFIX_stats.csv or PREFIX_stats_history.csv: a PREFIX_failures.csv beside "
                     "PREFIX_stats.csv is read into attrs['totals']['errors']")
