"""Captures for latency_quantum, timed_waits and global_stall, from two runs of the stalls lab.

Run from the repository root (needs strace)::

    .venv/bin/python tests/data/diagnose/make_stalls.py

Run "strong": 200 requests to the traced server, 10 of them per futex timeout
(250, 500, 1000 ms: 30 of 200 requests wait), then 150 requests with no injection;
a 15-step pipeline paused 30 ms every 80 ms on average (exponential gaps) beside a
control generation with no pause. Run "weak": the same with 3 injections per
timeout (9 of 200 requests) and a pause every 800 ms on average.

Each detector's folder gets only the file(s) of its own anomaly, so that the other
detectors have nothing to read there: rows are split by the lab's own ``run`` and
``condition`` columns, never edited.
"""
from __future__ import annotations

import csv
import shutil
import sys
import tempfile
from pathlib import Path

from workbench.lab.stalls import run_capture

HERE = Path(__file__).resolve().parent
COMMON = dict(requests=200, fixed_requests=150, work_ms=3.0, pipeline_requests=120, generations=2,
              control_requests=80, blocks=2, block_s=0.5, progress=False)


def rows_where(src: str, dst: Path, column: str, keep: str) -> int:
    """Copy the header and the rows of ``src`` whose ``column`` equals ``keep``; returns rows kept."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(src, newline="") as f, open(dst, "w", newline="") as g:
        r, w = csv.reader(f), csv.writer(g)
        head = next(r)
        w.writerow(head)
        i = head.index(column)
        for row in r:
            if row[i] == keep:
                w.writerow(row)
                n += 1
    return n


def copy(src: str, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="diagnose-stalls-"))
    try:
        strong = run_capture(tmp / "strong", per_kind=10, pause_ms=30.0, pause_gap_ms=80.0, seed=1, **COMMON)
        weak = run_capture(tmp / "weak", per_kind=3, pause_ms=30.0, pause_gap_ms=800.0, seed=2, **COMMON)
        q, t, g = HERE / "latency_quantum", HERE / "timed_waits", HERE / "global_stall"
        rows_where(strong["calls"], q / "present" / "calls.csv", "run", "before")
        rows_where(strong["calls"], q / "absent" / "calls.csv", "run", "fixed")
        rows_where(weak["calls"], q / "weak" / "calls.csv", "run", "before")
        copy(strong["strace_before"], t / "present" / "strace.txt")
        copy(strong["strace_fixed"], t / "absent" / "strace.txt")
        copy(weak["strace_before"], t / "weak" / "strace.txt")
        copy(strong["steps"], g / "present" / "steps.csv")
        rows_where(strong["steps"], g / "control_busy_machine" / "steps.csv", "condition", "control")
        copy(weak["steps"], g / "weak" / "steps.csv")
        for name, paths in (("strong", strong), ("weak", weak)):
            with open(paths["injections"], newline="") as f:
                inj = [r for r in csv.DictReader(f) if r["run"] == "before"]
            with open(paths["pauses"], newline="") as f:
                pauses = sum(1 for _ in csv.DictReader(f))
            waits = sorted({r["wait_ms"] for r in inj})
            print(f"{name}: {len(inj)} injected futex waits ({', '.join(waits)} ms), {pauses} pauses")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
