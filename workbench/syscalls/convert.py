"""Streaming strace → Parquet: :func:`to_parquet`, and :func:`read_converted` to load the result back.

A trace of any size is read in bounded memory. The C scanner reads the input
block by block as :func:`read_strace` does; every ``row_group_lines`` lines it
gives out the rows no later line can change (``Parser.drain``) and keeps the
few that may still change: calls left ``<unfinished ...>`` (their
``<... resumed>`` half, in a later chunk, is joined to them exactly as in one
scan) and the last row (``-k`` stack frames may follow it). Line numbers,
``-t/-tt`` day roll-over, ``-r`` sums and pid tracking carry on in the one
scanner, so the rows are those of :func:`read_strace`, written as Parquet row
groups as soon as they are given out. A row kept back is written with a later
group: rows are made in line order, so reading sorts by ``line`` (it only
permutes when some call stayed unfinished over a chunk boundary).

Files written (``OUT`` is the path given):

- ``OUT``: one row per event, the columns of :data:`STRACE_SCHEMA` (``kind``,
  ``syscall``, ``errno``, ``signal`` as strings; ``pid`` and ``retval`` as
  nullable int64; ``*_s`` as float64, NaN where missing), row groups of at most
  about ``row_group_lines`` rows. The key ``workbench.strace`` of the file's
  metadata holds a JSON object: ``source`` (the trace's name, used for the
  rejects' source), ``time_base``, ``pid_mode``, ``lines``, ``rows``,
  ``rejects``, ``messages``, ``summary`` (the lines of strace's own -c/-C
  table), ``categories`` (every syscall, errno and signal name, for the
  categorical columns), ``leader`` (see below) and ``side`` (the side file's
  name).
- the side file ``OUT`` with ``.side.parquet`` in place of ``.parquet``: one
  row per rejected line and per ``strace:`` message, columns ``table``
  (``"reject"`` or ``"message"``), ``line``, ``text``, ``reason`` (null for
  messages), streamed as they come; read back only when the metadata counts
  a reject or a message.

``leader``: in a trace without pid prefix (``strace -f`` on stderr), rows made
before the first ``[pid N]`` line have no pid and get that of the process that
was traced first once it is known; rows already written then keep a null pid in
the file and ``leader`` is ``{"pid": N, "up_to_line": L}``: every null pid at a
line ≤ L reads back as N.
"""
from __future__ import annotations

import json
import os
import re
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..arrow_frames import (
    Runs,
    categorical,
    null_text,
    nullable_int,
    numpy_column,
    reorder,
    sorted_runs,
    text_array,
)
from ..errors import InputNotFoundError, ParseError, UsageError
from ..row_groups import CategoryError, Column, frame_from_row_groups
from ..schema import SideTable, attach_rejects
from ..sources import Source, compression_of, compression_of_file
from . import _read
from ._grammar import COLOUR_REASON, KINDS, NA, PID_COLUMN, PID_FIXED, PID_NONE
from ._read import (
    _COMPRESSED_SUFFIX,
    _FF_NAME,
    _PID_MODES,
    _TS_MODES,
    TIME_BASES,
    Readable,
    _blocks,
    _finish,
    _from_native,
    _head,
    _mode,
    _native,
    _sources,
    _with_tail,
    native_available,
    scan_threads,
    set_time_base,
    sniff,
)

if TYPE_CHECKING:
    from tqdm.auto import tqdm as Bar

META_KEY = b"workbench.strace"
FORMAT_VERSION = 1
ROW_GROUP_LINES = 1 << 18  # 262,144 lines: about 230 MiB above the imports while converting, whatever the size

#: the Arrow schema of a converted trace (the frame's columns, in order)
ARROW_SCHEMA = pa.schema([
    ("kind", pa.string()), ("pid", pa.int64()), ("timestamp_s", pa.float64()),
    ("end_timestamp_s", pa.float64()), ("duration_s", pa.float64()), ("syscall", pa.string()),
    ("args", pa.large_string()), ("ret_text", pa.large_string()), ("retval", pa.int64()),
    ("errno", pa.string()), ("signal", pa.string()), ("backtrace", pa.large_string()), ("line", pa.int64()),
])
SIDE_SCHEMA = pa.schema([("table", pa.string()), ("line", pa.int64()), ("text", pa.large_string()),
                         ("reason", pa.string())])
