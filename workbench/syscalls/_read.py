"""read_strace: sources, format sniffing, chunked feeding, frame building, -C self-check."""
from __future__ import annotations

import functools
import gc
import math
import os
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd
import pyarrow as pa

from ..arrow_frames import code_dtype, null_text, text_array
from ..errors import ParseError, UsageError
from ..schema import RejectRow, SideTable, attach_rejects, rejects_of, validate
from ..sources import (
    INCOMPLETE,
    Source,
    Text,
    compression_of_file,
    decompress,
    open_decompressed,
    split_sources,
)
from ._grammar import (
    COLOUR_REASON,
    KINDS,
    NA,
    PID_COLUMN,
    PID_FIXED,
    PID_NONE,
    TS_EPOCH,
    TS_NONE,
    TS_REL,
    TS_TOD,
)
from ._reference import RefParser
from ._schema import STRACE_SCHEMA

if TYPE_CHECKING:
    from distributed import Client
    from tqdm.auto import tqdm as Bar

    from ..cache import Cache, FileStats, Key

#: one input: a file (read in blocks), text, or an open stream (text or bytes)
Readable = Path | str | IO[Any]

BLOCK_BYTES = 8 << 20
REF_BLOCK_BYTES = 2 << 20  # the reference scanner's column work stays in cache: measured 5 % faster than 8 MiB
_PROGRESS_BYTES = 64 << 20

try:  # the optional C scanner, built by `pip install -e .` when a compiler is present
    from . import _native
except ImportError:  # pragma: no cover - depends on the build
    _native = None  # type: ignore[assignment]  # (the module, or None when it is not built)


def native_available() -> bool:
    """True when the C scanner is built and not disabled by WORKBENCH_NO_NATIVE=1."""
    return _native is not None and os.environ.get("WORKBENCH_NO_NATIVE", "") not in ("1", "true", "yes")


# -- sniffing -----------------------------------------------------------------
_TS_SNIFF = (
    (re.compile(r"[0-9]{1,2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)? "), TS_TOD),
    (re.compile(r"[0-9]{9,}(\.[0-9]+)? "), TS_EPOCH),
    (re.compile(r" *[0-9]{1,8}\.[0-9]+ "), TS_REL),
)
_SKIP_SNIFF = (" > ", "strace: ", "[ Process ", "% time", "System call usage", "------", "")
TIME_BASES = {TS_NONE: "none", TS_TOD: "midnight", TS_EPOCH: "epoch", TS_REL: "relative"}
_PID_MODES = {"column": PID_COLUMN, "none": PID_NONE}
_TS_MODES = {"none": TS_NONE, "tod": TS_TOD, "epoch": TS_EPOCH, "relative": TS_REL}


def sniff(head: str) -> tuple[int, int]:
    """(pid_mode, ts_mode) from the first record line of ``head``."""
    for line in head.split("\n")[:-1] if "\n" in head else [head]:
        if any(line.startswith(p) for p in _SKIP_SNIFF[:-1]) or not line.strip():
            continue
        i = 0
        pid_mode = PID_NONE
        m = re.match(r"[0-9]+(<[^>]*>)? +", line)
        if m is not None:
            pid_mode, i = PID_COLUMN, m.end()
        else:
            m = re.match(r"\[pid +[0-9]+\] ", line)
            if m is not None:
                i = m.end()
        for rx, mode in _TS_SNIFF:
            if rx.match(line, i):
                return pid_mode, mode
        return pid_mode, TS_NONE
    return PID_NONE, TS_NONE


# -- sources ------------------------------------------------------------------
def _sources(source: Source) -> list[tuple[str, Readable]]:
    """[(name, path-or-text-or-stream)] for every accepted kind of source (streams stay unread)."""
    out: list[tuple[str, Readable]] = []
    for item in split_sources(source, "strace"):
        if isinstance(item, Path):
            out.append((str(item), item))
        elif isinstance(item, Text):
            out.append((item.name, item.text))
        else:
            out.append((item.name, item.stream))
    return out


def _blocks(obj: Readable, start: int = 0, stop: int | None = None,
            size: int | None = None) -> Iterator[bytes | memoryview]:
    """Blocks of whole lines (the last one may lack its newline), of about ``size`` bytes (BLOCK_BYTES).

    Files are read into one reused buffer: each block is a view that is valid
    until the next one is produced (the scanners copy what they keep).
    """
    if isinstance(obj, str):
        yield obj.encode() if obj.isascii() else obj.encode("latin-1", errors="replace")
        return
    if isinstance(obj, Path) and start == 0 and stop is None and compression_of_file(obj) is not None:
        kind = compression_of_file(obj)
        try:
            with open_decompressed(obj) as f:  # compressed: decompressed as it is read, never whole in memory
                yield from _blocks(f, size=size)
        except (OSError, EOFError, ValueError, pa.ArrowInvalid) as exc:
            raise ParseError(str(obj), None, "", f"damaged {kind} data ({exc}); expected a complete {kind} file") \
                from None
        return
    if not isinstance(obj, Path):
        rest = b""
        while True:
            b = obj.read(size or BLOCK_BYTES)
            if isinstance(b, str):
                b = b.encode("latin-1", errors="replace")
            if not b:
                break
            b = rest + b
            k = b.rfind(b"\n")
            rest = b[k + 1:]
            if k >= 0:
                yield b[:k + 1]
        if rest:
            yield rest
        return
    buf = bytearray(size or BLOCK_BYTES)
    view = memoryview(buf)
    filled = 0
    left = None if stop is None else stop - start
    with open(obj, "rb", buffering=0) as f:
        if start:
            f.seek(start)
        while True:
            if filled == len(buf):  # one line longer than the buffer: a bigger one
                bigger = bytearray(2 * len(buf))
                bigger[:filled] = buf
                buf, view = bigger, memoryview(bigger)
            want = len(buf) - filled if left is None else min(left, len(buf) - filled)
            got = f.readinto(view[filled:filled + want]) if want else 0
            if left is not None:
                left -= got
            if not got:
                break
            filled += got
            k = buf.rfind(b"\n", 0, filled)
            if k < 0:
                continue
            yield view[:k + 1]
            tail = filled - k - 1
            buf[:tail] = view[k + 1:filled]
            filled = tail
        if filled:
            yield view[:filled]


