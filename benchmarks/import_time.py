"""How long ``import workbench`` takes, against ``import pandas`` measured in the same run.

Runnable alone: ``python benchmarks/import_time.py [--repeats N]``.

Every measurement is a fresh interpreter (``sys.executable``), so nothing is
already imported. For each of ``pass`` (interpreter start-up alone),
``import workbench`` and ``import pandas``, run in turn ``--repeats`` times
(interleaved, so drift on a shared machine hits all three alike):

1. the wall time of ``python -c STATEMENT``;
2. the cumulative import time of the top-level module as ``python -X importtime``
   reports it (the import alone, without interpreter start-up).

Prints the medians and the ratio workbench / pandas for both, then which heavy
modules ``import workbench`` pulled in (pandas, numpy, scipy, nbformat,
papermill, dask, ...): the package imports them on first use, so the list must
be empty. Time is not asserted: the machine is shared and noisy.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
#: modules that ``import workbench`` must not import (they load on first use)
HEAVY = ("pandas", "numpy", "scipy", "nbformat", "nbconvert", "papermill", "dask", "distributed",
         "matplotlib", "pyarrow", "IPython", "ruptures", "hdrh", "tqdm")
STATEMENTS = {"start-up": "pass", "workbench": "import workbench", "pandas": "import pandas"}


def wall_time_s(statement: str) -> float:
    """Wall time of one fresh interpreter running ``statement``."""
    t0 = time.perf_counter()
    subprocess.run([PY, "-c", statement], cwd=ROOT, check=True)
    return time.perf_counter() - t0


def import_time_s(module: str) -> float:
    """Cumulative import time of ``module`` in a fresh interpreter, from ``-X importtime`` (s)."""
    out = subprocess.run([PY, "-X", "importtime", "-c", f"import {module}"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stderr
    for line in out.splitlines():
        # "import time: self [us] | cumulative | imported package"; top-level names are not indented
        parts = line.split("|")
        if len(parts) == 3 and parts[2].rstrip() == f" {module}":
            return int(parts[1]) / 1e6
    raise RuntimeError(f"python -X importtime printed no line for {module!r}:\n{out[-2000:]}")


def heavy_modules(statement: str = "import workbench") -> list[str]:
    """The modules of :data:`HEAVY` loaded after ``statement`` in a fresh interpreter."""
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    out = subprocess.run([PY, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return list(json.loads(out.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7, help="fresh interpreters per statement (default 7)")
    args = ap.parse_args(argv)
    wall: dict[str, list[float]] = {k: [] for k in STATEMENTS}
    imp: dict[str, list[float]] = {"workbench": [], "pandas": []}
    for _ in range(max(1, args.repeats)):
        for name, statement in STATEMENTS.items():
            wall[name].append(wall_time_s(statement))
        for name in imp:
            imp[name].append(import_time_s(name))
    w = {k: statistics.median(v) for k, v in wall.items()}
    i = {k: statistics.median(v) for k, v in imp.items()}
    n = max(1, args.repeats)
    print(f"fresh interpreters, median of {n} (python {sys.version.split()[0]}, {PY})")
    print(f"python -c 'pass'             : {w['start-up'] * 1e3:8.1f} ms wall")
    print(f"python -c 'import workbench' : {w['workbench'] * 1e3:8.1f} ms wall, "
          f"{i['workbench'] * 1e3:8.1f} ms import (-X importtime)")
    print(f"python -c 'import pandas'    : {w['pandas'] * 1e3:8.1f} ms wall, "
          f"{i['pandas'] * 1e3:8.1f} ms import (-X importtime)")
    above = {k: max(w[k] - w["start-up"], 0.0) for k in ("workbench", "pandas")}
    print(f"ratio workbench / pandas     : {w['workbench'] / w['pandas']:.2f}x wall, "
          f"{above['workbench'] / above['pandas']:.2f}x wall above start-up, "
          f"{i['workbench'] / i['pandas']:.3f}x import")
    heavy = heavy_modules()
    if heavy:
        print(f"FAIL: import workbench pulled in heavy modules: {', '.join(heavy)} (they must load on first use)")
        return 1
    print(f"heavy modules pulled in by import workbench: none (checked {', '.join(HEAVY)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
