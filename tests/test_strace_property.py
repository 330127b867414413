"""Generated traces: fields survive a render → parse round trip, and both scanners agree on anything."""
from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.syscalls import native_available, read_strace

NATIVE = native_available()
SETTINGS = settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])

NAMES = ["read", "write", "openat", "futex", "clone3", "rt_sigprocmask", "_llseek", "syscall_0x1b6"]
ARG_TOKENS = [
    "NULL", "0", "-1", "0x7ffe2c3d4e50 /* 35 vars */", "O_RDONLY|O_CLOEXEC", "{a=1, b=[2, 3]}",
    "3</p/a) = 3 (x).txt>", "AT_FDCWD</w>", "4<TCP:[127.0.0.1:1->127.0.0.1:2]>", "5<UNIX:[7->8,\"/s\"]>",
    "3</p/null<char 1:3>>", "[{WIFSIGNALED(s) && WTERMSIG(s) == SIGKILL}]", "{...} => {parent_tid=[9]}",
    "~[RTMIN RT_1]", "makedev(0x1, 0x3)", "htons(80)", "[16]", "\"x\"...",
]
RETURNS = [  # (ret_text, retval, errno)
    ("0", 0, None), ("3", 3, None), ("-1 ENOENT (No such file or directory)", -1, "ENOENT"),
    ("0x7f12ab000000", 0x7F12AB000000, None), ("? ERESTARTSYS (To be restarted if SA_RESTART is set)", None,
                                                  "ERESTARTSYS"),
    ("3</p/x) = 4>", 3, None), ("1 ([{fd=3, revents=POLLIN}])", 1, None), ("022", 0o22, None),
    ("-1 (errno 523)", -1, "errno 523"), ("0 (Timeout)", 0, None), ("?", None, None),
    ("-1 EAGAIN (Resource temporarily unavailable)", -1, "EAGAIN"), ("1234<sh>", 1234, None),
]


def quote(raw: str) -> str:
    """A C string the way strace prints it."""
    out = []
    for ch in raw:
        o = ord(ch)
        if ch in "\"\\":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20 or o > 0x7E:
            out.append(f"\\{o & 0xff:o}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


strings = st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=0x17f), max_size=20).map(quote)
tricky = st.sampled_from(['"x) = 0 <0.000001>"', '"+++ exited with 0 +++"', '"--- SIGCHLD ---"',
                          '"<... read resumed>"', '" <unfinished ...>"', '"a) = -1 E (b)"'])
arg = st.one_of(st.sampled_from(ARG_TOKENS), strings, tricky)
arg_lists = st.lists(arg, max_size=5)


