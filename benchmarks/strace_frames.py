"""Parsing a big strace against loading it back (converted Parquet, cache hit), side by side in one run.

Runnable alone: ``python benchmarks/strace_frames.py [--lines N | --big] [--repeats N] [--python PY] [--keep DIR]``.

1. Builds a synthetic ``-f -tt -T`` trace of ``--lines`` lines (default
   3,000,000; ``--big``: 10,000,000) with the generator of
   ``strace_convert.py`` (the real captures of ``tests/data/strace`` repeated),
   converts it once with ``to_parquet`` and fills a cache entry with
   ``read_strace(cache=...)``.
2. In a fresh child process each, best of ``--repeats`` (in rounds of every
   way once, shuffled, so a noisy spell of the machine falls on all alike):
   ``read_strace(trace)`` (the parse), ``read_strace(converted.parquet)`` (load
   back, every column; the 7 analysis columns; the 3 text columns alone),
   ``read_strace(trace, cache=...)`` hitting the entry by the remembered key of
   the settled file, and the same hit when the key must
   be found by hashing the file (first lookup of a copied or touched file);
   plus the imports alone.
3. Prints, for each: wall seconds, user and system CPU seconds of the child
   (user time is the steadiest measure of the work on a shared machine; system
   time is mostly page faults on fresh memory), M lines/s, peak RSS (the
   child's ``ru_maxrss``), the frame's bytes per row
   (``memory_usage(deep=True)``), and the ratios of time and memory against
   the parse measured in the same run; the median wall time of each over the
   runs (on a virtual machine fresh memory comes at two speeds, so the best
   run alone can mislead); and pyarrow's allocator and the one a load decodes
   into (jemalloc unless ``ARROW_DEFAULT_MEMORY_POOL`` chooses one; see the
   README's "Huge pages").
4. The floor of a load that builds the frame: as many bytes as the parse's
   frame written once into fresh memory, a share by each core, in huge pages
   (numpy) and in small ones (an anonymous map), each in a fresh child, and the
   parse's time over it, the most any such load can gain on this machine;
   and the CPU a whole load and its text columns alone take against the
   parse's (the work no faster memory removes).

``--python`` runs the children with another interpreter (for example the
virtual environment of an older checkout) to compare versions on the same
trace. Nothing is asserted: the machine may be shared and noisy.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from strace_convert import build_trace  # noqa: E402  (the same generator as the convert benchmark)

CHILD = """
import json, os, resource, sys, time
import numpy, pandas, pyarrow, pyarrow.parquet
from workbench.syscalls import read_strace, to_parquet
mode, src, out, cache = sys.argv[1:5]
COLUMNS = ["kind", "pid", "timestamp_s", "duration_s", "syscall", "retval", "errno"]
res = {}
t, c = time.perf_counter(), os.times()
f = None
if mode == "parse":
    f = read_strace(src, progress=False)
elif mode == "convert":
    res["rows"] = to_parquet(src, out, progress=False).rows
elif mode == "load":
    f = read_strace(out)
elif mode == "load-columns":
    f = read_strace(out, columns=COLUMNS)
elif mode == "load-text":  # the part of a whole load no faster format choice removes: the text decoded
    f = read_strace(out, columns=["args", "ret_text", "backtrace"])
elif mode in ("load-store", "load-hit"):
    f = read_strace(out, cache=cache + "-converted")
elif mode in ("store", "hit", "hit-hashed"):
    f = read_strace(src, progress=False, cache=cache)
