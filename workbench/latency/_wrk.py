"""wrk and wrk2 text output (``--latency``).

Time values carry wrk's unit suffixes ``us``, ``ms``, ``s``, ``m`` (**minutes**) and
``h``; rates use k/M/G (×1000), byte counts K/M/G/T (×1024) followed by ``B``.
"""
from __future__ import annotations

import re
from typing import Any

import pandas as pd

from ..errors import ParseError
from ..sources import Collector, Input
from ._common import UNIT_SECONDS, failure_warnings, finish, printed_step, totals
from ._hdr import parse_footer, parse_spectrum_line, spectrum_frame
from ._schemas import DISTRIBUTION_SCHEMA

_TIME_RE = re.compile(r"^([0-9]*\.?[0-9]+)(us|ms|s|m|h)$")
_METRIC = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BINARY = {"": 1.0, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50}


def wrk_step_s(text: str) -> float | None:
    """The printed step of a wrk time (``635.91us`` → 0.01 µs in seconds), or None."""
    m = _TIME_RE.match(text.strip())
    if not m:
        return None
    return printed_step([m[1]], UNIT_SECONDS[m[2]])


def wrk_time_s(text: str) -> float | None:
    """A wrk time like ``635.91us``, ``12.50ms``, ``1.20s``, ``8.65m`` (minutes) in seconds."""
    m = _TIME_RE.match(text.strip())
    if not m:
        return None
    return float(m[1]) * UNIT_SECONDS[m[2]]


def _metric(text: str) -> float | None:
    m = re.match(r"^([0-9]*\.?[0-9]+)([kMGTP]?)$", text.strip())
    return float(m[1]) * _METRIC[m[2]] if m else None


def _binary_bytes(text: str) -> float | None:
    m = re.match(r"^([0-9]*\.?[0-9]+)([KMGTP]?)B$", text.strip())
    return float(m[1]) * _BINARY[m[2]] if m else None


_RUNNING = re.compile(r"^Running (\S+) test @ (\S+)")
_THREADS = re.compile(r"^(\d+) threads and (\d+) connections$")
_STATS_ROW = re.compile(r"^(Latency|Req/Sec)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+(?:\.\d+)?|\.\d+)%$")
_DIST = re.compile(r"^Latency Distribution(?:\s+\(HdrHistogram - (.*)\))?$")
_PCT = re.compile(r"^(\d+(?:\.\d+)?|\.\d+)%\s+(\S+)$")
_REQS = re.compile(r"^(\d+) requests in (\S+), (\S+) read$")
_SOCKERR = re.compile(r"^Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)$")
_NON2XX = re.compile(r"^Non-2xx or 3xx responses: (\d+)$")
_RPS = re.compile(r"^Requests/sec:\s+(\d+(?:\.\d+)?|\.\d+)$")
_TPS = re.compile(r"^Transfer/sec:\s+(\S+)$")


def _tag_for(description: str | None) -> str:
    if description is None:
        return "recorded"
    return "uncorrected" if description.lower().startswith("uncorrected") else "recorded"


