"""Lean strace frames: text on Arrow buffers, categoricals from dictionaries, reorders made of slices."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.arrow_frames import (
    TEXT_DTYPE,
    categorical,
    null_text,
    nullable_int,
    reorder,
    sorted_runs,
    text_array,
)
from workbench.syscalls import native_available, read_strace, to_parquet

DATA = Path(__file__).resolve().parent / "data" / "strace"
TEXT = ("args", "ret_text", "backtrace")


@pytest.mark.parametrize("name", ["threads_futex.txt", "stack_k.txt", "signals_restart.txt", "tricky.txt"])
def test_both_scanners_give_text_as_arrow_strings_and_equal_frames(name: str) -> None:
    if not native_available():
        pytest.skip("the C scanner is not built")
    ref = read_strace(DATA / name, native=False, check_summary=False)
    nat = read_strace(DATA / name, native=True, check_summary=False)
    pd.testing.assert_frame_equal(ref, nat, check_exact=True)  # dtypes included
    for f in (ref, nat):
        for c in TEXT:
            assert f[c].dtype == TEXT_DTYPE
            assert f[c].array._pa_array.type == pa.large_string()  # Arrow storage, no object column
        for c in ("kind", "syscall", "errno", "signal"):
            assert isinstance(f[c].dtype, pd.CategoricalDtype) and f[c].cat.categories.dtype == object
    # what analyses do with these columns works on the Arrow storage
    calls = nat[nat["kind"] == "call"]
    assert calls["ret_text"].isin(["0"]).sum() == (calls["ret_text"] == "0").sum() > 0
    assert nat["args"].str.startswith("").sum() == nat["args"].notna().sum()
    if name == "stack_k.txt":
        assert nat["backtrace"].notna().any() and nat["backtrace"].str.contains("libc.so").any()
    else:
        assert nat["backtrace"].isna().all()


def test_all_null_text_lets_the_scanner_buffers_go() -> None:
    """A text column with no value (backtrace without -k) does not keep the scanner's 8 bytes a row: the
    frame's column is shared zeros, with the same values."""
    import weakref

    from workbench.syscalls._read import _strings

    n = 1000
    offsets = np.zeros(n + 1, dtype=np.int64)  # (what a scanner writes for n nulls)
    bits = np.zeros((n + 7) // 8, dtype=np.uint8)
    gone = weakref.ref(offsets)
    arr = pa.Array.from_buffers(pa.large_string(), n, [pa.py_buffer(bits), pa.py_buffer(offsets), pa.py_buffer(b"")])
    del offsets
    col = _strings(arr)
    del arr
    assert gone() is None
    assert len(col) == n and col.isna().all() and col.dtype == TEXT_DTYPE
    pd.testing.assert_series_equal(pd.Series(col).str.len(), pd.Series([None] * n, dtype=TEXT_DTYPE).str.len())
    kept = pa.array(["x", None], type=pa.large_string())  # (one value: kept as it is)
    assert list(_strings(kept).isna()) == [False, True] and _strings(kept)[0] == "x"
    shared = np.zeros(11, dtype=np.int64)
    assert null_text(10, shared).to_pylist() == [None] * 10 and null_text(0).to_pylist() == []


def test_loaded_back_frame_has_the_parse_dtypes_from_row_groups_out_of_order(tmp_path: Path) -> None:
    """Unfinished calls held over chunk boundaries come back in line order; columns keep their dtypes."""
    if not native_available():
        pytest.skip("the C scanner is not built")
    trace = DATA / "threads_futex.txt"
    r = to_parquet(trace, tmp_path / "t.parquet", row_group_lines=7, progress=False)
    assert r.row_groups > 3
    import pyarrow.parquet as pq

    lines = pq.read_table(r.path, columns=["line"]).column("line").to_numpy()
    assert (np.diff(lines) < 0).any()  # the file really is out of line order
    want = read_strace(trace)
    got = read_strace(r.path)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got["args"].array._pa_array.num_chunks > 1  # slices of the decoded buffers, not a copy


@settings(max_examples=60)
@given(st.lists(st.integers(0, 40), min_size=0, max_size=60), st.integers(1, 6))
def test_a_reorder_by_runs_equals_a_gather(moves: list[int], max_runs: int) -> None:
    n = 50
    order = list(range(n))
    for m in moves:  # move a row later, as the converter writes a held-back row
        if m < len(order) - 1:
            order.append(order.pop(m))
    perm = np.asarray(order, dtype=np.int64)
    keys = np.argsort(perm) * 3 + 1000  # the line of each stored row: sorting the rows by it gives perm
    spans = sorted_runs(keys, max_runs=max_runs)
    col = pa.chunked_array([pa.array([f"r{i}" if i % 7 else None for i in range(k, k + 10)],
                                     type=pa.large_string()) for k in range(0, n, 10)])
    got = reorder(col, perm, spans)
    assert got.to_pylist() == col.take(pa.array(perm)).to_pylist()
    if spans is not None:
        assert sum(b - a for a, b in spans) == n and len(spans) <= max_runs
        breaks = int(np.count_nonzero(np.diff(perm) != 1))
        assert len(spans) == breaks + 1  # maximal runs: no two that could be one
    else:
        assert np.count_nonzero(np.diff(perm) != 1) + 1 > max_runs
    ints = pa.chunked_array([pa.array([None if i % 5 == 0 else i for i in range(n)], type=pa.int64())])
    back = nullable_int(reorder(ints, perm, spans), "Int64")
    assert back.tolist() == [pd.NA if i % 5 == 0 else i for i in order]
    cats = pa.chunked_array([pa.array(["b", None, "a"] * 16 + ["a", "b"]).dictionary_encode()])
    c = categorical(reorder(cats, perm, spans), ["a", "b"])
    assert [None if pd.isna(v) else v for v in c] == [cats.to_pylist()[i] for i in order]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=0, max_size=80), st.integers(1, 40))
