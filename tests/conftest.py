"""Shared fixtures: tiny notebooks built on the fly for the runner and hygiene tests."""
from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from hypothesis import settings

# property tests run on busy machines (CI runs the suite beside CPU hogs): no per-example deadline, anywhere
settings.register_profile("workbench", deadline=None)
settings.load_profile("workbench")

# every figure a plot_* function draws in the suite (notebook kernels inherit this) is checked for
# overlapping labels, labels leaving the figure and legends over data: a FigureLayoutError fails the test
os.environ["WORKBENCH_CHECK_FIGURES"] = "1"

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def make_notebook(path: Path, params_src: str, cells: list[str], title: str = "Tiny") -> Path:
    """Write a clean notebook: a title, a tagged parameters cell, then code cells."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    p = nbformat.v4.new_code_cell(params_src)
    p.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}"), p] + [nbformat.v4.new_code_cell(c) for c in cells]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


@pytest.fixture
def tiny_notebooks(tmp_path: Path) -> Path:
    """A folder with two notebooks: one that succeeds and one that can be told to fail."""
    d = tmp_path / "notebooks"
    make_notebook(
        d / "01_ok.ipynb",
        "x = 2  # a number to double\nlabel = 'a'  # a label, text",
        [
            "from workbench import record_finding\nimport matplotlib.pyplot as plt\n"
            "fig, ax = plt.subplots(); ax.plot([1, 2, x]); plt.show()",
            "record_finding('double', x * 2, unit='ms', explain='twice x')\n"
            "record_finding('label', label)",
        ],
        title="A notebook that works",
    )
    make_notebook(
        d / "02_fails.ipynb",
        "fail = True  # raise on purpose in the third cell",
        [
            "from workbench import record_finding\nrecord_finding('before_failure', 1)",
            "if fail:\n    raise RuntimeError('asked to fail')",
            "record_finding('after_failure', 2)",
        ],
        title="A notebook that fails",
    )
    return d


def run_notebook(notebook: Path, tmp_path: Path, params: dict | None = None) -> tuple[dict, dict, str]:
    """Execute a notebook; return (finding values, finding explanations, the Markdown it displayed)."""
    import json

    from workbench.report.runner import execute_notebook

    res = execute_notebook(notebook, params or {}, out_dir=tmp_path, render=False)
    assert res.status == "ok", res.error
    assert res.ipynb is not None
    nb = json.loads(Path(res.ipynb).read_text())
    text = "\n".join("".join(o.get("data", {}).get("text/markdown", "")) for c in nb["cells"]
                     for o in c.get("outputs", []))
    return ({k: v.value for k, v in res.findings.items()}, {k: v.explain or "" for k, v in res.findings.items()}, text)
