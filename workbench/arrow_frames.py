"""Pandas columns straight from Arrow data: no Python objects, text left in its Arrow buffers.

Used where a frame is rebuilt from Arrow (a converted strace trace, a cache
entry) and where a loader's text columns come as Arrow arrays:

- :func:`text_array`: pandas' ``str`` dtype (:data:`TEXT_DTYPE`) over Arrow
  ``large_string`` data, every chunk kept as it is (no copy);
- :func:`categorical`: a Categorical with given (object) categories from a
  string or dictionary column, codes mapped per chunk through the dictionary
  (:func:`dictionary_codes`);
- :func:`nullable_int`: a nullable ``Int64``/``Int32``… array from an Arrow
  integer column (nulls become the mask, :func:`null_mask`; :func:`write_ints`
  writes one chunk into given arrays);
- :func:`sorted_runs` and :func:`reorder`: the sorted order of nearly sorted
  keys as runs of consecutive source rows, so a column is reordered by
  zero-copy slices (before it is converted) instead of a gather over every row.
"""
from __future__ import annotations

import heapq
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["TEXT_DTYPE", "categorical", "code_dtype", "dictionary_codes", "null_mask", "null_text",
           "nullable_int", "numpy_column", "reorder", "sorted_runs", "text_array", "write_ints"]


def _text_dtype() -> Any:
    try:
        return pd.StringDtype("pyarrow", na_value=np.nan)
    except TypeError:  # pragma: no cover - pandas < 2.3 spells it "pyarrow_numpy"
        return pd.StringDtype("pyarrow_numpy")


#: the dtype of text columns: pandas' ``str`` (Arrow ``large_string`` storage, NaN as the missing value)
TEXT_DTYPE = _text_dtype()

Runs = list[tuple[int, int]]


def sorted_runs(keys: np.ndarray, max_runs: int = 4096) -> Runs | None:
    """The rows in the stable sorted order of ``keys`` as ``[(start, stop), ...]`` runs of consecutive source
    rows; None when that takes more than ``max_runs`` runs (a gather is then cheaper than many slices).

    Keys nearly in order (a converted trace: rows are out of line order only
    around the few calls held back over a chunk boundary) cost one pass to
    find their increasing stretches, which are then merged as sorted lists
    are, a run at a time: no sort, no permutation, nothing row-sized but one
    mask.
    """
    n = len(keys)
    if n == 0:
        return []
    cuts = (np.flatnonzero(keys[1:] < keys[:-1]) + 1).tolist()
    if len(cuts) + 1 > max_runs:
        return None
    starts, stops = [0, *cuts], [*cuts, n]
    pos = list(starts)
    heap = [(keys[a].item(), i) for i, a in enumerate(starts)]
    heapq.heapify(heap)
    out: Runs = []
    while heap:
        _, j = heapq.heappop(heap)
        a, e = pos[j], stops[j]
        if heap:  # go on while this stretch comes first: up to the next stretch's key (ties: the earlier rows)
            bound, other = heap[0]
            m = a + int(np.searchsorted(keys[a:e], bound, side="right" if j < other else "left"))
        else:
            m = e
        if out and out[-1][1] == a:
            out[-1] = (out[-1][0], m)
        else:
            out.append((a, m))
            if len(out) > max_runs:
                return None
        pos[j] = m
        if m < e:
            heapq.heappush(heap, (keys[m].item(), j))
    return out


def reorder(col: pa.ChunkedArray, order: np.ndarray | None, spans: Runs | None) -> pa.ChunkedArray:
    """``col`` made of the row runs ``spans`` (zero-copy slices), else gathered in ``order``, else as it is."""
    if spans is not None:
        chunks = [c for a, b in spans for c in col.slice(a, b - a).chunks]
        return pa.chunked_array(chunks, type=col.type)
    if order is not None:
        return col.take(pa.array(order))
    return col


def text_array(arr: pa.Array | pa.ChunkedArray) -> pd.api.extensions.ExtensionArray:
    """A :data:`TEXT_DTYPE` array over Arrow text (``large_string`` kept as is; other text types cast)."""
    if isinstance(arr, pa.Array):
        arr = pa.chunked_array([arr], type=arr.type)
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if arr.type != pa.large_string():
        arr = arr.cast(pa.large_string())
    cls: Any = TEXT_DTYPE.construct_array_type()
    try:
        return cls(arr, dtype=TEXT_DTYPE)
    except TypeError:  # pragma: no cover - pandas < 2.3: the array class implies the dtype
        return cls(arr)


