"""read_strace: sources, format sniffing, chunked feeding, frame building, -C self-check."""
from __future__ import annotations

import functools
import gc
import os
import re
import warnings
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import ParseError
from ..schema import attach_rejects, validate
from ..sources import Text, split_sources
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

BLOCK_BYTES = 8 << 20
REF_BLOCK_BYTES = 2 << 20  # the reference scanner's column work stays in cache: measured 5 % faster than 8 MiB
_PROGRESS_BYTES = 64 << 20

try:  # the optional C scanner, built by `pip install -e .` when a compiler is present
    from . import _native  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - depends on the build
    _native = None


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
def _sources(source) -> list[tuple[str, object]]:
    """[(name, path-or-text-or-stream)] for every accepted kind of source (streams stay unread)."""
    out: list[tuple[str, object]] = []
    for item in split_sources(source, "strace"):
        if isinstance(item, Path):
            out.append((str(item), item))
        elif isinstance(item, Text):
            out.append((item.name, item.text))
        else:
            out.append((item.name, item.stream))
    return out


def _blocks(obj, start: int = 0, stop: int | None = None, size: int | None = None) -> Iterable[bytes | memoryview]:
    """Blocks of whole lines (the last one may lack its newline), of about ``size`` bytes (BLOCK_BYTES).

    Files are read into one reused buffer: each block is a view that is valid
    until the next one is produced (the scanners copy what they keep).
    """
    if isinstance(obj, str):
        yield obj.encode() if obj.isascii() else obj.encode("latin-1", errors="replace")
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


def _head(obj) -> tuple[str, object]:
    """First ~64 KB as text, and an object to read the whole input from afterwards."""
    if isinstance(obj, str):
        return obj[:65536], obj
    if isinstance(obj, Path):
        with open(obj, "rb") as f:
            return f.read(65536).decode("latin-1"), obj
    data = obj.read()
    if isinstance(data, bytes):
        data = data.decode("latin-1")
    return data[:65536], data


# -- frame building -------------------------------------------------------------
def _cat(codes: np.ndarray, names: list[str]) -> pd.Categorical:
    """Categorical with sorted categories (so the scanners' interning order does not matter)."""
    order = sorted(range(len(names)), key=names.__getitem__)
    remap = np.empty(len(names) + 1, dtype=np.int32)
    remap[np.asarray(order, dtype=np.int64)] = np.arange(len(names), dtype=np.int32)
    remap[-1] = -1  # code -1 (missing) indexes the last slot
    codes = remap[codes.astype(np.int64, copy=False)]
    return pd.Categorical.from_codes(codes, categories=pd.Index([names[i] for i in order], dtype=object))


def _int64(values: np.ndarray) -> pd.arrays.IntegerArray:
    """Nullable Int64 over ``values`` (no copy): NA where the scanner wrote INT64_MIN."""
    return pd.arrays.IntegerArray(values, values == NA)


def _seconds(values: np.ndarray) -> np.ndarray:
    out = values.astype(np.float64)
    out /= 1e9
    out[values == NA] = np.nan
    return out


def _strings(arr: pa.Array) -> pd.Series:
    return pa.chunked_array([arr]).to_pandas()


def build_frame(raw: dict) -> pd.DataFrame:
    """The events frame from a parser's raw columns (same code for both scanners).

    Columns are taken out of ``raw`` one by one so each scanner buffer can be
    released as soon as its column exists; numeric columns are not copied again
    by the DataFrame (``copy=False``: no block consolidation).
    """
    take = raw.pop
    data = {}
    data["kind"] = pd.Categorical.from_codes(np.asarray(take("kind"), dtype=np.int8),
                                             categories=pd.Index(list(KINDS), dtype=object))
    data["pid"] = _int64(np.asarray(take("pid"), dtype=np.int64))
    for src, dst in (("ts", "timestamp_s"), ("end", "end_timestamp_s"), ("dur", "duration_s")):
        data[dst] = _seconds(np.asarray(take(src), dtype=np.int64))
    data["syscall"] = _cat(np.asarray(take("name"), dtype=np.int32), raw["names"])
    data["args"] = _strings(take("args"))
    data["ret_text"] = _strings(take("ret_text"))
    data["retval"] = _int64(np.asarray(take("retval"), dtype=np.int64))
    data["errno"] = _cat(np.asarray(take("errno"), dtype=np.int32), raw["errnos"])
    data["signal"] = _cat(np.asarray(take("signal"), dtype=np.int32), raw["signals"])
    data["backtrace"] = _strings(take("backtrace"))
    data["line"] = np.asarray(take("line"), dtype=np.int64)
    return pd.DataFrame(data, copy=False)