def test_sorted_runs_are_the_stable_sort_of_any_keys(values: list[int], max_runs: int) -> None:
    """Ties included (earlier rows first, as a stable sort puts them); None only past ``max_runs`` runs."""
    keys = np.asarray(values, dtype=np.int64)
    want = np.argsort(keys, kind="stable")
    breaks = int(np.count_nonzero(np.diff(want) != 1)) if len(keys) else -1
    spans = sorted_runs(keys, max_runs=max_runs)
    if spans is None:
        assert breaks + 1 > max_runs
        return
    got = [i for a, b in spans for i in range(a, b)]
    assert got == want.tolist()
    assert len(spans) == breaks + 1 and all(b > a for a, b in spans)


def test_code_dtype_is_the_dtype_pandas_keeps_the_codes_in() -> None:
    """So a Categorical made from codes of that dtype keeps them (no recast, no copy)."""
    from workbench.arrow_frames import code_dtype

    for n in (1, 126, 127, 128, 32_766, 32_767, 32_768):
        codes = np.zeros(2, dtype=code_dtype(n))
        cat = pd.Categorical.from_codes(codes, categories=pd.RangeIndex(n))
        assert cat.codes.dtype == codes.dtype, n


def test_text_array_keeps_the_buffers_and_reads_other_text_types() -> None:
    a = pa.array(["x", None, "yz"], type=pa.large_string())
    t = text_array(a)
    assert t.dtype == TEXT_DTYPE and t._pa_array.chunk(0).buffers()[2].address == a.buffers()[2].address
    assert list(pd.Series(text_array(pa.array(["x", None], type=pa.string()))).isna()) == [False, True]
    assert pd.Series(text_array(pa.array(["u", "u", None]).dictionary_encode())).tolist()[:2] == ["u", "u"]
    with pytest.raises(ValueError, match="outside the categories"):
        categorical(pa.chunked_array([pa.array(["a", "zz"])]), ["a"])


def test_a_damaged_converted_trace_raises_parse_error_never_a_raw_arrow_error(tmp_path: Path) -> None:
    if not native_available():
        pytest.skip("the C scanner is not built")
    from workbench.errors import ParseError

    r = to_parquet(DATA / "threads_futex.txt", tmp_path / "d.parquet", row_group_lines=50, progress=False)
    data = r.path.read_bytes()
    raised = 0
    for frac in (0.2, 0.3, 0.4, 0.5, 0.6):
        bad = bytearray(data)
        i = int(len(data) * frac)
        bad[i:i + 64] = b"\xff" * 64
        out = tmp_path / f"bad{i}.parquet"
        out.write_bytes(bytes(bad))
        # (its metadata names the side file d.side.parquet, which is beside it)
        try:
            read_strace(out)
        except ParseError as exc:
            assert str(out) in str(exc) and "damaged" in str(exc)
            raised += 1
    assert raised >= 3  # bytes overwritten in pages or their headers are found, and named


@pytest.mark.parametrize("way", ["native", "reference", "two threads", "converted, one row group",
                                 "converted, row groups", "cache hit"])
def test_every_loaded_frame_can_be_edited_in_place(way: str, tmp_path: Path) -> None:
    """``frame.loc[...] = ...`` works on every column whichever way the frame was loaded: no column is a
    read-only view (of the scanner's buffers, of Arrow memory or of a mapped cache entry), and editing a
    cache hit leaves the cache entry as it was."""
    if way != "reference" and not native_available():
        pytest.skip("the C scanner is not built")
    trace = DATA / "threads_futex.txt"
    if way == "native":
        frame = read_strace(trace, native=True)
    elif way == "reference":
        frame = read_strace(trace, native=False)
    elif way == "two threads":
        big = tmp_path / "big.strace"
        big.write_bytes(trace.read_bytes() * (40_000_000 // trace.stat().st_size + 1))
        frame = read_strace(big, threads=2, check_summary=False)
    elif way.startswith("converted"):
        lines = 7 if way.endswith("row groups") else 1 << 20
        frame = read_strace(to_parquet(trace, tmp_path / "t.parquet", row_group_lines=lines, progress=False).path)
    else:
        read_strace(trace, cache=tmp_path / "cache")
        frame = read_strace(trace, cache=tmp_path / "cache")
    want = read_strace(trace)
    first, second = frame.index[0], frame.index[1]
    for col in frame.columns:
        frame.loc[first, col] = frame.loc[second, col]
        a, b = frame.loc[first, col], frame.loc[second, col]
        assert a == b or (pd.isna(a) and pd.isna(b)), col
    if way == "cache hit":
        pd.testing.assert_frame_equal(read_strace(trace, cache=tmp_path / "cache"), want, check_exact=True)