@st.composite
def traces(draw):
    """(text, expected rows or None, pid_mode) for a trace with calls, split calls, signals, exits."""
    pid_mode = draw(st.sampled_from(["column", "none"]))
    ts_mode = draw(st.sampled_from(["none", "t", "tt", "ttt", "ns", "r"]))
    bracket = draw(st.booleans())
    frames = draw(st.booleans())
    pids = [100, 2345, 67890] if pid_mode == "column" else [None]
    n = draw(st.integers(1, 30))
    t_us = draw(st.integers(0, 86_000 * 10**6))
    rel_ns = 0
    lines, rows = [], []
    pending: dict = {}
    for _ in range(n):
        pid = draw(st.sampled_from(pids))
        kind = draw(st.sampled_from(["call", "call", "split", "signal", "exit"]))
        if kind == "exit" and pid in pending:
            kind = "signal"  # a thread with a call in flight does not exit in these traces
        t_us += draw(st.integers(0, 2_000_000))
        delta = draw(st.integers(0, 3_000_000))
        if ts_mode == "t":
            stamp, ns = f"{t_us // 3_600_000_000 % 24:02d}:{t_us // 60_000_000 % 60:02d}:{t_us // 10**6 % 60:02d} ", t_us // 10**6 * 10**9
        elif ts_mode == "tt":
            s = t_us // 10**6
            stamp, ns = f"{s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{t_us % 10**6:06d} ", t_us * 1000
        elif ts_mode == "ttt":
            e = 1_700_000_000 * 10**6 + t_us
            stamp, ns = f"{e // 10**6}.{e % 10**6:06d} ", e * 1000
        elif ts_mode == "ns":
            e = 1_700_000_000 * 10**9 + t_us * 1000 + 7
            stamp, ns = f"{e // 10**9}.{e % 10**9:09d} ", e
        elif ts_mode == "r":
            rel_ns += delta * 1000
            stamp, ns = f"{delta // 10**6:6d}.{delta % 10**6:06d} ", rel_ns
        else:
            stamp, ns = "", None
        if ts_mode in ("t", "tt") and t_us >= 86_400 * 10**6:
            ns = None  # wrapped past midnight: covered by the hand-made tests
        head = (f"{pid:<5d} " if pid is not None else "") + stamp + ("[  59] [00007f2bc01f8ad7] " if bracket else "")
        dur = draw(st.one_of(st.none(), st.integers(0, 10**6)))
        dtxt = "" if dur is None else f" <{dur // 10**6}.{dur % 10**6:06d}>"
        if pid in pending and draw(st.booleans()):
            row, a2 = pending.pop(pid)
            ret, rv, er = draw(st.sampled_from(RETURNS))
            lines.append(head + f"<... {row['syscall']} resumed>{a2}) = {ret}{dtxt}")
            row.update(kind="call", args=row["args"] + a2, ret_text=ret, retval=rv, errno=er,
                       duration_s=None if dur is None else dur / 1e6, end=ns)
        elif kind in ("call", "split"):
            name = draw(st.sampled_from(NAMES))
            parts = draw(arg_lists)
            a = ", ".join(parts)
            row = dict(kind="call", pid=pid, syscall=name, args=a, ts=ns, end=ns)
            if kind == "split" and pid not in pending:
                # strace splits between arguments: "f(a, b,  <unfinished ...>" + "<... f resumed>c)"
                cut = draw(st.integers(0, len(parts)))
                a1 = ", ".join(parts[:cut]) + (", " if 0 < cut < len(parts) else "")
                a2 = ", ".join(parts[cut:])
                lines.append(head + f"{name}({a1} <unfinished ...>")
                row.update(kind="unfinished", args=a1, ret_text="<unfinished ...>", retval=None, errno=None,
                           duration_s=None)
                pending[pid] = (row, a2)
            else:
                ret, rv, er = draw(st.sampled_from(RETURNS))
                pad = " " * draw(st.integers(0, 3))
                lines.append(head + f"{name}({a}){pad} = {ret}{dtxt}")
                row.update(ret_text=ret, retval=rv, errno=er, duration_s=None if dur is None else dur / 1e6)
            rows.append(row)
        elif kind == "signal":
            lines.append(head + "--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_utime=1 /* 0.01 s */} ---")
            rows.append(dict(kind="signal", pid=pid, syscall=None, args="{si_signo=SIGCHLD, si_code=CLD_EXITED, "
                             "si_utime=1 /* 0.01 s */}", ret_text=None, retval=None, errno=None,
                             duration_s=None, ts=ns, end=ns))
        else:
            lines.append(head + "+++ exited with 3 +++")
            rows.append(dict(kind="exit", pid=pid, syscall=None, args="", ret_text="exited with 3", retval=3,
                             errno=None, duration_s=None, ts=ns, end=ns))
        if frames:
            lines.append(" > /lib/x.so(f+0x1) [0x1]")
    return "\n".join(lines) + "\n", rows, ts_mode


def _frame(text: str, native: bool) -> pd.DataFrame:
    return read_strace(text, native=native, check_summary=False)


@SETTINGS
@given(traces())
def test_round_trip_recovers_every_field(case) -> None:
    text, rows, ts_mode = case
    f = _frame(text, native=False)
    assert len(f.attrs["rejects"]) == 0, f.attrs["rejects"].rows()
    assert len(f) == len(rows)
    for got, want in zip(f.to_dict("records"), rows, strict=True):
        assert got["kind"] == want["kind"]
        assert (pd.isna(got["pid"]) and want["pid"] is None) or got["pid"] == want["pid"]
        assert got["args"] == want["args"]
        assert (pd.isna(got["syscall"]) and want["syscall"] is None) or got["syscall"] == want["syscall"]
        assert (pd.isna(got["ret_text"]) and want["ret_text"] is None) or got["ret_text"] == want["ret_text"]
        assert (pd.isna(got["retval"]) and want["retval"] is None) or got["retval"] == want["retval"]
        assert (pd.isna(got["errno"]) and want["errno"] is None) or got["errno"] == want["errno"]
        if want["duration_s"] is None:
            assert pd.isna(got["duration_s"])
        else:
            assert got["duration_s"] == pytest.approx(want["duration_s"], abs=1e-12)
        if ts_mode != "none" and want["ts"] is not None:
            assert got["timestamp_s"] == want["ts"] / 1e9
            if want["end"] is not None:
                assert got["end_timestamp_s"] == want["end"] / 1e9
        if ts_mode == "none":
            assert pd.isna(got["timestamp_s"])
    if NATIVE:
        pd.testing.assert_frame_equal(f, _frame(text, native=True))


