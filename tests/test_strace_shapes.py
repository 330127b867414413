"""read_strace on hand-made inputs: every shape of strace-format.md §1, errors, sources, cache."""
from __future__ import annotations

import io
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from workbench.errors import ParseError, UsageError
from workbench.schema import Rejects, SideTable
from workbench.syscalls import (
    STRACE_SCHEMA,
    duration_histogram,
    native_available,
    read_strace,
    syscall_summary,
)
from workbench.syscalls import _read as reader

SCANNERS = ["reference"] + (["native"] if native_available() else [])


@pytest.fixture(params=SCANNERS)
def read(request):
    native = request.param == "native"

    def _read(src, **kw):
        return read_strace(src, native=native, **kw)

    return _read


def test_schema_columns(read) -> None:
    f = read("1  read(0, \"\", 1) = 0\n")
    assert list(f.columns) == STRACE_SCHEMA.names()
    assert f.attrs["schema"] == "strace_events"


def test_midnight_rollover_and_join_across_it(read) -> None:
    f = read(
        "100   23:59:59.900000 futex(0x1, FUTEX_WAIT, 0, NULL <unfinished ...>\n"
        "101   23:59:59.950000 read(3, \"a\", 1) = 1 <0.000010>\n"
        "100   00:00:00.100000 <... futex resumed>) = 0 <0.200000>\n"
        "101   00:00:01.000000 close(3) = 0\n"
    )
    assert f["timestamp_s"].tolist() == [86399.9, 86399.95, 86401.0]
    fut = f.iloc[0]
    assert fut["kind"] == "call" and fut["args"] == "0x1, FUTEX_WAIT, 0, NULL"
    assert fut["end_timestamp_s"] == pytest.approx(86400.1) and fut["duration_s"] == pytest.approx(0.2)
    assert f.attrs["time_base"] == "midnight"


@pytest.mark.parametrize("resumed", ["<... rt_sigprocmask resumed>NULL, 8) = 0",
                                     "<... rt_sigprocmask resumed> NULL, 8) = 0"])
def test_both_resumed_spacings(read, resumed: str) -> None:
    f = read(f"7  rt_sigprocmask(SIG_SETMASK, [],  <unfinished ...>\n8  getpid() = 8\n7  {resumed}\n")
    assert f["args"].tolist() == ["SIG_SETMASK, [], NULL, 8", ""]
    assert f["kind"].tolist() == ["call", "call"]


def test_return_value_forms(read) -> None:
    f = read(
        "1 umask(022) = 022\n"
        "1 mmap(NULL, 8192) = 0xffffffffffffffff\n"
        "1 brk(NULL) = 0x55e357e27000\n"
        "1 foo(1) = -1 (errno 523) <0.000001>\n"
        "1 open(\"x\", O_RDONLY) = -1 ENOENT (No such file or directory) <0.000007>\n"
        "1 poll([{fd=3, events=POLLIN}], 1, 0) = 1 ([{fd=3, revents=POLLIN}])\n"
        "1 select(4, [3], NULL, NULL, {tv_sec=0, tv_usec=10}) = 0 (Timeout)\n"
        "1 wait4(23113<true>, NULL, 0, NULL) = 23113<true>\n"
        "1 getpid() = 5 /* 1 in strace's PID NS */\n"
        "1 read(3</p/null<char 1:3>>, \"\", 1) = 0\n"
        "1 exit_group(0)           = ?\n"
        "1 +++ exited with 0 +++\n"
    )
    assert f["retval"].tolist()[:11] == [0o22, -1, 0x55E357E27000, -1, -1, 1, 0, 23113, 5, 0, pd.NA]
    assert f["errno"].tolist()[3:5] == ["errno 523", "ENOENT"]
    assert f["ret_text"].tolist()[4] == "-1 ENOENT (No such file or directory)"
    assert f["ret_text"].tolist()[5] == "1 ([{fd=3, revents=POLLIN}])"
    assert f["ret_text"].tolist()[7] == "23113<true>"
    assert f["args"].tolist()[9] == "3</p/null<char 1:3>>, \"\", 1"
    assert f["duration_s"].tolist()[4] == pytest.approx(7e-6)
    assert f["kind"].tolist()[-1] == "exit" and f["retval"].tolist()[-1] == 0