_SIDE_BATCH = 1 << 16
_CATEGORIES = {"syscall": "names", "errno": "errnos", "signal": "signals"}
_DICTIONARY = ["kind", "syscall", "errno", "signal"]


@dataclass(frozen=True)
class ConvertResult:
    """What :func:`to_parquet` wrote: paths, counts, and the most rows the scanner held at once."""

    path: Path
    side_path: Path
    lines: int
    rows: int
    rejects: int
    messages: int
    row_groups: int
    peak_rows_held: int  # rows in the scanner at a drain (given out + kept back), the most over the run
    time_base: str
    pid_mode: str
    seconds: float


def side_path_of(path: str | os.PathLike[str]) -> Path:
    """The side file (rejects and messages) of a converted trace at ``path``."""
    p = Path(path)
    stem = p.name[:-len(".parquet")] if p.name.endswith(".parquet") else p.name
    return p.with_name(stem + ".side.parquet")


def _codes_to_strings(codes: np.ndarray, names: list[str]) -> pa.Array:
    values = pa.array(names, type=pa.string())
    return values.take(pa.array(codes, type=pa.int32(), mask=codes < 0))


def _nullable(values: np.ndarray) -> pa.Array:
    return pa.array(values, type=pa.int64(), mask=values == NA)


def _table(raw: dict[str, Any]) -> pa.Table:
    """The Arrow table of one batch of scanner rows (no pandas on the way)."""
    kinds = pa.array(list(KINDS), type=pa.string())
    arrays = [
        kinds.take(pa.array(raw["kind"], type=pa.int32())),
        _nullable(raw["pid"]),
        pa.array(raw["ts"]),
        pa.array(raw["end"]),
        pa.array(raw["dur"]),
        _codes_to_strings(raw["name"], raw["names"]),
        raw["args"],
        raw["ret_text"],
        _nullable(raw["retval"]),
        _codes_to_strings(raw["errno"], raw["errnos"]),
        _codes_to_strings(raw["signal"], raw["signals"]),
        raw["backtrace"],
        pa.array(raw["line"], type=pa.int64()),
    ]
    return pa.Table.from_arrays(arrays, schema=ARROW_SCHEMA)


def _modes(name: str, head: str, pid_prefix: str | None, timestamps: str | None) -> tuple[int, int, int]:
    """(pid_mode, ts_mode, fixed_pid) exactly as :func:`read_strace` chooses them for one input."""
    pid_mode, ts_mode = sniff(head)
    pid_mode = _mode(pid_prefix, _PID_MODES, "pid_prefix") if pid_prefix is not None else pid_mode
    ts_mode = _mode(timestamps, _TS_MODES, "timestamps") if timestamps is not None else ts_mode
    fixed = NA
    m = _FF_NAME.search(_COMPRESSED_SUFFIX.sub("", name))
    if m is not None and pid_mode == PID_NONE and not re.search(r"^\[pid ", head, re.M):
        pid_mode, fixed = PID_FIXED, int(m.group(1))
    return pid_mode, ts_mode, fixed


def _pieces(obj: Readable, every: int) -> Any:
    """(piece, ends_a_chunk) of the input: pieces of whole lines, a chunk end after every ``every`` lines."""
    since = 0
    for block in _blocks(obj):
        view = memoryview(block)
        nl = np.flatnonzero(np.frombuffer(view, dtype=np.uint8) == 10)
        start, i = 0, 0
        while start < len(view):
            need = every - since
            if i + need - 1 < len(nl):
                end = int(nl[i + need - 1]) + 1
                yield view[start:end], True
                i += need
                since = 0
                start = end
            else:
                yield view[start:], False
                since += len(nl) - i + (0 if view[-1] == 10 else 1)
                start = len(view)


def _ranges(path: Path, every: int) -> Iterator[tuple[int, int | None]]:
    """(start, stop) byte ranges of ``path`` of about ``every`` lines each; the last one's stop is None.

    Each range starts where a line starts that is not a ``-k`` stack frame
    line (frames stay with their record). Lines are counted by the C scanner's
    ``skip_lines`` over a reused buffer: the file is read once more, at the
    speed of the page cache.
    """
    start = pos = since = 0
    for block in _blocks(path):
        view = memoryview(block)
        i = 0
        while i < len(view):
            off, got = _native.skip_lines(view[i:], every - since)
            if since + got < every:
                since += got
                break
            j = i + off
            while j + 3 <= len(view) and view[j:j + 3] == b" > ":
                step, found = _native.skip_lines(view[j:], 1)
                j += step
                if not found:
                    break
            if j < len(view) or j == len(view) and view[j - 1] == 0x0A:
                yield start, pos + j
                start = pos + j
            since = 0
            i = j
        pos += len(view)
    if pos > start:
        yield start, None


