"""Nagle's algorithm meets delayed ACKs, for real, on loopback.

A request/response TCP server and an open-loop client that each write one
message as **two** ``send()`` calls (a 12-byte header, then the body) and then
wait for the reply: the write-write-read pattern that makes Nagle's algorithm
hold the second write until the peer's delayed ACK (≥ 40 ms on Linux) arrives.

Pieces:

- :func:`serve` runs the ping-pong server (no work, or an optional fixed
  ``work_s`` per request) in a child process, so client and server do not share
  an interpreter lock.
- :func:`load_run` is an open-loop load generator: requests are *scheduled* at
  a fixed rate over several connections and latency is measured from the
  scheduled send time, so a stalled connection cannot hide queued requests
  (no coordinated omission). ``mode="pipelined"`` sends on schedule whatever is
  in flight; ``mode="lockstep"`` allows one request in flight per connection and
  queues the others (their wait counts as latency).
- :func:`ping_run` is a TCP connect "ping" (like PsPing): time to complete
  ``connect()`` to the server's port.
- :func:`bisect_options` starts from the option set that fixes the stall and
  removes options one at a time, in order, until the regression returns.
- :func:`run_capture` runs the whole investigation (rate sweeps with Nagle on,
  ``TCP_NODELAY`` per side, the ping baseline, a server with work, the
  bisection) and returns one sample frame.

Every run touches loopback only (anything else raises
:class:`~workbench.errors.UsageError` before a socket is opened, in this process
and in the server process alike), is bounded by a duration and a request cap,
stops by itself, closes its sockets and stops its server process. Output rows (one per request or ping) are described by
:data:`CSV_COLUMNS`; ``workbench lab nagle --out FILE.csv`` writes them.
"""
from __future__ import annotations

import argparse
import gc
import math
import os
import selectors
import socket
import struct
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..errors import LabError, UsageError
from ._net import check_loopback

if TYPE_CHECKING:  # numpy/pandas are imported where used: the server process needs only the stdlib
    import pandas as pd

HEADER = struct.Struct("!IQ")  # body length in bytes, request id
HEADER_BYTES = HEADER.size
MAX_BODY_BYTES = 1 << 20

#: Socket options the lab can set, by name. Applied right after connect/accept;
#: ``TCP_QUICKACK`` is not sticky in Linux, so it is re-armed after every recv().
OPTION_DOCS: dict[str, str] = {
    "SO_KEEPALIVE": "enable TCP keep-alive probes",
    "SO_SNDBUF": "send buffer set to 256 KiB",
    "SO_RCVBUF": "receive buffer set to 256 KiB",
    "TCP_CORK_OFF": "TCP_CORK explicitly off",
    "TCP_QUICKACK": "quick-ACK mode, re-armed after every recv()",
    "TCP_NODELAY": "disable Nagle's algorithm",
}
#: The order in which :func:`bisect_options` removes options (one per step).
BISECT_ORDER: tuple[str, ...] = (
    "SO_KEEPALIVE", "SO_SNDBUF", "SO_RCVBUF", "TCP_CORK_OFF", "TCP_QUICKACK", "TCP_NODELAY",
)
ALL_OPTIONS: frozenset[str] = frozenset(OPTION_DOCS)
BUFFER_BYTES = 256 * 1024

#: Columns of the sample CSV, in order, with their meaning.
CSV_COLUMNS: dict[str, str] = {
    "run": "run number within the capture (one condition at one rate)",
    "phase": "sweep | nodelay | ping | work | bisect | alone",
    "mode": "pipelined | lockstep | connect_ping",
    "rate_per_s": "offered request rate of the run, requests/s",
    "connection": "client connection index (0-based)",
    "request": "request index within the run (0-based)",
    "timestamp_s": "scheduled send time, epoch s",
    "send_s": "time the first send() of the request started, epoch s",
    "recv_s": "time the whole reply was received, epoch s (empty if unanswered)",
    "latency_s": "recv_s - timestamp_s, s (from the schedule: includes any wait to send)",
    "status": "ok | unanswered (no reply before the drain deadline)",
    "client_nodelay": "TCP_NODELAY set on the client socket",
    "server_nodelay": "TCP_NODELAY set on the server socket",
    "client_options": "socket options on the client, '+'-joined ('none' if empty)",
    "server_options": "socket options on the server, '+'-joined ('none' if empty)",
    "options": "label of the option set of the run (e.g. default, nodelay_both, all-SO_KEEPALIVE)",
    "work_ms": "server work per request, ms (0: pure ping-pong)",
    "body_bytes": "request and reply body size, bytes",
    "sched": "scheduling of client and server during the run: fifo (SCHED_FIFO real-time), normal or mixed",
}