def test_fake_tails_inside_strings_and_paths(read) -> None:
    f = read(
        '5 write(3, "x) = 0 <0.000001>+++ exited with 0 +++", 36) = 36 <0.000002>\n'
        '5 openat(AT_FDCWD</w>, "/t/par) = 3 (x).txt", O_RDONLY) = 3</t/par) = 3 (x).txt> <0.000050>\n'
        '5 close(3</t/par) = 3 (x).txt>) = 0\n'
        '5 connect(4<TCP:[127.0.0.1:1->127.0.0.1:2]>, {sa_family=AF_INET}, 16) = -1 EINPROGRESS (Operation now in progress)\n'
        '5 read(5, "a\\"b) = 7\\n", 10) = 7\n'
    )
    assert f["retval"].tolist() == [36, 3, 0, -1, 7]
    assert f["args"].tolist()[0] == '3, "x) = 0 <0.000001>+++ exited with 0 +++", 36'
    assert f["ret_text"].tolist()[1] == "3</t/par) = 3 (x).txt>"
    assert f["args"].tolist()[2] == "3</t/par) = 3 (x).txt>"
    assert f["errno"].tolist()[3] == "EINPROGRESS"
    assert f["args"].tolist()[4] == '5, "a\\"b) = 7\\n", 10'
    assert f["kind"].eq("call").all() and len(f.attrs["rejects"]) == 0


def test_prefix_flavours(read) -> None:
    f = read("23112<python3> 1796013511.984668 [  59] [00007f2bc01f8ad7] execve(\"/x\", [], 0x1) = 0\n")
    assert f["pid"].tolist() == [23112] and f["syscall"].tolist() == ["execve"]
    assert f["timestamp_s"].tolist() == [1796013511.984668]
    r = read("9       0.000000 a() = 0\n9       0.000123 b() = 0\n9       1.500000 c() = 0\n")
    assert r["timestamp_s"].tolist() == [0.0, 0.000123, 1.500123] and r.attrs["time_base"] == "relative"
    t = read("9 12:00:01 (+     0.000123) d() = 0\n")
    assert t["timestamp_s"].tolist() == [43201.0]
    n = read("12:00:01.123456789 e() = 0 <0.000000010>\n")
    assert n["pid"].isna().all() and n["duration_s"].tolist() == [1e-8]
    assert n["timestamp_s"].tolist() == [43201.123456789]


def test_signals_exits_kills(read) -> None:
    f = read(
        "3 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=4, si_utime=1 /* 0.01 s */} ---\n"
        "4 --- stopped by SIGSTOP ---\n"
        "4 +++ killed by SIGSEGV (core dumped) +++\n"
        "3 +++ exited with 1 +++\n"
    )
    assert f["kind"].tolist() == ["signal", "stopped", "killed", "exit"]
    assert f["signal"].tolist()[:3] == ["SIGCHLD", "SIGSTOP", "SIGSEGV"]
    assert f["args"].tolist()[0].startswith("{si_signo=SIGCHLD")
    assert f["ret_text"].tolist()[2] == "killed by SIGSEGV (core dumped)"
    assert f["retval"].tolist()[3] == 1 and f["syscall"].isna().all()


def test_unfinished_forever_detached_and_died(read) -> None:
    f = read(
        "1 read(0,  <unfinished ...>\n"
        "2 futex(0x1, FUTEX_WAIT, 0, NULL) <detached ...>\n"
        "3 read(4,  <unfinished ...>\n"
        "3 <... read resumed> <unfinished ...>) = ?\n"
        "3 +++ killed by SIGKILL +++\n"
        "4 restart_syscall(<... resuming interrupted read ...> <unfinished ...>\n"
        "4 <... restart_syscall resumed>) = 0\n"
    )
    assert f["kind"].tolist() == ["unfinished", "unfinished", "call", "killed", "call"]
    assert f["ret_text"].tolist()[:3] == ["<unfinished ...>", "<detached ...>", "?"]
    assert f["args"].tolist()[4] == "<... resuming interrupted read ...>"
    s = syscall_summary(f)
    assert s.set_index("syscall")["calls"].to_dict() == {"restart_syscall": 1}


def test_stderr_mode_pid_inference_and_splice(read) -> None:
    f = read(
        "execve(\"/x\", [], 0x1) = 0\n"
        "clone3({flags=CLONE_VM}strace: Process 11 attached\n"
        " => {parent_tid=[11]}, 88) = 11\n"
        "[pid    11] getpid() = 11\n"
        "[pid    10] futex(0x1, FUTEX_WAIT, 0, NULL <unfinished ...>\n"
        "[pid    11] +++ exited with 0 +++\n"
        "<... futex resumed>) = 0\n"
        "exit_group(0) = ?\n"
        "+++ exited with 0 +++\n"
    )
    assert f["pid"].tolist() == [10, 10, 11, 10, 11, 10, 10]
    assert f["args"].tolist()[1] == "{flags=CLONE_VM} => {parent_tid=[11]}, 88"
    assert f["kind"].tolist()[3] == "call" and f["line"].tolist()[1] == 2
    assert f.attrs["messages"].frame()["text"].tolist() == ["strace: Process 11 attached"]


