"""End-of-run text summaries: hey's default output, ab's report, httperf's summary.

These tools print a few percentiles (or only min/median/max), not one line per
request, so each gives a **distribution** frame of its quantiles: latency_s and
percentile (0–100), one row per printed quantile, with the minimum as
percentile 0 and the maximum as percentile 100 where the tool prints them —
the same representation as wrk's ``Latency Distribution`` lines and an .hgrm
spectrum's percentile column. These are the tool's own quantiles: analyses
read them as such (no sample statistics are recomputed from them). Histograms
the tool prints go to attrs["histogram"]; the run's counts to attrs["totals"]
(requests, failures, non_2xx, errors by kind, status codes) with a warning in
attrs["warnings"] whenever some requests failed or were not 2xx.
"""
from __future__ import annotations

import re
from typing import Any

import pandas as pd

from ..errors import ParseError
from ..sources import Collector, Input
from ._common import failure_warnings, finish, printed_step, totals
from ._schemas import DISTRIBUTION_SCHEMA, SAMPLES_SCHEMA
from ._table import split_table, to_float

# ---- hey (rakyll/hey) default text --------------------------------------------------------------
_HEY_SECTIONS = ("Summary:", "Response time histogram:", "Latency distribution:",
                 "Details (average, fastest, slowest):", "Status code distribution:", "Error distribution:")
_HEY_KV = re.compile(r"^([A-Za-z/ +-]+):\s+(\S+)(?:\s+(secs|bytes))?$")
_HEY_HIST = re.compile(r"^(\d+(?:\.\d+)?|\.\d+) \[(\d+)\]\s*\|.*$")
_HEY_PCT = re.compile(r"^(\d+(?:\.\d+)?)% in (\d+(?:\.\d+)?|\.\d+) secs$")
_HEY_DETAIL = re.compile(r"^([A-Za-z+ -]+):\s+(\S+) secs, (\S+) secs, (\S+) secs$")
_HEY_STATUS = re.compile(r"^\[(\d+)\]\s+(\d+) responses$")
_HEY_ERROR = re.compile(r"^\[(\d+)\]\s+(.*)$")


def looks_like_hey_text(text: str) -> bool:
    """hey's default summary: a ``Summary:`` block with ``Slowest:``/``Fastest:`` and its section titles."""
    head = text[:20000]
    return (re.search(r"^Summary:\s*$", head, re.M) is not None and re.search(r"^\s+Slowest:\s", head, re.M)
            is not None and ("Latency distribution:" in head or "Response time histogram:" in head))


def _error_kind(message: str) -> str:
    """A short kind for a hey/Go error message (the text after the last ': ')."""
    tail = message.rsplit(": ", 1)[-1].strip()
    return tail or message


