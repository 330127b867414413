"""Plain CSV/TSV of latency samples, one row per request.

Latency column: the first column whose name (case-insensitive, spaces/dashes as
``_``, ``(ms)`` as ``_ms``) is one of ``latency``, ``elapsed``, ``duration``,
``response_time``, ``rtt``, ``resp_time``, ``time_taken``, optionally followed by a
unit ``_s``/``_ms``/``_us``/``_ns`` (also ``_sec``, ``_msec``, ``_usec``, ``_nsec``,
``_seconds``…). Without a unit in the name, ``unit=`` is required. An empty
latency cell is a request without a latency (no reply) and becomes NaN
(counted in attrs["no_latency"]); any other non-number is a reject.

Timestamp column: ``timestamp``, ``ts``, ``epoch``, ``time``, ``start_time``,
``start``, ``datetime``, ``date`` or ``t``, optionally ``_epoch`` and a unit
(``timestamp_s``, ``ts_ms``, ``time_us``, ``epoch_ns``). Values are numbers or
ISO 8601 strings (no offset = UTC). A numeric column without a unit in its name
is read by magnitude: median < 1e11 → seconds, < 1e14 → ms, < 1e17 → µs, else ns
(epoch times since 1973 in each unit); a median below 1e8 is not an epoch in any
unit, so a unit is then required (name it, or pass ``timestamp_unit=``).

``ok``/``success`` columns (true/false, yes/no, 1/0) become the bool ``ok``.
All other columns are carried through, typed int/float/bool/string.
"""
from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ..errors import ParseError, UsageError

if TYPE_CHECKING:
    from ..cache import Key
from ..sources import INCOMPLETE, Collector, Input, incomplete_tail
from ._common import finish, iso_to_epoch, unit_seconds, value_step
from ._schemas import SAMPLES_SCHEMA
from ._table import Table, parse_bool, split_table, to_float

_UNITS = (
    "s|sec|secs|second|seconds|ms|msec|msecs|millis|milliseconds|us|usec|usecs|micros|"
    "microseconds|ns|nsec|nsecs|nanos|nanoseconds"
)
LATENCY_BASES = ("latency", "elapsed", "duration", "response_time", "rtt", "resp_time", "time_taken")
TIMESTAMP_BASES = ("timestamp", "ts", "epoch", "time", "start_time", "start", "datetime", "date", "t")
_LAT_RE = re.compile(rf"^(?P<base>{'|'.join(LATENCY_BASES)})(?:_in)?(?:_(?P<unit>{_UNITS}))?$")
_TS_RE = re.compile(
    rf"^(?P<base>{'|'.join(TIMESTAMP_BASES)})(?:_epoch)?(?:_(?P<unit>{_UNITS}))?$|^epoch_(?P<unit2>{_UNITS})$"
)
_OK_NAMES = ("ok", "success", "succeeded", "is_ok")


def normalise_name(name: str) -> str:
    """``'Latency (ms)'`` → ``'latency_ms'``; ``µs`` → ``us``."""
    n = name.strip().lower().replace("µ", "u").replace("μ", "u")
    n = re.sub(r"[\(\[\{]\s*([a-z]+)\s*[\)\]\}]", r"_\1", n)
    n = re.sub(r"[^a-z0-9]+", "_", n).strip("_")
    return n


#: the columns of siege's ``--log`` file (one summary row per run), normalised
SIEGE_LOG_COLUMNS = ("date_time", "trans", "elap_time", "data_trans", "resp_time", "trans_rate")
SIEGE_LOG_REASON = (
    "this is siege's --log file: one summary row per siege run (its 'Resp Time' is the run's mean "
    "response time, in s), not one row per request; it holds no latency samples or distribution. "
    "Read siege's per-request lines (siege -v stdout) or its summary (format='siege') instead; "
    "workbench.latency.read_siege_log() gives the runs as a table")


def is_siege_log_header(header: list[str]) -> bool:
    """Whether a header is siege's ``--log`` header (Date & Time, Trans, Elap Time, … Resp Time …)."""
    names = [normalise_name(h) for h in header]
    return all(c in names for c in SIEGE_LOG_COLUMNS)


def find_latency_column(header: list[str]) -> tuple[str, str | None] | None:
    """(column, unit from its name or None) of the latency column, by name priority."""
    matches = []
    for h in header:
        m = _LAT_RE.match(normalise_name(h))
        if m:
            matches.append((LATENCY_BASES.index(m["base"]), h, m["unit"]))
    if not matches:
        return None
    matches.sort(key=lambda t: t[0])
    return matches[0][1], matches[0][2]


