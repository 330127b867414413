"""Arrays derived from a read_strace frame, computed once per frame and shared by the analyses.

Every analysis of :mod:`workbench.syscalls.summary` and
:mod:`workbench.syscalls.waits` starts from the same few facts about each row:
the syscall's code (categorical codes, or one factorization of an object
column), whether strace's ``-c`` counts the call, whether it waits (idle) or
works in the kernel, and, for the timed analyses, the positions and durations
of the counted calls that have a ``-T`` duration. They are computed here with
numpy on the categorical codes and numeric columns; argument and return text
are read only on the rows that need it (calls that may wait on an fd, returns
whose value is missing), through Arrow compute whatever the string storage
(object, ``str``, ``StringDtype("pyarrow")`` or ``ArrowDtype(large_string)``).

The results are kept per frame (keyed on the frame's identity, dropped when the
frame is) together with a fingerprint of every column they were computed from:
a checksum of numeric, categorical and object columns (the object column's
element pointers) and the identity of Arrow arrays, which are immutable.
A column changed in place or replaced therefore recomputes them; a result is
never served from a frame whose inputs differ.
"""
from __future__ import annotations

import ctypes
import re
import weakref
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import pandas as pd

T = TypeVar("T")

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
#: (ASCII classes only, so that Python's re and Arrow's RE2 read it alike)
WAITABLE_FD_PATTERN = (
    r"^[ \t\n\r\f\v]*-?[0-9]+<(?:socket:|pipe:|TCP|TCPv6|UDP|UDPv6|UNIX|UNIX-STREAM|UNIX-DGRAM|NETLINK"
    r"|anon_inode:\[eventfd\]|anon_inode:\[signalfd\]|anon_inode:\[timerfd\]|/dev/pts/|/dev/tty)"
)
WAITABLE_FD = re.compile(WAITABLE_FD_PATTERN)


# ----------------------------------------------------------------------------- fingerprints

class _Same:
    """Equal only to a wrapper of the very same object (for immutable Arrow arrays)."""

    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.obj is self.obj

    __hash__ = None  # type: ignore[assignment]


def _checksum(a: np.ndarray) -> tuple[Any, ...]:
    """dtype, shape and CRC-32 of an array's bytes (an object array: of its element pointers)."""
    a = np.ascontiguousarray(a)
    if a.nbytes == 0:
        return (a.dtype.str, a.shape, 0)
    if a.dtype == object:
        view = memoryview((ctypes.c_char * a.nbytes).from_address(a.ctypes.data))
        return (a.dtype.str, a.shape, zlib.crc32(view))
    return (a.dtype.str, a.shape, zlib.crc32(a.reshape(-1).view(np.uint8).data))


def arrow_values(values: object) -> Any | None:
    """The pyarrow ChunkedArray behind an Arrow-backed pandas array, else None."""
    try:
        from pandas.arrays import ArrowExtensionArray
    except ImportError:  # pragma: no cover - pandas without Arrow arrays
        return None
    if isinstance(values, ArrowExtensionArray):
        return values.__arrow_array__()
    return None


def _fingerprint(s: pd.Series) -> tuple[Any, ...]:
    dt = s.dtype
    arr = s.array
    if isinstance(dt, pd.CategoricalDtype):
        return ("cat", tuple(dt.categories), bool(dt.ordered), _checksum(np.asarray(arr.codes)))
    ca = arrow_values(arr)
    if ca is not None:
        return ("arrow", len(ca), _Same(ca))
    data, mask = getattr(arr, "_data", None), getattr(arr, "_mask", None)
    if isinstance(data, np.ndarray) and isinstance(mask, np.ndarray):  # nullable Int64/Float64/boolean
        return ("masked", str(dt), _checksum(data), _checksum(mask))
    return ("numpy", str(dt), _checksum(np.asarray(arr)))


# ----------------------------------------------------------------------------- per-frame store

_STORE: dict[int, tuple[weakref.ref[pd.DataFrame], dict[str, tuple[tuple[Any, ...], Any]]]] = {}


def _store_for(frame: pd.DataFrame) -> dict[str, tuple[tuple[Any, ...], Any]]:
    key = id(frame)
    entry = _STORE.get(key)
    if entry is not None and entry[0]() is frame:
        return entry[1]

    def gone(ref: weakref.ref[pd.DataFrame], key: int = key) -> None:
        held = _STORE.get(key)
        if held is not None and held[0] is ref:
            del _STORE[key]

    ref = weakref.ref(frame, gone)
    _STORE[key] = (ref, {})
    return _STORE[key][1]


