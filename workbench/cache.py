"""The one content-keyed cache of loaded frames (``read_latency``, ``read_strace``: ``cache=``).

An entry is a single uncompressed Arrow IPC file named ``<key>-<checksum>.arrow``:

- ``key`` is a BLAKE2 hash of the loader's name and its source files (a changed
  parser never reuses an old entry), the reader options and the input bytes —
  the very bytes the parser read (:class:`Key` is fed while parsing), so a
  file changed between the lookup and the parse never leaves a stale entry;
  the input is hashed in 4 MiB leaves on every core, then their digests in
  order;
- ``checksum`` is a CRC-32 of the CRC-32s of the entry's 32 MiB blocks, taken
  as the entry is written and
  checked on every load on all cores (about 0.1 s per 400 MiB), so a flipped
  bit, a truncated write or a foreign file is found, discarded with a
  warning, and the input parsed again;
- the frame's ``attrs`` travel as JSON in the schema metadata (side tables —
  :class:`~workbench.schema.Rejects`, :class:`~workbench.schema.SideTable` — as
  Arrow IPC inside it). Nothing is ever unpickled or executed.

A load memory-maps the entry copy-on-write and builds the frame *over the
map*, without decoding or copying: numeric columns and categorical codes are
numpy views of the file's pages, text is pandas' ``str`` dtype over the
file's Arrow buffers, nullable integers are a view of their values with a
mask made from the validity bits. A hit therefore costs the checksum and a
few milliseconds, and the frame's memory is the page cache's, shared with
every other process that loads the same entry; a column the user changes
gets private copies of the pages it writes (the file never changes). The
price is disk: an entry is as big as the frame (about 150 bytes per strace
event, a little more than the trace's text).

Finding the key means hashing the input, which costs about as much as
parsing it. A loader can therefore remember the key of files it has hashed
(:meth:`Cache.remember`, a small ``<hash>.stat`` file): the next lookup of
files whose device, inode, size, mtime and ctime are all unchanged takes that
key without reading them (:meth:`Cache.recall`). Only files that had not
changed for :data:`SETTLED_NS` before they were read, and did not change
while read, are remembered; any write gives a file a new ctime (which no
program can set back), so an edited file is hashed, and parsed, again.

Writes go to a temporary name and are renamed into place, so a reader never
sees half an entry and two processes filling one entry both leave a whole one.
The directory is ``$WORKBENCH_CACHE_DIR/<loader>``, else ``~/.cache/workbench/<loader>``,
or the folder given as ``cache=``.
"""
from __future__ import annotations

import base64
import hashlib
import json
import mmap
import os
import time
import warnings
import zlib
from collections import deque
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .schema import Rejects, SideTable

__all__ = ["Cache", "FileStats", "Key", "cache_dir", "key_for"]

FORMAT_VERSION = 2
_META_KEY = b"workbench.cache"
_PACKAGE = Path(__file__).resolve().parent
_DIGESTS: dict[tuple[str, ...], bytes] = {}


def cache_dir(loader: str, where: bool | str | os.PathLike[str] | None = True) -> Path:
    """The folder of ``loader``'s entries: ``where`` if a path, else the default for the loader."""
    if where is not True and where is not None and where is not False:
        return Path(where)
    base = os.environ.get("WORKBENCH_CACHE_DIR")
    return (Path(base) if base else Path.home() / ".cache" / "workbench") / loader


def _code_digest(code: tuple[str, ...]) -> bytes:
    """BLAKE2 of the package files (relative to ``workbench/``; folders taken whole) that parse."""
    if code not in _DIGESTS:
        h = hashlib.blake2b(digest_size=16)
        for rel in code:
            p = _PACKAGE / rel
            files = sorted(q for q in p.rglob("*") if q.suffix in (".py", ".c")) if p.is_dir() else [p]
            for q in files:
                if q.exists():
                    h.update(str(q.relative_to(_PACKAGE)).encode() + b"\0" + q.read_bytes())
        _DIGESTS[code] = h.digest()
    return _DIGESTS[code]