def test_stack_frames(read) -> None:
    f = read("1 getpid() = 1\n > /lib/libc.so.6(getpid+0x7) [0xe7]\n > /bin/x() [0x10]\n2 getpid() = 2\n")
    assert f["backtrace"].tolist()[0] == "/lib/libc.so.6(getpid+0x7) [0xe7]\n/bin/x() [0x10]"
    assert pd.isna(f["backtrace"].tolist()[1])


def test_rejects_are_kept_and_strict_raises(read) -> None:
    text = "1 getpid() = 1\nthis is not strace\n1 read(0, \"\", 1\n > orphan\n"
    f = read(text)
    assert len(f.attrs["rejects"]) == 2
    rj = f.attrs["rejects"].frame()
    assert rj["line"].tolist() == [2, 3] and rj["source"].eq("<text>").all()
    assert "expected a pid prefix" in rj["reason"].iloc[0]
    assert "no return value" in rj["reason"].iloc[1]
    assert len(f) == 1 and f["backtrace"].iloc[0] == "orphan"
    with pytest.raises(ParseError) as e:
        read(text, strict=True)
    assert e.value.line == 2 and e.value.source == "<text>" and "this is not strace" in str(e.value)


def test_colour_escapes_are_refused(read) -> None:
    with pytest.raises(ParseError, match="colour"):
        read('1 getpid() = 1\n1 write(1, "\x1b[31mred", 8) = 8\n')


def test_summary_table_skips_rows_that_are_not_table_rows(read) -> None:
    """After a '% time' header anything may follow in a damaged trace; only real table rows count."""
    text = ("1 getpid() = 1\n"
            "% time     seconds  usecs/call     calls    errors syscall\n"
            "100 0.5 1 2 [00007f2bc01f8ad7] getpid(x)\n"
            "100.00    0.000010          10         1           getpid\n"
            "100.00    0.000010          10         1           total\n")
    f = read(text, check_summary=False)
    assert f.attrs["strace_summary"].frame().to_dict("records") == [
        {"syscall": "getpid", "calls": 1, "errors": 0, "seconds": 1e-05}]


