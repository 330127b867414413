"""HdrHistogram interval logs (``.hlog``) and percentile-distribution text (``.hgrm``).

hlog payloads are decoded with the ``hdrhistogram`` package (module ``hdrh``)
for V2 cookies; V1 payloads (``HISTggAA…``, older jHiccup / HdrHistogram_c) are
decoded here (zlib + fixed-width big-endian counts), since ``hdrh`` refuses them.
Unlike ``hdrh.log.HistogramLogReader`` every interval line is returned, including
those before StartTime and every tag.
"""
from __future__ import annotations

import base64
import binascii
import re
import struct
import zlib
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ParseError
from ..sources import Collector, Input
from ._common import finish, parse_float, printed_step, unit_seconds
from ._schemas import DISTRIBUTION_SCHEMA

_V2_COMPRESSED = 0x1C849304
_V1_COMPRESSED = 0x1C849302
_V1_ENCODING = 0x1C849301
_YEAR_S = 365.25 * 86400

_START_RE = re.compile(r"^#\[StartTime:\s*([0-9.eE+-]+)")
_BASE_RE = re.compile(r"^#\[BaseTime:\s*([0-9.eE+-]+)")
_VERSION_RE = re.compile(r"^#\[Histogram log format version\s+([0-9.]+)")


#: an ``hdrh.histogram.HdrHistogram`` (the package has no type information)
Histogram = Any


def _decode_v1(raw: bytes) -> Histogram | str:
    """An hdrh histogram from a V1-compressed payload, or the reason it cannot be decoded."""
    from hdrh.histogram import HdrHistogram

    if len(raw) < 8:
        return "payload shorter than its 8-byte header"
    _cookie, length = struct.unpack(">ii", raw[:8])
    inner = zlib.decompress(raw[8 : 8 + length])
    if len(inner) < 40:
        return "decompressed V1 payload shorter than its 40-byte header"
    icookie, plen, nio, digits, lowest, highest, _ratio = struct.unpack(">iiiiqqd", inner[:40])
    if icookie & ~0xF0 != _V1_ENCODING:
        return f"inner cookie {icookie:#x} is not a V1 encoding cookie"
    word = (icookie & 0xF0) >> 4
    if word not in (2, 4, 8):
        return f"V1 word size {word} not in 2, 4, 8"
    if nio != 0:
        return "V1 payload with a normalizing index offset (shifted histogram) is not supported"
    counts = np.frombuffer(inner[40 : 40 + plen], dtype=f">i{word}")
    h = HdrHistogram(lowest, highest, digits)
    if len(counts) > h.counts_len:
        return f"V1 payload has {len(counts)} counts, more than the histogram's {h.counts_len}"
    if (counts < 0).any():
        return "negative count in V1 payload"
    for idx in np.nonzero(counts)[0]:
        h.record_value(h.get_value_from_index(int(idx)), int(counts[idx]))
    return h


def _decode(payload: str) -> Histogram | str:
    """An hdrh histogram from a base64 payload (V2 via hdrh, V1 here), or the reason it cannot be decoded."""
    from hdrh.histogram import HdrHistogram

    try:
        raw = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as e:
        return f"payload is not base64 ({e})"
    if len(raw) < 8:
        return "payload shorter than its 8-byte header"
    cookie = struct.unpack(">i", raw[:4])[0]
    base = cookie & ~0xF0
    if base == _V2_COMPRESSED:
        try:
            return HdrHistogram.decode(payload.encode())
        except Exception as e:  # noqa: BLE001 - hdrh raises its own exception classes and zlib.error
            return f"V2 payload does not decode ({type(e).__name__}: {e})"
    if base == _V1_COMPRESSED:
        try:
            return _decode_v1(raw)
        except (zlib.error, struct.error, ValueError) as e:  # ValueError: numpy's or hdrh's, on damaged fields
            return f"V1 payload does not decode ({e})"
    return (f"unknown histogram cookie {cookie & 0xFFFFFFFF:#x}; expected a V2 (HISTFAAA…) or V1 (HISTggAA…) "
            "compressed histogram")


