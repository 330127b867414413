"""Speed and memory of read_strace on a >= 2,000,000-line real strace, against peers and cat.

Runnable alone: ``python benchmarks/strace_parse.py [--lines N] [--keep DIR]``.

1. Captures real traces on this machine with ``strace -f -tt -T -y``: Python
   threads waiting on futexes, an HTTP server answering requests on 127.0.0.1
   (loopback only), and a file-tree walk (``ls -lR``).
2. Concatenates them round-robin into one input of at least ``--lines`` lines
   (the input is generated here, never committed).
3. Runs each reader once in its own process and records wall time, CPU time and
   peak RSS (``wait4``): ``cat``, a baseline interpreter that only imports
   pandas + pyarrow + workbench.syscalls, ``read_strace`` with the native
   scanner (one thread with WORKBENCH_THREADS=1, and the default: one scanner
   thread per core available, the file cut at line boundaries), ``read_strace`` with
   the Python reference scanner, and the peer strace-process-tree
   (pip-installed into a throwaway venv under /tmp; its ``events()`` are kept
   in a list, as a loader keeps its frame).
4. Prints lines/s and the ratios measured in this run. Nothing is asserted:
   the machine is shared and noisy.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
PEER_VENV = Path(tempfile.gettempdir()) / "wb-bench-strace-process-tree"

FUTEX = """
import queue, threading
def pair(n):
    q = queue.Queue(maxsize=1)  # every put/get hands over: a futex wait and wake per item
    def prod():
        for i in range(n):
            q.put(i)
    def cons():
        for _ in range(n):
            q.get()
    return [threading.Thread(target=prod), threading.Thread(target=cons)]
ts = [t for _ in range(3) for t in pair(6000)]
for t in ts: t.start()
for t in ts: t.join()
"""

HTTP = """
import http.server, threading, urllib.request
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"x" * 512
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=srv.serve_forever, daemon=True).start()
url = "http://127.0.0.1:%d/" % srv.server_address[1]
for _ in range(400):
    urllib.request.urlopen(url).read()
srv.shutdown()
"""


def capture(out: Path) -> list[Path]:
    """Real strace captures made now; returns their paths."""
    strace = shutil.which("strace")
    if strace is None:
        raise SystemExit("strace is not installed (Debian: apt-get install strace)")
    base = [strace, "-f", "-tt", "-T", "-y", "-o"]
    progs = {
        "futex_threads": [PY, "-I", "-S", "-c", FUTEX],
        "http_loopback": [PY, "-I", "-c", HTTP],
        "tree_walk": ["ls", "-lR", str(Path(os.__file__).parent)],
    }
    paths = []
    for name, cmd in progs.items():
        p = out / f"{name}.strace"
        t0 = time.perf_counter()
        subprocess.run(base + [str(p)] + cmd, check=True, stdout=subprocess.DEVNULL, timeout=600)
        n = sum(1 for _ in open(p, "rb"))
        print(f"  captured {name:14s} {n:9,d} lines {p.stat().st_size / 1e6:7.1f} MB "
              f"in {time.perf_counter() - t0:5.1f} s", flush=True)
        paths.append(p)
    return paths


def build_input(captures: list[Path], lines: int, dest: Path) -> int:
    """Concatenate the captures round-robin until ``lines`` lines; returns the line count."""
    texts = [p.read_bytes().splitlines(keepends=True) for p in captures]
    n = 0
    with open(dest, "wb") as f:
        while n < lines:
            for t in texts:
                take = t[: lines - n]
                f.writelines(take)
                n += len(take)
                if n >= lines:
                    break
    return n


TIME = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)


REPEATS = 3


def best_of(cmd: list[str], repeats: int = REPEATS, **kw) -> dict:
    """Run ``cmd`` ``repeats`` times (same input, warm page cache); keep the fastest run.

    Every reader gets the same treatment, so the ratios compare best cases and
    a neighbour's burst of CPU on this shared machine does not decide them.
    """
    runs = [run(cmd, **kw) for _ in range(repeats)]
    ok = [r for r in runs if r["ok"]]
    if not ok:
        return runs[0]

    def key(r: dict) -> float:
        out = r.get("out", "")
        return json.loads(out).get("parse_s") or r["wall_s"] if out.startswith("{") else r["wall_s"]

    best = min(ok, key=key)
    best["runs"] = len(ok)
    return best


def run(cmd: list[str], **kw) -> dict:
    """Run ``cmd`` once: wall and CPU seconds, peak RSS (MiB) and its stdout.

    Peak RSS comes from GNU time, which forks the command from its own small
    process: a child forked straight from this (large) interpreter would report
    our RSS as its own high-water mark. Python children also report VmHWM.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        full = [TIME, "-f", "%e %U %S %M", "-o", tf.name, *cmd] if TIME else cmd
        t0 = time.perf_counter()
        p = subprocess.run(full, stdout=subprocess.PIPE, **kw)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            return {"ok": False, "wall_s": wall, "error": f"exit {p.returncode}"}
        res = {"ok": True, "wall_s": wall, "cpu_s": float("nan"), "rss_mib": float("nan"),
               "out": p.stdout.decode().strip()}
        if TIME:
            e, u, sy, m = tf.read().split()[-4:]
            res.update(wall_s=float(e) if float(e) > 0 else wall, cpu_s=float(u) + float(sy),
                       rss_mib=int(m) / 1024)
    return res


