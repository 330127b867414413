"""Small HTTP server for the notebook-01 test captures (loopback only, stops by itself).

    python make_capture.py serve --port-file P --log waits.csv --kinds 150,300,600 --per-kind 8 --requests 150
    python make_capture.py hlog --port-file P --out calls.hlog --requests 550 --concurrency 4

``serve`` answers GET / on 127.0.0.1 with a one-line body. Before answering, a
request picked in advance (``--per-kind`` per kind, seeded) blocks its thread in a
real ``futex(FUTEX_WAIT_PRIVATE)`` with the kind's timeout on a word nobody wakes,
and appends ``start_s,end_s,wait_ms,result`` (epoch seconds) to ``--log``.
``--base-ms`` sleeps that long in every request and ``--slow`` (``N:MS``) makes
N requests sleep MS instead. The accept loop is socketserver's ``serve_forever``
(a ``poll`` with a 0.5 s timeout while idle). The server exits after
``--requests`` requests or ``--max-life-s`` seconds.

``hlog`` sends ``--requests`` GETs from ``--concurrency`` threads and writes their
latencies into an HdrHistogram interval log (one interval per second, µs units).
"""
from __future__ import annotations

import argparse
import ctypes
import errno
import os
import random
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer

SYS_FUTEX = 202  # x86_64
FUTEX_WAIT_PRIVATE = 128


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


LIBC = ctypes.CDLL(None, use_errno=True)


def futex_wait(ms: int) -> str:
    word = ctypes.c_int(0)
    ts = Timespec(ms // 1000, (ms % 1000) * 1_000_000)
    r = LIBC.syscall(SYS_FUTEX, ctypes.byref(word), FUTEX_WAIT_PRIVATE, 0, ctypes.byref(ts), None, 0)
    return errno.errorcode.get(ctypes.get_errno(), "?") if r != 0 else "woken"


def serve(args: argparse.Namespace) -> int:
    assert args.host in ("127.0.0.1", "::1", "localhost"), "loopback only"
    rng = random.Random(args.seed)
    kinds = [int(k) for k in args.kinds.split(",")] if args.kinds else []
    plan: dict[int, int] = {}
    picks = rng.sample(range(2, args.requests), len(kinds) * args.per_kind)
    for i, r in enumerate(picks):
        plan[r] = kinds[i % len(kinds)]
    slow: dict[int, int] = {}
    if args.slow:
        n, ms = (int(v) for v in args.slow.split(":"))
        for r in rng.sample([r for r in range(args.requests) if r not in plan], n):
            slow[r] = ms
    lock = threading.Lock()
    count = [0]
    log = open(args.log, "w") if args.log else None
    if log:
        log.write("start_s,end_s,wait_ms,result\n")
        log.flush()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def do_GET(self) -> None:  # noqa: N802
            with lock:
                n = count[0]
                count[0] += 1
            if n in plan and log:
                t0 = time.time()
                res = futex_wait(plan[n])
                t1 = time.time()
                with lock:
                    log.write(f"{t0:.6f},{t1:.6f},{plan[n]},{res}\n")
                    log.flush()
            delay = slow.get(n, args.base_ms)
            if delay:
                time.sleep(delay / 1000)
            body = b"ok\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            if n + 1 >= args.requests:
                threading.Thread(target=server.shutdown, daemon=True).start()

        def log_message(self, *a: object) -> None:
            pass

    cls = ThreadingHTTPServer if args.threads else HTTPServer
    server = cls((args.host, 0), Handler)
    threading.Timer(args.max_life_s, server.shutdown).start()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(args.port_file + ".tmp", args.port_file)
    server.serve_forever(poll_interval=0.5)
    os._exit(0)  # the life timer may still be pending


def hlog(args: argparse.Namespace) -> int:
    from hdrh.histogram import HdrHistogram
    from hdrh.log import HistogramLogWriter

    port = int(open(args.port_file).read())
    url = f"http://127.0.0.1:{port}/"
    lat: list[tuple[float, float]] = []
    lock = threading.Lock()
    todo = list(range(args.requests))

    def worker() -> None:
        while True:
            with lock:
                if not todo:
                    return
                todo.pop()
            t0 = time.time()
            urllib.request.urlopen(url, timeout=10).read()
            with lock:
                lat.append((t0, time.time() - t0))

    threads = [threading.Thread(target=worker) for _ in range(args.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lat.sort()
    start = lat[0][0]
    with open(args.out, "w") as f:
        w = HistogramLogWriter(f)
        f.write(f"#[StartTime: {start:.3f} (seconds since epoch)]\n")
        w.base_time = int(start * 1000)
        w.output_legend()
        sec = 0
        while True:
            chunk = [d for t, d in lat if sec <= t - start < sec + 1]
            if not chunk and start + sec > lat[-1][0]:
                break
            h = HdrHistogram(1, 60_000_000, 3)
            for d in chunk:
                h.record_value(max(1, int(round(d * 1e6))))
            h.set_start_time_stamp(int((start + sec) * 1000))
            h.set_end_time_stamp(int((start + sec + 1) * 1000))
            if chunk:
                w.output_interval_histogram(h, max_value_unit_ratio=1000.0)
            sec += 1
    return 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port-file", required=True)
    s.add_argument("--log", default="")
    s.add_argument("--kinds", default="")
    s.add_argument("--per-kind", type=int, default=0)
    s.add_argument("--requests", type=int, required=True)
    s.add_argument("--base-ms", type=float, default=0.0)
    s.add_argument("--slow", default="")
    s.add_argument("--threads", action="store_true")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--max-life-s", type=float, default=120.0)
    c = sub.add_parser("hlog")
    c.add_argument("--port-file", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--requests", type=int, required=True)
    c.add_argument("--concurrency", type=int, default=4)
    a = p.parse_args(argv)
    return serve(a) if a.cmd == "serve" else hlog(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
