"""A pipeline with no stall, generated from a stated model with a fixed seed.

Run from the repository root::

    .venv/bin/python tests/data/diagnose/make_global_stall_absent.py

Model: the stalls lab's pipeline (``workbench.lab.stalls.STEP_MS``: 15 steps of fixed CPU
work, each its own length), 200 requests, every step lasting its nominal time × lognormal(0,
0.05) plus 20 µs of timer overhead, and nothing that stops the process. Seed 31. Columns as
the lab writes ``steps.csv`` (condition ``control``, one generation, uptime from the first step).
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

from workbench.lab.stalls import STEP_MS

OUT = Path(__file__).resolve().parent / "global_stall" / "absent" / "steps.csv"


def main() -> int:
    rng = np.random.default_rng(31)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    t0 = t = 1_800_000_000.0
    with open(OUT, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["condition", "generation", "pid", "request", "step", "start_s", "duration_s", "uptime_s"])
        for request in range(200):
            for step, ms in enumerate(STEP_MS, start=1):
                d = ms / 1e3 * float(rng.lognormal(0.0, 0.05)) + 20e-6
                w.writerow(["control", 0, 4242, request, step, f"{t:.6f}", f"{d:.7f}", f"{t - t0:.6f}"])
                t += d
            t += 0.002
    print(f"{OUT}: {200 * len(STEP_MS)} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