def read_hey_text(inp: Input, col: Collector) -> pd.DataFrame:
    """Read hey's default text output; returns a distribution of its printed quantiles.

    Rows: percentile 0 (Fastest), each ``NN% in X secs`` line, 100 (Slowest);
    latency_s in seconds as printed (4 decimals: 0.1 ms). hey's quantiles and
    histogram cover the requests that got a response (any status); transport
    errors are only counted (attrs["totals"]["errors"]). attrs: summary (Total,
    Average, Requests/sec …, details {phase: (avg, fastest, slowest) s}),
    histogram (list of {latency_s, count}: hey's 11 bucket marks, 3 decimals),
    totals, warnings.
    """
    section = ""
    summary: dict[str, Any] = {"details_s": {}}
    hist: list[dict[str, float]] = []
    pct: list[tuple[float, float, str]] = []
    codes: dict[str, int] = {}
    errors: dict[str, int] = {}
    for n, raw in enumerate(inp.text.splitlines(), start=1):
        s = raw.strip()
        if not s:
            continue
        if s in _HEY_SECTIONS:
            section = s
            continue
        if section == "Summary:" and (m := _HEY_KV.match(s)):
            key = m[1].strip().lower().replace(" ", "_").replace("/", "_per_")
            v = to_float(pd.Series([m[2]])).iloc[0]
            summary[key + ("_s" if m[3] == "secs" else "_bytes" if m[3] == "bytes" else "")] = (
                None if pd.isna(v) else float(v))
        elif section == "Response time histogram:" and (m := _HEY_HIST.match(s)):
            hist.append({"latency_s": float(m[1]), "count": int(m[2])})
        elif section == "Latency distribution:" and (m := _HEY_PCT.match(s)):
            pct.append((float(m[1]), float(m[2]), m[2]))
        elif section.startswith("Details") and (m := _HEY_DETAIL.match(s)):
            vals = to_float(pd.Series([m[2], m[3], m[4]]))
            summary["details_s"][m[1].strip()] = tuple(None if pd.isna(v) else float(v) for v in vals)
        elif section == "Status code distribution:" and (m := _HEY_STATUS.match(s)):
            codes[m[1]] = codes.get(m[1], 0) + int(m[2])
        elif section == "Error distribution:" and (m := _HEY_ERROR.match(s)):
            kind = _error_kind(m[2])
            errors[kind] = errors.get(kind, 0) + int(m[1])
        else:
            col.reject(n, raw, f"not a line of hey's {section or 'output'} section as hey prints it")
    if "slowest_s" not in summary:
        col.check()
        raise ParseError(inp.name, None, "", "not hey's text output: expected a 'Summary:' block with Slowest/Fastest")
    rows: list[tuple[float, float]] = []
    texts: list[str] = []
    answered = sum(codes.values())
    if answered and summary.get("fastest_s") is not None:
        rows.append((0.0, summary["fastest_s"]))
    rows += [(p, v) for p, v, _ in pct]
    texts += [t for _, _, t in pct]
    if answered and summary.get("slowest_s") is not None:
        rows.append((100.0, summary["slowest_s"]))
    frame = pd.DataFrame({"latency_s": [v for _, v in rows], "percentile": [p for p, _ in rows]})
    non2xx = sum(v for k, v in codes.items() if not k.startswith("2"))
    tot = totals(answered + sum(errors.values()), failures=sum(errors.values()), non_2xx=non2xx, errors=errors,
                 status_codes=codes, included_in_latency="hey's quantiles cover every response (any status); "
                 "errors (no response) are not in them")
    return finish(frame, DISTRIBUTION_SCHEMA, "distribution", "hey_text", col,
                  resolution_s=printed_step(texts) if texts else 1e-4,
                  resolution_rule="hey prints seconds with 4 decimals (0.1 ms)",
                  rows_from="hey's Latency distribution lines, with Fastest as percentile 0 and Slowest as 100",
                  summary=summary, histogram=hist, totals=tot, warnings=failure_warnings(tot))


# ---- ab (ApacheBench) text report ---------------------------------------------------------------
_AB_PCT_TITLE = "Percentage of the requests served within a certain time (ms)"
_AB_PCT = re.compile(r"^(\d{1,3})%\s+(\d{1,15})(?: \(longest request\))?$")
_AB_CONN = re.compile(r"^(Connect|Processing|Waiting|Total):\s+(\d{1,15})\s+(\d{1,15})\s+(\d{1,15}(?:\.\d+)?|\.\d+)\s+(\d{1,15})\s+(\d{1,15})$")
_AB_FAIL_DETAIL = re.compile(r"^\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)$")
_AB_BANNER = re.compile(r"^(This is ApacheBench|Copyright |Licensed to The Apache|Benchmarking |Completed \d+ "
                        r"requests|Finished \d+ requests|Connection Times \(ms\)|min\s+mean\[\+/-sd\]|"
                        r"WARNING: |Server timed out|apr_|These results are probably not that reliable|Send request failed|"
                        r"Test aborted after)")


def looks_like_ab_text(text: str) -> bool:
    """ab's report: its banner or its percentage table title."""
    head = text[:20000]
    return "This is ApacheBench" in head or (_AB_PCT_TITLE in text and "Complete requests:" in text)


