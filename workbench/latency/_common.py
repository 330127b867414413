"""Shared pieces of the latency loaders: units, numbers, ISO times, frame finishing.

The input texts (:class:`~workbench.sources.Input`) and the reject collector
(:class:`~workbench.sources.Collector`) are the ones of :mod:`workbench.sources`.
"""
from __future__ import annotations

import math
import re

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
    **attrs: object,
) -> pd.DataFrame:
    """Validate ``frame``, set the standard attrs and attach the rejects; return it.

    Raises the earliest rejected record first when ``col`` is strict. attrs:
    kind, format, source, skipped, ``attrs`` given here, schema and rejects
    (a :class:`~workbench.schema.Rejects`, in line order).
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
