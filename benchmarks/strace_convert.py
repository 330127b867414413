"""strace → Parquet (``to_parquet``) on one thread and on every core, against ``read_strace`` and a peer, in one run.

Runnable alone: ``python benchmarks/strace_convert.py [--lines N] [--stream-lines N] [--row-group-lines N]
[--repeats N] [--keep DIR]``. The targets are stated for ``--lines 28221878`` (the size of the
first big capture this tool was asked to read); the default is smaller so the run takes a few minutes.

1. Builds a synthetic trace of ``--lines`` lines (default 2,000,000) with
   ``benchmarks/strace_gen.py`` from the real ``-f -tt -T`` captures of
   ``tests/data/strace`` (their records, each repetition with its own pids), so
   it has threads, futex waits split into ``<unfinished ...>``/``<... resumed>``
   halves, signals, kills and group stops.
2. In a fresh child process each (best of ``--repeats``): ``read_strace`` of the
   trace into a frame (one scanner thread, and the default: every core);
   ``to_parquet`` of the trace (one thread, and the default); ``read_strace`` of
   the Parquet it wrote, of 5 of its columns, and of those columns for futex
   calls of 1 ms or more (pushed-down filters); the imports alone; and the peer
   strace-process-tree (``events()`` of the same trace kept in a list; installed
   into a throwaway venv under /tmp, never a dependency). Each child reports its
   time, CPU time and its peak RSS (``ru_maxrss`` of the child itself).
3. ``--stream-lines N`` (e.g. 100000000): the generator writes N lines to a
   pipe and ``to_parquet`` reads the pipe, so a trace bigger than the disk is
   converted without ever being stored; its peak RSS is reported.
4. Prints lines/s and peak RSS of each, with the ratios measured in the same
   run. Nothing is asserted: the machine may be shared and noisy.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from strace_gen import write_trace  # noqa: E402

CHILD = """
import json, resource, sys, time
import numpy, pandas, pyarrow, pyarrow.dataset, pyarrow.parquet
from workbench.syscalls import read_strace, to_parquet
mode, src, out, rg, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
threads = None if threads == "default" else int(threads)
COLUMNS = ["pid", "timestamp_s", "duration_s", "syscall", "errno"]
res = {}
t = time.perf_counter()
c = time.process_time()
if mode == "read":
    f = read_strace(src, progress=False, threads=threads)
    res["rows"] = len(f)
elif mode == "convert":
    r = to_parquet(sys.stdin.buffer if src == "-" else src, out, row_group_lines=rg, progress=False,
                   threads=threads)
    res.update(rows=r.rows, lines=r.lines, peak_rows_held=r.peak_rows_held, row_groups=r.row_groups)
elif mode == "load":
    f = read_strace(out)
    res["rows"] = len(f)
elif mode == "columns":
    f = read_strace(out, columns=COLUMNS)
    res["rows"] = len(f)
elif mode == "filter":
    f = read_strace(out, columns=COLUMNS, filters=[("syscall", "=", "futex"), ("duration_s", ">=", 0.001)])
    res["rows"] = len(f)