def decode_histogram(payload: str, source: str = "<payload>", line: int | None = None) -> Histogram:
    """An hdrh histogram from a base64 payload (V2 via hdrh, V1 here).

    A payload that cannot be decoded raises :class:`~workbench.errors.ParseError`
    naming ``source`` and ``line`` (where the payload came from) and why.
    """
    h = _decode(payload)
    if isinstance(h, str):
        raise ParseError(source, line, payload, h)
    return h


def _infer_unit(maxima: list[tuple[float, float]]) -> str | None:
    """Payload unit from (decoded max, Interval_Max) pairs, assuming Interval_Max is in ms.

    Uses the interval with the largest Interval_Max. Java/C writers print max/ratio
    with 3 decimals; Python's ``hdrh`` writes ``max // ratio`` (floored), so an
    integral Interval_Max m allows the decoded max to reach ratio·(m+1). 12 % slack
    covers the histogram's bucket resolution.
    """
    pairs = [(d, m) for d, m in maxima if m > 0 and d > 0]
    if not pairs:
        return None
    d, m = max(pairs, key=lambda p: p[1])
    floor_room = (m + 1) / m if float(m).is_integer() else 1.0
    for unit, ratio in (("ns", 1e6), ("us", 1e3), ("ms", 1.0)):
        if ratio * 0.88 <= d / m <= ratio * floor_room * 1.12:
            return unit
    return None


def recorded(h: Histogram) -> tuple[np.ndarray, np.ndarray]:
    """(value, count) of every non-empty bucket, in value order, as hdrh's recorded iterator gives them
    (each bucket's highest equivalent value) but computed with numpy over the counts array."""
    counts = np.ctypeslib.as_array(h.counts)[: h.counts_len].astype(np.int64)
    index = np.flatnonzero(counts)
    half_mag, half = h.sub_bucket_half_count_magnitude, h.sub_bucket_half_count
    bucket = (index >> half_mag) - 1
    sub = (index & (half - 1)) + half
    first = bucket < 0
    sub = np.where(first, sub - half, sub)
    bucket = np.where(first, 0, bucket)
    shift = bucket + h.unit_magnitude
    lowest = sub.astype(np.int64) << shift
    return ((lowest + (np.int64(1) << shift) - 1).astype(np.float64), counts[index])


