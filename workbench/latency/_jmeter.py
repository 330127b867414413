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
    columns: dict[str, pd.Series] = {}  # built apart and joined once: wide files stay linear
    for h in header:
        if h == "timeStamp":
            columns["timestamp_s"] = ts[keep].astype("float64")
        elif h == "elapsed":
            columns["latency_s"] = (el[keep] * 1e-3).astype("float64")
        elif h == "success" and ok is not None:
            columns["ok"] = ok[keep].astype(bool)
        elif h in extra:
            columns[extra[h][0]] = extra[h][1][keep].astype("float64")
        else:
            columns[h] = _retype(df.loc[keep, h]) if not keep.all() else df[h]
    out = pd.concat(columns, axis=1) if columns else pd.DataFrame(index=df.index[keep])
    if not columns or out.index.size != int(keep.sum()):
        out = out.reindex(df.index[keep])
    return finish(out, SAMPLES_SCHEMA, "samples", "jmeter", col, timestamp_rule=ts_rule,
                  resolution_s=1e-3, resolution_rule="JTL elapsed: integer ms",
                  timestamp_origin="epoch")


#: XML JTL attribute → the CSV JTL column of the same field (carried columns keep the CSV names)
_XML_CARRY = {"lb": "label", "rc": "responseCode", "rm": "responseMessage", "tn": "threadName", "dt": "dataType",
              "by": "bytes", "sby": "sentBytes", "ng": "grpThreads", "na": "allThreads", "hn": "hostname",
              "sc": "SampleCount", "ec": "ErrorCount"}
_XML_TIMES = {"lt": "first_byte_s", "ct": "connect_s", "it": "idle_s"}
_SAMPLE_TAGS = ("sample", "httpSample")


def looks_like_jmeter_xml(text: str) -> bool:
    """An XML JTL: a ``<testResults`` root (after the XML declaration)."""
    head = text[:2000].lstrip("\ufeff").lstrip()
    return head.startswith("<") and "<testResults" in head


def read_jmeter_xml(inp: Input, col: Collector) -> pd.DataFrame:
    """Read an Apache JMeter XML JTL (``<testResults>`` of ``<sample>``/``<httpSample>``): samples.

    One row per **top-level** sample: latency_s = t (elapsed ms), timestamp_s =
    ts (epoch ms), ok = s, first_byte_s = lt, connect_s = ct, idle_s = it; lb,
    rc, rm, tn, dt, by, sby, ng, na, hn, sc, ec carried under their CSV JTL names
    (label, responseCode, …). Sub-samples nested in a sample (redirects,
    embedded resources, transaction children) are counted in attrs["skipped"],
    not rows: the parent's time already covers them. Integer ms (resolution 1 ms).
    """
    import xml.parsers.expat

    rows: list[dict[str, object]] = []
    lines: list[int] = []
    depth = 0
    sample_depth = 0
    saw_root = False
    parser = xml.parsers.expat.ParserCreate()

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal depth, sample_depth, saw_root
        depth += 1
        if depth == 1:
            saw_root = tag == "testResults"
            return
        if tag not in _SAMPLE_TAGS:
            return
        sample_depth += 1
        n = parser.CurrentLineNumber
        if sample_depth > 1:
            col.skip("nested sub-samples (covered by their parent)")
            return
        if depth != 2:
            return
        t, ts = attrs.get("t", ""), attrs.get("ts", "")
        if not t.isdigit() or not ts.isdigit():
            col.reject(n, inp.line(n), "expected t (elapsed ms) and ts (epoch ms) as whole numbers")
            return
        row: dict[str, object] = {"latency_s": int(t) * 1e-3, "timestamp_s": int(ts) * 1e-3,
                                  "ok": attrs.get("s", "").lower() == "true", "sample_tag": tag}
        for k, name in _XML_TIMES.items():
            if k in attrs:
                row[name] = int(attrs[k]) * 1e-3 if attrs[k].isdigit() else np.nan
        for k, name in _XML_CARRY.items():
            if k in attrs:
                row[name] = attrs[k]
        rows.append(row)
        lines.append(n)

    def end(tag: str) -> None:
        nonlocal depth, sample_depth
        depth -= 1
        if tag in _SAMPLE_TAGS:
            sample_depth -= 1

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(inp.text.lstrip("\ufeff"), True)
    except xml.parsers.expat.ExpatError as e:
        raise ParseError(inp.name, e.lineno, inp.line(e.lineno),
                         f"not well-formed XML ({xml.parsers.expat.errors.messages[e.code]}); expected a JMeter "
                         "XML JTL") from None
    if not saw_root:
        raise ParseError(inp.name, 1, inp.line(1), "expected a JMeter XML JTL with a <testResults> root")
    out = pd.DataFrame(rows, index=lines)
    if not len(out):
        out = pd.DataFrame({"latency_s": pd.Series([], dtype="float64"), "timestamp_s": pd.Series([], dtype="float64"),
                            "ok": pd.Series([], dtype=bool)})
    for c in ("bytes", "sentBytes", "grpThreads", "allThreads", "SampleCount", "ErrorCount"):
        if c in out:
            v = pd.to_numeric(out[c], errors="coerce")
            out[c] = v.astype("int64") if v.notna().all() else v
    for c in out.columns:
        if out[c].dtype == object and c != "ok":
            out[c] = out[c].astype(object)
    return finish(out, SAMPLES_SCHEMA, "samples", "jmeter_xml", col, resolution_s=1e-3,
                  resolution_rule="JTL t: integer ms", timestamp_origin="epoch")
