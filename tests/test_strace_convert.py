"""strace → Parquet in bounded memory: read back, the frame and rejects equal read_strace's exactly."""
from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from workbench.errors import InputNotFoundError, ParseError, UsageError
from workbench.syscalls import native_available, read_strace, to_parquet
from workbench.syscalls.convert import side_path_of

from .conftest import ROOT

pytestmark = pytest.mark.skipif(not native_available(), reason="the converter needs the C scanner")

DATA = ROOT / "tests" / "data" / "strace"
CAPTURES = (sorted(DATA.glob("*.txt")) + sorted((DATA / "ff").glob("trace.*"))
            + sorted((ROOT / "data" / "01_quantized_latency" / "lab").glob("strace_*.txt")))
ATTRS = ("time_base", "time_base_from", "lines", "strace_summary", "summary_mismatches", "rejects", "messages")

# rejected lines (a stack frame before any record, garbage, an unknown '+++' line), a record cut by a
# message (spliced), a resumed half whose call was never seen, calls unfinished over many lines
BROKEN = (
    " > /lib/libc.so(x+0x1) [0x1]\n"
    "12 10:00:00.000001 futex(0x1, FUTEX_WAIT, 0, NULL <unfinished ...>\n"
    "this is not strace\n"
    "13 10:00:00.000002 read(3, <unfinished ...>\n"
    "14 10:00:00.000003 <... write resumed>) = 1 <0.000001>\n"
    "13 10:00:00.000004 <... read resumed>\"ab\", 2) = 2 <0.000003>\n"
    "15 10:00:00.000005 +++ wobbled +++\n"
    "16 10:00:00.000006 clone(child_stack=NULL, strace: Process 17 attached\n"
    "flags=CLONE_VM) = 17 <0.000010>\n"
    "12 10:00:00.000007 <... futex resumed>) = 0 <0.000006>\n"
    "12 10:00:00.000008 +++ exited with 0 +++\n"
)


def _read(source, **kw) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a -C mismatch warns the same on both sides; the attrs compare it
        return read_strace(source, **kw)


def _assert_same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    for key in ATTRS:
        assert got.attrs.get(key) == want.attrs.get(key), key


@pytest.mark.parametrize("lines", [1, 3, 1 << 20])
@pytest.mark.parametrize("path", CAPTURES, ids=[f"{p.parent.name}/{p.name}" for p in CAPTURES])
def test_read_back_equals_read_strace_exactly(path: Path, lines: int, tmp_path: Path) -> None:
    out = tmp_path / "trace.parquet"
    result = to_parquet(path, out, row_group_lines=lines)
    want = _read(path)
    got = _read(out)
    _assert_same(got, want)
    assert (result.rows, result.lines) == (len(want), want.attrs["lines"])
    assert result.rejects == len(want.attrs["rejects"])
    if lines == 1:  # a chunk boundary after every line: the row groups are small
        assert result.row_groups >= len(want) // 2