def _head(obj: Readable) -> tuple[str, Readable]:
    """First ~64 KB as text, and an object to read the whole input from afterwards."""
    if isinstance(obj, str):
        return obj[:65536], obj
    if isinstance(obj, Path):
        try:
            with open_decompressed(obj) as f:
                return f.read(65536).decode("latin-1"), obj
        except (OSError, EOFError, ValueError, pa.ArrowInvalid) as exc:
            kind = compression_of_file(obj) or "file"
            raise ParseError(str(obj), None, "", f"damaged {kind} data ({exc}); expected a complete {kind} file") \
                from None
    data = obj.read()
    if isinstance(data, bytes):
        data = decompress(data, getattr(obj, "name", "<stream>") if isinstance(getattr(obj, "name", None), str)
                          else "<stream>").decode("latin-1")
    return data[:65536], data


# -- frame building -------------------------------------------------------------
def _cat(codes: np.ndarray, names: list[str]) -> pd.Categorical:
    """Categorical with sorted categories (so the scanners' interning order does not matter).

    The codes are mapped by indexing a table in pandas' own code dtype with the
    scanner's int32 codes (-1, missing, indexes the table's last slot): no int64
    copy of the codes on the way.
    """
    order = sorted(range(len(names)), key=names.__getitem__)
    remap = np.empty(len(names) + 1, dtype=code_dtype(len(names)))
    remap[np.asarray(order, dtype=np.int64)] = np.arange(len(names))
    remap[-1] = -1
    return pd.Categorical.from_codes(remap[codes], categories=pd.Index([names[i] for i in order], dtype=object))


def _int64(values: np.ndarray) -> pd.arrays.IntegerArray:
    """Nullable Int64 over ``values`` (no copy): NA where the scanner wrote INT64_MIN."""
    return pd.arrays.IntegerArray(values, values == NA)


def _seconds(values: np.ndarray) -> np.ndarray:
    """int64 nanoseconds (NA where missing) as float64 seconds (NaN), as the C scanner gives them."""
    out = values.astype(np.float64)
    out /= 1e9
    out[values == NA] = np.nan
    return out


def _strings(arr: pa.Array) -> pd.api.extensions.ExtensionArray:
    if len(arr) and arr.null_count == len(arr):  # (a trace without -k: its backtraces; the scanner's 8 B a row let go)
        arr = null_text(len(arr))
    return text_array(arr)


def build_frame(raw: dict[str, Any]) -> pd.DataFrame:
    """The events frame from a parser's raw columns (same code for both scanners).

    Columns are taken out of ``raw`` one by one so each scanner buffer can be
    released as soon as its column exists; numeric columns are not copied again
    by the DataFrame (``copy=False``: no block consolidation), and the text
    columns (args, ret_text, backtrace) stay the scanner's Arrow buffers
    (``TEXT_DTYPE``: pandas' ``str`` dtype on Arrow storage), never Python
    objects.
    """
    take = raw.pop
    data: dict[str, Any] = {}
    data["kind"] = pd.Categorical.from_codes(np.asarray(take("kind"), dtype=np.int8),
                                             categories=pd.Index(list(KINDS), dtype=object))
    data["pid"] = _int64(np.asarray(take("pid"), dtype=np.int64))
    for src, dst in (("ts", "timestamp_s"), ("end", "end_timestamp_s"), ("dur", "duration_s")):
        data[dst] = np.asarray(take(src), dtype=np.float64)
    data["syscall"] = _cat(np.asarray(take("name"), dtype=np.int32), raw["names"])
    data["args"] = _strings(take("args"))
    data["ret_text"] = _strings(take("ret_text"))
    data["retval"] = _int64(np.asarray(take("retval"), dtype=np.int64))
    data["errno"] = _cat(np.asarray(take("errno"), dtype=np.int32), raw["errnos"])
    data["signal"] = _cat(np.asarray(take("signal"), dtype=np.int32), raw["signals"])
    data["backtrace"] = _strings(take("backtrace"))
    data["line"] = np.asarray(take("line"), dtype=np.int64)
    return pd.DataFrame(data, copy=False)


