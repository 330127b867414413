"""A weak low-rate tail, generated from a stated model with a fixed seed (no lab run).

Run from the repository root::

    .venv/bin/python tests/data/diagnose/make_low_rate_weak.py

Model: three offered rates, 10, 100 and 1000 requests/s, with 150, 200 and 600 requests
(the nagle lab's counts in ``low_rate_tail/present``). Every request's latency is
lognormal with a median of 1 ms and σ = 0.25 (log scale) at every rate; at 10/s only,
2 of the 150 requests (1.3 %, picked at random) also wait one delayed ACK, 40–42 ms
(uniform): Nagle's stall of ``present``, but on a small fraction of the requests
instead of nearly all of them.
Seed 19. Columns: rate_per_s, request, latency_s.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent / "low_rate_tail" / "weak" / "samples.csv"
COUNTS = {10.0: 150, 100.0: 200, 1000.0: 600}
HITS, EXTRA_MS = 2, (40.0, 42.0)


def main() -> int:
    rng = np.random.default_rng(19)
    frames = []
    for rate, n in COUNTS.items():
        lat_ms = rng.lognormal(np.log(1.0), 0.25, n)
        if rate == min(COUNTS):
            hit = rng.choice(n, HITS, replace=False)
            lat_ms[hit] += rng.uniform(*EXTRA_MS, HITS)
        frames.append(pd.DataFrame({"rate_per_s": rate, "request": np.arange(n), "latency_s": lat_ms / 1e3}))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    pd.concat(frames, ignore_index=True).to_csv(OUT, index=False, float_format="%.7f")
    print(f"{OUT}: {sum(COUNTS.values())} requests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
