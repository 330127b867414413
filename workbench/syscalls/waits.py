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
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..schema import requires
from .summary import counted_calls

__all__ = [
    "ALWAYS_IDLE",
    "FD_READS",
    "DurationPeak",
    "calls_exceeding",
    "classify_waits",
    "duration_peaks",
    "peaks_frame",
    "slowest_calls",
    "wait_summary",
]

#: calls that only wait (for a futex word, fd readiness, a timer, a child or a signal)
ALWAYS_IDLE = frozenset({
    "futex", "futex_waitv", "poll", "ppoll", "epoll_wait", "epoll_pwait", "epoll_pwait2",
    "select", "pselect6", "_newselect", "nanosleep", "clock_nanosleep", "pause",
    "rt_sigsuspend", "rt_sigtimedwait", "sigsuspend", "wait4", "waitid", "accept", "accept4",
    "io_getevents", "io_pgetevents", "restart_syscall", "msgrcv", "semtimedop", "mq_timedreceive",
})
#: calls that wait only when their fd is a socket or a pipe (a read of a file is kernel work)
FD_READS = frozenset({
    "read", "readv", "recvfrom", "recvmsg", "recvmmsg", "recv", "preadv", "preadv2",
    "connect", "write", "writev", "sendto", "sendmsg", "sendmmsg",
})
#: first argument annotated by -y/-yy as a socket or pipe: 3<socket:[123]>, 4<pipe:[9]>, 5<TCP:[…]>
_WAITABLE_FD = re.compile(
    r"^\s*-?\d+<(?:socket:|pipe:|TCP|TCPv6|UDP|UDPv6|UNIX|UNIX-STREAM|UNIX-DGRAM|NETLINK|anon_inode:\[eventfd\]"
    r"|anon_inode:\[signalfd\]|anon_inode:\[timerfd\]|/dev/pts/|/dev/tty)"
)


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
    name = frame["syscall"].astype(object)
    is_call = (frame["kind"] == "call") | (frame["kind"] == "unfinished")
    idle = name.isin(ALWAYS_IDLE).to_numpy().copy()
    fdcalls = name.isin(FD_READS).to_numpy()
    if fdcalls.any():
        sub = pd.Series(frame["args"].astype(object).to_numpy()[fdcalls], dtype=object)
        idle[fdcalls] = sub.str.match(_WAITABLE_FD).fillna(False).to_numpy(dtype=bool)
    out = np.where(idle, "idle", "kernel").astype(object)
    out[~is_call.to_numpy(dtype=bool)] = None
    return pd.Series(pd.Categorical(out, categories=["idle", "kernel"]), index=frame.index, name="wait_class")


#: the columns of a read_strace frame the timed-call analyses read
_TIMED = ("kind", "ret_text", "syscall", "args", "duration_s", "pid", "timestamp_s", "line")