def find_timestamp_column(header: list[str]) -> tuple[str, str | None] | None:
    """(column, unit from its name or None) of the timestamp column, by name priority."""
    matches = []
    for h in header:
        m = _TS_RE.match(normalise_name(h))
        if m:
            base = m["base"] or "epoch"
            matches.append((TIMESTAMP_BASES.index(base), h, m["unit"] or m["unit2"]))
    if not matches:
        return None
    matches.sort(key=lambda t: t[0])
    return matches[0][1], matches[0][2]


def epoch_unit_by_magnitude(values: np.ndarray) -> str | None:
    """The epoch unit implied by the median magnitude, or None when not an epoch."""
    v = np.abs(values[np.isfinite(values)])
    if v.size == 0:
        return None
    med = float(np.median(v))
    if med < 1e8:
        return None
    if med < 1e11:
        return "s"
    if med < 1e14:
        return "ms"
    if med < 1e17:
        return "us"
    return "ns"


@dataclass
class _Plan:
    """What each header column means, decided once per file."""

    header: list[str]
    lat_col: str
    lat_unit: str
    scale: float
    ts_col: str | None
    ts_unit: str | None
    ok_col: str | None


def _plan(name: str, tab: Table, unit: str | None, latency_column: str | None, timestamp_column: str | None,
          timestamp_unit: str | None) -> _Plan:
    header = tab.header
    lat: tuple[str, str | None] | None
    ts: tuple[str, str | None] | None
    if len(set(header)) != len(header):
        raise ParseError(name, tab.header_line, ",".join(header), "duplicate column names in the header")
    if latency_column is not None:
        if latency_column not in header:
            raise ParseError(name, tab.header_line, ",".join(header),
                       f"latency_column {latency_column!r} is not in the header")
        m = _LAT_RE.match(normalise_name(latency_column))
        lat = (latency_column, m["unit"] if m else None)
    else:
        if is_siege_log_header(header):
            raise ParseError(name, tab.header_line, ",".join(header), SIEGE_LOG_REASON)
        lat = find_latency_column(header)
    if lat is None:
        raise ParseError(
            name, tab.header_line, ",".join(header),
            "no latency column: expected a header naming one of "
            + ", ".join(f"{b}[_s|_ms|_us|_ns]" for b in LATENCY_BASES)
            + " (or pass latency_column=)",
        )
    lat_col, name_unit = lat
    if name_unit and unit and unit_seconds(name_unit) != unit_seconds(unit, "latency unit (unit=)"):
        raise UsageError(f"unit={unit!r} contradicts {name}:{tab.header_line}: latency column {lat_col!r} "
                         f"says {name_unit!r}; leave unit= out (or pass unit={name_unit!r})")
    lat_unit = name_unit or unit
    if not lat_unit:
        raise ParseError(
            name, tab.header_line, ",".join(header),
            f"latency column {lat_col!r} has no unit in its name; pass unit='s'|'ms'|'us'|'ns' "
            f"(or name the column e.g. {normalise_name(lat_col)}_ms)",
        )
    if timestamp_column is not None:
        if timestamp_column not in header:
            raise ParseError(name, tab.header_line, ",".join(header),
                       f"timestamp_column {timestamp_column!r} is not in the header")
        m = _TS_RE.match(normalise_name(timestamp_column))
        ts = (timestamp_column, (m["unit"] or m["unit2"]) if m else None)
    else:
        ts = find_timestamp_column([h for h in header if h != lat_col])
    ok_col = next((h for h in header if normalise_name(h) in _OK_NAMES and h not in (lat_col,)), None)
    for clash in ("latency_s", "timestamp_s", "ok"):
        if clash in header and clash not in (lat_col, ts[0] if ts else None, ok_col):
            raise ParseError(name, tab.header_line, ",".join(header),
                       f"column {clash!r} would clash with the normalised column of the same name")
    return _Plan(header, lat_col, lat_unit, unit_seconds(lat_unit, "latency unit (unit=)"),
                 ts[0] if ts else None, (ts[1] if ts else None) or timestamp_unit, ok_col)


