"""Several scanner threads on one file give exactly the rows of one scanner, wherever the file is cut."""
from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from workbench.errors import UsageError
from workbench.syscalls import _read as reader
from workbench.syscalls import native_available, read_strace

from .conftest import ROOT

pytestmark = pytest.mark.skipif(not native_available(), reason="native scanner not built or disabled")

DATA = ROOT / "tests" / "data" / "strace"
CAPTURES = sorted(DATA.glob("*.txt")) + sorted((DATA / "ff").glob("trace.*")) + sorted(
    (ROOT / "data" / "01_quantized_latency" / "lab").glob("strace_*.txt"))


def _midnight(tmp: Path) -> Path:
    """threads_futex.txt moved so that its -tt clock passes midnight (23:59:59.9 → 00:00:00.x)."""
    text = (DATA / "threads_futex.txt").read_text(encoding="latin-1")
    stamp = re.compile(r"^(\d+ +)(\d\d):(\d\d):(\d\d)\.(\d{6}) ", re.M)
    first = stamp.search(text)
    assert first is not None
    t0 = (int(first[2]) * 3600 + int(first[3]) * 60 + int(first[4])) * 10**6 + int(first[5])
    shift = (86399 * 10**6 + 990_000) - t0

    def move(m: re.Match[str]) -> str:
        t = ((int(m[2]) * 3600 + int(m[3]) * 60 + int(m[4])) * 10**6 + int(m[5]) + shift) % (86400 * 10**6)
        s, us = divmod(t, 10**6)
        return f"{m[1]}{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{us:06d} "

    out = tmp / "midnight.txt"
    out.write_text(stamp.sub(move, text), encoding="latin-1")
    return out


def _modes(path: Path) -> tuple[int, int, int]:
    head, _ = reader._head(path)
    pid_mode, ts_mode = reader.sniff(head)
    fixed = reader.NA
    m = reader._FF_NAME.search(path.name)
    if m is not None and pid_mode == reader.PID_NONE and not re.search(r"^\[pid ", head, re.M):
        pid_mode, fixed = reader.PID_FIXED, int(m.group(1))
    return pid_mode, ts_mode, fixed


def _canonical(raw: dict[str, Any]) -> dict[str, Any]:
    """Every column with its codes resolved to names (interning order is not part of the result)."""
    out: dict[str, Any] = {}
    for k, names in (("name", "names"), ("errno", "errnos"), ("signal", "signals")):
        table = np.array([*raw[names], None], dtype=object)
        out[k] = table[np.asarray(raw[k], dtype=np.int64)].tolist()
    for k in ("kind", "pid", "retval", "line"):
        out[k] = np.asarray(raw[k]).tolist()
    for k in ("ts", "end", "dur"):  # float seconds: NaN (missing) as None, so that missing equals missing
        out[k] = [None if x != x else x for x in np.asarray(raw[k]).tolist()]
    for k in ("args", "ret_text", "backtrace"):
        out[k] = raw[k].to_pylist()
    for k in ("rejects", "messages", "summary", "lines", "rows"):
        out[k] = raw[k]
    return out


def _one(path: Path) -> dict[str, Any]:
    pid_mode, ts_mode, fixed = _modes(path)
    return _canonical(reader._scan(path.name, path, pid_mode, ts_mode, fixed, True, None, threads=1))


def _parts(path: Path, cuts: list[int], gather: int = 1) -> dict[str, Any] | None:
    """Scanned in pieces cut at ``cuts`` and merged; the strings gathered on ``gather`` threads."""
    pid_mode, ts_mode, fixed = _modes(path)
    done = reader._scan_parts(path, cuts, pid_mode, ts_mode, fixed, None)
    if done is None:
        return None
    parser, tail = done
    return _canonical(reader._with_tail(reader._from_native(parser.finish(gather)), tail))


def _line_starts(path: Path) -> list[int]:
    data = path.read_bytes()
    return [i + 1 for i, c in enumerate(data) if c == 0x0A and i + 1 < len(data) and not data.startswith(b" > ", i + 1)]


def _shapes(tmp: Path) -> list[Path]:
    return [*CAPTURES, _midnight(tmp)]


def test_the_shapes_are_there(tmp_path: Path) -> None:
    names = {p.name for p in _shapes(tmp_path)}
    assert {"threads_futex.txt", "relative_r.txt", "stack_k.txt", "ttt.txt", "killed.txt", "midnight.txt",
            "strace_before.txt"} <= names
    assert sum(1 for n in names if n.startswith("trace.")) >= 2


def test_midnight_capture_rolls_over(tmp_path: Path) -> None:
    f = read_strace(_midnight(tmp_path), threads=1)
    ts = f["timestamp_s"].dropna().to_numpy()
    assert ts.min() < 86400 < ts.max()  # the day goes on past 24 h, no jump back


