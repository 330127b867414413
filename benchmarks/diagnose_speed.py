"""Wall time of ``workbench diagnose`` on folders of captures (target: under a minute each).

Runnable alone: ``python benchmarks/diagnose_speed.py [PATH ...] [--repeats 1]``
(default: the bundled ``data/`` and ``tests/data/``).

For each folder: files found, files read, detectors that ran, and the wall time of
:func:`workbench.diagnose.diagnose` (inventory plus every detector), best of ``--repeats``,
with the time spent reading (inventory) shown apart.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    """Print one line per folder: files, read, detectors run, inventory seconds, total seconds."""
    from workbench.diagnose import DETECTORS, inventory

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("paths", nargs="*", default=[str(ROOT / "data"), str(ROOT / "tests" / "data")])
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args(argv)
    for path in args.paths:
        best_inv = best_all = float("inf")
        files, ran = [], []
        for _ in range(max(1, args.repeats)):
            t0 = time.perf_counter()
            files = inventory([path])
            t1 = time.perf_counter()
            ran = [d for d in (f(files) for f in DETECTORS.values()) if d.verdict != "not applicable"]
            t2 = time.perf_counter()
            best_inv, best_all = min(best_inv, t1 - t0), min(best_all, t2 - t0)
        n_read = sum(f.kind != "unknown" for f in files)
        print(f"{path}: {len(files)} files, {n_read} read, {len(ran)} detectors ran; "
              f"inventory {best_inv:.1f} s, total {best_all:.1f} s (target < 60 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