def _from_native(raw: _native.RawColumns) -> dict[str, Any]:
    """The C scanner's buffers as the raw columns :func:`build_frame` takes (numpy and Arrow views, no copy)."""
    n = raw["rows"]

    def i32(b: _native.Blob) -> np.ndarray:
        return np.frombuffer(memoryview(b), dtype=np.int32)[:n]

    def i64(b: _native.Blob) -> np.ndarray:
        return np.frombuffer(memoryview(b), dtype=np.int64)[:n]

    def f64(b: _native.Blob) -> np.ndarray:
        return np.frombuffer(memoryview(b), dtype=np.float64)[:n]

    def text(col: tuple[_native.Blob, _native.Blob, _native.Blob | None]) -> pa.Array:
        offsets, data, valid = col
        bitmap = None if valid is None else pa.py_buffer(valid)
        return pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data), bitmap,
                                                null_count=-1 if valid is not None else 0)

    return {
        "kind": i32(raw["kind"]), "name": i32(raw["name"]), "errno": i32(raw["errno"]),
        "signal": i32(raw["signal"]), "pid": i64(raw["pid"]), "ts": f64(raw["ts"]), "end": f64(raw["end"]),
        "dur": f64(raw["dur"]), "retval": i64(raw["retval"]), "line": i64(raw["line"]),
        "args": text(raw["args"]), "ret_text": text(raw["ret_text"]), "backtrace": text(raw["backtrace"]),
        "names": raw["names"], "errnos": raw["errnos"], "signals": raw["signals"],
        "messages": raw["messages"], "rejects": raw["rejects"], "summary": raw["summary"],
        "lines": raw["lines"], "rows": n,
    }


def _from_reference(raw: dict[str, Any]) -> dict[str, Any]:
    """The reference scanner's raw columns as the C scanner gives them: times in float64 seconds, every text
    column an Arrow array."""
    for k in ("ts", "end", "dur"):
        raw[k] = _seconds(np.asarray(raw[k], dtype=np.int64))
    for k in ("args", "ret_text", "backtrace"):
        if not isinstance(raw[k], pa.Array):
            raw[k] = pa.array(raw[k], type=pa.large_string())
    return raw


#: files at least this big are scanned on several cores (see :func:`scan_threads`)
PARALLEL_MIN_BYTES = 32 << 20