def _scan_range(path: Path, start: int, stop: int | None, modes: tuple[int, int, int],
                into: Any = None) -> tuple[Any, bytes | None]:
    """Scan bytes ``start:stop`` of ``path`` (with a new scanner, or ``into``); (scanner, cut last line or None)."""
    parser = into if into is not None else _native.Parser(*modes)
    tail = None
    for b in _blocks(path, start, stop):
        if stop is None and len(b) and b[-1] != 0x0A:  # the input's cut last line is never a record
            k = bytes(b).rfind(b"\n")
            if bytes(b[k + 1:]).strip():
                tail, b = bytes(b[k + 1:]), b[:k + 1]
        if len(b):
            parser.feed(b)
    return parser, tail


class _Prefixed:
    """A stream whose first bytes were already read: gives them back first, then the rest."""

    def __init__(self, first: bytes, rest: Any) -> None:
        self.first, self.rest = first, rest

    def read(self, n: int | None = -1) -> bytes:
        if n is None or n < 0:  # everything
            out, self.first = self.first, b""
            rest = self.rest.read()
            return out + (rest.encode("latin-1", errors="replace") if isinstance(rest, str) else rest)
        if self.first:
            out, self.first = self.first, b""
            return out
        data = self.rest.read(n)
        return data.encode("latin-1", errors="replace") if isinstance(data, str) else data


def _stream_head(stream: Any) -> tuple[str, Readable]:
    """The first ~64 KB of an open stream as text, and a stream of the whole input that is read as it goes.

    A compressed stream is read whole (as :func:`read_strace` does); a plain one
    is never held whole, so a pipe of any size converts in bounded memory.
    """
    first = stream.read(65536)
    if isinstance(first, str):
        first = first.encode("latin-1", errors="replace")
    if compression_of(first) is not None:
        return _head(_Prefixed(first, stream))  # type: ignore[arg-type]  # (read() is all it uses)
    while first and b"\n" not in first:  # at least one whole line to sniff the format from
        more = stream.read(65536)
        if not more:
            break
        first += more.encode("latin-1", errors="replace") if isinstance(more, str) else more
    return first.decode("latin-1"), _Prefixed(first, stream)  # type: ignore[return-value]


class _Side:
    """Rejects and messages, streamed to the side file in batches."""

    def __init__(self, path: Path) -> None:
        self.writer = pq.ParquetWriter(path, SIDE_SCHEMA, compression="zstd")
        self.rows: list[tuple[str, int, str, str | None]] = []
        self.rejects = self.messages = 0

    def add(self, raw: dict[str, Any]) -> None:
        self.rows += [("reject", ln, text, reason) for ln, text, reason in raw["rejects"]]
        self.rows += [("message", ln, text, None) for ln, text in raw["messages"]]
        self.rejects += len(raw["rejects"])
        self.messages += len(raw["messages"])
        if len(self.rows) >= _SIDE_BATCH:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        cols = list(zip(*self.rows, strict=True))
        self.writer.write_table(pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(cols, SIDE_SCHEMA,
                                                                                             strict=True)],
                                                     schema=SIDE_SCHEMA))
        self.rows = []

    def close(self) -> None:
        self.flush()
        self.writer.close()


