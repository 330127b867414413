"""Capture the latency samples in this folder on loopback (127.0.0.1 only; bounded; stops by itself).

Usage: python tests/data/modes/make_samples.py nagle RATE_PER_S COUNT OUT.csv
       python tests/data/modes/make_samples.py sleepy COUNT CONNECTIONS SLEEP_RULE OUT.csv
       python tests/data/modes/make_samples.py hlog IN.csv OUT.hlog
       python tests/data/modes/make_samples.py lab RATE_PER_S DURATION_S CONNECTIONS OUT.csv

nagle:  one connection, Nagle on and TCP_NODELAY off on both sides, each request written as
        an 8-byte header then a 32-byte body (write-write-read); the server replies 40 bytes
        once it has both. The body waits for the ACK of the header, which the server delays
        (Linux delayed ACK, ~40 ms). Requests are started every 1/RATE s (lockstep: a late
        reply delays the next start). Writes latency_ms (µs resolution) per request.
sleepy: CONNECTIONS client threads with TCP_NODELAY; the server sleeps by request number:
        SLEEP_RULE "fast" → request i sleeps 1.0 s if i % 60 == 59, 0.5 s if i % 30 == 14, else 0;
        "bulk500" → 1.0 s if i % 60 == 59, else 0.5 s.
lab:    the workbench's own Nagle lab (workbench.lab.nagle): server and client with Nagle on and
        delayed ACK, open loop (request i scheduled at i/RATE, latency from the scheduled time),
        pipelined over CONNECTIONS connections; unanswered requests are left out.
hlog:   records IN.csv's latency_ms into an HdrHistogram (1 µs .. 1 h, 3 significant digits,
        values in µs), one interval per 50 requests, written as an HdrHistogram interval log.
"""
from __future__ import annotations

import socket
import sys
import threading
import time

HOST = "127.0.0.1"


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        part = sock.recv(n - len(buf))
        if not part:
            raise ConnectionError("peer closed")
        buf += part
    return buf


def _server(listener: socket.socket, sleep_for, nodelay: bool, stop: threading.Event) -> None:
    counter = iter(range(10**9))
    lock = threading.Lock()

    def handle(conn: socket.socket) -> None:
        if nodelay:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with conn:
            try:
                while True:
                    _recv_exact(conn, 8)
                    _recv_exact(conn, 32)
                    with lock:
                        i = next(counter)
                    time.sleep(sleep_for(i))
                    conn.sendall(b"r" * 40)
            except (ConnectionError, OSError):
                return

    listener.settimeout(0.2)
    while not stop.is_set():
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def _start(sleep_for, nodelay: bool) -> tuple[int, threading.Event]:
    listener = socket.socket()
    listener.bind((HOST, 0))
    listener.listen(64)
    stop = threading.Event()
    threading.Thread(target=_server, args=(listener, sleep_for, nodelay, stop), daemon=True).start()
    return listener.getsockname()[1], stop


def _request(sock: socket.socket) -> float:
    t0 = time.perf_counter()
    sock.sendall(b"h" * 8)      # header
    sock.sendall(b"b" * 32)     # body: held by Nagle until the header is ACKed
    _recv_exact(sock, 40)
    return (time.perf_counter() - t0) * 1e3


def nagle(rate: float, count: int, out: str) -> None:
    port, stop = _start(lambda i: 0.0, nodelay=False)
    sock = socket.create_connection((HOST, port), timeout=10)
    lat = []
    start = time.perf_counter()
    for i in range(count):
        wait = start + i / rate - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        lat.append(_request(sock))
    sock.close()
    stop.set()
    with open(out, "w") as f:
        f.write("request,latency_ms\n")
        f.writelines(f"{i},{v:.3f}\n" for i, v in enumerate(lat))


def sleepy(count: int, connections: int, rule: str, out: str) -> None:
    rules = {"fast": lambda i: 1.0 if i % 60 == 59 else 0.5 if i % 30 == 14 else 0.0,
             "bulk500": lambda i: 1.0 if i % 60 == 59 else 0.5}
    port, stop = _start(rules[rule], nodelay=True)
    lat: list[float] = []
    lock = threading.Lock()
    todo = iter(range(count))

    def client() -> None:
        sock = socket.create_connection((HOST, port), timeout=10)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while True:
            with lock:
                if next(todo, None) is None:
                    break
            v = _request(sock)
            with lock:
                lat.append(v)
        sock.close()

    threads = [threading.Thread(target=client) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    stop.set()
    with open(out, "w") as f:
        f.write("request,latency_ms\n")
        f.writelines(f"{i},{v:.3f}\n" for i, v in enumerate(lat))


def hlog(src: str, out: str) -> None:
    import csv

    from hdrh.histogram import HdrHistogram
    from hdrh.log import HistogramLogWriter

    with open(src) as f:
        values = [float(r["latency_ms"]) for r in csv.DictReader(f)]
    with open(out, "w") as f:
        w = HistogramLogWriter(f)
        w.output_comment(f"latency_ms of {src} recorded in microseconds")
        w.output_log_format_version()
        f.write("#[StartTime: 1764000000.000 (seconds since epoch)]\n")  # hdrh 0.10.8's own writer fails here
        w.output_legend()
        for k in range(0, len(values), 50):
            h = HdrHistogram(1, 3_600_000_000, 3)
            for v in values[k:k + 50]:
                h.record_value(max(1, round(v * 1000)))
            h.set_start_time_stamp(1_764_000_000_000 + k * 100)
            h.set_end_time_stamp(1_764_000_000_000 + (k + 50) * 100)
            w.output_interval_histogram(h, max_value_unit_ratio=1000.0)  # Interval_Max in ms


def lab(rate: float, duration_s: float, connections: int, out: str) -> None:
    import math

    from workbench.lab import nagle as lab_nagle

    with lab_nagle.serve() as srv:
        frame = lab_nagle.load_run(HOST, srv.port, rate, duration_s, max_requests=3000, connections=connections)
    with open(out, "w") as f:
        f.write("request,connection,latency_ms\n")
        f.writelines(f"{r.request},{r.connection},{1e3 * r.latency_s:.3f}\n" for r in frame.itertuples()
                     if math.isfinite(r.latency_s))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    cmd, *args = sys.argv[1:]
    if cmd == "nagle":
        nagle(float(args[0]), int(args[1]), args[2])
    elif cmd == "sleepy":
        sleepy(int(args[0]), int(args[1]), args[2], args[3])
    elif cmd == "lab":
        lab(float(args[0]), float(args[1]), int(args[2]), args[3])
    elif cmd == "hlog":
        hlog(args[0], args[1])
    else:
        raise SystemExit(__doc__)
