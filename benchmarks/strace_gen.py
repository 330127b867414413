"""Big strace traces made from the real captures in ``tests/data/strace``, streamed (never held whole).

``python benchmarks/strace_gen.py --lines 100000000 -o FILE`` (``-o -``: standard
output, to pipe a trace bigger than the disk into a reader).

The captures are the ``strace -f -tt -T -y`` recordings of threads waiting on
futexes, signals with restarted calls, a killed process, group stops and tricky
argument strings (their records only, not their ``-C`` tables), so the result
has a pid column, ``<unfinished ...>``/``<... resumed>`` halves, signals, exits
and kills. Each repetition of a capture gets its own pids (``pid + 100000 * k``
for k = 0..VARIANTS-1, cycled, in the pid column and in what clone/fork return), so the processes of one copy never meet those of
another; the text is rendered once per variant and then written in large
blocks, so generating runs at disk speed (about 120 bytes a line).
"""
from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ("threads_futex.txt", "signals_restart.txt", "killed.txt", "stop_segv.txt", "tricky.txt",
            "attach_p.txt")
VARIANTS = 8
_PID = re.compile(rb"^([0-9]+)", re.M)
_CHILD = re.compile(rb"((?:clone3?|v?fork)(?:\(| resumed>).*\) += )([0-9]+)")


def bodies() -> list[list[bytes]]:
    """The record lines of every capture (up to its -C table)."""
    out = []
    for name in CAPTURES:
        lines = (ROOT / "tests" / "data" / "strace" / name).read_bytes().splitlines(keepends=True)
        cut = next((i for i, ln in enumerate(lines) if ln.startswith(b"% time")), len(lines))
        out.append([ln for ln in lines[:cut] if ln.strip()])
    return out


def _variant(lines: list[bytes], k: int) -> list[bytes]:
    """``lines`` with every pid prefix moved by ``100000 * k`` (k = 0: unchanged)."""
    if k == 0:
        return lines
    shift = 100000 * k

    def move(m: re.Match[bytes]) -> bytes:
        return str(int(m.group(1)) + shift).encode()

    def child(m: re.Match[bytes]) -> bytes:  # the pid a clone/fork returns is a pid of the trace too
        return m.group(1) + str(int(m.group(2)) + shift).encode()

    out = []
    for ln in lines:
        ln = _PID.sub(move, ln, count=1)
        if b"clone" in ln or b"fork" in ln:
            ln = _CHILD.sub(child, ln, count=1)
        out.append(ln)
    return out


def blocks(lines: int) -> Iterator[tuple[bytes, int]]:
    """(text, line count) blocks adding up to exactly ``lines`` lines."""
    base = bodies()
    rendered = [[b"".join(_variant(b, k)) for k in range(VARIANTS)] for b in base]
    counts = [len(b) for b in base]
    n = rep = 0
    while n < lines:
        for i, body in enumerate(base):
            if n + counts[i] <= lines:
                yield rendered[i][rep % VARIANTS], counts[i]
                n += counts[i]
            else:
                take = lines - n
                yield b"".join(_variant(body[:take], rep % VARIANTS)), take
                n += take
            if n >= lines:
                return
        rep += 1


def write_trace(out: BinaryIO, lines: int) -> int:
    """Write a trace of exactly ``lines`` lines to ``out``; returns the bytes written."""
    total = 0
    batch: list[bytes] = []
    size = 0
    for text, _ in blocks(lines):
        batch.append(text)
        size += len(text)
        if size >= 4 << 20:
            out.write(b"".join(batch))
            total += size
            batch, size = [], 0
    if batch:
        out.write(b"".join(batch))
        total += size
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=2_000_000, help="lines to write (default 2,000,000)")
    ap.add_argument("-o", "--out", default="-", help="output file, or - for standard output (default)")
    args = ap.parse_args(argv)
    if args.out == "-":
        write_trace(sys.stdout.buffer, args.lines)
        sys.stdout.buffer.flush()
    else:
        with open(args.out, "wb") as f:
            write_trace(f, args.lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
