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