def _mutate(text: str, data) -> str:
    """Damage a trace: drop, duplicate or cut characters, splice messages, add junk lines."""
    lines = text.split("\n")
    for _ in range(data.draw(st.integers(0, 6))):
        if not lines:
            break
        i = data.draw(st.integers(0, len(lines) - 1))
        op = data.draw(st.sampled_from(["cut", "drop", "dup", "junk", "splice", "pidtag", "summary"]))
        s = lines[i]
        if op == "cut" and s:
            j = data.draw(st.integers(0, len(s)))
            lines[i] = s[:j]
        elif op == "drop" and s:
            j = data.draw(st.integers(0, len(s) - 1))
            lines[i] = s[:j] + s[j + 1:]
        elif op == "dup":
            lines.insert(i, s)
        elif op == "junk":
            lines.insert(i, data.draw(st.text(alphabet=" ()<>[]{}=\"\\.,:+-0123456789abcE?", max_size=30)))
        elif op == "splice" and s:
            j = data.draw(st.integers(0, len(s)))
            lines[i:i + 1] = [s[:j] + "strace: Process 77 attached", s[j:]]
        elif op == "pidtag":
            lines[i] = f"[pid {data.draw(st.integers(1, 99999)):5d}] " + s
        elif op == "summary":
            lines.insert(i, "% time     seconds  usecs/call     calls    errors syscall")
    return "\n".join(lines)


@pytest.mark.skipif(not NATIVE, reason="native scanner not built or disabled")
@SETTINGS
@given(traces(), st.data())
def test_scanners_agree_on_damaged_traces(case, data) -> None:
    text = _mutate(case[0], data)
    a, b = _frame(text, native=True), _frame(text, native=False)
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a.attrs["rejects"].frame(), b.attrs["rejects"].frame())
    pd.testing.assert_frame_equal(a.attrs["messages"].frame(), b.attrs["messages"].frame())
    assert a.attrs["lines"] == b.attrs["lines"]


@pytest.mark.skipif(not NATIVE, reason="native scanner not built or disabled")
@SETTINGS
@given(case=traces(), data=st.data())
def test_two_scanners_merged_equal_one(case, data, tmp_path_factory) -> None:
    """A file scanned as two halves by two scanners and merged gives the sequential frame."""
    from pathlib import Path

    from workbench.syscalls import _read as reader

    text = _mutate(case[0], data) if data.draw(st.booleans()) else case[0]
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n" and i + 1 < len(text):
            starts.append(i + 1)
    cut = data.draw(st.sampled_from(starts))
    path = Path(tmp_path_factory.mktemp("split")) / "t.strace"
    path.write_bytes(text.encode("latin-1", errors="replace"))
    head, _ = reader._head(path)
    pid_mode, ts_mode = reader.sniff(head)
    if pid_mode == 0 or text[cut:cut + 3] == " > ":
        return  # split only where read_strace would: pid column, not inside a stack
    merged = reader._scan_parts(path, [cut], pid_mode, ts_mode, reader.NA, None) if cut else None
    whole = reader._scan("t", path, pid_mode, ts_mode, reader.NA, True, None, threads=1)
    if merged is None:
        return  # read_strace then scans the file in one piece
    raw = reader._with_tail(reader._from_native(merged[0].finish()), merged[1])
    a, b = reader.build_frame(raw), reader.build_frame(whole)
    pd.testing.assert_frame_equal(a, b)
    assert raw["rejects"] == whole["rejects"] and raw["messages"] == whole["messages"]
    assert raw["lines"] == whole["lines"]


def _reference_three_ways(text: str, monkeypatch) -> list[pd.DataFrame]:
    """The reference scanner's frame: column path joining halves with numpy, column path joining them
    one by one, and the line loop only."""
    from workbench.syscalls import _reference as ref

    out = []
    for force_seq, join_min in ((False, 1), (False, 10**9), (True, 1)):
        with monkeypatch.context() as m:
            m.setattr(ref.RefParser, "_force_seq", force_seq)
            m.setattr(ref.RefParser, "vector_join_min", join_min)
            out.append(_frame(text, native=False))
    return out


@SETTINGS
@given(traces(), st.data())
def test_reference_paths_agree_on_damaged_traces(case, data) -> None:
    """The reference's ways through a block (columns with either join, line loop) give the same frame."""
    text = _mutate(case[0], data)
    with pytest.MonkeyPatch.context() as mp:
        a, *others = _reference_three_ways(text, mp)
    for b in others:
        pd.testing.assert_frame_equal(a, b)
        pd.testing.assert_frame_equal(a.attrs["rejects"].frame(), b.attrs["rejects"].frame())
        pd.testing.assert_frame_equal(a.attrs["messages"].frame(), b.attrs["messages"].frame())
        assert a.attrs["lines"] == b.attrs["lines"]