def read_ab_text(inp: Input, col: Collector) -> pd.DataFrame:
    """Read ab's text report; returns a distribution of its percentage table.

    Rows: percentile 0 (the Connection Times ``Total`` min) and each ``NN%  T``
    line (50, 66, 75, 80, 90, 95, 98, 99, 100 = longest), latency_s = T ms /
    1000. ab prints **integer ms** (resolution 1 ms). attrs: summary (every
    ``Key: value`` line, connection_times_ms {Connect/Processing/Waiting/Total:
    min, mean, sd, median, max}), totals (Complete requests; Failed requests with
    their Connect/Receive/Length/Exceptions split; Non-2xx responses), warnings.
    ab's table covers every completed request, failed and non-2xx included.
    """
    summary: dict[str, Any] = {"connection_times_ms": {}}
    rows: list[tuple[float, float]] = []
    in_pct = False
    errors: dict[str, int] = {}
    for n, raw in enumerate(inp.text.splitlines(), start=1):
        s = raw.strip()
        if not s:
            continue
        if s == _AB_PCT_TITLE:
            in_pct = True
            continue
        if in_pct and (m := _AB_PCT.match(s)):
            if len(m[2]) > 15:  # more ms than a float holds exactly (and than any run lasts)
                col.reject(n, raw, f"percentile latency of {len(m[2])} digits; expected integer milliseconds")
            else:
                rows.append((float(m[1]), int(m[2]) * 1e-3))
            continue
        if m := _AB_CONN.match(s):
            summary["connection_times_ms"][m[1]] = {"min": int(m[2]), "mean": int(m[3]), "sd": float(m[4]),
                                                    "median": int(m[5]), "max": int(m[6])}
            continue
        if m := _AB_FAIL_DETAIL.match(s):
            errors = {k: int(v) for k, v in zip(("connect", "receive", "length", "exceptions"), m.groups(),
                                                   strict=True) if int(v)}
            continue
        if _AB_BANNER.match(s):
            col.skip("ab banner and progress lines")
            continue
        key, sep, value = s.partition(":")
        if sep and value.strip() and not in_pct:
            k = key.strip()
            # "Time per request" comes twice (per request, and across all concurrent requests)
            summary[k] = [*(summary[k] if isinstance(summary[k], list) else [summary[k]]), value.strip()] \
                if k in summary else value.strip()
            continue
        col.reject(n, raw, "not a line of ab's report (Key: value, Connection Times row or percentage row)")
    if "Complete requests" not in summary:
        col.check()
        raise ParseError(inp.name, None, "", "not an ab report: expected 'Complete requests:' and its percentage table")
    total = summary["connection_times_ms"].get("Total")
    if rows and total is not None:
        rows.insert(0, (0.0, total["min"] * 1e-3))
    frame = pd.DataFrame({"latency_s": [v for _, v in rows], "percentile": [p for p, _ in rows]})

    def count(key: str) -> int:
        m = re.match(r"^(\d+)", str(summary.get(key, "0")))
        return int(m[1]) if m else 0

    tot = totals(count("Complete requests"), failures=count("Failed requests"), non_2xx=count("Non-2xx responses"),
                 errors=errors, included_in_latency="ab's table covers every completed request, failed (by "
                 "length/receive) and non-2xx included")
    return finish(frame, DISTRIBUTION_SCHEMA, "distribution", "ab", col, resolution_s=1e-3,
                  resolution_rule="ab prints integer ms", summary=summary, totals=tot, warnings=failure_warnings(tot),
                  rows_from="ab's percentage table, with the Connection Times Total min as percentile 0")


def read_ab_percentiles(inp: Input, col: Collector) -> pd.DataFrame:
    """Read ab's ``-e`` CSV (``Percentage served,Time in ms``, rows 0–100): a distribution.

    latency_s = Time in ms / 1000, percentile = Percentage served. ab prints the
    times with 3 decimals (resolution 1 µs) but its own timing is µs-based.
    """
    tab = split_table(inp, col, comments=False)
    if [h.lower() for h in tab.header] != ["percentage served", "time in ms"]:
        raise ParseError(inp.name, tab.header_line, ",".join(tab.header),
                         "expected ab -e header 'Percentage served,Time in ms'")
    df = tab.frame()
    p = to_float(df[tab.header[0]])
    v = to_float(df[tab.header[1]])
    bad = p.isna() | v.isna() | (p < 0) | (p > 100) | (v < 0)
    for line in df.index[bad]:
        col.reject(int(line), inp.line(int(line)), "expected a percentage 0-100 and a time in ms")
    frame = pd.DataFrame({"latency_s": (v[~bad] * 1e-3).astype("float64"), "percentile": p[~bad].astype("float64")})
    texts = [inp.line(int(ln)).split(",")[-1] for ln in df.index[~bad]]
    return finish(frame, DISTRIBUTION_SCHEMA, "distribution", "ab_percentiles", col,
                  resolution_s=printed_step(texts, 1e-3), resolution_rule="decimal places of 'Time in ms'",
                  rows_from="ab -e: the time under which each whole percentage of requests was served")


