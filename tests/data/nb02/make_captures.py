"""Make the notebook-02 test captures on loopback (bounded: under five minutes, every process stops).

Run from the repository root:  .venv/bin/python tests/data/nb02/make_captures.py [open_loop|hey|lockstep]

- open_loop/sweep.csv       plain CSV ``timestamp,latency_ms,rate_per_s``: open-loop sweep, Nagle on
                            both sides (the lab's ping-pong server and client), 50/500/2000/5000 req/s.
- hey/nagle/rate_<R>.csv    ``hey -o csv`` runs against a small HTTP server that writes each reply as
                            two send() calls (header, body); one file per rate; Nagle on the server.
- hey/nodelay_server/…      the same with TCP_NODELAY on the server socket.
- lockstep/sweep.csv        closed-loop (one request in flight per connection) sweep at 5/10/20/50
                            req/s, Nagle on both sides; columns ``ts_ms,latency_us,target_rps``.
- lockstep/nodelay_client.csv, lockstep/nodelay_both.csv  the same sweep with TCP_NODELAY on the
                            client only, on both sides.
- lockstep/ping.csv         TCP connect pings to the lab server (``timestamp_s,latency_ms``).
"""
from __future__ import annotations

import csv
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from workbench.lab.nagle import load_run, ping_run, realtime_priority, serve

HERE = Path(__file__).resolve().parent


def open_loop() -> None:
    out = HERE / "open_loop"
    out.mkdir(exist_ok=True)
    with serve() as srv, (out / "sweep.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["timestamp", "latency_ms", "rate_per_s"])
        for rate in (50, 500, 2000, 5000):
            f = load_run(srv.host, srv.port, rate, duration_s=4.0, max_requests=500, connections=2)
            for ts, lat in zip(f["timestamp_s"], f["latency_s"], strict=True):
                w.writerow([f"{ts:.6f}", "" if lat != lat else f"{lat * 1e3:.3f}", rate])


def _http_server(nodelay: bool, stop: threading.Event) -> int:
    """A keep-alive HTTP/1.1 server on loopback that writes header and body in two send() calls."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    ls.settimeout(0.2)
    body = b"x" * 32
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 32\r\n\r\n"

    def handle(c: socket.socket) -> None:
        if nodelay:
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        c.settimeout(5)
        buf = b""
        try:
            while not stop.is_set():
                while b"\r\n\r\n" not in buf:
                    d = c.recv(4096)
                    if not d:
                        return
                    buf += d
                _, buf = buf.split(b"\r\n\r\n", 1)
                c.sendall(head)
                c.sendall(body)
        except OSError:
            pass
        finally:
            c.close()

    def accept() -> None:
        while not stop.is_set():
            try:
                c, _ = ls.accept()
            except TimeoutError:
                continue
            threading.Thread(target=handle, args=(c,), daemon=True).start()
        ls.close()

    threading.Thread(target=accept, daemon=True).start()
    return int(ls.getsockname()[1])


def hey() -> None:
    for label, nodelay in (("nagle", False), ("nodelay_server", True)):
        out = HERE / "hey" / label
        out.mkdir(parents=True, exist_ok=True)
        stop = threading.Event()
        port = _http_server(nodelay, stop)
        try:
            for rate, n in ((5, 60), (20, 200), (100, 400), (400, 800)):
                # one worker (-c 1) limited to `rate` requests/s (-q), n requests, keep-alive
                res = subprocess.run(["hey", "-n", str(n), "-c", "1", "-q", str(rate), "-t", "5", "-o", "csv",
                                      f"http://127.0.0.1:{port}/"], capture_output=True, text=True,
                                     timeout=120, check=True)
                (out / f"rate_{rate}.csv").write_text(res.stdout)
        finally:
            stop.set()
            time.sleep(0.3)


def lockstep() -> None:
    out = HERE / "lockstep"
    out.mkdir(exist_ok=True)
    runs = {"sweep.csv": ((), ()), "nodelay_client.csv": (("TCP_NODELAY",), ()),
            "nodelay_both.csv": (("TCP_NODELAY",), ("TCP_NODELAY",))}
    # client and server under SCHED_FIFO (when permitted) so a busy machine adds few scheduling delays
    with realtime_priority():
        for name, (client, server) in runs.items():
            with serve(options=server, realtime=True) as srv, (out / name).open("w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(["ts_ms", "latency_us", "target_rps"])
                for rate in (5, 10, 20, 50):
                    f = load_run(srv.host, srv.port, rate, duration_s=12.0, max_requests=200, connections=1,
                                 mode="lockstep", options=client)
                    for ts, lat in zip(f["timestamp_s"], f["latency_s"], strict=True):
                        w.writerow([f"{ts * 1e3:.3f}", "" if lat != lat else f"{lat * 1e6:.0f}", rate])
        with serve(realtime=True) as srv, (out / "ping.csv").open("w", newline="") as fh:
            f = ping_run(srv.host, srv.port, count=150, interval_s=0.01)
            w = csv.writer(fh)
            w.writerow(["timestamp_s", "latency_ms"])
            for ts, lat in zip(f["timestamp_s"], f["latency_s"], strict=True):
                w.writerow([f"{ts:.6f}", f"{lat * 1e3:.4f}"])


if __name__ == "__main__":
    which = sys.argv[1:] or ["open_loop", "hey", "lockstep"]
    for name in which:
        {"open_loop": open_loop, "hey": hey, "lockstep": lockstep}[name]()
        print("made", name)
