"""A frame written in place from a Parquet file's row groups equals pyarrow's own conversion, in any row order."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from workbench.arrow_frames import TEXT_DTYPE
from workbench.row_groups import CategoryError, Column, decode_pool, frame_from_row_groups

NAMES = ["read", "write", "futex", "epoll_wait", "close"]
SPECS = {
    "kind": Column("category", categories=("call", "signal", "exit")),
    "syscall": Column("category", categories=tuple(sorted(NAMES))),
    "pid": Column("int", "Int64"),
    "timestamp_s": Column("number", "float64"),
    "args": Column("text"),
    "line": Column("number", "int64"),
}


def _table(rng: np.random.Generator, n: int) -> pa.Table:
    """Random columns of every kind, with nulls where a kind allows them."""
    null = rng.random(n) < 0.2
    return pa.table({
        "kind": pa.array(rng.choice(["call", "signal", "exit"], n)),
        # each row group sees its own subset of names: its dictionary differs from the others'
        "syscall": pa.array([None if z else str(v) for v, z in zip(rng.choice(NAMES, n), null, strict=True)]),
        "pid": pa.array([None if z else int(v) for v, z in zip(rng.integers(-5, 1 << 40, n), null[::-1], strict=True)],
                        type=pa.int64()),
        "timestamp_s": pa.array(np.where(rng.random(n) < 0.1, np.nan, rng.random(n) * 1e4)),
        "args": pa.array([None if rng.random() < 0.1 else "x" * int(k) for k in rng.integers(0, 40, n)],
                         type=pa.large_string()),
        "line": pa.array(np.arange(n, dtype=np.int64)),
    })


def _runs(rng: np.random.Generator, n: int) -> list[tuple[int, int]]:
    """Every row once, as runs of consecutive rows cut at random and shuffled."""
    cuts = sorted({0, n, *rng.integers(0, n + 1, int(rng.integers(0, 12))).tolist()})
    runs = list(zip(cuts[:-1], cuts[1:], strict=True))
    rng.shuffle(runs)
    return [(int(a), int(b)) for a, b in runs]


def _expected(table: pa.Table, runs: list[tuple[int, int]] | None) -> pd.DataFrame:
    order = np.arange(table.num_rows) if runs is None else np.concatenate(
        [np.arange(a, b) for a, b in runs] or [np.empty(0, dtype=np.int64)])
    t = table.take(pa.array(order, type=pa.int64()))
    return pd.DataFrame({
        "kind": pd.Categorical(t.column("kind").to_pylist(), categories=pd.Index(["call", "signal", "exit"],
                                                                                 dtype=object)),
        "syscall": pd.Categorical(t.column("syscall").to_pylist(), categories=pd.Index(sorted(NAMES), dtype=object)),
        "pid": pd.array(t.column("pid").to_pylist(), dtype="Int64"),
        "timestamp_s": t.column("timestamp_s").to_numpy(),
        "args": pd.array(t.column("args").to_pylist(), dtype=TEXT_DTYPE),
        "line": t.column("line").to_numpy(),
    })


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("threads", [1, 3])
def test_equals_pyarrow_in_any_row_order(seed: int, threads: int, tmp_path: Path) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    table = _table(rng, n)
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=int(rng.integers(1, 80)),
                   use_dictionary=["kind", "syscall"] if seed % 2 else False)
    for runs in (None, _runs(rng, n)):
        for dictionary in (None, ["kind", "syscall"]):
            got = frame_from_row_groups(path, SPECS, runs=runs, threads=threads, dictionary=dictionary)
            pd.testing.assert_frame_equal(got, _expected(table, runs), check_exact=True)
            got.loc[0, "timestamp_s"] = -1.0  # writable: pandas writes into a frame's arrays in place
            assert got["timestamp_s"].iloc[0] == -1.0


@pytest.mark.parametrize("threads", [1, 2])
def test_several_chunks_in_one_row_group(threads: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A row group that comes back as several Arrow chunks lands in order, pieces cut at chunk edges."""
    table = _table(np.random.default_rng(1), 300)
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=150)
    read = pq.ParquetFile.read_row_group

    def chunked(self: pq.ParquetFile, *args: object, **kwargs: object) -> pa.Table:
        return pa.Table.from_batches(read(self, *args, **kwargs).to_batches(max_chunksize=37))

    monkeypatch.setattr(pq.ParquetFile, "read_row_group", chunked)
    runs = [(200, 300), (0, 120), (140, 200), (120, 140)]
    got = frame_from_row_groups(path, SPECS, runs=runs, threads=threads, dictionary=["syscall"])
    pd.testing.assert_frame_equal(got, _expected(table, runs), check_exact=True)