def to_parquet(
    trace: Source,
    out: str | os.PathLike[str],
    *,
    row_group_lines: int = ROW_GROUP_LINES,
    progress: bool | None = None,
    pid_prefix: str | None = None,
    timestamps: str | None = None,
    threads: int | None = None,
) -> ConvertResult:
    """Convert one strace output file (or text, or stream) to Parquet in bounded memory.

    Writes ``out`` and its side file (see the module's documentation for both
    layouts); reading them back with :func:`read_strace` (or
    :func:`read_converted`) gives exactly the frame and the rejects
    ``read_strace(trace)`` gives. ``row_group_lines``: input lines per chunk
    (and about the rows per row group); the scanner holds at most that many rows
    plus the calls still unfinished. ``progress``: a bar with bytes, lines/s
    and the time left (default: for inputs over 64 MiB). ``pid_prefix`` and
    ``timestamps`` force the format as in :func:`read_strace`. Needs the C
    scanner. Colour escapes raise :class:`ParseError`; nothing is left behind
    on error. Returns a :class:`ConvertResult`.

    ``threads`` (default ``WORKBENCH_THREADS``, else the cores available): for
    a plain file of 32 MiB or more with a pid column, that many threads scan
    the next chunks while this one joins each chunk to the rows before it
    (exactly as one scanner would) and encodes and writes it; at most
    ``threads + 1`` chunks are in flight, so memory stays bounded.
    ``threads=1`` scans in this thread only.
    """
    if not isinstance(row_group_lines, int) or row_group_lines < 1:
        raise UsageError(f"to_parquet(row_group_lines={row_group_lines!r}): expected a positive number of lines")
    if not native_available():
        raise UsageError("to_parquet needs the C strace scanner (pip install -e . with a C compiler; "
                         "WORKBENCH_NO_NATIVE must not be set)")
    sources = _sources(trace)
    if len(sources) != 1:
        raise UsageError(f"to_parquet converts one trace, got {len(sources)} inputs; convert each file of an "
                         "-ff set on its own")
    name, obj = sources[0]
    out_path = Path(out)
    side = side_path_of(out_path)
    if not out_path.parent.is_dir():
        raise InputNotFoundError(f"to_parquet: the folder of {out_path} does not exist")
    head, obj = _stream_head(obj) if not isinstance(obj, str | Path) else _head(obj)
    pid_mode, ts_mode, fixed = _modes(name, head, pid_prefix, timestamps)
    size = obj.stat().st_size if isinstance(obj, Path) else len(obj) if isinstance(obj, str) else 0
    if isinstance(obj, Path) and compression_of_file(obj) is not None:
        size = 0
    bar: Bar | None = None
    if progress if progress is not None else size > (64 << 20):
        from tqdm.auto import tqdm

        bar = tqdm(total=size or None, unit="B", unit_scale=True, desc=f"convert {Path(name).name}")
    tmp, side_tmp = out_path.with_name(out_path.name + ".part"), side.with_name(side.name + ".part")
    t0 = time.perf_counter()
    parser = _native.Parser(pid_mode, ts_mode, fixed)
    # line numbers climb by a line or two a row: delta-packed, they decode in a third of the time of zstd'd plain
    writer = pq.ParquetWriter(tmp, ARROW_SCHEMA, compression="zstd", use_dictionary=_DICTIONARY,
                              column_encoding={"line": "DELTA_BINARY_PACKED"})
    sides = _Side(side_tmp)
    rows = groups = peak = 0
    leader: int | None = None
    up_to_line = 0
    names: dict[str, list[str]] = {}
    summary: list[str] = []
    done = False

    def emit(raw: dict[str, Any]) -> None:
        nonlocal rows, groups, up_to_line
        n = raw["rows"]
        cols = _from_native(raw)  # type: ignore[arg-type]  # (a drain() or finish() dict, copied)
        for k in ("names", "errnos", "signals"):
            names[k] = raw[k]
        summary.extend(text for _, text in raw["summary"])
        sides.add(raw)
        if n:
            if leader is None and pid_mode == PID_NONE:
                unknown = cols["line"][cols["pid"] == NA]
                if len(unknown):
                    up_to_line = max(up_to_line, int(unknown.max()))
            write(_table(cols), n)
            rows += n
            groups += 1

    whole = isinstance(obj, str)  # inline text is complete; a file's cut last line is never a record
    tail: bytes | None = None
    workers = scan_threads(threads)
    parallel = (workers > 1 and isinstance(obj, Path) and compression_of_file(obj) is None
                and pid_mode != PID_NONE and size >= max(_read.PARALLEL_MIN_BYTES, 1))
    # row groups are encoded and written by one more thread (pyarrow lets the GIL go meanwhile), two at most queued
    write_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="strace-write") if parallel else None
    writes: deque[Future[None]] = deque()

    def write(table: pa.Table, n: int) -> None:
        if write_pool is None:
            writer.write_table(table, row_group_size=max(n, 1))
            return
        while len(writes) >= 2:
            writes.popleft().result()
        writes.append(write_pool.submit(writer.write_table, table, row_group_size=max(n, 1)))

    def chunk_done() -> None:
        nonlocal peak, leader
        raw: dict[str, Any] = dict(parser.drain())
        peak = max(peak, raw["rows"] + raw["held"])
        if raw["leader"] is not None and leader is None:
            leader = int(raw["leader"])
        emit(raw)
        if bar is not None:
            secs = time.perf_counter() - t0
            bar.set_postfix_str(f"{raw['lines'] / max(secs, 1e-9) / 1e6:.2f} M lines/s", refresh=False)

    try:
        if parallel:
            assert isinstance(obj, Path)
            tail = _convert_parallel(obj, row_group_lines, (pid_mode, ts_mode, fixed), workers, parser, name,
                                     chunk_done, bar)
        for piece, chunk_end in (() if parallel else _pieces(obj, row_group_lines)):
            if not whole and len(piece) and piece[-1] != 0x0A:  # only the input's last piece lacks its newline
                text = bytes(piece)
                k = text.rfind(b"\n")
                if text[k + 1:].strip():
                    tail, piece = text[k + 1:], memoryview(text)[: k + 1]
            parser.feed(piece)
            if parser.colour is not None:
                raise ParseError(name, parser.colour[0], parser.colour[1], COLOUR_REASON)
            if bar is not None:
                bar.update(len(piece))
            if chunk_end:
                chunk_done()
        raw = _with_tail(dict(parser.finish()), tail)
        peak = max(peak, raw["rows"])
        n_lines = int(raw["lines"])
        emit(raw)
        meta = {
            "version": FORMAT_VERSION, "source": name, "time_base": TIME_BASES[ts_mode],
            "pid_mode": {PID_NONE: "none", PID_COLUMN: "column", PID_FIXED: "file"}[pid_mode],
            "lines": n_lines, "rows": rows, "rejects": sides.rejects, "messages": sides.messages,
            "summary": summary, "categories": names,
            "leader": None if leader is None or up_to_line == 0 else {"pid": leader, "up_to_line": up_to_line},
            "side": side.name,
        }
        while writes:
            writes.popleft().result()
        writer.add_key_value_metadata({META_KEY: json.dumps(meta).encode()})
        writer.close()
        sides.close()
        os.replace(side_tmp, side)
        os.replace(tmp, out_path)
        done = True
    finally:
        if bar is not None:
            bar.close()
        if write_pool is not None:
            write_pool.shutdown(wait=True, cancel_futures=True)
        if not done:
            for closer in (writer.close, sides.writer.close):
                try:
                    closer()
                except Exception:  # noqa: BLE001 - already failing: the first error is the one raised
                    pass
            for p in (tmp, side_tmp):
                p.unlink(missing_ok=True)
    return ConvertResult(path=out_path, side_path=side, lines=n_lines, rows=rows, rejects=sides.rejects,
                         messages=sides.messages, row_groups=groups, peak_rows_held=peak,
                         time_base=str(meta["time_base"]), pid_mode=str(meta["pid_mode"]),
                         seconds=time.perf_counter() - t0)