def cores_available() -> int:
    """The CPUs this process may run on (its affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def scan_threads(threads: int | None = None) -> int:
    """How many scanner threads :func:`read_strace` may use for one big file.

    ``threads`` if given, else the environment variable ``WORKBENCH_THREADS``
    (``1`` forces one scanner), else the cores available to this process.
    """
    if threads is None:
        env = os.environ.get("WORKBENCH_THREADS", "").strip()
        if env:
            try:
                threads = int(env)
            except ValueError:
                raise UsageError(f"WORKBENCH_THREADS={env!r}: expected a whole number of threads (1 = one "
                                 "scanner)") from None
        else:
            threads = cores_available()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise UsageError(f"read_strace(threads={threads!r}): expected a whole number >= 1 (1 = one scanner), "
                         "or None for the cores available")
    return threads


def _threads_wanted(obj: Readable, native: bool, pid_mode: int, threads: int | None = None) -> int:
    """Pieces to scan at once: 1 unless a plain file of PARALLEL_MIN_BYTES or more, with pids, C scanner."""
    if not (native and isinstance(obj, Path) and pid_mode != PID_NONE) or compression_of_file(obj) is not None:
        return 1
    n = scan_threads(threads)
    if n < 2 or obj.stat().st_size < max(PARALLEL_MIN_BYTES, 1):
        return 1
    return n


def _split_points(path: Path, n: int) -> list[int]:
    """Up to ``n - 1`` offsets near ``k * size / n`` where a line starts that is not a stack frame line."""
    size = path.stat().st_size
    cuts: list[int] = []
    with open(path, "rb") as f:
        for k in range(1, n):
            at = size * k // n
            f.seek(at)
            chunk = f.read(1 << 20)
            i = 0
            while True:
                j = chunk.find(b"\n", i)
                if j < 0 or j + 4 > len(chunk):
                    break
                if not chunk.startswith(b" > ", j + 1):
                    if at + j + 1 > (cuts[-1] if cuts else 0):
                        cuts.append(at + j + 1)
                    break
                i = j + 1
    return cuts


def _split_point(path: Path) -> int | None:
    """A line start near the middle of the file that is not a stack frame line."""
    cuts = _split_points(path, 2)
    return cuts[0] if cuts else None


def _scan_parts(path: Path, cuts: list[int], pid_mode: int, ts_mode: int, fixed_pid: int,
                bar: Bar | None) -> tuple[_native.Parser, bytes | None] | None:
    """Scan the pieces of ``path`` between ``cuts`` at once, one thread each (the scanner releases the GIL).

    Returns (the first scanner with the others merged into it, the input's
    incomplete last line or None), or None when a piece cannot be joined to
    the one before it (the caller then scans the file in one piece).
    """
    import threading

    bounds: list[int | None] = [0, *cuts, None]
    parsers = [_native.Parser(pid_mode, ts_mode, fixed_pid) for _ in range(len(bounds) - 1)]
    errors: list[BaseException] = []
    tails: list[bytes | None] = [None]

    def work(i: int) -> None:
        p, start, stop = parsers[i], bounds[i] or 0, bounds[i + 1]
        try:
            for b in _blocks(path, start, stop):
                if stop is None and len(b) and b[-1] != 0x0A:  # the input's cut last line: never a record
                    k = bytes(b).rfind(b"\n")
                    if bytes(b[k + 1:]).strip():
                        tails[0] = bytes(b[k + 1:])
                        b = b[:k + 1]
                if len(b):
                    p.feed(b)
                if bar is not None:
                    bar.update(len(b))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,), name=f"strace-scan-{i}") for i in range(len(parsers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    first = parsers[0]
    for other in parsers[1:]:
        if not first.merge(other, len(parsers)):
            return None
    return first, tails[0]


def _scan_two(path: Path, cut: int, pid_mode: int, ts_mode: int, fixed_pid: int,
              bar: Bar | None) -> _native.Parser | None:
    """Scan both halves of a file at once; None if they cannot be joined (see :func:`_scan_parts`)."""
    done = _scan_parts(path, [cut], pid_mode, ts_mode, fixed_pid, bar)
    return None if done is None else done[0]


def _with_tail(raw: dict[str, Any], tail: bytes | None) -> dict[str, Any]:
    """``raw`` with an incomplete last line (not fed to the scanner) rejected and counted."""
    if tail is not None:
        raw["lines"] = int(raw["lines"]) + 1
        raw["rejects"] = [*raw["rejects"], (raw["lines"], tail.decode("latin-1"), INCOMPLETE)]
    return raw


def _scan(name: str, obj: Readable, pid_mode: int, ts_mode: int, fixed_pid: int, native: bool,
          bar: Bar | None, whole: bool = False, key: Key | None = None, head: str | None = None,
          threads: int | None = None) -> dict[str, Any]:
    """Feed the input block by block to the scanner; raise on colour escapes.

    A big file with a pid column (or one pid per file) is cut at line
    boundaries into one piece per thread (:func:`scan_threads`), scanned by one
    native scanner each at once, and the results merged exactly: the same rows
    as one scanner. Where pieces cannot be joined (a cut inside a -C table or a
    record split by a message), the file is scanned again in one piece.
    """
    n = _threads_wanted(obj, native, pid_mode, threads) if key is None and isinstance(obj, Path) else 1
    if n > 1 and isinstance(obj, Path):
        cuts = _split_points(obj, n)
        done = _scan_parts(obj, cuts, pid_mode, ts_mode, fixed_pid, bar) if cuts else None
        if done is not None:
            parser, tail = done
            if parser.colour is not None:
                raise ParseError(name, parser.colour[0], parser.colour[1], COLOUR_REASON)
            return _with_tail(_from_native(parser.finish(n)), tail)
        if bar is not None:
            bar.reset()
    if native:
        nat = _native.Parser(pid_mode, ts_mode, fixed_pid)
        tail = _feed_all(nat, name, obj, None, bar, whole, key, head)
        return _with_tail(_from_native(nat.finish()), tail)
    ref = RefParser(pid_mode, ts_mode, fixed_pid)
    # the reference scanner allocates one list per row: cyclic GC passes over them are pure cost
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        tail = _feed_all(ref, name, obj, min(BLOCK_BYTES, REF_BLOCK_BYTES), bar, whole, key, head)
        return _with_tail(_from_reference(ref.finish()), tail)
    finally:
        if paused:
            gc.enable()


class _Scanner(Protocol):
    """What both scanners offer while they read."""

    @property
    def colour(self) -> tuple[int, str] | None: ...

    def feed(self, block: bytes | memoryview, /) -> None: ...


def _feed_all(p: _Scanner, name: str, obj: Readable, size: int | None, bar: Bar | None,
              whole: bool = False, key: Key | None = None, head: str | None = None) -> bytes | None:
    """The whole input through one scanner, block by block; ParseError at the first colour escape.

    Returns the input's last line when it lacks its newline and is not blank:
    that line is not fed (an incomplete last line is never a record), unless
    ``whole`` (inline text, complete by construction).

    ``key`` is fed every byte read (the cache key of what was parsed); it is
    marked invalid when the input does not start with ``head``, the text the
    format was sniffed from (the file changed in between).
    """
    tail = None
    first = bytearray()
    for b in _blocks(obj, size=size):
        if key is not None:
            key.feed(b)
            if len(first) < len(head or ""):
                first += b[: len(head or "") - len(first)]
        if not whole and len(b) and b[-1] != 0x0A:  # only the last block can end inside a line
            k = bytes(b).rfind(b"\n")
            if bytes(b[k + 1:]).strip():
                tail = bytes(b[k + 1:])
                b = b[:k + 1]
                if not len(b):
                    continue
        p.feed(b)
        if bar is not None:
            bar.update(len(b))
        if p.colour is not None:
            raise ParseError(name, p.colour[0], p.colour[1], COLOUR_REASON)
    if key is not None and head is not None and first.decode("latin-1") != head:
        key.valid = False
    return tail


_FF_NAME = re.compile(r"\.([0-9]+)$")
_COMPRESSED_SUFFIX = re.compile(r"\.(gz|bz2|xz|zst)$")


def _mode(value: str, choices: dict[str, int], parameter: str) -> int:
    """The mode a ``pid_prefix=``/``timestamps=`` value forces."""
    if value not in choices:
        raise UsageError(f"read_strace({parameter}={value!r}): expected one of "
                         + ", ".join(map(repr, choices)) + " or None (detect it)")
    return choices[value]


def parse_one(name: str, obj: Readable, *, use_native: bool, pid_prefix: str | None = None,
              timestamps: str | None = None, progress: bool | None = None,
              key: Key | None = None, threads: int | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Parse one input; return (frame, raw side tables). ``key`` is fed the bytes parsed (files);
    ``threads``: scanner threads for a big file (:func:`scan_threads`)."""
    whole = isinstance(obj, str)  # inline text (a stream is read into a str by _head: it is not whole)
    head, obj = _head(obj)
    pid_mode, ts_mode = sniff(head)
    pid_mode = _mode(pid_prefix, _PID_MODES, "pid_prefix") if pid_prefix is not None else pid_mode
    ts_mode = _mode(timestamps, _TS_MODES, "timestamps") if timestamps is not None else ts_mode
    fixed = NA
    m = _FF_NAME.search(_COMPRESSED_SUFFIX.sub("", name))
    if m is not None and pid_mode == PID_NONE and not re.search(r"^\[pid ", head, re.M):
        pid_mode, fixed = PID_FIXED, int(m.group(1))
    size = obj.stat().st_size if isinstance(obj, Path) else len(obj) if isinstance(obj, str) else 0
    if isinstance(obj, Path) and compression_of_file(obj) is not None:
        size = 0  # the bar counts decompressed bytes: its total is not known
    show = progress if progress is not None else size > _PROGRESS_BYTES
    bar = None
    if show:
        from tqdm.auto import tqdm

        bar = tqdm(total=size, unit="B", unit_scale=True, desc=f"strace {Path(name).name}")
    try:
        raw = _scan(name, obj, pid_mode, ts_mode, fixed, use_native, bar, whole, key,
                    head if isinstance(obj, Path) else None, threads)
    finally:
        if bar is not None:
            bar.close()
    frame = build_frame(raw)
    raw["time_base"] = TIME_BASES[ts_mode]
    raw["pid_mode"] = {PID_NONE: "none", PID_COLUMN: "column", PID_FIXED: "file"}[pid_mode]
    return frame, raw


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    if len(frames) == 1:
        return frames[0]
    cats = [c for c in frames[0].columns if isinstance(frames[0][c].dtype, pd.CategoricalDtype)]
    merged = {}
    for c in cats:
        if c == "kind":
            continue
        u = pd.api.types.union_categoricals([f[c].array for f in frames], ignore_order=True)
        merged[c] = u
    out = pd.concat([f.assign(**{c: f[c].astype(object) for c in merged}) for f in frames],
                    ignore_index=True)
    for c, u in merged.items():
        # object categories, as for a single file (pandas 3 would infer "str" here)
        out[c] = pd.Categorical(out[c], categories=pd.Index(u.categories, dtype=object))
    # -ff files: merge by time (stable, so equal stamps keep file order)
    order = np.argsort(out["timestamp_s"].to_numpy(), kind="stable")
    return out.iloc[order].reset_index(drop=True)