def test_unfinished_calls_are_carried_over_chunk_boundaries(tmp_path: Path) -> None:
    path = DATA / "threads_futex.txt"
    want = _read(path)
    text = path.read_text()
    assert "<unfinished ...>" in text and "resumed>" in text
    result = to_parquet(path, tmp_path / "t.parquet", row_group_lines=1)
    # with one line per chunk the scanner gives out all but the calls still open and the last row:
    # several futex waits were open at once and held over many boundaries, then joined
    assert result.peak_rows_held >= 4
    got = _read(tmp_path / "t.parquet")
    joined = got[(got["kind"] == "call") & (got["end_timestamp_s"] > got["timestamp_s"])]
    assert len(joined) > 10
    _assert_same(got, want)


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_read_back_on_any_number_of_threads_and_through_the_gather(threads: int, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows held back over chunk boundaries put back in trace order whether the row groups are decoded
    one at a time, several at once, or (rows too far out of order for runs) decoded whole and gathered."""
    from workbench.syscalls import convert

    path = DATA / "threads_futex.txt"
    want = _read(path)
    out = tmp_path / "t.parquet"
    to_parquet(path, out, row_group_lines=3)
    lines = pq.read_table(out, columns=["line"]).column("line").to_numpy()
    assert (np.diff(lines) < 0).sum() >= 3  # the file's rows are out of trace order in places
    _assert_same(_read(out, threads=threads), want)
    cols = ["line", "syscall", "retval", "args"]
    pd.testing.assert_frame_equal(_read(out, threads=threads, columns=cols), want[cols], check_exact=True)
    monkeypatch.setattr(convert, "sorted_runs", lambda keys: None)  # too many runs: the gather's way
    _assert_same(_read(out, threads=threads), want)


@pytest.mark.parametrize("lines", [1, 2, 4, 100])
def test_rejects_messages_and_splices_are_kept(lines: int, tmp_path: Path) -> None:
    want = _read(BROKEN)
    assert len(want.attrs["rejects"]) == 3 and len(want.attrs["messages"]) == 1
    to_parquet(BROKEN, tmp_path / "b.parquet", row_group_lines=lines)
    got = _read(tmp_path / "b.parquet")
    _assert_same(got, want)
    with pytest.raises(ParseError) as strict_conv:
        _read(tmp_path / "b.parquet", strict=True)
    with pytest.raises(ParseError) as strict_text:
        _read(BROKEN, strict=True)
    assert str(strict_conv.value) == str(strict_text.value)


def test_compressed_trace(tmp_path: Path) -> None:
    gz = tmp_path / "killed.txt.gz"
    gz.write_bytes(gzip.compress((DATA / "killed.txt").read_bytes()))
    to_parquet(gz, tmp_path / "k.parquet", row_group_lines=5, progress=True)  # size unknown: a bar without total
    _assert_same(_read(tmp_path / "k.parquet"), _read(gz))


def _big_trace(path: Path, copies: int) -> int:
    """The capture's records (its -C table left out) ``copies`` times over; returns the line count."""
    lines = (DATA / "threads_futex.txt").read_text().splitlines(keepends=True)
    body = "".join(lines[:next(i for i, ln in enumerate(lines) if ln.startswith("% time"))])
    path.write_text(body * copies)
    return body.count("\n") * copies


def test_memory_stays_bounded_on_a_big_trace(tmp_path: Path) -> None:
    src = tmp_path / "big.txt"
    n_lines = _big_trace(src, 450)
    assert n_lines > 300_000
    chunk = 1000
    result = to_parquet(src, tmp_path / "big.parquet", row_group_lines=chunk)
    assert result.lines == n_lines
    # never more than one chunk's rows plus the few calls still open (the trace has 5 threads)
    assert result.peak_rows_held <= chunk + 16
    assert result.row_groups >= n_lines // chunk
    want = _read(src)
    assert result.rows == len(want) > 250_000
    pd.testing.assert_frame_equal(_read(tmp_path / "big.parquet"), want, check_exact=True)


def test_columns_and_filters(tmp_path: Path) -> None:
    path = DATA / "threads_futex.txt"
    out = tmp_path / "t.parquet"
    to_parquet(path, out, row_group_lines=50)
    full = _read(path)
    t0, t1 = full["timestamp_s"].quantile([0.25, 0.75])
    pid = int(full["pid"].dropna().mode()[0])
    cases = [
        ([("syscall", "in", ["futex", "write"])], full["syscall"].isin(["futex", "write"])),
        ([("pid", "=", pid)], full["pid"] == pid),
        ([("timestamp_s", ">=", t0), ("timestamp_s", "<", t1)], (full["timestamp_s"] >= t0) & (full["timestamp_s"] < t1)),
        ([("duration_s", ">=", 0.001)], full["duration_s"] >= 0.001),
        ([[("syscall", "=", "futex"), ("duration_s", ">=", 0.01)], [("kind", "=", "exit")]],
         ((full["syscall"] == "futex") & (full["duration_s"] >= 0.01)) | (full["kind"] == "exit")),
    ]
    for filters, mask in cases:
        want = full[mask.fillna(False).astype(bool)].reset_index(drop=True)
        assert 0 < len(want) < len(full), filters
        got = _read(out, filters=filters)
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        assert got.attrs["summary_mismatches"] is None  # a part is not compared with the -C table
    got = _read(out, columns=["syscall", "duration_s"], filters=[("syscall", "=", "futex")])
    assert list(got.columns) == ["syscall", "duration_s"]
    want = full.loc[full["syscall"] == "futex", ["syscall", "duration_s"]].reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_converted_trace_through_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """cache= on a converted trace: the first load decodes the Parquet and stores it; the next one maps the
    entry (the Parquet is not decoded) and gives the same frame and attrs; a part has its own entry."""
    import workbench.syscalls.convert as C

    out = tmp_path / "t.parquet"
    to_parquet(ROOT / "tests" / "data" / "strace" / "threads_futex.txt", out, row_group_lines=50)
    want = _read(out)
    part = _read(out, columns=["syscall", "duration_s"], filters=[("syscall", "=", "futex")])
    _assert_same(_read(out, cache=tmp_path / "c"), want)
    _read(out, cache=tmp_path / "c", columns=["syscall", "duration_s"], filters=[("syscall", "=", "futex")])
    assert len(list((tmp_path / "c").glob("*.arrow"))) == 2

    def no_decode(*_: object, **__: object) -> None:
        raise AssertionError("the Parquet was decoded again")

    monkeypatch.setattr(C, "read_converted", no_decode)
    _assert_same(_read(out, cache=tmp_path / "c"), want)
    pd.testing.assert_frame_equal(_read(out, cache=tmp_path / "c", columns=["syscall", "duration_s"],
                                        filters=[("syscall", "=", "futex")]), part, check_exact=True)


def test_converted_trace_through_the_cache_checks_the_summary_again(tmp_path: Path) -> None:
    """A hit on a converted trace whose -C table disagrees with its rows warns as a decode does, and
    strict=True raises."""
    table = ("% time     seconds  usecs/call     calls    errors syscall\n"
             "------ ----------- ----------- --------- --------- ----------------\n"
             "100.00    0.000010          10         2         1 openat\n"
             "------ ----------- ----------- --------- --------- ----------------\n"
             "100.00    0.000010          10         2         1 total\n")
    trace = tmp_path / "bad.strace"
    trace.write_text("1 openat(AT_FDCWD, \"a\", O_RDONLY) = -1 EACCES (y)\n"
                     "1 openat(AT_FDCWD, \"b\", O_RDONLY) = -1 ENOENT (x)\n" + table)
    out = tmp_path / "bad.parquet"
    to_parquet(trace, out)
    for _ in range(2):  # the decode that stores the entry, then the hit
        with pytest.warns(UserWarning, match="differ from the trace's own -C summary"):
            f = read_strace(out, cache=tmp_path / "c")
        assert len(f.attrs["summary_mismatches"]) == 1
    assert len(list((tmp_path / "c").glob("*.arrow"))) == 1
    with pytest.raises(ParseError, match="summary"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read_strace(out, cache=tmp_path / "c", strict=True)


def test_pid_filter_sees_pids_filled_in_later(tmp_path: Path) -> None:
    path = DATA / "stderr_mode.txt"  # no pid prefix until a second thread starts
    out = tmp_path / "s.parquet"
    to_parquet(path, out, row_group_lines=2)
    full = _read(path)
    leader = int(full["pid"].iloc[0])
    want = full[full["pid"] == leader].reset_index(drop=True)
    pd.testing.assert_frame_equal(_read(out, filters=[("pid", "=", leader)]), want, check_exact=True)
    assert full["pid"].notna().all() and (full["pid"] == leader).sum() > 1
    some = [("pid", "=", leader), ("duration_s", ">=", 0.0)]
    want = full[(full["pid"] == leader) & (full["duration_s"] >= 0)].reset_index(drop=True)[["syscall", "args"]]
    assert len(want) > 5
    for filters in (some, [some], pq.filters_to_expression(some)):  # (an Expression: every column decoded)
        got = _read(out, columns=["syscall", "args"], filters=filters)
        pd.testing.assert_frame_equal(got, want, check_exact=True)


@pytest.mark.parametrize("columns", [None, ["pid", "syscall"], ["syscall", "line", "pid"]])
def test_pids_filled_in_later_without_filters(columns: list[str] | None, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole load of a trace whose first lines have no pid fills them in on the row groups' way."""
    from workbench.syscalls import convert

    out = tmp_path / "s.parquet"
    to_parquet(DATA / "stderr_mode.txt", out, row_group_lines=2)
    assert convert._meta(out)["leader"] is not None
    full = _read(DATA / "stderr_mode.txt")
    gathered = convert._gathered
    monkeypatch.setattr(convert, "_gathered", None)  # (the decode-whole-then-gather way is not taken)
    for _way in ("row groups", "gather"):
        got = _read(out, columns=columns)
        if columns is None:
            _assert_same(got, full)
        else:
            pd.testing.assert_frame_equal(got, full[columns], check_exact=True)
        monkeypatch.setattr(convert, "_gathered", gathered)
        monkeypatch.setattr(convert, "sorted_runs", lambda keys: None)  # too many runs: the gather's way


def test_errors(tmp_path: Path) -> None:
    out = tmp_path / "c.parquet"
    with pytest.raises(ParseError, match="colour"):
        to_parquet('1 getpid() = 1\n1 write(1, "\x1b[31mred", 8) = 8\n', out, row_group_lines=1)
    assert list(tmp_path.iterdir()) == []  # nothing half-written is left
    with pytest.raises(UsageError, match="row_group_lines"):
        to_parquet(DATA / "single.txt", out, row_group_lines=0)
    with pytest.raises(UsageError, match="convert"):
        read_strace(DATA / "single.txt", filters=[("syscall", "=", "read")])
    to_parquet(DATA / "single.txt", out)
    with pytest.raises(UsageError, match="no column 'sycall'"):
        read_strace(out, columns=["sycall"])
    with pytest.raises(UsageError, match="filters"):
        read_strace(out, filters=[("nope", "=", 1)])
    side_path_of(out).unlink()  # (nothing rejected, no message: the side file is not needed)
    pd.testing.assert_frame_equal(read_strace(out), read_strace(DATA / "single.txt"))
    to_parquet("1 getpid() = 1\nnot a line of strace\n", out)
    side_path_of(out).unlink()
    with pytest.raises(InputNotFoundError, match="side file"):
        read_strace(out)
    other = tmp_path / "other.parquet"
    pd.DataFrame({"a": [1]}).to_parquet(other)
    with pytest.raises(ParseError, match="to_parquet"):
        read_strace(other)


def test_damaged_converted_traces(tmp_path: Path) -> None:
    """Bytes broken inside the row groups, or a name the metadata does not list: a ParseError naming the file."""
    import json

    from workbench.syscalls.convert import META_KEY

    out = tmp_path / "t.parquet"
    to_parquet(DATA / "threads_futex.txt", out, row_group_lines=50)
    data = bytearray(out.read_bytes())
    meta = pq.read_metadata(out)
    start = meta.row_group(1).column(0).data_page_offset
    data[start:start + 200] = b"\xff" * 200  # a page of the second row group, the footer untouched
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(bytes(data))
    with pytest.raises(ParseError, match="(?s)broken.parquet: damaged Parquet file.*convert the trace again"):
        read_strace(broken)

    table = pq.read_table(out)
    info = json.loads(pq.read_metadata(out).metadata[META_KEY])
    info["categories"]["names"].remove("futex")
    with pq.ParquetWriter(out, table.schema) as writer:
        writer.write_table(table, row_group_size=100)
        writer.add_key_value_metadata({META_KEY: json.dumps(info).encode()})
    for threads in (1, 2):
        with pytest.raises(ParseError, match="t.parquet.*does not list.*futex"):
            read_strace(out, threads=threads)


def test_command_line_convert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.cli import main

    out = tmp_path / "k.parquet"
    assert main(["strace", "convert", str(DATA / "killed.txt"), "-o", str(out), "--row-group-lines", "4",
                 "-q"]) == 0
    printed = capsys.readouterr().out
    want = _read(DATA / "killed.txt")
    assert f"{len(want)} rows from {want.attrs['lines']} lines" in printed
    _assert_same(_read(out), want)
    assert main(["strace", "convert", str(tmp_path / "missing.txt")]) == 2
    assert "no trace file" in capsys.readouterr().err


@pytest.mark.parametrize("text", [
    "",
    "12 10:00:00.000001 getpid() = 12 <0.000001>",  # no newline at the end
    "12 10:00:00.000001 futex(0x1, FUTEX_WAIT, 0, NULL <unfinished ...>\n13 10:00:01.0 read(3, \"\", 1) = 0 <0.1>\n"
    "12 10:00:02.0 <... futex resumed>) = 0 <2.0>",
], ids=["empty", "no-final-newline", "resumed-on-last-line"])
def test_edges(text: str, tmp_path: Path) -> None:
    src = tmp_path / "t.txt"
    src.write_text(text)
    want = _read(src)
    for lines in (1, 2, 100):
        to_parquet(src, tmp_path / "t.parquet", row_group_lines=lines)
        _assert_same(_read(tmp_path / "t.parquet"), want)
    assert want.attrs["lines"] == (text.count("\n") + 1 if text else 0)


@pytest.mark.parametrize("filters", [None, [("line", ">=", 0)]])
def test_text_with_no_value_holds_no_decoded_offsets(filters: list | None, tmp_path: Path) -> None:
    """A trace without -k: its backtrace column, loaded whole or filtered, holds no 8 bytes a row of
    decoded offsets (shared zeros instead), and reads as every row null."""
    import pyarrow as pa

    rows = 200_000
    trace = tmp_path / "t.strace"
    trace.write_text("".join(f"12:00:00.{i % 1000000:06d} getpid() = 1 <0.000001>\n" for i in range(rows)))
    out = to_parquet(trace, tmp_path / "t.parquet", progress=False).path
    from workbench.row_groups import decode_pool

    # a whole load decodes into decode_pool(), a filtered one into the default pool
    pools = {p.backend_name: p for p in (pa.default_memory_pool(), decode_pool())}.values()
    before = sum(p.bytes_allocated() for p in pools)
    frame = read_strace(out, columns=["backtrace"], filters=filters)
    held = sum(p.bytes_allocated() for p in pools) - before
    assert len(frame) == rows and frame["backtrace"].isna().all()
    assert held < rows  # (decoded offsets alone: 8 bytes a row)
