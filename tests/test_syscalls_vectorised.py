"""The strace analyses on codes and numpy arrays give what the plain pandas formulation gives.

Each analysis is checked against a direct pandas version of its definition (a
table of all timed calls with object columns, sorted, grouped and filtered the
obvious way), on bundled captures, with the text columns stored as objects,
as ``str``, as ``StringDtype("pyarrow")`` and as ``ArrowDtype(large_string)``;
and the arrays kept per frame are recomputed when a column changes.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from workbench.syscalls import (
    counted_calls,
    duration_histogram,
    group_syscalls,
    read_strace,
    strace_counts,
    syscall_summary,
)
from workbench.syscalls import waits as w

ROOT = Path(__file__).resolve().parents[1]
TRACES = {
    "lab_before": ROOT / "data" / "01_quantized_latency" / "lab" / "strace_before.txt",
    "threads_futex": ROOT / "tests" / "data" / "strace" / "threads_futex.txt",
    "no_pid": ROOT / "tests" / "data" / "strace" / "single.txt",
    "signals": ROOT / "tests" / "data" / "strace" / "signals_restart.txt",
}
TEXT = {
    "as-read": None,
    "object": object,
    "str-pyarrow": pd.StringDtype("pyarrow"),
    "arrow-large-string": pd.ArrowDtype(pa.large_string()),
}
FD = re.compile(r"^\s*-?\d+<(?:socket:|pipe:|TCP|TCPv6|UDP|UDPv6|UNIX|UNIX-STREAM|UNIX-DGRAM|NETLINK"
                r"|anon_inode:\[eventfd\]|anon_inode:\[signalfd\]|anon_inode:\[timerfd\]|/dev/pts/|/dev/tty)")


def _load(trace: str, text: str) -> pd.DataFrame:
    f = read_strace(TRACES[trace])
    if TEXT[text] is not None:
        f = f.astype({c: TEXT[text] for c in ("args", "ret_text", "backtrace")})
    return f


def _reference_timed(f: pd.DataFrame) -> pd.DataFrame:
    """Every counted call with a duration, as plain Python objects, with its class, in frame order."""
    kind = f["kind"].astype(object)
    ret = f["ret_text"].astype(object)
    name = f["syscall"].astype(object)
    args = f["args"].astype(object)
    counted = (kind == "call") & (ret != "?") & ret.notna()
    fd_wait = name.isin(w.FD_READS) & args.map(lambda a: isinstance(a, str) and FD.match(a) is not None)
    idle = name.isin(w.ALWAYS_IDLE) | fd_wait
    m = (counted & f["duration_s"].notna()).to_numpy()
    return pd.DataFrame({
        "syscall": name[m].to_numpy(), "duration_s": f["duration_s"][m].to_numpy(),
        "wait_class": np.where(idle[m], "idle", "kernel"), "pid": f["pid"][m].astype("float64").to_numpy(),
        "timestamp_s": f["timestamp_s"][m].to_numpy(), "args": args[m].to_numpy(), "line": f["line"][m].to_numpy(),
    })


@pytest.fixture(params=list(TRACES))
def trace(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("text", list(TEXT))
def test_every_analysis_is_the_same_whatever_the_text_storage(trace: str, text: str) -> None:
    base, other = _load(trace, "as-read"), _load(trace, text)
    assert w.classify_waits(base).equals(w.classify_waits(other))
    assert w.duration_peaks(base) == w.duration_peaks(other)
    assert np.array_equal(counted_calls(base), counted_calls(other))
    for fn in (lambda f: w.calls_exceeding(f, 0.0), lambda f: w.wait_summary(f), strace_counts, syscall_summary,
               lambda f: duration_histogram(f)):
        pd.testing.assert_frame_equal(fn(base), fn(other))
    for fn in (lambda f: w.slowest_calls(f, 7), lambda f: w.long_waits(f, 0.0)):
        a, b = fn(base), fn(other)
        pd.testing.assert_frame_equal(a.drop(columns=["args", "ret_text"], errors="ignore"),
                                      b.drop(columns=["args", "ret_text"], errors="ignore"))
        assert list(a["args"].astype(object)) == list(b["args"].astype(object))


@pytest.mark.parametrize("text", ["as-read", "arrow-large-string"])
def test_classes_top_k_and_tables_match_the_plain_pandas_definition(trace: str, text: str) -> None:
    f = _load(trace, text)
    ref = _reference_timed(f)
    cls = w.classify_waits(f)
    assert cls.astype(object)[counted_calls(f) & f["duration_s"].notna().to_numpy()].tolist() == list(
        ref["wait_class"])
    # slowest: the n longest, ties in trace order
    top = ref.sort_values("duration_s", ascending=False, kind="stable").head(5)
    got = w.slowest_calls(f, 5)
    assert got["line"].tolist() == top["line"].tolist()
    assert np.allclose(got["duration_ms"], 1e3 * top["duration_s"], rtol=0, atol=0)
    kernel = ref[ref["wait_class"] == "kernel"].sort_values("duration_s", ascending=False, kind="stable").head(3)
    assert w.slowest_calls(f, 3, wait_class="kernel")["line"].tolist() == kernel["line"].tolist()
    # calls over a bound, per (syscall, class)
    bound = float(ref["duration_s"].quantile(0.9)) if len(ref) else 0.0
    over = ref[ref["duration_s"] > bound]
    exc = w.calls_exceeding(f, bound)
    want = over.groupby(["syscall", "wait_class"]).size()
    assert dict(zip(zip(exc["syscall"], exc["wait_class"], strict=True), exc["calls_over"], strict=True)) == want.to_dict()
    # time per class and syscall
    ws = w.wait_summary(f)
    per = ref.groupby(["wait_class", "syscall"])["duration_s"].agg(["size", "max"])
    assert {(c, s): (n, m) for c, s, n, m in zip(ws["wait_class"], ws["syscall"], ws["calls"], ws["max_ms"],
                                                 strict=True)} == {k: (int(v["size"]), 1e3 * v["max"])
                                                                   for k, v in per.iterrows()}


def _reference_roles(ref: pd.DataFrame) -> dict[int, str]:
    """line → role: the thread's next timed call (by pid, timestamp_s, line) is the same idle syscall."""
    t = ref.sort_values(["pid", "timestamp_s", "line"], kind="stable").reset_index(drop=True)
    nxt = t.shift(-1)
    loop = (t["pid"] == nxt["pid"]) & (t["syscall"] == nxt["syscall"]) & (t["wait_class"] == "idle")
    return dict(zip(t["line"], np.where(loop, "loop", "one-off"), strict=True))


