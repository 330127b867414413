"""Pandas columns straight from Arrow data: no Python objects, text left in its Arrow buffers.

Used where a frame is rebuilt from Arrow (a converted strace trace, a cache
entry) and where a loader's text columns come as Arrow arrays:

- :func:`text_array`: pandas' ``str`` dtype (:data:`TEXT_DTYPE`) over Arrow
  ``large_string`` data, every chunk kept as it is (no copy);
- :func:`categorical`: a Categorical with given (object) categories from a
  string or dictionary column, codes mapped per chunk through the dictionary;
- :func:`nullable_int`: a nullable ``Int64``/``Int32``… array from an Arrow
  integer column (nulls become the mask);
- :func:`runs` and :func:`reorder`: a permutation as runs of consecutive
  source rows, so a column is reordered by zero-copy slices (before it is
  converted) instead of a gather over every row.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["TEXT_DTYPE", "categorical", "nullable_int", "numpy_column", "reorder", "runs", "text_array"]


def _text_dtype() -> Any:
    try:
        return pd.StringDtype("pyarrow", na_value=np.nan)
    except TypeError:  # pragma: no cover - pandas < 2.3 spells it "pyarrow_numpy"
        return pd.StringDtype("pyarrow_numpy")


#: the dtype of text columns: pandas' ``str`` (Arrow ``large_string`` storage, NaN as the missing value)
TEXT_DTYPE = _text_dtype()

Runs = list[tuple[int, int]]


def runs(order: np.ndarray, max_runs: int = 4096) -> Runs | None:
    """``order`` (a permutation of source rows) as ``[(start, stop), ...]`` runs; None when it has more
    than ``max_runs`` of them (a gather is then cheaper than many slices)."""
    if len(order) == 0:
        return []
    breaks = np.flatnonzero(np.diff(order) != 1) + 1
    if len(breaks) + 1 > max_runs:
        return None
    starts = np.concatenate([[0], breaks])
    stops = np.concatenate([breaks, [len(order)]])
    return [(int(order[a]), int(order[a]) + int(b - a)) for a, b in zip(starts, stops, strict=True)]


def reorder(col: pa.ChunkedArray, order: np.ndarray | None, spans: Runs | None) -> pa.ChunkedArray:
    """``col`` in ``order``: zero-copy slices when ``spans`` (its runs) is given, else one gather."""
    if order is None:
        return col
    if spans is not None:
        chunks = [c for a, b in spans for c in col.slice(a, b - a).chunks]
        return pa.chunked_array(chunks, type=col.type)
    return col.take(pa.array(order))


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


def categorical(col: pa.ChunkedArray, categories: list[str]) -> pd.Categorical:
    """A Categorical over ``categories`` (object Index, in the given order) from a string or dictionary
    column; ValueError when the column holds a value that is not a category."""
    cats = pd.Index(categories, dtype=object)
    if not col.num_chunks:
        return pd.Categorical.from_codes(np.empty(0, dtype=np.int32), categories=cats)
    if not pa.types.is_dictionary(col.type):
        col = col.dictionary_encode()
    col = col.unify_dictionaries()  # one dictionary for every chunk: one mapping, one pass over the codes
    values = col.chunk(0).dictionary.to_pylist()
    where = cats.get_indexer(pd.Index(values, dtype=object))
    bad = [v for v, w in zip(values, where, strict=True) if w < 0 and v is not None]  # a null value: missing
    if bad:
        raise ValueError(f"values outside the categories: {sorted(map(str, bad))[:5]}")
    remap = np.append(where, -1).astype(np.int32)
    idx = pa.chunked_array([c.indices for c in col.chunks], type=col.type.index_type)
    if idx.null_count:
        idx = idx.fill_null(-1)
    codes = remap[idx.to_numpy().astype(np.int64, copy=False)]
    return pd.Categorical.from_codes(codes, categories=cats)


def nullable_int(col: pa.ChunkedArray, dtype: str = "Int64") -> pd.api.extensions.ExtensionArray:
    """A pandas nullable integer array (``dtype``) from an Arrow integer column: nulls become the mask."""
    np_dtype = np.dtype(dtype.lower())  # Int64 -> int64, UInt8 -> uint8
    if col.null_count:
        mask = pc.is_null(col).to_numpy()
        values = col.fill_null(0).to_numpy().astype(np_dtype, copy=False)
    else:
        values = col.to_numpy().astype(np_dtype, copy=False)
        mask = np.zeros(len(values), dtype=bool)
    return pd.arrays.IntegerArray(values, mask)


def numpy_column(col: pa.ChunkedArray) -> np.ndarray:
    """A plain numpy column (floats keep NaN; no nulls expected)."""
    return col.to_numpy()
