"""The one content-keyed cache: round trips, damaged entries re-parsed, nothing executed."""
from __future__ import annotations

import mmap
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.cache import Cache, key_for
from workbench.schema import Rejects, SideTable, attach_rejects


def _frame() -> pd.DataFrame:
    f = pd.DataFrame({
        "latency_s": [0.1, np.nan, 0.3],
        "tag": pd.Series(["a", np.nan, "c"], dtype=object),
        "kind": pd.Categorical(["call", "signal", "call"]),
        "pid": pd.array([1, None, 3], dtype="Int64"),
    })
    attach_rejects(f, [("t.csv", 4, "x,y", "expected a number")])
    f.attrs.update(kind="samples", format="csv", skipped={"comment": 2}, lines=7, time_base=None,
                   percentiles_s={50.0: 0.1, 99.9: 0.3}, summary={"by_code": {200: 5, None: 1}}, qs=(50, 99.9),
                   messages=SideTable(pd.DataFrame({"source": ["t"], "line": [1], "text": ["strace: hi"]})))
    return f


def _entry_checksum(path: Path) -> str:
    """The checksum a load finds in a map of the file (what its name must end with)."""
    from workbench import cache as C

    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        return C._checksum(mm)


def _key(data: bytes = b"1\n2\n", **options: object) -> str:
    return key_for("demo", ("cache.py",), options, [data])


def test_round_trip_keeps_dtypes_values_and_attrs(tmp_path: Path) -> None:
    c = Cache("demo", tmp_path)
    f = _frame()
    path = c.store(_key(), f)
    assert path is not None and path.parent == tmp_path
    back = c.load(_key())
    assert back is not None
    pd.testing.assert_frame_equal(back, f)
    assert back.attrs["rejects"] == f.attrs["rejects"] and isinstance(back.attrs["rejects"], Rejects)
    assert back.attrs["messages"] == f.attrs["messages"]
    assert {k: v for k, v in back.attrs.items() if k not in ("rejects", "messages")} == \
        {k: v for k, v in f.attrs.items() if k not in ("rejects", "messages")}
    assert back["tag"].iloc[1] is not None and np.isnan(back["tag"].iloc[1])  # NaN stays NaN in text columns


@pytest.mark.parametrize("block", [7, 1000, 1 << 25])
def test_checksum_taken_while_writing_is_the_files(tmp_path: Path, block: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry's checksum is taken on the way out, across any block edges: it is the one the file has,
    and a load (which checks it) serves the entry."""
    from workbench import cache as C

    monkeypatch.setattr(C, "_CRC_BLOCK", block)
    c = Cache("demo", tmp_path)
    f = pd.concat([_frame()] * 300, ignore_index=True)
    f.attrs = _frame().attrs
    path = c.store(_key(), f)
    assert path is not None
    if block < 1 << 25:
        assert path.stat().st_size > 20 * block  # many blocks, writes crossing their edges
    assert path.name == f"{_key()}-{_entry_checksum(path)}.arrow"
    back = c.load(_key())
    assert back is not None
    pd.testing.assert_frame_equal(back, f)


def test_key_follows_bytes_options_and_loader() -> None:
    assert _key() == _key()
    assert _key(b"1\n3\n") != _key()
    assert _key(unit="ms") != _key()
    assert key_for("other", ("cache.py",), {}, [b"1\n2\n"]) != _key()
    assert key_for("demo", ("cache.py",), {}, [b"ab", b"c"]) != key_for("demo", ("cache.py",), {}, [b"a", b"bc"])


@pytest.mark.parametrize("leaf", [64, 1 << 22])
def test_key_does_not_depend_on_how_the_bytes_are_fed(leaf: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Leaves of the key are hashed on other threads: any feeding of the same bytes gives the same key,
    a buffer reused once fed changes nothing, and any byte or part boundary changed changes it."""
    from workbench import cache as C

    monkeypatch.setattr(C, "_LEAF", leaf)
    digest = C._leaf_digest

    def slow(*args: object) -> bytes:  # leaves hashed late: a buffer reused too soon would be seen
        time.sleep(0.0005)
        return digest(*args)

    monkeypatch.setattr(C, "_leaf_digest", slow)
    rng = np.random.default_rng(0)
    parts = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in (0, 1, 63, 64, 65, 5000, 20011)]
    want = key_for("demo", ("cache.py",), {}, parts)
    for seed in range(4):
        r = np.random.default_rng(seed)
        k = C.Key("demo", ("cache.py",), {})
        reused = bytearray(1 << 15)
        for data in parts:
            at = 0
            while at < len(data):
                n = int(r.integers(1, 3 * min(leaf, 3000)))
                chunk = data[at:at + n]
                reused[:len(chunk)] = chunk
                k.feed(memoryview(reused)[:len(chunk)])
                reused[:len(chunk)] = b"\0" * len(chunk)  # (the loader's buffer, overwritten once fed)
                at += n
            k.end_part()
        assert k.hexdigest() == want
    flipped = [*parts[:-1], parts[-1][:-1] + bytes([parts[-1][-1] ^ 1])]
    assert key_for("demo", ("cache.py",), {}, flipped) != want
    assert key_for("demo", ("cache.py",), {}, [parts[-2] + parts[-1][:1], parts[-1][1:]]) != \
        key_for("demo", ("cache.py",), {}, parts[-2:])


