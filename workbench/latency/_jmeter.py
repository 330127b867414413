"""Apache JMeter JTL results in CSV form."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import ParseError
from ..sources import Collector, Input
from ._common import finish, iso_to_epoch
from ._csv import _retype
from ._schemas import SAMPLES_SCHEMA
from ._table import parse_bool, split_table, to_float

_MS_COLUMNS = {"Latency": "first_byte_s", "Connect": "connect_s", "IdleTime": "idle_s"}


def read_jmeter(inp: Input, col: Collector) -> pd.DataFrame:
    """Read a CSV JTL (header required; RFC 4180 quoting, so messages may hold commas).

    Columns: timestamp_s (timeStamp: epoch ms, or a date string taken as UTC),
    latency_s (elapsed ms), ok (success), first_byte_s / connect_s / idle_s (Latency,
    Connect, IdleTime ms) and every other column under its JTL name (label,
    responseCode, threadName, bytes, sentBytes, grpThreads, allThreads, URL, …).
    Transaction Controller parent samples, which repeat their children's time, are
    kept as written: filter them by label when summing.
    """
    tab = split_table(inp, col, comments=False)
    header = tab.header
    missing = [c for c in ("timeStamp", "elapsed") if c not in header]
    if missing:
        raise ParseError(inp.name, tab.header_line, ",".join(header),
                   f"JTL header lacks {missing}; expected CSV results saved with field names "
                   "(jmeter.save.saveservice.print_field_names=true)")
    df = tab.frame()
    reason = pd.Series("", index=df.index, dtype=object)
    el = to_float(df["elapsed"])
    reason[el.isna() | (el < 0)] = "elapsed: expected a non-negative integer (ms)"
    ts_txt = df["timeStamp"].astype(str).str.strip()
    ts_num = to_float(df["timeStamp"])
    if ts_num.notna().sum() >= len(df) / 2:
        ts = ts_num * 1e-3
        ts_rule = "epoch ms"
        reason[ts.isna() & reason.eq("")] = "timeStamp: expected epoch milliseconds"
    else:
        ts = iso_to_epoch(ts_txt)
        if ts.isna().any():
            alt = pd.to_datetime(ts_txt, format="mixed", utc=True, errors="coerce")
            arr = alt.dt.tz_convert(None).dt.as_unit("ns").to_numpy()
            vals = arr.view("int64").astype("float64") / 1e9
            vals[np.isnat(arr)] = np.nan
            ts = ts.fillna(pd.Series(vals, index=ts.index))
        ts_rule = "date string, taken as UTC"
        reason[ts.isna() & reason.eq("")] = "timeStamp: expected epoch ms or a date"
    ok = None
    if "success" in header:
        ok, okbad = parse_bool(df["success"])
        reason[pd.Series(okbad, index=df.index) & reason.eq("")] = "success: expected true/false"
    extra = {}
    for src, dst in _MS_COLUMNS.items():
        if src in header:
            v = to_float(df[src])
            reason[(v.isna() | (v < 0)) & reason.eq("")] = f"{src}: expected a non-negative number (ms)"
            extra[src] = (dst, v * 1e-3)
    keep = reason.eq("")
    for line in df.index[~keep]:
        col.reject(int(line), inp.line(int(line)), reason[line])
    out = pd.DataFrame(index=df.index[keep])
    for h in header:
        if h == "timeStamp":
            out["timestamp_s"] = ts[keep].astype("float64")
        elif h == "elapsed":
            out["latency_s"] = (el[keep] * 1e-3).astype("float64")
        elif h == "success" and ok is not None:
            out["ok"] = ok[keep].astype(bool)
        elif h in extra:
            out[extra[h][0]] = extra[h][1][keep].astype("float64")
        else:
            out[h] = _retype(df.loc[keep, h]) if not keep.all() else df[h]
    return finish(out, SAMPLES_SCHEMA, "samples", "jmeter", col, timestamp_rule=ts_rule,
                  resolution_s=1e-3, resolution_rule="JTL elapsed: integer ms",
                  timestamp_origin="epoch")