def _side_rows(name: str, raw: dict[str, Any]) -> tuple[list[RejectRow], list[tuple[str, int, str]], list[str]]:
    """One input's rejects and messages with its name, and the lines of its -C table."""
    rejects = [(name, ln, text, reason) for ln, text, reason in raw["rejects"]]
    messages = [(name, ln, text) for ln, text in raw["messages"]]
    summary = [text for _, text in raw["summary"]]
    return rejects, messages, summary


def _first_reject(rows: list[RejectRow]) -> RejectRow:
    """The reject ``strict=True`` raises: the earliest line of the first input that has any."""
    source = rows[0][0]
    return min((r for r in rows if r[0] == source), key=lambda r: r[1])


def _use_native(native: bool | None) -> bool:
    """Whether to read with the C scanner, for ``read_strace(native=...)``."""
    if native is None:
        return native_available()
    if native and _native is None:
        raise UsageError("read_strace(native=True): the C strace scanner is not built in this install "
                         "(pip install -e . with a C compiler), or pass native=None to use the Python "
                         "reference scanner")
    return bool(native)


#: the package files whose code makes a frame (part of every cache key)
_CODE = ("syscalls", "arrow_frames.py", "row_groups.py")


def _file_key(paths: list[Path], options: dict[str, Any]) -> Key:
    """The cache key of ``paths``: each file's content as the scanners read it (decompressed), in 4 MiB chunks."""
    from ..cache import Key

    key = Key("strace", _CODE, options)
    for path in paths:
        for chunk in _blocks(path, size=1 << 22):
            key.feed(chunk)
        key.end_part()
    return key


