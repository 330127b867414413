"""A pandas frame written in place from a Parquet file's row groups, on every core.

Reading a whole Parquet table and converting it to pandas touches every
number twice in fresh memory: Arrow decodes each row group into its own
buffers, then the chunks are joined into one numpy array per column. Fresh
memory is what a load pays most for (on a virtual machine, most of its time is
the kernel handing out pages), so :func:`frame_from_row_groups` allocates each
column of the frame once, at its final size, and decodes the row groups one at
a time per thread, writing each straight to its place in the frame. Arrow's
buffers for a row group are let go as soon as it is written, so the decoder
keeps reusing the same few megabytes. Text stays in the decoder's Arrow
buffers, which become the frame's (no copy).

Arrow decodes into pyarrow's jemalloc pool where pyarrow has one (not the
process's default pool, which is left as it is), unless
``ARROW_DEFAULT_MEMORY_POOL`` names one: the default, mimalloc, hands the
pages a row group's temporaries leave behind back to the kernel within
milliseconds and takes fresh (huge) pages for the next row group, so a load
paid its page faults again and again; jemalloc keeps them for reuse.

Rows can be put in another order on the way, given as runs of consecutive
file rows (:func:`workbench.arrow_frames.sorted_runs`): each piece of a row
group is written where its run lands.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow._parquet import ParquetReader  # (ParquetFile takes no memory pool; its reader does)

from .arrow_frames import (
    Runs,
    code_dtype,
    dictionary_codes,
    null_mask,
    null_text,
    text_array,
    write_ints,
)

__all__ = ["CategoryError", "Column", "decode_pool", "frame_from_row_groups"]


class CategoryError(ValueError):
    """A column holds a value that is not one of its categories."""


@dataclass(frozen=True)
class Column:
    """How one Parquet column becomes a frame column.

    ``kind``: ``"category"`` (a string or dictionary column → Categorical over
    ``categories``, in that order; a value outside them is a ValueError),
    ``"int"`` (an integer column → pandas nullable ``dtype`` such as
    ``"Int64"``, nulls as the mask), ``"text"`` (→ :data:`~workbench.arrow_frames.TEXT_DTYPE`
    over the Arrow buffers) or ``"number"`` (→ numpy ``dtype``; floats keep
    NaN for nulls, other types may hold none).
    """

    kind: Literal["category", "int", "text", "number"]
    dtype: str = "float64"
    categories: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Piece:
    src: int  # first row within the row group
    stop: int  # row after the last, within the row group
    dst: int  # row of the frame where it goes


def _pieces(starts: list[int], runs: Runs | None) -> list[list[_Piece]]:
    """For each row group (rows ``starts[i]``..``starts[i+1]`` of the file), where its rows go."""
    groups = len(starts) - 1
    if runs is None:
        return [[_Piece(0, starts[i + 1] - starts[i], starts[i])] for i in range(groups)]
    placed: list[tuple[int, int, int]] = []  # (file start, file stop, frame row) in file order
    at = 0
    for a, b in runs:
        placed.append((a, b, at))
        at += b - a
    placed.sort()
    out: list[list[_Piece]] = [[] for _ in range(groups)]
    g = 0
    for a, b, dst in placed:
        while a < b:
            while starts[g + 1] <= a:
                g += 1
            end = min(b, starts[g + 1])
            out[g].append(_Piece(a - starts[g], end - starts[g], dst))
            dst += end - a
            a = end
    return out


class _Target:
    """One frame column being written: its arrays (or text chunks) and how a piece of a chunk goes in."""

    def __init__(self, name: str, spec: Column, n: int) -> None:
        self.name, self.spec = name, spec
        self.text: list[tuple[int, pa.Array]] = []  # (appended from any thread: sorted at the end)
        if spec.kind == "category":
            self.cats = pd.Index(list(spec.categories), dtype=object)
            self.codes = np.empty(n, dtype=code_dtype(len(self.cats)))
        elif spec.kind == "int":
            self.values = np.empty(n, dtype=np.dtype(spec.dtype.lower()))
            self.mask = np.empty(n, dtype=bool)
        elif spec.kind == "number":
            self.values = np.empty(n, dtype=np.dtype(spec.dtype))

    def write(self, chunk: pa.Array, parts: list[tuple[int, int, int]]) -> None:
        """Rows ``[a, b)`` of ``chunk`` written at frame row ``dst``, for each ``(a, b, dst)`` of ``parts``."""
        kind = self.spec.kind
        if kind == "text":
            self.text.extend([(dst, chunk.slice(a, b - a)) for a, b, dst in parts])
        elif kind == "int":
            for a, b, dst in parts:
                write_ints(chunk.slice(a, b - a), self.values[dst:dst + b - a], self.mask[dst:dst + b - a])
        elif kind == "number":
            if chunk.null_count and not pa.types.is_floating(chunk.type):
                raise ValueError(f"{self.name}: {chunk.null_count} nulls in a column that may hold none")
            values = chunk.to_numpy(zero_copy_only=False)
            for a, b, dst in parts:
                self.values[dst:dst + b - a] = values[a:b]
        else:
            if not pa.types.is_dictionary(chunk.type):
                chunk = chunk.dictionary_encode()
            idx, m = chunk.indices, len(chunk)
            raw = np.frombuffer(idx.buffers()[1], dtype=idx.type.to_pandas_dtype(), count=idx.offset + m)[idx.offset:]
            try:
                lut = dictionary_codes(chunk.dictionary, self.cats)
            except ValueError as exc:
                raise CategoryError(f"{self.name}: {exc}") from None
            nulls = null_mask(idx)
            for a, b, dst in parts:
                out = self.codes[dst:dst + b - a]
                np.take(lut, raw[a:b], out=out, mode="clip")  # (a null's slot may hold anything: -1 next)
                if nulls is not None:
                    out[nulls[a:b]] = -1

    def array(self) -> Any:
        kind = self.spec.kind
        if kind == "text":
            self.text.sort(key=lambda t: t[0])
            return text_array(pa.chunked_array([c for _, c in self.text], type=pa.large_string())
                              if self.text else pa.chunked_array([], type=pa.large_string()))
        if kind == "int":
            return pd.arrays.IntegerArray(self.values, self.mask)
        if kind == "number":
            return self.values
        return pd.Categorical.from_codes(self.codes, categories=self.cats)


def decode_pool() -> pa.MemoryPool:
    """The pool a load decodes into: jemalloc where pyarrow has it, else the default; the default
    whenever ``ARROW_DEFAULT_MEMORY_POOL`` chooses one."""
    if not os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        try:
            return pa.jemalloc_memory_pool()
        except NotImplementedError:  # (a pyarrow built without jemalloc)
            pass
    return pa.default_memory_pool()


def _all_null(stats: Any, rows: int) -> bool:
    """Whether a column chunk's statistics say each of its ``rows`` values is null."""
    return stats is not None and stats.has_null_count and stats.null_count == rows