# ---------------------------------------------------------------- safety ----

def _check_options(options: Iterable[str]) -> frozenset[str]:
    opts = frozenset(options)
    unknown = opts - ALL_OPTIONS
    if unknown:
        raise UsageError(f"unknown socket option(s) {sorted(unknown)} in options; known: {sorted(ALL_OPTIONS)}")
    return opts


def options_text(options: Iterable[str]) -> str:
    """Options as stored in the CSV: sorted, '+'-joined, 'none' when empty."""
    opts = sorted(options)
    return "+".join(opts) if opts else "none"


def apply_options(sock: socket.socket, options: frozenset[str]) -> None:
    """Set the named options on a connected TCP socket."""
    if "SO_KEEPALIVE" in options:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    if "SO_SNDBUF" in options:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, BUFFER_BYTES)
    if "SO_RCVBUF" in options:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BUFFER_BYTES)
    if "TCP_CORK_OFF" in options:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 0)
    if "TCP_NODELAY" in options:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if "TCP_QUICKACK" in options:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)


def _rearm(sock: socket.socket, options: frozenset[str]) -> None:
    if "TCP_QUICKACK" in options:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)


def _send_message(sock: socket.socket, request_id: int, body: bytes) -> None:
    """The pattern under test: header and body in two separate send() calls."""
    sock.sendall(HEADER.pack(len(body), request_id))
    sock.sendall(body)


# ------------------------------------------------------------ scheduling ----

#: SCHED_FIFO priority used with ``realtime=True`` (low: above every normal process, below kernel threads).
REALTIME_PRIORITY = 5


def _set_fifo(priority: int = REALTIME_PRIORITY) -> bool:
    """Put the calling thread under SCHED_FIFO; False when not permitted (no CAP_SYS_NICE)."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
        return True
    except (OSError, AttributeError):
        return False


@contextmanager
def realtime_priority(enabled: bool = True) -> Iterator[str]:
    """Run the block with the calling thread under SCHED_FIFO, then restore its policy.

    On a busy machine other processes delay the wake-ups of the client and
    server by milliseconds, which would be measured as latency; real-time
    priority keeps those delays out of the measurement. Every lab run is
    bounded and sleeps between requests. Yields the policy in effect:
    ``"fifo"``, or ``"normal"`` when disabled or not permitted.
    """
    if not enabled:
        yield "normal"
        return
    old_policy, old_param = os.sched_getscheduler(0), os.sched_getparam(0)
    ok = _set_fifo()
    try:
        yield "fifo" if ok else "normal"
    finally:
        if ok:
            os.sched_setscheduler(0, old_policy, old_param)


# ---------------------------------------------------------------- server ----

def _server_main(host: str, options: frozenset[str], work_s: float, max_life_s: float) -> None:
    """Server-process body: accept, answer each two-part message with a two-part reply.

    Prints the port on stdout, then serves until stdin closes (or gets a line),
    or ``max_life_s`` elapses. Refuses a non-loopback ``host`` before opening a socket.
    """
    host = check_loopback(host, "nagle")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    lsock = socket.socket(family, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind((host, 0))
    lsock.listen(128)
    lsock.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(lsock, selectors.EVENT_READ, "listen")
    sel.register(sys.stdin, selectors.EVENT_READ, "control")
    policy = "fifo" if os.sched_getscheduler(0) == os.SCHED_FIFO else "normal"
    print(lsock.getsockname()[1], policy, flush=True)
    buffers: dict[socket.socket, bytearray] = {}
    deadline = time.monotonic() + max_life_s
    try:
        while time.monotonic() < deadline:
            for key, _ in sel.select(timeout=0.5):
                if key.data == "control":
                    return  # a line or EOF on stdin from the parent means stop
                if key.data == "listen":
                    try:
                        s, _ = lsock.accept()
                    except BlockingIOError:
                        continue
                    apply_options(s, options)
                    s.settimeout(10.0)  # a peer that stops reading cannot block the server for long
                    buffers[s] = bytearray()
                    sel.register(s, selectors.EVENT_READ, "peer")
                    continue
                s = cast(socket.socket, key.fileobj)
                try:
                    data = s.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(s)
                    s.close()
                    buffers.pop(s, None)
                    continue
                _rearm(s, options)
                buf = buffers[s]
                buf += data
                while len(buf) >= HEADER_BYTES:
                    body_len, rid = HEADER.unpack_from(buf)
                    if body_len > MAX_BODY_BYTES:  # not our client: drop it
                        buf.clear()
                        break
                    if len(buf) < HEADER_BYTES + body_len:
                        break
                    body = bytes(buf[HEADER_BYTES:HEADER_BYTES + body_len])
                    del buf[:HEADER_BYTES + body_len]
                    if work_s > 0:
                        time.sleep(work_s)
                    try:
                        _send_message(s, rid, body)
                    except OSError:  # peer gone or not reading: drop the connection
                        sel.unregister(s)
                        s.close()
                        buffers.pop(s, None)
                        break
    finally:
        for s in list(buffers):
            s.close()
        sel.close()
        lsock.close()


def _server_entry(argv: list[str]) -> None:
    """The server process's entry point: ``HOST OPTIONS WORK_S MAX_LIFE_S`` (options '+'-joined)."""
    host, options, work_s, max_life_s = argv
    _server_main(host, frozenset(o for o in options.split("+") if o), float(work_s), float(max_life_s))