def test_empty_file_gives_the_dtypes(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(_table(np.random.default_rng(0), 5).slice(0, 0), path)
    got = frame_from_row_groups(path, SPECS, threads=2)
    assert len(got) == 0
    assert [str(t) for t in got.dtypes] == ["category", "category", "Int64", "float64", "str", "int64"]


def test_values_the_spec_cannot_hold(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"syscall": ["read", "bogus"], "n": pa.array([1, None], type=pa.int64())}), path)
    with pytest.raises(CategoryError, match="bogus"):
        frame_from_row_groups(path, {"syscall": Column("category", categories=("read",))})
    with pytest.raises(ValueError, match="1 nulls in a column that may hold none"):
        frame_from_row_groups(path, {"n": Column("number", "int64")})
    with pytest.raises(ValueError, match="runs cover 1 rows of 2"):
        frame_from_row_groups(path, {"n": Column("int", "Int64")}, runs=[(0, 1)])


@pytest.mark.parametrize("threads", [1, 2])
def test_text_all_null_in_some_row_groups(threads: int, tmp_path: Path) -> None:
    """Row groups whose statistics say a text column is all null (a trace without -k: backtrace) give the
    same frame as decoding them, in any row order, beside row groups that hold text."""
    rng = np.random.default_rng(5)
    n = 500
    table = _table(rng, n)
    args = [None if (i // 100) % 2 == 0 else f"frame {i}" for i in range(n)]  # groups of 100: null, text, ...
    table = table.set_column(table.schema.get_field_index("args"), "args", pa.array(args, type=pa.large_string()))
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=100)
    stats = pq.ParquetFile(path).metadata.row_group(0).column(table.schema.get_field_index("args")).statistics
    assert stats.null_count == 100  # (what the skip reads)
    for runs in (None, _runs(rng, n), [(450, 500), (0, 450)]):
        got = frame_from_row_groups(path, SPECS, runs=runs, threads=threads)
        pd.testing.assert_frame_equal(got, _expected(table, runs), check_exact=True)
        assert got["args"].isna().sum() == 300
        assert got["args"].str.len().sum() == sum(len(a) for a in args if a is not None)


def test_all_null_text_takes_no_decoded_memory(tmp_path: Path) -> None:
    """An all-null text column is not decoded: no 8 bytes a row of zero offsets in Arrow's pool."""
    n = 1_000_000
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"backtrace": pa.nulls(n, pa.large_string()),
                             "line": np.arange(n, dtype=np.int64)}), path, row_group_size=250_000)
    memory = decode_pool()
    before = memory.bytes_allocated()
    got = frame_from_row_groups(path, {"backtrace": Column("text")}, threads=2)
    held = memory.bytes_allocated() - before
    assert got["backtrace"].isna().all() and len(got) == n
    assert held < n  # (decoded, the offsets alone would hold 8 MB)


def _jemalloc() -> pa.MemoryPool:
    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:
        pytest.skip("a pyarrow built without jemalloc")


def test_text_is_decoded_into_jemalloc_not_the_default_pool(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The frame's text lives in jemalloc's pool (which keeps a row group's freed pages for the next);
    the process's default pool neither holds it nor is changed."""
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    jemalloc, default = _jemalloc(), pa.default_memory_pool()
    n = 200_000
    path = tmp_path / "t.parquet"
    values = [f"fd={i % 977}, buf=0x{i:x}" for i in range(n)]
    pq.write_table(pa.table({"args": pa.array(values, type=pa.large_string())}), path, row_group_size=50_000)
    text_bytes = sum(map(len, values))
    before = jemalloc.bytes_allocated()
    got = frame_from_row_groups(path, {"args": Column("text")}, threads=2)
    assert jemalloc.bytes_allocated() - before >= text_bytes  # (the values; offsets on top)
    assert got["args"].iloc[12_345] == values[12_345]
    assert pa.default_memory_pool().backend_name == default.backend_name
    del got
    assert jemalloc.bytes_allocated() == before  # (let go with the frame)


def test_a_pool_chosen_in_the_environment_is_the_one_decoded_into(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ARROW_DEFAULT_MEMORY_POOL`` set: the default pool it chose (pyarrow reads it at start); unset: jemalloc."""
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "system")
    assert decode_pool().backend_name == pa.default_memory_pool().backend_name
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL")
    assert decode_pool().backend_name == _jemalloc().backend_name == "jemalloc"