class Key:
    """A key being computed: the loader, its code, the options, then input bytes fed as they are read.

    A loader that parses while it reads feeds every block it parses
    (:meth:`feed`) and closes each input with :meth:`end_part`, so the key it
    stores under comes from the very bytes that made the frame: a file that
    changes between the lookup and the parse is stored under the key of what
    was parsed, never under the key of what was looked up. Block boundaries
    do not matter; each part ends with its length, so parts cannot run into
    each other.
    """

    def __init__(self, loader: str, code: Iterable[str], options: dict[str, Any]) -> None:
        h = hashlib.blake2b(digest_size=20)
        h.update(f"{loader}\0v{FORMAT_VERSION}\0leaves{_LEAF}\0".encode())
        h.update(_code_digest(tuple(code)))
        h.update(json.dumps(options, sort_keys=True, default=str).encode())
        self._head = h.digest()
        # in order: each leaf's digest (or its hashing under way) and each part's end
        self._items: list[bytes | Future[bytes]] = []
        self._buf = bytearray()  # (grows to a leaf: a small input never takes a whole one)
        self._fill = 0
        self._n = 0
        self._pool: ThreadPoolExecutor | None = None
        self._spare: list[bytearray] = []
        self._inflight: deque[Future[bytes]] = deque()
        #: False once the loader finds that part of its result came from other bytes (nothing is stored)
        self.valid = True

    def feed(self, data: bytes | memoryview) -> None:
        """Add bytes of the current input (copied: ``data`` may be reused once this returns)."""
        view = memoryview(data).cast("B")
        at = 0
        while at < len(view):
            take = min(len(view) - at, _LEAF - self._fill)
            if len(self._buf) < self._fill + take:
                grown = bytearray(min(_LEAF, max(self._fill + take, 2 * len(self._buf), 1 << 12)))
                grown[:self._fill] = self._buf[:self._fill]
                self._buf = grown
            self._buf[self._fill:self._fill + take] = view[at:at + take]
            self._fill += take
            at += take
            if self._fill == _LEAF:
                self._leaf_done()
        self._n += len(view)

    def _leaf_done(self) -> None:
        """Hash the full leaf on another core (at most a few at once, their buffers then reused)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=_HASH_THREADS, thread_name_prefix="cache-key")
        while len(self._inflight) >= 2 * _HASH_THREADS:  # (bounded: a slow core holds a few leaves, no more)
            self._inflight.popleft().result()
        buf = self._buf
        job = self._pool.submit(_leaf_digest, buf, self._spare, _LEAF)
        self._items.append(job)
        self._inflight.append(job)
        self._buf = self._spare.pop() if self._spare else bytearray(_LEAF)
        self._fill = 0

    def end_part(self) -> None:
        """End the current input (its length closes it)."""
        if self._fill:
            self._items.append(_leaf_digest(self._buf, None, self._fill))
            self._fill = 0
        self._items.append(b"\0part" + self._n.to_bytes(8, "little"))
        self._n = 0

    def hexdigest(self) -> str:
        """The key so far, as hex: the digest of the head, the leaves' digests and the parts' ends."""
        h = hashlib.blake2b(self._head, digest_size=20)
        for item in self._items:
            h.update(item.result() if isinstance(item, Future) else item)
        if self._pool is not None:  # (every leaf so far is hashed)
            self._pool.shutdown(wait=False)
            self._pool = None
            self._inflight.clear()
        return h.hexdigest()


#: the bytes of one leaf of a key: leaves are hashed on every core at once, then their digests in order
_LEAF = 1 << 22
_HASH_THREADS = max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1))


def _leaf_digest(buf: bytearray, spare: list[bytearray] | None, n: int) -> bytes:
    """BLAKE2 of the first ``n`` bytes of ``buf`` (the GIL let go); the buffer is then put in ``spare``."""
    with memoryview(buf) as view:
        digest = hashlib.blake2b(view[:n], digest_size=20).digest()
    if spare is not None:
        spare.append(buf)
    return digest


def key_for(loader: str, code: Iterable[str], options: dict[str, Any], contents: Iterable[bytes]) -> str:
    """Hex key of one load: the loader, its code, the options and the input bytes (one part per item, in order)."""
    k = Key(loader, code, options)
    for data in contents:
        k.feed(data)
        k.end_part()
    return k.hexdigest()

#: a file is taken as unchanged from its stat only when it was last changed this long before it was read
SETTLED_NS = 2_000_000_000


@dataclass(frozen=True)
class FileStats:
    """The stat of some files (device, inode, size, mtime, ctime in ns), and when it was taken."""

    taken_ns: int
    files: tuple[tuple[str, int, int, int, int, int], ...]

    @classmethod
    def of(cls, paths: Iterable[Path]) -> FileStats:
        """Stat ``paths`` now."""
        taken = time.time_ns()
        out = []
        for p in paths:
            st = os.stat(p)
            out.append((str(Path(p).resolve()), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        return cls(taken, tuple(out))

    def settled(self) -> bool:
        """True when every file was last changed :data:`SETTLED_NS` or more before the stat was taken."""
        return all(max(f[4], f[5]) <= self.taken_ns - SETTLED_NS for f in self.files)


#: the checksum's block: CRC-32 of each block (on every core at once), then the CRC-32 of those
_CRC_BLOCK = 1 << 25


def _combine(crcs: list[int]) -> str:
    return f"{zlib.crc32(b''.join(c.to_bytes(4, 'little') for c in crcs)):08x}"


def _checksum(data: mmap.mmap) -> str:
    """The entry's checksum over a map of it: blocks checked in parallel (zlib lets go of the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    view = memoryview(data)
    blocks = [view[i:i + _CRC_BLOCK] for i in range(0, len(view), _CRC_BLOCK)]
    try:
        if len(blocks) < 2:
            return _combine([zlib.crc32(b) for b in blocks])
        with ThreadPoolExecutor(max_workers=min(len(blocks), os.cpu_count() or 1)) as pool:
            return _combine(list(pool.map(zlib.crc32, blocks)))
    finally:
        for b in blocks:
            b.release()
        view.release()