def read_hlog(inp: Input, col: Collector, *, unit: str | None = None) -> pd.DataFrame:
    """Read an HdrHistogram interval log; returns a DISTRIBUTION_SCHEMA frame.

    Columns: latency_s (bucket's highest equivalent value), count, cumulative_count
    and percentile (within the interval), interval_start_s (BaseTime/StartTime
    added when the log's timestamps are relative), interval_length_s, interval_max_s,
    tag (NaN for untagged lines). An interval with no samples adds no rows (counted in
    attrs["empty_intervals"]). attrs: start_time_s, base_time_s, log_format_version,
    timestamp_origin, latency_unit, unit_rule, intervals, empty_intervals, comments.
    """
    start_time = base_time = None
    version = None
    comments: list[str] = []
    parsed: list[tuple[int, str | None, float, float, float, Histogram]] = []
    saw_legend = False
    for n, raw in enumerate(inp.text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if m := _START_RE.match(line) or _BASE_RE.match(line):
                seconds = parse_float(m[1])
                if seconds is None:
                    col.reject(n, raw, f"{line[2:line.index(':')]}: expected seconds since the epoch")
                    continue
                if m.re is _START_RE:
                    start_time = seconds
                else:
                    base_time = seconds
            elif m := _VERSION_RE.match(line):
                version = m[1]
            comments.append(line)
            continue
        if line.startswith('"StartTimestamp"'):
            saw_legend = True
            continue
        fields = line.split(",")
        tag = None
        if fields[0].startswith("Tag="):
            tag = fields[0][4:]
            fields = fields[1:]
        if len(fields) != 4:
            col.reject(n, raw, "expected [Tag=<tag>,]StartTimestamp,Interval_Length,Interval_Max,<payload>")
            continue
        start, length, most = (parse_float(f) for f in fields[:3])
        if start is None or length is None or most is None:
            col.reject(n, raw, "StartTimestamp, Interval_Length and Interval_Max must be numbers")
            continue
        h = _decode(fields[3].strip())
        if isinstance(h, str):
            col.reject(n, raw, h)
            continue
        parsed.append((n, tag, start, length, most, h))
    if not parsed:
        col.check()
        if col.rows:
            r = col.rows[0]
            raise ParseError(inp.name, r[1], r[2], f"no interval could be read; first problem: {r[3]}")
        if not saw_legend and version is None:
            raise ParseError(inp.name, None, "", "not an HdrHistogram log: no legend, version line or interval")

    if unit is None:
        unit = _infer_unit([(float(p[5].get_max_value()), p[4]) for p in parsed])
        unit_rule = "inferred from decoded max / Interval_Max (Interval_Max in ms)"
        if unit is None and parsed:
            raise ParseError(
                inp.name, parsed[0][0], "",
                "cannot tell the histogram's value unit (decoded max / Interval_Max is not ~1e6, 1e3 or 1, "
                "or every Interval_Max is 0); pass unit='ns'|'us'|'ms'|'s'",
            )
    else:
        unit_rule = "given"
    scale = unit_seconds(unit or "ns")

    if base_time is not None:
        base, origin = base_time, "epoch"
    elif start_time is not None and parsed and parsed[0][2] < start_time - _YEAR_S:
        base, origin = start_time, "epoch"
    elif parsed and parsed[0][2] > 1e8:
        base, origin = 0.0, "epoch"
    else:
        base, origin = 0.0, "relative"

    cols: dict[str, list[Any]] = {k: [] for k in (
        "latency_s", "count", "cumulative_count", "percentile",
        "interval_start_s", "interval_length_s", "interval_max_s", "tag")}
    parts: list[pd.DataFrame] = []
    tags: list[Any] = []
    for _n, tag, ts, length, mx, h in parsed:
        values, counts = recorded(h)
        cumulative = np.cumsum(counts)
        total = int(cumulative[-1]) if len(cumulative) else 0
        parts.append(pd.DataFrame({
            "latency_s": values * scale, "count": counts, "cumulative_count": cumulative,
            "percentile": 100.0 * cumulative / total if total else np.zeros(len(counts)),
            "interval_start_s": np.full(len(counts), base + ts), "interval_length_s": np.full(len(counts), length),
            "interval_max_s": np.full(len(counts), mx * 1e-3)}))
        tags += [tag] * len(counts)
    sig = next((getattr(p[5], "significant_figures", None) for p in parsed), None)
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame({k: [] for k in cols})
    for k in ("count", "cumulative_count"):
        frame[k] = frame[k].astype("int64")
    for k in ("latency_s", "percentile", "interval_start_s", "interval_length_s", "interval_max_s"):
        frame[k] = frame[k].astype("float64")
    frame["tag"] = pd.Series([np.nan if t is None else t for t in tags], dtype=object)
    return finish(
        frame, DISTRIBUTION_SCHEMA, "distribution", "hlog", col,
        resolution_s=None,
        resolution_rule=f"relative: HdrHistogram buckets keep {sig} significant digits" if sig
        else "relative: HdrHistogram buckets (significant digits of the histogram)",
        start_time_s=start_time, base_time_s=base if origin == "epoch" else None,
        log_format_version=version, timestamp_origin=origin, latency_unit=unit, unit_rule=unit_rule,
        intervals=len(parsed), empty_intervals=sum(1 for p in parsed if p[5].get_total_count() == 0),
        comments=comments,
    )


# --- percentile distribution text -------------------------------------------------------

_HGRM_HEADER_RE = re.compile(r'^\s*"?Value"?[\s,]+"?Percentile"?[\s,]+"?TotalCount"?')
_FOOTER_RE = re.compile(r"([A-Za-z][A-Za-z ]*?)\s*=\s*([-+0-9.eE]+|nan|inf)")


def parse_footer(line: str, into: dict[str, float]) -> bool:
    """Parse a ``#[Mean = 1, StdDeviation = 2]`` footer line into ``into``; False if not one."""
    s = line.strip()
    if not (s.startswith("#[") and s.endswith("]")):
        return False
    pairs = _FOOTER_RE.findall(s[2:-1])
    if not pairs:
        return False
    try:
        values = {k.strip(): float(v) for k, v in pairs}
    except ValueError:  # the pattern also matches runs such as 1.2.3
        return False
    into.update(values)
    return True


def parse_spectrum_line(text: str) -> tuple[float, float, int] | str:
    """(value, fraction, total_count) from a spectrum data line, or the reason it is not one."""
    parts = [p.strip().strip('"') for p in re.split(r"[,\s]+", text.strip()) if p.strip()]
    if len(parts) not in (3, 4):
        return "expected Value Percentile TotalCount [1/(1-Percentile)]"
    v, p = parse_float(parts[0]), parse_float(parts[1])
    c = parts[2]
    if v is None or p is None or not re.fullmatch(r"\d+(\.0*)?", c):
        return "expected numbers: Value, Percentile (0-1), TotalCount (integer)"
    if len(c.split(".")[0]) > 18:
        return "TotalCount beyond 64 bits"
    if len(parts) == 4 and parse_float(parts[3]) is None and parts[3].lower() not in ("inf", "infinity"):
        return "1/(1-Percentile) must be a number, inf or Infinity"
    if not 0.0 <= p <= 1.0:
        return "Percentile must be a fraction between 0 and 1"
    return v, p, int(float(c))


def spectrum_frame(rows: list[tuple[int, str, float, float, int]], col: Collector, scale: float,
                   tag: str | None = None) -> pd.DataFrame:
    """Rows (line, text, value, fraction, total) → latency_s, percentile, cumulative_count, count.

    A row whose percentile or total count goes down is rejected (the spectrum is cumulative).
    """
    kept = []
    last_p, last_c = -1.0, -1
    for n, text, v, p, c in rows:
        if p < last_p or c < last_c:
            col.reject(n, text, "percentile and TotalCount must not decrease (cumulative spectrum)")
            continue
        kept.append((v * scale, p * 100.0, c))
        last_p, last_c = p, c
    df = pd.DataFrame(kept, columns=["latency_s", "percentile", "cumulative_count"])
    df["latency_s"] = df["latency_s"].astype("float64")
    df["percentile"] = df["percentile"].astype("float64")
    df["cumulative_count"] = df["cumulative_count"].astype("int64")
    df["count"] = df["cumulative_count"].diff().fillna(df["cumulative_count"]).astype("int64")
    if tag is not None:
        df["tag"] = pd.Series([tag] * len(df), dtype=object)
    return df


def check_footer(footer: dict[str, float], lines: dict[str, tuple[int, str]], col: Collector) -> list[str]:
    """Warnings for footer values that cannot be true (each also a reject of its footer line).

    A ``StdDeviation`` greater than ``Max`` is impossible for non-negative values:
    HdrHistogram_py's writer divides Mean and Max by the scaling ratio but not
    StdDeviation, so the footer is not to be trusted.
    """
    out = []
    sd, mx = footer.get("StdDeviation"), footer.get("Max")
    if sd is not None and mx is not None and sd > mx:
        msg = (f"footer StdDeviation {sd:g} exceeds Max {mx:g}, impossible for latencies: the writer left "
               "StdDeviation unscaled (HdrHistogram_py does); the footer is not used")
        out.append(msg)
        n, text = lines.get("StdDeviation", (0, ""))
        col.reject(n, text, msg)
    return out


def read_hgrm(inp: Input, col: Collector, *, unit: str | None = None) -> pd.DataFrame:
    """Read HdrHistogram percentile-distribution text (whitespace or CSV form).

    Columns: latency_s, percentile (0-100), cumulative_count, count (difference of
    TotalCount). The Value column is taken as ms (the HdrHistogram tools' and
    wrk2's convention: recorded µs or ns divided by a scaling ratio) unless
    ``unit=`` says otherwise; a file whose values are **all whole numbers**
    (``4227.000``) is what unscaled output (values in the recording unit, often
    µs or ns) looks like, so it is refused without ``unit=``. attrs: latency_unit,
    unit_rule, footer (Mean/StdDeviation/Max/Total count as printed, file's
    unit), warnings (e.g. a footer StdDeviation above Max, also a reject of that
    line), resolution_s (the printed decimal step, in seconds).
    """
    rows: list[tuple[int, str, float, float, int]] = []
    footer: dict[str, float] = {}
    footer_lines: dict[str, tuple[int, str]] = {}
    value_texts: list[str] = []
    saw_header = False
    wrk = re.search(r"^\s*(Running \S+ test @|Thread Stats\s|Detailed Percentile spectrum)", inp.text, re.M)
    if wrk is not None:
        n = inp.text.count("\n", 0, wrk.start()) + 1
        raise ParseError(inp.name, n, inp.line(n), "this is wrk/wrk2 output, not a bare percentile distribution; "
                         "read it with format='wrk' (its spectrum, summary and totals)")
    for n, raw in enumerate(inp.text.splitlines(), start=1):
        s = raw.strip()
        if not s:
            continue
        if _HGRM_HEADER_RE.match(s):
            saw_header = True
            continue
        if s.startswith("#"):
            before = set(footer)
            if not parse_footer(s, footer):
                col.reject(n, raw, "expected a #[Key = value, …] footer line")
            for k in set(footer) - before:
                footer_lines[k] = (n, raw)
            continue
        r = parse_spectrum_line(s)
        if isinstance(r, str):
            col.reject(n, raw, r)
            continue
        rows.append((n, raw, *r))
        value_texts.append(re.split(r"[,\s]+", s)[0].strip('"'))
    if not saw_header:
        raise ParseError(inp.name, None, "", "not a percentile distribution: expected a 'Value Percentile TotalCount' header line")
    if not rows:
        col.check()
        raise ParseError(inp.name, None, "", "percentile distribution has no data lines")
    values = np.array([r[2] for r in rows], dtype="float64")
    if unit is None:
        if np.all(values == np.round(values)) and len(values) > 1:
            n0, raw0 = rows[-1][0], rows[-1][1]
            raise ParseError(
                inp.name, n0, raw0,
                f"every Value is a whole number (e.g. {values.max():.3f}): that is how a distribution printed "
                "without a scaling ratio looks (values in the recording unit, often us or ns), not ms; "
                "pass unit='us'|'ns'|'ms'|'s' to say which unit the Value column is in")
        unit_rule = "assumed ms (HdrHistogram tools' and wrk2's default: recorded us/ns / scaling ratio)"
    else:
        unit_rule = "given"
    scale = unit_seconds(unit or "ms")
    warnings = check_footer(footer, footer_lines, col)
    frame = spectrum_frame(rows, col, scale)
    return finish(frame, DISTRIBUTION_SCHEMA, "distribution", "hgrm", col,
                  resolution_s=printed_step(value_texts, scale),
                  resolution_rule="decimal places of the Value column (HdrHistogram also keeps a relative "
                  "step of its significant digits)",
                  latency_unit=unit or "ms", unit_rule=unit_rule, footer=footer, warnings=warnings)
