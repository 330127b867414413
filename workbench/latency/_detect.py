"""Recognise a latency file's format from its content (the extension is only a hint)."""
from __future__ import annotations

import re

from ..errors import UsageError
from ._csv import find_latency_column, is_siege_log_header, normalise_name
from ._curl import looks_like_curl_json, looks_like_curl_pairs, looks_like_values
from ._jmeter import looks_like_jmeter_xml
from ._json import parse_json
from ._k6 import looks_like_k6_summary
from ._siege import looks_like_siege
from ._summaries import looks_like_ab_text, looks_like_hey_text, looks_like_httperf
from ._table import sniff_delimiter

#: every format name read_latency(format=...) accepts, with what it reads
FORMATS: dict[str, str] = {
    "csv": "plain CSV/TSV of samples (latency column with a unit)",
    "hlog": "HdrHistogram interval log (.hlog)",
    "hgrm": "HdrHistogram percentile distribution text (.hgrm; also its CSV form)",
    "wrk": "wrk / wrk2 text output (--latency); wrk2 detected from its content",
    "ghz": "ghz JSON report (-O json)",
    "fortio": "fortio JSON result",
    "k6": "k6 JSON lines (--out json=…)",
    "k6_summary": "k6 end-of-test summary JSON (--summary-export, or handleSummary's data)",
    "locust": "Locust PREFIX_stats_history.csv",
    "jmeter": "Apache JMeter JTL (CSV)",
    "jmeter_xml": "Apache JMeter JTL (XML: <testResults>)",
    "hey": "hey CSV (-o csv)",
    "hey_text": "hey's default text summary (its Latency distribution quantiles)",
    "ab": "ApacheBench (ab) text report (its percentage table)",
    "ab_percentiles": "ab -e CSV (Percentage served,Time in ms)",
    "ab_gnuplot": "ab -g TSV (one row per request)",
    "curl": "curl -w key=value timing lines (time_total= or total=)",
    "curl_json": "curl -w '%{json}' lines",
    "siege": "siege output: per-request lines (-v) or its summary (text, or JSON in 4.1+)",
    "siege_log": "siege --log file (one row per run): refused as latency; see read_siege_log",
    "httperf": "httperf summary (connection-time min/median/max)",
    "locust_stats": "Locust PREFIX_stats.csv",
    "locust_failures": "Locust PREFIX_failures.csv: refused as latency (no times)",
    "values": "one latency per line, no header (needs unit=)",
}
ALIASES = {"tsv": "csv", "wrk2": "wrk", "jtl": "jmeter", "hdr": "hgrm", "histogram_log": "hlog", "k6json": "k6",
           "apachebench": "ab", "ab_e": "ab_percentiles", "ab_g": "ab_gnuplot", "hey_summary": "hey_text",
           "locust_history": "locust", "lines": "values"}
_HLOG_LINE = re.compile(r"^(?:Tag=[^,]*,)?[0-9.eE+-]+,[0-9.eE+-]+,[0-9.eE+-]+,HIST[A-Za-z0-9+/]", re.M)
_EXT_HINT = {".hlog": "hlog", ".hgrm": "hgrm"}


def canonical_format(fmt: str) -> str:
    """The format name ``format=`` stands for (case and aliases such as ``wrk2``, ``jtl`` folded)."""
    f = fmt.strip().lower()
    f = ALIASES.get(f, f)
    if f not in FORMATS:
        raise UsageError(f"format={fmt!r}: unknown latency format; expected one of {sorted(FORMATS)} "
                         f"(aliases {sorted(ALIASES)})")
    return f


def _first_lines(text: str, n: int = 40) -> list[str]:
    out = []
    for ln in text.splitlines():
        if ln.strip():
            out.append(ln)
            if len(out) >= n:
                break
    return out


def detect_format(text: str, name: str = "<text>") -> str | None:
    """The format name for ``text``, or None when nothing matches."""
    head = _first_lines(text)
    if not head:
        return None
    blob = "\n".join(head)
    first = head[0].lstrip("\ufeff").strip()
    # tools with a text summary: recognised by their own marks before any table guess
    if looks_like_jmeter_xml(text):
        return "jmeter_xml"
    if looks_like_siege(text):
        return "siege"
    if looks_like_hey_text(text):
        return "hey_text"
    if looks_like_ab_text(text):
        return "ab"
    if looks_like_httperf(text):
        return "httperf"
    if first.startswith("{"):
        if looks_like_curl_json(first):
            return "curl_json"
        try:
            obj = parse_json(first)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and obj.get("type") in ("Metric", "Point") and "metric" in obj:
            return "k6"
        try:
            obj = parse_json(text)
        except ValueError:
            obj = None
        if looks_like_k6_summary(obj):
            return "k6_summary"
        if isinstance(obj, dict):
            if "DurationHistogram" in obj:
                return "fortio"
            if "latencyDistribution" in obj or "details" in obj or ("rps" in obj and "fastest" in obj):
                return "ghz"
        return None
    stripped = [ln.strip() for ln in head]
    if looks_like_curl_pairs(stripped):
        return "curl"
    if looks_like_values(stripped):
        return "values"
    for ln in head:
        if ln.startswith("#"):
            continue
        cells = ln.split(sniff_delimiter(ln))
        hdr = [normalise_name(h) for h in cells]
        if hdr[:4] == ["timestamp", "user_count", "type", "name"]:
            return "locust"
        if hdr[:4] == ["type", "name", "request_count", "failure_count"]:
            return "locust_stats"
        if hdr[:4] == ["method", "name", "error", "occurrences"]:
            return "locust_failures"
        if hdr == ["percentage_served", "time_in_ms"]:
            return "ab_percentiles"
        if ln.split("\t") == ["starttime", "seconds", "ctime", "dtime", "ttime", "wait"]:
            return "ab_gnuplot"
        if is_siege_log_header(cells):
            return "siege_log"
        if "timestamp" in hdr and "elapsed" in hdr and ("label" in hdr or "success" in hdr):
            return "jmeter"
        if hdr and hdr[0] == "response_time" and "dns_dialup" in hdr:
            return "hey"
        if find_latency_column(ln.split(sniff_delimiter(ln))) is not None:
            return "csv"
        break
    if _HLOG_LINE.search(blob) or '"StartTimestamp","Interval_Length"' in blob \
            or "#[Histogram log format version" in blob:
        return "hlog"
    if re.search(r"^\s*(Running \S+ test @|Thread Stats\s|Latency Distribution)", blob, re.M):
        return "wrk"
    if re.search(r"^\s*\"?Value\"?[\s,]+\"?Percentile\"?[\s,]+\"?TotalCount", blob, re.M):
        return "hgrm"
    for ext, fmt in _EXT_HINT.items():
        if name.lower().endswith(ext):
            return fmt
    return None
