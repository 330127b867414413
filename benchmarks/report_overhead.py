"""How much the report runner adds on top of executing a notebook.

Baseline: nbclient executing the notebook in memory (kernel start + cells).
Measured in the same run: `workbench.report.execute_notebook` (papermill,
findings read-back, self-contained HTML) on a fresh kernel each time, and on
one warm kernel reset between runs (what ``workbench report`` does). Prints
medians of N runs and the ratios.
"""
from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from workbench.report import execute_notebook  # noqa: E402
from workbench.report.kernels import WarmKernel, imported_modules  # noqa: E402


def make(path: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    p = nbformat.v4.new_code_cell("n = 200  # points")
    p.metadata["tags"] = ["parameters"]
    nb.cells = [
        nbformat.v4.new_markdown_cell("# bench"), p,
        nbformat.v4.new_code_cell("import numpy as np, matplotlib.pyplot as plt\n"
                                  "fig, ax = plt.subplots(); ax.plot(np.random.default_rng(0).normal(size=n)); plt.show()"),
        nbformat.v4.new_code_cell("from workbench import record_finding\nrecord_finding('n', n)"),
    ]
    nbformat.write(nb, str(path))
    return path


def main(repeats: int = 5) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = make(Path(tmp) / "01_bench.ipynb")
        base, runner, warm = [], [], []
        t = time.perf_counter()
        kernel = WarmKernel(tmp, imported_modules([path]), env={"WORKBENCH_STATIC": "1"})
        start = time.perf_counter() - t
        try:
            for _ in range(repeats):
                t = time.perf_counter()
                NotebookClient(nbformat.read(str(path), as_version=4), kernel_name="python3").execute()
                base.append(time.perf_counter() - t)
                t = time.perf_counter()
                res = execute_notebook(path, out_dir=Path(tmp) / "out", cwd=tmp)
                runner.append(time.perf_counter() - t)
                assert res.status == "ok", res.error
                t = time.perf_counter()
                res = execute_notebook(path, out_dir=Path(tmp) / "warm", cwd=tmp, kernel=kernel)
                warm.append(time.perf_counter() - t)
                assert res.status == "ok", res.error
        finally:
            kernel.shutdown()
        b, r, w = statistics.median(base), statistics.median(runner), statistics.median(warm)
        print(f"nbclient execute (baseline)        : median {b:.2f} s over {repeats}")
        print(f"workbench execute_notebook, cold   : median {r:.2f} s over {repeats}")
        print(f"workbench execute_notebook, warm   : median {w:.2f} s over {repeats} "
              f"(+ {start:.2f} s once to start and warm the kernel)")
        print(f"ratio cold runner / baseline       : {r / b:.2f}x  (overhead {r - b:+.2f} s per notebook)")
        print(f"ratio warm runner / baseline       : {w / b:.2f}x  ({w - b:+.2f} s per notebook)")


if __name__ == "__main__":
    main()
