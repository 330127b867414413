"""hey CSV output (``hey -o csv``): 6-, 7- and 8-column variants."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import ParseError
from ..sources import Collector, Input
from ._common import finish, printed_step
from ._schemas import SAMPLES_SCHEMA
from ._table import split_table, to_float

_NAMES = {
    "response-time": "latency_s",
    "DNS+dialup": "dns_dialup_s",
    "DNS": "dns_s",
    "Request-write": "request_write_s",
    "Response-delay": "response_delay_s",
    "Response-read": "response_read_s",
    "status-code": "status_code",
    "offset": "timestamp_s",
}


def read_hey(inp: Input, col: Collector) -> pd.DataFrame:
    """Read hey's CSV; returns samples.

    Columns: latency_s (response-time), dns_dialup_s, dns_s, request_write_s,
    response_delay_s, response_read_s (all seconds, printed to 0.1 ms),
    status_code (7- and 8-column versions) and timestamp_s = offset, seconds from
    the start of the run (8-column version; attrs["timestamp_origin"] == "relative").
    hey writes only requests that got a response (transport errors are not in the file).
    """
    tab = split_table(inp, col, comments=False)
    if not tab.header or tab.header[0] != "response-time":
        raise ParseError(inp.name, tab.header_line, ",".join(tab.header),
                   "expected hey's header starting 'response-time,DNS+dialup,DNS,…'")
    df = tab.frame()
    bad_reason = pd.Series("", index=df.index, dtype=object)
    columns: dict[str, pd.Series] = {}  # joined once: wide files stay linear
    for h in tab.header:
        name = _NAMES.get(h, h)
        if name.endswith("_s") or name == "status_code":
            v = to_float(df[h])
            bad = v.isna() | (v < 0) | ~np.isfinite(v.fillna(0))
            if name == "status_code":
                bad |= v.notna() & ((v != np.floor(v)) | (v > 999))
            bad_reason[bad & bad_reason.eq("")] = (f"{h}: expected an HTTP status code (0–999)" if name == "status_code"
                                                   else f"{h}: expected a finite non-negative number")
            columns[name] = v
        else:
            columns[name] = df[h]
    out = pd.concat(columns, axis=1) if columns else pd.DataFrame(index=df.index)
    keep = bad_reason.eq("")
    for line in df.index[~keep]:
        col.reject(int(line), inp.line(int(line)), bad_reason[line])
    out = out[keep]
    for c in out.columns:
        if c == "status_code":
            out[c] = out[c].astype("int64")
        elif c.endswith("_s"):
            out[c] = out[c].astype("float64")
    attrs: dict[str, object] = {"columns_in_file": len(tab.header)}
    if "timestamp_s" in out:
        attrs["timestamp_origin"] = "relative"
    step = printed_step(df[tab.header[0]].astype(str).tolist()) if len(df) else None
    return finish(out, SAMPLES_SCHEMA, "samples", "hey", col, resolution_s=step,
                  resolution_rule="decimal places hey prints (%4.4f seconds: 0.1 ms)", **attrs)
