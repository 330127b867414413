"""Packaging stays consistent: conda environment matches pyproject, console script exists."""
from __future__ import annotations

import re
import tomllib

import pytest

from workbench.cli import build_parser

from .conftest import ROOT


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[ ;]", req, maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_installs_every_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(r) for r in project["dependencies"]}
    wanted |= {_name(r) for r in project["optional-dependencies"]["dev"]}
    env = (ROOT / "environment.yml").read_text()
    listed = {_name(m) for m in re.findall(r"^\s+-\s+([A-Za-z0-9_.\-]+[^\n]*)$", env, flags=re.M)}
    missing = wanted - listed
    assert not missing, f"environment.yml lacks {sorted(missing)}"


def test_dependencies_have_lower_bounds_not_pins() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = project["dependencies"] + [r for v in project["optional-dependencies"].values() for r in v]
    for r in reqs:
        assert ">=" in r and "==" not in r, f"{r}: pin a lower bound, not an exact version"


def test_console_script_has_the_documented_commands() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"report", "list", "lab"} <= set(sub.choices)


def test_every_public_name_resolves() -> None:
    import workbench

    for name in workbench.__all__:
        assert getattr(workbench, name) is not None, name
    for mod in ("stats", "syscalls", "latency", "counters", "models", "tables", "cache", "schema", "report"):
        assert getattr(workbench, mod).__name__ == f"workbench.{mod}"


def test_old_module_paths_warn_and_give_the_same_objects() -> None:
    import importlib
    import sys

    from workbench import _moved

    for old, (new, *_) in _moved.MOVED.items():
        sys.modules.pop(old, None)
        with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
            alias = importlib.import_module(old)
        target = importlib.import_module(new)
        public = [n for n in dir(target) if not n.startswith("_")]
        assert public and all(getattr(alias, n) is getattr(target, n) for n in public)
    from workbench.latency_series import simulate_overnight
    from workbench.sim.overnight import simulate_overnight as new_home
    from workbench.stalls import wilson_interval
    from workbench.stats import wilson_interval as shared

    assert simulate_overnight is new_home and wilson_interval is shared


def test_import_workbench_stays_light() -> None:
    """``import workbench`` loads no heavy dependency: each loads on first use (fresh interpreter)."""
    import json
    import subprocess
    import sys

    heavy = ("pandas", "numpy", "scipy", "nbformat", "nbconvert", "papermill", "dask", "distributed",
             "matplotlib", "pyarrow", "IPython", "ruptures", "hdrh", "tqdm")
    code = ("import sys, json, workbench, workbench.errors, workbench.findings, workbench.paths\n"
            f"print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
    # and the first use does load them
    code = "import sys, workbench\nworkbench.read_latency\nprint('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True)
    assert out.stdout.strip().splitlines()[-1] == "True"