def forget(frame: pd.DataFrame | None = None) -> None:
    """Drop the derived arrays kept for ``frame`` (every frame when None)."""
    if frame is None:
        _STORE.clear()
    else:
        _STORE.pop(id(frame), None)


# ----------------------------------------------------------------------------- derived arrays

@dataclass(frozen=True)
class Codes:
    """Syscall names (object array, one per code) and each row's code (-1: no syscall)."""

    names: np.ndarray
    codes: np.ndarray

    def lookup(self, wanted: Iterable[str]) -> np.ndarray:
        """Boolean per code (one more entry, False, for code -1): is the name in ``wanted``?"""
        return name_mask(self.names, wanted)


def name_mask(names: np.ndarray, wanted: Iterable[str]) -> np.ndarray:
    """Boolean per name and one more entry, False, that code -1 (no syscall) indexes: is it in ``wanted``?"""
    want = set(wanted)
    hit = np.fromiter((n in want for n in names), dtype=bool, count=len(names))
    return np.append(hit, False)


@dataclass(frozen=True)
class Timed:
    """Counted calls with a -T duration, in frame order: positions, syscall codes, durations."""

    names: np.ndarray
    pos: np.ndarray
    code: np.ndarray
    dur: np.ndarray


class Derived:
    """Lazily computed, per-frame cached facts about the rows of a read_strace frame."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self._prints: dict[str, tuple[Any, ...]] = {}
        self._store = _store_for(frame)

    def _fp(self, col: str) -> tuple[Any, ...]:
        if col not in self._prints:
            self._prints[col] = _fingerprint(self.frame[col])
        return self._prints[col]

    def _memo(self, key: str, cols: Iterable[str], compute: Callable[[], T]) -> T:
        cols = [c for c in cols if c in self.frame.columns]
        fp = (len(self.frame), tuple(cols), *(self._fp(c) for c in cols))
        hit = self._store.get(key)
        if hit is not None and hit[0] == fp:
            return hit[1]
        value = compute()
        self._store[key] = (fp, value)
        return value

    # -- columns compared with one value
    def equals(self, col: str, value: str) -> np.ndarray:
        """Boolean numpy mask: ``frame[col] == value`` (missing: False), on the codes when categorical."""
        s = self.frame[col]
        if isinstance(s.dtype, pd.CategoricalDtype):
            at = s.cat.categories.get_indexer(pd.Index([value]))[0]
            codes = np.asarray(s.array.codes)
            return codes == at if at >= 0 else np.zeros(len(s), dtype=bool)
        return s.eq(value).to_numpy(dtype=bool, na_value=False)

    def codes(self) -> Codes:
        """Syscall names and codes (categories and their codes, or one sorted factorization)."""
        def compute() -> Codes:
            s = self.frame["syscall"]
            if isinstance(s.dtype, pd.CategoricalDtype):
                return Codes(np.asarray(s.cat.categories, dtype=object), np.asarray(s.array.codes))
            codes, uniques = pd.factorize(s, sort=True, use_na_sentinel=True)
            return Codes(np.asarray(uniques, dtype=object), np.asarray(codes))
        return self._memo("codes", ["syscall"], compute)

    def counted(self) -> np.ndarray:
        """strace -c's rule: kind "call" and a return other than a bare ``?``."""
        def compute() -> np.ndarray:
            call = self.equals("kind", "call")
            # a bare '?' has no numeric return: read the text only where retval is missing
            if "retval" in self.frame.columns:
                maybe = np.flatnonzero(call & self.frame["retval"].isna().to_numpy(dtype=bool))
            else:
                maybe = np.flatnonzero(call)
            if maybe.size:
                ret = self.frame["ret_text"].iloc[maybe]
                call[maybe[ret.eq("?").to_numpy(dtype=bool, na_value=False)]] = False
            return call
        return self._memo("counted", ["kind", "ret_text", "retval"], compute)

    def is_call(self) -> np.ndarray:
        """Rows of kind "call" or "unfinished"."""
        return self._memo("is_call", ["kind"],
                          lambda: self.equals("kind", "call") | self.equals("kind", "unfinished"))

    def idle(self) -> np.ndarray:
        """Per row: is it an idle wait (see ``classify_waits``)? Meaningful where :meth:`is_call`."""
        def compute() -> np.ndarray:
            c = self.codes()
            idle = c.lookup(ALWAYS_IDLE)[c.codes]
            fd = np.flatnonzero(c.lookup(FD_READS)[c.codes] & self.is_call())
            if fd.size:
                idle[fd] = waitable_fd(self.frame["args"], fd)
            return idle
        return self._memo("idle", ["kind", "syscall", "args"], compute)

    def timed(self) -> Timed:
        """Counted calls with a duration, in frame order."""
        def compute() -> Timed:
            c = self.codes()
            d = floats(self.frame["duration_s"])
            pos = np.flatnonzero(self.counted() & ~np.isnan(d))
            return Timed(c.names, pos, c.codes[pos], d[pos])
        return self._memo("timed", ["kind", "ret_text", "retval", "syscall", "duration_s"], compute)

    def timed_idle(self) -> np.ndarray:
        """:meth:`idle` at the rows of :meth:`timed`."""
        return self._memo("timed_idle", ["kind", "ret_text", "retval", "syscall", "duration_s", "args"],
                          lambda: self.idle()[self.timed().pos])


