"""The ``workbench`` command: ``report``, ``list`` and ``lab <experiment>``."""
from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

from .errors import WorkbenchError


def _notebooks_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    from .paths import project_root

    return project_root() / "notebooks"


def cmd_list(args: argparse.Namespace) -> int:
    from .report import discover, notebook_title, read_parameters, select

    for nb in select(discover(_notebooks_dir(args.notebooks)), args.names):
        print(f"{nb.stem} — {notebook_title(nb)}")
        for p in read_parameters(nb):
            print(f"    {p.name} = {p.default_source}  ({p.type_name})  {p.help}")
        print()
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .report import discover, run_report, select

    folder = _notebooks_dir(args.notebooks)
    notebooks = select(discover(folder), args.names)
    if not notebooks:
        print(f"workbench report: no notebooks (*.ipynb) in {folder}", file=sys.stderr)
        return 2
    overrides = {name: value for name, value in (args.param or [])}
    results = run_report(notebooks, overrides, out_dir=args.out, no_input=args.no_input,
                         jobs=args.jobs, timeout_s=args.timeout)
    failed = [r for r in results if r.status != "ok"]
    print(f"report: {Path(args.out) / 'index.html'} ({len(results) - len(failed)} ok, {len(failed)} failed)")
    return 1 if failed else 0


def _labs() -> dict[str, ModuleType]:
    """Experiment modules in ``workbench.lab`` that offer a command line (``add_parser``)."""
    from . import lab

    found: dict[str, ModuleType] = {}
    for info in pkgutil.iter_modules(lab.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{lab.__name__}.{info.name}")
        if hasattr(mod, "add_parser"):
            found[info.name] = mod
    return found


def build_parser(with_labs: bool = True) -> argparse.ArgumentParser:
    """The command line; ``with_labs=False`` skips importing the experiment modules (slow imports)."""
    parser = argparse.ArgumentParser(prog="workbench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("report", help="run notebooks and write executed notebooks, HTML and an index")
    p.add_argument("names", nargs="*", help="notebooks to run (name, stem or prefix such as 04); default all")
    p.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                   help="set a notebook parameter (typed by its default); repeatable")
    p.add_argument("--out", default="reports", help="output folder (default: reports)")
    p.add_argument("--no-input", action="store_true", help="render HTML without code cells")
    p.add_argument("--jobs", "-j", type=int, default=max(1, min(2, os.cpu_count() or 1)),
                   help="notebooks to run at once (default: up to 2)")
    p.add_argument("--timeout", type=float, default=1800.0, help="per-cell timeout, seconds")
    p.add_argument("--notebooks", help="folder of notebooks (default: the project's notebooks/)")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("list", help="list notebooks with their parameters, defaults and help")
    p.add_argument("names", nargs="*")
    p.add_argument("--notebooks", help="folder of notebooks (default: the project's notebooks/)")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("lab", help="run a real experiment on this machine")
    labsub = p.add_subparsers(dest="experiment", required=True)
    for _name, mod in sorted(_labs().items() if with_labs else ()):
        mod.add_parser(labsub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    0: done; 1: a notebook of the report failed; 2: an error the workbench
    raises on purpose (an unknown notebook or parameter, a missing input, an
    experiment that cannot run here), printed as one line on stderr.
    """
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(with_labs=bool(argv) and argv[0] == "lab").parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except WorkbenchError as exc:
        print(f"workbench {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