CHILD = """
import json, sys, time
import numpy, pandas, pyarrow
from workbench.syscalls import read_strace
def hwm():
    return next(int(l.split()[1]) / 1024 for l in open("/proc/self/status") if l.startswith("VmHWM:"))
mode = sys.argv[2]
# warm-up on one line: lazy first-use initialisation of pandas/pyarrow counts as import time
read_strace("1  getpid() = 1\\n", native=(mode == "native"), progress=False)
if mode == "baseline":
    print(json.dumps({"rows": 0, "parse_s": 0.0, "hwm_mib": hwm()})); raise SystemExit
t = time.perf_counter()
f = read_strace(sys.argv[1], native=(mode == "native"), progress=False)
dt = time.perf_counter() - t
print(json.dumps({"rows": len(f), "parse_s": dt, "rejects": len(f.attrs["rejects"]), "hwm_mib": hwm(),
                  "joined": int((f["end_timestamp_s"] > f["timestamp_s"]).sum())}))
"""

PEER = """
import json, sys, time
from strace_process_tree import events
t = time.perf_counter()
with open(sys.argv[1]) as fh:
    evs = list(events(fh))  # kept in memory, as a loader's frame is
n = len(evs)
dt = time.perf_counter() - t
hwm = next(int(l.split()[1]) / 1024 for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"rows": n, "parse_s": dt, "hwm_mib": hwm}))
"""