_AB_GNUPLOT = ["starttime", "seconds", "ctime", "dtime", "ttime", "wait"]


def read_ab_gnuplot(inp: Input, col: Collector) -> pd.DataFrame:
    """Read ab's ``-g`` TSV: samples, one row per request.

    Columns: latency_s (ttime ms / 1000), timestamp_s (``seconds``: the request's
    start, epoch **whole seconds**), connect_s (ctime), processing_s (dtime),
    wait_s (wait), starttime (the same start as text). ab writes the rows sorted
    by total time, not by start (attrs["row_order"]); integer ms throughout.
    """
    tab = split_table(inp, col, delimiter="\t", comments=False)
    if tab.header != _AB_GNUPLOT:
        raise ParseError(inp.name, tab.header_line, "\t".join(tab.header),
                         "expected ab -g header 'starttime\\tseconds\\tctime\\tdtime\\tttime\\twait'")
    df = tab.frame()
    nums = {h: to_float(df[h]) for h in _AB_GNUPLOT[1:]}
    bad = pd.Series(False, index=df.index)
    for v in nums.values():
        bad |= v.isna() | (v < 0)
    for line in df.index[bad]:
        col.reject(int(line), inp.line(int(line)), "expected whole numbers: seconds, ctime, dtime, ttime, wait")
    keep = ~bad
    out = pd.DataFrame({
        "latency_s": (nums["ttime"][keep] * 1e-3).astype("float64"),
        "timestamp_s": nums["seconds"][keep].astype("float64"),
        "connect_s": (nums["ctime"][keep] * 1e-3).astype("float64"),
        "processing_s": (nums["dtime"][keep] * 1e-3).astype("float64"),
        "wait_s": (nums["wait"][keep] * 1e-3).astype("float64"),
        "starttime": df.loc[keep, "starttime"].astype(object),
    })
    return finish(out, SAMPLES_SCHEMA, "samples", "ab_gnuplot", col, resolution_s=1e-3,
                  resolution_rule="ab -g writes integer ms", timestamp_origin="epoch", timestamp_resolution_s=1.0,
                  row_order="sorted by total time (ab's order), not by start")


# ---- httperf ------------------------------------------------------------------------------------
_HP_TOTAL = re.compile(r"^Total: connections (\d+) requests (\d+) replies (\d+) test-duration (\d+(?:\.\d+)?|\.\d+) s$")
_HP_CONN = re.compile(r"^Connection time \[ms\]: min (\d+(?:\.\d+)?|\.\d+) avg (\d+(?:\.\d+)?|\.\d+) max (\d+(?:\.\d+)?|\.\d+) median (\d+(?:\.\d+)?|\.\d+) "
                      r"stddev (\d+(?:\.\d+)?|\.\d+)$")
_HP_STATUS = re.compile(r"^Reply status: 1xx=(\d+) 2xx=(\d+) 3xx=(\d+) 4xx=(\d+) 5xx=(\d+)$")
_HP_ERRORS = re.compile(r"^Errors: (.*)$")
_HP_REPLY = re.compile(r"^Reply time \[ms\]: response (\d+(?:\.\d+)?|\.\d+) transfer (\d+(?:\.\d+)?|\.\d+)$")


def looks_like_httperf(text: str) -> bool:
    """httperf's summary: its ``Total: connections …`` and ``Connection time [ms]:`` lines."""
    return _HP_TOTAL.search(text) is not None or (
        re.search(r"^Total: connections \d+ requests \d+", text, re.M) is not None
        and "Connection time [ms]:" in text)


