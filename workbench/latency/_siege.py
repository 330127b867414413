"""siege: per-request lines (``-v``), the end-of-run summary (text in 4.0, JSON in 4.1+) and ``--log``.

siege prints times in **seconds with 2 decimals** (``%.2f``): a 10 ms
resolution that must not be taken for structure. The ``--log`` file holds one
summary row per run (mean response time only) and is never read as samples.
"""
from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ParseError
from ..sources import Collector, Input, Source, open_inputs
from ._common import failure_warnings, finish, iso_to_epoch, parse_float, totals
from ._csv import SIEGE_LOG_REASON, is_siege_log_header
from ._schemas import DISTRIBUTION_SCHEMA, SAMPLES_SCHEMA

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
REQUEST_LINE = re.compile(
    r"^(?P<proto>HTTP/\d(?:\.\d)?)\s+(?P<code>\d{3})\s+(?P<secs>\d+\.\d+)\s+secs:\s+(?P<bytes>\d+)\s+bytes\s+==>\s+"
    r"(?P<method>[A-Z]+)\s+(?P<url>\S+)\s*$")
_NUM = r"(\d+(?:\.\d+)?|\.\d+)"
_TEXT_KEYS = {
    "Transactions": ("transactions", r"(\d+) hits"),
    "Availability": ("availability_pct", r"(\d+(?:\.\d+)?|\.\d+) %"),
    "Elapsed time": ("elapsed_s", r"(\d+(?:\.\d+)?|\.\d+) secs"),
    "Data transferred": ("data_transferred_mb", r"(\d+(?:\.\d+)?|\.\d+) MB"),
    "Response time": ("response_time_s", r"(\d+(?:\.\d+)?|\.\d+) secs"),
    "Transaction rate": ("transaction_rate_per_s", r"(\d+(?:\.\d+)?|\.\d+) trans/sec"),
    "Throughput": ("throughput_mb_per_s", r"(\d+(?:\.\d+)?|\.\d+) MB/sec"),
    "Concurrency": ("concurrency", r"(\d+(?:\.\d+)?|\.\d+)"),
    "Successful transactions": ("successful_transactions", r"(\d+)"),
    "Failed transactions": ("failed_transactions", r"(\d+)"),
    "Longest transaction": ("longest_transaction_s", r"(\d+(?:\.\d+)?|\.\d+)"),
    "Shortest transaction": ("shortest_transaction_s", r"(\d+(?:\.\d+)?|\.\d+)"),
}
_JSON_KEYS = {
    "transactions": "transactions", "availability": "availability_pct", "elapsed_time": "elapsed_s",
    "data_transferred": "data_transferred_mb", "response_time": "response_time_s",
    "transaction_rate": "transaction_rate_per_s", "throughput": "throughput_mb_per_s",
    "concurrency": "concurrency", "successful_transactions": "successful_transactions",
    "http_ok_received": "http_ok_received", "failed_transactions": "failed_transactions",
    "longest_transaction": "longest_transaction_s", "shortest_transaction": "shortest_transaction_s",
}
_BANNER = re.compile(r"^(\*\* SIEGE |\*\* Preparing |The server is now under siege|Lifting the server siege|"
                     r"New configuration template added|Run siege -C to view|FILE: |You can disable this|"
                     r"the \.siegerc file|the directive 'show-logfile')")
RESOLUTION_S = 0.01


