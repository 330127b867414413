"""The stalls lab: loopback only, strace required, real futex timeouts, capture files and their loader."""
from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from workbench.cli import build_parser
from workbench.errors import InputNotFoundError, LabError, ParseError, SchemaError, UsageError
from workbench.lab import stalls as lab
from workbench.lab._net import check_loopback
from workbench.syscalls import read_strace
from workbench.syscalls.waits import calls_exceeding, duration_peaks, match_waits, read_wait_log

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "data" / "01_quantized_latency" / "lab"
needs_strace = pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")


NOT_LOOPBACK = ["10.0.0.1", "0.0.0.0", "example.com", "::ffff:10.0.0.1", "8.8.8.8", "::2"]


@pytest.fixture
def no_sockets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any inet socket opened from here on fails the test."""

    class Refused(socket.socket):
        def __init__(self, *_args: object, **_kw: object) -> None:
            raise AssertionError("a socket was opened before the address was refused")

    monkeypatch.setattr(socket, "socket", Refused)


@pytest.mark.parametrize("host", NOT_LOOPBACK)
def test_refuses_non_loopback_before_any_socket(host: str, tmp_path: Path, no_sockets: None) -> None:
    with pytest.raises(UsageError, match=r"stalls lab only talks to loopback.*host="):
        lab.run_capture(tmp_path / "out", host=host, progress=False)
    assert not (tmp_path / "out").exists()  # refused before doing anything
    with pytest.raises(UsageError, match="loopback"):
        lab._Pinger(host, 0.02, 1)
    with pytest.raises(UsageError, match="loopback"):
        lab._drive(host, 1, 1, 0.0, time.monotonic() + 1)
    with pytest.raises(UsageError, match="loopback"):  # the server role checks too, before its alarm and socket
        lab._child_main(["serve", "--host", host, "--port-file", str(tmp_path / "p"), "--log", str(tmp_path / "l"),
                         "--requests", "2"])
    assert not (tmp_path / "p").exists()


def test_server_child_refuses_non_loopback_on_its_own(tmp_path: Path) -> None:
    cmd = lab._child(["serve", "--host", "10.0.0.1", "--port-file", str(tmp_path / "p"), "--log",
                      str(tmp_path / "l"), "--requests", "2", "--max-life-s", "20"])
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "UsageError" in proc.stderr and "host=10.0.0.1" in proc.stderr
    assert not (tmp_path / "p").exists()


def test_accepts_loopback() -> None:
    assert check_loopback("127.0.0.2") == "127.0.0.2"
    assert check_loopback("::1") == "::1"
    assert check_loopback("localhost") == "127.0.0.1"


def test_missing_strace_says_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(lab.shutil, "which", lambda _name: None)
    with pytest.raises(LabError, match="apt-get install strace"):
        lab.require_strace()
    with pytest.raises(LabError, match="apt-get install strace"):
        lab.run_capture(tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()  # refused before doing anything


def test_futex_wait_times_out() -> None:
    res, t0, t1 = lab.futex_wait(50)
    assert res == "ETIMEDOUT"
    assert 0.045 <= t1 - t0 < 2.0


@needs_strace
def test_futex_wait_is_a_real_futex_timeout_under_strace(tmp_path: Path) -> None:
    out = tmp_path / "trace.txt"
    child = lab.child_command("from workbench.lab.stalls import futex_wait; r = futex_wait(250); print(r[0], r[2] - r[1])")
    proc = subprocess.run(["strace", "-f", "-ttt", "-T", "-y", "-o", str(out), *child],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    result, wall_s = proc.stdout.split()
    assert result == "ETIMEDOUT"
    text = out.read_text()
    assert "FUTEX_WAIT_PRIVATE, 0, {tv_sec=0, tv_nsec=250000000}) = -1 ETIMEDOUT" in text
    f = read_strace(out)
    over = calls_exceeding(f, 0.2)
    futex = over[over["syscall"] == "futex"]
    assert int(futex["calls_over"].iloc[0]) == 1
    # measured, not nominal: the kernel waited at least the timeout and at most the wall time the child saw
    assert 250 - 1 <= futex["max_ms"].iloc[0] <= 1e3 * float(wall_s) + 2


def test_lab_registered_in_cli() -> None:
    args = build_parser().parse_args(["lab", "stalls", "--out", "x", "--requests", "50", "--per-kind", "3"])
    assert args.requests == 50 and args.per_kind == 3 and callable(args.func)


def test_rejects_impossible_plans(tmp_path: Path) -> None:
    if shutil.which("strace") is None:
        pytest.skip("the plan is checked after strace is found")
    with pytest.raises(UsageError, match="per_kind=5"):
        lab.run_capture(tmp_path, requests=10, per_kind=5, progress=False)
    with pytest.raises(UsageError, match="generations must be between 1 and pipeline_requests=200, got 0"):
        lab.run_capture(tmp_path, generations=0, progress=False)


def test_bundled_capture_loads_with_documented_schemas() -> None:
    cap = lab.read_capture(BUNDLED)
    for name in ("calls", "injections", "ping", "steps", "pauses", "interference"):
        assert len(cap[name]) > 0, name
        assert len(cap[name].attrs["rejects"]) == 0, name
    inj = cap["injections"]
    assert inj.groupby("wait_ms").size().to_dict() == {250: 10, 500: 10, 1000: 10}
    assert set(inj["result"]) == {"ETIMEDOUT"}
    assert (inj["end_s"] - inj["start_s"]).between(0.24, 1.1).all()
    assert set(cap["steps"]["condition"]) == {"pauses", "control"}
    assert sorted(cap["steps"]["step"].unique()) == list(range(1, 16))
    assert set(cap["interference"]["condition"]) == {"writer_off", "writer_on"}
    assert cap["meta"]["strace"] == "strace -f -ttt -T -y"
    size = sum(p.stat().st_size for p in BUNDLED.iterdir())
    assert size < 3 * 2**20


def test_capture_loader_keeps_bad_rows(tmp_path: Path) -> None:
    d = tmp_path / "cap"
    shutil.copytree(BUNDLED, d)
    with open(d / "pauses.csv", "a") as f:
        f.write("0,123,not-a-time,1.0\n")
    cap = lab.read_capture(d)
    rej = cap["pauses"].attrs["rejects"].frame()
    assert len(rej) == 1 and "not-a-time" in rej["text"].iloc[0] and "start_s" in rej["reason"].iloc[0]
    with pytest.raises(ParseError, match="pauses.csv"):
        lab.read_capture(d, strict=True)
    (d / "steps.csv").write_text("a,b\n1,2\n")
    with pytest.raises(SchemaError, match=r"steps.csv:1: the header lacks column\(s\) \['condition'"):
        lab.read_capture(d)
    (d / "ping.csv").unlink()
    with pytest.raises(InputNotFoundError, match="ping.csv"):
        lab.read_capture(d)
    with pytest.raises(InputNotFoundError, match="not a capture folder"):
        lab.read_capture(d / "nothing")


def _tight_runs(durations_s: list[float], min_count: int, factor: float) -> list[tuple[float, float]]:
    """(first, last) of every run of ``min_count`` sorted durations lying within ``factor`` of each other."""
    d = sorted(durations_s)
    return [(d[i], d[i + min_count - 1]) for i in range(len(d) - min_count + 1)
            if d[i + min_count - 1] <= factor * d[i]]


@pytest.mark.slow
@needs_strace
def test_small_live_capture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    paths = lab.run_capture(tmp_path / "cap", requests=40, per_kind=6, fixed_requests=10, pipeline_requests=60,
                            generations=2, control_requests=30, blocks=2, block_s=0.6, progress=False)
    assert list(scratch.iterdir()) == []  # temp files and directories removed
    cap = lab.read_capture(tmp_path / "cap")
    assert len(cap["calls"]) == 50
    assert cap["injections"].groupby("wait_ms").size().to_dict() == {250: 6, 500: 6, 1000: 6}
    trace = read_strace(paths["strace_before"])
    assert len(trace.attrs["rejects"]) == 0
    # what was measured: every logged injection is in the trace as one futex call that lasted between its
    # timeout and the wall time the server logged around it (a busy machine wakes it late, never early)
    log = read_wait_log(tmp_path / "cap" / "injections.csv")
    log = log[log["run"] == "before"]
    wm = match_waits(trace, log, syscall="futex", min_s=0.2)
    assert wm.decision.verdict == "yes", wm.decision
    assert wm.per_kind["found"].tolist() == [6, 6, 6]
    assert wm.per_kind["within_bounds"].tolist() == [6, 6, 6], wm.per_kind
    # the detector finds every kind whose measured durations are tight enough for its documented window
    # (min_count calls within a factor 10^(1/(2·bins_per_decade)) of each other) …
    peaks = [p for p in duration_peaks(trace) if p.syscall == "futex" and p.location_s >= 0.2]
    factor = 10 ** (1 / (2 * 50))
    for k in (250, 500, 1000):
        d = wm.calls.loc[wm.calls["wait_ms"] == k, "duration_s"].tolist()
        for first, last in _tight_runs(d, 5, factor):
            assert any(p.low_s <= first and last < p.high_s for p in peaks), (k, d, peaks)
    # … and no peak that holds none of the logged injections
    matched = wm.calls["duration_s"].tolist()
    for p in peaks:
        assert any(p.low_s <= d < p.high_s for d in matched), (p, matched)
    assert len(cap["pauses"]) > 0
    assert set(cap["steps"]["generation"]) == {0, 1, 2}