def _convert(inp: Input, tab: Table, plan: _Plan, col: Collector) -> pd.DataFrame:
    """Typed output rows for the records of ``tab``; bad records go to ``col``.

    May fix ``plan.ts_unit`` from the values' magnitude (the first time it is needed).
    """
    df = tab.frame()
    lat_col, ts_col, ok_col = plan.lat_col, plan.ts_col, plan.ok_col
    bad_reason = pd.Series("", index=df.index, dtype=object)

    lat_v = to_float(df[lat_col]) * plan.scale
    no_latency = df[lat_col].isna()  # empty cell: the request is listed but has no latency (no reply)
    bad = ~np.isfinite(lat_v) & ~no_latency
    bad_reason[bad] = f"latency {lat_col!r}: expected a number (or an empty cell for no reply)"
    bad_reason[~bad & (lat_v < 0)] = f"latency {lat_col!r}: negative"

    ts_v: pd.Series | None = None
    if ts_col is not None:
        raw = df[ts_col]
        empty = raw.isna()
        num = to_float(raw)
        numeric = num.notna()
        # a unit (in the column name, given, or fixed by an earlier block) means numbers: anything else is a reject
        if plan.ts_unit is not None or numeric.sum() >= max(1, (~empty).sum() // 2):
            if plan.ts_unit is None:
                plan.ts_unit = epoch_unit_by_magnitude(num.to_numpy())
                if plan.ts_unit is None:
                    raise ParseError(
                        inp.name, tab.header_line, inp.line(tab.header_line),
                        f"timestamp column {ts_col!r} has no unit in its name and its values are too small "
                        "to be epoch times; name it e.g. time_s/time_ms or pass timestamp_unit=",
                    )
            ts_v = num * unit_seconds(plan.ts_unit, "timestamp unit (timestamp_unit=)")
            badts = ~empty & ~numeric
            bad_reason[badts & bad_reason.eq("")] = f"timestamp {ts_col!r}: expected a number"
        else:
            ts_v = iso_to_epoch(raw.astype(object).where(~empty, None))
            badts = ~empty & ts_v.isna()
            bad_reason[badts & bad_reason.eq("")] = f"timestamp {ts_col!r}: expected ISO 8601 date-time"
    ok_v: pd.Series | None = None
    if ok_col is not None:
        ok_v, ok_bad = parse_bool(df[ok_col])
        bad_reason[pd.Series(ok_bad, index=df.index) & bad_reason.eq("")] = f"{ok_col!r}: expected true/false"

    bad_rows = bad_reason.ne("")
    for line in df.index[bad_rows]:
        col.reject(int(line), inp.line(int(line)), bad_reason[line])
    keep = ~bad_rows.to_numpy()
    columns: dict[str, pd.Series] = {}  # joined once: a file with thousands of columns stays linear
    for h in plan.header:
        if h == lat_col:
            columns["latency_s"] = lat_v[keep].astype("float64")
        elif h == ts_col and ts_v is not None:
            columns["timestamp_s"] = ts_v[keep].astype("float64")
        elif h == ok_col and ok_v is not None:
            columns["ok"] = ok_v[keep].astype(bool)
        else:
            columns[h] = _retype(df[h][keep]) if bad_rows.any() else df[h]
    if not columns:
        return pd.DataFrame(index=df.index[keep])
    return pd.concat(columns, axis=1).reindex(df.index[keep])


def _attrs(plan: _Plan, out: pd.DataFrame, comments: list[str]) -> dict[str, object]:
    step = value_step(out["latency_s"].to_numpy() / plan.scale, plan.scale)
    attrs: dict[str, object] = {"latency_column": plan.lat_col, "latency_unit": plan.lat_unit,
                                "no_latency": int(out["latency_s"].isna().sum()), "resolution_s": step,
                                "resolution_rule": f"decimal step of the {plan.lat_col!r} values in {plan.lat_unit}"
                                if step is not None else "values carry more than 9 decimals (full floats)"}
    if plan.ts_col is not None:
        vals = out["timestamp_s"].to_numpy()
        med = float(np.nanmedian(vals)) if np.isfinite(vals).any() else np.nan
        attrs["timestamp_column"] = plan.ts_col
        attrs["timestamp_unit"] = plan.ts_unit
        attrs["timestamp_origin"] = "epoch" if med >= 1e8 else "relative"
    if comments:
        attrs["comments"] = comments
    return attrs


def _step(attrs: dict[str, object]) -> float | None:
    v = attrs.pop("resolution_s")
    return v if isinstance(v, float) else None


def _rule(attrs: dict[str, object]) -> str:
    return str(attrs.pop("resolution_rule"))


def read_csv_samples(
    inp: Input,
    col: Collector,
    *,
    unit: str | None = None,
    latency_column: str | None = None,
    timestamp_column: str | None = None,
    timestamp_unit: str | None = None,
) -> pd.DataFrame:
    """Read a plain CSV/TSV of samples; returns a SAMPLES_SCHEMA frame.

    Columns: ``latency_s``; ``timestamp_s`` when a timestamp column exists; ``ok``
    when an ok/success column exists; every other column carried through. The
    source latency/timestamp/ok columns are replaced by these, in place.
    """
    tab = split_table(inp, col)
    plan = _plan(inp.name, tab, unit, latency_column, timestamp_column, timestamp_unit)
    out = _convert(inp, tab, plan, col)
    attrs = _attrs(plan, out, tab.comments)
    return finish(out, SAMPLES_SCHEMA, "samples", "csv", col, resolution_s=_step(attrs), resolution_rule=_rule(attrs),
                  **attrs)


def read_csv_stream(
    path: Path,
    col: Collector,
    *,
    unit: str | None = None,
    latency_column: str | None = None,
    timestamp_column: str | None = None,
    timestamp_unit: str | None = None,
    block_bytes: int = 32 << 20,
    progress: bool = True,
    key: Key | None = None,
) -> pd.DataFrame:
    """Like :func:`read_csv_samples` for a big file, read in blocks of whole records.

    Memory holds one block of text at a time (plus the typed result); a progress
    bar counts bytes. Blocks end at a line break outside quotes, so a quoted field
    spanning lines is never cut. A unit-less numeric timestamp column's unit is
    decided by the magnitude of the first block's values. ``key``, when given,
    is fed every byte read (the cache key of what was parsed).
    """
    size = path.stat().st_size
    parts: list[pd.DataFrame] = []
    comments: list[str] = []
    plan: _Plan | None = None
    header_text = ""
    line0 = 0  # file lines before the current block
    with open(path, "rb") as f, tqdm(total=size, unit="B", unit_scale=True, desc=path.name,
                                      disable=not progress) as bar:
        carry = b""
        while True:
            data = f.read(block_bytes)
            if key is not None:
                key.feed(data)
            buf = carry + data
            if not buf:
                break
            if data:
                cut = _safe_cut(buf)
                if cut < 0:  # no complete record yet: read more
                    carry = buf
                    continue
                block, carry = buf[: cut + 1], buf[cut + 1 :]
            else:
                block, carry = buf, b""
            if line0 == 0 and block.startswith(b"\xef\xbb\xbf"):
                block = block[3:]
            text = block.decode("utf-8", errors="replace")
            if not data and (tail := incomplete_tail(text)) is not None:  # the file's last line lacks its end
                col.reject(line0 + tail[0], tail[1], INCOMPLETE)
                text = text[: len(text) - len(tail[1])]
            if plan is None and data and not any(
                    ln.strip() and not ln.startswith("#") for ln in text.splitlines()):
                carry = block + carry  # only comments so far: the header is further on
                continue
            n_lines = len(text.splitlines())
            if plan is None:
                chunk = Input(str(path), text)
                tab = split_table(chunk, col)
                plan = _plan(str(path), tab, unit, latency_column, timestamp_column, timestamp_unit)
                header_text = chunk.line(tab.header_line) + "\n"
                first = _convert(chunk, tab, plan, col)
                if len(first):
                    parts.append(first)
                comments += tab.comments
            else:
                # the header line stands in front of each block; lines shift by line0 - 1
                chunk = Input(str(path), header_text + text)
                sub = Collector(str(path), False)
                tab = split_table(chunk, sub)
                out = _convert(chunk, tab, plan, sub)
                out.index = out.index + (line0 - 1)
                for _src, ln, t, r in sub.rows:
                    col.reject(ln + line0 - 1, t, r)
                if len(out):
                    parts.append(out)
                comments += tab.comments
            line0 += n_lines
            bar.update(len(block))
            if not data:
                break
    if plan is None:
        raise ParseError(str(path), None, "", "no header line: the input is empty")
    if not parts:
        parts.append(_convert(Input(str(path), header_text), split_table(Input(str(path), header_text), col),
                              plan, col))
    out = pd.concat(parts) if len(parts) > 1 else parts[0]
    attrs = _attrs(plan, out, comments)
    return finish(out, SAMPLES_SCHEMA, "samples", "csv", col, resolution_s=_step(attrs), resolution_rule=_rule(attrs),
                  streamed=True, **attrs)


def _safe_cut(buf: bytes) -> int:
    """Index of the last newline in ``buf`` that is outside double quotes, or -1."""
    pos = buf.rfind(b"\n")
    if b'"' not in buf:
        return pos
    while pos >= 0:
        if buf.count(b'"', 0, pos) % 2 == 0:
            return pos
        pos = buf.rfind(b"\n", 0, pos)
    return -1


def _retype(values: pd.Series) -> pd.Series:
    """Re-infer a carried column's type once rejected rows are gone (as pandas would have)."""
    if len(values) == 0 or not (pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)):
        return values
    return pd.read_csv(io.StringIO("x\n" + "\n".join(_quote(v) for v in values) + "\n"),
                       keep_default_na=False, na_values=[""], skip_blank_lines=False)["x"].set_axis(values.index)


def _quote(v: object) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return ""
    s = str(v)
    return '"' + s.replace('"', '""') + '"' if any(c in s for c in ',"\n\r') else s
