"""Warm kernels: one kernel serves several notebooks, each starting from what a fresh kernel offers."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from workbench.report import run_report
from workbench.report.html import write_index
from workbench.report.kernels import imported_modules
from workbench.report.results import NotebookResult
from workbench.report.runner import _longest_first, default_jobs

from .conftest import make_notebook

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent

#: what a notebook can observe of the kernel it runs on
PROBE = """\
import os, sys
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from workbench import record_finding
record_finding('names', sorted(k for k in globals() if not k.startswith('_')))
record_finding('precision', pd.get_option('display.precision'))
record_finding('np_precision', np.get_printoptions()['precision'])
record_finding('env', os.environ.get('WB_LEAK'))
record_finding('static', os.environ.get('WORKBENCH_STATIC'))
record_finding('cwd', os.getcwd())
record_finding('figures', plt.get_fignums())
record_finding('linewidth', float(plt.rcParams['lines.linewidth']))
record_finding('count', get_ipython().execution_count)
record_finding('path_added', '/nonexistent-wb' in sys.path)
record_finding('parameter', p)
"""

#: changes every kind of process state the reset restores
LITTER = """\
import os, sys
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
secret = 42
pd.set_option('display.precision', 2)
np.set_printoptions(precision=3)
os.environ['WB_LEAK'] = 'yes'
sys.path.append('/nonexistent-wb')
plt.rcParams['lines.linewidth'] = 7.0
fig, ax = plt.subplots()  # left open
os.chdir('/')
"""


def _probe_pair(folder: Path) -> list[Path]:
    return [make_notebook(folder / "01_litter.ipynb", "p = 0  # unused", [LITTER]),
            make_notebook(folder / "02_probe.ipynb", "p = 1  # echoed back", [PROBE])]


def _findings(out: Path) -> dict:
    return json.loads((out / "findings.json").read_text())["findings"]


def test_a_notebook_cannot_see_what_the_previous_one_left_in_the_kernel(tmp_path: Path) -> None:
    litter, probe = _probe_pair(tmp_path / "nb")
    warm = run_report([litter, probe], {"p": "5"}, out_dir=tmp_path / "warm", jobs=1, echo=False)
    cold = run_report([probe], {"p": "5"}, out_dir=tmp_path / "cold", jobs=1, echo=False, warm=False)
    assert [r.status for r in warm] == ["ok", "ok"], [r.error for r in warm]
    w, c = warm[1], cold[0]
    # the probe really ran second on the same kernel as the notebook that littered it
    assert w.timing["kernel"] == "warm" and w.timing["kernel_notebook"] == 2 and w.timing["warm_up_s"] == 0.0
    assert warm[0].timing["warm_up_s"] > 0
    found = {k: f.value for k, f in w.findings.items()}
    assert "secret" not in found["names"]
    assert found == {k: f.value for k, f in c.findings.items()}  # exactly what a fresh kernel shows
    assert found["parameter"] == 5  # parameters injected as papermill does (the cell count matched above)
    assert found["cwd"] == str(tmp_path) and found["env"] is None and found["figures"] == []
    assert found["static"] == "1"


def _outputs(ipynb: Path) -> list[tuple[int, str, str]]:
    """Every output of every code cell, with the ids pandas and Python make up per process masked."""
    nb = json.loads(ipynb.read_text())
    out = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        for o in cell.get("outputs", []):
            data = o.get("data") or {"stream": o.get("text", ""), "error": o.get("evalue", "")}
            for kind, value in sorted(data.items()):
                text = "".join(value) if isinstance(value, list) else value if isinstance(value, str) \
                    else json.dumps(value, sort_keys=True)
                text = re.sub(r"T_[0-9a-f]{5}", "T_id", re.sub(r"0x[0-9a-f]+", "0xADDR", text))
                out.append((cell.get("execution_count"), kind, text))
    return out


def test_a_bundled_notebook_gives_the_same_findings_and_outputs_warm_as_cold(tmp_path: Path) -> None:
    nb = ROOT / "notebooks" / "02_low_qps_nagle.ipynb"
    litter = make_notebook(tmp_path / "nb" / "00_litter.ipynb", "p = 0  # unused", [LITTER])
    warm = run_report([litter, nb], out_dir=tmp_path / "warm", jobs=1, echo=False)
    cold = run_report([nb], out_dir=tmp_path / "cold", jobs=1, echo=False, warm=False)
    assert warm[1].status == cold[0].status == "ok", (warm[1].error, cold[0].error)
    assert warm[1].timing["kernel_notebook"] == 2
    assert _findings(tmp_path / "warm")[nb.stem] == _findings(tmp_path / "cold")[nb.stem]
    w, c = _outputs(tmp_path / "warm" / nb.name), _outputs(tmp_path / "cold" / nb.name)
    assert len(w) == len(c) and w == c  # figures byte for byte, tables, text, execution counts


def test_a_failed_notebook_hands_the_next_one_a_new_kernel(tiny_notebooks: Path, tmp_path: Path) -> None:
    nbs = [tiny_notebooks / "02_fails.ipynb", tiny_notebooks / "01_ok.ipynb"]
    results = run_report(nbs, out_dir=tmp_path / "out", jobs=1, echo=False)
    assert [r.status for r in results] == ["failed", "ok"]
    ok = results[1]
    assert ok.findings["double"].value == 4
    assert ok.timing["kernel_notebook"] == 1 and ok.timing["warm_up_s"] > 0


def test_two_jobs_report_where_the_time_went(tiny_notebooks: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    ok = tiny_notebooks / "01_ok.ipynb"
    second = make_notebook(tiny_notebooks / "03_more.ipynb", "y = 3  # a number",
                           ["from workbench import record_finding\nrecord_finding('y', y)"])
    results = run_report([ok, second], out_dir=out, jobs=2, echo=False)
    assert [r.status for r in results] == ["ok", "ok"]
    assert _findings(out) == {"01_ok": {"double": 4, "label": "a"}, "03_more": {"y": 3}}
    report = json.loads((out / "report.json").read_text())
    assert report["run"]["jobs"] == 2 and report["run"]["kernels"] == "warm"
    assert report["run"]["wall_s"] > 0
    for entry in report["notebooks"]:
        t = entry["timing"]
        assert t["kernel"] == "warm" and t["cells_s"] > 0 and t["render_s"] > 0
        assert t["slowest_cells"] and t["slowest_cells"][0]["seconds"] <= t["cells_s"] + 1e-6
        assert t["host"] == report["run"]["host"] and t["jobs"] == 2 and t["job"] in (1, 2)
    # two lanes, two kernels: each notebook waited for its own kernel's start
    assert all(entry["timing"]["warm_up_s"] > 0 for entry in report["notebooks"])
    index = (out / "index.html").read_text()
    assert "warm kernel started and imports loaded" in index and "2 notebook(s) at once" in index
    assert [p.name for p in out.iterdir() if p.name.endswith(".tmp")] == []


def test_cold_kernels_still_run_one_fresh_kernel_per_notebook(tiny_notebooks: Path, tmp_path: Path) -> None:
    results = run_report([tiny_notebooks / "01_ok.ipynb"], out_dir=tmp_path / "out", jobs=2, echo=False,
                         warm=False)
    assert results[0].status == "ok" and results[0].timing["kernel"] == "cold"
    assert results[0].timing["kernel_start_s"] > 0


def test_longest_notebooks_of_the_previous_run_start_first(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    plan = [(f"/nb/{n}.ipynb", {}, str(out), False, 60.0) for n in ("01_a", "02_b", "03_c", "04_new")]
    assert _longest_first(plan, out) == plan  # no earlier report: as planned
    write_index([NotebookResult(name=n, title=n, status="ok", seconds=s, parameters={})
                 for n, s in (("01_a", 3.0), ("02_b", 9.0), ("03_c", 5.0))], out)
    assert [Path(p[0]).stem for p in _longest_first(plan, out)] == ["04_new", "02_b", "03_c", "01_a"]


def test_warm_up_imports_what_the_notebooks_import(tmp_path: Path) -> None:
    nb = make_notebook(tmp_path / "01_x.ipynb", "a = 1  # a",
                       ["import json\nfrom workbench.lab import actors\n%matplotlib inline",
                        "from workbench.stats import compare\nfrom . import nothing"])
    mods = imported_modules([nb])
    assert {"json", "workbench.lab", "?workbench.lab.actors", "workbench.stats", "?workbench.stats.compare",
            "numpy", "pandas", "matplotlib.pyplot"} <= set(mods)
    assert len(mods) == len(set(mods))


def test_jobs_default_to_the_cores_this_process_may_use() -> None:
    assert default_jobs() == len(os.sched_getaffinity(0))