def _finish_raw(raw: dict, native: bool) -> dict:
    if native:
        n = raw["rows"]
        for k in ("kind", "name", "errno", "signal"):
            raw[k] = np.frombuffer(raw[k], dtype=np.int32)[:n]
        for k in ("pid", "ts", "end", "dur", "retval", "line"):
            raw[k] = np.frombuffer(raw[k], dtype=np.int64)[:n]
        for k in ("args", "ret_text", "backtrace"):
            offsets, data, valid = raw[k]
            bitmap = None if valid is None else pa.py_buffer(valid)
            raw[k] = pa.LargeStringArray.from_buffers(
                n, pa.py_buffer(offsets), pa.py_buffer(data), bitmap,
                null_count=-1 if valid is not None else 0,
            )
    else:
        for k in ("args", "ret_text", "backtrace"):
            if not isinstance(raw[k], pa.Array):
                raw[k] = pa.array(raw[k], type=pa.large_string())
    return raw


PARALLEL_MIN_BYTES = 48 << 20


def _threads_wanted(obj, native: bool, pid_mode: int) -> bool:
    """Two scanner threads only when asked (WORKBENCH_THREADS=2), for a big file with pids."""
    if not (native and isinstance(obj, Path) and pid_mode != PID_NONE):
        return False
    if os.environ.get("WORKBENCH_THREADS", "1") != "2" or (os.cpu_count() or 1) < 2:
        return False
    return obj.stat().st_size >= PARALLEL_MIN_BYTES