@pytest.mark.parametrize("path", CAPTURES + [Path("midnight.txt")], ids=lambda p: p.name)
def test_two_pieces_equal_one_scanner_at_every_line(path: Path, tmp_path: Path) -> None:
    """Cut at every line start (not inside a stack): the merged rows are those of one scanner."""
    if path.name == "midnight.txt":
        path = _midnight(tmp_path)
    pid_mode, _, _ = _modes(path)
    if pid_mode == reader.PID_NONE:  # such files are never split: read_strace keeps one scanner
        assert reader._threads_wanted(path, True, pid_mode, threads=2) == 1
        return
    want = _one(path)
    starts = _line_starts(path)
    merged = 0
    for i, cut in enumerate(starts):
        gather = 1 + i % 4  # the strings gathered on 1 to 4 threads, in turn
        got = _parts(path, [cut], gather)
        if got is None:  # a cut inside the -C table: read_strace scans the file in one piece
            continue
        merged += 1
        assert got == want, f"{path.name} cut at byte {cut}, gathered on {gather} threads"
    assert merged >= 0.8 * len(starts), f"only {merged} of {len(starts)} cuts could be joined"


@pytest.mark.parametrize("path", CAPTURES + [Path("midnight.txt")], ids=lambda p: p.name)
def test_three_and_four_pieces_equal_one_scanner(path: Path, tmp_path: Path) -> None:
    if path.name == "midnight.txt":
        path = _midnight(tmp_path)
    if _modes(path)[0] == reader.PID_NONE:
        return
    want = _one(path)
    starts = _line_starts(path)
    rng = random.Random(path.name)
    joined = 0
    for _ in range(60):
        cuts = sorted(rng.sample(starts, rng.choice([2, 3])))
        gather = rng.choice([1, 2, 3, 8])
        got = _parts(path, cuts, gather)
        if got is not None:
            joined += 1
            assert got == want, f"{path.name} cut at bytes {cuts}, gathered on {gather} threads"
    assert joined >= 30


def test_strings_over_many_segments_gathered_on_several_threads(tmp_path: Path) -> None:
    """A file whose text columns fill several 8 MiB string segments: scanned in 2-4 pieces and gathered on
    as many threads (segments are returned to the system as the gather passes them), the frame of one
    scanner; one scanner's strings gathered on several threads, the same columns."""
    from workbench.syscalls import _native

    text = (DATA / "threads_futex.txt").read_text(encoding="latin-1")
    body = text[: text.index("% time")]
    pad = "x" * 1000
    padded = re.sub(r"^(\d+ +[\d:.]+ )(\w+)\(", lambda m: f'{m[1]}{m[2]}("{pad}", ', body, flags=re.M)
    big = tmp_path / "big.txt"
    with open(big, "w", encoding="latin-1") as f:
        for _ in range(60):
            f.write(padded)
    assert big.stat().st_size > 4 * 8 << 20
    one = read_strace(big, threads=1)
    assert one["args"].str.len().sum() > 4 * 8 << 20 and len(one) > 40_000
    for threads in (2, 3, 4):
        pd.testing.assert_frame_equal(read_strace(big, threads=threads), one)
    pid_mode, ts_mode, fixed = _modes(big)
    want = None
    for gather in (1, 2, 5):
        p = _native.Parser(pid_mode, ts_mode, fixed)
        for block in reader._blocks(big):
            p.feed(block)
        got = _canonical(reader._from_native(p.finish(gather)))
        if want is None:
            want = got
        assert got == want, f"gathered on {gather} threads"