def read_httperf(inp: Input, col: Collector) -> pd.DataFrame:
    """Read httperf's summary; returns a distribution of **connection** lifetimes.

    Rows (tag "connection"): percentile 0 (min), 50 (median), 100 (max) of
    ``Connection time [ms]`` / 1000. httperf prints no per-request quantiles: a
    connection carries ``--num-calls`` requests, so with more than one request
    per connection these are not request latencies (attrs["warnings"] says so).
    The median is the centre of a 1 ms histogram bin (printed ``x.5``):
    resolution 1 ms. attrs: summary (every line, parsed where numeric: avg,
    stddev, reply time response/transfer ms …), totals (requests, replies,
    failures = Errors total, non_2xx = 1xx+3xx+4xx+5xx replies, errors by kind).
    """
    summary: dict[str, Any] = {}
    errors: dict[str, int] = {}
    status: dict[str, int] = {}
    conn: tuple[float, ...] | None = None
    for n, raw in enumerate(inp.text.splitlines(), start=1):
        s = raw.strip()
        if not s:
            continue
        if m := _HP_TOTAL.match(s):
            summary.update(connections=int(m[1]), requests=int(m[2]), replies=int(m[3]), test_duration_s=float(m[4]))
        elif m := _HP_CONN.match(s):
            conn = tuple(float(x) for x in m.groups())
            summary.update(dict(zip(("conn_min_ms", "conn_avg_ms", "conn_max_ms", "conn_median_ms",
                                     "conn_stddev_ms"), conn, strict=True)))
        elif m := _HP_STATUS.match(s):
            status = {k: int(v) for k, v in zip(("1xx", "2xx", "3xx", "4xx", "5xx"), m.groups(), strict=True)}
        elif m := _HP_REPLY.match(s):
            summary.update(reply_response_ms=float(m[1]), reply_transfer_ms=float(m[2]))
        elif m := _HP_ERRORS.match(s):
            toks = m[1].split()
            if len(toks) % 2:
                col.reject(n, raw, "expected 'Errors: <kind> <count> …' pairs")
                continue
            for k, v in zip(toks[::2], toks[1::2], strict=True):
                if not v.isdigit():
                    col.reject(n, raw, f"Errors: {k}: expected a count")
                    break
                errors[k] = int(v)
        elif s.startswith(("httperf", "Maximum connect burst", "Connection rate:", "Connection time [ms]: connect",
                           "Connection length", "Request rate:", "Request size", "Reply rate", "Reply size",
                           "CPU time", "Net I/O:", "Session rate", "Session:", "Session lifetime",
                           "Session failtime", "Session length")):
            key, _, value = s.partition(":")
            summary.setdefault("lines", {})[key] = value.strip()
        else:
            col.reject(n, raw, "not a line of httperf's summary")
    if conn is None or "requests" not in summary:
        col.check()
        raise ParseError(inp.name, None, "", "not an httperf summary: expected 'Total: connections …' and "
                         "'Connection time [ms]: min … median …' lines")
    frame = pd.DataFrame({"latency_s": [conn[0] * 1e-3, conn[3] * 1e-3, conn[2] * 1e-3],
                          "percentile": [0.0, 50.0, 100.0]})
    frame["tag"] = pd.Series(["connection"] * 3, dtype=object)
    failures = errors.pop("total", sum(errors.values()))
    tot = totals(summary["requests"], failures=failures,
                 non_2xx=sum(v for k, v in status.items() if k != "2xx") if status else None,
                 errors={k: v for k, v in errors.items() if v}, status_codes=status,
                 included_in_latency="connection times cover every connection, failed ones included")
    warnings = failure_warnings(tot)
    if summary["connections"] and summary["requests"] > summary["connections"]:
        warnings.append(f"{summary['requests']} requests over {summary['connections']} connections: connection "
                        "times span several requests each and are not request latencies")
    if summary["replies"] < summary["requests"]:
        warnings.append(f"{summary['replies']} replies for {summary['requests']} requests")
    return finish(frame, DISTRIBUTION_SCHEMA, "distribution", "httperf", col, resolution_s=1e-3,
                  resolution_rule="min/max printed to 0.1 ms; the median is a 1 ms histogram bin centre",
                  rows_from="Connection time [ms]: min (percentile 0), median (50), max (100)",
                  summary=summary, totals=tot, warnings=warnings)
