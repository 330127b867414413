"""Wall time of ``workbench report`` on the bundled notebooks, against the floor of trivial notebooks.

All are whole ``workbench report --jobs N`` processes, interleaved in this one run:

- the report: the five investigation notebooks (01–05; the target's scope),
  and every notebook in ``notebooks/`` (with the triage notebook), on their bundled data, with warm
  kernels (the default) and with ``--cold-kernels`` (a fresh kernel per notebook:
  how the report ran before warm kernels);
- the floor: as many trivial notebooks (import numpy, pandas, matplotlib and
  workbench, draw one figure, record one finding), so kernel start, imports and
  rendering are measured without the analyses — warm and cold too.

Prints the median of the repeats for each, the report against its floor, warm
against cold, the CPU seconds of each whole run (the report process, its
workers and kernels: less sensitive to a shared machine's load than wall time;
CPU / jobs is what the wall time would approach with the cores to itself), and
where each notebook's time went (``timing`` of ``report.json``:
kernel, cells, page). Target: the five bundled notebooks in 30 s or less with
``--jobs 2`` on a 2-core machine. On a shared machine, read the ratios: the
absolute times move with the load (printed as the 1-minute load average).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORKBENCH = Path(sys.executable).with_name("workbench")


def trivial_notebooks(folder: Path, n: int) -> Path:
    """``n`` notebooks that import the notebooks' stack, draw one figure and record one finding."""
    import nbformat

    folder.mkdir(parents=True, exist_ok=True)
    for k in range(n):
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nb.metadata["language_info"] = {"name": "python"}
        p = nbformat.v4.new_code_cell("n = 100  # points drawn")
        p.metadata["tags"] = ["parameters"]
        nb.cells = [
            nbformat.v4.new_markdown_cell(f"# Trivial {k}"), p,
            nbformat.v4.new_code_cell(
                "import matplotlib.pyplot as plt\nimport numpy as np\nimport pandas as pd\n"
                "from workbench import record_finding\n"
                "fig, ax = plt.subplots(); ax.plot(np.arange(n)); plt.show()\n"
                "record_finding('rows', len(pd.DataFrame({'x': np.arange(n)})))"),
        ]
        nbformat.write(nb, str(folder / f"{k:02d}_trivial.ipynb"))
    return folder


def timed_report(notebooks: Path | None, out: Path, jobs: int, cold: bool = False, names: list[str] | None = None
                 ) -> tuple[float, float, dict[str, dict[str, Any]]]:
    """Wall seconds and CPU seconds (user + system, with its workers and kernels) of one ``workbench report``
    process (``names``: only these notebooks), and each notebook's seconds and timing."""
    cmd = [str(WORKBENCH), "report", *(names or []), "--out", str(out), "--jobs", str(jobs)]
    if notebooks is not None:
        cmd += ["--notebooks", str(notebooks)]
    if cold:
        cmd.append("--cold-kernels")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ})
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"report failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    report = json.loads((out / "report.json").read_text())
    return wall, cpu, {r["name"]: {"seconds": float(r["seconds"]), **(r.get("timing") or {})}
                       for r in report["notebooks"]}


def _line(label: str, xs: list[float], extra: str = "") -> None:
    print(f"{label:<34}: {statistics.median(xs):6.1f} s   (min {min(xs):.1f}, max {max(xs):.1f}){extra}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--warm-only", action="store_true", help="skip the cold-kernel runs (half the time)")
    args = ap.parse_args(argv)
    every = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9]*.ipynb"))
    five = [name[:2] for name in every if name[:2] in ("01", "02", "03", "04", "05")]
    n = len(five)
    modes = [False] if args.warm_only else [False, True]
    walls: dict[tuple[str, bool], list[float]] = {}
    cpus: dict[tuple[str, bool], list[float]] = {}
    per_nb: dict[bool, dict[str, dict[str, Any]]] = {}
    loads = []
    with tempfile.TemporaryDirectory(prefix="workbench-report-speed-") as tmp:
        floor_nbs = trivial_notebooks(Path(tmp) / "trivial", n)
        for _ in range(args.repeats):
            for cold in modes:  # interleaved, so a change in the machine's load hits both alike
                loads.append(os.getloadavg()[0])
                # one folder per kind and mode, as `make report` reuses reports/: from the second repeat on,
                # the longest notebooks of the previous run start first
                fw, fc, _ = timed_report(floor_nbs, Path(tmp) / f"floor-{cold}", args.jobs, cold)
                w, c, per_nb[cold] = timed_report(None, Path(tmp) / f"report-{cold}", args.jobs, cold, five)
                aw, _, _ = timed_report(None, Path(tmp) / f"all-{cold}", args.jobs, cold)
                walls.setdefault(("all", cold), []).append(aw)
                walls.setdefault(("floor", cold), []).append(fw)
                walls.setdefault(("report", cold), []).append(w)
                cpus.setdefault(("floor", cold), []).append(fc)
                cpus.setdefault(("report", cold), []).append(c)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"machine: {cores} cores usable; repeats into one folder per mode (runs after the first start the "
          f"longest notebooks first); load average {min(loads):.1f}-{max(loads):.1f} during the run; "
          f"--jobs {args.jobs}; the {n} investigation notebooks (01-05), then all {len(every)}; "
          f"median of {args.repeats}")
    for cold in modes:
        kind = "cold kernels" if cold else "warm kernels"
        f, w = walls[("floor", cold)], walls[("report", cold)]
        fc, wc = statistics.median(cpus[("floor", cold)]), statistics.median(cpus[("report", cold)])
        _line(f"floor, {n} trivial notebooks, {kind}", f, f"   CPU {fc:.1f} s")
        _line(f"five investigations, {kind}", w, f"   CPU {wc:.1f} s (/{args.jobs} = {wc / args.jobs:.1f} s)"
              + ("   target <= 30 s" if not cold else ""))
        print(f"{'':<34}  report / floor {statistics.median(w) / statistics.median(f):.2f}x; "
              f"analyses (report - floor) {statistics.median(w) - statistics.median(f):.1f} s; "
              f"against the 30 s target: {statistics.median(w) / 30:.2f}x")
        _line(f"every notebook ({len(every)}), {kind}", walls[("all", cold)])
    if not args.warm_only:
        ratio = statistics.median(walls[("report", True)]) / statistics.median(walls[("report", False)])
        fratio = statistics.median(walls[("floor", True)]) / statistics.median(walls[("floor", False)])
        cratio = statistics.median(cpus[("report", True)]) / statistics.median(cpus[("report", False)])
        cfratio = statistics.median(cpus[("floor", True)]) / statistics.median(cpus[("floor", False)])
        print(f"cold / warm: report {ratio:.2f}x wall, {cratio:.2f}x CPU; floor {fratio:.2f}x wall, {cfratio:.2f}x CPU")
    for cold in modes:
        print(f"per notebook, {'cold' if cold else 'warm'} kernels (last run): kernel = start (+ warm-up, reset); "
              "page apart")
        for name, t in per_nb[cold].items():
            kernel = (t.get("warm_up_s", 0.0) + t.get("reset_s", 0.0)) if t.get("kernel") == "warm" \
                else t.get("kernel_start_s", 0.0)
            print(f"  {name:<30} {t['seconds']:5.1f} s  kernel {kernel:4.1f} s  cells {t.get('cells_s', 0.0):5.1f} s"
                  f"  page {t.get('render_s', 0.0):4.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
