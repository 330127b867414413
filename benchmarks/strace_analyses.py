"""Time and memory of every strace analysis on a big frame, against the parse of the same trace.

Runnable alone: ``python benchmarks/strace_analyses.py [--lines N] [--text arrow|str|object] [--keep DIR]``
(``--lines 10000000`` for the 10 M-line figures).

1. Builds a trace of ``--lines`` lines (default 3,000,000) from the bundled
   ``-f -ttt -T -y`` captures of notebook 01 (``data/01_quantized_latency/lab``:
   a server whose futex waits time out at 250/500/1000 ms, HTTP on loopback
   sockets, file reads), repeated with every copy shifted in time after the
   previous one and given its own thread ids, so the result reads like one long
   capture of a busy server.
2. Parses it once with ``read_strace`` (the parse time is the yardstick).
3. Runs every analysis of ``workbench.syscalls.summary`` and
   ``workbench.syscalls.waits`` on that frame: first *cold* (nothing derived
   from the frame is kept yet: the cost of the analysis alone), then *warm*
   (after another analysis of the same frame), and once more under
   ``tracemalloc`` for the extra memory it allocates at its peak (numpy, pandas
   and Python objects; Arrow's own allocations are in the sampled RSS column).
4. Runs notebook 01's analyses of a trace in the notebook's order, cold.
5. Prints each with its target (≤ 2 s and ≤ 1× the frame's memory extra; the
   notebook's total ≤ the parse time) and the ratios measured in this run.
   Nothing is asserted: the machine is shared and noisy.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "data" / "01_quantized_latency" / "lab"
CAPTURES = ("strace_before.txt", "strace_fixed.txt")
RANGE_S = 0.2  # notebook 01's range_ms / 1e3


def build_trace(path: Path, lines: int) -> int:
    """Write ``lines`` lines of the lab captures, repeated and shifted in time and thread id; returns the count."""
    blocks = []
    for name in CAPTURES:
        recs = []
        for ln in (LAB / name).read_text(encoding="latin-1").splitlines(keepends=True):
            pid, ts, rest = ln.split(" ", 2)
            recs.append((int(pid), float(ts), rest))
        blocks.append(recs)
    t0 = min(r[1] for b in blocks for r in b)
    span = max(r[1] for b in blocks for r in b) - t0 + 1.0
    n = copy = 0
    with open(path, "w", encoding="latin-1") as f:
        while n < lines:
            for recs in blocks:
                shift, base = copy * span, copy * 1_000_000
                take = recs[: lines - n]
                f.writelines(f"{base + pid} {ts + shift:.6f} {rest}" for pid, ts, rest in take)
                n += len(take)
                copy += 1
                if n >= lines:
                    break
    return n


class RssPeak:
    """Highest resident set size seen by a sampling thread while the block runs (MiB above the start)."""

    def __init__(self) -> None:
        self.peak = self.start = self._rss()
        self._stop = threading.Event()

    @staticmethod
    def _rss() -> int:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _run(self) -> None:
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, self._rss())

    def __enter__(self) -> RssPeak:
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, self._rss())

    @property
    def mib(self) -> float:
        return (self.peak - self.start) / 2**20


def forget(frame: pd.DataFrame) -> None:
    """Drop what the library keeps derived from ``frame`` (nothing to drop in versions that keep nothing)."""
    try:
        from workbench.syscalls import _derived
    except ImportError:
        return
    _derived.forget(frame)


def measure(fn: Callable[[], Any], frame: pd.DataFrame, *, memory: bool) -> dict[str, float]:
    """Cold and warm seconds of ``fn``; with ``memory``, its traced peak (MiB) and sampled RSS rise."""
    forget(frame)
    gc.collect()
    with RssPeak() as rss:
        t, c = time.perf_counter(), time.process_time()
        fn()
        cold, cold_cpu = time.perf_counter() - t, time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    fn()
    warm, warm_cpu = time.perf_counter() - t, time.process_time() - c
    out = {"cold_s": cold, "cold_cpu_s": cold_cpu, "warm_s": warm, "warm_cpu_s": warm_cpu, "rss_mib": rss.mib,
           "traced_mib": float("nan")}
    if memory:
        forget(frame)
        gc.collect()
        tracemalloc.start()
        fn()
        out["traced_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    gc.collect()
    return out


def notebook_01(trace: pd.DataFrame, log: pd.DataFrame) -> None:
    """What notebook 01 computes from a trace (sections 6, 6b and 6c), in its order."""
    from workbench.syscalls import duration_histogram
    from workbench.syscalls import waits as w

    peaks = w.duration_peaks(trace)
    w.timed_wait_peaks(trace, peaks, min_s=RANGE_S)
    shown = sorted({p.syscall for p in peaks})[:4]
    try:
        from workbench.syscalls import group_syscalls
    except ImportError:  # versions before group_syscalls: the notebook relabelled object names
        names = trace["syscall"].astype(object)
        pooled = trace.assign(syscall=np.where(names.notna(), "all syscalls", None))
        split = trace.assign(syscall=np.where(names.isin(shown), names,
                                              np.where(names.notna(), "all other syscalls", None)))
    else:
        pooled = group_syscalls(trace)
        split = group_syscalls(trace, shown, "all other syscalls")
    duration_histogram(pooled, bins_per_decade=20, min_s=1e-5, max_s=10.0)
    w.duration_peaks(pooled)
    duration_histogram(split, bins_per_decade=20, min_s=1e-5, max_s=10.0)
    w.match_waits(trace, log, syscall="futex", min_s=0.9 * RANGE_S)
    w.other_long_calls(trace, RANGE_S, exclude=["futex"])
    w.slowest_calls(trace, 5, exclude=["futex"])
    w.slowest_calls(trace, 5, wait_class="kernel")
    w.wait_summary(trace)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=3_000_000, help="lines of the generated trace (10000000: 10 M)")
    ap.add_argument("--text", choices=("as-read", "arrow", "object"), default="as-read",
                    help="storage of the text columns: as read_strace returns them, Arrow large_string, or objects")
    ap.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs (they take time)")
    ap.add_argument("--only", default="", help="comma-separated analysis names to run (default: all)")
    ap.add_argument("--keep", metavar="DIR", help="write the trace here and keep it (reused when it exists)")
    args = ap.parse_args(argv)

    from workbench.syscalls import (
        compare_with_strace,
        duration_histogram,
        read_strace,
        strace_counts,
        syscall_summary,
    )
    from workbench.syscalls import waits as w

    tmp = None
    if args.keep:
        out_dir = Path(args.keep)
        out_dir.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="wb-bench-analyses-")
        out_dir = Path(tmp.name)
    trace_path = out_dir / f"analyses_{args.lines}.strace"
    if not trace_path.exists():
        t = time.perf_counter()
        n = build_trace(trace_path, args.lines)
        print(f"built {trace_path} ({n:,d} lines, {trace_path.stat().st_size / 1e6:.0f} MB) "
              f"in {time.perf_counter() - t:.1f} s", flush=True)

    read_strace("1  getpid() = 1\n", progress=False)  # first-use initialisation is not parse time
    import pyarrow.compute  # noqa: F401  imports are not analysis time (duration_peaks needs scipy.stats)
    import scipy.stats  # noqa: F401
    gc.collect()
    with RssPeak() as rss:
        t, c = time.perf_counter(), time.process_time()
        frame = read_strace(trace_path, progress=False)
        parse_s, parse_cpu = time.perf_counter() - t, time.process_time() - c
    if args.text != "as-read":
        import pyarrow as pa

        dtype: Any = pd.ArrowDtype(pa.large_string()) if args.text == "arrow" else object
        frame = frame.astype({c: dtype for c in ("args", "ret_text", "backtrace")})
    frame_mib = frame.memory_usage(deep=True).sum() / 2**20
    print(f"parse: {args.lines:,d} lines → {len(frame):,d} rows in {parse_s:.2f} s (CPU {parse_cpu:.2f} s) "
          f"({args.lines / parse_s / 1e6:.2f} M lines/s, RSS +{rss.mib:.0f} MiB); frame {frame_mib:.0f} MiB; "
          f"text columns {frame['args'].dtype}", flush=True)
    log = w.read_wait_log(LAB / "injections.csv")
    table = frame.attrs.get("strace_summary")
    if table is None:
        table = strace_counts(frame).assign(calls=lambda t: t["calls"] + 1)  # a table that differs everywhere

    analyses: list[tuple[str, Callable[[], Any]]] = [
        ("classify_waits", lambda: w.classify_waits(frame)),
        ("duration_peaks", lambda: w.duration_peaks(frame)),
        ("calls_exceeding(0.1 s)", lambda: w.calls_exceeding(frame, 0.1)),
        ("calls_exceeding(0 s)", lambda: w.calls_exceeding(frame, 0.0)),
        ("slowest_calls(5)", lambda: w.slowest_calls(frame, 5)),
        ("slowest_calls(5, kernel)", lambda: w.slowest_calls(frame, 5, wait_class="kernel")),
        ("wait_summary", lambda: w.wait_summary(frame)),
        ("long_waits(0.2 s)", lambda: w.long_waits(frame, RANGE_S)),
        ("other_long_calls(0.2 s)", lambda: w.other_long_calls(frame, RANGE_S, exclude=["futex"])),
        ("timed_wait_peaks", lambda: w.timed_wait_peaks(frame, (), min_s=RANGE_S)),
        ("match_waits(futex)", lambda: w.match_waits(frame, log, syscall="futex", min_s=0.9 * RANGE_S)),
        ("counted_calls", lambda: __import__("workbench.syscalls", fromlist=["x"]).counted_calls(frame)),
        ("strace_counts", lambda: strace_counts(frame)),
        ("syscall_summary", lambda: syscall_summary(frame)),
        ("duration_histogram", lambda: duration_histogram(frame)),
        ("compare_with_strace", lambda: compare_with_strace(frame, table)),
        ("notebook 01 (sections 6-6c)", lambda: notebook_01(frame, log)),
    ]
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    print("\ncold: the first analysis of the frame; warm: after another one (derived arrays kept); CPU: this\n"
          "process's CPU time (steadier than wall time on a shared machine); /parse: cold CPU over the parse's CPU")
    print(f"{'analysis':28s} {'cold s':>7s} {'CPU s':>7s} {'warm s':>7s} {'CPU s':>7s} {'/parse':>7s} "
          f"{'traced MiB':>10s} {'RSS Δ MiB':>9s} {'/frame':>7s}  target", flush=True)
    for name, fn in analyses:
        if only and name not in only:
            continue
        r = measure(fn, frame, memory=not args.no_memory)
        extra = max(r["traced_mib"] if r["traced_mib"] == r["traced_mib"] else 0.0, r["rss_mib"])
        nb = name.startswith("notebook")
        target = "≤ parse" if nb else "≤ 2 s, ≤ 1× frame"
        ok = (r["cold_cpu_s"] <= parse_cpu) if nb else (r["cold_cpu_s"] <= 2.0 and extra <= frame_mib)
        print(f"{name:28s} {r['cold_s']:7.3f} {r['cold_cpu_s']:7.3f} {r['warm_s']:7.3f} {r['warm_cpu_s']:7.3f} "
              f"{r['cold_cpu_s'] / parse_cpu:7.3f} {r['traced_mib']:10.0f} {r['rss_mib']:9.0f} "
              f"{extra / frame_mib:7.3f}  {target} (CPU): {'met' if ok else 'MISSED'}", flush=True)
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
