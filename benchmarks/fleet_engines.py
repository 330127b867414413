"""When does ``engine="dask"`` pay? Fleets of files × file size, pandas path against Dask clusters.

Runnable alone: ``python benchmarks/fleet_engines.py [--files 8,64,256] [--sizes small,large]
[--formats csv,hlog,strace] [--engines pandas,threads,processes] [--keep DIR]``.

1. Builds one file per format and size (generated here, never committed) and
   copies it to as many files as the largest fleet needs:

   - ``csv``: a hey CSV (8 columns) of lognormal latencies, 1,000 (small) or
     10,000 (large) requests;
   - ``hlog``: an HdrHistogram interval log (V2-compressed, µs, 3 digits),
     2 (small) or 10 (large) one-second intervals of 20,400 values;
   - ``strace``: the bundled ``strace -f -tt -T`` capture of Python threads on
     futexes (``tests/data/strace/threads_futex.txt``, 948 lines) once (small)
     or 10 times (large).

2. Runs every cell (format × size × number of files × engine) once, each in its
   own fresh interpreter, and measures reading the fleet into one pandas frame
   with its rejects (the pandas path: ``read_latency(files)`` /
   ``read_strace(files)``; Dask: ``workbench.engine.compute(read_*(files,
   engine="dask"))``):

   - ``pandas``: the pandas path, one process;
   - ``threads``: the default Dask client (an in-process LocalCluster: one
     worker with up to 4 threads, no copies between processes);
   - ``processes``: a ``LocalCluster(processes=True)`` on 127.0.0.1 with one
     single-threaded worker per CPU.

   Cells whose fleet is over ``--max-mb`` of input (default 64) are skipped.
   Wall time excludes starting the cluster and importing the loaders on its
   workers (printed apart as setup: a cluster is started once for many reads); peak RSS is the sum over the client process (which
   also runs the scheduler and the workers' nannies) and the worker processes,
   each process's own peak (``getrusage``). The load average is printed before
   and after: on a shared machine it says how much of the CPUs the run had.

3. Prints each cell with its ratios to the pandas path measured in the same
   run, and one line of advice computed from them. Nothing is asserted: the
   machine is shared and noisy.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
FUTEX = ROOT / "tests" / "data" / "strace" / "threads_futex.txt"
SIZES = {"csv": {"small": 1_000, "large": 10_000}, "hlog": {"small": 2, "large": 10},
         "strace": {"small": 1, "large": 10}}
SUFFIX = {"csv": ".csv", "hlog": ".hlog", "strace": ".txt"}
ENGINES = ("pandas", "threads", "processes")
PAYS = 1.1  # a Dask engine "pays" where it is at least this many times faster than the pandas path


def _hey_csv(path: Path, rows: int, seed: int = 3) -> None:
    rng = np.random.default_rng(seed)
    rt = rng.lognormal(np.log(0.003), 0.5, rows)
    offset = np.cumsum(rng.exponential(0.001, rows))
    lines = ["response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset"]
    lines += [f"{r:.4f},0.0001,0.0000,0.0000,{r * 0.9:.4f},0.0001,200,{o:.4f}" for r, o in zip(rt, offset, strict=True)]
    path.write_text("\n".join(lines) + "\n")


def build(fmt: str, size: str, path: Path) -> None:
    """One input file of ``fmt`` and ``size`` at ``path``."""
    n = SIZES[fmt][size]
    if fmt == "csv":
        _hey_csv(path, n)
    elif fmt == "hlog":
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from hlog_speed import build_log

        build_log(path, n)
    else:
        path.write_text(FUTEX.read_text() * n)


def fleet(root: Path, fmt: str, size: str, files: int) -> list[Path]:
    """``files`` copies of the format's file of that size under ``root`` (built once, copied as needed)."""
    d = root / f"{fmt}-{size}"
    d.mkdir(parents=True, exist_ok=True)
    paths = [d / f"host{i:03d}{SUFFIX[fmt]}" for i in range(files)]
    if not paths[0].exists():
        build(fmt, size, paths[0])
    for p in paths[1:]:
        if not p.exists():
            shutil.copyfile(paths[0], p)
    return paths


