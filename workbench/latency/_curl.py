"""curl ``-w`` timings (``key=value`` lines or ``%{json}`` lines) and bare one-value-per-line files.

curl's ``time_*`` variables are **seconds, cumulative from the start of the
transfer**, printed with 6 decimals (µs); a request that got no response has
``http_code`` 0 (and, in JSON, a non-zero ``exitcode``).
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..errors import ParseError
from ..sources import Collector, Input
from ._common import (
    failure_warnings,
    finish,
    parse_float,
    printed_step,
    totals,
    unit_seconds,
    value_step,
)
from ._json import number, parse_json
from ._schemas import SAMPLES_SCHEMA

_PAIR = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(\S*)")
_LINE = re.compile(r"^\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s*)+$")
TOTAL_KEYS = ("time_total", "total")
CODE_KEYS = ("http_code", "response_code", "code", "status", "status_code")
#: the short names people give curl's cumulative times in -w templates
_TIME_KEYS = {"dns", "namelookup", "connect", "tls", "appconnect", "pretransfer", "starttransfer", "ttfb",
              "redirect", "total", "queue", "posttransfer"}


def _is_time(key: str) -> bool:
    return key.startswith("time_") or key in _TIME_KEYS


def looks_like_curl_pairs(lines: list[str]) -> bool:
    """Every line is ``key=value`` pairs and each has ``time_total=`` or ``total=``."""
    return bool(lines) and all(_LINE.match(ln) and any(k in TOTAL_KEYS for k, _ in _PAIR.findall(ln))
                               for ln in lines)


def looks_like_curl_json(first: str) -> bool:
    """A ``%{json}`` line: one JSON object with ``time_total`` and ``http_code``/``exitcode``."""
    try:
        obj = parse_json(first)
    except ValueError:
        return False
    return isinstance(obj, dict) and "time_total" in obj and ("http_code" in obj or "exitcode" in obj)


def _finish_curl(frame: pd.DataFrame, col: Collector, fmt: str, res: float | None) -> pd.DataFrame:
    codes: pd.Series = frame["status_code"].astype("int64") if "status_code" in frame \
        else pd.Series([], dtype="int64")
    vc = {str(k): int(v) for k, v in codes.astype("int64").value_counts().sort_index().items()}
    errors: dict[str, int] = {}
    if "errormsg" in frame:
        for msg in frame.loc[frame["errormsg"].notna(), "errormsg"]:
            kind = str(msg).split(":")[-1].strip() or str(msg)
            errors[kind] = errors.get(kind, 0) + 1
    failures = int((~frame["ok"]).sum()) if "ok" in frame else None
    tot = totals(len(frame), failures=failures,
                 non_2xx=int(((codes > 0) & ~codes.between(200, 299)).sum()) if len(codes) else None,
                 errors=errors, status_codes=vc,
                 included_in_latency="every line is a row; ok is False for code 0 / exitcode != 0 / status >= 400")
    return finish(frame, SAMPLES_SCHEMA, "samples", fmt, col, resolution_s=res,
                  resolution_rule="decimal places curl prints (6: 1 us)", totals=tot, warnings=failure_warnings(tot))


def _ok(code: pd.Series | None, exitcode: pd.Series | None, n: int) -> pd.Series | None:
    if code is None and exitcode is None:
        return None
    ok = pd.Series(True, index=range(n))
    if code is not None:
        ok &= code.between(1, 399).to_numpy()
    if exitcode is not None:
        ok &= exitcode.eq(0).to_numpy()
    return ok


def read_curl_pairs(inp: Input, col: Collector) -> pd.DataFrame:
    """Read ``curl -w 'dns=%{time_namelookup} … total=%{time_total} code=%{http_code}\\n'`` lines: samples.

    latency_s = ``time_total`` (or ``total``); every other time key (``time_*``,
    dns, connect, tls, pretransfer, starttransfer …) becomes ``<key>_s`` (curl's
    cumulative seconds, ``time_`` dropped); ``http_code``/``code`` → status_code
    and ok (1–399); other keys carried (numbers when they parse).
    """
    rows: list[dict[str, object]] = []
    lines: list[int] = []
    texts: list[str] = []
    for n, raw in enumerate(inp.text.splitlines(), start=1):
        if not raw.strip():
            continue
        pairs = _PAIR.findall(raw)
        d = dict(pairs)
        total_key = next((k for k in TOTAL_KEYS if k in d), None)
        if not _LINE.match(raw) or total_key is None:
            col.reject(n, raw, "expected key=value pairs with time_total= (or total=) as curl -w prints them")
            continue
        row: dict[str, object] = {}
        bad = ""
        for k, v in pairs:
            f = parse_float(v)
            if _is_time(k):
                if f is None or f < 0:
                    bad = f"{k}: expected seconds (a non-negative number)"
                    break
                name = "latency_s" if k == total_key else k.removeprefix("time_") + "_s"
                row[name] = f
            elif k in CODE_KEYS:
                if f is None or f != int(f):
                    bad = f"{k}: expected an HTTP status code"
                    break
                row["status_code"] = int(f)
            else:
                row[k] = f if f is not None else v
        if bad:
            col.reject(n, raw, bad)
            continue
        rows.append(row)
        lines.append(n)
        texts.append(d[total_key])
    if not rows:
        col.check()
        raise ParseError(inp.name, None, "", "no curl -w line with time_total= (or total=)")
    frame = pd.DataFrame(rows, index=lines)
    if "status_code" in frame:
        frame["status_code"] = frame["status_code"].astype("int64")
        ok = _ok(frame["status_code"].reset_index(drop=True), None, len(frame))
        if ok is not None:
            frame["ok"] = ok.to_numpy()
    return _finish_curl(frame, col, "curl", printed_step(texts))


def read_curl_json(inp: Input, col: Collector) -> pd.DataFrame:
    """Read ``curl -w '%{json}\\n'`` lines (one JSON object per request): samples.

    latency_s = time_total; ``time_*`` → ``<name>_s`` (cumulative seconds);
    status_code = http_code (0: no response); exitcode, errormsg, url,
    num_connects, size_download … carried; ok = exitcode 0 and status 1–399.
    """
    rows: list[dict[str, object]] = []
    lines: list[int] = []
    for n, raw in enumerate(inp.text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = parse_json(raw)
        except ValueError as e:
            col.reject(n, raw[:200], f"not a JSON object ({e}); expected one curl %{{json}} object per line")
            continue
        if not isinstance(obj, dict) or number(obj.get("time_total")) is None:
            col.reject(n, raw[:200], "expected a curl %{json} object with a numeric time_total")
            continue
        row: dict[str, object] = {}
        for k, v in obj.items():
            if k.startswith("time_"):
                x = number(v)
                row["latency_s" if k == "time_total" else k.removeprefix("time_") + "_s"] = (
                    np.nan if x is None else x)
            elif k == "http_code":
                row["status_code"] = int(v) if isinstance(v, int) else -1
            elif isinstance(v, (str, int, float, bool)) or v is None:
                row[k] = v
        rows.append(row)
        lines.append(n)
    if not rows:
        col.check()
        raise ParseError(inp.name, None, "", "no curl %{json} line with time_total")
    frame = pd.DataFrame(rows, index=lines)
    code = frame["status_code"].astype("int64").reset_index(drop=True) if "status_code" in frame else None
    exitcode = (pd.to_numeric(frame["exitcode"], errors="coerce").reset_index(drop=True)
                if "exitcode" in frame else None)
    ok = _ok(code, exitcode, len(frame))
    if ok is not None:
        frame["ok"] = ok.to_numpy()
    if "status_code" in frame:
        frame["status_code"] = frame["status_code"].astype("int64")
    for c in frame.columns:
        if frame[c].dtype == object and c not in ("ok",):
            frame[c] = frame[c].astype(object)
    return _finish_curl(frame, col, "curl_json", value_step(frame["latency_s"].to_numpy()))


def looks_like_values(lines: list[str]) -> bool:
    """Every (non-blank) line is one plain number: no header, one latency per line."""
    return bool(lines) and all(parse_float(ln) is not None for ln in lines)


def read_values(inp: Input, col: Collector, *, unit: str | None = None) -> pd.DataFrame:
    """Read one latency per line, no header: samples (latency_s only). ``unit=`` is required.

    Nothing in such a file says its unit, so without ``unit=`` a ParseError asks
    for it. Lines that are not a non-negative number are rejects.
    """
    first = next(((n, ln) for n, ln in enumerate(inp.text.splitlines(), 1) if ln.strip()), (None, ""))
    if unit is None:
        raise ParseError(inp.name, first[0], first[1],
                         "one number per line and no header: nothing says the unit; pass unit='s'|'ms'|'us'|'ns'")
    scale = unit_seconds(unit, "latency unit (unit=)")
    vals: list[float] = []
    lines: list[int] = []
    texts: list[str] = []
    for n, raw in enumerate(inp.text.splitlines(), start=1):
        s = raw.strip()
        if not s:
            continue
        v = parse_float(s)
        if v is None or v < 0:
            col.reject(n, raw, "expected one non-negative number per line")
            continue
        vals.append(v * scale)
        lines.append(n)
        texts.append(s)
    frame = pd.DataFrame({"latency_s": np.array(vals, dtype="float64")}, index=lines)
    return finish(frame, SAMPLES_SCHEMA, "samples", "values", col, resolution_s=printed_step(texts, scale),
                  resolution_rule=f"decimal places of the values, in {unit}", latency_unit=unit, unit_rule="given")
