"""The Nagle lab: loopback only, bounded, and it reproduces the 40 ms stall for real."""
from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from workbench.cli import build_parser, main
from workbench.errors import UsageError
from workbench.lab import nagle
from workbench.lab._net import check_loopback
from workbench.stats import find_quantum

NOT_LOOPBACK = ["10.0.0.1", "0.0.0.0", "example.com", "::ffff:10.0.0.1", "8.8.8.8", "192.168.1.1", "::2"]


@pytest.fixture
def no_sockets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any socket or server process started from here on fails the test."""

    class Refused(socket.socket):
        def __init__(self, *_args: object, **_kw: object) -> None:
            raise AssertionError("a socket was opened before the address was refused")

    def no_process(*_args: object, **_kw: object) -> None:
        raise AssertionError("a server process was started before the address was refused")

    monkeypatch.setattr(socket, "socket", Refused)
    monkeypatch.setattr(subprocess, "Popen", no_process)


@pytest.mark.parametrize("host", NOT_LOOPBACK)
def test_refuses_non_loopback_before_any_socket(host: str, no_sockets: None) -> None:
    with pytest.raises(UsageError, match=r"nagle lab only talks to loopback.*host="):
        nagle.serve(host)
    with pytest.raises(UsageError, match="loopback"):
        nagle.load_run(host, 1, 10, 1)
    with pytest.raises(UsageError, match="loopback"):
        nagle.ping_run(host, 1)
    with pytest.raises(UsageError, match="loopback"):
        nagle.run_capture(host=host, progress=False)
    with pytest.raises(UsageError, match="loopback"):  # the server process's own body checks too
        nagle._server_main(host, frozenset(), 0.0, 1.0)


def test_server_process_refuses_non_loopback_on_its_own() -> None:
    pkg = str(Path(nagle.__file__).resolve().parents[2])
    proc = subprocess.run([sys.executable, "-c", nagle._SERVER_CODE, pkg, "10.0.0.1", "", "0.0", "5.0"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode != 0 and proc.stdout == "" and "host=10.0.0.1" in proc.stderr


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_accepts_loopback(host: str) -> None:
    assert check_loopback(host, "nagle") == ("127.0.0.1" if host == "localhost" else host)


def test_rejects_unknown_options_and_bad_arguments():
    with pytest.raises(UsageError, match="unknown socket option"):
        nagle.serve(options=["TCP_FASTOPEN_MAGIC"])
    with pytest.raises(UsageError, match="mode"):
        nagle.load_run("127.0.0.1", 1, 10, 1, mode="closed")
    with pytest.raises(UsageError, match="positive"):
        nagle.load_run("127.0.0.1", 1, 0, 1)
    with pytest.raises(UsageError, match="count=0"):
        nagle.ping_run("127.0.0.1", 1, count=0)


def test_cli_has_the_subcommand_and_refuses_remote_hosts(capsys):
    parser = build_parser()
    args = parser.parse_args(["lab", "nagle", "--rates", "5,50", "--host", "127.0.0.1"])
    assert args.rates == [5.0, 50.0] and callable(args.func)
    assert main(["lab", "nagle", "--host", "203.0.113.7", "--quiet"]) == 2
    assert "loopback" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        parser.parse_args(["lab", "nagle", "--rates", "fast"])


def test_options_text_round_trip():
    assert nagle.options_text([]) == "none"
    assert nagle.options_text({"TCP_NODELAY", "SO_KEEPALIVE"}) == "SO_KEEPALIVE+TCP_NODELAY"


@pytest.mark.slow
def test_server_answers_counts_and_stops():
    with nagle.serve() as srv:
        f = nagle.load_run("127.0.0.1", srv.port, rate_per_s=200, duration_s=0.5, connections=3,
                           options={"TCP_NODELAY"}, warmup_exchanges=2)
        pings = nagle.ping_run("127.0.0.1", srv.port, count=20, interval_s=0.005)
        proc = srv._proc
    assert proc.poll() is not None  # the server process is gone
    assert len(f) == 100 and (f["status"] == "ok").all()
    assert sorted(f["connection"].unique()) == [0, 1, 2]
    assert (f["latency_s"] > 0).all()
    assert np.allclose(f["latency_s"], f["recv_s"] - f["timestamp_s"])
    assert (f["send_s"] >= f["timestamp_s"] - 1e-4).all()  # never sent before its scheduled time
    gaps = np.diff(f["timestamp_s"].to_numpy())
    assert np.allclose(gaps, 1 / 200, atol=1e-6)  # the schedule is the fixed rate, whatever happens
    assert len(pings) == 20 and (pings["status"] == "ok").all()


@pytest.mark.slow
def test_lockstep_queues_behind_a_stall_and_the_wait_counts():
    # Nagle on both sides: each exchange on a connection takes ~40+ ms, so one connection in
    # lock-step cannot keep 50/s; latency from the schedule grows (no coordinated omission).
    with nagle.serve() as srv:
        f = nagle.load_run("127.0.0.1", srv.port, rate_per_s=50, duration_s=1.0, connections=1,
                           mode="lockstep", warmup_exchanges=20)
    answered = f[f["status"] == "ok"]["latency_s"].to_numpy()
    assert len(f) == 50 and len(answered) >= 20
    assert np.median(answered[-5:]) > np.median(answered[:5]) + 0.1
    # requests still queued when the bounded drain ends are kept and marked, not dropped
    assert f.loc[f["status"] == "unanswered", "latency_s"].isna().all()


@pytest.mark.slow
def test_live_quantum_and_nodelay_effect():
    """A short real run: Nagle on both sides vs TCP_NODELAY on both, at a low rate."""
    rec = nagle._Recorder(realtime=True)  # falls back to normal priority where not permitted
    for cond in (nagle.NODELAY_CONDITIONS[0], nagle.NODELAY_CONDITIONS[3]):
        nagle.sweep(cond, [10.0, 1000.0], rec, phase="sweep", duration_s=1.0, min_requests=40,
                    max_requests=500, connections=2, body_bytes=32, progress=False)
    frame = rec.frame()
    low = frame[frame["rate_per_s"] == 10.0]
    default = low[low["options"] == "default"]["latency_s"].to_numpy()
    fixed = low[low["options"] == "nodelay_both"]["latency_s"].to_numpy()
    assert np.median(default) > 0.030          # every low-rate request waits for a delayed ACK
    assert np.median(fixed) < 0.005            # TCP_NODELAY on both sides removes it
    stall = float(np.median(default))  # the delayed-ACK wait this run measured (40 ms nominal, more when busy)
    q = find_quantum(low["latency_s"].to_numpy())
    assert q is not None and abs(q - stall) <= 0.15 * stall  # the quantum is that wait (find_quantum's tolerance)
    assert set(frame["sched"]) <= {"fifo", "normal", "mixed"}
    high = frame[(frame["rate_per_s"] == 1000.0) & (frame["options"] == "default")]["latency_s"]
    assert np.median(high) < np.median(default) / 2  # under load the stall mostly vanishes


def test_realtime_priority_is_restored():
    import os

    before = os.sched_getscheduler(0)
    with nagle.realtime_priority(True) as policy:
        assert policy in ("fifo", "normal")
        if policy == "fifo":
            assert os.sched_getscheduler(0) == os.SCHED_FIFO
    assert os.sched_getscheduler(0) == before
    with nagle.realtime_priority(False) as policy:
        assert policy == "normal"


def test_capture_columns_are_documented():
    rec = nagle._Recorder()
    assert list(rec.frame().columns) == list(nagle.CSV_COLUMNS)