@pytest.mark.parametrize("damage", ["flip", "truncate", "foreign", "empty"])
def test_damaged_entry_is_discarded_with_a_warning_never_served(tmp_path: Path, damage: str) -> None:
    c = Cache("demo", tmp_path)
    path = c.store(_key(), _frame())
    assert path is not None
    data = bytearray(path.read_bytes())
    if damage == "flip":
        for i in (len(data) // 3, len(data) // 2, 2 * len(data) // 3, 100):
            data[i] ^= 0x10
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "foreign":
        other = tmp_path / "other.parquet"
        pd.DataFrame({"latency_s": [-1.0]}).to_parquet(other)
        data = bytearray(other.read_bytes())
    else:
        data = bytearray()
    path.write_bytes(bytes(data))
    with pytest.warns(UserWarning, match="damaged"):
        assert c.load(_key()) is None
    assert not path.exists()  # gone: the next load parses again and stores afresh


def test_checksum_in_blocks_finds_a_flip_in_any_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry of many checksum blocks (checked in parallel) is served whole and refused with one bit
    flipped in its last block."""
    import workbench.cache as C

    monkeypatch.setattr(C, "_CRC_BLOCK", 4096)
    c = Cache("demo", tmp_path)
    f = pd.DataFrame({"x": np.arange(20_000, dtype=np.float64)})
    path = c.store(_key(), f)
    assert path is not None and path.stat().st_size > 10 * 4096
    back = c.load(_key())
    assert back is not None
    pd.testing.assert_frame_equal(back, f)
    del back
    data = bytearray(path.read_bytes())
    data[-5000] ^= 0x04
    path.write_bytes(bytes(data))
    with pytest.warns(UserWarning, match="checksum"):
        assert c.load(_key()) is None


def test_an_entry_not_laid_out_as_its_plan_says_is_discarded(tmp_path: Path) -> None:
    """A whole, checksummed entry whose columns disagree with its plan (another dtype, two chunks, a
    category stored as text) is never viewed as something else: discarded with the reason, parsed again."""
    import json

    import pyarrow as pa

    import workbench.cache as C

    plan = [{"name": "x", "as": "numpy", "dtype": "<f8"}]
    tables = {
        "stored as float, its plan says float64": pa.table({"x": pa.array(np.arange(4, dtype=np.float32))}),
        "not one buffer": pa.Table.from_batches([pa.record_batch({"x": pa.array([1.0, 2.0])})] * 2),
        "not stored as": pa.table({"x": pa.array(["a", "b"])}),
    }
    c = Cache("demo", tmp_path)
    for why, table in tables.items():
        meta = {"version": C.FORMAT_VERSION, "loader": "demo", "attrs": {}, "objects": {},
                "columns": plan if why != "not stored as" else [{"name": "x", "as": "category",
                                                                 "categories": ["a", "b"], "object": True}]}
        table = table.replace_schema_metadata({C._META_KEY: json.dumps(meta).encode()})
        tmp = tmp_path / "entry.tmp"
        with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        path = tmp_path / f"{_key()}-{_entry_checksum(tmp)}.arrow"
        tmp.rename(path)
        with pytest.warns(UserWarning, match=why):
            assert c.load(_key()) is None
        assert not path.exists()


def test_no_pickle_and_no_side_files(tmp_path: Path) -> None:
    c = Cache("demo", tmp_path)
    c.store(_key(), _frame())
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 1 and files[0].endswith(".arrow")
    (tmp_path / f"{_key()}.attrs.pkl").write_bytes(b"cos\nsystem\n(S'touch pwned'\ntR.")  # a planted pickle
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert c.load(_key()) is not None
    assert not Path("pwned").exists()


def test_unstorable_frame_is_skipped_with_a_warning(tmp_path: Path) -> None:
    f = pd.DataFrame({"x": [1]})
    f.attrs["table"] = pd.DataFrame({"y": [1]})
    with pytest.warns(UserWarning, match="cache not written"):
        assert Cache("demo", tmp_path).store(_key(), f) is None
    assert list(tmp_path.iterdir()) == []


def test_default_folder_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path))
    assert Cache("strace").dir == tmp_path / "strace"
    assert Cache("strace", tmp_path / "x").dir == tmp_path / "x"
    monkeypatch.delenv("WORKBENCH_CACHE_DIR")
    assert Cache("latency").dir == Path(os.path.expanduser("~")) / ".cache" / "workbench" / "latency"


def test_key_fed_in_blocks_equals_the_key_of_the_whole() -> None:
    from workbench.cache import Key

    k = Key("t", (), {})
    for block in (b"1\n", b"2", b"\n"):
        k.feed(block)
    k.end_part()
    assert k.hexdigest() == key_for("t", (), {}, [b"1\n2\n"])
    assert key_for("t", (), {}, [b"ab", b"c"]) != key_for("t", (), {}, [b"a", b"bc"])  # parts cannot run together


def _trace(n: int) -> bytes:
    return b"".join(b"1 read(3, \"\", %d) = %d\n" % (i, i) for i in range(n))


@pytest.mark.parametrize("native", [False, True], ids=["reference", "native"])
def test_strace_entry_comes_from_the_bytes_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  native: bool) -> None:
    """The file changes between the lookup's read and the parse: the stale key is never filled."""
    import workbench.syscalls._read as R
    from workbench.syscalls import native_available, read_strace

    if native and not native_available():
        pytest.skip("the C scanner is not built")
    p, where = tmp_path / "t.txt", tmp_path / "cache"
    old, new = _trace(5), _trace(3)
    p.write_bytes(old)
    real = R._file_key

    def racing(paths, options):  # the lookup reads the old bytes; then the file is replaced
        key = real(paths, options)
        p.write_bytes(new)
        return key

    monkeypatch.setattr(R, "_file_key", racing)
    assert len(read_strace(p, native=native, cache=where, check_summary=False)) == 3  # parsed: the new bytes
    monkeypatch.setattr(R, "_file_key", real)
    p.write_bytes(old)
    again = read_strace(p, native=native, cache=where, check_summary=False)
    assert len(again) == 5  # the old bytes are never served the frame of the new ones
    p.write_bytes(new)
    hit = read_strace(p, native=native, cache=where, check_summary=False)
    pd.testing.assert_frame_equal(hit, read_strace(p, native=native, check_summary=False))
    assert len(list(where.glob("*.arrow"))) == 2  # one entry per content, each under its own bytes


def test_streamed_latency_entry_comes_from_the_bytes_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader that gives the lookup other bytes than the parser reads leaves no entry under the lookup's key."""
    import workbench.latency._read as R
    from workbench.latency import read_latency

    monkeypatch.setattr(R, "STREAM_BYTES", 10)  # every file is read in blocks
    p, where = tmp_path / "x.csv", tmp_path / "cache"
    old = b"latency_ms\n" + b"".join(b"%d\n" % i for i in range(1, 6))
    new = b"latency_ms\n" + b"".join(b"%d\n" % (100 * i) for i in range(1, 4))
    p.write_bytes(new)
    monkeypatch.setattr(R, "_blocks", lambda path: iter([old]))  # the lookup's read saw the old file
    racy = read_latency(p, cache=where, progress=False)
    assert racy["latency_s"].tolist() == [0.1, 0.2, 0.3]
    monkeypatch.undo()
    monkeypatch.setattr(R, "STREAM_BYTES", 10)
    p.write_bytes(old)
    assert read_latency(p, cache=where, progress=False)["latency_s"].tolist() == [0.001 * i for i in range(1, 6)]
    p.write_bytes(new)
    assert read_latency(p, cache=where, progress=False)["latency_s"].tolist() == [0.1, 0.2, 0.3]


def _fill(cache_dir: str, data: str, rounds: int) -> None:
    from workbench.latency import read_latency

    for _ in range(rounds):
        read_latency(data, cache=cache_dir)


def test_two_processes_filling_one_entry_leave_one_valid_entry(tmp_path: Path) -> None:
    import multiprocessing

    from workbench.latency import read_latency

    data = Path(__file__).resolve().parent / "data" / "latency" / "wrk_latency.txt"
    cache_dir = tmp_path / "c"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_fill, args=(str(cache_dir), str(data), 5)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=600)
        assert p.exitcode == 0
    entries = [p for p in cache_dir.rglob("*") if p.is_file()]
    assert len(entries) == 1 and entries[0].suffix == ".arrow", entries  # no temporary file left, one entry
    fresh = read_latency(data)
    cached = read_latency(data, cache=cache_dir)
    pd.testing.assert_frame_equal(cached, fresh)