def read_strace(
    source: Source,
    *,
    strict: bool = False,
    native: bool | None = None,
    progress: bool | None = None,
    cache: bool | str | os.PathLike[str] | None = False,
    pid_prefix: str | None = None,
    timestamps: str | None = None,
    check_summary: bool = True,
    engine: str = "pandas",
    client: Client | str | None = None,
    date: str | None = None,
    tz: str | None = None,
    time_base_s: float | None = None,
    columns: list[str] | None = None,
    filters: Any = None,
    threads: int | None = None,
) -> pd.DataFrame:
    """Read strace output into one row per call, signal, exit or kill.

    ``source``: a path, a glob, a list of paths (an ``-ff`` set ``NAME.<pid>`` is
    merged by time, the pid taken from each file name), an open stream, or text
    (a string containing a newline). The format (pid prefix, timestamps) is
    detected; force it with ``pid_prefix="column"|"none"`` and
    ``timestamps="none"|"tod"|"epoch"|"relative"``.

    Columns (see :data:`STRACE_SCHEMA`): kind, pid, timestamp_s, end_timestamp_s,
    duration_s, syscall, args, ret_text, retval, errno, signal, backtrace, line.

    ``frame.attrs``: ``rejects`` (a :class:`~workbench.schema.Rejects`: lines not
    understood, with source, line, text, reason), ``messages`` (a
    :class:`~workbench.schema.SideTable` of source, line, text: ``strace:`` lines,
    also those spliced into a record on stderr), ``strace_summary`` (a SideTable
    of the trace's own -c/-C table: syscall, calls, errors, seconds; None
    without one), ``summary_mismatches`` (a SideTable of the rows where our
    counts differ from it, see :func:`compare_with_strace`: empty when exact;
    None without a table or with ``check_summary=False``), ``time_base``, ``lines``.

    ``strict=True`` raises :class:`ParseError` on the first rejected line and on
    a mismatch with the -C table. ``native=None`` uses the C scanner when built
    (``WORKBENCH_NO_NATIVE=1`` disables it), ``False`` the Python reference,
    ``True`` the C scanner or :class:`UsageError` when it is not built.
    ``threads``: the C scanner reads a plain file of 32 MiB or more (with a pid
    column, or one pid per file) as that many pieces at once, one thread each,
    and joins them exactly (the same frame as one scanner); default
    ``WORKBENCH_THREADS`` if set, else the cores this process may use;
    ``threads=1`` (or ``WORKBENCH_THREADS=1``) forces one scanner. A converted
    trace's row groups are decoded as many at a time. Colour
    escapes (``--color=always``) raise ParseError.

    ``cache`` (files only): ``True`` keeps the parsed frame in the one workbench
    cache (:mod:`workbench.cache`: ``$WORKBENCH_CACHE_DIR/strace``, else
    ``~/.cache/workbench/strace``), a path keeps it in that folder. The entry is
    keyed by the files' names and bytes, ``pid_prefix``, ``timestamps`` and the
    scanner's own sources, so the next load of the same bytes skips parsing and
    gives an equal frame (dtypes and attrs); an edited trace or scanner is parsed
    again. A hit maps the entry (uncompressed Arrow, about the frame's size on
    disk) and builds the frame over the map, without decoding or copying; the
    key of a file that had not changed for two seconds
    before it was read is remembered with its inode, size, mtime and ctime, so
    the next lookup does not read the file at all (any write changes the
    ctime: the file is then hashed again). Text and streams are never cached.
    A converted trace (below) is cached too, per ``columns``/``filters``: the
    Parquet is decoded once, later loads map the entry.

    ``engine="dask"`` (files only) returns a dask DataFrame with the same
    columns and dtypes: one lazy partition per trace, where a trace is one file
    or a whole ``-ff`` set (``NAME.<pid>`` files of one directory with the same
    NAME, merged by time inside its partition exactly as here). Rows are in
    trace order within each partition and partitions follow the order of the
    sources: unlike the pandas path, separate traces are **not** merged by time
    (``frame.sort_values("timestamp_s")`` if that is wanted). ``client``: None
    (current Client, else a local in-process cluster), a scheduler address or a
    Client. Rejects: :func:`workbench.engine.rejects` /
    :func:`workbench.engine.compute` (which also give each trace's other attrs).

    Clocks: ``-t/-tt`` stamps are local times of day with no date
    (``attrs["time_base"] == "midnight"``). ``date="YYYY-MM-DD"`` (with ``tz``, an
    IANA zone such as ``"Europe/Berlin"``, default UTC: the zone strace ran in)
    turns them into epoch seconds, so the trace joins epoch-stamped logs;
    ``time_base_s`` instead adds that many seconds (the epoch of the trace's
    midnight, or of its start for ``-r``). Either sets ``time_base`` to
    ``"epoch"`` and ``attrs["time_base_from"]`` to how it was obtained
    (``"time of day + date 2026-12-02 (Europe/Berlin)"``); without them
    ``time_base_from`` repeats the trace's own base. Both are ignored, and
    ``time_base_from`` says so, for a trace whose stamps are already epoch
    seconds; they need ``engine="pandas"``.

    A Parquet file written by :func:`workbench.syscalls.to_parquet` (``workbench
    strace convert``) is loaded without parsing: the same frame and attrs as
    reading the trace itself. Only there, ``columns=`` loads some columns and
    ``filters=`` some rows, pushed down to the Parquet reader (see
    :func:`workbench.syscalls.convert.read_converted`).
    """
    from ..engine import check_engine

    if date is not None and time_base_s is not None:
        raise UsageError("read_strace: give date= (with tz=) or time_base_s=, not both")
    if tz is not None and date is None:
        raise UsageError("read_strace: tz= needs date= (the day the -t/-tt trace was taken)")
    if engine == "dask" and (date is not None or time_base_s is not None):
        raise UsageError("read_strace: date= and time_base_s= work with engine='pandas'")
    from .summary import parse_summary_table

    if pid_prefix is not None:
        _mode(pid_prefix, _PID_MODES, "pid_prefix")
    if timestamps is not None:
        _mode(timestamps, _TS_MODES, "timestamps")
    if engine == "dask":  # (text and streams named as such before the engine's own check)
        _files_only(_sources(source))
    if check_engine(engine, source):
        opts = dict(strict=strict, native=native, progress=False, cache=cache, pid_prefix=pid_prefix,
                    timestamps=timestamps, check_summary=check_summary, threads=threads)
        return _dask_strace(_sources(source), opts, client)

    use_native = _use_native(native)
    if threads is not None:
        scan_threads(threads)  # a bad value is a UsageError whatever the input
    sources = _sources(source)
    if len(sources) == 1 and isinstance(sources[0][1], Path) and engine == "pandas":
        from .convert import is_converted, read_converted

        if is_converted(sources[0][1]):
            conv = dict(columns=columns, filters=filters, check_summary=check_summary, date=date, tz=tz,
                        time_base_s=time_base_s)
            if not cache:
                return read_converted(sources[0][1], strict=strict, threads=threads, **conv)
            return _converted_cached(sources[0][1], cache, strict, conv, threads)
    if columns is not None or filters is not None:
        raise UsageError("read_strace: columns= and filters= apply to a trace converted to Parquet "
                         "(workbench.syscalls.to_parquet, workbench strace convert); convert it first")
    store = key = stats = None
    if cache:
        paths = [o for _, o in sources if isinstance(o, Path)]
        if len(paths) == len(sources):
            from ..cache import Cache, FileStats, Key

            store = Cache("strace", cache)
            key_options = {"pid_prefix": pid_prefix, "timestamps": timestamps, "sources": [n for n, _ in sources]}
            key, stats = _lookup(store, paths, key_options)
            hit = _hit(store, key, strict)
            if hit is not None:
                return set_time_base(_finish(validate(_object_categories(hit), STRACE_SCHEMA), strict,
                                             check_summary, _where(sources)), date, tz, time_base_s)
    frames: list[pd.DataFrame] = []
    rejects: list[RejectRow] = []
    messages: list[tuple[str, int, str]] = []
    summary: list[str] = []
    time_bases: set[str] = set()
    n_lines = 0
    # the entry is stored under the key of the bytes the scanners read, not of the lookup's read: they are
    # hashed again while parsed, unless the files had settled and their stat is the same after the parse
    settled = stats is not None and stats.settled()
    parsed = Key("strace", _CODE, key_options) if store is not None and not settled else None
    for name, obj in sources:
        f, raw = parse_one(name, obj, use_native=use_native, pid_prefix=pid_prefix,
                           timestamps=timestamps, progress=progress, key=parsed, threads=threads)
        if parsed is not None:
            parsed.end_part()
        r, m, s = _side_rows(name, raw)
        if strict and r:
            raise ParseError(*_first_reject(r))
        frames.append(f)
        rejects += r
        messages += m
        summary += s
        time_bases.add(raw["time_base"])
        n_lines += raw["lines"]
    frame = _concat(frames)
    frame = validate(frame, STRACE_SCHEMA)
    attach_rejects(frame, rejects)
    frame.attrs["messages"] = SideTable(pd.DataFrame(messages, columns=["source", "line", "text"]).astype(
        {"source": object, "line": "int64", "text": object}))
    frame.attrs["time_base"] = time_bases.pop() if len(time_bases) == 1 else "mixed"
    frame.attrs["lines"] = int(n_lines)
    frame.attrs["strace_summary"] = SideTable(parse_summary_table(summary)) if summary else None
    if store is not None and parsed is not None and parsed.valid:
        store.store(parsed.hexdigest(), frame)
    elif store is not None and settled and key is not None and stats is not None and \
            FileStats.of(Path(f[0]) for f in stats.files).files == stats.files:
        store.store(key, frame)  # unchanged since the lookup hashed them (see Cache.remember)
    return set_time_base(_finish(frame, strict, check_summary, _where(sources)), date, tz, time_base_s)