def _convert_parallel(path: Path, every: int, modes: tuple[int, int, int], workers: int, parser: Any, name: str,
                      chunk_done: Any, bar: Bar | None) -> bytes | None:
    """Scan the chunks of ``path`` in ``workers`` threads, join each to ``parser`` in order, drain after each.

    A chunk that cannot be joined (the one before ends inside a -C table or a
    record cut by a message) is scanned again by ``parser`` itself. Returns
    the input's cut last line, or None.
    """
    ranges = _ranges(path, every)
    flight: deque[tuple[int, int | None, Future[tuple[Any, bytes | None]]]] = deque()
    tail = None
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="strace-convert")
    try:
        def top_up() -> None:
            while len(flight) < workers + 1:
                r = next(ranges, None)
                if r is None:
                    return
                flight.append((r[0], r[1], pool.submit(_scan_range, path, r[0], r[1], modes)))

        top_up()
        while flight:
            start, stop, fut = flight.popleft()
            scanned, cut = fut.result()
            top_up()
            if not parser.merge(scanned):
                del scanned
                _scan_range(path, start, stop, modes, into=parser)
            tail = cut if cut is not None else tail
            if parser.colour is not None:
                raise ParseError(name, parser.colour[0], parser.colour[1], COLOUR_REASON)
            if bar is not None:
                bar.update((stop if stop is not None else path.stat().st_size) - start)
            if flight:
                chunk_done()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return tail