def looks_like_siege(text: str) -> bool:
    """Whether ``text`` is siege output: its summary (text or JSON) or its per-request lines."""
    head = ANSI.sub("", text[:20000])
    if re.search(r"^Transactions:\s+\d+ hits$", head, re.M) and "Longest transaction:" in head:
        return True
    if re.search(r'^\{\s*"transactions":\s+\d+,\s*$', head, re.M) and '"shortest_transaction"' in text:
        return True
    lines = [ln for ln in head.splitlines()[:20] if ln.strip()]
    return bool(lines) and sum(bool(REQUEST_LINE.match(ln.strip())) for ln in lines) >= max(1, len(lines) // 2)


def _summary_json(inp: Input, text: str, start: int, col: Collector) -> tuple[dict[str, Any], int]:
    """The JSON summary object starting at ``text[start]`` and the index after it."""
    try:
        obj, end = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as e:
        line = text.count("\n", 0, e.pos) + 1
        raise ParseError(inp.name, line, inp.line(line), f"siege JSON summary: {e.msg}; expected siege 4.1's "
                         "{\"transactions\": …, \"shortest_transaction\": …} object") from None
    if not isinstance(obj, dict):
        raise ParseError(inp.name, None, "", "siege JSON summary: expected an object")
    out: dict[str, Any] = {}
    for k, v in obj.items():
        if k in _JSON_KEYS and isinstance(v, (int, float)) and not isinstance(v, bool):
            out[_JSON_KEYS[k]] = v
        else:
            col.skip(f"summary keys not read ({k})")
    return out, end


def read_siege(inp: Input, col: Collector) -> pd.DataFrame:
    """Read siege's output: per-request lines → samples; else its summary → a distribution.

    Samples (when ``siege -v`` lines ``HTTP/1.1 200  0.01 secs:  6 bytes ==> GET /``
    are present; ANSI colours removed): latency_s, status_code, bytes, method,
    url, ok (status < 400, siege's own rule). Without them, the summary gives two
    rows, percentile 0 (Shortest transaction) and 100 (Longest transaction);
    the mean and the rest are in attrs["summary"]. attrs["totals"]: requests
    (transactions), failures (failed transactions), non_2xx (from the lines).
    Resolution: 0.01 s (siege prints %.2f seconds).
    """
    text = ANSI.sub("", inp.text)
    summary: dict[str, Any] = {}
    reqs: list[tuple[int, float, int, int, str, str]] = []
    lines = text.splitlines()
    json_done_at = -1
    pos = 0
    for n, raw in enumerate(lines, start=1):
        line_start, pos = pos, pos + len(raw) + 1
        if line_start < json_done_at:
            continue
        s = raw.strip()
        if not s:
            continue
        if s.startswith("{") and not summary:
            summary, json_done_at = _summary_json(inp, text, line_start + raw.index("{"), col)
            continue
        if m := REQUEST_LINE.match(s):
            reqs.append((n, float(m["secs"]), int(m["code"]), int(m["bytes"]), m["method"], m["url"]))
            continue
        key, _, rest = s.partition(":")
        if key in _TEXT_KEYS and rest:
            name, pat = _TEXT_KEYS[key]
            m = re.fullmatch(pat, rest.strip())
            if m is None:
                col.reject(n, raw, f"siege summary {key!r}: expected {pat.replace(_NUM, '<number>')}")
            else:
                summary[name] = float(m[1]) if "." in m[1] else int(m[1])
            continue
        if _BANNER.match(s):
            col.skip("siege banner and notice lines")
            continue
        col.reject(n, raw, "not a line of siege output (per-request line, summary line or banner)")
    codes = [r[2] for r in reqs]
    non2xx = sum(1 for c in codes if not 200 <= c < 300) if reqs else None
    tot = totals(summary.get("transactions", len(reqs) if reqs else None),
                 failures=summary.get("failed_transactions"), non_2xx=non2xx,
                 status_codes={str(c): codes.count(c) for c in sorted(set(codes))},
                 included_in_latency="siege times every transaction that got a response, any status; "
                 "failed transactions (socket errors) have none")
    common = {"summary": summary, "totals": tot, "warnings": failure_warnings(tot)}
    if reqs:
        frame = pd.DataFrame({
            "latency_s": np.array([r[1] for r in reqs], dtype="float64"),
            "status_code": np.array(codes, dtype="int64"),
            "bytes": np.array([r[3] for r in reqs], dtype="int64"),
            "method": pd.Series([r[4] for r in reqs], dtype=object),
            "url": pd.Series([r[5] for r in reqs], dtype=object),
        }, index=[r[0] for r in reqs])
        frame["ok"] = frame["status_code"] < 400
        return finish(frame, SAMPLES_SCHEMA, "samples", "siege", col, resolution_s=RESOLUTION_S,
                      resolution_rule="siege prints seconds with 2 decimals", rows_from="per-request lines",
                      **common)
    if "longest_transaction_s" not in summary or "shortest_transaction_s" not in summary:
        col.check()
        raise ParseError(inp.name, None, "", "siege output without per-request lines (siege -v) or a summary "
                         "with Longest/Shortest transaction; expected one of them")
    frame = pd.DataFrame({"latency_s": [summary["shortest_transaction_s"], summary["longest_transaction_s"]],
                          "percentile": [0.0, 100.0]})
    return finish(frame, DISTRIBUTION_SCHEMA, "distribution", "siege", col, resolution_s=RESOLUTION_S,
                  resolution_rule="siege prints seconds with 2 decimals",
                  rows_from="summary: Shortest (percentile 0) and Longest (percentile 100) transaction; "
                  "the mean is attrs['summary']['response_time_s']", **common)


def read_siege_log_text(inp: Input, col: Collector) -> pd.DataFrame:
    """Refuse a siege ``--log`` file as latency (it has one summary row per run)."""
    first = next(((n, ln) for n, ln in enumerate(inp.text.splitlines(), 1) if ln.strip()), (None, ""))
    raise ParseError(inp.name, first[0], first[1], SIEGE_LOG_REASON)


_LOG_NAMES = {
    "date_time": "date", "trans": "transactions", "elap_time": "elapsed_s", "data_trans": "data_transferred_mb",
    "resp_time": "response_time_mean_s", "trans_rate": "transaction_rate_per_s", "throughput": "throughput_mb_per_s",
    "concurrent": "concurrency", "okay": "okay", "failed": "failed",
}


def read_siege_log(source: Source) -> pd.DataFrame:
    """Read siege ``--log`` files: one row per siege run (not per request).

    Columns: date (as written, local time of the run), timestamp_s (that time
    read as UTC epoch seconds: siege writes no zone), transactions, elapsed_s,
    data_transferred_mb, response_time_mean_s, transaction_rate_per_s,
    throughput_mb_per_s, concurrency, okay, failed; ``file``. Lines that are
    not runs (siege's ``--mark`` lines, repeated headers) raise ParseError
    naming the line.
    """
    from ._csv import normalise_name

    rows: list[dict[str, Any]] = []
    for inp in open_inputs(source, "siege log"):
        header: list[str] | None = None
        for n, raw in enumerate(inp.text.splitlines(), start=1):
            if not raw.strip():
                continue
            cells = [c.strip() for c in raw.split(",")]
            if header is None or is_siege_log_header(cells):
                if not is_siege_log_header(cells):
                    raise ParseError(inp.name, n, raw, "expected siege's --log header "
                                     "'Date & Time, Trans, Elap Time, Data Trans, Resp Time, …'")
                header = [normalise_name(c) for c in cells]
                continue
            if len(cells) != len(header):
                raise ParseError(inp.name, n, raw, f"expected {len(header)} comma-separated fields as in the header")
            row: dict[str, Any] = {"file": inp.name, "line": n}
            for h, c in zip(header, cells, strict=True):
                name = _LOG_NAMES.get(h, h)
                if name == "date":
                    row[name] = c
                    continue
                v = parse_float(c)
                if v is None:
                    raise ParseError(inp.name, n, raw, f"{h}: expected a number")
                row[name] = v
            rows.append(row)
    out = pd.DataFrame(rows)
    if len(out):
        out["timestamp_s"] = iso_to_epoch(out["date"].astype(object))
        for c in ("transactions", "okay", "failed"):
            if c in out:
                out[c] = out[c].astype("int64")
    out.attrs["resolution_s"] = RESOLUTION_S
    return out