#: The server process imports this module from the package folder given first
#: (standard library imports only, so it starts fast).
_SERVER_CODE = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from workbench.lab.nagle import _server_entry; _server_entry(sys.argv[2:])"
)


@dataclass
class Server:
    """Handle on a running ping-pong server process (use as a context manager)."""

    host: str
    port: int
    options: frozenset[str]
    work_s: float
    policy: str
    _proc: subprocess.Popen[str] = field(repr=False)

    def stop(self) -> None:
        """Stop the server process and wait for it (kills it after 5 s)."""
        try:
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(5)
        if self._proc.stdout is not None:
            self._proc.stdout.close()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(host: str = "127.0.0.1", options: Iterable[str] = (), work_s: float = 0.0,
          max_life_s: float = 900.0, realtime: bool = False) -> Server:
    """Start the ping-pong server in a child process on a free loopback port.

    ``options`` are socket options for accepted connections (see :data:`OPTION_DOCS`);
    ``work_s`` is a fixed delay before each reply (0 = no work); the process
    exits by itself after ``max_life_s`` seconds even if never stopped. With
    ``realtime`` it runs under SCHED_FIFO when permitted (``Server.policy`` says).
    """
    host = check_loopback(host, "nagle")
    opts = _check_options(options)
    pkg_parent = str(Path(__file__).resolve().parents[2])
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVER_CODE, pkg_parent, host, "+".join(sorted(opts)), repr(float(work_s)),
         repr(float(max_life_s))],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        preexec_fn=_set_fifo if realtime else None)
    line = proc.stdout.readline() if proc.stdout is not None else ""
    parts = line.split()
    if len(parts) != 2 or not parts[0].isdigit():
        proc.kill()
        proc.wait(5)
        raise LabError(f"the nagle server did not start (said {line!r}, exit code {proc.returncode}); "
                       "expected its port and scheduling policy")
    return Server(host, int(parts[0]), opts, float(work_s), parts[1], proc)


# ---------------------------------------------------------------- client ----

#: Longest a client send() or warm-up recv() may block before the run fails, s.
IO_TIMEOUT_S = 10.0


@dataclass
class _Conn:
    sock: socket.socket
    index: int
    buf: bytearray = field(default_factory=bytearray)
    inflight: deque = field(default_factory=deque)  # request ids, in send order
    queued: deque = field(default_factory=deque)    # lockstep: scheduled but not yet sent


def _connect(host: str, port: int, options: frozenset[str]) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(5.0)
    s.connect((host, port))
    s.settimeout(IO_TIMEOUT_S)  # no send or warm-up recv can block for longer
    apply_options(s, options)
    return s


def _warm_up(conns: list[_Conn], body: bytes, exchanges: int, options: frozenset[str]) -> None:
    """Lock-step exchanges (all connections at once) so runs start on settled connections (not recorded)."""
    need = HEADER_BYTES + len(body)
    for k in range(exchanges):
        for c in conns:
            _send_message(c.sock, 10**12 + k, body)
        for c in conns:
            got = 0
            while got < need:
                data = c.sock.recv(65536)
                if not data:
                    raise LabError(f"the nagle server closed connection {c.index} during warm-up")
                _rearm(c.sock, options)
                got += len(data)