def frame_from_row_groups(path: str | Path, columns: dict[str, Column], *, runs: Runs | None = None,
                          threads: int = 1, dictionary: list[str] | None = None) -> pd.DataFrame:
    """The frame of ``columns`` (name → :class:`Column`, in frame order) of the Parquet file ``path``.

    ``runs``: the frame's rows as ``[(start, stop), ...]`` runs of file rows
    (every row exactly once); None keeps file order. ``threads``: row groups
    decoded at once (each thread opens the file for itself).
    ``dictionary``: columns to decode as dictionaries (for categories: no
    string per row on the way). Each column is allocated once at its final
    size; Arrow holds one row group per thread at a time. Raises
    :class:`CategoryError` for a value outside its categories, ValueError for
    another value the spec cannot hold, and pyarrow's errors for a damaged file.
    """
    names = list(columns)
    meta = pq.ParquetFile(path, memory_map=True).metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    starts = [0, *np.cumsum(sizes, dtype=np.int64).tolist()]
    n = starts[-1]
    if runs is not None and sum(b - a for a, b in runs) != n:
        raise ValueError(f"runs cover {sum(b - a for a, b in runs)} rows of {n}")
    pieces = _pieces(starts, runs)
    targets = [_Target(name, columns[name], n) for name in names]
    read_dict = [c for c in (dictionary or []) if c in columns]
    local = threading.local()
    memory = decode_pool()
    # text a row group's statistics say is all null is not decoded: its rows point at shared zeros that no
    # one writes (the kernel's zero page until read), not at 8 fresh bytes a row (a trace without -k: backtrace)
    leaf = {name: i for i, name in enumerate(meta.schema.names)}
    all_null = [{name for name in names if columns[name].kind == "text" and name in leaf
                  and _all_null(meta.row_group(g).column(leaf[name]).statistics, sizes[g])}
                 for g in range(len(sizes))]
    zeros = np.zeros(max(sizes, default=0) + 1, dtype=np.int64) if any(all_null) else None

    def one(group: int) -> None:
        f = getattr(local, "file", None)
        if f is None:
            f = local.file = ParquetReader(memory_pool=memory)
            f.open(str(path), use_memory_map=True, read_dictionary=read_dict, metadata=meta, pre_buffer=False)
        if not names:
            return
        skip = all_null[group]
        table = f.read_row_group(group, column_indices=[f.column_name_idx(c) for c in names if c not in skip],
                                 use_threads=False)
        for target in targets:
            if target.name in skip:
                target.write(null_text(sizes[group], zeros), [(p.src, p.stop, p.dst) for p in pieces[group]])
                continue
            at = 0
            for chunk in table.column(target.name).chunks:  # (pieces cut to each chunk's rows)
                end = at + len(chunk)
                parts = [(max(p.src, at) - at, min(p.stop, end) - at, p.dst + max(p.src, at) - p.src)
                         for p in pieces[group] if p.src < end and p.stop > at]
                if parts:
                    target.write(chunk, parts)
                at = end
        del table

    groups = [g for g in range(len(sizes)) if sizes[g]]
    workers = max(1, min(threads, len(groups)))
    if workers == 1:
        for g in groups:
            one(g)
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="row-groups") as pool:
            for done in [pool.submit(one, g) for g in groups]:
                done.result()
    return pd.DataFrame({t.name: t.array() for t in targets}, copy=False)
