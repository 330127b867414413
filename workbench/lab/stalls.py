"""Quantised stalls, for real, on this machine: futex timeouts under strace, global pauses, I/O interference.

Four experiments, all on loopback, bounded, cleaning up after themselves:

1. **Futex server under strace.** A request server (a child process, traced with
   ``strace -f -ttt -T -y``) answers one request per line on a loopback TCP
   connection. Its handler does a few ms of CPU work and, for a seeded random
   set of requests, blocks in a real ``futex(FUTEX_WAIT_PRIVATE)`` with a 250,
   500 or 1000 ms timeout on a word nobody wakes: strace shows
   ``futex(…, FUTEX_WAIT_PRIVATE, 0, {tv_sec=0, tv_nsec=250000000}) = -1 ETIMEDOUT``.
   Every injection is logged by the server. A heartbeat thread in the server polls
   a control pipe with a 100 ms timeout (a distractor: a sharp 100 ms ``poll``
   peak that is not a stall). The client (this process, not traced) records every
   request's latency; a "fixed" run repeats it with no injection.
2. **Connect ping.** While the futex run goes on, a thread times TCP connects to a
   loopback listener every ``ping_interval_ms``: the network baseline.
3. **Pipeline with global pauses.** A worker process runs requests of 15 steps of
   fixed CPU work (each step a different length) and times every step. A
   controller thread here stops the whole worker with SIGSTOP at random
   (exponential gaps) and resumes it with SIGCONT after ``pause_ms``: a stall that
   hits whatever step happens to run. Every pause is logged. Workers are replaced
   ``generations`` times so process uptime varies.
4. **Interference.** The request server (untraced, no injection; each request
   appends a small record to a file and ``fdatasync``s it, as a service saving
   state does) is driven in alternating blocks with and without a writer process
   that rewrites a large file with ``fsync`` in a loop (several times the file's
   size per save, as a versioning hook does).

Run it as ``workbench lab stalls --out DIR``; :func:`read_capture` loads the
files back. Child processes run this module with ``python -I -S`` and the
package's folder put first on ``sys.path`` (:func:`child_command`): the traced
server imports the standard library and this module's light package only (no
site packages, no pandas), so the trace stays small, and it checks its address
with the same :func:`~workbench.lab._net.check_loopback` as this process.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import ctypes
import errno as _errno
import json
import os
import platform
import random
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputNotFoundError, LabError, UsageError
from ._net import check_loopback

if TYPE_CHECKING:  # pandas is imported where used: the child processes need only the standard library
    import pandas as pd

    from ..schema import Schema

FUTEX_WAIT_PRIVATE = 0 | 128
_SYS_FUTEX = {"x86_64": 202, "aarch64": 98, "riscv64": 98, "ppc64le": 221, "s390x": 238}.get(platform.machine())
WAIT_KINDS_MS = (250, 500, 1000)
STEP_MS = (0.3, 0.6, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0, 0.8)
PHASES = {"before": (1, 2, 3, 4, 5), "evaluate": (6, 7, 8, 9, 10, 11, 12), "after": (13, 14, 15)}
INSTALL_HINT = "strace is not installed: install it (Debian/Ubuntu: apt-get install strace; Fedora: dnf install strace)"


# ============================================================== child roles (standard library only)

class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


_LIBC: list[ctypes.CDLL] = []


def _libc() -> ctypes.CDLL:
    """The C library (loaded once: the program's own symbols, no child process spawned)."""
    if not _LIBC:
        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


def futex_wait(timeout_ms: int) -> tuple[str, float, float]:
    """Block in ``futex(FUTEX_WAIT_PRIVATE)`` on a private word nobody wakes, for ``timeout_ms``.

    Returns (result, start epoch s, end epoch s); result is the errno name
    (``ETIMEDOUT`` normally). Falls back to ``threading.Lock.acquire(timeout)``
    (also a futex wait, with an absolute timeout) where the syscall number is unknown.
    """
    t0 = time.time()
    if _SYS_FUTEX is None:
        lock = threading.Lock()
        lock.acquire()
        lock.acquire(timeout=timeout_ms / 1000)
        return "ETIMEDOUT", t0, time.time()
    libc = _libc()
    word = ctypes.c_int(0)
    ts = _Timespec(timeout_ms // 1000, (timeout_ms % 1000) * 1_000_000)
    r = libc.syscall(_SYS_FUTEX, ctypes.byref(word), FUTEX_WAIT_PRIVATE, 0, ctypes.byref(ts), None, 0)
    err = ctypes.get_errno() if r != 0 else 0
    return (_errno.errorcode.get(err, str(err)) if err else "woken"), t0, time.time()


def _spin(n: int) -> int:
    x = 0
    for i in range(n):
        x += i
    return x


def _iters_per_ms() -> float:
    """Iterations of :func:`_spin` per millisecond on this CPU (best of 7 short runs)."""
    best = float("inf")
    for _ in range(7):
        t0 = time.perf_counter()
        _spin(100_000)
        best = min(best, time.perf_counter() - t0)
    return 100_000 / (best * 1e3)


def _write_atomic(path: str, text: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _serve(a: argparse.Namespace) -> int:
    """Child: answer ``REQ <id>`` lines on one loopback connection; inject futex waits; log them."""
    host = check_loopback(a.host, "stalls")  # before any socket
    signal.alarm(int(a.max_life_s))  # never outlive the experiment
    rng = random.Random(a.seed)
    slots = rng.sample(range(1, a.requests), min(a.requests - 1, a.per_kind * len(WAIT_KINDS_MS)))
    plan = {rid: WAIT_KINDS_MS[k % len(WAIT_KINDS_MS)] for k, rid in enumerate(slots)}
    loops = max(1, int(round(a.work_ms * _iters_per_ms())))
    _libc()
    state = None
    if a.state_dir:
        state = os.open(os.path.join(a.state_dir, "state.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    r_stop, w_stop = os.pipe()

    def heartbeat() -> None:
        p = select.poll()
        p.register(r_stop, select.POLLIN)
        while not p.poll(a.heartbeat_ms):
            pass

    srv = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    srv.bind((host, 0))
    srv.listen(1)
    _write_atomic(a.port_file, str(srv.getsockname()[1]))
    conn, _ = srv.accept()
    hb = threading.Thread(target=heartbeat, name="heartbeat")
    hb.start()
    log: list[tuple[int, int, float, float, str]] = []
    buf = b""
    try:
        while True:
            data = conn.recv(4096)
            if not data:
                break
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                rid = int(line.split()[1])
                _spin(loops)
                if state is not None:
                    os.write(state, b"%d %.6f\n" % (rid, time.time()) + b"x" * 200)
                    os.fdatasync(state)
                wait = plan.get(rid)
                if wait:
                    res, t0, t1 = futex_wait(wait)
                    log.append((rid, wait, t0, t1, res))
                conn.sendall(b"OK %d\n" % rid)
    finally:
        os.write(w_stop, b"x")
        hb.join()
        conn.close()
        srv.close()
        if state is not None:
            os.close(state)
        with open(a.log, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["request", "wait_ms", "start_s", "end_s", "result"])
            for rid, wait, t0, t1, res in log:
                w.writerow([rid, wait, f"{t0:.6f}", f"{t1:.6f}", res])
    return 0


def _pipeline(a: argparse.Namespace) -> int:
    """Child: run requests of fixed-work steps and time every step; write steps CSV."""
    signal.alarm(int(a.max_life_s))
    born = time.time()
    steps_ms = [float(x) for x in a.steps_ms.split(",")]
    ipm = _iters_per_ms()
    loops = [max(1, int(round(ms * ipm))) for ms in steps_ms]
    _write_atomic(a.ready_file, str(os.getpid()))
    rows = []
    pid = os.getpid()
    for r in range(a.requests):
        for s, n in enumerate(loops, 1):
            ts = time.time()
            t0 = time.perf_counter()
            _spin(n)
            rows.append((a.generation, pid, a.first_request + r, s, ts, time.perf_counter() - t0, ts - born))
        time.sleep(a.gap_ms / 1000)
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["generation", "pid", "request", "step", "start_s", "duration_s", "uptime_s"])
        for g, p, r, s, ts, d, up in rows:
            w.writerow([g, p, r, s, f"{ts:.6f}", f"{d:.7f}", f"{up:.6f}"])
    return 0


def _writer(a: argparse.Namespace) -> int:
    """Child: rewrite a big file and a versioned copy, fsync each, until stopped or ``max_life_s``."""
    signal.alarm(int(a.max_life_s))
    chunk = os.urandom(1 << 20)
    target, history = os.path.join(a.dir, "notebook.dat"), os.path.join(a.dir, "notebook.dat,v")
    while True:
        for path in (target, history, history):  # the file, then "several times its size" of history
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                for _ in range(a.file_mb):
                    os.write(fd, chunk)
                os.fsync(fd)
            finally:
                os.close(fd)


def _child_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="stalls-child")
    sub = p.add_subparsers(dest="role", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port-file", required=True)
    s.add_argument("--log", required=True)
    s.add_argument("--requests", type=int, required=True)
    s.add_argument("--per-kind", type=int, default=0)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--work-ms", type=float, default=3.0)
    s.add_argument("--heartbeat-ms", type=int, default=100)
    s.add_argument("--state-dir", default="")
    s.add_argument("--max-life-s", type=float, default=120)
    s.set_defaults(func=_serve)
    s = sub.add_parser("pipeline")
    s.add_argument("--requests", type=int, required=True)
    s.add_argument("--first-request", type=int, default=0)
    s.add_argument("--generation", type=int, default=0)
    s.add_argument("--steps-ms", required=True)
    s.add_argument("--gap-ms", type=float, default=2.0)
    s.add_argument("--ready-file", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--max-life-s", type=float, default=120)
    s.set_defaults(func=_pipeline)
    s = sub.add_parser("writer")
    s.add_argument("--dir", required=True)
    s.add_argument("--file-mb", type=int, default=8)
    s.add_argument("--max-life-s", type=float, default=60)
    s.set_defaults(func=_writer)
    a = p.parse_args(argv)
    return int(a.func(a) or 0)


# ============================================================== orchestration (this process)

def require_strace() -> str:
    """Path of the strace binary; :class:`~workbench.errors.LabError` with the install command when it is missing."""
    path = shutil.which("strace")
    if path is None:
        raise LabError(INSTALL_HINT)
    return path


def _strace_version() -> str:
    """First line of ``strace -V`` (empty when it cannot be run)."""
    try:
        out = subprocess.run([require_strace(), "-V"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, LabError, subprocess.SubprocessError):
        return ""
    return out.splitlines()[0].strip() if out else ""


#: the folder holding the ``workbench`` package, put first on the children's ``sys.path``
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])


def child_command(code: str, *args: str) -> list[str]:
    """``python -I -S -c CODE ARGS…`` with this package importable (``sys.argv[1:]`` are ``args`` in ``code``).

    Isolated mode without site packages: the child imports the standard library
    and ``workbench``'s light modules only, from the same folder as this process.
    """
    boot = f"import sys; sys.path.insert(0, {_PACKAGE_PARENT!r}); "
    return [sys.executable, "-I", "-S", "-c", boot + code, *args]


def _child(role_args: list[str]) -> list[str]:
    return child_command("from workbench.lab.stalls import _child_main; sys.exit(_child_main(sys.argv[1:]))",
                         *role_args)


def _wait_file(path: Path, proc: subprocess.Popen[bytes], timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists():
            return path.read_text()
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise LabError(f"a stalls child exited with {proc.returncode} before writing {path.name}: {err[-2000:]}")
        time.sleep(0.01)
    raise LabError(f"a stalls child did not write {path.name} within {timeout_s} s")


def _stop(proc: subprocess.Popen[bytes] | None, timeout_s: float = 5.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGCONT)
        proc.terminate()
    try:
        proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout_s)


class _Pinger:
    """Times TCP connects to a loopback listener every ``interval_s`` in a thread (the network baseline)."""

    def __init__(self, host: str, interval_s: float, max_count: int) -> None:
        self.host, self.interval_s, self.max_count = check_loopback(host, "stalls"), interval_s, max_count
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.listener = socket.socket(fam, socket.SOCK_STREAM)
        self.listener.bind((host, 0))
        self.listener.listen(64)
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.rows: list[tuple[int, float, float]] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._accept, daemon=True),
                         threading.Thread(target=self._ping, daemon=True)]

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                c, _ = self.listener.accept()
            except (TimeoutError, OSError):
                continue
            c.close()

    def _ping(self) -> None:
        fam = self.listener.family
        for k in range(self.max_count):
            if self._stop.wait(self.interval_s):
                break
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.settimeout(2.0)
            ts = time.time()
            t0 = time.perf_counter()
            try:
                s.connect((self.host, self.port))
                lat = time.perf_counter() - t0
            except OSError:
                lat = float("nan")
            finally:
                s.close()
            self.rows.append((k, ts, lat))

    def __enter__(self) -> _Pinger:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(3.0)
        self.listener.close()


def _drive(host: str, port: int, requests: int, gap_s: float, deadline: float, bar: Any = None,
           stop_at: float | None = None) -> list[tuple[int, float, float]]:
    """Send ``REQ i`` lines one at a time; return (request, start epoch s, latency s) per answered request."""
    host = check_loopback(host, "stalls")
    rows = []
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(fam, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.settimeout(10.0)
        s.connect((host, port))
        f = s.makefile("rb")
        for i in range(requests):
            if time.monotonic() > deadline or (stop_at is not None and time.time() >= stop_at):
                break
            ts = time.time()
            t0 = time.perf_counter()
            s.sendall(b"REQ %d\n" % i)
            reply = f.readline()
            lat = time.perf_counter() - t0
            if reply != b"OK %d\n" % i:
                raise LabError(f"the stalls server answered {reply!r} to request {i}; expected b'OK {i}\\n'")
            rows.append((i, ts, lat))
            if bar is not None:
                bar.update(1)
            if gap_s > 0:
                time.sleep(gap_s)
    return rows


def _server_run(tmp: Path, name: str, *, host: str, requests: int, per_kind: int, seed: int, work_ms: float,
                strace_out: Path | None, gap_s: float, max_s: float, state_dir: str = "",
                stop_at: float | None = None, bar: Any = None) -> tuple[list[tuple[int, float, float]], Path]:
    """Start the server (under strace when ``strace_out``), drive it, stop it; (client rows, server log)."""
    port_file, log = tmp / f"{name}.port", tmp / f"{name}.injections.csv"
    role = ["serve", "--host", host, "--port-file", str(port_file), "--log", str(log), "--requests",
            str(requests), "--per-kind", str(per_kind), "--seed", str(seed), "--work-ms", str(work_ms),
            "--max-life-s", str(int(max_s) + 5), "--state-dir", state_dir]
    cmd = _child(role)
    if strace_out is not None:
        cmd = [require_strace(), "-f", "-ttt", "-T", "-y", "-o", str(strace_out), *cmd]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        port = int(_wait_file(port_file, proc, 30.0))
        rows = _drive(host, port, requests, gap_s, time.monotonic() + max_s, bar, stop_at)
        proc.wait(30.0)  # the server exits when the connection closes
        if proc.returncode != 0:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise LabError(f"the {name} server failed with {proc.returncode}: {err[-2000:]}")
    finally:
        _stop(proc)
        if proc.stderr:
            proc.stderr.close()
    return rows, log


def _pipeline_run(tmp: Path, *, requests: int, generations: int, pause_ms: float, pause_gap_ms: float,
                  steps_ms: tuple[float, ...], seed: int, max_s: float, first_generation: int = 0,
                  first_request: int = 0, bar: Any = None
                  ) -> tuple[list[list[str]], list[tuple[int, int, float, float]]]:
    """Run worker generations with a SIGSTOP/SIGCONT controller; (step rows, pause rows)."""
    current: dict[str, int | None] = {"pid": None, "gen": None}
    lock = threading.Lock()
    pauses: list[tuple[int, int, float, float]] = []
    stop = threading.Event()
    rng = random.Random(seed + 1)

    def controller() -> None:
        if pause_gap_ms <= 0:  # control run: no pause at all
            return
        while not stop.wait(rng.expovariate(1000.0 / pause_gap_ms)):
            with lock:
                pid, gen = current["pid"], current["gen"]
                if pid is None or gen is None:
                    continue
                try:
                    os.kill(pid, signal.SIGSTOP)
                except ProcessLookupError:
                    continue
                t0 = time.time()
                try:
                    time.sleep(pause_ms / 1000)
                finally:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGCONT)
                pauses.append((gen, pid, t0, time.time()))

    ctl = threading.Thread(target=controller, daemon=True)
    ctl.start()
    rows: list[list[str]] = []
    per_gen = [requests // generations + (1 if g < requests % generations else 0) for g in range(generations)]
    first = first_request
    deadline = time.monotonic() + max_s
    try:
        for g, n in enumerate(per_gen, start=first_generation):
            ready, out = tmp / f"pipe{g}.ready", tmp / f"pipe{g}.csv"
            proc = subprocess.Popen(_child([
                "pipeline", "--requests", str(n), "--first-request", str(first), "--generation", str(g),
                "--steps-ms", ",".join(f"{x:g}" for x in steps_ms), "--ready-file", str(ready), "--out", str(out),
                "--max-life-s", str(int(max_s) + 5)]), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE)
            try:
                pid = int(_wait_file(ready, proc, 30.0))
                with lock:
                    current["pid"], current["gen"] = pid, g
                while proc.poll() is None:
                    if time.monotonic() > deadline:
                        raise LabError(f"the pipeline did not finish within max_s={max_s} s")
                    time.sleep(0.05)
                with lock:
                    current["pid"] = None
                if proc.returncode != 0:
                    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                    raise LabError(f"pipeline worker failed with {proc.returncode}: {err[-2000:]}")
            finally:
                with lock:
                    current["pid"] = None
                _stop(proc)
                if proc.stderr:
                    proc.stderr.close()
            with open(out, newline="") as f:
                rows.extend(list(csv.reader(f))[1:])
            first += n
            if bar is not None:
                bar.update(1)
    finally:
        stop.set()
        ctl.join(5.0)
    return rows, pauses


def _interference_run(tmp: Path, *, host: str, blocks: int, block_s: float, gap_s: float, work_ms: float,
                      file_mb: int, io_dir: Path, bar: Any = None) -> list[tuple[int, str, int, float, float]]:
    """Alternate blocks without/with the fsync writer; one server, one connection per block.

    After a writer block the parent waits for ``sync()`` so the next block does not
    inherit its write-back; block directories are removed only at the end (a delete
    is journal work too).
    """
    rows: list[tuple[int, str, int, float, float]] = []
    dirs: list[Path] = []
    try:
        for b in range(blocks):
            cond = "writer_on" if b % 2 == 1 else "writer_off"
            d = Path(tempfile.mkdtemp(prefix=f"workbench-stalls-block{b}-", dir=io_dir))
            dirs.append(d)
            writer = None
            try:
                if cond == "writer_on":
                    writer = subprocess.Popen(_child(["writer", "--dir", str(d), "--file-mb", str(file_mb),
                                                      "--max-life-s", str(int(block_s) + 10)]),
                                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL)
                    time.sleep(0.2)  # let it reach its loop
                stop_at = time.time() + block_s
                got, _log = _server_run(tmp, f"ab{b}", host=host, requests=100_000, per_kind=0, seed=b,
                                        work_ms=work_ms, strace_out=None, gap_s=gap_s, max_s=block_s + 5,
                                        state_dir=str(d), stop_at=stop_at)
            finally:
                _stop(writer)
                os.sync()
            rows.extend((b, cond, i, ts, lat) for i, ts, lat in got)
            if bar is not None:
                bar.update(1)
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    return rows


def _disk_dir(requested: str | None) -> Path:
    """A directory on a real disk for the interference files (tmpfs would make fsync free)."""
    if requested:
        return Path(requested)
    tmp = Path(tempfile.gettempdir())
    best, fstype = "", ""
    with contextlib.suppress(OSError), open("/proc/mounts") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and str(tmp).startswith(parts[1]) and len(parts[1]) > len(best):
                best, fstype = parts[1], parts[2]
    if fstype in ("tmpfs", "ramfs"):
        return Path.cwd()
    return tmp


def run_capture(out_dir: str | os.PathLike, *, host: str = "127.0.0.1", requests: int = 200, per_kind: int = 10,
                fixed_requests: int = 100, work_ms: float = 3.0, pipeline_requests: int = 200,
                generations: int = 3, pause_ms: float = 30.0, pause_gap_ms: float = 80.0,
                control_requests: int = 100,
                steps_ms: tuple[float, ...] = STEP_MS, blocks: int = 10, block_s: float = 1.2,
                file_mb: int = 8, ping_interval_ms: float = 20.0, seed: int = 0, io_dir: str | None = None,
                max_s: float = 240.0, progress: bool = True) -> dict[str, str]:
    """Run the four experiments and write their files into ``out_dir``; returns name → path.

    Files: ``calls.csv`` (client latencies: run before/fixed, request,
    timestamp_s, latency_s), ``injections.csv`` (the server's log: run, request,
    wait_ms, start_s, end_s, result), ``strace_before.txt`` and
    ``strace_fixed.txt`` (``strace -f -ttt -T -y`` of the server), ``ping.csv``
    (connect times: probe, timestamp_s, latency_s), ``steps.csv`` (condition
    pauses/control, generation, pid, request, step, start_s, duration_s,
    uptime_s; the control generation runs with no pause), ``pauses.csv``
    (generation, pid, start_s, end_s), ``interference.csv`` (block, condition,
    request, timestamp_s, latency_s) and ``meta.json`` (the parameters).
    Bounded by ``max_s`` per experiment; temp files are removed.
    """
    from tqdm.auto import tqdm

    host = check_loopback(host, "stalls")
    require_strace()
    if requests < 2 or per_kind * len(WAIT_KINDS_MS) >= requests:
        raise UsageError(f"need requests > 3 × per_kind injections (got requests={requests}, per_kind={per_kind})")
    if not 1 <= generations <= pipeline_requests:
        raise UsageError(f"generations must be between 1 and pipeline_requests={pipeline_requests}, "
                         f"got {generations}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="workbench-stalls-"))
    io_base = _disk_dir(io_dir)
    paths = {k: str(out / v) for k, v in {
        "calls": "calls.csv", "injections": "injections.csv", "strace_before": "strace_before.txt",
        "strace_fixed": "strace_fixed.txt", "ping": "ping.csv", "steps": "steps.csv", "pauses": "pauses.csv",
        "interference": "interference.csv", "meta": "meta.json"}.items()}
    meta = {"host": host, "requests": requests, "per_kind": per_kind, "wait_kinds_ms": list(WAIT_KINDS_MS),
            "fixed_requests": fixed_requests, "work_ms": work_ms, "pipeline_requests": pipeline_requests,
            "generations": generations, "pause_ms": pause_ms, "pause_gap_ms": pause_gap_ms,
            "control_requests": control_requests,
            "steps_ms": list(steps_ms), "phases": {k: list(v) for k, v in PHASES.items()}, "blocks": blocks,
            "block_s": block_s, "file_mb": file_mb, "ping_interval_ms": ping_interval_ms, "seed": seed,
            "heartbeat_poll_ms": 100, "strace": "strace -f -ttt -T -y", "python": platform.python_version(),
            "machine": f"{platform.system()} {platform.release()} {platform.machine()}, {os.cpu_count()} cores",
            "strace_version": _strace_version(), "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    try:
        total = requests + fixed_requests + generations + 1 + blocks
        with tqdm(total=total, desc="stalls lab", unit="step", disable=not progress) as bar:
            bar.set_postfix_str("futex server under strace")
            with _Pinger(host, ping_interval_ms / 1000, 100_000) as pinger:
                before, log_b = _server_run(tmp, "before", host=host, requests=requests, per_kind=per_kind,
                                            seed=seed, work_ms=work_ms, strace_out=Path(paths["strace_before"]),
                                            gap_s=0.0, max_s=max_s, bar=bar)
            bar.set_postfix_str("fixed server under strace")
            fixed, log_f = _server_run(tmp, "fixed", host=host, requests=fixed_requests, per_kind=0, seed=seed,
                                       work_ms=work_ms, strace_out=Path(paths["strace_fixed"]), gap_s=0.0,
                                       max_s=max_s, bar=bar)
            with open(paths["calls"], "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["run", "request", "timestamp_s", "latency_s"])
                for run, rows in (("before", before), ("fixed", fixed)):
                    for i, ts, lat in rows:
                        w.writerow([run, i, f"{ts:.6f}", f"{lat:.7f}"])
            with open(paths["injections"], "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["run", "request", "wait_ms", "start_s", "end_s", "result"])
                for run, log in (("before", log_b), ("fixed", log_f)):
                    with open(log, newline="") as g:
                        for row in list(csv.reader(g))[1:]:
                            w.writerow([run, *row])
            with open(paths["ping"], "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["probe", "timestamp_s", "latency_s"])
                for k, ts, lat in pinger.rows:
                    w.writerow([k, f"{ts:.6f}", f"{lat:.7f}"])
            bar.set_postfix_str("pipeline with global pauses")
            steps, pauses = _pipeline_run(tmp, requests=pipeline_requests, generations=generations,
                                          pause_ms=pause_ms, pause_gap_ms=pause_gap_ms, steps_ms=steps_ms,
                                          seed=seed, max_s=max_s, bar=bar)
            bar.set_postfix_str("pipeline control (no pause)")
            control, _none = _pipeline_run(tmp, requests=control_requests, generations=1, pause_ms=pause_ms,
                                           pause_gap_ms=0.0, steps_ms=steps_ms, seed=seed, max_s=max_s,
                                           first_generation=generations, first_request=pipeline_requests,
                                           bar=bar)
            with open(paths["steps"], "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["condition", "generation", "pid", "request", "step", "start_s", "duration_s",
                            "uptime_s"])
                w.writerows(["pauses", *row] for row in steps)
                w.writerows(["control", *row] for row in control)
            with open(paths["pauses"], "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["generation", "pid", "start_s", "end_s"])
                for gen, pid, t0, t1 in pauses:
                    w.writerow([gen, pid, f"{t0:.6f}", f"{t1:.6f}"])
            bar.set_postfix_str("interference A/B")
            ab = _interference_run(tmp, host=host, blocks=blocks, block_s=block_s, gap_s=0.005,
                                   work_ms=work_ms, file_mb=file_mb, io_dir=io_base, bar=bar)
            with open(paths["interference"], "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["block", "condition", "request", "timestamp_s", "latency_s"])
                for b, cond, i, ts, lat in ab:
                    w.writerow([b, cond, i, f"{ts:.6f}", f"{lat:.7f}"])
        meta["io_dir"] = str(io_base)
        Path(paths["meta"]).write_text(json.dumps(meta, indent=1) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return paths


# ============================================================== loading the files back

CAPTURE_FILES = {"calls": "calls.csv", "injections": "injections.csv", "ping": "ping.csv", "steps": "steps.csv",
                 "pauses": "pauses.csv", "interference": "interference.csv"}


def capture_schemas() -> dict[str, Schema]:
    """The documented schemas of the capture's CSV tables (name → :class:`workbench.schema.Schema`)."""
    from ..schema import Column, Schema

    def s(name: str, doc: str, *cols: Column) -> Schema:
        return Schema(name=name, doc=doc, columns=cols)

    return {
        "injections": s("stalls_injections", "Futex waits the server injected, one row each (its own log).",
                        Column("run", "string", doc="before (injections on) or fixed (none)"),
                        Column("request", "int", doc="request id"),
                        Column("wait_ms", "int", "ms", "futex timeout: 250, 500 or 1000"),
                        Column("start_s", "float", "s", "epoch seconds before the futex call"),
                        Column("end_s", "float", "s", "epoch seconds after it"),
                        Column("result", "string", doc="errno name of the futex call (ETIMEDOUT)")),
        "steps": s("stalls_steps", "One row per (request, step) of the pipeline experiment.",
                   Column("condition", "string", doc="pauses (controller on) or control (no pause)"),
                   Column("generation", "int", doc="worker process generation (0, 1, …)"),
                   Column("pid", "int", doc="worker process id"),
                   Column("request", "int", doc="request id (unique over generations)"),
                   Column("step", "int", doc="step number 1–15"),
                   Column("start_s", "float", "s", "epoch seconds at the step's start"),
                   Column("duration_s", "float", "s", "time the step took (wall clock)"),
                   Column("uptime_s", "float", "s", "worker process age at the step's start")),
        "pauses": s("stalls_pauses", "Whole-process pauses (SIGSTOP … SIGCONT) the controller injected.",
                    Column("generation", "int", doc="worker generation paused"),
                    Column("pid", "int", doc="worker process id"),
                    Column("start_s", "float", "s", "epoch seconds of SIGSTOP"),
                    Column("end_s", "float", "s", "epoch seconds of SIGCONT")),
    }


def _loosened(schema: Schema, keep: tuple[str, ...]) -> Schema:
    from ..schema import Column, Schema

    cols = tuple(c if c.name in keep else Column(c.name, c.kind, c.unit, c.doc, required=False)
                 for c in schema.columns)
    return Schema(name=schema.name, doc=schema.doc, columns=cols)


def steps_schema(*, required_only: bool = False) -> Schema:
    """The per-step timings schema; ``required_only``: only request, step, duration_s must be present (a user's file)."""
    s = capture_schemas()["steps"]
    return _loosened(s, ("request", "step", "duration_s")) if required_only else s


def pauses_schema(*, required_only: bool = False) -> Schema:
    """The pauses schema; ``required_only``: only start_s and end_s must be present (a user's log of pauses)."""
    s = capture_schemas()["pauses"]
    return _loosened(s, ("start_s", "end_s")) if required_only else s


def read_capture(directory: str | os.PathLike[str], *, strict: bool = False) -> dict[str, Any]:
    """Load a capture written by :func:`run_capture`: name → frame (plus ``meta`` and strace paths).

    ``calls``, ``ping`` and ``interference`` are latency-sample frames
    (:func:`workbench.latency.read_latency`: latency_s, timestamp_s and the other
    columns carried); ``injections``, ``steps`` and ``pauses`` follow
    :func:`capture_schemas` (read by :func:`workbench.tables.read_table`).
    ``strace_before``/``strace_fixed`` are the paths of the traces (read them with
    :func:`workbench.syscalls.read_strace`); ``meta`` is the dict of parameters.
    Every frame carries attrs['rejects']; ``strict=True`` raises
    :class:`~workbench.errors.ParseError` for the first bad row of a file.
    """
    from ..latency import read_latency
    from ..tables import read_table

    d = Path(directory)
    if not d.is_dir():
        raise InputNotFoundError(f"{d}: not a capture folder (expected the output of `workbench lab stalls`)")
    missing = [v for v in (*CAPTURE_FILES.values(), "meta.json", "strace_before.txt") if not (d / v).exists()]
    if missing:
        raise InputNotFoundError(f"{d}: capture incomplete, missing {missing}")
    schemas = capture_schemas()
    out: dict[str, Any] = {}
    for name, fname in CAPTURE_FILES.items():
        frame: pd.DataFrame
        if name in schemas:
            frame = read_table(d / fname, schemas[name], strict=strict)
        else:
            frame = read_latency(d / fname, format="csv", strict=strict)
        out[name] = frame
    out["meta"] = json.loads((d / "meta.json").read_text())
    out["strace_before"] = str(d / "strace_before.txt")
    out["strace_fixed"] = str(d / "strace_fixed.txt")
    return out


def _cmd(args: argparse.Namespace) -> int:
    try:
        paths = run_capture(args.out, host=args.host, requests=args.requests, per_kind=args.per_kind,
                            pipeline_requests=args.pipeline_requests, blocks=args.blocks, block_s=args.block_s,
                            seed=args.seed, io_dir=args.io_dir, progress=not args.quiet)
    except (LabError, UsageError) as exc:
        print(f"workbench lab stalls: {exc}", file=sys.stderr)
        return 2
    for name, path in paths.items():
        size = os.path.getsize(path)
        print(f"{name:13s} {path} ({size / 1024:.0f} KiB)")
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench lab stalls``."""
    p = subparsers.add_parser(
        "stalls", help="futex timeouts under strace, a 15-step pipeline with global pauses, fsync interference",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="output folder for the capture files")
    p.add_argument("--host", default="127.0.0.1", help="loopback address (127.0.0.0/8 or ::1)")
    p.add_argument("--requests", type=int, default=200, help="requests to the traced server (default 200)")
    p.add_argument("--per-kind", type=int, default=10, help="injected futex waits per timeout 250/500/1000 ms")
    p.add_argument("--pipeline-requests", type=int, default=200, help="15-step requests in the pause experiment")
    p.add_argument("--blocks", type=int, default=10, help="alternating writer-off/on blocks (interference)")
    p.add_argument("--block-s", type=float, default=1.2, help="length of each interference block, s")
    p.add_argument("--seed", type=int, default=0, help="seed of the injection and pause schedules")
    p.add_argument("--io-dir", default=None,
                   help="directory on a real disk for the fsync writer (default: the temp dir unless it is tmpfs)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd)


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1:]))