def peer_python() -> str | None:
    """Python of a throwaway venv with strace-process-tree, or None (with the reason printed)."""
    py = PEER_VENV / "bin" / "python"
    try:
        if not py.exists():
            subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True, timeout=300)
        if subprocess.run([str(py), "-c", "import strace_process_tree"], capture_output=True).returncode:
            subprocess.run([str(py), "-m", "pip", "install", "-q", "strace-process-tree"], check=True,
                           timeout=600, capture_output=True)
        return str(py)
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"  strace-process-tree could not be installed in {PEER_VENV}: {exc}")
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=2_000_000, help="input size in lines (default 2,000,000)")
    ap.add_argument("--repeats", type=int, default=REPEATS, help="runs per reader; the fastest is kept (default 3)")
    ap.add_argument("--keep", type=Path, help="keep captures and input in this directory")
    args = ap.parse_args(argv)
    rep = max(1, args.repeats)
    work = args.keep or Path(tempfile.mkdtemp(prefix="wb-strace-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        print(f"strace parse benchmark: captures and input in {work}")
        caps = capture(work)
        data = work / "input.strace"
        n_lines = build_input(caps, args.lines, data)
        size = data.stat().st_size
        print(f"  input: {n_lines:,d} lines, {size / 1e6:.1f} MB ({size / n_lines:.0f} B/line)\n", flush=True)

        from workbench.syscalls import native_available

        env = dict(os.environ)
        env.pop("WORKBENCH_NO_NATIVE", None)
        results: dict[str, dict] = {}
        results["cat"] = best_of(["cat", str(data)], rep, env=env)
        child = ["-c", textwrap.dedent(CHILD)]
        results["baseline (pandas+pyarrow imported)"] = best_of([PY, *child, str(data), "baseline"], rep, env=env)
        if native_available():
            results["read_strace native"] = best_of([PY, *child, str(data), "native"], rep,
                                                    env={**env, "WORKBENCH_THREADS": "1"})
            results["read_strace native, every core"] = best_of([PY, *child, str(data), "native"], rep,
                                                            env={k: v for k, v in env.items()
                                                                 if k != "WORKBENCH_THREADS"})
        else:
            print("  native scanner not built: skipped")
        results["read_strace reference"] = best_of([PY, *child, str(data), "reference"], rep, env=env)
        peer = peer_python()
        if peer:
            results["strace-process-tree 1.5.3"] = best_of([peer, "-c", textwrap.dedent(PEER), str(data)], rep)

        print(f"{'reader':36s} {'wall s':>8s} {'cpu s':>8s} {'lines/s':>12s} {'parse s':>8s} "
              f"{'parse lines/s':>14s} {'peak RSS MiB':>13s}  rows")
        for name, r in results.items():
            if not r["ok"]:
                print(f"{name:36s} failed: {r['error']}")
                continue
            info = json.loads(r["out"]) if r["out"].startswith("{") else {}
            r.update(info)
            if "hwm_mib" in info:  # the process's own VmHWM: exact for Python children
                r["rss_mib"] = info["hwm_mib"]
            lps = n_lines / r["wall_s"]
            ps = info.get("parse_s")
            pl = f"{n_lines / ps:14,.0f}" if ps else f"{'':14s}"
            print(f"{name:36s} {r['wall_s']:8.2f} {r['cpu_s']:8.2f} {lps:12,.0f} "
                  f"{(ps or 0):8.2f} {pl} {r['rss_mib']:13.0f}  {info.get('rows', '')}")
        nat = results.get("read_strace native", {})
        nat2 = results.get("read_strace native, every core", {})
        ref = results.get("read_strace reference", {})
        spt = results.get("strace-process-tree 1.5.3", {})
        base = results["baseline (pandas+pyarrow imported)"]
        print("\nratios measured in this run (wall time of the whole process; parse-only in brackets):")
        if nat.get("ok") and spt.get("ok"):
            print(f"  native vs strace-process-tree lines/s: {spt['wall_s'] / nat['wall_s']:6.1f}x "
                  f"[{spt['parse_s'] / nat['parse_s']:.1f}x]   (goal >= 10x)")
        if nat2.get("ok") and spt.get("ok"):
            print(f"  native every core vs strace-process-tree: {spt['wall_s'] / nat2['wall_s']:4.1f}x "
                  f"[{spt['parse_s'] / nat2['parse_s']:.1f}x]   (goal >= 20x)")
        if nat.get("ok") and nat2.get("ok"):
            from workbench.syscalls._read import cores_available

            print(f"  lines/s into a frame, 1 thread vs {cores_available()} core(s): "
                  f"{n_lines / nat['parse_s'] / 1e6:.2f} vs {n_lines / nat2['parse_s'] / 1e6:.2f} M "
                  f"(x{nat['parse_s'] / nat2['parse_s']:.2f})   (goal >= 3 M lines/s on 2 cores; "
                  f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())})")
        if nat.get("ok") and ref.get("ok"):
            print(f"  reference slower than native by:       {ref['wall_s'] / nat['wall_s']:6.1f}x "
                  f"[{ref['parse_s'] / nat['parse_s']:.1f}x]   (goal <= 10x)")
        if nat.get("ok"):
            extra = (nat["rss_mib"] - base["rss_mib"]) * 2**20
            print(f"  native peak RSS beyond the baseline:   {extra / size:6.2f}x the input "
                  f"({extra / 2**20:.0f} MiB for {size / 2**20:.0f} MiB)   (goal < 2x)")
            print(f"  native vs cat wall time:               {nat['wall_s'] / results['cat']['wall_s']:6.1f}x")
        if ref.get("ok"):
            extra = (ref["rss_mib"] - base["rss_mib"]) * 2**20
            print(f"  reference peak RSS beyond the baseline:{extra / size:6.2f}x the input")
        if nat.get("ok") and ref.get("ok") and nat.get("rows") != ref.get("rows"):
            print("  WARNING: native and reference row counts differ")
        print("  rows, rejects, joined split calls: "
              + "; ".join(f"{k[12:]} {v.get('rows')}/{v.get('rejects')}/{v.get('joined')}"
                          for k, v in results.items() if "read_strace" in k and v.get("ok")))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
