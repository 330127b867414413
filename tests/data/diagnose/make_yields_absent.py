"""Saves whose duration does not follow yields × loop lag, generated from a stated model with a fixed seed.

Run from the repository root::

    .venv/bin/python tests/data/diagnose/make_yields_absent.py

Model: a config save of 2, 4, 8 or 16 sections on a loop whose pass takes 0.2, 2, 5 or
10 ms (two repeats each, 32 saves). The save makes 4 awaits per section plus 3, as the
``yielding`` saves of ``event_loop_yields/present`` do, but every awaited file call
completes at once (its future is already done), so no await waits for a loop pass:
duration = 0.5 ms + 0.4 ms of file work per section, times lognormal(0, 0.1). Seed 29.
Written in the published-table form (event_loop_ms, duration_ms, yields), read by
:func:`workbench.models.yields.read_published`.
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "event_loop_yields" / "absent" / "saves.csv"


def main() -> int:
    rng = np.random.default_rng(29)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["event_loop_ms", "duration_ms", "yields"])
        for lag_ms in (0.2, 2.0, 5.0, 10.0):
            for sections in (2, 4, 8, 16):
                for _repeat in range(2):
                    duration_ms = (0.5 + 0.4 * sections) * float(rng.lognormal(0.0, 0.1))
                    w.writerow([lag_ms, f"{duration_ms:.4f}", 4 * sections + 3])
    print(f"{OUT}: 32 saves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