def _maxrss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


def _warm() -> None:
    import dask.dataframe  # noqa: F401

    import workbench.latency  # noqa: F401
    import workbench.syscalls  # noqa: F401


def run_cell(fmt: str, engine_name: str, paths: list[Path]) -> dict[str, Any]:
    """Read ``paths`` with one engine in this (fresh) process: times, rows, rejects and peak RSS."""
    from workbench import engine
    from workbench.latency import read_latency
    from workbench.schema import rejects_of
    from workbench.syscalls import read_strace

    read = read_strace if fmt == "strace" else read_latency
    setup_s = 0.0
    cluster = client = None
    if engine_name != "pandas":
        import distributed

        t0 = time.perf_counter()
        if engine_name == "threads":
            client = engine.get_client()  # the library's default: an in-process LocalCluster
        else:
            cluster = distributed.LocalCluster(processes=True, n_workers=os.cpu_count() or 1, threads_per_worker=1,
                                               host="127.0.0.1", protocol="tcp://", **engine.LOOPBACK_HTTP)
            client = distributed.Client(cluster, set_as_default=True)
        client.wait_for_workers(1)
        # a running cluster has its imports done: warm the workers as this process is warm
        client.run(_warm)
        setup_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    if engine_name == "pandas":
        frame = read(paths)
    else:
        frame = engine.compute(read(paths, engine="dask"))
    wall_s = time.perf_counter() - t0
    rows, rejected = len(frame), len(rejects_of(frame))
    del frame
    workers_bytes = 0
    if client is not None and engine_name == "processes":  # (the nannies live in this process)
        workers_bytes = sum(client.run(_maxrss_bytes).values())
    out = {"wall_s": wall_s, "setup_s": setup_s, "rows": rows, "rejects": rejected,
           "client_bytes": _maxrss_bytes(), "workers_bytes": workers_bytes}
    if client is not None:
        client.close()
    if cluster is not None:
        cluster.close()
    return out