def _timed(frame: pd.DataFrame) -> pd.DataFrame:
    """Counted calls with a duration: syscall, duration_s, wait_class, pid, timestamp_s, args, line."""
    m = counted_calls(frame) & frame["duration_s"].notna().to_numpy()
    cls = classify_waits(frame)
    sub = pd.DataFrame({
        "syscall": frame["syscall"].astype(object).to_numpy()[m],
        "duration_s": frame["duration_s"].to_numpy(dtype=float)[m],
        "wait_class": cls.astype(object).to_numpy()[m],
        "pid": frame["pid"].to_numpy()[m],
        "timestamp_s": frame["timestamp_s"].to_numpy()[m],
        "args": frame["args"].astype(object).to_numpy()[m],
        "ret_text": frame["ret_text"].astype(object).to_numpy()[m],
        "line": frame["line"].to_numpy()[m],
    })
    return sub


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
                   alpha: float = 1e-3, half_window: int = 10, gap: int = 2,
                   background_floor: float = 0.2, pad_bins: int = 2) -> tuple[DurationPeak, ...]:
    """Sharp peaks of each syscall's duration histogram on log bins (one result per peak).

    Per syscall the ``-T`` durations are binned on ``bins_per_decade`` log bins
    between ``min_s`` and ``max_s``. A bin is *in excess* when its count is at
    least ``min_count``, at least ``min_ratio`` times the local background (mean
    of the bins ``gap+1 … half_window`` away on both sides, at least
    ``background_floor``), and the Poisson probability of so many calls given that
    background is below ``alpha`` divided by the number of bins (Bonferroni).
    Adjacent excess bins merge into one peak whose window grows by ``pad_bins``
    bins each side (at 50 bins per decade, 2 bins ≈ ±10 %: a timeout woken a
    little late still counts); the peak's location is the median duration
    inside the window.
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

    timed = _timed(frame)
    names = sorted(set(timed["syscall"])) if syscalls is None else list(syscalls)
    edges = np.logspace(math.log10(min_s), math.log10(max_s),
                        int(round((math.log10(max_s) - math.log10(min_s)) * bins_per_decade)) + 1)
    nbins = edges.size - 1
    threshold = alpha / nbins
    peaks: list[DurationPeak] = []
    for name in names:
        sub = timed[timed["syscall"] == name]
        d = sub["duration_s"].to_numpy()
        keep = (d >= min_s) & (d < max_s)
        d, sub = d[keep], sub[keep]
        if d.size < min_count:
            continue
        idx = np.searchsorted(edges, d, side="right") - 1
        counts = np.bincount(idx, minlength=nbins).astype(float)
        bg = np.maximum(_background(counts, half_window, gap), background_floor)
        pvals = stats.poisson.sf(counts - 1, bg)
        excess = (counts >= min_count) & (counts >= min_ratio * bg) & (pvals < threshold)
        if not excess.any():
            continue
        flagged = np.flatnonzero(excess)
        groups: list[list[int]] = [[int(flagged[0])]]
        for b in flagged[1:]:
            if b - groups[-1][-1] <= 1:
                groups[-1].append(int(b))
            else:
                groups.append([int(b)])
        classes = sub["wait_class"].to_numpy()
        for g in groups:
            lo_b, hi_b = max(g[0] - pad_bins, 0), min(g[-1] + pad_bins, nbins - 1)
            lo_s, hi_s = float(edges[lo_b]), float(edges[hi_b + 1])
            inside = (idx >= lo_b) & (idx <= hi_b)
            count = int(inside.sum())
            background = float(bg[lo_b:hi_b + 1].sum())
            p = float(stats.poisson.sf(count - 1, background))
            cls = pd.Series(classes[inside]).mode()
            peaks.append(DurationPeak(
                syscall=str(name), location_s=float(np.median(d[inside])), low_s=lo_s, high_s=hi_s,
                count=count, background=background,
                ratio=count / background if background > 0 else math.inf, p_value=p,
                wait_class=str(cls.iloc[0]) if len(cls) else "kernel"))
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
    timed = _timed(frame)
    timed = timed[~timed["syscall"].isin(list(exclude))]
    allc = timed.groupby(["syscall", "wait_class"]).size().rename("calls")
    over = timed[timed["duration_s"] > threshold_s]
    cols = ["syscall", "wait_class", "calls_over", "calls", "max_ms", "median_over_ms", "total_over_s"]
    if over.empty:
        return pd.DataFrame({c: pd.Series(dtype=object if c in ("syscall", "wait_class") else float)
                             for c in cols})
    g = over.groupby(["syscall", "wait_class"])["duration_s"]
    out = pd.DataFrame({
        "calls_over": g.size().astype("int64"),
        "max_ms": 1e3 * g.max(),
        "median_over_ms": 1e3 * g.median(),
        "total_over_s": g.sum(),
    }).join(allc)
    out = out.reset_index()[cols].sort_values("max_ms", ascending=False, kind="stable")
    return out.reset_index(drop=True)


def slowest_calls(frame: pd.DataFrame, n: int = 10, *, exclude: Iterable[str] = (),
                  wait_class: str | None = None) -> pd.DataFrame:
    """The ``n`` longest calls: syscall, wait_class, duration_ms, pid, timestamp_s, args, ret_text, line.

    ``exclude`` drops syscalls by name; ``wait_class`` keeps only ``"idle"`` or ``"kernel"`` calls.
    """
    requires(frame, *_TIMED)
    if wait_class not in (None, "idle", "kernel"):
        raise UsageError(f"slowest_calls(wait_class={wait_class!r}): expected 'idle', 'kernel' or None")
    timed = _timed(frame)
    timed = timed[~timed["syscall"].isin(list(exclude))]
    if wait_class is not None:
        timed = timed[timed["wait_class"] == wait_class]
    top = timed.nlargest(n, "duration_s").copy()
    top.insert(2, "duration_ms", 1e3 * top.pop("duration_s"))
    return top.reset_index(drop=True)


def wait_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Time by class and syscall: wait_class, syscall, calls, total_s, share (of all traced call time), max_ms.

    Sorted by class (idle first) then total time descending.
    """
    requires(frame, *_TIMED)
    timed = _timed(frame)
    total = float(timed["duration_s"].sum())
    g = timed.groupby(["wait_class", "syscall"])["duration_s"]
    out = pd.DataFrame({"calls": g.size().astype("int64"), "total_s": g.sum(), "max_ms": 1e3 * g.max()})
    out["share"] = out["total_s"] / total if total > 0 else math.nan
    out = out.reset_index()[["wait_class", "syscall", "calls", "total_s", "share", "max_ms"]]
    return out.sort_values(["wait_class", "total_s"], ascending=[True, False], kind="stable").reset_index(drop=True)
