"""The Parquet cache: same frame and attrs on the second load, keyed by content."""
from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

import workbench.latency._read as reader
from workbench.errors import ParseError
from workbench.latency import read_latency

DATA = Path(__file__).parent / "data" / "latency"
FILES = sorted(p.name for p in DATA.iterdir() if p.suffix != ".md")


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a, b, check_dtype=False)
    assert [str(t) for t in a.dtypes] == [str(t) for t in b.dtypes]
    pd.testing.assert_frame_equal(a.attrs["rejects"], b.attrs["rejects"])
    ka = {k: v for k, v in a.attrs.items() if k != "rejects"}
    kb = {k: v for k, v in b.attrs.items() if k != "rejects"}
    assert ka.keys() == kb.keys()
    for k in ka:
        if isinstance(ka[k], pd.DataFrame):
            pd.testing.assert_frame_equal(ka[k], kb[k])
        else:
            assert ka[k] == kb[k], k


@pytest.mark.parametrize("name", FILES)
def test_cached_load_equals_a_fresh_parse(name, tmp_path, monkeypatch):
    fresh = read_latency(DATA / name)
    first = read_latency(DATA / name, cache=tmp_path)
    _same(fresh, first)

    def boom(*a, **k):
        raise AssertionError("parsed again instead of using the cache")

    monkeypatch.setattr(reader, "_read_one", boom)
    second = read_latency(DATA / name, cache=tmp_path)
    _same(fresh, second)


def test_cache_is_keyed_by_content_and_options(tmp_path):
    f = tmp_path / "a.csv"
    f.write_text("latency_ms\n1\n2\nbad\n")
    cache = tmp_path / "cache"
    a = read_latency(f, cache=cache)
    assert len(list(cache.glob("*.parquet"))) == 1
    f.write_text("latency_ms\n1\n2\n3\n")
    b = read_latency(f, cache=cache)
    assert len(b) == 3 and len(b.attrs["rejects"]) == 0 and len(a.attrs["rejects"]) == 1
    c = read_latency(f, cache=cache, unit="ms")  # other options, other entry
    assert len(c) == 3 and len(list(cache.glob("*.parquet"))) == 3
    # the same bytes under another name: a hit that reports the new name
    g = tmp_path / "copy.csv"
    shutil.copy(f, g)
    d = read_latency(g, cache=cache)
    assert d.attrs["source"] == str(g)


def test_strict_still_raises_on_a_cached_reject(tmp_path):
    f = tmp_path / "a.csv"
    f.write_text("latency_ms\n1\nbad\n")
    read_latency(f, cache=tmp_path / "c")
    with pytest.raises(ParseError) as e:
        read_latency(f, cache=tmp_path / "c", strict=True)
    assert e.value.line == 3 and e.value.source == str(f)


def test_default_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path))
    read_latency(DATA / "hey_index_8col.csv", cache=True)
    assert len(list((tmp_path / "latency").glob("*.parquet"))) == 1