def null_text(n: int, zeros: np.ndarray | None = None) -> pa.Array:
    """``n`` null ``large_string`` values over zeros no one writes (``np.zeros``: the kernel's zero page
    until read, where decoding or a builder writes 8 fresh bytes a row); ``zeros``: int64 zeros to share,
    at least ``n + 1``."""
    if zeros is None:
        zeros = np.zeros(n + 1, dtype=np.int64)
    return pa.Array.from_buffers(pa.large_string(), n, [pa.py_buffer(zeros[:(n + 63) // 64]),
                                                        pa.py_buffer(zeros[:n + 1]), pa.py_buffer(b"")],
                                 null_count=n)


def categorical(col: pa.ChunkedArray, categories: list[str]) -> pd.Categorical:
    """A Categorical over ``categories`` (object Index, in the given order) from a string or dictionary
    column; ValueError when the column holds a value that is not a category."""
    cats = pd.Index(categories, dtype=object)
    if not col.num_chunks:
        return pd.Categorical.from_codes(np.empty(0, dtype=np.int32), categories=cats)
    if not pa.types.is_dictionary(col.type):
        col = col.dictionary_encode()
    col = col.unify_dictionaries()  # one dictionary for every chunk: one mapping, one pass over the codes
    dictionary = col.chunk(0).dictionary
    # codes in pandas' own (smallest) code dtype, mapped by Arrow: no int64 copy of the indices on the way
    remap = dictionary_codes(dictionary, cats)
    idx = pa.chunked_array([c.indices for c in col.chunks], type=col.type.index_type)
    if idx.null_count:
        idx = idx.fill_null(len(dictionary))  # the slot after the dictionary holds -1 (missing)
    codes = _numpy(pc.take(pa.array(remap), idx))
    return pd.Categorical.from_codes(codes, categories=cats)


def dictionary_codes(dictionary: pa.Array, categories: pd.Index) -> np.ndarray:
    """The code of each entry of an Arrow dictionary among ``categories``, in pandas' code dtype, and -1
    in one more slot (for null indices); ValueError when an entry is not a category (a null entry: -1)."""
    values = dictionary.to_pylist()
    where = categories.get_indexer(pd.Index(values, dtype=object))
    bad = [v for v, w in zip(values, where, strict=True) if w < 0 and v is not None]
    if bad:
        raise ValueError(f"values outside the categories: {sorted(map(str, bad))[:5]}")
    return np.append(where, -1).astype(code_dtype(len(categories)))


def null_mask(arr: pa.Array) -> np.ndarray | None:
    """True where an Arrow array is null, unpacked from its validity bitmap; None when none is."""
    valid = arr.buffers()[0]
    if valid is None or not arr.null_count:
        return None
    m, off = len(arr), arr.offset
    return np.unpackbits(np.frombuffer(valid, dtype=np.uint8), count=off + m, bitorder="little")[off:] == 0


def code_dtype(n: int) -> np.dtype[Any]:
    """The dtype pandas keeps the codes of ``n`` categories in (int8 up to 127 categories, then int16…)."""
    for dt in (np.int8, np.int16, np.int32):
        if n < np.iinfo(dt).max:
            return np.dtype(dt)
    return np.dtype(np.int64)


def nullable_int(col: pa.ChunkedArray, dtype: str = "Int64") -> pd.api.extensions.ExtensionArray:
    """A pandas nullable integer array (``dtype``) from an Arrow integer column: nulls become the mask.

    Values and mask are written once, chunk by chunk, from the Arrow buffers (the validity bitmap
    unpacked into the mask): no filled copy of the column and no boolean Arrow array on the way. A
    value under the mask is whatever the buffer holds (pandas never shows it).
    """
    np_dtype = np.dtype(dtype.lower())  # Int64 -> int64, UInt8 -> uint8
    if not col.null_count:
        values = _numpy(col).astype(np_dtype, copy=False)
        return pd.arrays.IntegerArray(values, np.zeros(len(values), dtype=bool))
    n = len(col)
    values = np.empty(n, dtype=np_dtype)
    mask = np.empty(n, dtype=bool)
    at = 0
    for chunk in col.chunks:
        m = len(chunk)
        write_ints(chunk, values[at:at + m], mask[at:at + m])
        at += m
    return pd.arrays.IntegerArray(values, mask)


def write_ints(chunk: pa.Array, values: np.ndarray, mask: np.ndarray) -> None:
    """An Arrow integer array's values and nulls written into ``values`` and ``mask`` (True = null), of its
    length, straight from its buffers (the validity bitmap unpacked); a null's value is whatever was there."""
    m = len(chunk)
    if not m:
        return
    off = chunk.offset
    values[:] = np.frombuffer(chunk.buffers()[1], dtype=chunk.type.to_pandas_dtype(), count=off + m)[off:]
    nulls = null_mask(chunk)
    mask[:] = False if nulls is None else nulls


def numpy_column(col: pa.ChunkedArray) -> np.ndarray:
    """A plain numpy column (floats keep NaN; no nulls expected)."""
    return _numpy(col)


def _numpy(col: pa.ChunkedArray) -> np.ndarray:
    """One writable numpy array of a column without nulls: the chunks' views joined in one copy.

    Writable because pandas writes into a frame's arrays in place
    (``frame.loc[...] = ...``) and fails on a read-only view of Arrow memory;
    one copy because ``ChunkedArray.to_numpy`` joins the chunks in Arrow and
    hands out a read-only view of that.
    """
    if col.num_chunks == 0:
        return np.empty(0, dtype=col.type.to_pandas_dtype())
    if col.num_chunks == 1:
        one = col.chunk(0).to_numpy(zero_copy_only=False)
        return one if one.flags.writeable else one.copy()  # (a view of Arrow memory is read-only)
    return np.concatenate([c.to_numpy(zero_copy_only=False) for c in col.chunks])