def floats(s: pd.Series, na: float = np.nan) -> np.ndarray:
    """A column as float64 numpy values, missing as ``na`` (a float64 column: its own array, no copy)."""
    if s.dtype == np.float64 and np.isnan(na):
        return s.to_numpy()
    return s.to_numpy(dtype="float64", na_value=na)


def group_by_code(values: np.ndarray, codes: np.ndarray, n: int) -> Any:
    """``pd.Series(values).groupby(codes)`` for integer codes in [0, n), without hashing them again.

    The codes become a categorical grouper (pandas uses them as they are); groups
    come out in code order and only observed codes appear.
    """
    small: np.ndarray[Any, np.dtype[np.integer[Any]]] = codes.astype(
        np.int16 if n < 2**15 else np.int32 if n < 2**31 else np.int64)
    by = pd.Series(pd.Categorical.from_codes(small, categories=pd.RangeIndex(n)))
    return pd.Series(values).groupby(by, observed=True, sort=True)


def group_order_stats(values: np.ndarray, codes: np.ndarray, n: int,
                      quantiles: Sequence[float] = ()) -> tuple[np.ndarray, list[np.ndarray]]:
    """Per code in [0, n): the median and the ``quantiles`` of ``values`` (no NaN among them); NaN without values.

    Computed as pandas' grouped ``median()`` (the mean of the two middle values)
    and ``quantile(q)`` (linear: ``v[i] + (v[i+1] - v[i]) * frac`` at
    ``i + frac = q * (size - 1)``) compute them, bit for bit, from the order
    statistics of each group: one radix sort of the codes, then one
    ``np.partition`` per group instead of a sort of the values.
    """
    med = np.full(n, np.nan)
    qout = [np.full(n, np.nan) for _ in quantiles]
    if values.size == 0:
        return med, qout
    order = np.argsort(codes.astype(np.uint16 if n < 2**16 else np.int64), kind="stable")
    sv = values[order]
    sizes = np.bincount(codes, minlength=n)
    ends = np.cumsum(sizes)
    for g in np.flatnonzero(sizes):
        m = int(sizes[g])
        x = sv[ends[g] - m:ends[g]]
        spots = [(q * (m - 1), int(q * (m - 1))) for q in quantiles]
        kth = {m // 2, max(m // 2 - 1, 0)}
        for _, lo in spots:
            kth.update((lo, min(lo + 1, m - 1)))
        part = np.partition(x, sorted(kth))
        med[g] = part[m // 2] if m % 2 else (part[m // 2] + part[m // 2 - 1]) / 2
        for out, (idx, lo) in zip(qout, spots, strict=True):
            frac = idx % 1
            out[g] = part[lo] if frac == 0.0 or lo + 1 >= m else part[lo] + (part[lo + 1] - part[lo]) * frac
    return med, qout


def waitable_fd(args: pd.Series, rows: np.ndarray) -> np.ndarray:
    """Does the argument text at positions ``rows`` start with a socket/pipe/… fd (``-y``)? Missing: False."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ca = arrow_values(args.array)
    try:
        if ca is not None:
            sub = ca.take(pa.array(rows, type=pa.int64()))
            if pa.types.is_dictionary(sub.type):
                sub = sub.cast(sub.type.value_type)
        else:
            sub = pa.array(np.asarray(args.array, dtype=object)[rows], type=pa.large_string(), from_pandas=True)
        hit = pc.fill_null(pc.match_substring_regex(sub, WAITABLE_FD_PATTERN), False)
        return np.asarray(hit.to_numpy(zero_copy_only=False), dtype=bool)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        # text that is not all strings: Python's re, element by element
        vals = pd.Series(np.asarray(args.iloc[rows].astype(object)), dtype=object)
        return vals.map(lambda v: isinstance(v, str) and WAITABLE_FD.match(v) is not None).to_numpy(dtype=bool)
