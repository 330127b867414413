"""The Parquet cache of read_latency: same frame and attrs on the second load, keyed by content."""
from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pandas as pd
import pytest

import workbench.latency._read as reader
from workbench.errors import ParseError
from workbench.latency import read_latency
from workbench.schema import Rejects

DATA = Path(__file__).parent / "data" / "latency"
FILES = sorted(p.name for p in DATA.iterdir() if p.suffix != ".md")


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a, b, check_dtype=False)
    assert [str(t) for t in a.dtypes] == [str(t) for t in b.dtypes]
    assert isinstance(a.attrs["rejects"], Rejects) and isinstance(b.attrs["rejects"], Rejects)
    pd.testing.assert_frame_equal(a.attrs["rejects"].frame(), b.attrs["rejects"].frame())
    ka = {k: v for k, v in a.attrs.items() if k != "rejects"}
    kb = {k: v for k, v in b.attrs.items() if k != "rejects"}
    assert ka.keys() == kb.keys()
    for k in ka:
        assert ka[k] == kb[k], k
        assert type(ka[k]) is type(kb[k]), k


def _no_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: object, **k: object) -> None:
        raise AssertionError("parsed again instead of using the cache")

    monkeypatch.setattr(reader, "_read_one", boom)


@pytest.mark.parametrize("name", FILES)
def test_cached_load_equals_a_fresh_parse(name, tmp_path, monkeypatch):
    fresh = read_latency(DATA / name)
    first = read_latency(DATA / name, cache=tmp_path)
    _same(fresh, first)
    _no_parse(monkeypatch)
    second = read_latency(DATA / name, cache=tmp_path)
    _same(fresh, second)


def test_entries_are_checksummed_arrow_files_only(tmp_path):
    cache = tmp_path / "cache"
    read_latency(DATA / "hey_404_8col.csv", cache=cache)
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert len(files) == 1 and files[0].suffix == ".arrow"
    key, checksum = files[0].stem.rsplit("-", 1)
    assert len(key) == 40 and len(checksum) == 8  # BLAKE2 key and CRC-32 of the entry


def test_cache_is_keyed_by_content_and_options(tmp_path):
    f = tmp_path / "a.csv"
    f.write_text("latency_ms\n1\n2\nbad\n")
    cache = tmp_path / "cache"
    a = read_latency(f, cache=cache)
    assert len(list(cache.glob("*.arrow"))) == 1
    f.write_text("latency_ms\n1\n2\n3\n")
    b = read_latency(f, cache=cache)
    assert len(b) == 3 and len(b.attrs["rejects"]) == 0 and len(a.attrs["rejects"]) == 1
    c = read_latency(f, cache=cache, unit="ms")  # other options, other entry
    assert len(c) == 3 and len(list(cache.glob("*.arrow"))) == 3
    # the same bytes under another name: a hit that reports the new name, in attrs and in the rejects
    f.write_text("latency_ms\n1\n2\nbad\n")
    g = tmp_path / "copy.csv"
    shutil.copy(f, g)
    d = read_latency(g, cache=cache)
    assert d.attrs["source"] == str(g)
    assert d.attrs["rejects"].rows() == [(str(g), 4, "bad", a.attrs["rejects"].rows()[0][3])]
    _same(d, read_latency(g))


def test_strict_still_raises_on_a_cached_reject(tmp_path):
    f = tmp_path / "a.csv"
    f.write_text("latency_ms\n1\nbad\n2\nworse\n")
    read_latency(f, cache=tmp_path / "c")
    with pytest.raises(ParseError) as e:
        read_latency(f, cache=tmp_path / "c", strict=True)
    assert e.value.line == 3 and e.value.source == str(f) and e.value.text == "bad"


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_a_damaged_entry_is_discarded_and_the_file_parsed_again(damage, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    fresh = read_latency(DATA / "wrk_latency.txt", cache=cache)
    (entry,) = cache.glob("*.arrow")
    data = bytearray(entry.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x01
    else:
        del data[len(data) // 2:]
    entry.write_bytes(bytes(data))
    with pytest.warns(UserWarning, match="damaged"):
        again = read_latency(DATA / "wrk_latency.txt", cache=cache)
    _same(fresh, again)
    (rewritten,) = cache.glob("*.arrow")  # the damaged entry is gone, a whole one took its place
    assert rewritten.read_bytes() != bytes(data)
    _no_parse(monkeypatch)
    _same(fresh, read_latency(DATA / "wrk_latency.txt", cache=cache))


def test_compressed_file_is_keyed_by_its_own_bytes(tmp_path, monkeypatch):
    text = (DATA / "hey_index_8col.csv").read_bytes()
    f = tmp_path / "hey.csv.gz"
    f.write_bytes(gzip.compress(text))
    cache = tmp_path / "cache"
    fresh = read_latency(f)
    first = read_latency(f, cache=cache)
    _same(fresh, first)
    _no_parse(monkeypatch)
    _same(fresh, read_latency(f, cache=cache))


def test_streamed_csv_is_cached_too(tmp_path, monkeypatch):
    f = tmp_path / "big.csv"
    f.write_text("ts_ms,latency_ms\n" + "".join(f"{1796000000000 + i},{1 + i % 7}\n" for i in range(500))
                 + "1796000001000,oops\n")
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    monkeypatch.setattr(reader, "BLOCK_BYTES", 1000)
    cache = tmp_path / "cache"
    fresh = read_latency(f, progress=False)
    assert fresh.attrs["streamed"] is True and len(fresh.attrs["rejects"]) == 1
    _same(fresh, read_latency(f, cache=cache, progress=False))

    def boom(*a: object, **k: object) -> None:
        raise AssertionError("streamed again instead of using the cache")

    monkeypatch.setattr("workbench.latency._csv.read_csv_stream", boom)
    _same(fresh, read_latency(f, cache=cache, progress=False))


def test_default_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path))
    read_latency(DATA / "hey_index_8col.csv", cache=True)
    assert len(list((tmp_path / "latency").glob("*.arrow"))) == 1
