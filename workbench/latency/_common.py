"""Shared pieces of the latency loaders: units, numbers, ISO times, frame finishing.

The input texts (:class:`~workbench.sources.Input`) and the reject collector
(:class:`~workbench.sources.Collector`) are the ones of :mod:`workbench.sources`.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..schema import Rejects, Schema, attach_rejects, validate
from ..sources import Collector

#: seconds per unit, keyed by every spelling a column name or a parameter may use
UNIT_SECONDS: dict[str, float] = {}
for _names, _scale in (
    (("s", "sec", "secs", "second", "seconds"), 1.0),
    (("ms", "msec", "msecs", "millis", "millisecond", "milliseconds"), 1e-3),
    (("us", "usec", "usecs", "µs", "μs", "micros", "microsecond", "microseconds"), 1e-6),
    (("ns", "nsec", "nsecs", "nanos", "nanosecond", "nanoseconds"), 1e-9),
    (("m", "min", "mins", "minute", "minutes"), 60.0),
    (("h", "hour", "hours"), 3600.0),
):
    for _n in _names:
        UNIT_SECONDS[_n] = _scale


def unit_seconds(unit: str, what: str = "unit") -> float:
    """Seconds per ``unit`` (s, ms, us, ns and common spellings).

    ``what`` names the parameter or column in the message of the
    :class:`~workbench.errors.UsageError` raised for any other unit.
    """
    key = unit.strip().lower()
    if key in UNIT_SECONDS and UNIT_SECONDS[key] <= 1.0:
        return UNIT_SECONDS[key]
    raise UsageError(f"unknown {what} {unit!r}; expected one of s, ms, us, ns (or a spelling such as msec, usec)")


def finish(
    frame: pd.DataFrame,
    schema: Schema,
    kind: str,
    fmt: str,
    col: Collector,
    *,
    resolution_s: float | None,
    resolution_rule: str,
    **attrs: object,
) -> pd.DataFrame:
    """Validate ``frame``, set the standard attrs and attach the rejects; return it.

    Raises the earliest rejected record first when ``col`` is strict. attrs:
    kind, format, source, skipped, resolution_s (the step of the latency values
    as the source prints them, seconds; None when the source prints full
    floats or its step is relative), resolution_rule (where that step comes
    from), ``attrs`` given here, schema and rejects (a
    :class:`~workbench.schema.Rejects`, in line order).
    """
    col.check()
    frame = frame.reset_index(drop=True)
    if "latency_s" in frame:
        frame["latency_s"] = frame["latency_s"].astype("float64")
    if "timestamp_s" in frame:
        frame["timestamp_s"] = frame["timestamp_s"].astype("float64")
    validate(frame, schema)
    frame.attrs["kind"] = kind
    frame.attrs["format"] = fmt
    frame.attrs["source"] = col.source
    frame.attrs["skipped"] = dict(col.skipped)
    frame.attrs["resolution_s"] = resolution_s
    frame.attrs["resolution_rule"] = resolution_rule
    for k, v in attrs.items():
        frame.attrs[k] = v
    return attach_rejects(frame, Rejects.from_rows(col.sorted_rows()))


_NUM_RE = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def parse_float(text: str) -> float | None:
    """A finite float from text, or None."""
    t = text.strip()
    if not _NUM_RE.match(t):
        return None
    v = float(t)
    return v if math.isfinite(v) else None


def iso_to_epoch(values: pd.Series) -> pd.Series:
    """ISO 8601 / RFC 3339 strings to float epoch seconds (NaN where unparseable).

    Strings without an offset are taken as UTC. Offsets are honoured.
    """
    ts = pd.to_datetime(values, format="ISO8601", utc=True, errors="coerce")
    arr = ts.dt.tz_convert(None).dt.as_unit("ns").to_numpy()
    out = arr.view("int64").astype("float64") / 1e9
    out[np.isnat(arr)] = np.nan
    return pd.Series(out, index=values.index, dtype="float64")


_DECIMALS_RE = re.compile(r"^[+-]?\d*(?:\.(\d*))?$")


def printed_step(texts: Iterable[object], scale: float = 1.0) -> float | None:
    """The step numbers are printed with (10**-decimals × ``scale``, the finest seen), or None.

    None when no value is a plain decimal (empty input, exponent form): the
    source then prints full floats and carries no fixed step.
    """
    best: int | None = None
    for t in texts:
        m = _DECIMALS_RE.match(str(t).strip())
        if m is None or not str(t).strip():
            continue
        d = len(m[1] or "")
        best = d if best is None else max(best, d)
    if best is None:
        return None
    return float(f"1e-{best}") * scale if best else scale


def totals(requests: int | None, *, failures: int | None = None, non_2xx: int | None = None,
           errors: dict[str, int] | None = None, status_codes: dict[str, int] | None = None,
           included_in_latency: str = "") -> dict[str, object]:
    """The run's totals, in the one documented place (``attrs["totals"]``) of summary formats.

    requests: requests the tool counted; failures: those it counted as failed
    (transport errors, or by its own rule); non_2xx: responses with a status
    outside 2xx (3xx counts here too unless the tool says otherwise); errors:
    {kind: count}; status_codes: {code: count}; included_in_latency: which of
    them the tool's latency figures include.
    """
    return {"requests": requests, "failures": failures, "non_2xx": non_2xx, "errors": dict(errors or {}),
            "status_codes": dict(status_codes or {}), "included_in_latency": included_in_latency}


def failure_warnings(t: dict[str, object]) -> list[str]:
    """Warnings saying that a run had failures or non-2xx responses (so they never look like successes)."""
    out = []
    req = t.get("requests")
    for key, what in (("failures", "failed"), ("non_2xx", "got a non-2xx response")):
        n = t.get(key)
        if isinstance(n, int) and n > 0:
            of = f" of {req}" if isinstance(req, int) else ""
            out.append(f"{n}{of} requests {what}" + (f"; latency figures: {t['included_in_latency']}"
                                                     if t.get("included_in_latency") else ""))
    return out


def value_step(values: np.ndarray, scale: float = 1.0) -> float | None:
    """The decimal step the values were written with (10**-d for the smallest d that fits all), × ``scale``.

    Estimated from the values (as read into floats): 1 for whole numbers, 0.01
    for two decimals, …; None when more than 9 decimals are needed (full floats)
    or there are no finite values.
    """
    v = np.asarray(values, dtype="float64")
    v = v[np.isfinite(v)]
    if v.size == 0:
        return None
    for d in range(10):
        x = v * 10.0**d
        if np.all(np.abs(x - np.round(x)) <= 1e-6 * np.maximum(1.0, np.abs(x)) + 1e-9):
            return 10.0**-d * scale
    return None