@pytest.mark.parametrize("threads", [2, 3])
def test_read_strace_threads_gives_the_same_frame(threads: int, monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    """The whole reader with a tiny size threshold (so every capture is split) against threads=1."""
    monkeypatch.setattr(reader, "PARALLEL_MIN_BYTES", 1)
    for path in _shapes(tmp_path):
        one = read_strace(path, threads=1)
        many = read_strace(path, threads=threads)
        pd.testing.assert_frame_equal(many, one)
        pd.testing.assert_frame_equal(many.attrs["rejects"].frame(), one.attrs["rejects"].frame())
        pd.testing.assert_frame_equal(many.attrs["messages"].frame(), one.attrs["messages"].frame())
        assert many.attrs["lines"] == one.attrs["lines"]
    ff = str(DATA / "ff" / "trace.*")
    pd.testing.assert_frame_equal(read_strace(ff, threads=threads), read_strace(ff, threads=1))


def test_cut_last_line_and_colour_with_threads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(reader, "PARALLEL_MIN_BYTES", 1)
    text = (DATA / "threads_futex.txt").read_bytes()
    body = text[: text.index(b"% time")]
    cut = tmp_path / "cut.txt"
    cut.write_bytes(body + b"19877 06:06:42.999999 read(3, ")
    one, two = read_strace(cut, threads=1), read_strace(cut, threads=2)
    pd.testing.assert_frame_equal(two, one)
    assert two.attrs["rejects"].rows() == one.attrs["rejects"].rows()
    assert one.attrs["rejects"].rows()[-1][3] == reader.INCOMPLETE
    colour = tmp_path / "colour.txt"
    lines = body.splitlines(keepends=True)
    lines[len(lines) * 3 // 4] = b'19877 06:06:42.5 write(1, "\x1b[31mred", 8) = 8\n'
    colour.write_bytes(b"".join(lines))
    from workbench.errors import ParseError

    with pytest.raises(ParseError) as a:
        read_strace(colour, threads=1)
    with pytest.raises(ParseError) as b:
        read_strace(colour, threads=2)
    assert str(a.value) == str(b.value) and f":{len(lines) * 3 // 4 + 1}" in str(b.value)


def test_how_many_threads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes((DATA / "threads_futex.txt").read_bytes())
    pid_mode = _modes(big)[0]
    monkeypatch.setattr(reader, "PARALLEL_MIN_BYTES", big.stat().st_size)
    monkeypatch.delenv("WORKBENCH_THREADS", raising=False)
    assert reader.scan_threads() == reader.cores_available()
    assert reader._threads_wanted(big, True, pid_mode, threads=4) == 4
    assert reader._threads_wanted(big, True, pid_mode, threads=1) == 1
    assert reader._threads_wanted(big, False, pid_mode, threads=4) == 1  # the reference scanner: one
    monkeypatch.setenv("WORKBENCH_THREADS", "1")
    assert reader._threads_wanted(big, True, pid_mode) == 1
    monkeypatch.setenv("WORKBENCH_THREADS", "3")
    assert reader._threads_wanted(big, True, pid_mode) == 3
    monkeypatch.setattr(reader, "PARALLEL_MIN_BYTES", big.stat().st_size + 1)
    assert reader._threads_wanted(big, True, pid_mode) == 1  # too small to pay
    monkeypatch.setenv("WORKBENCH_THREADS", "two")
    with pytest.raises(UsageError, match="WORKBENCH_THREADS"):
        reader.scan_threads()
    with pytest.raises(UsageError, match="threads"):
        read_strace(big, threads=0)


@pytest.mark.parametrize("lines", [3, 40])
def test_to_parquet_on_several_threads_writes_what_one_writes(lines: int, monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    """Chunks scanned ahead by other threads and joined in order: the same rows, rejects and messages."""
    import pyarrow.parquet as pq

    from workbench.syscalls import to_parquet
    from workbench.syscalls.convert import side_path_of

    monkeypatch.setattr(reader, "PARALLEL_MIN_BYTES", 1)
    for path in _shapes(tmp_path):
        one, two = tmp_path / f"{path.name}.1.parquet", tmp_path / f"{path.name}.2.parquet"
        r1 = to_parquet(path, one, row_group_lines=lines, threads=1, progress=False)
        r2 = to_parquet(path, two, row_group_lines=lines, threads=2, progress=False)
        assert (r2.rows, r2.lines, r2.rejects, r2.messages) == (r1.rows, r1.lines, r1.rejects, r1.messages)
        t1, t2 = (pq.read_table(p).sort_by("line").to_pandas() for p in (one, two))
        pd.testing.assert_frame_equal(t2, t1)
        order = [("table", "ascending"), ("line", "ascending")]
        s1, s2 = (pq.read_table(side_path_of(p)).sort_by(order).to_pandas() for p in (one, two))
        pd.testing.assert_frame_equal(s2, s1)
        pd.testing.assert_frame_equal(read_strace(two), read_strace(path, threads=1))
        m1, m2 = (json.loads(pq.read_metadata(p).metadata[b"workbench.strace"]) for p in (one, two))
        assert {**m2, "side": None} == {**m1, "side": None}


def test_to_parquet_reads_a_pipe_as_it_comes(tmp_path: Path) -> None:
    """A plain stream is converted block by block (never read whole): the rows of the file itself."""
    import io

    from workbench.syscalls import to_parquet

    path = DATA / "threads_futex.txt"

    class Pipe(io.RawIOBase):
        def __init__(self, data: bytes) -> None:
            self.data, self.at, self.biggest = data, 0, 0

        def readable(self) -> bool:
            return True

        def read(self, n: int = -1) -> bytes:
            assert n is not None and n > 0, "the converter asked for the whole stream"
            n = min(n, 4096)  # a pipe gives little at a time
            self.biggest = max(self.biggest, n)
            out = self.data[self.at:self.at + n]
            self.at += len(out)
            return out

    pipe = Pipe(path.read_bytes())
    r = to_parquet(pipe, tmp_path / "p.parquet", row_group_lines=100, progress=False)
    assert r.lines == read_strace(path).attrs["lines"] and pipe.at == len(pipe.data)
    pd.testing.assert_frame_equal(read_strace(tmp_path / "p.parquet"), read_strace(path))