def _cell_subprocess(fmt: str, engine_name: str, paths: list[Path]) -> dict[str, Any]:
    spec = json.dumps({"fmt": fmt, "engine": engine_name, "paths": [str(p) for p in paths]})
    done = subprocess.run([sys.executable, __file__, "--cell"], input=spec, capture_output=True, text=True,
                          check=False, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"cell {fmt}/{engine_name}/{len(paths)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg()) + " (1, 5, 15 min)"


def _mib(n: float) -> str:
    return f"{n / 2**20:,.0f}"


def advice(results: list[dict[str, Any]], cpus: int) -> str:
    """One line: where a Dask engine was faster than the pandas path (and at what memory), else pandas."""
    wins: dict[str, list[dict[str, Any]]] = {}
    best_ratio: dict[str, tuple[float, dict[str, Any]]] = {}
    for r in results:
        if r["engine"] == "pandas" or "speedup" not in r:
            continue
        if r["speedup"] >= PAYS:
            wins.setdefault(r["fmt"], []).append(r)
        if r["fmt"] not in best_ratio or r["speedup"] > best_ratio[r["fmt"]][0]:
            best_ratio[r["fmt"]] = (r["speedup"], r)
    parts = []
    for fmt in sorted(best_ratio):
        if fmt in wins:
            first = min(wins[fmt], key=lambda r: (r["files"] * r["file_bytes"], -r["speedup"]))
            best = max(wins[fmt], key=lambda r: r["speedup"])
            parts.append(f"{fmt}: engine='dask' ({first['engine']}) pays from {first['files']} files × "
                         f"{first['file_bytes'] / 1e3:,.0f} KB ({first['speedup']:.2f}×), best {best['speedup']:.2f}× "
                         f"at {best['files']} × {best['file_bytes'] / 1e3:,.0f} KB ({best['engine']}, "
                         f"{best['mem_ratio']:.1f}× the memory)")
        else:
            r = best_ratio[fmt][1]
            parts.append(f"{fmt}: use engine='pandas' (dask at best {r['speedup']:.2f}× its speed, "
                         f"{r['files']} × {r['file_bytes'] / 1e3:,.0f} KB, {r['engine']})")
    return f"advice on this machine ({cpus} CPUs): " + "; ".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", default="8,64,256", help="fleet sizes (numbers of files), comma-separated")
    ap.add_argument("--sizes", default="small,large", help="file sizes: small and/or large")
    ap.add_argument("--formats", default="csv,hlog,strace", help="csv, hlog and/or strace")
    ap.add_argument("--engines", default=",".join(ENGINES), help="pandas, threads and/or processes")
    ap.add_argument("--max-mb", type=float, default=64.0, help="skip fleets of more input than this (MB)")
    ap.add_argument("--keep", type=Path, help="build the files in this folder and keep them")
    ap.add_argument("--cell", action="store_true", help=argparse.SUPPRESS)  # internal: one cell from stdin
    args = ap.parse_args()
    if args.cell:
        spec = json.loads(sys.stdin.read())
        print(json.dumps(run_cell(spec["fmt"], spec["engine"], [Path(p) for p in spec["paths"]])))
        return
    counts = sorted(int(x) for x in args.files.split(","))
    sizes, formats = args.sizes.split(","), args.formats.split(",")
    engines = [e for e in ENGINES if e in args.engines.split(",")]
    cpus = os.cpu_count() or 1
    print(f"machine: {platform.machine()}, {cpus} CPUs, Python {platform.python_version()}; "
          f"processes = LocalCluster(processes=True, n_workers={cpus}, threads_per_worker=1) on 127.0.0.1; "
          f"load average {_load()}")
    root = args.keep or Path(tempfile.mkdtemp(prefix="wb-fleets-"))
    results: list[dict[str, Any]] = []
    t_all = time.perf_counter()
    try:
        print(f"{'format':7} {'size':>10} {'files':>5} {'engine':>9} {'wall s':>8} {'setup s':>7} "
              f"{'MB/s':>6} {'RSS MiB':>8} {'client':>7} {'speed-up':>8} {'memory':>6}")
        for fmt in formats:
            for size in sizes:
                for n in counts:
                    paths = fleet(root, fmt, size, 1)
                    file_bytes = paths[0].stat().st_size
                    if n * file_bytes > args.max_mb * 1e6:
                        print(f"{fmt:7} {file_bytes / 1e3:>7,.0f} KB {n:>5} skipped: "
                              f"{n * file_bytes / 1e6:,.0f} MB > --max-mb {args.max_mb:g}")
                        continue
                    paths = fleet(root, fmt, size, n)
                    base: dict[str, Any] | None = None
                    for eng in engines:
                        r = _cell_subprocess(fmt, eng, paths)
                        r.update(fmt=fmt, size=size, files=n, engine=eng, file_bytes=file_bytes,
                                 total_bytes=r["client_bytes"] + r["workers_bytes"])
                        if eng == "pandas":
                            base = r
                        elif base is not None:
                            if (r["rows"], r["rejects"]) != (base["rows"], base["rejects"]):
                                raise RuntimeError(f"{fmt}/{size}/{n}/{eng}: {r['rows']} rows, {r['rejects']} "
                                                   f"rejects; the pandas path read {base['rows']}, {base['rejects']}")
                            r["speedup"] = base["wall_s"] / r["wall_s"]
                            r["mem_ratio"] = r["total_bytes"] / base["total_bytes"]
                        results.append(r)
                        print(f"{fmt:7} {file_bytes / 1e3:>7,.0f} KB {n:>5} {eng:>9} {r['wall_s']:>8.2f} "
                              f"{r['setup_s']:>7.2f} {n * file_bytes / 1e6 / r['wall_s']:>6.1f} "
                              f"{_mib(r['total_bytes']):>8} {_mib(r['client_bytes']):>7} "
                              + (f"{r['speedup']:>7.2f}× {r['mem_ratio']:>5.2f}×" if "speedup" in r else
                                 f"{'(base)':>8} {'':>6}"), flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    print(f"speed-up = pandas wall / engine wall; memory = peak RSS summed over client and workers "
          f"/ the pandas path's; all {len(results)} cells in {time.perf_counter() - t_all:.0f} s; "
          f"load average {_load()}")
    print(advice(results, cpus))


if __name__ == "__main__":
    main()
