"""Reading an HdrHistogram interval log: the numpy bucket pass against hdrh's recorded iterator.

Runnable alone: ``python benchmarks/hlog_speed.py [--intervals 60] [--repeats 3]``.

Builds a log like a load tool's (``--intervals`` one-second intervals of a
latency distribution with a long tail, 3 significant digits, microseconds,
V2-compressed payloads), then times in the same run, best of ``--repeats``:

- ``read_latency(path)`` — the workbench reader (payloads decoded by hdrh, the
  distribution frame built with numpy over each interval's counts array);
- the baseline: the same payloads decoded, then every bucket walked with
  hdrh's ``get_recorded_iterator()`` into the same columns (what the reader did
  before).

Prints both, the ratio and the file size. Target: a 60-interval log of about
85 KB read in at most 0.3 s and at least 20× faster than the baseline.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def build_log(path: Path, intervals: int, seed: int = 7) -> None:
    """An interval log of ``intervals`` seconds of lognormal latencies in µs with a slow tail."""
    from hdrh.histogram import HdrHistogram

    rng = np.random.default_rng(seed)
    lines = ["#[Histogram log format version 1.3]", "#[StartTime: 1796016000.000 (seconds since epoch)]",
             '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"']
    for k in range(intervals):
        h = HdrHistogram(1, 60_000_000, 3)
        values = np.concatenate([rng.lognormal(np.log(800), 0.6, 20_000), rng.lognormal(np.log(40_000), 1.0, 400)])
        for v in np.clip(values, 1, 59_000_000).astype(np.int64):
            h.record_value(int(v))
        payload = h.encode().decode()
        lines.append(f"{k:.3f},1.000,{h.get_max_value() / 1000:.3f},{payload}")
    path.write_text("\n".join(lines) + "\n")


def baseline(path: Path) -> int:
    """Decode every payload and walk every recorded bucket with hdrh's iterator (the old way)."""
    from workbench.latency._hdr import _decode

    rows = 0
    for line in path.read_text().splitlines():
        parts = line.split(",")
        if len(parts) != 4 or not parts[0][:1].isdigit():
            continue
        h = _decode(parts[3])
        total = h.get_total_count()
        cols: list[tuple[float, int, int, float]] = []
        for item in h.get_recorded_iterator():
            cols.append((item.value_iterated_to * 1e-6, int(item.count_added_in_this_iter_step),
                         int(item.total_count_to_this_value), 100.0 * item.total_count_to_this_value / total))
        rows += len(cols)
    return rows


def best_s(fn, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--intervals", type=int, default=60)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    from workbench.latency import read_latency

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "run.hlog"
        build_log(path, args.intervals)
        size_kb = path.stat().st_size / 1024
        t_new, frame = best_s(lambda: read_latency(path), args.repeats)
        t_old, rows = best_s(lambda: baseline(path), args.repeats)
    assert len(frame) == rows, (len(frame), rows)  # type: ignore[arg-type]
    print(f"hlog: {args.intervals} intervals, {size_kb:.0f} KB, {rows} bucket rows")
    print(f"  read_latency (numpy buckets)        {t_new:8.3f} s   target <= 0.3 s: {'met' if t_new <= 0.3 else 'NOT met'}")
    print(f"  baseline (hdrh recorded iterator)   {t_old:8.3f} s")
    print(f"  speed-up {t_old / t_new:.1f}×   target >= 20×: {'met' if t_old / t_new >= 20 else 'NOT met'}")


if __name__ == "__main__":
    main()