def _lookup(store: Cache, paths: list[Path], options: dict[str, Any]) -> tuple[str, FileStats]:
    """The cache key of ``paths``: remembered for files whose stat is unchanged, else hashed (and then
    remembered); with the stat taken before any byte was read (see :meth:`Cache.remember`)."""
    from ..cache import FileStats

    stats = FileStats.of(paths)
    key = store.recall(stats, _CODE, options)
    if key is None:
        key = _file_key(paths, options).hexdigest()
        store.remember(stats, _CODE, options, key)
    return key, stats


def _hit(store: Cache, key: str, strict: bool) -> pd.DataFrame | None:
    """The cached frame of ``key`` (None: not cached); ParseError on its first reject when ``strict``."""
    hit = store.load(key)
    if hit is not None and strict and (rows := rejects_of(hit).rows()):
        raise ParseError(*_first_reject(rows))
    return hit


def _converted_cached(path: Path, cache: bool | str | os.PathLike[str], strict: bool,
                      conv: dict[str, Any], threads: int | None = None) -> pd.DataFrame:
    """A converted trace through the cache: the Parquet decoded once, later loads map the entry."""
    from ..cache import Cache, FileStats
    from .convert import read_converted, side_path_of

    store = Cache("strace", cache)
    paths = [path, side_path_of(path)] if side_path_of(path).is_file() else [path]
    key, stats = _lookup(store, paths, {"converted": True, **{k: repr(v) for k, v in conv.items()}})
    hit = _hit(store, key, strict)
    if hit is not None:
        whole = conv["columns"] is None and conv["filters"] is None  # (the -C table is checked as on a decode)
        return _finish(_object_categories(hit), strict, bool(conv["check_summary"]) and whole, str(path))
    frame = read_converted(path, strict=strict, threads=threads, **conv)
    if FileStats.of(paths).files == stats.files:  # (the files did not change while they were read)
        store.store(key, frame)
    return frame


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def set_time_base(frame: pd.DataFrame, date: str | None = None, tz: str | None = None,
                  time_base_s: float | None = None) -> pd.DataFrame:
    """Put a time-of-day (or relative) trace on epoch seconds, in place; see :func:`read_strace`.

    Sets ``attrs["time_base"]`` (``"epoch"`` once converted) and
    ``attrs["time_base_from"]`` (how the times were obtained). Returns ``frame``.
    """
    base = frame.attrs.get("time_base")
    if date is None and time_base_s is None:
        frame.attrs.setdefault("time_base_from", {
            "epoch": "epoch seconds in the trace (-ttt)", "midnight": "time of day in the trace (-t/-tt), no date",
            "relative": "seconds since the first line (-r)", "none": "no timestamps"}.get(str(base), str(base)))
        return frame
    if base not in ("midnight", "relative") or (date is not None and base != "midnight"):
        frame.attrs["time_base_from"] = (f"{'epoch seconds in the trace' if base == 'epoch' else str(base)}; "
                                         f"{'date' if date is not None else 'time_base_s'} ignored")
        return frame
    cols = ["timestamp_s", "end_timestamp_s"]
    if time_base_s is not None:
        off = float(time_base_s)
        if not math.isfinite(off):
            raise UsageError(f"read_strace: time_base_s must be a finite number of seconds, got {time_base_s!r}")
        for c in cols:
            frame[c] = frame[c].to_numpy(dtype="float64") + off
        frame.attrs["time_base_from"] = f"{'time of day' if base == 'midnight' else 'relative'} + {off:.6f} s"
        frame.attrs["time_base"] = "epoch"
        return frame
    if not isinstance(date, str) or not _DATE.match(date.strip()):
        raise UsageError(f"read_strace: date must be 'YYYY-MM-DD', got {date!r}")
    zone = (tz or "UTC").strip() or "UTC"
    try:
        day = pd.Timestamp(date.strip())
        from zoneinfo import ZoneInfo

        ZoneInfo(zone)
    except (ValueError, KeyError, OSError) as exc:  # zoneinfo raises ZoneInfoNotFoundError (a KeyError)
        raise UsageError(f"read_strace: cannot use date={date!r} tz={zone!r}: {exc}") from exc
    for c in cols:
        v = frame[c].to_numpy(dtype="float64")
        ok = np.isfinite(v)
        local = pd.DatetimeIndex(day + pd.to_timedelta(np.where(ok, v, 0.0), unit="s"))
        # an hour that occurs twice (DST ends) is read as standard time; one that does not exist moves forward
        aware = local.tz_localize(zone, ambiguous=np.zeros(len(local), dtype=bool), nonexistent="shift_forward")
        epoch = aware.tz_convert("UTC").tz_localize(None).to_numpy(dtype="datetime64[ns]").astype("int64") / 1e9
        frame[c] = np.where(ok, epoch, np.nan)
    frame.attrs["time_base"] = "epoch"
    frame.attrs["time_base_from"] = f"time of day + date {date.strip()} ({zone})"
    return frame