def test_summary_check_reports_mismatch(read, tmp_path) -> None:
    table = ("% time     seconds  usecs/call     calls    errors syscall\n"
             "------ ----------- ----------- --------- --------- ----------------\n"
             "100.00    0.000010          10         2         1 openat\n"
             "------ ----------- ----------- --------- --------- ----------------\n"
             "100.00    0.000010          10         2         1 total\n")
    good = "1 openat(AT_FDCWD, \"a\", O_RDONLY) = 3\n1 openat(AT_FDCWD, \"b\", O_RDONLY) = -1 ENOENT (x)\n"
    f = read(good + table)
    assert len(f.attrs["summary_mismatches"]) == 0 and len(f.attrs["rejects"]) == 0
    assert f.attrs["strace_summary"].frame()["calls"].tolist() == [2]
    bad = good.replace("= 3", "= -1 EACCES (y)")
    with pytest.warns(UserWarning, match="differ from the trace's own -C summary"):
        g = read(bad + table)
    assert g.attrs["summary_mismatches"].frame().to_dict("records") == [
        {"syscall": "openat", "calls_strace": 2, "calls_parsed": 2, "errors_strace": 1, "errors_parsed": 2}]
    with pytest.raises(ParseError, match="summary"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read(bad + table, strict=True)
    p = tmp_path / "bad.strace"
    p.write_text(bad + table)
    with pytest.raises(ParseError, match=r"bad\.strace: parsed per-syscall counts differ") as e, \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read(p, strict=True)
    assert e.value.source == str(p)


def test_sources_text_stream_path_list(read, tmp_path) -> None:
    text = "1 getpid() = 1\n1 getppid() = 0\n"
    a = read(text)
    b = read(io.StringIO(text))
    c = read(io.BytesIO(text.encode()))
    p = tmp_path / "t.txt"
    p.write_text(text)
    d = read(p)
    e = read([str(p)])
    for x in (b, c, d, e):
        pd.testing.assert_frame_equal(a, x)
    assert len(a) == 2
    with pytest.raises(FileNotFoundError):
        read(tmp_path / "nope.txt")


def test_last_line_without_newline_is_rejected_from_files_and_streams(read, tmp_path) -> None:
    text = "1 getpid() = 1\n1 getppid() = 0"  # no final newline
    assert len(read(text)) == 2 and len(read(text).attrs["rejects"]) == 0  # inline text is whole
    p = tmp_path / "t.txt"
    p.write_text(text)
    for x in (read(io.StringIO(text)), read(io.BytesIO(text.encode())), read(p)):
        assert x["syscall"].astype(str).tolist() == ["getpid"]
        assert x.attrs["rejects"].rows()[0][1:] == (2, "1 getppid() = 0", "incomplete last line")
        assert x.attrs["lines"] == 2


def test_small_blocks_give_the_same_frame(read, monkeypatch, tmp_path) -> None:
    lines = []
    for i in range(300):
        lines.append(f"{i % 3}  10:00:{i % 60:02d}.{i:06d} futex(0x{i:x}, FUTEX_WAIT, 0, NULL <unfinished ...>")
        lines.append(f"{(i + 1) % 3}  10:00:{i % 60:02d}.{i:06d} read(3, \"{'x' * (i % 7)}\", 9) = {i % 7} <0.000001>")
        lines.append(f"{i % 3}  10:00:{i % 60:02d}.{i:06d} <... futex resumed>) = 0 <0.001000>")
    p = tmp_path / "big.txt"
    p.write_text("\n".join(lines) + "\n")
    whole = read(p)
    monkeypatch.setattr(reader, "BLOCK_BYTES", 97)
    pd.testing.assert_frame_equal(whole, read(p))
    assert (whole["kind"] == "call").all() and len(whole) == 600


def test_latin1_bytes_survive(read) -> None:
    f = read(io.BytesIO(b'1 openat(AT_FDCWD, "caf\xe9", O_RDONLY) = 3\n'))
    assert f["args"].iloc[0] == 'AT_FDCWD, "café", O_RDONLY'


def test_native_required_but_missing(monkeypatch) -> None:
    monkeypatch.setattr(reader, "_native", None)
    with pytest.raises(UsageError, match=r"native=True\): the C strace scanner is not built"):
        read_strace("1 getpid() = 1\n", native=True)
    assert read_strace("1 getpid() = 1\n").shape[0] == 1  # falls back


def test_env_var_disables_native(monkeypatch) -> None:
    monkeypatch.setenv("WORKBENCH_NO_NATIVE", "1")
    assert not native_available()


def _same_attrs(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert a.attrs.keys() == b.attrs.keys()
    for k, v in a.attrs.items():
        w = b.attrs[k]
        assert type(v) is type(w) and v == w, k
        if isinstance(v, SideTable):
            pd.testing.assert_frame_equal(v.frame(), w.frame())


def test_cache_roundtrip_skips_parsing(read, tmp_path, monkeypatch) -> None:
    p = tmp_path / "t.txt"
    p.write_text("1 getpid() = 1\n1 read(0, \"\", 1) = -1 EAGAIN (x) <0.000002>\n > f() [0x1]\nbad line\n"
                 "strace: Process 1 detached\n"
                 "% time     seconds  usecs/call     calls    errors syscall\n"
                 "100.00    0.000010          10         1           getpid\n"
                 "100.00    0.000010          10         1         1 read\n"
                 "100.00    0.000010          10         2         1 total\n")
    a = read(p, cache=tmp_path / "c")
    assert isinstance(a.attrs["rejects"], Rejects) and len(a.attrs["rejects"]) == 1
    assert isinstance(a.attrs["messages"], SideTable) and len(a.attrs["messages"]) == 1
    assert len(a.attrs["strace_summary"]) == 2 and len(a.attrs["summary_mismatches"]) == 0
    assert len(list((tmp_path / "c").glob("*.arrow"))) == 1  # one file per entry
    monkeypatch.setattr(reader, "parse_one", lambda *a, **k: (_ for _ in ()).throw(AssertionError("parsed")))
    b = read(p, cache=tmp_path / "c")
    pd.testing.assert_frame_equal(a, b)
    for c in ("kind", "syscall", "errno", "signal"):  # categories exactly as parsed (object, same order)
        pd.testing.assert_index_equal(a[c].cat.categories, b[c].cat.categories, exact=True)
    _same_attrs(a, b)
    with pytest.raises(ParseError) as e:  # strict holds on a cache hit too
        read(p, cache=tmp_path / "c", strict=True)
    assert e.value.line == 4 and e.value.text == "bad line"
    p.write_text("1 getpid() = 2\n")  # new content: new key, parsed again
    with pytest.raises(AssertionError, match="parsed"):
        read(p, cache=tmp_path / "c")


def test_cache_key_holds_the_file_names(read, tmp_path) -> None:
    """The same bytes under another name (another -ff pid, another source in rejects) are parsed again."""
    text = "12.5 getpid() = 1\nnot strace\n"
    for name in ("trace.100", "trace.200"):
        (tmp_path / name).write_text(text)
    a = read(tmp_path / "trace.100", cache=tmp_path / "c")
    b = read(tmp_path / "trace.200", cache=tmp_path / "c")
    assert a["pid"].tolist() == [100] and b["pid"].tolist() == [200]
    assert a.attrs["rejects"].frame()["source"].tolist() == [str(tmp_path / "trace.100")]
    assert b.attrs["rejects"].frame()["source"].tolist() == [str(tmp_path / "trace.200")]
    _same_attrs(b, read(tmp_path / "trace.200"))


def test_forced_modes_are_checked() -> None:
    with pytest.raises(UsageError, match=r"pid_prefix='pid'.*'column', 'none'"):
        read_strace("1 getpid() = 1\n", pid_prefix="pid")
    with pytest.raises(UsageError, match=r"timestamps='ttt'.*'epoch'"):
        read_strace("1 getpid() = 1\n", timestamps="ttt")
    f = read_strace("1 getpid() = 1\n", pid_prefix="none", timestamps="none")
    assert len(f) == 0 and f.attrs["rejects"].rows()[0][3] == "expected a system call, signal, exit or resumed line"


def test_dask_needs_files(tmp_path) -> None:
    with pytest.raises(UsageError, match=r'engine="dask"\) reads files: <text> is not a file'):
        read_strace("1 getpid() = 1\n", engine="dask")
    with pytest.raises(UsageError, match=r'engine="dask"\) reads files: <stream> is not a file'):
        read_strace(io.StringIO("1 getpid() = 1\n"), engine="dask")


def test_summaries_and_histogram(read) -> None:
    lines = [f"1 futex(0x1, FUTEX_WAIT, 0, NULL) = 0 <{d:.6f}>" for d in (0.25, 0.25, 0.5, 1.0)]
    lines += ["1 read(0, \"\", 1) = -1 EAGAIN (x) <0.000001>", "1 read(0, \"\", 1) = 0 <0.000003>",
              "1 exit_group(0) = ?"]
    f = read("\n".join(lines) + "\n")
    s = syscall_summary(f).set_index("syscall")
    assert s.loc["futex", "calls"] == 4 and s.loc["futex", "total_s"] == pytest.approx(2.0)
    assert s.loc["futex", "median_s"] == pytest.approx(0.375) and s.loc["read", "errors"] == 1
    assert "exit_group" not in s.index and list(s.index[:1]) == ["futex"]
    h = duration_histogram(f, bins_per_decade=4)
    fut = h[h["syscall"] == "futex"]
    assert fut["count"].sum() == 4 and h["count"].sum() == 6
    peaks = fut[fut["count"] > 0]
    assert all(lo <= 0.25 < hi for lo, hi in zip(peaks["bin_lo_s"][:1], peaks["bin_hi_s"][:1], strict=True))
    assert np.allclose(np.log10(fut["bin_hi_s"] / fut["bin_lo_s"]), 0.25)
    assert math.isclose(fut["bin_lo_s"].iloc[0], 1e-7)


def test_progress_bar_and_default_cache_dir(read, tmp_path, monkeypatch, capsys) -> None:
    p = tmp_path / "t.txt"
    p.write_text("1 getpid() = 1\n" * 50)
    f = read(p, progress=True)
    assert len(f) == 50
    assert "strace t.txt" in capsys.readouterr().err
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cachehome"))
    g = read(p, cache=True)
    assert any((tmp_path / "cachehome" / "strace").glob("*.arrow"))
    pd.testing.assert_frame_equal(f, g)


def test_relative_stamps_across_a_spliced_message(read) -> None:
    f = read(
        "     0.000100 execve(\"/x\", [], 0x1) = 0\n"
        "     0.000200 clone3({flags=CLONE_VM}strace: Process 11 attached\n"
        " => {parent_tid=[11]}, 88) = 11\n"
        "[pid    11]      0.000300 getpid() = 11\n"
    )
    assert f["timestamp_s"].tolist() == pytest.approx([0.0001, 0.0003, 0.0006])
    # pid 11 was announced as attached, so it is a child: the leader's pid is never printed here
    assert f["pid"].isna().tolist() == [True, True, False] and f["pid"].iloc[2] == 11
