"""Where time goes in a trace: idle waits versus kernel work, duration peaks, calls over a bound.

A long system call is not necessarily a slow one. ``futex``, ``poll`` or a
``read`` on a socket that lasts 500 ms mostly *waits*: the thread sleeps and
uses no CPU. Calls that do work in the kernel (``openat``, ``mmap``, ``write``
to a file, ``fsync``…) are the ones whose duration is cost. This module

- classifies every call of a :func:`workbench.syscalls.read_strace` frame as
  ``idle`` (a wait) or ``kernel`` (:func:`classify_waits`), using the ``-y``
  fd annotations to tell a read on a socket or pipe from a read on a file;
- finds sharp peaks in the per-syscall duration histogram on log bins
  (:func:`duration_peaks`): clusters such as futex timeouts at 250, 500 and
  1000 ms, or a poll loop's 100 ms timeout, and nothing in smooth data;
- lists the calls longer than a bound (:func:`calls_exceeding`) and sums time
  by class (:func:`wait_summary`).

Durations come from strace ``-T`` (``duration_s``); rows without one are ignored.

Every analysis works on the syscall's categorical codes and numpy arrays: the
class of each call, the counted calls with a duration and their codes are
derived once per frame and shared by the analyses that follow (see
``_derived``); argument text is read only for the calls that may wait on an fd,
and a top-n or a bound selects positions before it takes the few rows shown.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..schema import Column, Schema, requires
from ..sources import Source
from ..verdicts import Decision, decide
from ._derived import (
    ALWAYS_IDLE,
    FD_READS,
    Derived,
    floats,
    group_by_code,
    group_order_stats,
    name_mask,
)

__all__ = [
    "ALWAYS_IDLE",
    "FD_READS",
    "DurationPeak",
    "WaitMatch",
    "calls_exceeding",
    "classify_waits",
    "duration_peaks",
    "long_waits",
    "match_waits",
    "other_long_calls",
    "peaks_frame",
    "read_wait_log",
    "slowest_calls",
    "timed_wait_peaks",
    "wait_log_schema",
    "wait_summary",
]

def classify_waits(frame: pd.DataFrame) -> pd.Series:
    """``"idle"`` or ``"kernel"`` for every row of a read_strace frame (NaN for non-call rows).

    idle: :data:`ALWAYS_IDLE` calls, and reads/receives (also sends, writes and
    connects, which block only on a full buffer or a handshake) whose first
    argument the ``-y`` annotation shows to be a socket, pipe, eventfd,
    signalfd, timerfd or terminal. Everything else is kernel work. Without
    ``-y`` annotations reads cannot be told apart and count as kernel work.
    Returns a categorical Series aligned with ``frame``.
    """
    requires(frame, "kind", "syscall", "args")
    der = Derived(frame)
    codes = np.where(der.idle(), 0, 1).astype(np.int8)
    codes[~der.is_call()] = -1
    return pd.Series(pd.Categorical.from_codes(codes, categories=pd.Index(["idle", "kernel"])), index=frame.index,
                     name="wait_class")


#: the columns of a read_strace frame the timed-call analyses read
_TIMED = ("kind", "ret_text", "syscall", "args", "duration_s", "pid", "timestamp_s", "line")
_CLASS_NAMES = np.array(["idle", "kernel"], dtype=object)


def _text_like_table(out: pd.DataFrame, any_timed: bool) -> pd.DataFrame:
    """An empty selection keeps the text dtype pandas infers for the table of all timed calls."""
    if len(out) == 0 and any_timed:
        text = pd.Series(["x"]).dtype  # the default string dtype of this pandas
        for c in out.columns:
            if out[c].dtype == object:
                out[c] = out[c].astype(text)
    return out


def _rows(frame: pd.DataFrame, pos: np.ndarray, columns: Sequence[str]) -> dict[str, np.ndarray]:
    """The values of ``columns`` at row positions ``pos`` (text columns as Python objects, like ``astype(object)``)."""
    out: dict[str, np.ndarray] = {}
    for c in columns:
        full = frame[c]
        s = full.iloc[pos]
        if c in ("args", "ret_text"):
            out[c] = s.astype(object).to_numpy()
        elif isinstance(s.dtype, pd.api.extensions.ExtensionDtype) and s.dtype.kind in "iu" and full.hasnans:
            out[c] = s.to_numpy(dtype="float64", na_value=np.nan)  # as the whole column's to_numpy() reads
        else:
            out[c] = s.to_numpy()
    return out


# ----------------------------------------------------------------------------- peaks

@dataclass(frozen=True)
class DurationPeak:
    """A sharp cluster of durations of one syscall.

    Fields: ``syscall``; ``location_s`` (median duration of the calls in the
    peak); ``low_s``/``high_s`` (the peak's window on the log axis); ``count``
    (calls in the window); ``background`` (calls the smooth background predicts
    in the same window); ``ratio`` (count / background, inf when it is zero);
    ``p_value`` (Poisson tail probability of ``count`` given the background,
    before the correction for the number of bins); ``wait_class`` (the class of
    most calls in the peak: idle or kernel).
    """

    syscall: str
    location_s: float
    low_s: float
    high_s: float
    count: int
    background: float
    ratio: float
    p_value: float
    wait_class: str


def _background(counts: np.ndarray, half_window: int, gap: int) -> np.ndarray:
    """Local background per bin: mean of the side bands [i-w, i-g-1] ∪ [i+g+1, i+w]."""
    n = counts.size
    csum = np.concatenate([[0.0], np.cumsum(counts, dtype=float)])
    idx = np.arange(n)

    def band(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo = np.clip(lo, 0, n)
        hi = np.clip(hi, 0, n)
        width = np.maximum(hi - lo, 0)
        return csum[np.maximum(hi, lo)] - csum[lo], width

    s1, w1 = band(idx - half_window, idx - gap)
    s2, w2 = band(idx + gap + 1, idx + half_window + 1)
    width = w1 + w2
    with np.errstate(invalid="ignore", divide="ignore"):
        bg = np.where(width > 0, (s1 + s2) / np.maximum(width, 1), 0.0)
    return bg


def duration_peaks(frame: pd.DataFrame, syscalls: Iterable[str] | None = None, *, bins_per_decade: int = 50,
                   min_s: float = 1e-4, max_s: float = 100.0, min_count: int = 5, min_ratio: float = 4.0,
                   alpha: float = 2e-3, half_window: int = 10, gap: int = 2,
                   background_floor: float = 0.2, pad_bins: int = 2) -> tuple[DurationPeak, ...]:
    """Sharp peaks of each syscall's duration histogram on log bins (one result per peak).

    Per syscall the ``-T`` durations are binned on ``bins_per_decade`` log bins
    between ``min_s`` and ``max_s``. A bin is *in excess* when its count is at
    least ``min_count``, at least ``min_ratio`` times the local background (mean
    of the bins ``gap+1 … half_window`` away on both sides, at least
    ``background_floor``), and the Poisson probability of so many calls given that
    background is below ``alpha`` divided by the number of bins of both grids
    below (Bonferroni; with the default 2e-3 and the floor background, 5 calls
    in one bin are enough). The bins are evaluated on two grids, the second shifted by half a bin, so
    that calls clustered tightly around a bin edge are not split in two: **any
    ``min_count`` calls lying within a factor 10^(1/(2·bins_per_decade)) of each
    other (±1.2 % at 50 bins per decade) share a bin of one grid** and are found
    when their background is at the floor (no more than a few stray calls 3–10
    bins away).
    Excess bins, each widened by ``pad_bins`` bins on both sides (at 50 bins per
    decade, 2 bins ≈ ±10 %: a timeout woken a little late still counts), merge
    into one peak where they overlap; the peak's location is the median
    duration inside its window.
    Durations outside [``min_s``, ``max_s``) are left out: below 100 µs strace's
    microsecond resolution and its own overhead make every fast call pile up on
    a few integer microsecond values, which are not the clusters sought here.

    A smooth distribution (log-normal, exponential, a uniform spread) has no bin
    several times above its neighbours, so it yields no peak; a timer or timeout
    (every call lasting the same 250 ms) piles up in one or two bins and does.
    Returns peaks sorted by syscall then location.
    """
    requires(frame, *_TIMED)
    if not (0 < min_s < max_s):
        raise UsageError(f"duration_peaks(min_s={min_s!r}, max_s={max_s!r}): expected 0 < min_s < max_s")
    if bins_per_decade < 1:
        raise UsageError(f"duration_peaks(bins_per_decade={bins_per_decade!r}): expected at least 1")
    from scipy import stats

    der = Derived(frame)
    tv = der.timed()
    # one pass: the calls in [min_s, max_s) grouped by syscall code (a stable sort of the codes)
    keep = np.flatnonzero((tv.dur >= min_s) & (tv.dur < max_s))
    kcode = tv.code[keep]
    order = np.argsort(kcode, kind="stable")
    kcode = kcode[order]
    kdur = tv.dur[keep][order]
    kidle = der.timed_idle()[keep][order]
    bounds = np.searchsorted(kcode, np.arange(len(tv.names) + 1), side="left")
    at = {str(n): i for i, n in enumerate(tv.names)}
    if syscalls is None:
        present = np.unique(tv.code)
        names = sorted({str(tv.names[c]) for c in present[present >= 0]})
    else:
        names = list(syscalls)
    n_edges = int(round((math.log10(max_s) - math.log10(min_s)) * bins_per_decade)) + 1
    step = 1.0 / bins_per_decade
    # two grids, the second shifted by half a bin: calls clustered within half a bin width lie in one bin of one grid
    grids = [np.logspace(math.log10(min_s), math.log10(max_s), n_edges),
             np.logspace(math.log10(min_s) - step / 2, math.log10(max_s) + step / 2, n_edges + 1)]
    threshold = alpha / sum(g.size - 1 for g in grids)
    pad = 10 ** (pad_bins * step)
    peaks: list[DurationPeak] = []
    for name in names:
        code = at.get(str(name))
        if code is None:
            continue
        d = kdur[bounds[code]:bounds[code + 1]]
        classes = kidle[bounds[code]:bounds[code + 1]]
        if d.size < min_count:
            continue
        windows: list[list[float]] = []
        dens: list[tuple[np.ndarray, np.ndarray]] = []
        for edges in grids:
            nb = edges.size - 1
            idx = np.clip(np.searchsorted(edges, d, side="right") - 1, 0, nb - 1)
            counts = np.bincount(idx, minlength=nb).astype(float)
            bg = np.maximum(_background(counts, half_window, gap), background_floor)
            dens.append((edges, bg))
            pvals = stats.poisson.sf(counts - 1, bg)
            excess = (counts >= min_count) & (counts >= min_ratio * bg) & (pvals < threshold)
            for b in np.flatnonzero(excess):
                windows.append([float(edges[b]) / pad, float(edges[b + 1]) * pad])
        if not windows:
            continue
        windows.sort()
        merged = [windows[0]]
        for lo, hi in windows[1:]:
            if lo <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        edges0, bg0 = dens[0]
        for lo_s, hi_s in merged:
            lo_s, hi_s = max(lo_s, min_s), min(hi_s, max_s)
            inside = (d >= lo_s) & (d < hi_s)
            count = int(inside.sum())
            # the background density of the first grid, per bin, times the window's width in bins
            centres = np.sqrt(edges0[:-1] * edges0[1:])
            per_bin = bg0[(centres >= lo_s) & (centres < hi_s)]
            width_bins = math.log10(hi_s / lo_s) * bins_per_decade
            background = float(per_bin.mean() * width_bins) if per_bin.size else background_floor * width_bins
            p = float(stats.poisson.sf(count - 1, background))
            n_idle = int(classes[inside].sum())
            peaks.append(DurationPeak(
                syscall=str(name), location_s=float(np.median(d[inside])), low_s=lo_s, high_s=hi_s,
                count=count, background=background,
                ratio=count / background if background > 0 else math.inf, p_value=p,
                wait_class="idle" if count and 2 * n_idle >= count else "kernel"))
    return tuple(sorted(peaks, key=lambda pk: (pk.syscall, pk.location_s)))


def peaks_frame(peaks: Sequence[DurationPeak]) -> pd.DataFrame:
    """Peaks as a table: syscall, location_ms, low_ms, high_ms, count, background, ratio, p_value, wait_class."""
    rows = [{
        "syscall": p.syscall, "location_ms": 1e3 * p.location_s, "low_ms": 1e3 * p.low_s,
        "high_ms": 1e3 * p.high_s, "count": p.count, "background": p.background, "ratio": p.ratio,
        "p_value": p.p_value, "wait_class": p.wait_class,
    } for p in peaks]
    cols = ["syscall", "location_ms", "low_ms", "high_ms", "count", "background", "ratio", "p_value", "wait_class"]
    return pd.DataFrame(rows, columns=cols)


# ----------------------------------------------------------------------------- tables

def calls_exceeding(frame: pd.DataFrame, threshold_s: float, *, exclude: Iterable[str] = ()) -> pd.DataFrame:
    """Which syscalls have calls longer than ``threshold_s``, and how many.

    One row per (syscall, wait_class) with at least one such call: syscall,
    wait_class, calls_over (count), calls (all timed calls of that syscall and
    class), max_ms, median_over_ms, total_over_s; sorted by max_ms descending.
    ``exclude`` drops syscalls by name (e.g. ``["futex"]`` to ask "what else?").
    """
    requires(frame, *_TIMED)
    der = Derived(frame)
    tv = der.timed()
    # one integer key per (syscall, class): code * 2 + (0 idle, 1 kernel)
    key = tv.code.astype(np.int64) * 2 + ~der.timed_idle()
    keep = ~name_mask(tv.names, exclude)[tv.code]
    allc = np.bincount(key[keep & (tv.code >= 0)], minlength=2 * len(tv.names))
    over = np.flatnonzero(keep & (tv.dur > threshold_s) & (tv.code >= 0))
    cols = ["syscall", "wait_class", "calls_over", "calls", "max_ms", "median_over_ms", "total_over_s"]
    if over.size == 0:
        return pd.DataFrame({c: pd.Series(dtype=object if c in ("syscall", "wait_class") else float)
                             for c in cols})
    g = group_by_code(tv.dur[over], key[over], 2 * len(tv.names))
    k = np.asarray(g.size().index, dtype=np.int64)
    median, _ = group_order_stats(tv.dur[over], key[over], 2 * len(tv.names))
    out = pd.DataFrame({
        "syscall": tv.names[k // 2].astype(object),
        "wait_class": _CLASS_NAMES[k % 2],
        "calls_over": g.size().astype("int64").to_numpy(),
        "calls": allc[k].astype("int64"),
        "max_ms": 1e3 * g.max().to_numpy(),
        "median_over_ms": 1e3 * median[k],
        "total_over_s": g.sum().to_numpy(),
    })
    out = out.sort_values(["syscall", "wait_class"], kind="stable")[cols]
    out = out.sort_values("max_ms", ascending=False, kind="stable")
    return out.reset_index(drop=True)


def slowest_calls(frame: pd.DataFrame, n: int = 10, *, exclude: Iterable[str] = (),
                  wait_class: str | None = None) -> pd.DataFrame:
    """The ``n`` longest calls: syscall, wait_class, duration_ms, pid, timestamp_s, args, ret_text, line.

    ``exclude`` drops syscalls by name; ``wait_class`` keeps only ``"idle"`` or ``"kernel"`` calls.
    """
    requires(frame, *_TIMED)
    if wait_class not in (None, "idle", "kernel"):
        raise UsageError(f"slowest_calls(wait_class={wait_class!r}): expected 'idle', 'kernel' or None")
    der = Derived(frame)
    tv = der.timed()
    keep = ~name_mask(tv.names, exclude)[tv.code]
    idle = der.timed_idle()
    if wait_class is not None:
        keep &= idle if wait_class == "idle" else ~idle
    cand = np.flatnonzero(keep)
    n = max(int(n), 0)
    if n == 0:
        cand = cand[:0]
    elif n < cand.size:
        # the n-th largest duration, then every call above it and the first calls (in frame order) equal to it
        dur = tv.dur[cand]
        kth = np.partition(dur, dur.size - n)[dur.size - n]
        above = cand[dur > kth]
        ties = cand[dur == kth][: n - above.size]
        cand = np.sort(np.concatenate([above, ties]))
    order = np.lexsort((cand, -tv.dur[cand]))  # longest first, ties in frame order
    top = cand[order]
    pos = tv.pos[top]
    rows = _rows(frame, pos, ["pid", "timestamp_s", "args", "ret_text", "line"])
    out = pd.DataFrame({
        "syscall": tv.names[tv.code[top]].astype(object),
        "wait_class": _CLASS_NAMES[(~idle[top]).astype(np.int64)],
        "duration_ms": 1e3 * tv.dur[top],
        **rows,
    })
    return _text_like_table(out, tv.pos.size > 0)


def wait_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Time by class and syscall: wait_class, syscall, calls, total_s, share (of all traced call time), max_ms.

    Sorted by class (idle first) then total time descending.
    """
    requires(frame, *_TIMED)
    der = Derived(frame)
    tv = der.timed()
    total = float(pd.Series(tv.dur).sum())
    has = tv.code >= 0
    key = tv.code.astype(np.int64)[has] * 2 + ~der.timed_idle()[has]
    g = group_by_code(tv.dur[has], key, 2 * len(tv.names))
    k = np.asarray(g.size().index, dtype=np.int64)
    out = pd.DataFrame({"wait_class": _CLASS_NAMES[k % 2], "syscall": tv.names[k // 2].astype(object),
                        "calls": g.size().astype("int64").to_numpy(), "total_s": g.sum().to_numpy(),
                        "max_ms": 1e3 * g.max().to_numpy()})
    out["share"] = out["total_s"] / total if total > 0 else math.nan
    out = out.sort_values(["wait_class", "syscall"], kind="stable")[
        ["wait_class", "syscall", "calls", "total_s", "share", "max_ms"]]
    return out.sort_values(["wait_class", "total_s"], ascending=[True, False], kind="stable").reset_index(drop=True)


# ----------------------------------------------------------------------------- known waits and decisions

_TOD = re.compile(r"^(\d{1,2}):(\d{2}):(\d{2}(?:\.\d+)?)$")


def _time_value(text: str, day: pd.Timestamp | None, zone: str) -> float | None:
    """Epoch seconds from epoch text, ``HH:MM:SS[.f]`` (needs ``day``) or an ISO date-time; None if unreadable."""
    t = text.strip()
    try:
        v = float(t)
        return v if math.isfinite(v) else None
    except ValueError:
        pass
    m = _TOD.match(t)
    if m:
        if day is None:
            return None
        local = day + pd.Timedelta(hours=int(m[1]), minutes=int(m[2]), seconds=float(m[3]))
        return float(local.tz_localize(zone, ambiguous=False, nonexistent="shift_forward").timestamp())
    try:
        ts = pd.Timestamp(t)
    except (ValueError, OverflowError):
        return None
    if ts.tzinfo is None:
        ts = ts.tz_localize(zone, ambiguous=False, nonexistent="shift_forward")
    return float(ts.timestamp())


def wait_log_schema() -> Schema:
    """Columns of a log of known (injected or expected) waits, as :func:`read_wait_log` reads it."""
    return Schema(name="wait_log", doc="Known waits, one row each (e.g. a server's log of injected timeouts).",
                  columns=(Column("start_s", "string", "s", "start: epoch seconds, HH:MM:SS[.f] or ISO time"),
                           Column("end_s", "string", "s", "end, same forms (optional)", required=False),
                           Column("wait_ms", "float", "ms", "the wait's timeout or nominal length"),
                           Column("run", "string", doc="label of the run (optional)", required=False),
                           Column("result", "string", doc="outcome, e.g. ETIMEDOUT (optional)", required=False)))


def read_wait_log(source: Source, *, date: str | None = None, tz: str | None = None,
                  strict: bool = False) -> pd.DataFrame:
    """Read a CSV log of known waits: start_s (epoch s), end_s (epoch s, NaN when absent), wait_ms, [run, result].

    Times may be epoch seconds, ``HH:MM:SS[.f]`` (a time of day: ``date``
    ``YYYY-MM-DD`` and ``tz`` say which day and zone, default UTC) or ISO
    date-times. A row whose time cannot be read is kept in ``attrs["rejects"]``
    with the reason. ``attrs["time_base_from"]`` says how times were read.
    """
    from ..tables import read_table

    zone = (tz or "UTC").strip() or "UTC"
    day = None
    if date is not None and str(date).strip():
        try:
            day = pd.Timestamp(str(date).strip())
        except ValueError as exc:
            raise UsageError(f"read_wait_log: date must be 'YYYY-MM-DD', got {date!r}") from exc

    def check(rec: dict[str, object]) -> str | None:
        for col in ("start_s", "end_s"):
            if col in rec and str(rec[col]).strip() and _time_value(str(rec[col]), day, zone) is None:
                return (f"{col}: expected epoch seconds, HH:MM:SS[.f] (with date=) or an ISO time, "
                        f"got {rec[col]!r}")
        return None

    raw = read_table(source, wait_log_schema(), strict=strict, check=check)
    out = pd.DataFrame({
        "start_s": [_time_value(str(v), day, zone) for v in raw["start_s"]],
        "end_s": ([_time_value(str(v), day, zone) if str(v).strip() else math.nan for v in raw["end_s"]]
                  if "end_s" in raw else math.nan),
        "wait_ms": raw["wait_ms"].to_numpy(dtype=float),
    }, index=raw.index).astype({"start_s": "float64", "end_s": "float64"})
    for c in ("run", "result"):
        if c in raw:
            out[c] = raw[c].to_numpy()
    out.attrs = dict(raw.attrs)
    tod = any(_TOD.match(str(v).strip()) for v in raw["start_s"])
    out.attrs["time_base_from"] = (f"time of day + date {date} ({zone})" if tod else "epoch or ISO times in the log")
    out.attrs["format"] = "csv"
    return out


@dataclass(frozen=True)
class WaitMatch:
    """Long calls of one syscall in a trace joined to a log of known waits (see :func:`match_waits`).

    ``calls``: the trace's calls of at least ``min_s`` (timestamp_s, duration_s,
    pid, line, ``log_row`` — index of the log entry whose interval holds the
    call's start, -1 if none — and ``wait_ms`` of that entry). ``per_kind``: one
    row per logged wait_ms: logged, found (log entries with a call), duration
    bounds of the found calls, ``within_bounds`` (found calls lasting between the
    timeout and the logged wall duration, 2 ms slack). ``overlap_s``: seconds
    during which both the trace and the log have events; ``decision``: the
    verdict of "do the long waits match the log?".
    """

    calls: pd.DataFrame
    per_kind: pd.DataFrame
    n_calls: int
    n_logged: int
    n_calls_matched: int
    n_logged_found: int
    overlap_s: float
    decision: Decision


def match_waits(frame: pd.DataFrame, log: pd.DataFrame, *, syscall: str = "futex", min_s: float = 0.2,
                slack_s: float = 0.002, min_match_share: float = 0.5) -> WaitMatch:
    """Join a trace's long ``syscall`` calls to a log of known waits by time, and say whether they agree.

    A call matches the log entry whose [start_s − ``slack_s``, end_s + ``slack_s``]
    holds the call's start (for entries without end_s: start_s + wait_ms).
    Verdict: **yes** when every logged wait has a call and every long call a
    logged wait; **no** when the two series overlap in time and enough matched
    (``min_match_share`` of the smaller side) to trust the clocks, yet some calls
    or logged waits are left over (the evidence gives how many); **inconclusive**
    when the series do not overlap in time or almost nothing matches (a clock or
    date problem: a ``-tt`` trace needs its date), or either side is empty.
    """
    requires(frame, *_TIMED)
    requires(log, "start_s", "wait_ms")
    tv = Derived(frame).timed()
    sel = np.flatnonzero(name_mask(tv.names, [syscall])[tv.code] & (tv.dur >= min_s))
    rows = _rows(frame, tv.pos[sel], ["timestamp_s", "pid", "line"])
    long = pd.DataFrame({"timestamp_s": rows["timestamp_s"], "duration_s": tv.dur[sel], "pid": rows["pid"],
                         "line": rows["line"]})
    lg = log.reset_index(drop=True)
    if lg.empty or long.empty:
        long = long.assign(log_row=np.full(len(long), -1, dtype=np.int64), wait_ms=np.nan)
        per_kind = pd.DataFrame({"wait_ms": sorted(set(lg["wait_ms"])) if len(lg) else []})
        for c in ("logged", "found", "min_ms", "max_ms", "within_bounds"):
            per_kind[c] = [int((lg["wait_ms"] == k).sum()) for k in per_kind["wait_ms"]] if c == "logged" else (
                math.nan if c.endswith("_ms") else 0)
        ev0 = {"syscall": syscall, "min_ms": 1e3 * min_s, "long_calls": len(long), "logged_waits": len(lg),
               "calls_matched": 0, "calls_unexplained": len(long), "logged_not_found": len(lg)}
        dec = Decision(f"Do the long {syscall} calls match the logged waits?", "inconclusive",
                       f"{len(long)} {syscall} calls of ≥ {1e3 * min_s:g} ms in the trace and {len(lg)} logged "
                       "waits: nothing to compare", ev0)
        return WaitMatch(calls=long, per_kind=per_kind, n_calls=len(long), n_logged=len(lg), n_calls_matched=0,
                         n_logged_found=0, overlap_s=math.nan, decision=dec)
    starts = lg["start_s"].to_numpy(dtype=float)
    ends = lg["end_s"].to_numpy(dtype=float) if "end_s" in lg else np.full(len(lg), np.nan)
    ends = np.where(np.isfinite(ends), ends, starts + lg["wait_ms"].to_numpy(dtype=float) / 1e3)
    kinds = lg["wait_ms"].to_numpy(dtype=float)
    ts = long["timestamp_s"].to_numpy(dtype=float)
    row = np.full(len(long), -1, dtype=np.int64)
    taken = np.zeros(len(lg), dtype=bool)
    # only calls inside some logged interval can match: find them at once, then match those in order
    by_start = np.argsort(starts - slack_s, kind="stable")
    lo_sorted = (starts - slack_s)[by_start]
    reach = np.maximum.accumulate(np.where(np.isnan(ends[by_start]), -np.inf, ends[by_start] + slack_s))
    j = np.searchsorted(lo_sorted, ts, side="right") - 1
    covered = np.flatnonzero((j >= 0) & (reach[np.maximum(j, 0)] >= ts))
    for i, t in zip(covered, ts[covered], strict=True):
        hit = np.flatnonzero((starts - slack_s <= t) & (t <= ends + slack_s) & ~taken)
        if hit.size:
            row[i] = hit[0]
            taken[hit[0]] = True
    long["log_row"] = row
    long["wait_ms"] = np.where(row >= 0, kinds[np.maximum(row, 0)], np.nan)
    wall = (ends - starts)[np.maximum(row, 0)]
    ok_bounds = (row >= 0) & (long["duration_s"].to_numpy() >= long["wait_ms"].to_numpy() / 1e3 - slack_s) & (
        long["duration_s"].to_numpy() <= wall + slack_s)
    per = []
    for k in sorted(set(kinds[np.isfinite(kinds)])):
        m = long["wait_ms"].to_numpy() == k
        dur = long.loc[m, "duration_s"].to_numpy()
        per.append({"wait_ms": k, "logged": int((kinds == k).sum()), "found": int(m.sum()),
                    "min_ms": 1e3 * float(dur.min()) if dur.size else math.nan,
                    "max_ms": 1e3 * float(dur.max()) if dur.size else math.nan,
                    "within_bounds": int((ok_bounds & m).sum())})
    per_kind = pd.DataFrame(per, columns=["wait_ms", "logged", "found", "min_ms", "max_ms", "within_bounds"])
    fin_t, fin_l = ts[np.isfinite(ts)], starts[np.isfinite(starts)]
    overlap = (min(fin_t.max(), ends[np.isfinite(ends)].max()) - max(fin_t.min(), fin_l.min())
               if fin_t.size and fin_l.size else math.nan)
    n_calls, n_logged = len(long), len(lg)
    matched = int((row >= 0).sum())
    ev = {"syscall": syscall, "min_ms": 1e3 * min_s, "long_calls": n_calls, "logged_waits": n_logged,
          "calls_matched": matched, "calls_unexplained": n_calls - matched, "logged_not_found": n_logged - matched,
          "overlap_s": overlap,
          "per_kind": {f"{r['wait_ms']:g}": {"logged": int(r["logged"]), "found": int(r["found"])} for r in per}}
    q = f"Do the long {syscall} calls match the logged waits?"
    caveats: list[str] = []
    if not (overlap > 0):
        dec = Decision(q, "inconclusive", f"the trace and the log do not overlap in time ({matched} of {n_logged} "
                       "logged waits matched)", ev,
                       ("the two clocks differ: a -t/-tt trace needs its date (and zone) to join an epoch log",))
    elif matched < min_match_share * min(n_calls, n_logged):
        dec = Decision(q, "inconclusive", f"only {matched} of {n_logged} logged waits match one of the {n_calls} "
                       f"long {syscall} calls although the series overlap for {overlap:.1f} s", ev,
                       ("almost nothing matches: check the clocks (date, time zone, time base) of trace and log",))
    elif matched == n_calls == n_logged:
        bad = int(n_calls - ok_bounds.sum())
        if bad:
            caveats.append(f"{bad} matched call(s) last outside [timeout, logged wall time]")
        dec = Decision(q, "yes", f"all {n_logged} logged waits are found in the trace as {syscall} calls of "
                       f"≥ {1e3 * min_s:g} ms, and no such call is unexplained", ev, tuple(caveats))
    else:
        dec = Decision(q, "no", f"{n_calls} long {syscall} calls against {n_logged} logged waits: {matched} match, "
                       f"{n_calls - matched} call(s) are not in the log and {n_logged - matched} logged wait(s) "
                       "are not in the trace", ev)
    return WaitMatch(calls=long, per_kind=per_kind, n_calls=n_calls, n_logged=n_logged, n_calls_matched=matched,
                     n_logged_found=matched, overlap_s=float(overlap), decision=dec)


def timed_wait_peaks(frame: pd.DataFrame, peaks: Sequence[DurationPeak], *, min_s: float = 0.2,
                     min_one_off: int = 3) -> Decision:
    """Does the trace have sharp peaks of idle waits at ``min_s`` or more (timeouts: futex, poll …)?

    yes: at least one idle-wait peak at ≥ ``min_s`` (evidence lists them);
    no: calls have durations, none forms such a peak, and fewer than ``min_one_off``
    idle waits of ≥ ``min_s`` were one-offs (followed by other work, see :func:`long_waits`);
    inconclusive: the trace has no ``-T`` durations (or no timed call at all), so peaks
    cannot be seen, or no peak formed but ``min_one_off`` or more long idle waits sat on
    a request's path (too few at one value for a peak: a rare timed wait cannot be told
    from a scattered one). Evidence also has ``one_off_waits_ms`` (those waits' durations).
    """
    requires(frame, *_TIMED)
    n_timed = int(frame["duration_s"].notna().sum())
    found = [p for p in peaks if p.wait_class == "idle" and p.location_s >= 0.9 * min_s]
    one_off: list[float] = []
    if n_timed and not found:
        lw = long_waits(frame, 0.9 * min_s)
        sel = lw[(lw["wait_class"] == "idle") & (lw["role"] == "one-off")]
        one_off = sorted(round(float(v), 2) for v in sel["duration_ms"])
    ev = {"timed_calls": n_timed, "min_ms": 1e3 * min_s,
          "peaks": [{"syscall": p.syscall, "location_ms": round(1e3 * p.location_s, 2), "count": p.count}
                    for p in found], "one_off_waits_ms": one_off}
    few = len(one_off) >= min_one_off
    because_inc = "the trace has no call durations (strace -T): peaks cannot be seen"
    if few:
        because_inc = (f"no idle-wait peak at ≥ {1e3 * min_s:g} ms, but {len(one_off)} idle waits that long were "
                       f"followed by other work ({', '.join(f'{v:.0f}' for v in one_off[:9])} ms): too few at one "
                       "value to form a peak")
    return decide("Are there sharp peaks of timed waits?", yes=bool(found), no=n_timed > 0 and not found and not few,
                  because_yes="; ".join(f"{p.syscall} at {1e3 * p.location_s:.1f} ms ({p.count} calls)"
                                        for p in found),
                  because_no=f"none of {n_timed} timed calls forms an idle-wait peak at ≥ {1e3 * min_s:g} ms",
                  because_inconclusive=because_inc,
                  evidence=ev)


def long_waits(frame: pd.DataFrame, min_s: float, *, exclude: Iterable[str] = ()) -> pd.DataFrame:
    """Calls of at least ``min_s``, each with its role: a waiting loop's timer, or a one-off.

    Columns: syscall, wait_class, duration_ms, pid, timestamp_s, args, line, and
    ``role``: ``"loop"`` when the thread's next call is the same idle syscall
    again (a loop re-arming its wait: an accept loop, a poll timer, a
    heartbeat), ``"one-off"`` otherwise (the thread went on to other work, e.g.
    answered a request after the wait).
    """
    requires(frame, *_TIMED)
    der = Derived(frame)
    tv = der.timed()
    idle = der.timed_idle()
    excluded = name_mask(tv.names, exclude)[tv.code]
    cand = np.flatnonzero((tv.dur >= min_s) & ~excluded)  # the calls reported
    tpid = floats(frame["pid"].iloc[tv.pos])
    ts_all = floats(frame["timestamp_s"])
    line_all = floats(frame["line"], np.inf)
    # each reported call's successor in its thread: the timed calls of those threads sorted by
    # (pid, timestamp_s, line), missing timestamps last; a call without pid has no thread to follow
    tcode, uniq = pd.factorize(tpid, use_na_sentinel=True)  # thread codes (hash, no sort); no pid: -1
    wanted = np.zeros(len(uniq) + 1, dtype=bool)
    wanted[tcode[cand]] = True
    wanted[-1] = False
    rel = np.flatnonzero(wanted[tcode])
    pcode = tcode[rel].astype(np.uint16 if len(uniq) < 2**16 else np.int64)  # small ints: a radix sort
    ts = ts_all[tv.pos[rel]]
    ts = np.where(np.isnan(ts), np.inf, ts)
    line = line_all[tv.pos[rel]]
    order = np.argsort(pcode, kind="stable")
    same = pcode[order][1:] == pcode[order][:-1]
    t_o, l_o = ts[order], line[order]
    in_order = (t_o[1:] > t_o[:-1]) | ((t_o[1:] == t_o[:-1]) & (l_o[1:] >= l_o[:-1]))
    if not in_order[same].all():  # not in time order within each thread: sort properly
        order = np.lexsort((line, ts, pcode))
        same = pcode[order][1:] == pcode[order][:-1]
    seq = rel[order]
    nxt = np.full(tv.pos.size, -1, dtype=np.int64)
    nxt[seq[:-1]] = np.where(same, seq[1:], -1)
    after = nxt[cand]
    loop = (after >= 0) & (tv.code[np.maximum(after, 0)] == tv.code[cand]) & idle[cand]
    # the reported calls in (pid, timestamp_s, line) order, then longest first
    cts = ts_all[tv.pos[cand]]
    key = np.lexsort((line_all[tv.pos[cand]], np.where(np.isnan(cts), np.inf, cts),
                      np.where(np.isnan(tpid[cand]), np.inf, tpid[cand])))
    key = key[np.argsort(-tv.dur[cand][key], kind="stable")]
    top, role = cand[key], loop[key]
    rows = _rows(frame, tv.pos[top], ["pid", "timestamp_s", "args", "line"])
    return _text_like_table(pd.DataFrame({
        "syscall": tv.names[tv.code[top]].astype(object),
        "wait_class": _CLASS_NAMES[(~idle[top]).astype(np.int64)],
        "duration_ms": 1e3 * tv.dur[top],
        "pid": rows["pid"], "timestamp_s": rows["timestamp_s"], "args": rows["args"], "line": rows["line"],
        "role": np.where(role, "loop", "one-off"),
    }), tv.pos.size > 0)


def other_long_calls(frame: pd.DataFrame, min_s: float, *, exclude: Iterable[str] = ("futex",)) -> Decision:
    """Does any other syscall than ``exclude`` take ``min_s`` or more *on a request's path*?

    Long calls are split by :func:`long_waits`: idle waits that re-arm
    themselves (loops: an accept loop's poll, a timer) are not stalls. **yes**
    when some kernel-work call or one-off wait lasts ≥ ``min_s``; **no** when
    there is none (the evidence lists the idle loops, with their typical
    period, if any); **inconclusive** when the trace has no durations.
    """
    requires(frame, *_TIMED)
    n_timed = int(frame["duration_s"].notna().sum())
    lw = long_waits(frame, min_s, exclude=exclude)
    stall = lw[(lw["wait_class"] == "kernel") | (lw["role"] == "one-off")]
    loops = lw[(lw["wait_class"] == "idle") & (lw["role"] == "loop")]
    loop_ev = [{"syscall": str(k), "calls": int(len(g)), "median_ms": round(float(g["duration_ms"].median()), 2)}
               for k, g in loops.groupby("syscall")]
    stall_ev = [{"syscall": str(k), "calls": int(len(g)), "max_ms": round(float(g["duration_ms"].max()), 2),
                 "wait_class": str(g["wait_class"].iloc[0])} for k, g in stall.groupby("syscall")]
    ev = {"min_ms": 1e3 * min_s, "excluded": list(exclude), "stalls": stall_ev, "idle_loops": loop_ev,
          "timed_calls": n_timed}
    loops_text = ("; the only longer calls are idle loops re-arming their wait: " + ", ".join(
        f"{e['calls']} × {e['syscall']} of about {e['median_ms']:.0f} ms" for e in loop_ev)) if loop_ev else ""
    return decide(f"Does another syscall take ≥ {1e3 * min_s:g} ms on a request's path?",
                  yes=not stall.empty, no=n_timed > 0 and stall.empty,
                  because_yes="; ".join(f"{e['calls']} × {e['syscall']} ({e['wait_class']}, up to "
                                        f"{e['max_ms']:.0f} ms)" for e in stall_ev),
                  because_no=f"no call other than {', '.join(exclude) or 'none'} lasts ≥ {1e3 * min_s:g} ms outside "
                             f"an idle loop{loops_text}",
                  because_inconclusive="the trace has no call durations (strace -T)", evidence=ev)
