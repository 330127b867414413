"""A config save on a loaded asyncio loop where every file call goes through an executor.

Unlike ``workbench lab yields`` (which runs each file call inline and then yields once),
the ``yielding`` save here awaits ``loop.run_in_executor`` for every file call, as a
Tarantool fiber waits for its ``fio`` call in a worker pool; the ``offloaded`` save runs
the whole save in one ``run_in_executor`` call. Two hog tasks hash a buffer for
``hog_ms`` between their yields (hashing releases the GIL, so the worker thread runs);
a probe measures the mean loop-pass time for 20 passes just before and just after each
save. Written columns: mode, sections, yields, lag_ms_measured, duration_ms, hogs —
no passes, fs_ms or hog_ms. Everything lives in one temp dir, removed at the end.

    python make_capture.py > capture.csv
"""
from __future__ import annotations

import asyncio
import hashlib
import os
import platform
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

SECTIONS = (3, 6, 12)
HOG_MS = (0.0, 3.0, 6.0)
REPEATS = 2
HOGS = 2
WINDOW = 20
BUF = os.urandom(16 * 1024)
FLAGS = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_SYNC", 0)


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        hashlib.sha256(BUF).digest()


async def hog(hog_s: float, running: list[bool]) -> None:
    while running[0]:
        spin(hog_s)
        await asyncio.sleep(0)


async def lag_ms(n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        await asyncio.sleep(0)
    return (time.perf_counter() - t0) / n * 1e3


def file_ops(root: str, sections: int) -> list[tuple]:
    tmp = os.path.join(root, f"config.{os.urandom(6).hex()}")
    ops: list[tuple] = [(os.mkdir, tmp)]
    for i in range(sections):
        d = os.path.join(tmp, "roles") if i % 4 == 3 else tmp
        ops.append((os.makedirs, d, 0o755, True))
        ops.append(("write", os.path.join(d, f"section_{i:03d}.yml"), f"# section {i}\n".encode() + b"key: value\n" * 180))
    ops.append((os.rename, tmp, os.path.join(root, "config")))
    return ops


def write_file(path: str, body: bytes) -> None:
    fd = os.open(path, FLAGS, 0o644)
    try:
        os.write(fd, body)
    finally:
        os.close(fd)


async def save(mode: str, root: str, sections: int, pool: ThreadPoolExecutor) -> int:
    loop = asyncio.get_running_loop()
    ops = file_ops(root, sections)
    yields = 0
    if mode == "offloaded":
        def blocking() -> None:
            for op in ops:
                run(op)
        await loop.run_in_executor(pool, blocking)
        return 1
    for op in ops:
        await loop.run_in_executor(pool, run, op)
        yields += 1
    return yields


def run(op: tuple) -> None:
    if op[0] == "write":
        write_file(op[1], op[2])
    else:
        op[0](*op[1:])


async def one(mode: str, root: str, sections: int, hog_ms: float, pool: ThreadPoolExecutor) -> str:
    running = [True]
    tasks = [asyncio.create_task(hog(hog_ms / 1e3, running)) for _ in range(HOGS)]
    try:
        before = await lag_ms(WINDOW)
        t0 = time.perf_counter()
        yields = await save(mode, root, sections, pool)
        duration = (time.perf_counter() - t0) * 1e3
        after = await lag_ms(WINDOW)
    finally:
        running[0] = False
        await asyncio.gather(*tasks)
    shutil.rmtree(os.path.join(root, "config"), ignore_errors=True)
    return f"{mode},{sections},{yields},{(before + after) / 2:.4f},{duration:.4f},{HOGS}"


async def main() -> None:
    root = tempfile.mkdtemp(prefix="nb04-executor-")
    rows = ["mode,sections,yields,lag_ms_measured,duration_ms,hogs"]
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            for _ in range(REPEATS):
                for s in SECTIONS:
                    for h in HOG_MS:
                        for mode in ("yielding", "offloaded"):
                            rows.append(await one(mode, root, s, h, pool))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"# made by: python make_capture.py (Python {platform.python_version()}, {os.cpu_count()} cpus, "
          f"{platform.system()} {platform.release()}, {datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ})")
    print("\n".join(rows))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
