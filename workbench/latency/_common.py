"""Shared pieces of the latency loaders: units, reject collection, frame finishing."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import ParseError
from ..schema import Schema, attach_rejects, validate

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
    """Seconds per ``unit`` (s, ms, us, ns and common spellings); ValueError otherwise."""
    key = unit.strip().lower()
    if key in UNIT_SECONDS and UNIT_SECONDS[key] <= 1.0:
        return UNIT_SECONDS[key]
    raise ValueError(f"unknown {what} {unit!r}; expected one of s, ms, us, ns")


@dataclass
class Input:
    """One input text with the name used in messages (a path or '<text>')."""

    name: str
    text: str
    _lines: list[str] | None = field(default=None, repr=False, compare=False)

    def line(self, n: int) -> str:
        """The text of 1-based line ``n`` (empty when out of range)."""
        if self._lines is None:
            self._lines = self.text.splitlines()
        return self._lines[n - 1] if 0 < n <= len(self._lines) else ""


@dataclass
class Collector:
    """Collects rejected records; with ``strict`` :meth:`check` raises the earliest one."""

    source: str
    strict: bool = False
    rows: list[tuple[str, int, str, str]] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)

    def reject(self, line: int, text: str, reason: str) -> None:
        """Keep a rejected record; with ``strict`` the earliest one is raised by :meth:`check`."""
        self.rows.append((self.source, int(line), text, reason))

    def check(self) -> None:
        """With ``strict``, raise ParseError for the first rejected record (by line)."""
        if self.strict and self.rows:
            src, line, text, reason = min(self.rows, key=lambda r: r[1])
            raise ParseError(src, line, text, reason)

    def skip(self, what: str, n: int = 1) -> None:
        """Count records that parse fine but are not latency records (kept in attrs['skipped'])."""
        self.skipped[what] = self.skipped.get(what, 0) + n


def fail(source: str, line: int | None, text: str, reason: str) -> ParseError:
    """A ParseError for a whole-file problem (wrong type, missing columns)."""
    return ParseError(source, line, text, reason)


def finish(
    frame: pd.DataFrame,
    schema: Schema,
    kind: str,
    fmt: str,
    col: Collector,
    **attrs: object,
) -> pd.DataFrame:
    """Validate ``frame``, attach rejects and the standard attrs, return it."""
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
    attach_rejects(frame, sorted(col.rows, key=lambda r: r[1]))
    return frame


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