@pytest.mark.parametrize("shuffled", [False, True])
def test_long_waits_roles_follow_each_thread(trace: str, shuffled: bool) -> None:
    f = _load(trace, "as-read")
    if shuffled:  # rows out of time order: the thread order must come from sorting, not from the frame's order
        f = f.iloc[np.random.default_rng(7).permutation(len(f))].reset_index(drop=True)
    ref = _reference_timed(f)
    roles = _reference_roles(ref)
    lw = w.long_waits(f, 0.0)
    assert len(lw) == len(ref)
    assert {int(line): r for line, r in zip(lw["line"], lw["role"], strict=True)} == roles
    assert (np.diff(lw["duration_ms"].to_numpy()) <= 0).all()


def test_a_changed_column_is_never_answered_from_the_kept_arrays() -> None:
    f = _load("lab_before", "as-read")
    first = w.slowest_calls(f, 3)
    # in place: the longest call becomes the shortest
    f.loc[f["line"] == first["line"].iloc[0], "duration_s"] = 1e-6
    again = w.slowest_calls(f, 3)
    assert first["line"].iloc[0] not in set(again["line"])
    assert again["line"].iloc[0] == first["line"].iloc[1]
    # a replaced text column: every fd now names a file, so no read or write waits on a socket or pipe
    before = w.classify_waits(f)
    f["args"] = f["args"].str.replace(r"^(\s*-?\d+)<[^>]*>", r"\1</tmp/a-file>", regex=True)
    after = w.classify_waits(f)
    fd = f["syscall"].isin(w.FD_READS).to_numpy()
    assert (before[fd] == "idle").any() and not (after[fd] == "idle").any()
    # renamed categories
    f["syscall"] = f["syscall"].cat.rename_categories(lambda n: "nap" if n == "futex" else n)
    assert "futex" not in set(w.wait_summary(f)["syscall"])


def test_group_syscalls_pools_like_relabelling_the_names() -> None:
    f = _load("lab_before", "as-read")
    peaks = w.duration_peaks(f)
    shown = sorted({p.syscall for p in peaks})[:4]
    assert shown, "the lab trace has futex timeout peaks"
    names = f["syscall"].astype(object)
    for keep, other, relabelled in (
            ((), "all syscalls", np.where(names.notna(), "all syscalls", None)),
            (shown, "all other syscalls", np.where(names.isin(shown), names,
                                                   np.where(names.notna(), "all other syscalls", None)))):
        g = group_syscalls(f, keep, other)
        r = f.assign(syscall=relabelled)
        pd.testing.assert_frame_equal(duration_histogram(g, bins_per_decade=20, min_s=1e-5, max_s=10.0),
                                      duration_histogram(r, bins_per_decade=20, min_s=1e-5, max_s=10.0))
        assert w.duration_peaks(g) == w.duration_peaks(r)
        assert g["syscall"].isna().equals(f["syscall"].isna())