def load_run(host: str, port: int, rate_per_s: float, duration_s: float, *, max_requests: int = 2000,
             connections: int = 2, mode: str = "pipelined", options: Iterable[str] = (),
             body_bytes: int = 32, warmup_exchanges: int = 10, drain_s: float = 3.0) -> pd.DataFrame:
    """Offer ``rate_per_s`` requests/s for ``duration_s`` (at most ``max_requests``) over ``connections``.

    Open loop: request *i* is scheduled at ``t0 + i / rate_per_s`` on connection
    ``i % connections``; latency is measured from that scheduled time. After the
    last scheduled request the run waits at most ``drain_s`` for replies; the
    rest are ``status="unanswered"``. Returns one row per request with columns
    connection, request, timestamp_s, send_s, recv_s, latency_s, status
    (run-level columns are added by the caller).
    """
    import numpy as np
    import pandas as pd

    host = check_loopback(host, "nagle")
    if mode not in ("pipelined", "lockstep"):
        raise UsageError(f"mode must be 'pipelined' or 'lockstep', got {mode!r}")
    if not (rate_per_s > 0 and duration_s > 0 and max_requests > 0 and connections > 0):
        raise UsageError(f"rate_per_s, duration_s, max_requests and connections must be positive, got "
                         f"{rate_per_s}, {duration_s}, {max_requests}, {connections}")
    if not 0 <= body_bytes <= MAX_BODY_BYTES:
        raise UsageError(f"body_bytes must be between 0 and {MAX_BODY_BYTES}, got {body_bytes}")
    opts = _check_options(options)
    n = int(min(max_requests, max(1, math.ceil(rate_per_s * duration_s))))
    body = b"x" * body_bytes
    reply_len = HEADER_BYTES + body_bytes
    sent = np.full(n, np.nan)
    recv = np.full(n, np.nan)
    conns: list[_Conn] = []
    sel = selectors.DefaultSelector()
    gc_was_enabled = gc.isenabled()
    gc.disable()  # a collector pause would delay sends and be measured as latency
    try:
        for k in range(connections):
            conns.append(_Conn(_connect(host, port, opts), k))
        _warm_up(conns, body, warmup_exchanges, opts)
        for c in conns:
            sel.register(c.sock, selectors.EVENT_READ, c)
        interval = 1.0 / rate_per_s
        clock = time.perf_counter
        t0 = clock() + 0.02
        i = 0
        outstanding = 0
        hard_stop = t0 + (n - 1) * interval + drain_s

        def send(c: _Conn, rid: int) -> None:
            sent[rid] = clock()
            _send_message(c.sock, rid, body)
            c.inflight.append(rid)

        while True:
            now = clock()
            while i < n and t0 + i * interval <= now:
                c = conns[i % connections]
                if mode == "pipelined" or not c.inflight:
                    send(c, i)
                else:
                    c.queued.append(i)
                outstanding += 1
                i += 1
                now = clock()
            if i >= n and outstanding == 0:
                break
            if now >= hard_stop:
                break
            timeout = (t0 + i * interval - now) if i < n else (hard_stop - now)
            for key, _ in sel.select(timeout=max(0.0, timeout)):
                c = key.data
                data = c.sock.recv(65536)
                t_recv = clock()
                if not data:
                    raise LabError(f"the nagle server closed connection {c.index} during the run")
                _rearm(c.sock, opts)
                c.buf += data
                while len(c.buf) >= reply_len:
                    _, rid = HEADER.unpack_from(c.buf)
                    del c.buf[:reply_len]
                    expected = c.inflight.popleft()
                    if rid != expected:
                        raise LabError(f"reply for request {rid} arrived while {expected} was expected")
                    recv[rid] = t_recv
                    outstanding -= 1
                    if mode == "lockstep" and c.queued:
                        send(c, c.queued.popleft())
    finally:
        if gc_was_enabled:
            gc.enable()
        sel.close()
        for c in conns:
            c.sock.close()
    offset = time.time() - time.perf_counter()
    scheduled = t0 + np.arange(n) * interval
    frame = pd.DataFrame({
        "connection": (np.arange(n) % connections).astype("int64"),
        "request": np.arange(n, dtype="int64"),
        "timestamp_s": scheduled + offset,
        "send_s": sent + offset,
        "recv_s": recv + offset,
    })
    frame["latency_s"] = frame["recv_s"] - frame["timestamp_s"]
    frame["status"] = np.where(np.isnan(recv), "unanswered", "ok")
    frame["status"] = frame["status"].astype(object)
    return frame