# -- reading back -----------------------------------------------------------------
def is_converted(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a Parquet file (it starts with the magic ``PAR1``)."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            if f.read(4) != b"PAR1":
                return False
    except OSError:
        return False
    return True


def _meta(path: Path) -> dict[str, Any]:
    try:
        kv = pq.read_metadata(path).metadata or {}
    except (OSError, pa.ArrowInvalid) as exc:
        raise ParseError(str(path), None, "", f"damaged Parquet file ({exc}); expected a file written by "
                         "workbench.syscalls.to_parquet") from None
    if META_KEY not in kv:
        raise ParseError(str(path), None, "", "a Parquet file without the workbench.strace metadata key: "
                         "expected a file written by workbench.syscalls.to_parquet (workbench strace convert)")
    meta: dict[str, Any] = json.loads(kv[META_KEY])
    if meta.get("version") != FORMAT_VERSION:
        raise ParseError(str(path), None, "", f"converted trace format {meta.get('version')!r}; this version "
                         f"reads format {FORMAT_VERSION}: convert the trace again")
    return meta


def _categorical(col: pa.ChunkedArray, categories: list[str]) -> pd.Categorical:
    """A string or dictionary column as a Categorical over ``categories`` (mapped per chunk, no Python objects)."""
    try:
        return categorical(col, categories)
    except ValueError:
        raise ParseError("", None, "", "a converted trace names a value its metadata does not list: "
                         "the file is damaged; convert the trace again") from None


def _spec(name: str, meta: dict[str, Any]) -> Column:
    """How the converted column ``name`` becomes :func:`read_strace`'s column."""
    if name == "kind":
        return Column("category", categories=tuple(KINDS))
    if name in _CATEGORIES:
        return Column("category", categories=tuple(sorted(meta["categories"][_CATEGORIES[name]])))
    if name in ("pid", "retval"):
        return Column("int", "Int64")
    if name in ("args", "ret_text", "backtrace"):
        return Column("text")
    return Column("number", str(np.dtype(ARROW_SCHEMA.field(name).type.to_pandas_dtype())))


def _frame(take: Callable[[str], pa.ChunkedArray], names: list[str], meta: dict[str, Any],
           order: np.ndarray | None, spans: Runs | None) -> pd.DataFrame:
    """The frame of columns ``names`` (each got from ``take``, once) with :func:`read_strace`'s dtypes, rows
    made of the runs ``spans``, else in ``order`` (both None: as they are).

    No Python objects on the way: categoricals come from the dictionary
    arrays, text columns keep the Parquet reader's Arrow buffers (``str``
    dtype), and a reorder is made of slices (rows are out of order only
    around the few calls kept back over a chunk boundary). Columns are
    converted one at a time, each let go by ``take`` once given. (Used when
    only some rows are read, or the rows are too far out of order for runs;
    otherwise every row goes through :func:`_every_row`.)
    """
    data: dict[str, Any] = {}
    for name in names:
        col = reorder(take(name), order, spans)  # (slices: no copy)
        spec = _spec(name, meta)
        if spec.kind == "category":
            data[name] = _categorical(col, list(spec.categories))
        elif spec.kind == "int":
            data[name] = nullable_int(col, spec.dtype)
        elif spec.kind == "text":  # (no value at all: shared zeros, as the other ways of loading give)
            data[name] = text_array(null_text(len(col)) if len(col) and col.null_count == len(col) else col)
        else:
            data[name] = numpy_column(col)
        del col
    return pd.DataFrame(data, copy=False)


def _every_row(path: Path, names: list[str], meta: dict[str, Any], threads: int | None) -> pd.DataFrame | None:
    """Every row of columns ``names``, in trace order, each row group decoded straight into the frame's
    columns on every core (:func:`workbench.row_groups.frame_from_row_groups`); None when the rows are
    too far out of order for runs (then a gather is cheaper)."""
    workers = scan_threads(threads)
    line = frame_from_row_groups(path, {"line": Column("number", "int64")}, threads=workers)["line"]
    spans = sorted_runs(line.to_numpy())
    if spans is None:
        return None
    if "line" not in names:
        del line  # (not held while the other columns are decoded)
    specs = {name: _spec(name, meta) for name in names if name != "line"}
    try:
        frame = frame_from_row_groups(path, specs, runs=spans if len(spans) > 1 else None,
                                      threads=workers, dictionary=_DICTIONARY)
    except CategoryError as exc:
        raise ParseError(str(path), None, "", f"a converted trace names a value its metadata does not list "
                         f"({exc}): the file is damaged; convert the trace again") from None
    if "line" in names:  # (decoded once: put in trace order by the same runs)
        lines = line.to_numpy()
        frame.insert(names.index("line"), "line",
                     line if len(spans) <= 1 else np.concatenate([lines[a:b] for a, b in spans]))
    return frame


def _side(path: Path, meta: dict[str, Any]) -> pd.DataFrame:
    """The side table (rejected lines and messages) of a converted trace; not read when the metadata counts
    none (then the side file is not needed either)."""
    if not meta.get("rejects", 1) and not meta.get("messages", 1):
        return SIDE_SCHEMA.empty_table().to_pandas()
    side = path.with_name(str(meta["side"]))
    if not side.is_file():
        raise InputNotFoundError(f"{path}: its side file {side} (rejected lines and messages) is missing; "
                                 "keep both files of a converted trace together")
    return pq.ParquetFile(side).read().to_pandas()  # (not read_table: no pyarrow.dataset import for it)


def _filter_columns(filters: Any) -> set[str] | None:
    """The columns pyarrow filters in list form name (``[(col, op, value), ...]`` or a list of such
    lists); None for another form (an Expression), whose columns cannot be listed."""
    if not isinstance(filters, list):
        return None
    terms = [t for group in filters for t in group] if filters and isinstance(filters[0], list) else filters
    if not all(isinstance(t, tuple) and len(t) == 3 and isinstance(t[0], str) for t in terms):
        return None
    return {t[0] for t in terms}


def _gathered(table: pa.Table, names: list[str], meta: dict[str, Any]) -> pd.DataFrame:
    """The frame of columns ``names`` of a decoded ``table`` (with its ``line`` column), in trace order."""
    box = [table.select(names)]
    lines = table.column("line").to_numpy()
    del table

    def take(name: str) -> pa.ChunkedArray:  # each column let go once converted (numbers and text: no copy)
        col = box[0].column(name)
        box[0] = box[0].drop_columns([name])
        return col

    # rows kept back over a chunk boundary (calls still unfinished) were written later: trace order again
    spans = sorted_runs(lines)
    order = np.argsort(lines, kind="stable") if spans is None else None
    if spans is not None and len(spans) <= 1:
        spans = None  # in order already
    del lines
    return _frame(take, names, meta, order, spans)


def read_converted(
    path: str | os.PathLike[str],
    *,
    columns: list[str] | None = None,
    filters: Any = None,
    strict: bool = False,
    check_summary: bool = True,
    date: str | None = None,
    tz: str | None = None,
    time_base_s: float | None = None,
    threads: int | None = None,
) -> pd.DataFrame:
    """Load a trace written by :func:`to_parquet`: the frame :func:`read_strace` gives, or a part of it.

    ``columns``: the columns to load (default all, :data:`STRACE_SCHEMA`'s
    order). ``filters``: rows to load, pushed down to the Parquet reader so
    row groups that cannot match are skipped: pyarrow's form, a list of
    ``(column, op, value)`` tuples (all must hold) or a list of such lists
    (any), e.g. ``[("syscall", "in", ["futex", "epoll_wait"]), ("pid", "=", 42),
    ("timestamp_s", ">=", t0), ("timestamp_s", "<", t1), ("duration_s", ">=", 0.01)]``.
    Rows keep trace order. The file is memory-mapped; categoricals come
    straight from the Parquet dictionaries and text columns stay in the
    reader's Arrow buffers (``str`` dtype), with no Python objects on the
    way. Without ``filters``, the row groups are decoded ``threads`` at a time
    (default: as :func:`~workbench.syscalls.read_strace`'s scanners, every core)
    straight into the frame's columns, each allocated once. ``attrs`` as for :func:`read_strace` (rejects with
    the original trace's name as source); the trace's own -C table is compared
    with the counts only when every row and column is loaded.
    """
    p = Path(path)
    meta = _meta(p)
    wanted = list(columns) if columns is not None else list(ARROW_SCHEMA.names)
    unknown = [c for c in wanted if c not in ARROW_SCHEMA.names]
    if unknown:
        raise UsageError(f"read_strace(columns=...): no column {', '.join(map(repr, unknown))}; "
                         f"the columns are {', '.join(ARROW_SCHEMA.names)}")
    leader = meta.get("leader")
    read = wanted if "line" in wanted else [*wanted, "line"]
    table: pa.Table | None = None
    try:
        if leader is not None and filters is not None:  # null pids to fill in before a filter on pid applies
            named = _filter_columns(filters)  # (and the columns asked for, with pid and line to fill it)
            need = None if named is None else [c for c in ARROW_SCHEMA.names
                                               if c in named or c in read or c == "pid"]
            table = pq.read_table(p, columns=need, read_dictionary=_DICTIONARY, memory_map=True)
            pid = table.column("pid")
            fill = pc.and_(pc.is_null(pid), pc.less_equal(table.column("line"), leader["up_to_line"]))
            table = table.set_column(table.schema.get_field_index("pid"), "pid",
                                     pc.if_else(fill, pa.scalar(leader["pid"], pa.int64()), pid))
            table = table.filter(pq.filters_to_expression(filters))
        elif filters is not None:
            table = pq.read_table(p, columns=read, filters=filters, memory_map=True,
                                  read_dictionary=[c for c in _DICTIONARY if c in read])
    except (ValueError, TypeError, pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise UsageError(f"read_strace(filters={filters!r}) on {p}: {exc}; expected pyarrow filters such as "
                         "[('syscall', 'in', ['read']), ('duration_s', '>=', 0.01)]") from None
    frame: pd.DataFrame | None = None
    fill = table is None and leader is not None and "pid" in wanted  # (with filters: filled in the table above)
    names = read if fill else wanted  # (to fill pids, their line numbers)
    try:
        if table is None:  # every row: row groups decoded into the frame's columns
            frame = _every_row(p, names, meta, threads)
        if frame is None and table is None:  # (rows far out of order: decoded at once, then gathered)
            table = pq.read_table(p, columns=read, memory_map=True,
                                  read_dictionary=[c for c in _DICTIONARY if c in read])
    except ParseError:
        raise
    except (OSError, ValueError, pa.ArrowException) as exc:  # (a value the frame's dtypes cannot hold too)
        raise ParseError(str(p), None, "", f"damaged Parquet file ({exc}); convert the trace again") from None
    if frame is None:
        assert table is not None
        frame = _gathered(table, names, meta)
        del table
    if fill:  # the leader's rows from before its pid was known
        assert leader is not None
        pid = frame["pid"]
        frame["pid"] = pid.mask(pid.isna() & (frame["line"] <= leader["up_to_line"]), leader["pid"])
        if "line" not in wanted:
            frame = frame.drop(columns="line")
    source = str(meta["source"])
    side = _side(p, meta)
    rej = side[side["table"] == "reject"]
    msg = side[side["table"] == "message"]
    attach_rejects(frame, list(zip([source] * len(rej), rej["line"].astype("int64").tolist(),
                                   rej["text"].tolist(), rej["reason"].tolist(), strict=True)))
    if strict and len(rej):
        first = rej.sort_values("line").iloc[0]
        raise ParseError(source, int(first["line"]), str(first["text"]), str(first["reason"]))
    frame.attrs["messages"] = SideTable(pd.DataFrame(
        {"source": [source] * len(msg), "line": msg["line"].astype("int64").tolist(),
         "text": msg["text"].tolist()}).astype({"source": object, "line": "int64", "text": object}))
    frame.attrs["time_base"] = meta["time_base"]
    frame.attrs["lines"] = int(meta["lines"])
    from .summary import parse_summary_table

    whole = columns is None and filters is None
    frame.attrs["strace_summary"] = SideTable(parse_summary_table(meta["summary"])) if meta["summary"] else None
    frame = _finish(frame, strict, check_summary and whole, str(p))
    return set_time_base(frame, date, tz, time_base_s)