def test_lean_columns_come_back_from_arrow_without_objects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Categorical, str, nullable and numpy columns are rebuilt from Arrow by the stored plan, not via objects."""
    import workbench.cache as C
    from workbench.arrow_frames import TEXT_DTYPE

    f = pd.DataFrame({
        "kind": pd.Categorical(["call", None, "exit"], categories=pd.Index(["call", "exit", "signal"], dtype=object)),
        "none": pd.Categorical([None, None, None], categories=pd.Index([], dtype=object)),
        "args": pd.array(["a, b", None, "é"], dtype=TEXT_DTYPE),
        "pid": pd.array([1, None, 3], dtype="Int64"),
        "small": pd.array([None, 2, 3], dtype="Int32"),
        "x": [0.5, np.nan, 2.0],
        "line": np.array([1, 2, 3], dtype=np.int64),
    })

    def no_objects(*_: object) -> None:
        raise AssertionError("a lean frame went through the object path")

    monkeypatch.setattr(C, "_restore_objects", no_objects)
    c = Cache("demo", tmp_path)
    assert c.store(_key(), f) is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = c.load(_key())
    assert back is not None
    pd.testing.assert_frame_equal(back, f, check_exact=True)
    assert back["kind"].cat.categories.dtype == object and back["args"].dtype == TEXT_DTYPE
    assert back["args"].isna().tolist() == [False, True, False] and back["args"].iloc[2] == "é"


def test_a_hit_is_built_over_the_mapped_entry_and_edits_stay_private(tmp_path: Path) -> None:
    """Numeric columns and codes are views of the entry's pages (no copy), yet editable; a change to the frame
    never reaches the file, and the next hit gives the stored values again."""
    from workbench.arrow_frames import TEXT_DTYPE

    n = 50_000
    f = pd.DataFrame({
        "duration_s": np.linspace(0, 1, n),
        "syscall": pd.Categorical(np.where(np.arange(n) % 3 == 0, "read", "futex")),
        "pid": pd.array(np.where(np.arange(n) % 7 == 0, None, np.arange(n)), dtype="Int64"),
        "args": pd.array([f"fd={i}" for i in range(n)], dtype=TEXT_DTYPE),
    })
    c = Cache("demo", tmp_path)
    path = c.store(_key(), f)
    assert path is not None and path.stat().st_size > n * 8 * 2  # uncompressed: the frame's own bytes
    back = c.load(_key())
    assert back is not None
    pd.testing.assert_frame_equal(back, f, check_exact=True)
    for col in (back["duration_s"].to_numpy(), back["syscall"].array.codes, back["pid"].array._data):
        owner = col
        while isinstance(owner, np.ndarray) and owner.base is not None:
            owner = owner.base
        assert not isinstance(owner, np.ndarray), "a column was copied out of the map"
    before = path.read_bytes()
    back.loc[0, "duration_s"] = 99.0
    back["duration_s"] *= 2
    back.loc[1, "pid"] = -5
    back.loc[2, "args"] = "changed"
    assert back["duration_s"].iloc[0] == 198.0 and back["pid"].iloc[1] == -5 and back["args"].iloc[2] == "changed"
    assert path.read_bytes() == before
    again = c.load(_key())
    assert again is not None
    pd.testing.assert_frame_equal(again, f, check_exact=True)


@pytest.mark.parametrize("native", [False, True], ids=["reference", "native"])
def test_strace_hit_on_a_settled_file_reads_none_of_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       native: bool) -> None:
    """The key of a file unchanged since it was hashed is remembered; a write makes it hashed (and parsed) again."""
    import workbench.cache as C
    import workbench.syscalls._read as R
    from workbench.syscalls import native_available, read_strace

    if native and not native_available():
        pytest.skip("the C scanner is not built")
    p, where = tmp_path / "t.txt", tmp_path / "cache"
    p.write_bytes(_trace(5))
    assert not C.FileStats.of([p]).settled()  # just written: never taken on its stat alone
    first = read_strace(p, native=native, cache=where, check_summary=False)
    assert list(where.glob("*.stat")) == []
    monkeypatch.setattr(C, "SETTLED_NS", 0)  # (as if written long ago)
    read_strace(p, native=native, cache=where, check_summary=False)  # hashed once more, now remembered
    assert len(list(where.glob("*.stat"))) == 1
    real = R._file_key

    def unread(paths: object, options: object) -> object:
        raise AssertionError("a remembered file was read to find its key")

    monkeypatch.setattr(R, "_file_key", unread)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hit = read_strace(p, native=native, cache=where, check_summary=False)
    pd.testing.assert_frame_equal(hit, first, check_exact=True)
    monkeypatch.setattr(R, "_file_key", real)
    with open(p, "r+b") as fh:  # same size, same mtime: only the ctime tells
        st = os.stat(p)
        fh.write(b"2")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(p).st_size == st.st_size and os.stat(p).st_mtime_ns == st.st_mtime_ns
    edited = read_strace(p, native=native, cache=where, check_summary=False)
    assert edited["pid"].tolist()[0] == 2 and first["pid"].tolist()[0] == 1


def test_settled_file_changed_during_the_parse_leaves_no_entry(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Settled files are hashed once (at the lookup); a change before the parse ends stores nothing."""
    import workbench.cache as C
    import workbench.syscalls._read as R
    from workbench.syscalls import read_strace

    monkeypatch.setattr(C, "SETTLED_NS", 0)
    p, where = tmp_path / "t.txt", tmp_path / "cache"
    p.write_bytes(_trace(5))
    real = R._file_key

    def racing(paths: list[Path], options: dict[str, object]) -> object:
        key = real(paths, options)
        p.write_bytes(_trace(3))
        return key

    monkeypatch.setattr(R, "_file_key", racing)
    assert len(read_strace(p, native=False, cache=where, check_summary=False)) == 3
    assert list(where.glob("*.arrow")) == [] and list(where.glob("*.stat")) == []
    monkeypatch.setattr(R, "_file_key", real)
    assert len(read_strace(p, native=False, cache=where, check_summary=False)) == 3  # stored, hashed once
    assert len(list(where.glob("*.arrow"))) == 1
    p.write_bytes(_trace(5))
    assert len(read_strace(p, native=False, cache=where, check_summary=False)) == 5