class _ChecksumSink:
    """A file-like sink for pyarrow (``pa.PythonFile``) that writes to ``f`` and takes the checksum
    :func:`_checksum` finds in a map of what went through it, so a new entry is not read back for it."""

    def __init__(self, f: Any) -> None:
        self.f = f
        self.crcs: list[int] = []
        self.crc = self.fill = self.pos = 0
        self.closed = False

    def write(self, data: Any) -> int:
        mv = memoryview(data).cast("B")
        at = 0
        while at < len(mv):
            take = min(len(mv) - at, _CRC_BLOCK - self.fill)
            self.crc = zlib.crc32(mv[at:at + take], self.crc)
            self.fill += take
            at += take
            if self.fill == _CRC_BLOCK:
                self.crcs.append(self.crc)
                self.crc = self.fill = 0
        self.f.write(mv)
        self.pos += len(mv)
        return len(mv)

    def tell(self) -> int:
        return self.pos

    def flush(self) -> None:
        self.f.flush()

    def close(self) -> None:
        self.closed = True

    def writable(self) -> bool:
        return True

    def checksum(self) -> str:
        return _combine(self.crcs + ([self.crc] if self.fill else []))


def _encode_attr(value: Any) -> Any:
    if isinstance(value, SideTable):
        import pyarrow as pa

        table = pa.Table.from_pandas(value.frame(), preserve_index=False)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as w:
            w.write_table(table)
        return {"__side__": type(value).__name__,
                "objects": _object_columns(value.frame()),
                "ipc": base64.b64encode(sink.getvalue().to_pybytes()).decode("ascii")}
    if isinstance(value, pd.DataFrame):
        raise TypeError("a DataFrame in attrs cannot be cached; wrap it in workbench.schema.SideTable")
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: _encode_attr(v) for k, v in value.items()}
        # keys JSON would turn into text (numbers, None): kept as typed pairs
        return {"__pairs__": [[k, _encode_attr(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode_attr(v) for v in value]}
    if isinstance(value, list):
        return [_encode_attr(v) for v in value]
    return value


def _decode_attr(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode_attr(v) for v in value]
    if isinstance(value, dict) and "__tuple__" in value and len(value) == 1:
        return tuple(_decode_attr(v) for v in value["__tuple__"])
    if isinstance(value, dict) and "__pairs__" in value and len(value) == 1:
        return {k: _decode_attr(v) for k, v in value["__pairs__"]}
    if isinstance(value, dict) and "__side__" not in value:
        return {k: _decode_attr(v) for k, v in value.items()}
    if isinstance(value, dict) and "__side__" in value:
        import pyarrow as pa

        with pa.ipc.open_stream(base64.b64decode(value["ipc"])) as r:
            frame = r.read_all().to_pandas()
        _restore_objects(frame, value.get("objects", {}))
        return Rejects(frame) if value["__side__"] == "Rejects" else SideTable(frame)
    return value


def _object_columns(frame: pd.DataFrame) -> dict[str, str]:
    """Object columns and how they spell a missing value ('nan' or 'none')."""
    out = {}
    for c in frame.columns:
        if pd.api.types.is_object_dtype(frame[c]):
            missing = frame[c][frame[c].isna()]
            out[str(c)] = "none" if len(missing) and missing.iloc[0] is None else "nan"
    return out


def _restore_objects(frame: pd.DataFrame, columns: dict[str, str]) -> None:
    """Parquet and Arrow bring object (text) columns back as strings: make them object again."""
    for c, missing in columns.items():
        col = frame[c].astype(object)
        frame[c] = col.where(col.notna(), None if missing == "none" else float("nan"))


_NULLABLE_INTS = ("Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64")


def _plan(frame: pd.DataFrame) -> list[dict[str, Any]] | None:
    """How each column is stored and rebuilt; None when one is of a kind not listed here (the entry then
    holds what ``pyarrow.Table.from_pandas`` makes of the frame, and a load converts it back)."""
    from .arrow_frames import TEXT_DTYPE

    plan: list[dict[str, Any]] = []
    for name in frame.columns:
        if not isinstance(name, str):
            return None
        dtype = frame[name].dtype
        if isinstance(dtype, pd.CategoricalDtype):
            cats = dtype.categories
            if dtype.ordered or not all(isinstance(c, str) for c in cats):
                return None
            plan.append({"name": name, "as": "category", "categories": [str(c) for c in cats],
                         "object": bool(cats.dtype == object)})
        elif dtype == TEXT_DTYPE:
            plan.append({"name": name, "as": "text"})
        elif isinstance(dtype, pd.api.extensions.ExtensionDtype) and dtype.name in _NULLABLE_INTS:
            plan.append({"name": name, "as": "nullable", "dtype": str(dtype)})
        elif isinstance(dtype, np.dtype) and dtype.kind in "fiub":
            plan.append({"name": name, "as": "numpy", "dtype": dtype.str})
        else:
            return None
    return plan


def _arrays(frame: pd.DataFrame, plan: list[dict[str, Any]]) -> list[Any]:
    """One contiguous Arrow array per column of ``frame``, laid out as :func:`_frame_over` reads them:
    categoricals as their integer codes (-1: missing), text as ``large_string``, nullable integers as
    values with validity, numeric columns as they are."""
    import pyarrow as pa

    out: list[Any] = []
    for c in plan:
        col = frame[c["name"]]
        if c["as"] == "category":
            out.append(pa.array(np.ascontiguousarray(col.cat.codes.to_numpy())))
        elif c["as"] in ("text", "nullable"):
            arr = pa.array(col.array)
            if isinstance(arr, pa.ChunkedArray):  # (Arrow-backed text: its chunks joined into one buffer)
                arr = arr.combine_chunks()
            out.append(arr.cast(pa.large_string()) if c["as"] == "text" else arr)
        else:
            out.append(pa.array(np.ascontiguousarray(col.to_numpy())))
    return out


def _frame_over(mm: mmap.mmap, base: int, table: Any, plan: list[dict[str, Any]]) -> pd.DataFrame:
    """The frame of an entry's table whose buffers lie in ``mm`` (``base``: the map's address), built
    over the map: numpy views (writable: the map is copy-on-write), Arrow text kept in place. ValueError
    when the table is not laid out as :func:`_arrays` writes (a damaged or foreign entry)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .arrow_frames import text_array

    if [c["name"] for c in plan] != table.column_names:
        raise ValueError("the entry's columns are not those of its plan")

    def view(arr: Any, dtype: np.dtype) -> np.ndarray:
        buf = arr.buffers()[1]
        off = buf.address - base + arr.offset * dtype.itemsize
        if off < 0 or off + len(arr) * dtype.itemsize > len(mm) or off % dtype.itemsize:
            raise ValueError("an entry's column lies outside its file")
        return np.frombuffer(mm, dtype=dtype, count=len(arr), offset=off)

    data: dict[str, Any] = {}
    for c in plan:
        col = table.column(c["name"])
        if col.num_chunks != 1:
            raise ValueError(f"column {c['name']!r} is not one buffer")
        arr = col.chunk(0)
        how = c["as"]
        if how == "text":
            data[c["name"]] = text_array(col)
            continue
        if (how != "numpy" and not pa.types.is_integer(arr.type)) or (how == "category" and arr.null_count):
            raise ValueError(f"column {c['name']!r} is not stored as its plan says ({arr.type})")
        if how == "category":
            cats = pd.Index(c["categories"], dtype=object) if c["object"] else pd.Index(c["categories"])
            codes = view(arr, np.dtype(arr.type.to_pandas_dtype()))
            data[c["name"]] = pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(cats))
        elif how == "nullable":
            values = view(arr, np.dtype(arr.type.to_pandas_dtype()))
            mask = pc.is_null(arr).to_numpy(zero_copy_only=False) if arr.null_count else \
                np.zeros(len(arr), dtype=bool)
            data[c["name"]] = pd.arrays.IntegerArray(values, mask)
        else:
            dtype = np.dtype(c["dtype"])
            if arr.null_count or dtype.kind == "b":  # (Arrow packs booleans into bits)
                data[c["name"]] = arr.to_numpy(zero_copy_only=False).astype(dtype, copy=False)
            elif np.dtype(arr.type.to_pandas_dtype()) != dtype:
                raise ValueError(f"column {c['name']!r} is stored as {arr.type}, its plan says {dtype}")
            else:
                data[c["name"]] = view(arr, dtype)
    return pd.DataFrame(data, copy=False)


class Cache:
    """Entries of one loader in one folder: :meth:`load` and :meth:`store` by key."""

    def __init__(self, loader: str, where: bool | str | os.PathLike[str] | None = True) -> None:
        self.loader = loader
        self.dir = cache_dir(loader, where)

    def _entries(self, key: str) -> list[Path]:
        if not self.dir.is_dir():
            return []
        return sorted(self.dir.glob(f"{key}-*.arrow"))

    def _memo(self, stats: FileStats, code: Iterable[str], options: dict[str, Any]) -> Path:
        h = hashlib.blake2b(digest_size=20)
        h.update(json.dumps([self.loader, FORMAT_VERSION, _code_digest(tuple(code)).hex(), options,
                             [list(f) for f in stats.files]], sort_keys=True, default=str).encode())
        return self.dir / f"{h.hexdigest()}.stat"

    def recall(self, stats: FileStats, code: Iterable[str], options: dict[str, Any]) -> str | None:
        """The content key remembered for files with exactly these ``stats`` (see :meth:`remember`), or None."""
        try:
            memo = json.loads(self._memo(stats, code, options).read_text())
            key = memo["key"]
            return key if isinstance(key, str) and memo.get("files") == [list(f) for f in stats.files] else None
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def remember(self, stats: FileStats, code: Iterable[str], options: dict[str, Any], key: str) -> None:
        """Remember that the files of ``stats`` (taken before their bytes were read into ``key``) have ``key``.

        Only when nothing changed them while they were read (their stat now is
        ``stats``) and they had settled before (:meth:`FileStats.settled`): a
        file written again afterwards gets a newer ctime, hence another stat,
        and is hashed again. Kept as a small ``<hash>.stat`` file beside the
        entries.
        """
        if not stats.settled() or FileStats.of(Path(f[0]) for f in stats.files).files != stats.files:
            return
        path = self._memo(stats, code, options)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            tmp = self.dir / f".{path.stem}.{os.getpid()}.stat.tmp"
            tmp.write_text(json.dumps({"key": key, "files": [list(f) for f in stats.files]}))
            os.replace(tmp, path)
        except OSError:
            pass

    def load(self, key: str) -> pd.DataFrame | None:
        """The cached frame with its attrs, or None (no entry, or a damaged one: then discarded).

        The entry is memory-mapped copy-on-write, its checksum computed over
        the map, and the frame built over the map's pages (:func:`_frame_over`):
        nothing is decoded or copied, never a Python object per value.
        """
        import pyarrow as pa

        for path in self._entries(key):
            try:
                fd = os.open(path, os.O_RDONLY)
                try:
                    mm = mmap.mmap(fd, 0, access=mmap.ACCESS_COPY)
                finally:
                    os.close(fd)
                if _checksum(mm) != path.stem.rsplit("-", 1)[1]:
                    raise ValueError("checksum does not match the entry's bytes")
                buf = pa.py_buffer(mm)
                reader = pa.ipc.open_file(pa.BufferReader(buf))
                meta = json.loads((reader.schema.metadata or {})[_META_KEY])
                if meta.get("version") != FORMAT_VERSION or meta.get("loader") != self.loader:
                    raise ValueError("entry written by another loader or cache version")
                table = reader.read_all()
                plan = meta.get("columns")
                if plan is not None:
                    frame = _frame_over(mm, buf.address, table, plan)
                else:  # a frame with a column this module does not lay out itself
                    frame = table.to_pandas()
                    _restore_objects(frame, meta["objects"])
                frame.attrs = {k: _decode_attr(v) for k, v in meta["attrs"].items()}
                return frame
            except Exception as exc:  # noqa: BLE001 - any damage means: parse again
                warnings.warn(f"{self.loader} cache entry {path} is damaged ({type(exc).__name__}: {exc}); "
                              "discarded, the input is parsed again", stacklevel=3)
                path.unlink(missing_ok=True)
        return None

    def store(self, key: str, frame: pd.DataFrame) -> Path | None:
        """Write ``frame`` (and its attrs) under ``key``; a frame that cannot be stored is skipped with a warning."""
        import pyarrow as pa

        tmp: Path | None = None
        try:
            attrs = {k: _encode_attr(v) for k, v in frame.attrs.items()}
            plan = _plan(frame)
            meta = {"version": FORMAT_VERSION, "loader": self.loader, "attrs": attrs,
                    "objects": _object_columns(frame), "columns": plan}
            if plan is not None:
                table = pa.Table.from_arrays(_arrays(frame, plan), names=[c["name"] for c in plan])
            else:
                plain = frame.copy(deep=False)
                plain.attrs = {}
                table = pa.Table.from_pandas(plain, preserve_index=False).combine_chunks()
            table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                                   _META_KEY: json.dumps(meta, allow_nan=True).encode()})
            self.dir.mkdir(parents=True, exist_ok=True)
            tmp = self.dir / f".{key}.{os.getpid()}.{id(table):x}.tmp"
            with open(tmp, "wb") as f:
                crc = _ChecksumSink(f)  # (the checksum taken on the way out: the entry is not read back)
                with pa.PythonFile(crc, mode="w") as sink, pa.ipc.new_file(sink, table.schema) as writer:
                    writer.write_table(table)  # one record batch: every column one contiguous buffer
            del table
            path = self.dir / f"{key}-{crc.checksum()}.arrow"
            os.replace(tmp, path)
            return path
        except (OSError, ValueError, TypeError, pa.ArrowException) as exc:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
            warnings.warn(f"{self.loader} cache not written: {exc}", stacklevel=3)
            return None
