"""strace → Parquet (``to_parquet``) against ``read_strace`` on the same big trace, in one run.

Runnable alone: ``python benchmarks/strace_convert.py [--lines N] [--row-group-lines N] [--repeats N] [--keep DIR]``.

1. Builds a synthetic trace of ``--lines`` lines (default 2,000,000) by repeating
   the real ``-f -tt -T`` captures of ``tests/data/strace`` (their records, not
   their -C tables), so it has threads, futex waits split into
   ``<unfinished ...>``/``<... resumed>`` halves, signals, kills and group stops.
2. In a fresh child process each (best of ``--repeats``): ``read_strace`` of the
   trace into a frame; ``to_parquet`` of the trace; ``read_strace`` of the
   Parquet it wrote (loading a converted trace back), of 5 of its columns, and
   of those columns for futex calls of 1 ms or more (pushed-down filters); and
   the imports alone.
   Each child reports its time and its peak RSS (``resource.getrusage``
   ``ru_maxrss`` of the child itself).
3. Prints lines/s and peak RSS of each, with the ratios against ``read_strace``
   measured in the same run.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ("threads_futex.txt", "signals_restart.txt", "killed.txt", "stop_segv.txt", "tricky.txt",
            "attach_p.txt")

CHILD = """
import json, resource, sys, time
import numpy, pandas, pyarrow, pyarrow.dataset, pyarrow.parquet
from workbench.syscalls import read_strace, to_parquet
mode, src, out, rg = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
COLUMNS = ["pid", "timestamp_s", "duration_s", "syscall", "errno"]
res = {}
t = time.perf_counter()
if mode == "read":
    f = read_strace(src, progress=False)
    res["rows"] = len(f)
elif mode == "convert":
    r = to_parquet(src, out, row_group_lines=rg, progress=False)
    res.update(rows=r.rows, peak_rows_held=r.peak_rows_held, row_groups=r.row_groups)
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
res["maxrss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(res))
"""


def build_trace(path: Path, lines: int) -> int:
    """Write ``lines`` lines made of the captures' records, repeated; returns the count written."""
    bodies = []
    for name in CAPTURES:
        text = (ROOT / "tests" / "data" / "strace" / name).read_text(encoding="latin-1").splitlines(keepends=True)
        cut = next((i for i, ln in enumerate(text) if ln.startswith("% time")), len(text))
        bodies.append(text[:cut])
    n = 0
    with open(path, "w", encoding="latin-1") as f:
        while n < lines:
            for body in bodies:
                take = body[: lines - n]
                f.writelines(take)
                n += len(take)
                if n >= lines:
                    break
    return n


def child(mode: str, src: Path, out: Path, row_group_lines: int) -> dict:
    p = subprocess.run([sys.executable, "-c", CHILD, mode, str(src), str(out), str(row_group_lines)],
                       capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def best(mode: str, src: Path, out: Path, row_group_lines: int, repeats: int) -> dict:
    runs = [child(mode, src, out, row_group_lines) for _ in range(repeats)]
    fastest = min(runs, key=lambda r: r["seconds"])
    fastest["maxrss_mib"] = max(r["maxrss_mib"] for r in runs)  # peak memory: the worst run
    return fastest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=2_000_000, help="lines of the synthetic trace")
    ap.add_argument("--row-group-lines", type=int, default=1 << 18, help="to_parquet chunk size in lines")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each, the fastest kept")
    ap.add_argument("--keep", metavar="DIR", help="write the trace and the Parquet here and keep them")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        src, out = folder / "big.strace", folder / "big.parquet"
        n = build_trace(src, args.lines)
        size_mib = src.stat().st_size / 2**20
        print(f"trace: {n:,} lines, {size_mib:.0f} MiB, from {len(CAPTURES)} real captures repeated; "
              f"row groups of {args.row_group_lines:,} lines; best of {args.repeats}")
        base = best("imports", src, out, args.row_group_lines, 1)
        read = best("read", src, out, args.row_group_lines, args.repeats)
        conv = best("convert", src, out, args.row_group_lines, args.repeats)
        load = best("load", src, out, args.row_group_lines, args.repeats)
        cols = best("columns", src, out, args.row_group_lines, args.repeats)
        filt = best("filter", src, out, args.row_group_lines, args.repeats)
        if not (read["rows"] == conv["rows"] == load["rows"] == cols["rows"]):
            raise SystemExit(f"row counts differ: read {read['rows']}, convert {conv['rows']}, load {load['rows']}")
        pq_mib = out.stat().st_size / 2**20
        print(f"{'':34}{'seconds':>9}{'M lines/s':>11}{'peak RSS MiB':>14}{'time ratio':>12}{'RSS ratio':>11}")
        for label, r in (("read_strace(trace) -> frame", read), ("to_parquet(trace) -> Parquet", conv),
                         ("read_strace(Parquet) -> frame", load), ("  5 numeric/categorical columns", cols),
                         (f"  same, futex >= 1 ms ({filt['rows']:,} rows)", filt),
                         ("imports only (floor)", base)):
            rate = n / r["seconds"] / 1e6 if r["seconds"] > 0 and label[0] != "i" else float("nan")
            print(f"{label:34}{r['seconds']:9.2f}{rate:11.2f}{r['maxrss_mib']:14.0f}"
                  f"{r['seconds'] / read['seconds']:11.2f}x{r['maxrss_mib'] / read['maxrss_mib']:10.2f}x")
        print(f"rows {read['rows']:,}; Parquet {pq_mib:.0f} MiB ({pq_mib / size_mib:.2f} of the trace); "
              f"converter held at most {conv['peak_rows_held']:,} rows in {conv['row_groups']} row groups")
        print(f"convert peak RSS over imports: {conv['maxrss_mib'] - base['maxrss_mib']:.0f} MiB "
              f"(read_strace: {read['maxrss_mib'] - base['maxrss_mib']:.0f} MiB); "
              f"loading back is {read['seconds'] / load['seconds']:.2f}x as fast as parsing "
              f"(5 columns: {read['seconds'] / cols['seconds']:.2f}x, filtered: {read['seconds'] / filt['seconds']:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