res["seconds"] = time.perf_counter() - t
res["cpu_s"] = time.process_time() - c
res["maxrss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(res))
"""


def build_trace(path: Path, lines: int) -> int:
    """Write ``lines`` lines made from the captures' records (see strace_gen.py); returns the count."""
    with open(path, "wb") as f:
        write_trace(f, lines)
    return lines


def child(mode: str, src: Path | str, out: Path, row_group_lines: int, threads: str = "default",
          stdin: object = None) -> dict:
    p = subprocess.run([sys.executable, "-c", CHILD, mode, str(src), str(out), str(row_group_lines), threads],
                       capture_output=True, text=True, cwd=ROOT, stdin=stdin)
    if p.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def best(mode: str, src: Path, out: Path, row_group_lines: int, repeats: int, threads: str = "default") -> dict:
    runs = [child(mode, src, out, row_group_lines, threads) for _ in range(repeats)]
    fastest = min(runs, key=lambda r: r["seconds"])
    fastest["maxrss_mib"] = max(r["maxrss_mib"] for r in runs)  # peak memory: the worst run
    return fastest


def peer(src: Path, repeats: int) -> dict | None:
    """strace-process-tree's events() over the trace (best of ``repeats``), or None when not installable."""
    from strace_parse import PEER, peer_python

    py = peer_python()
    if py is None:
        return None
    runs = []
    for _ in range(repeats):
        p = subprocess.run([py, "-c", PEER, str(src)], capture_output=True, text=True)
        if p.returncode != 0:
            print(f"  strace-process-tree failed: {p.stderr.strip().splitlines()[-1:]}")
            return None
        r = json.loads(p.stdout.strip().splitlines()[-1])
        runs.append({"seconds": r["parse_s"], "maxrss_mib": r["hwm_mib"], "rows": r["rows"]})
    return min(runs, key=lambda r: r["seconds"])


def stream(lines: int, out: Path, row_group_lines: int) -> dict:
    """to_parquet reading the generator's output from a pipe: ``lines`` lines, never stored."""
    gen = subprocess.Popen([sys.executable, str(Path(__file__).resolve().parent / "strace_gen.py"),
                            "--lines", str(lines), "-o", "-"], stdout=subprocess.PIPE)
    try:
        res = child("convert", "-", out, row_group_lines, "default", stdin=gen.stdout)
    finally:
        assert gen.stdout is not None
        gen.stdout.close()
        gen.wait()
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=2_000_000,
                    help="lines of the synthetic trace (the targets are for 28221878)")
    ap.add_argument("--stream-lines", type=int, default=0,
                    help="also convert this many generated lines read from a pipe (e.g. 100000000); 0: skip")
    ap.add_argument("--row-group-lines", type=int, default=1 << 18, help="to_parquet chunk size in lines")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each, the fastest kept")
    ap.add_argument("--keep", metavar="DIR", help="write the trace and the Parquet here and keep them")
    args = ap.parse_args(argv)
    from workbench.syscalls._read import cores_available

    rg, rep = args.row_group_lines, max(1, args.repeats)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        src, out = folder / "big.strace", folder / "big.parquet"
        n = build_trace(src, args.lines)
        size_mib = src.stat().st_size / 2**20
        cores = cores_available()
        print(f"trace: {n:,} lines, {size_mib:.0f} MiB, from real captures (benchmarks/strace_gen.py); "
              f"row groups of {rg:,} lines; best of {rep}; {cores} core(s) available; "
              f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        base = best("imports", src, out, rg, 1)
        read1 = best("read", src, out, rg, rep, "1")
        read = best("read", src, out, rg, rep)
        conv1 = best("convert", src, out, rg, rep, "1")
        conv = best("convert", src, out, rg, rep)
        load = best("load", src, out, rg, rep)
        cols = best("columns", src, out, rg, rep)
        filt = best("filter", src, out, rg, rep)
        spt = peer(src, min(rep, 2))
        if not (read["rows"] == read1["rows"] == conv["rows"] == conv1["rows"] == load["rows"] == cols["rows"]):
            raise SystemExit(f"row counts differ: read {read['rows']}, convert {conv['rows']}, load {load['rows']}")
        pq_mib = out.stat().st_size / 2**20
        print(f"{'':38}{'seconds':>9}{'cpu s':>8}{'M lines/s':>11}{'peak RSS MiB':>14}{'time ratio':>12}"
              f"{'RSS ratio':>11}")
        rows = [("read_strace(trace), 1 thread", read1), (f"read_strace(trace), {cores} threads", read),
                ("to_parquet(trace), 1 thread", conv1), (f"to_parquet(trace), {cores} threads", conv),
                ("read_strace(Parquet) -> frame", load), ("  5 numeric/categorical columns", cols),
                (f"  same, futex >= 1 ms ({filt['rows']:,} rows)", filt), ("imports only (floor)", base)]
        if spt is not None:
            rows.append(("strace-process-tree events()", {**spt, "cpu_s": float("nan")}))
        for label, r in rows:
            rate = n / r["seconds"] / 1e6 if r["seconds"] > 0 and label[0] != "i" else float("nan")
            print(f"{label:38}{r['seconds']:9.2f}{r.get('cpu_s', float('nan')):8.2f}{rate:11.2f}"
                  f"{r['maxrss_mib']:14.0f}{r['seconds'] / read['seconds']:11.2f}x"
                  f"{r['maxrss_mib'] / read['maxrss_mib']:10.2f}x")
        print(f"rows {read['rows']:,}; Parquet {pq_mib:.0f} MiB ({pq_mib / size_mib:.2f} of the trace); "
              f"converter held at most {conv['peak_rows_held']:,} rows in {conv['row_groups']} row groups")
        print("targets (ratios measured in this run):")
        print(f"  read_strace into a frame on {cores} cores: {n / read['seconds'] / 1e6:.2f} M lines/s "
              f"(1 thread {n / read1['seconds'] / 1e6:.2f}; x{read1['seconds'] / read['seconds']:.2f})   "
              "(goal >= 3 M lines/s on 2 cores)")
        print(f"  to_parquet on {cores} cores: {conv['seconds']:.1f} s, peak RSS {conv['maxrss_mib']:.0f} MiB "
              f"(1 thread {conv1['seconds']:.1f} s, {conv1['maxrss_mib']:.0f} MiB; "
              f"x{conv1['seconds'] / conv['seconds']:.2f})   "
              f"(goal at 28.2 M lines: <= 15 s, <= 1024 MiB; this run: {n / 1e6:.1f} M lines, "
              f"{conv['seconds'] * 28221878 / n:.1f} s scaled linearly)")
        if spt is not None:
            print(f"  vs strace-process-tree (its events() only, same trace): read_strace "
                  f"{spt['seconds'] / read['seconds']:.1f}x as fast, to_parquet {spt['seconds'] / conv['seconds']:.1f}x"
                  "   (goal >= 20x)")
        else:
            print("  strace-process-tree: not installable here; no ratio")
        print(f"  loading back is {read['seconds'] / load['seconds']:.2f}x as fast as parsing "
              f"(5 columns: {read['seconds'] / cols['seconds']:.2f}x, filtered: "
              f"{read['seconds'] / filt['seconds']:.2f}x)   (goal >= 5x)")
        if args.stream_lines:
            out.unlink(missing_ok=True)
            s = stream(args.stream_lines, folder / "stream.parquet", rg)
            print(f"  {s['lines']:,} generated lines through a pipe into to_parquet: {s['seconds']:.1f} s, "
                  f"peak RSS {s['maxrss_mib']:.0f} MiB, {s['rows']:,} rows in {s['row_groups']} row groups "
                  f"(goal: <= 1024 MiB; the trace itself was never stored)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
