"""Wall time of ``workbench report`` on the bundled notebooks, against the floor of trivial notebooks.

Both are whole ``workbench report --jobs N`` processes run in this one run:

- the report: every notebook in ``notebooks/`` on its bundled data;
- the floor: as many trivial notebooks (import numpy, pandas, matplotlib and
  workbench, draw one figure, record one finding), so kernel start, imports and
  rendering are measured without the analyses.

Prints the median of the repeats for each, their difference (what the analyses
cost), the ratio, and each notebook's own time from ``report.json``. Target:
the five bundled notebooks in 30 s or less with ``--jobs 2`` on a 2-core machine.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def timed_report(notebooks: Path | None, out: Path, jobs: int) -> tuple[float, dict[str, float]]:
    """Wall seconds of one ``workbench report`` process and each notebook's own seconds."""
    cmd = [str(WORKBENCH), "report", "--out", str(out), "--jobs", str(jobs)]
    if notebooks is not None:
        cmd += ["--notebooks", str(notebooks)]
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ})
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"report failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    report = json.loads((out / "report.json").read_text())
    return wall, {r["name"]: float(r["seconds"]) for r in report["notebooks"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    n = len(list((ROOT / "notebooks").glob("[0-9]*.ipynb")))
    with tempfile.TemporaryDirectory(prefix="workbench-report-speed-") as tmp:
        floor_nbs = trivial_notebooks(Path(tmp) / "trivial", n)
        walls, floors, per_nb = [], [], {}
        for r in range(args.repeats):
            fw, _ = timed_report(floor_nbs, Path(tmp) / f"floor{r}", args.jobs)
            w, per_nb = timed_report(None, Path(tmp) / f"report{r}", args.jobs)
            floors.append(fw)
            walls.append(w)
    w, f = statistics.median(walls), statistics.median(floors)
    print(f"machine: {os.cpu_count()} CPUs; --jobs {args.jobs}; {n} notebooks; median of {args.repeats}")
    print(f"floor ({n} trivial notebooks)  : {f:6.1f} s   (min {min(floors):.1f}, max {max(floors):.1f})")
    print(f"bundled report                : {w:6.1f} s   (min {min(walls):.1f}, max {max(walls):.1f})   target <= 30 s")
    print(f"analyses (report - floor)     : {w - f:6.1f} s;  ratio report / floor {w / f:.2f}x")
    for name, s in per_nb.items():
        print(f"  {name:<32} {s:5.1f} s (last run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
