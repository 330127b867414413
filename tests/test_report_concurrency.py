"""Two report runs into one folder: neither loses its results, and no half-written file is left."""
from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

from workbench.report import run_report

from .conftest import make_notebook


def _run(notebook: str, out: str) -> None:
    run_report([Path(notebook)], out_dir=out, echo=False)


def test_two_runs_of_different_notebooks_into_one_folder_keep_both(tmp_path: Path) -> None:
    a = make_notebook(tmp_path / "nb" / "01_a.ipynb", "x = 1  # a number",
                      ["from workbench import record_finding\nimport time\ntime.sleep(1)\nrecord_finding('a', x)"])
    b = make_notebook(tmp_path / "nb" / "02_b.ipynb", "y = 2  # a number",
                      ["from workbench import record_finding\nrecord_finding('b', y)"])
    out = tmp_path / "out"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_run, args=(str(nb), str(out))) for nb in (a, b)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=600)
        assert p.exitcode == 0
    report = json.loads((out / "report.json").read_text())
    assert sorted(n["name"] for n in report["notebooks"]) == ["01_a", "02_b"]
    findings = json.loads((out / "findings.json").read_text())["findings"]
    assert findings == {"01_a": {"a": 1}, "02_b": {"b": 2}}
    index = (out / "index.html").read_text()
    assert 'href="01_a.html"' in index and 'href="02_b.html"' in index
    assert [p.name for p in out.iterdir() if p.name.endswith(".tmp")] == []


def test_a_later_run_keeps_earlier_results_only_while_their_pages_exist(tmp_path: Path) -> None:
    a = make_notebook(tmp_path / "nb" / "01_a.ipynb", "x = 1  # a number",
                      ["from workbench import record_finding\nrecord_finding('a', x)"])
    b = make_notebook(tmp_path / "nb" / "02_b.ipynb", "y = 2  # a number",
                      ["from workbench import record_finding\nrecord_finding('b', y)"])
    out = tmp_path / "out"
    run_report([a], out_dir=out, echo=False)
    run_report([b], out_dir=out, echo=False)
    assert sorted(json.loads((out / "findings.json").read_text())["findings"]) == ["01_a", "02_b"]
    (out / "01_a.html").unlink()
    run_report([b], out_dir=out, echo=False)
    assert sorted(json.loads((out / "findings.json").read_text())["findings"]) == ["02_b"]


_WATCH = """
import json, sys, threading
from pathlib import Path

from workbench.report import kernels, runner

STACK = ("jupyter_client", "jupyter_core", "ipykernel", "IPython", "papermill", "nbclient", "nbconvert",
         "nbformat", "pygments", "mistune", "bs4", "jinja2")
unlocked = []


class Owned:  # the report's lock, and which thread holds it
    def __init__(self):
        self.lock, self.owner = threading.Lock(), None

    def __enter__(self):
        self.lock.acquire()
        self.owner = threading.get_ident()

    def __exit__(self, *exc):
        self.owner = None
        self.lock.release()


kernels.STACK_IMPORT = runner.STACK_IMPORT = owned = Owned()


class Watch:  # sees every module imported for the first time, in the thread that imports it
    def find_spec(self, name, path=None, target=None):
        if (threading.current_thread() is not threading.main_thread() and name.split(".")[0] in STACK
                and owned.owner != threading.get_ident()):
            unlocked.append(name)
        return None


sys.meta_path.insert(0, Watch())
results = runner.run_report([Path(p) for p in sys.argv[2:]], out_dir=sys.argv[1], jobs=2, echo=False)
print(json.dumps({"status": [r.status for r in results], "unlocked": unlocked}))
"""


def test_a_warm_run_s_threads_import_the_notebook_stack_one_at_a_time(tmp_path: Path) -> None:
    """Threads importing packages that import each other can see each other's half-made modules."""
    import subprocess
    import sys

    a = make_notebook(tmp_path / "nb" / "01_a.ipynb", "x = 1  # a number",
                      ["from workbench import record_finding\nrecord_finding('a', x)"])
    b = make_notebook(tmp_path / "nb" / "02_b.ipynb", "y = 2  # a number",
                      ["from workbench import record_finding\nrecord_finding('b', y)"])
    out = subprocess.run([sys.executable, "-c", _WATCH, str(tmp_path / "out"), str(a), str(b)],
                         capture_output=True, text=True, timeout=600, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["status"] == ["ok", "ok"]
    assert got["unlocked"] == []
