"""read_strace on real captures: strace's own -C summary is the referee."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.syscalls import native_available, read_strace, strace_counts, syscall_summary

from .conftest import ROOT

DATA = ROOT / "tests" / "data" / "strace"
WITH_SUMMARY = sorted(DATA.glob("*.txt"))
SCANNERS = ["reference"] + (["native"] if native_available() else [])


def _read(path, scanner: str, **kw) -> pd.DataFrame:
    return read_strace(path, native=(scanner == "native"), **kw)


def test_there_are_enough_captures() -> None:
    assert len(WITH_SUMMARY) >= 13
    assert len(list((DATA / "ff").glob("trace.*"))) >= 2


@pytest.mark.parametrize("scanner", SCANNERS)
@pytest.mark.parametrize("path", WITH_SUMMARY, ids=[p.stem for p in WITH_SUMMARY])
def test_counts_equal_strace_summary_exactly(path: Path, scanner: str) -> None:
    f = _read(path, scanner, strict=True)
    assert f.attrs["strace_summary"] is not None, "every capture here was made with -C"
    table = f.attrs["strace_summary"].frame()
    assert len(table) > 0, "every capture here was made with -C"
    assert len(f.attrs["summary_mismatches"]) == 0
    mine = strace_counts(f).set_index("syscall")
    theirs = table.set_index("syscall")
    assert mine["calls"].to_dict() == theirs["calls"].to_dict()
    assert mine["errors"].to_dict() == theirs["errors"].to_dict()
    # and the summary module's own table agrees
    s = syscall_summary(f).set_index("syscall")
    assert s["calls"].sum() == theirs["calls"].sum() and s["errors"].sum() == theirs["errors"].sum()
    assert len(f.attrs["rejects"]) == 0, f.attrs["rejects"].frame().head()


@pytest.mark.parametrize("scanner", SCANNERS)
@pytest.mark.parametrize("path", WITH_SUMMARY, ids=[p.stem for p in WITH_SUMMARY])
def test_every_line_is_accounted_for(path: Path, scanner: str) -> None:
    f = _read(path, scanner)
    lines = path.read_text(encoding="latin-1").splitlines()
    n_frames = sum(1 for ln in lines if ln.startswith(" > "))
    n_resumed = sum(1 for ln in lines if re.search(r"^(\d+(<[^>]*>)? +|\[pid +\d+\] )?[0-9.: ]*"
                                                   r"(\[[ 0-9a-f?]+\] )*<\.\.\. \w+ resumed>", ln))
    n_summary = sum(1 for ln in lines[next((i for i, ln in enumerate(lines) if ln.startswith("% time")),
                                            len(lines)):])
    n_msgs = len(f.attrs["messages"])  # a message spliced into a record pushes its rest to the next line
    # rows + joined second halves + frames + summary + message lines = physical lines
    joined = n_resumed - int((f["ret_text"].isna() & (f["kind"] == "call")).sum())
    assert len(f) + joined + n_frames + n_summary + n_msgs == len(lines)
    assert f.attrs["lines"] == len(lines)


@pytest.mark.parametrize("path", WITH_SUMMARY + [DATA / "ff" / "trace.*"],
                         ids=[p.stem for p in WITH_SUMMARY] + ["ff"])
def test_native_and_reference_frames_are_identical(path: Path) -> None:
    if "native" not in SCANNERS:
        pytest.skip("native scanner not built or disabled")
    a, b = _read(path, "native"), _read(path, "reference")
    pd.testing.assert_frame_equal(a, b)
    for k in ("rejects", "messages", "strace_summary", "summary_mismatches"):
        if a.attrs[k] is None:
            assert b.attrs[k] is None
        else:
            pd.testing.assert_frame_equal(a.attrs[k].frame(), b.attrs[k].frame())


@pytest.mark.parametrize("path", WITH_SUMMARY + [DATA / "ff" / "trace.*"],
                         ids=[p.stem for p in WITH_SUMMARY] + ["ff"])
def test_reference_column_and_line_paths_are_identical(path: Path, monkeypatch) -> None:
    """The reference scanner takes fast lines column by column (halves joined with numpy or one by one);
    its line loop must give the same frame."""
    from workbench.syscalls import _reference as ref

    frames = []
    for force_seq, join_min in ((False, 1), (False, 10**9), (True, 1)):
        monkeypatch.setattr(ref.RefParser, "_force_seq", force_seq)
        monkeypatch.setattr(ref.RefParser, "vector_join_min", join_min)
        frames.append(_read(path, "reference"))
    a, *others = frames
    for b in others:
        pd.testing.assert_frame_equal(a, b)
        for k in ("rejects", "messages"):
            pd.testing.assert_frame_equal(a.attrs[k].frame(), b.attrs[k].frame())


@pytest.mark.parametrize("scanner", SCANNERS)
def test_split_calls_are_joined(scanner: str) -> None:
    path = DATA / "threads_futex.txt"
    f = _read(path, scanner)
    text = path.read_text()
    n_unf = text.count(" <unfinished ...>")
    n_res = len(re.findall(r"<\.\.\. \w+ resumed>", text))
    assert n_unf > 20 and n_unf == n_res
    assert (f["kind"] == "unfinished").sum() == 0
    assert not f["args"].str.contains("unfinished|resumed", regex=True).any()
    # a joined futex wait: start from its first half, end and -T from the second
    fut = f[(f["syscall"] == "futex") & (f["end_timestamp_s"] > f["timestamp_s"])]
    assert len(fut) > 5
    gap = fut["end_timestamp_s"] - fut["timestamp_s"]
    assert (fut["duration_s"] <= gap + 1e-5).all()
    assert (fut["args"].str.contains("FUTEX_WAIT")).any()
    # rt_sigprocmask(SIG_SETMASK, [],  <unfinished ...> + <... resumed>NULL, 8): one argument list
    rs = f[(f["syscall"] == "rt_sigprocmask") & f["args"].str.startswith("SIG_SETMASK, [], NULL")]
    assert (rs["args"].str.fullmatch(r"SIG_SETMASK, \[\], NULL, 8")).all()


@pytest.mark.parametrize("scanner", SCANNERS)
def test_old_resumed_spacing_gives_the_same_frame(scanner: str) -> None:
    new = _read(DATA / "threads_futex.txt", scanner)
    old = _read(DATA / "threads_futex_old_resumed.txt", scanner)
    pd.testing.assert_frame_equal(new, old)


@pytest.mark.parametrize("scanner", SCANNERS)
def test_ff_set_is_merged_and_matches_independent_counts(scanner: str) -> None:
    files = sorted((DATA / "ff").glob("trace.*"))
    f = _read(files, scanner)
    g = _read(str(DATA / "ff" / "trace.*"), scanner)
    pd.testing.assert_frame_equal(f, g)
    assert set(f["pid"].astype(int)) == {int(p.suffix[1:]) for p in files}
    assert f["timestamp_s"].is_monotonic_increasing
    assert f.attrs["time_base"] == "epoch" and 1.6e9 < f["timestamp_s"].min() < 2.2e9
    # independent count: a completed line per call, bare '= ?' excluded, errors by '= -1 E' / '= ? E'
    calls: Counter = Counter()
    errors: Counter = Counter()
    for p in files:
        for line in p.read_text().splitlines():
            m = re.match(r"[\d.]+ (?:<\.\.\. )?(\w+)[( ]", line)
            if not m or line.endswith("<unfinished ...>") or re.search(r"= \?$", line):
                continue
            calls[m.group(1)] += 1
            if re.search(r"\) += (-1|\?) E[A-Z]+", line):
                errors[m.group(1)] += 1
    mine = strace_counts(f).set_index("syscall")
    assert mine["calls"].to_dict() == dict(calls)
    assert {k: v for k, v in mine["errors"].to_dict().items() if v} == dict(errors)
    assert (f.groupby("pid", observed=True)["kind"].apply(lambda k: (k == "exit").sum()) == 1).all()


@pytest.mark.parametrize("scanner", SCANNERS)
def test_stderr_mode_pids_and_spliced_messages(scanner: str) -> None:
    f = _read(DATA / "stderr_mode.txt", scanner)
    assert f["pid"].notna().all(), "unprefixed lines belong to the single remaining process"
    msgs = f.attrs["messages"].frame()
    assert len(msgs) == 4 and msgs["text"].str.contains(r"Process \d+ attached").all()
    spliced = f[(f["syscall"] == "clone3") & f["args"].str.contains("=> {parent_tid=", regex=False)]
    assert len(spliced) == 4
    children = set(spliced["retval"].astype(int))
    leader = set(f.loc[f["line"] == 1, "pid"].astype(int))
    assert len(leader) == 1 and not (leader & children)
    assert set(f["pid"].astype(int)) == leader | children
    # the final exit line has no prefix and is the leader's
    last = f.iloc[-1]
    assert last["kind"] == "exit" and int(last["pid"]) in leader


@pytest.mark.parametrize("scanner", SCANNERS)
def test_stack_frames_attach_to_their_call(scanner: str) -> None:
    path = DATA / "stack_k.txt"
    f = _read(path, scanner)
    n_frames = sum(1 for ln in path.read_text().splitlines() if ln.startswith(" > "))
    bt = f["backtrace"].dropna()
    assert bt.str.count("\n").add(1).sum() == n_frames
    assert bt.str.contains(r"\[0x[0-9a-f]+\]").all()
    first = f.iloc[0]
    assert first["syscall"] == "execve" and "_dl_catch_error" in first["backtrace"]


@pytest.mark.parametrize("scanner", SCANNERS)
def test_tricky_strings_and_paths(scanner: str) -> None:
    f = _read(DATA / "tricky.txt", scanner)
    op = f[(f["syscall"] == "openat") & f["args"].str.contains("par) = 3 (x).txt", regex=False)]
    assert len(op) == 2
    assert op["ret_text"].str.fullmatch(r"3</tmp/tricky\w+/par\) = 3 \(x\)\.txt>").all()
    assert (op["retval"] == 3).all()
    wr = f[(f["syscall"] == "write") & f["args"].str.contains("+++ exited with 0 +++", regex=False)]
    assert len(wr) == 7 and (wr["retval"] == 69).all() and wr["errno"].isna().all()
    missing = f[f["args"].str.contains("missing) = 0", regex=False)]
    assert len(missing) == 1 and missing["errno"].iloc[0] == "ENOENT" and missing["retval"].iloc[0] == -1
    tcp = f[f["ret_text"].str.contains("<TCP:[127.0.0.1:", regex=False, na=False)]
    assert len(tcp) >= 1 and "->" in tcp["ret_text"].iloc[0]


@pytest.mark.parametrize("scanner", SCANNERS)
def test_signals_restarts_kills_and_stops(scanner: str) -> None:
    s = _read(DATA / "signals_restart.txt", scanner)
    er = s[s["errno"].astype(object).fillna("").str.startswith("ERESTART")]
    assert set(er["errno"]) == {"ERESTARTSYS", "ERESTARTNOHAND"}
    assert er["ret_text"].str.startswith("? ERESTART").all() and er["retval"].isna().all()
    assert (s.loc[s["kind"] == "signal", "signal"] == "SIGALRM").sum() == 2
    k = _read(DATA / "killed.txt", scanner)
    assert (k["kind"] == "killed").sum() == 4 and (k.loc[k["kind"] == "killed", "signal"] == "SIGKILL").all()
    died = k[(k["kind"] == "call") & (k["ret_text"] == "?")]
    assert {"read", "kill"} <= set(died["syscall"])
    st = _read(DATA / "stop_segv.txt", scanner)
    assert st.loc[st["kind"] == "stopped", "signal"].tolist() == ["SIGSTOP"]
    assert st.loc[st["kind"] == "killed", "signal"].tolist() == ["SIGSEGV"]


@pytest.mark.parametrize("scanner", SCANNERS)
def test_timestamp_flavours(scanner: str) -> None:
    ttt = _read(DATA / "ttt.txt", scanner)
    assert ttt.attrs["time_base"] == "epoch" and ttt["timestamp_s"].between(1.6e9, 2.2e9).all()
    ns = _read(DATA / "ns_times.txt", scanner)
    assert ns.attrs["time_base"] == "epoch"
    d = ns["duration_s"].dropna()
    assert ((d * 1e9).round() % 1000 != 0).mean() > 0.5, "nanosecond durations keep their digits"
    r = _read(DATA / "relative_r.txt", scanner)
    assert r.attrs["time_base"] == "relative" and r["timestamp_s"].iloc[0] == 0.0
    assert r["timestamp_s"].is_monotonic_increasing and r["timestamp_s"].iloc[-1] < 60
    tt = _read(DATA / "threads_futex.txt", scanner)
    assert tt.attrs["time_base"] == "midnight" and tt["timestamp_s"].between(0, 86400).all()
    single = _read(DATA / "single.txt", scanner)
    assert single["pid"].isna().all() and len(single.attrs["summary_mismatches"]) == 0
    att = _read(DATA / "attach_p.txt", scanner)
    assert (att["kind"] == "unfinished").sum() == 2
    assert set(att.loc[att["kind"] == "unfinished", "ret_text"]) == {"<detached ...>", "<unfinished ...>"}
    nY = _read(DATA / "n_i_Y.txt", scanner)
    assert nY["pid"].notna().all() and len(nY.attrs["rejects"]) == 0
    assert np.isnan(nY["duration_s"]).all()