def _split_point(path: Path) -> int | None:
    """A line start near the middle of the file that is not a stack frame line."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        f.seek(size // 2)
        chunk = f.read(1 << 20)
    i = 0
    while True:
        k = chunk.find(b"\n", i)
        if k < 0 or k + 4 > len(chunk):
            return None
        if not chunk.startswith(b" > ", k + 1):
            return size // 2 + k + 1
        i = k + 1


def _scan_two(path: Path, cut: int, pid_mode: int, ts_mode: int, fixed_pid: int, bar):
    """Scan both halves of a file at once (the scanner releases the GIL); None if they cannot be joined."""
    import threading

    parsers = [_native.Parser(pid_mode, ts_mode, fixed_pid) for _ in range(2)]
    errors: list[BaseException] = []

    def work(p, start: int, stop: int | None) -> None:
        try:
            for b in _blocks(path, start, stop):
                p.feed(b)
                if bar is not None:
                    bar.update(len(b))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(parsers[0], 0, cut)),
               threading.Thread(target=work, args=(parsers[1], cut, None))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    first, second = parsers
    if not first.merge(second):
        return None
    return first


def _scan(name: str, obj, pid_mode: int, ts_mode: int, fixed_pid: int, native: bool, bar) -> dict:
    """Feed the input block by block to one scanner; raise on colour escapes.

    With WORKBENCH_THREADS=2, big files with a pid column (or one pid per file)
    are scanned by two native scanners, one per half, whose results are then
    merged exactly (off by default: it only pays on an otherwise idle machine).
    """
    if _threads_wanted(obj, native, pid_mode):
        cut = _split_point(obj)
        p = _scan_two(obj, cut, pid_mode, ts_mode, fixed_pid, bar) if cut else None
        if p is not None:
            if p.colour is not None:
                raise ParseError(name, p.colour[0], p.colour[1], COLOUR_REASON)
            return _finish_raw(p.finish(), native)
        if bar is not None:
            bar.reset()
    p = _native.Parser(pid_mode, ts_mode, fixed_pid) if native else RefParser(pid_mode, ts_mode, fixed_pid)
    # the reference scanner allocates one list per row: cyclic GC passes over them are pure cost
    paused = not native and gc.isenabled()
    if paused:
        gc.disable()
    try:
        for b in _blocks(obj, size=None if native else min(BLOCK_BYTES, REF_BLOCK_BYTES)):
            p.feed(b)
            if bar is not None:
                bar.update(len(b))
            if p.colour is not None:
                raise ParseError(name, p.colour[0], p.colour[1], COLOUR_REASON)
        return _finish_raw(p.finish(), native)
    finally:
        if paused:
            gc.enable()


_FF_NAME = re.compile(r"\.([0-9]+)$")


def parse_one(name: str, obj, *, use_native: bool, pid_prefix: str | None = None,
              timestamps: str | None = None, progress: bool | None = None) -> tuple[pd.DataFrame, dict]:
    """Parse one input; return (frame, raw side tables)."""
    head, obj = _head(obj)
    pid_mode, ts_mode = sniff(head)
    if pid_prefix is not None:
        pid_mode = _PID_MODES[pid_prefix]
    if timestamps is not None:
        ts_mode = _TS_MODES[timestamps]
    fixed = NA
    m = _FF_NAME.search(name)
    if m is not None and pid_mode == PID_NONE and not re.search(r"^\[pid ", head, re.M):
        pid_mode, fixed = PID_FIXED, int(m.group(1))
    size = obj.stat().st_size if isinstance(obj, Path) else len(obj) if isinstance(obj, str) else 0
    show = progress if progress is not None else size > _PROGRESS_BYTES
    bar = None
    if show:
        from tqdm.auto import tqdm

        bar = tqdm(total=size, unit="B", unit_scale=True, desc=f"strace {Path(name).name}")
    try:
        raw = _scan(name, obj, pid_mode, ts_mode, fixed, use_native, bar)
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


def _side_frames(name: str, raw: dict) -> tuple[list, list, list]:
    rejects = [(name, ln, text, reason) for ln, text, reason in raw["rejects"]]
    messages = [(name, ln, text) for ln, text in raw["messages"]]
    summary = [text for _, text in raw["summary"]]
    return rejects, messages, summary


def read_strace(
    source,
    *,
    strict: bool = False,
    native: bool | None = None,
    progress: bool | None = None,
    cache: bool | str | os.PathLike | None = False,
    pid_prefix: str | None = None,
    timestamps: str | None = None,
    check_summary: bool = True,
    engine: str = "pandas",
    client=None,
) -> pd.DataFrame:
    """Read strace output into one row per call, signal, exit or kill.

    ``source``: a path, a glob, a list of paths (an ``-ff`` set ``NAME.<pid>`` is
    merged by time, the pid taken from each file name), an open stream, or text
    (a string containing a newline). The format (pid prefix, timestamps) is
    detected; force it with ``pid_prefix="column"|"none"`` and
    ``timestamps="none"|"tod"|"epoch"|"relative"``.

    Columns (see :data:`STRACE_SCHEMA`): kind, pid, timestamp_s, end_timestamp_s,
    duration_s, syscall, args, ret_text, retval, errno, signal, backtrace, line.

    ``frame.attrs``: ``rejects`` (lines not understood: source, line, text,
    reason), ``messages`` (``strace:`` lines, also those spliced into a record on
    stderr), ``strace_summary`` (the trace's own -c/-C table, if any),
    ``summary_mismatches`` (rows where our counts differ from it; empty when
    exact), ``time_base``, ``lines``.

    ``strict=True`` raises :class:`ParseError` on the first rejected line and on
    a mismatch with the -C table. ``native=None`` uses the C scanner when built
    (``WORKBENCH_NO_NATIVE=1`` disables it), ``False`` the Python reference;
    ``WORKBENCH_THREADS=2`` lets the C scanner read big files as two halves at
    once. Colour escapes (``--color=always``) raise ParseError.
    ``cache`` (True or a directory) stores the result as Parquet keyed by the
    file contents so the next load of the same bytes skips parsing.

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
    """
    from ..engine import check_engine
    from .summary import parse_summary_table

    if check_engine(engine, source):
        opts = dict(strict=strict, native=native, progress=False, cache=cache, pid_prefix=pid_prefix,
                    timestamps=timestamps, check_summary=check_summary)
        return _dask_strace(_sources(source), opts, client)

    if native is None:
        use_native = native_available()
    elif native:
        if _native is None:
            raise RuntimeError("the native strace scanner is not built (pip install -e . with a C compiler)")
        use_native = True
    else:
        use_native = False
    sources = _sources(source)
    key = None
    if cache:
        from . import cache as _cache

        paths = [o for _, o in sources if isinstance(o, Path)]
        if len(paths) == len(sources):
            key = _cache.key_for(paths, dict(pid_prefix=pid_prefix, timestamps=timestamps))
            hit = _cache.load(key, cache)
            if hit is not None:
                return _finish(validate(hit, STRACE_SCHEMA), strict, check_summary)
    frames, rejects, messages, summary = [], [], [], []
    time_bases, n_lines = set(), 0
    for name, obj in sources:
        f, raw = parse_one(name, obj, use_native=use_native, pid_prefix=pid_prefix,
                           timestamps=timestamps, progress=progress)
        r, m, s = _side_frames(name, raw)
        if strict and r:
            raise ParseError(r[0][0], r[0][1], r[0][2], r[0][3])
        frames.append(f)
        rejects += r
        messages += m
        summary += s
        time_bases.add(raw["time_base"])
        n_lines += raw["lines"]
    frame = _concat(frames)
    frame = validate(frame, STRACE_SCHEMA)
    attach_rejects(frame, rejects)
    frame.attrs["messages"] = pd.DataFrame(messages, columns=["source", "line", "text"]).astype(
        {"source": object, "text": object})
    frame.attrs["time_base"] = time_bases.pop() if len(time_bases) == 1 else "mixed"
    frame.attrs["lines"] = int(n_lines)
    frame.attrs["strace_summary"] = parse_summary_table(summary) if summary else None
    if key is not None:
        _cache.store(key, cache, frame)
    return _finish(frame, strict, check_summary)


def _read_trace(paths: list[Path], opts: dict) -> pd.DataFrame:
    return read_strace(paths, **opts)


def _dask_strace(sources: list[tuple[str, object]], opts: dict, client):
    """One partition per trace: a single file, or an -ff set (merged by time within it)."""
    from ..engine import dask_frame

    traces: dict[tuple[str, str], list[Path]] = {}
    for i, (_, obj) in enumerate(sources):
        if not isinstance(obj, Path):
            raise ValueError('engine="dask" reads files: give a path, a glob or a list of paths, not text')
        ff = _FF_NAME.search(obj.name) is not None
        key = (str(obj.parent), _FF_NAME.sub("", obj.name)) if ff else ("", str(i))
        traces.setdefault(key, []).append(obj)
    parts = list(traces.values())
    names = [str(p[0]) if len(p) == 1 else f"{p[0].parent / _FF_NAME.sub('', p[0].name)}.* ({len(p)} files)"
             for p in parts]
    return dask_frame(parts, functools.partial(_read_trace, opts=opts), names=names, client=client,
                      known_categories=("kind",))


def _finish(frame: pd.DataFrame, strict: bool, check_summary: bool) -> pd.DataFrame:
    from .summary import compare_with_strace

    table = frame.attrs.get("strace_summary")
    if check_summary and table is not None:
        bad = compare_with_strace(frame, table)
        frame.attrs["summary_mismatches"] = bad
        if len(bad):
            msg = ("parsed per-syscall counts differ from the trace's own -C summary: "
                   + bad.to_string(index=False))
            if strict:
                raise ParseError("<summary>", None, "", msg)
            warnings.warn(msg, stacklevel=3)
    else:
        frame.attrs["summary_mismatches"] = None
    return frame
