"""The shared source argument: paths, globs, lists, streams and text."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from workbench.sources import Stream, Text, expand, read_stream, split_sources


def test_paths_globs_lists_text_and_streams(tmp_path: Path) -> None:
    for name in ("b.log", "a.log", "c.txt"):
        (tmp_path / name).write_text("x\n")
    assert split_sources(tmp_path / "a.log") == [tmp_path / "a.log"]
    assert split_sources(str(tmp_path / "*.log")) == [tmp_path / "a.log", tmp_path / "b.log"]
    assert split_sources([tmp_path / "c.txt", str(tmp_path / "a.log")]) == [tmp_path / "c.txt", tmp_path / "a.log"]
    assert split_sources("line one\nline two\n") == [Text("<text>", "line one\nline two\n")]
    stream = io.StringIO("x\n")
    (item,) = split_sources(stream)
    assert isinstance(item, Stream) and item.stream is stream and read_stream(item.stream) == "x\n"
    assert read_stream(io.BytesIO(b"caf\xc3\xa9")) == "café"


def test_text_rule_is_the_callers(tmp_path: Path) -> None:
    assert split_sources('{"a": 1}', is_text=lambda s: s.startswith("{")) == [Text("<text>", '{"a": 1}')]


def test_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="matches no file"):
        expand(str(tmp_path / "*.none"))
    with pytest.raises(FileNotFoundError, match="no such strace file"):
        split_sources(tmp_path / "missing.txt", "strace")
    with pytest.raises(ValueError, match="empty list of bpftrace sources"):
        split_sources([], "bpftrace")
    with pytest.raises(TypeError, match="must hold paths"):
        split_sources([1], "x")
    with pytest.raises(TypeError, match="cannot read x from int"):
        split_sources(3, "x")


def test_wrong_types_are_usage_errors_of_the_family() -> None:
    from workbench.errors import UsageError, WorkbenchError

    with pytest.raises(UsageError) as err:
        split_sources(3, "x")
    assert isinstance(err.value, WorkbenchError) and isinstance(err.value, TypeError)


@pytest.mark.parametrize("kind", ["gzip", "bzip2", "xz", "zstd", "plain"])
def test_compressed_files_and_streams_are_read_by_their_magic_bytes(tmp_path: Path, kind: str) -> None:
    import bz2
    import gzip
    import lzma

    import pyarrow as pa

    from workbench.sources import compression_of, open_inputs

    text = "a,b\n1,2\ncafé,3\n"
    raw = text.encode()
    if kind == "zstd":
        sink = pa.BufferOutputStream()
        with pa.CompressedOutputStream(sink, "zstd") as f:
            f.write(raw)
        data = sink.getvalue().to_pybytes()
    else:
        data = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress,
                "plain": lambda b: b}[kind](raw)
    assert compression_of(data[:6]) == (None if kind == "plain" else kind)
    p = tmp_path / "table.csv"  # no telling suffix: the bytes decide
    p.write_bytes(data)
    (inp,) = open_inputs(p)
    assert inp.text == text and inp.name == str(p) and inp.line(3) == "café,3" and inp.line(9) == ""
    (inp,) = open_inputs(io.BytesIO(data))
    assert inp.text == text


def test_damaged_compressed_file_names_the_file(tmp_path: Path) -> None:
    import gzip

    from workbench.errors import ParseError
    from workbench.sources import open_inputs

    p = tmp_path / "cut.gz"
    p.write_bytes(gzip.compress(b"x" * 10000)[:30])
    with pytest.raises(ParseError, match="cut.gz.*damaged gzip"):
        open_inputs(p)


def test_folders_only_where_the_loader_takes_them(tmp_path: Path) -> None:
    from workbench.errors import InputNotFoundError, UsageError
    from workbench.sources import open_inputs

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_text("b\n")
    (tmp_path / "a.txt").write_text("a\n")
    assert [i.text for i in open_inputs(tmp_path, directories=True)] == ["a\n", "b\n"]
    with pytest.raises(UsageError, match="is a folder"):
        open_inputs(tmp_path, "counter")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputNotFoundError, match="holds no counter file"):
        open_inputs(tmp_path / "empty", "counter", directories=True)


def test_strict_collector_raises_the_earliest_line_after_parsing() -> None:
    from workbench.errors import ParseError
    from workbench.sources import Collector

    col = Collector("f.csv", strict=False)
    col.reject(9, "late", "bad")
    col.reject(2, "early", "worse")
    col.skip("comment", 3)
    col.check()  # not strict: nothing raised
    assert col.sorted_rows() == [("f.csv", 2, "early", "worse"), ("f.csv", 9, "late", "bad")]
    assert col.skipped == {"comment": 3}
    strict = Collector("f.csv", strict=True)
    strict.reject(9, "late", "bad")
    strict.reject(2, "early", "worse")  # found second, reported first
    with pytest.raises(ParseError) as err:
        strict.check()
    assert (err.value.line, err.value.text, err.value.reason) == (2, "early", "worse")