elif mode in ("touch", "touch-small"):  # the floor: the parse's frame's bytes written once into fresh memory,
    import ctypes, mmap, threading      # a share by each core (as the loads fault their pages in on each)
    n = int(sys.argv[5])
    # numpy asks for huge pages for a big array; an anonymous map no one asks them for gets small ones
    mem = numpy.empty(n, dtype=numpy.uint8) if mode == "touch" else numpy.frombuffer(mmap.mmap(-1, n), numpy.uint8)
    step = -(-n // len(os.sched_getaffinity(0)))
    fills = [threading.Thread(target=ctypes.memset, args=(mem.ctypes.data + i, 1, min(step, n - i)))
             for i in range(0, n, step)]  # (ctypes lets the GIL go)
    for th in fills:
        th.start()
    for th in fills:
        th.join()
res["seconds"] = time.perf_counter() - t
e = os.times()
res["cpu_s"] = (e.user - c.user) + (e.system - c.system)
res["user_s"] = e.user - c.user
res["sys_s"] = e.system - c.system
res["maxrss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
res["arrow_pool"] = pyarrow.default_memory_pool().backend_name
from workbench.row_groups import decode_pool
res["decode_pool"] = decode_pool().backend_name
if f is not None:
    res["rows"] = len(f)
    res["bytes_per_row"] = float(f.memory_usage(deep=True, index=False).sum()) / max(len(f), 1)
    res["text_dtype"] = str(f["args"].dtype) if "args" in f else ""
print(json.dumps(res))
"""


def child(py: str, mode: str, src: Path, out: Path, cache: Path, nbytes: int = 0) -> dict:
    if mode == "hit-hashed":  # forget the remembered keys: the lookup hashes the trace
        for memo in cache.glob("*.stat"):
            memo.unlink()
    p = subprocess.run([py, "-c", CHILD, mode, str(src), str(out), str(cache), str(nbytes)],
                       capture_output=True, text=True, cwd=tempfile.gettempdir())
    if p.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def best(py: str, mode: str, src: Path, out: Path, cache: Path, repeats: int, nbytes: int = 0) -> dict:
    return _fastest([child(py, mode, src, out, cache, nbytes) for _ in range(repeats)])


def rounds(py: str, modes: list[str], src: Path, out: Path, cache: Path, repeats: int, nbytes: int) -> dict:
    """Each of ``modes`` run ``repeats`` times, a round of all of them at a time in a shuffled order; the
    fastest run of each (its peak RSS: the worst run's)."""
    order = random.Random(20)
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    for _ in range(repeats):
        for mode in order.sample(modes, len(modes)):
            runs[mode].append(child(py, mode, src, out, cache, nbytes))
    return {m: _fastest(r) for m, r in runs.items()}


def _fastest(runs: list[dict]) -> dict:
    fastest = dict(min(runs, key=lambda r: r["seconds"]))
    for k in ("cpu_s", "user_s", "sys_s"):
        fastest[k] = min(r[k] for r in runs)
    fastest["maxrss_mib"] = max(r["maxrss_mib"] for r in runs)  # peak memory: the worst run
    fastest["median_s"] = statistics.median(r["seconds"] for r in runs)
    return fastest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=3_000_000, help="lines of the synthetic trace")
    ap.add_argument("--big", action="store_true", help="10,000,000 lines")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each, the fastest kept")
    ap.add_argument("--python", default=sys.executable, help="interpreter of the children (default: this one)")
    ap.add_argument("--keep", metavar="DIR", help="write the trace, Parquet and cache here and keep them")
    args = ap.parse_args(argv)
    lines = 10_000_000 if args.big else args.lines
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        src, out, cache = folder / "frames.strace", folder / "frames.parquet", folder / "frames-cache"
        shutil.rmtree(cache, ignore_errors=True)
        written = time.time()
        n = build_trace(src, lines)
        size_mib = src.stat().st_size / 2**20
        print(f"trace: {n:,} lines, {size_mib:.0f} MiB, from the real captures repeated; best of {args.repeats}; "
              f"children run by {args.python}")
        py = args.python
        base = best(py, "imports", src, out, cache, 1)
        conv = child(py, "convert", src, out, cache)
        time.sleep(max(0.0, written + 2.5 - time.time()))  # the trace settles: its key may be remembered
        store = child(py, "store", src, out, cache)
        # the converted files settle before the entry is stored: its key is remembered, hits read neither
        settled = max(p.stat().st_mtime for p in folder.glob(out.stem + "*.parquet")) + 2.5
        time.sleep(max(0.0, settled - time.time()))
        child(py, "load-store", src, out, cache)
        frame_bytes = int(store["bytes_per_row"] * store["rows"])
        # rounds of every way once, in a random order each: a noisy spell of the machine falls on all alike
        modes = ["parse", "load", "load-columns", "load-text", "load-hit", "hit", "touch", "touch-small"]
        timed = rounds(py, modes, src, out, cache, args.repeats, frame_bytes)
        parse, load, cols, text, load_hit, hit, huge, small = (timed[m] for m in modes)
        touch = min(huge, small, key=lambda r: r["seconds"])
        hashed = best(py, "hit-hashed", src, out, cache, args.repeats)
        rows = {parse["rows"], load["rows"], hit["rows"], hashed["rows"], store["rows"], conv["rows"], cols["rows"],
                load_hit["rows"]}
        if len(rows) != 1:
            raise SystemExit(f"row counts differ between the ways of loading: {sorted(rows)}")
        print(f"{'':38}{'wall s':>8}{'user s':>8}{'sys s':>7}{'M lines/s':>11}{'peak RSS MiB':>14}{'B/row':>7}"
              f"{'wall vs parse':>15}{'user vs parse':>15}{'RSS vs parse':>14}")
        for label, r in (("read_strace(trace): parse", parse),
                         ("read_strace(converted .parquet)", load),
                         ("  the same, 7 analysis columns", cols),
                         ("  the same, the 3 text columns alone", text),
                         ("  the same with cache=, a hit", load_hit),
                         ("cache hit (key remembered)", hit),
                         ("cache hit (key found by hashing)", hashed),
                         ("first load with cache= (parse+store)", store),
                         ("frame's bytes, fresh huge pages", huge),
                         ("frame's bytes, fresh small pages", small),
                         ("imports only (floor)", base)):
            rate = n / r["seconds"] / 1e6 if "rows" in r else float("nan")
            bpr = f"{r['bytes_per_row']:7.0f}" if "bytes_per_row" in r else f"{'':7}"
            user = (f"{parse['user_s'] / r['user_s']:14.2f}x" if r["user_s"] >= 0.05 and r not in (huge, small)
                    else f"{'n/a':>15}")  # (clock ticks of 10 ms: a tick or two says nothing; a fill does no work)
            ratios = "" if r is base else (f"{parse['seconds'] / r['seconds']:14.2f}x{user}"
                                           f"{r['maxrss_mib'] / parse['maxrss_mib']:13.2f}x")
            print(f"{label:38}{r['seconds']:8.2f}{r['user_s']:8.2f}{r['sys_s']:7.2f}{rate:11.2f}"
                  f"{r['maxrss_mib']:14.0f}{bpr}{ratios}")
        entry = sum(p.stat().st_size for p in cache.glob("*.arrow")) / 2**20
        print(f"rows {parse['rows']:,}; text columns {parse['text_dtype']}; pyarrow allocator "
              f"{load['arrow_pool']} (ARROW_DEFAULT_MEMORY_POOL), a load decodes into {load['decode_pool']}; "
              f"converted Parquet "
              f"{out.stat().st_size / 2**20:.0f} MiB, cache entry {entry:.0f} MiB; "
              f"wall and user columns: how many times faster than the parse; RSS: the parse's peak = 1")
        print(f"peak RSS over imports: parse {parse['maxrss_mib'] - base['maxrss_mib']:.0f} MiB, "
              f"load back {load['maxrss_mib'] - base['maxrss_mib']:.0f} MiB, "
              f"cache hit {hit['maxrss_mib'] - base['maxrss_mib']:.0f} MiB")
        print(f"medians of {args.repeats} runs (wall s, ratio to the parse's median): parse {parse['median_s']:.2f}; "
              + ", ".join(f"{name} {r['median_s']:.2f} ({parse['median_s'] / r['median_s']:.2f}x)"
                          for name, r in (("every column", load), ("7 analysis columns", cols),
                                          ("text alone", text), ("converted with cache=", load_hit),
                                          ("cache hit", hit))))
        print("targets (ratios of this run): "
              f"converted trace loaded back >= 5x faster than the parse: {parse['seconds'] / load['seconds']:.2f}x "
              f"every column first time, {parse['seconds'] / cols['seconds']:.2f}x 7 analysis columns, "
              f"{parse['seconds'] / load_hit['seconds']:.2f}x every column again (cache); "
              f"a cache hit several times faster than the parse and no heavier: {parse['seconds'] / hit['seconds']:.2f}x, "
              f"peak RSS {hit['maxrss_mib'] / parse['maxrss_mib']:.2f}x")
        print(f"fresh memory: writing the frame's {frame_bytes / 2**20:.0f} MiB once into fresh pages, a share "
              "by each core, takes "
              f"{touch['seconds']:.2f} s here at best ({'huge' if touch is huge else 'small'} pages, "
              f"{touch['sys_s']:.2f} s of it system time; medians {huge['median_s']:.2f} s in huge pages, "
              f"{small['median_s']:.2f} s in small ones), the parse's time / "
              f"{parse['seconds'] / touch['seconds']:.1f}: a load that builds the frame in fresh memory (the parse, "
              "a Parquet decode) cannot beat the parse by more than that on this machine; a cache hit maps a file "
              "the page cache already holds instead")
        print(f"decoding: a whole load from Parquet takes {load['user_s']:.2f} s of CPU (user) against the parse's "
              f"{parse['user_s']:.2f} s ({parse['user_s'] / max(load['user_s'], 1e-9):.2f}x less); decoding the "
              f"three text columns alone takes {text['user_s']:.2f} s ({text['seconds']:.2f} s wall, the parse's "
              f"time / {parse['seconds'] / text['seconds']:.1f}): with both spread over the same cores, a load that "
              "decodes the text into the frame gains at most about the CPU ratio")
        if args.keep:
            os.sync()
    return 0


if __name__ == "__main__":
    sys.exit(main())