def read_wrk(inp: Input, col: Collector) -> pd.DataFrame:
    """Read wrk/wrk2 text; returns a DISTRIBUTION_SCHEMA frame.

    wrk2's ``Detailed Percentile spectrum`` (when printed) gives rows with latency_s,
    percentile, cumulative_count, count and tag ("recorded", or "uncorrected" for
    the ``-U`` block); otherwise the ``Latency Distribution`` lines give latency_s,
    percentile and tag (plain wrk's single block is "recorded"). attrs["summary"]: url, duration_s, threads, connections,
    latency_avg_s/stdev_s/max_s, req_per_s_avg/stdev/max (per thread), requests,
    elapsed_s, read_bytes, requests_per_s, transfer_bytes_per_s, socket_errors,
    non_2xx_3xx, percentiles_s ({tag: {percentile: seconds}}).
    """
    summary: dict[str, Any] = {"percentiles_s": {}}
    pct_rows: list[tuple[str, float, float]] = []
    steps: list[float] = []
    spectra: dict[str | None, list[tuple[int, str, float, float, int]]] = {}
    footers: dict[str | None, dict[str, float]] = {}
    tag: str | None = None
    in_spectrum = False
    is_wrk2 = False
    for n, raw in enumerate(inp.text.splitlines(), start=1):
        s = raw.strip()
        if not s:
            continue
        if in_spectrum:
            if s.startswith("Value") and "Percentile" in s:
                continue
            if s.startswith("#["):
                if parse_footer(s, footers.setdefault(tag, {})):
                    continue
                col.reject(n, raw, "expected a #[Key = value, …] footer line")
                continue
            if set(s) == {"-"}:
                in_spectrum = False
                continue
            r = parse_spectrum_line(s)
            if isinstance(r, str):
                if re.match(r"^[0-9.]", s):
                    col.reject(n, raw, r)
                    continue
                in_spectrum = False  # fall through: a normal line ends the spectrum
            else:
                spectra.setdefault(tag, []).append((n, raw, *r))
                continue
        if m := _RUNNING.match(s):
            summary["url"] = m[2]
            summary["duration_s"] = wrk_time_s(m[1])
        elif m := _THREADS.match(s):
            summary["threads"], summary["connections"] = int(m[1]), int(m[2])
        elif s.startswith("Thread calibration:"):
            is_wrk2 = True
            summary.setdefault("calibration", []).append(s)
        elif s.startswith("Thread Stats"):
            pass
        elif m := _STATS_ROW.match(s):
            if m[1] == "Latency":
                vals = [wrk_time_s(x) for x in m.group(2, 3, 4)]
                if any(v is None for v in vals):
                    col.reject(n, raw, "expected wrk times (number + us|ms|s|m|h) for Avg, Stdev, Max")
                    continue
                summary["latency_avg_s"], summary["latency_stdev_s"], summary["latency_max_s"] = vals
                summary["latency_within_stdev_pct"] = float(m[5])
            else:
                vals = [_metric(x) for x in m.group(2, 3, 4)]
                if any(v is None for v in vals):
                    col.reject(n, raw, "expected rates (number + optional k|M|G) for Avg, Stdev, Max")
                    continue
                summary["req_per_s_avg"], summary["req_per_s_stdev"], summary["req_per_s_max"] = vals
        elif m := _DIST.match(s):
            tag = _tag_for(m[1])
            is_wrk2 = is_wrk2 or m[1] is not None
        elif m := _PCT.match(s):
            v = wrk_time_s(m[2])
            if tag is None or v is None:
                col.reject(n, raw, "expected '<percentile>%  <time with us|ms|s|m|h>' after 'Latency Distribution'")
                continue
            p = float(m[1])
            pct_rows.append((tag, p, v))
            steps.append(wrk_step_s(m[2]) or 0.0)
            summary["percentiles_s"].setdefault(tag, {})[p] = v
        elif s.startswith("Detailed Percentile spectrum"):
            in_spectrum = True
            is_wrk2 = True
        elif set(s) == {"-"}:
            pass
        elif m := _REQS.match(s):
            summary["requests"] = int(m[1])
            summary["elapsed_s"] = wrk_time_s(m[2])
            summary["read_bytes"] = _binary_bytes(m[3])
        elif m := _SOCKERR.match(s):
            summary["socket_errors"] = dict(zip(("connect", "read", "write", "timeout"),
                                                map(int, m.groups()), strict=True))
        elif m := _NON2XX.match(s):
            summary["non_2xx_3xx"] = int(m[1])
        elif m := _RPS.match(s):
            summary["requests_per_s"] = float(m[1])
        elif m := _TPS.match(s):
            summary["transfer_bytes_per_s"] = _binary_bytes(m[1])
        else:
            col.reject(n, raw, "not a line of wrk/wrk2 output")
    if spectra:
        parts = [spectrum_frame(rows, col, 1e-3, tag=t) for t, rows in spectra.items()]
        frame = pd.concat(parts, ignore_index=True)
        rows_from = "spectrum"
        res = printed_step([r[1].split()[0] for rows in spectra.values() for r in rows], 1e-3)
        res_rule = "decimal places of the spectrum's Value column (ms)"
    elif pct_rows:
        frame = pd.DataFrame(pct_rows, columns=["tag", "percentile", "latency_s"])
        frame["tag"] = frame["tag"].astype(object)
        frame = frame[["latency_s", "percentile", "tag"]]
        rows_from = "latency distribution lines"
        res = max(steps) if steps else None
        res_rule = ("coarsest printed step of the percentile values (wrk prints 2 decimals in the unit it "
                    "picks: us, ms, s, m, h)")
    else:
        col.check()
        if "url" in summary or "latency_avg_s" in summary:
            raise ParseError(inp.name, None, "", "wrk output without a latency distribution; run wrk with --latency")
        raise ParseError(inp.name, None, "", "not wrk output: expected 'Running … test @' and 'Latency Distribution' lines")
    if footers:
        summary["spectrum_footer"] = footers
    sock = summary.get("socket_errors", {})
    tot = totals(summary.get("requests"), failures=sum(sock.values()) if sock else 0,
                 non_2xx=summary.get("non_2xx_3xx", 0), errors={k: v for k, v in sock.items() if v},
                 included_in_latency="wrk's latency covers every completed response, non-2xx/3xx "
                 "included; socket errors have none")
    return finish(frame, DISTRIBUTION_SCHEMA, "distribution", "wrk2" if is_wrk2 else "wrk", col,
                  resolution_s=res, resolution_rule=res_rule, summary=summary, rows_from=rows_from,
                  totals=tot, warnings=failure_warnings(tot))