def ping_run(host: str, port: int, count: int = 200, interval_s: float = 0.01) -> pd.DataFrame:
    """TCP connect "ping": ``count`` connects to ``host:port``, one every ``interval_s``.

    Latency is the time from the scheduled start to the completed handshake.
    Returns rows with connection (always 0), request, timestamp_s, send_s,
    recv_s, latency_s, status.
    """
    import pandas as pd

    host = check_loopback(host, "nagle")
    if count <= 0 or interval_s <= 0:
        raise UsageError(f"count and interval_s must be positive, got count={count}, interval_s={interval_s}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    offset = time.time() - time.perf_counter()
    t0 = time.perf_counter() + 0.01
    rows = []
    for k in range(count):
        t_sched = t0 + k * interval_s
        wait = t_sched - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        s = socket.socket(family, socket.SOCK_STREAM)
        try:
            s.settimeout(5.0)
            t_send = time.perf_counter()
            try:
                s.connect((host, port))
                t_done = time.perf_counter()
                status = "ok"
            except OSError:
                t_done, status = math.nan, "unanswered"
        finally:
            s.close()
        rows.append((0, k, t_sched + offset, t_send + offset, t_done + offset, status))
    frame = pd.DataFrame(rows, columns=["connection", "request", "timestamp_s", "send_s", "recv_s", "status"])
    frame["latency_s"] = frame["recv_s"] - frame["timestamp_s"]
    frame["status"] = frame["status"].astype(object)
    return frame[["connection", "request", "timestamp_s", "send_s", "recv_s", "latency_s", "status"]]


# ------------------------------------------------------------ conditions ----

@dataclass(frozen=True)
class Condition:
    """One experimental condition: socket options per side, server work, load mode."""

    label: str
    client_options: frozenset[str] = frozenset()
    server_options: frozenset[str] = frozenset()
    work_s: float = 0.0
    mode: str = "pipelined"


#: The four Nagle conditions: default (Nagle on both sides), TCP_NODELAY per side, both.
NODELAY_CONDITIONS: tuple[Condition, ...] = (
    Condition("default"),
    Condition("nodelay_client", client_options=frozenset({"TCP_NODELAY"})),
    Condition("nodelay_server", server_options=frozenset({"TCP_NODELAY"})),
    Condition("nodelay_both", frozenset({"TCP_NODELAY"}), frozenset({"TCP_NODELAY"})),
)


@dataclass
class _Recorder:
    """Collects run frames and numbers the runs."""

    host: str = "127.0.0.1"
    realtime: bool = False
    frames: list[pd.DataFrame] = field(default_factory=list)

    def add(self, frame: pd.DataFrame, *, phase: str, mode: str, rate_per_s: float, cond: Condition,
            body_bytes: int, sched: str = "normal") -> pd.DataFrame:
        frame = frame.copy()
        frame.insert(0, "run", len(self.frames))
        frame.insert(1, "phase", phase)
        frame.insert(2, "mode", mode)
        frame.insert(3, "rate_per_s", float(rate_per_s))
        frame["client_nodelay"] = "TCP_NODELAY" in cond.client_options
        frame["server_nodelay"] = "TCP_NODELAY" in cond.server_options
        frame["client_options"] = options_text(cond.client_options)
        frame["server_options"] = options_text(cond.server_options)
        frame["options"] = cond.label
        frame["work_ms"] = cond.work_s * 1e3
        frame["body_bytes"] = int(body_bytes)
        frame["sched"] = sched
        for c in ("phase", "mode", "client_options", "server_options", "options", "sched"):
            frame[c] = frame[c].astype(object)
        self.frames.append(frame[list(CSV_COLUMNS)])
        return self.frames[-1]

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        if not self.frames:
            return pd.DataFrame({c: pd.Series(dtype="float64") for c in CSV_COLUMNS})
        return pd.concat(self.frames, ignore_index=True)


def _sched(client: str, server: str) -> str:
    return client if client == server else "mixed"


def _requests_for(rate: float, duration_s: float, min_requests: int, max_requests: int) -> tuple[float, int]:
    """Duration and cap for one rate: at least ``min_requests`` (low rates run longer), at most the cap."""
    n = int(min(max_requests, max(min_requests, math.ceil(rate * duration_s))))
    return n / rate, n


def sweep(cond: Condition, rates: Sequence[float], rec: _Recorder, *, phase: str, duration_s: float,
          min_requests: int, max_requests: int, connections: int, body_bytes: int,
          progress: bool = True) -> None:
    """Run ``cond`` at each offered rate against a fresh server; rows go to ``rec``."""
    from tqdm.auto import tqdm

    with serve(rec.host, cond.server_options, cond.work_s, realtime=rec.realtime) as srv:
        bar = tqdm(list(rates), desc=f"{phase}:{cond.label}", unit="rate", disable=not progress, leave=False)
        for rate in bar:
            dur, n = _requests_for(rate, duration_s, min_requests, max_requests)
            bar.set_postfix_str(f"{rate:g}/s × {n}")
            with realtime_priority(rec.realtime) as policy:
                f = load_run(rec.host, srv.port, rate, dur, max_requests=n, connections=connections,
                             mode=cond.mode, options=cond.client_options, body_bytes=body_bytes)
            rec.add(f, phase=phase, mode=cond.mode, rate_per_s=rate, cond=cond, body_bytes=body_bytes,
                    sched=_sched(policy, srv.policy))


@dataclass(frozen=True)
class BisectionStep:
    """One bisection trial: the options on both sides, what was removed, the measured tail."""

    options: tuple[str, ...]
    removed: str | None
    p90_s: float
    regressed: bool


@dataclass(frozen=True)
class Bisection:
    """Outcome of :func:`bisect_options`.

    ``steps``: the removal trials in order; ``culprits``: options whose removal
    brought the stall back; ``alone``: option → whether that option *alone*
    (on both sides) fixes the stall (empty unless ``check_alone``).
    """

    steps: tuple[BisectionStep, ...]
    culprits: tuple[str, ...]
    alone: dict[str, bool] = field(default_factory=dict)


def _trial(rec: _Recorder, opts: frozenset[str], label: str, phase: str, rate_per_s: float,
           duration_s: float, min_requests: int, connections: int, body_bytes: int,
           threshold_s: float) -> tuple[float, bool]:
    import numpy as np

    cond = Condition(label, opts, opts)
    with serve(rec.host, opts, realtime=rec.realtime) as srv, realtime_priority(rec.realtime) as policy:
        dur, n = _requests_for(rate_per_s, duration_s, min_requests, 10**6)
        f = load_run(rec.host, srv.port, rate_per_s, dur, max_requests=n, connections=connections,
                     options=opts, body_bytes=body_bytes)
    rec.add(f, phase=phase, mode="pipelined", rate_per_s=rate_per_s, cond=cond, body_bytes=body_bytes,
            sched=_sched(policy, srv.policy))
    lat = f["latency_s"].to_numpy()
    p90 = float(np.nanpercentile(lat, 90)) if np.isfinite(lat).any() else math.inf
    return p90, bool(p90 > threshold_s or (f["status"] != "ok").any())


def bisect_options(rec: _Recorder, *, all_options: Sequence[str] = BISECT_ORDER, rate_per_s: float = 20.0,
                   duration_s: float = 4.0, min_requests: int = 60, connections: int = 2,
                   body_bytes: int = 32, threshold_s: float = 0.02, check_alone: bool = True,
                   progress: bool = True) -> Bisection:
    """Remove options one at a time (in ``all_options`` order) from the set that fixes the stall.

    Each trial applies the kept set on both sides and runs ``rate_per_s`` for
    ``duration_s``; a trial *regresses* when its p90 latency exceeds
    ``threshold_s``. A removal that regresses marks that option as a culprit and
    puts it back; otherwise it stays removed. The first trial (all options)
    must not regress, else :class:`~workbench.errors.LabError`. With ``check_alone`` each option is then
    also tried alone (phase ``alone``): when options are redundant, which one
    the removal order names depends on the order, and this shows it.
    Trials are recorded with phase ``bisect`` and label ``all`` / ``all-A-B…``.
    """
    from tqdm.auto import tqdm

    kept = list(all_options)
    _check_options(kept)
    steps: list[BisectionStep] = []
    culprits: list[str] = []
    trials: list[str | None] = [None, *all_options]
    alone = list(all_options) if check_alone else []
    common: dict[str, Any] = dict(rate_per_s=rate_per_s, duration_s=duration_s, min_requests=min_requests,
                                  connections=connections, body_bytes=body_bytes, threshold_s=threshold_s)
    bar = tqdm(total=len(trials) + len(alone), desc="bisect", unit="trial", disable=not progress, leave=False)
    with bar:
        for removed in trials:
            trial = [o for o in kept if o != removed]
            opts = frozenset(trial)
            label = "all" if removed is None else "all-" + "-".join(o for o in all_options if o not in opts)
            p90, regressed = _trial(rec, opts, label, "bisect", **common)
            bar.update()
            steps.append(BisectionStep(tuple(trial), removed, p90, regressed))
            if removed is None:
                if regressed:
                    raise LabError(f"the full option set does not fix the stall here (p90 {p90 * 1e3:.1f} ms "
                                   f"> threshold_s={threshold_s * 1e3:g} ms): nothing to bisect on this machine")
                continue
            if regressed:
                culprits.append(removed)
            else:
                kept = trial
        fixes: dict[str, bool] = {}
        for opt in alone:
            _, regressed = _trial(rec, frozenset({opt}), f"only-{opt}", "alone", **common)
            bar.update()
            fixes[opt] = not regressed
    return Bisection(tuple(steps), tuple(culprits), fixes)


DEFAULT_RATES: tuple[float, ...] = (5, 10, 20, 50, 100, 200, 500, 1000, 2000, 3000, 5000)


def run_capture(*, rates: Sequence[float] = DEFAULT_RATES, nodelay_rates: Sequence[float] | None = None,
                duration_s: float = 3.0, min_requests: int = 150, max_requests: int = 800,
                nodelay_max_requests: int | None = None, connections: int = 2, body_bytes: int = 32,
                ping_count: int = 200, work_ms: float = 1.0, work_rates: Sequence[float] = (5, 200),
                bisect_rate_per_s: float = 20.0, bisect_duration_s: float = 4.0, check_alone: bool = True,
                mode: str = "pipelined", host: str = "127.0.0.1", realtime: bool = False,
                progress: bool = True) -> pd.DataFrame:
    """The whole investigation as one sample frame (columns :data:`CSV_COLUMNS`).

    Phases: ``sweep`` (Nagle on both sides over ``rates``), ``nodelay``
    (TCP_NODELAY on the client, the server, both; over ``nodelay_rates``),
    ``ping`` (TCP connect ping), ``work`` (default sockets, server working
    ``work_ms`` per request, at ``work_rates``), ``bisect`` and ``alone``
    (:func:`bisect_options` at ``bisect_rate_per_s``). Each rate runs
    ``duration_s`` seconds but at least ``min_requests`` and at most
    ``max_requests`` requests (``nodelay_max_requests`` for the nodelay phase).
    ``mode`` (pipelined or lockstep) applies to the sweep, nodelay and work
    phases. ``realtime``: run client and server under SCHED_FIFO where permitted
    (:func:`realtime_priority`; column ``sched`` records what was in effect).
    """
    from tqdm.auto import tqdm

    if mode not in ("pipelined", "lockstep"):
        raise UsageError(f"mode must be 'pipelined' or 'lockstep', got {mode!r}")
    rec = _Recorder(check_loopback(host, "nagle"), realtime)
    nodelay_rates = list(rates if nodelay_rates is None else nodelay_rates)
    nd_max = max_requests if nodelay_max_requests is None else nodelay_max_requests
    common: dict[str, Any] = dict(duration_s=duration_s, min_requests=min_requests, connections=connections,
                                  body_bytes=body_bytes, progress=progress)
    stages = ["sweep", "nodelay_client", "nodelay_server", "nodelay_both", "ping", "work", "bisect"]
    bar = tqdm(stages, desc="nagle capture", unit="stage", disable=not progress)
    for stage in bar:
        bar.set_postfix_str(stage)
        if stage == "sweep":
            sweep(replace(NODELAY_CONDITIONS[0], mode=mode), rates, rec, phase="sweep",
                  max_requests=max_requests, **common)
        elif stage.startswith("nodelay"):
            cond = replace(next(c for c in NODELAY_CONDITIONS if c.label == stage), mode=mode)
            sweep(cond, nodelay_rates, rec, phase="nodelay", max_requests=nd_max, **common)
        elif stage == "ping":
            with serve(rec.host, realtime=rec.realtime) as srv, realtime_priority(rec.realtime) as policy:
                f = ping_run(rec.host, srv.port, count=ping_count)
            rec.add(f, phase="ping", mode="connect_ping", rate_per_s=100.0, cond=Condition("default"),
                    body_bytes=0, sched=_sched(policy, srv.policy))
        elif stage == "work":
            if work_ms > 0 and work_rates:
                cond = Condition(f"default+work{work_ms:g}ms", work_s=work_ms / 1e3, mode=mode)
                sweep(cond, work_rates, rec, phase="work", max_requests=max_requests, **common)
        else:
            bisect_options(rec, rate_per_s=bisect_rate_per_s, duration_s=bisect_duration_s,
                           connections=connections, body_bytes=body_bytes, check_alone=check_alone,
                           progress=progress)
    return rec.frame()


def write_csv(frame: pd.DataFrame, path: str) -> None:
    """Write a capture as CSV with microsecond timestamps and nanosecond latencies."""
    import numpy as np

    out = frame.copy()
    for c in ("timestamp_s", "send_s", "recv_s"):
        out[c] = out[c].map(lambda v: "" if not np.isfinite(v) else f"{v:.6f}")
    out["latency_s"] = out["latency_s"].map(lambda v: "" if not np.isfinite(v) else f"{v:.9f}")
    out.to_csv(path, index=False)


# --------------------------------------------------------------- command ----

def _floats(text: str) -> list[float]:
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
    if not vals or any(v <= 0 for v in vals):
        raise argparse.ArgumentTypeError(f"expected positive rates, got {text!r}")
    return vals


def _cmd(args: argparse.Namespace) -> int:
    try:
        frame = run_capture(rates=args.rates, nodelay_rates=args.nodelay_rates, duration_s=args.duration,
                            min_requests=args.min_requests, max_requests=args.max_requests,
                            nodelay_max_requests=args.nodelay_max_requests, connections=args.connections,
                            body_bytes=args.body_bytes, ping_count=args.pings, work_ms=args.work_ms,
                            work_rates=args.work_rates, bisect_rate_per_s=args.bisect_rate,
                            bisect_duration_s=args.bisect_duration, check_alone=not args.no_alone,
                            mode=args.mode, host=args.host, realtime=args.realtime, progress=not args.quiet)
    except (UsageError, LabError) as exc:
        print(f"workbench lab nagle: {exc}")
        return 2
    write_csv(frame, args.out)
    print(f"wrote {len(frame)} samples from {frame['run'].nunique()} runs to {args.out}")
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench lab nagle``: run the capture and write the sample CSV."""
    p = subparsers.add_parser(
        "nagle", help="Nagle vs delayed ACK on loopback: open-loop rate sweep, TCP_NODELAY per side, bisection",
        description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="nagle_samples.csv", help="output CSV (default: nagle_samples.csv)")
    p.add_argument("--rates", type=_floats, default=list(DEFAULT_RATES),
                   help="offered rates for the Nagle sweep, requests/s, comma-separated")
    p.add_argument("--nodelay-rates", type=_floats, default=None,
                   help="offered rates for the TCP_NODELAY runs (default: --rates)")
    p.add_argument("--duration", type=float, default=3.0, help="seconds per rate (default 3)")
    p.add_argument("--min-requests", type=int, default=150, help="at least this many requests per rate")
    p.add_argument("--max-requests", type=int, default=800, help="at most this many requests per rate")
    p.add_argument("--nodelay-max-requests", type=int, default=None,
                   help="request cap per rate for the TCP_NODELAY runs (default: --max-requests)")
    p.add_argument("--connections", type=int, default=2, help="client connections (default 2)")
    p.add_argument("--mode", choices=("pipelined", "lockstep"), default="pipelined",
                   help="pipelined: send on schedule whatever is in flight; lockstep: one request in flight "
                        "per connection, later ones wait (and the wait counts as latency)")
    p.add_argument("--body-bytes", type=int, default=32, help="request/reply body size, bytes")
    p.add_argument("--pings", type=int, default=200, help="TCP connect pings (default 200)")
    p.add_argument("--work-ms", type=float, default=1.0, help="server work per request in the work phase, ms")
    p.add_argument("--work-rates", type=_floats, default=[5.0, 200.0],
                   help="offered rates for the work phase, requests/s (default 5,200)")
    p.add_argument("--no-alone", action="store_true", help="skip trying each option alone after the bisection")
    p.add_argument("--bisect-rate", type=float, default=20.0, help="offered rate of bisection trials, requests/s")
    p.add_argument("--bisect-duration", type=float, default=4.0, help="seconds per bisection trial")
    p.add_argument("--host", default="127.0.0.1", help="loopback address to use (127.0.0.0/8 or ::1)")
    p.add_argument("--realtime", action="store_true",
                   help="run client and server at real-time priority (SCHED_FIFO, needs CAP_SYS_NICE) so other "
                        "processes on a busy machine do not add scheduling delays to the measurement")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_cmd)
