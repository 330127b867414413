"""Idle vs kernel classification, duration peaks on log bins, and 'which calls exceed X' tables."""
from __future__ import annotations

import numpy as np
import pytest

from workbench.syscalls import read_strace
from workbench.syscalls.waits import (
    calls_exceeding,
    classify_waits,
    duration_peaks,
    peaks_frame,
    slowest_calls,
    wait_summary,
)

CALLS = {
    "futex": 'futex(0x7f0000000010, FUTEX_WAIT_PRIVATE, 0, {{tv_sec=0, tv_nsec=250000000}}) = -1 ETIMEDOUT '
             "(Connection timed out)",
    "poll": "poll([{{fd=5<pipe:[7]>, events=POLLIN}}], 1, 100) = 0 (Timeout)",
    "read_file": 'read(3</tmp/data.bin>, "abc", 4096) = 3',
    "read_sock": 'read(4<socket:[123]>, "abc", 4096) = 3',
    "recv_sock": 'recvfrom(4<socket:[123]>, "x", 10, 0, NULL, NULL) = 1',
    "read_pipe": 'read(6<pipe:[9]>, "x", 1) = 1',
    "openat": 'openat(AT_FDCWD</w>, "/etc/hosts", O_RDONLY|O_CLOEXEC) = 7</etc/hosts>',
    "fsync": "fsync(8</tmp/big.dat>) = 0",
    "nanosleep": "clock_nanosleep(CLOCK_REALTIME, 0, {{tv_sec=0, tv_nsec=5000000}}, NULL) = 0",
}


def _trace(rows: list[tuple[str, float]], pid: int = 100) -> str:
    """strace -f -ttt -T -y text from (kind-of-call, duration_s) rows."""
    t = 1_700_000_000.0
    lines = []
    for kind, d in rows:
        lines.append(f"{pid} {t:.6f} {CALLS[kind].format()} <{d:.6f}>")
        t += d + 0.001
    return "\n".join(lines) + "\n"


def test_classify_waits_uses_fd_annotations() -> None:
    names = ["futex", "poll", "read_file", "read_sock", "recv_sock", "read_pipe", "openat", "fsync", "nanosleep"]
    f = read_strace(_trace([(n, 0.001) for n in names]))
    cls = classify_waits(f).astype(object).tolist()
    assert dict(zip(names, cls, strict=True)) == {
        "futex": "idle", "poll": "idle", "read_file": "kernel", "read_sock": "idle", "recv_sock": "idle",
        "read_pipe": "idle", "openat": "kernel", "fsync": "kernel", "nanosleep": "idle"}


def _quantised_trace(seed: int = 0) -> tuple[str, dict[int, int]]:
    rng = np.random.default_rng(seed)
    rows: list[tuple[str, float]] = []
    injected = {250: 12, 500: 9, 1000: 7}
    for ms, n in injected.items():
        rows += [("futex", ms / 1e3 + rng.uniform(5e-5, 6e-4)) for _ in range(n)]
    rows += [("futex", d) for d in rng.lognormal(np.log(2e-4), 1.2, 600)]   # ordinary lock waits
    rows += [("poll", 0.1 + rng.uniform(5e-5, 4e-4)) for _ in range(80)]      # distractor: a 100 ms timer
    rows += [("read_file", d) for d in rng.lognormal(np.log(3e-5), 0.8, 2000)]
    rows += [("openat", d) for d in rng.lognormal(np.log(2e-4), 1.0, 800)]
    order = rng.permutation(len(rows))
    return _trace([rows[i] for i in order]), injected


def test_duration_peaks_find_the_futex_clusters_with_exact_counts() -> None:
    text, injected = _quantised_trace()
    f = read_strace(text)
    peaks = duration_peaks(f)
    futex = [p for p in peaks if p.syscall == "futex"]
    assert [round(p.location_s * 1e3) for p in futex] == [250, 500, 1000]
    assert [p.count for p in futex] == list(injected.values())
    assert all(p.wait_class == "idle" for p in futex)
    # the poll timer is found, and attributed to poll only
    poll = [p for p in peaks if p.syscall == "poll"]
    assert len(poll) == 1 and abs(poll[0].location_s - 0.1) < 0.005 and poll[0].count == 80
    # smooth syscalls give no peak
    assert not [p for p in peaks if p.syscall in ("read", "openat")]
    tab = peaks_frame(peaks)
    assert list(tab.columns)[:5] == ["syscall", "location_ms", "low_ms", "high_ms", "count"]
    assert len(tab) == 4


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", ["lognormal", "exponential", "loguniform", "wide_lognormal"])
def test_duration_peaks_invent_nothing_in_smooth_data(shape: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 20000
    d = {
        "lognormal": lambda: rng.lognormal(np.log(2e-3), 0.6, n),
        "exponential": lambda: rng.exponential(0.05, n) + 1e-4,
        "loguniform": lambda: 10 ** rng.uniform(-4, 0, n),
        "wide_lognormal": lambda: rng.lognormal(np.log(1e-2), 2.0, n),
    }[shape]()
    d = np.round(d, 6)  # strace prints microseconds
    d = d[d > 0]
    f = read_strace(_trace([("futex", float(x)) for x in d]))
    assert duration_peaks(f) == ()


def test_calls_exceeding_and_slowest_calls() -> None:
    text, _ = _quantised_trace(1)
    f = read_strace(text)
    over = calls_exceeding(f, 0.2)
    assert over["syscall"].tolist() == ["futex"]
    assert int(over["calls_over"].iloc[0]) == 28
    assert over["max_ms"].iloc[0] == pytest.approx(1000.0, abs=1.0)
    # "what else takes hundreds of ms?" nothing
    assert calls_exceeding(f, 0.2, exclude=["futex"]).empty
    other = slowest_calls(f, 3, exclude=["futex"])
    assert other["syscall"].iloc[0] == "poll" and other["wait_class"].iloc[0] == "idle"
    assert other["duration_ms"].is_monotonic_decreasing
    kern = slowest_calls(f, 1, wait_class="kernel")
    assert kern["syscall"].iloc[0] in ("read", "openat") and kern["duration_ms"].iloc[0] < 200


def test_wait_summary_shares_sum_to_one() -> None:
    f = read_strace(_trace([("futex", 0.25), ("fsync", 0.02), ("read_sock", 0.01), ("openat", 0.001)]))
    ws = wait_summary(f)
    assert ws["share"].sum() == pytest.approx(1.0)
    idle = ws[ws["wait_class"] == "idle"]["total_s"].sum()
    kernel = ws[ws["wait_class"] == "kernel"]["total_s"].sum()
    assert idle == pytest.approx(0.26) and kernel == pytest.approx(0.021)


def test_unfinished_and_resumed_futex_counts_once() -> None:
    text = (
        "100 1700000000.000000 futex(0x7f, FUTEX_WAIT_PRIVATE, 0, {tv_sec=0, tv_nsec=500000000} <unfinished ...>\n"
        "101 1700000000.100000 read(3</tmp/x>, \"\", 1) = 0 <0.000010>\n"
        "100 1700000000.500200 <... futex resumed>) = -1 ETIMEDOUT (Connection timed out) <0.500200>\n"
    )
    f = read_strace(text)
    over = calls_exceeding(f, 0.4)
    assert over["syscall"].tolist() == ["futex"] and int(over["calls_over"].iloc[0]) == 1