def _where(sources: list[tuple[str, Readable]]) -> str:
    return ", ".join(name for name, _ in sources)


def _object_categories(frame: pd.DataFrame) -> pd.DataFrame:
    """The categorical columns with object categories, as the scanners make them.

    A cached frame comes back from Parquet with ``str`` categories, and a column
    without any category (no signal in the trace) as plain objects.
    """
    for col in STRACE_SCHEMA.columns:
        if col.kind != "category" or col.name not in frame.columns:
            continue
        values = frame[col.name]
        if isinstance(values.dtype, pd.CategoricalDtype):
            cats = pd.Index(list(values.cat.categories), dtype=object)
            frame[col.name] = pd.Categorical.from_codes(values.cat.codes.to_numpy(), categories=cats)
        else:
            present = sorted({v for v in values.astype(object) if isinstance(v, str)})
            frame[col.name] = pd.Categorical(values.astype(object), categories=pd.Index(present, dtype=object))
    return frame


def _read_trace(paths: list[Path], opts: dict[str, Any]) -> pd.DataFrame:
    return read_strace(paths, **opts)


def _files_only(sources: list[tuple[str, Readable]]) -> list[Path]:
    """The paths of ``sources``; UsageError naming the first one that is text or a stream."""
    paths = []
    for name, obj in sources:
        if not isinstance(obj, Path):
            raise UsageError(f'read_strace(engine="dask") reads files: {name} is not a file; give a path, '
                             'a glob or a list of paths, or use engine="pandas" for text and streams')
        paths.append(obj)
    return paths


def _dask_strace(sources: list[tuple[str, Readable]], opts: dict[str, Any], client: Client | str | None) -> Any:
    """One partition per trace: a single file, or an -ff set (merged by time within it)."""
    from ..engine import dask_frame

    traces: dict[tuple[str, str], list[Path]] = {}
    for i, obj in enumerate(_files_only(sources)):
        ff = _FF_NAME.search(obj.name) is not None
        key = (str(obj.parent), _FF_NAME.sub("", obj.name)) if ff else ("", str(i))
        traces.setdefault(key, []).append(obj)
    parts = list(traces.values())
    names = [str(p[0]) if len(p) == 1 else f"{p[0].parent / _FF_NAME.sub('', p[0].name)}.* ({len(p)} files)"
             for p in parts]
    return dask_frame(parts, functools.partial(_read_trace, opts=opts), names=names, client=client,
                      known_categories=("kind",))


def _finish(frame: pd.DataFrame, strict: bool, check_summary: bool, where: str) -> pd.DataFrame:
    """Check the counts against the trace's own -C table (``where``: the inputs, for the error)."""
    from .summary import compare_with_strace

    table = frame.attrs.get("strace_summary")
    if check_summary and table is not None:
        bad = compare_with_strace(frame, table)
        frame.attrs["summary_mismatches"] = SideTable(bad)
        if len(bad):
            msg = ("parsed per-syscall counts differ from the trace's own -C summary: "
                   + bad.to_string(index=False))
            if strict:
                raise ParseError(where, None, "", msg)
            warnings.warn(msg, stacklevel=3)
    else:
        frame.attrs["summary_mismatches"] = None
    return frame
