"""Run every benchmark in this folder (each is also runnable on its own).

``python benchmarks/run.py [NAME ...]`` runs the named benchmarks (default: all
of ``import_time``, ``report_overhead``, ``strace_parse`` and any other module
here), each with its default options, one after the other; a benchmark that
fails or exits non-zero is reported and the others still run.

Benchmarks print their own figures and ratios against a baseline measured in
the same run; nothing here asserts a time, because shared machines are noisy.
"""
from __future__ import annotations

import runpy
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_one(name: str) -> int:
    """Run ``benchmarks/<name>.py`` as ``__main__`` with no arguments; its exit status."""
    path = HERE / f"{name}.py"
    saved = sys.argv
    sys.argv = [str(path)]  # the benchmark parses its own options, not ours
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception:  # noqa: BLE001 - report and go on with the next benchmark
        traceback.print_exc()
        return 1
    finally:
        sys.argv = saved
    return 0


def main(argv: list[str]) -> int:
    available = sorted(p.stem for p in HERE.glob("*.py") if p.stem not in {"run", "__init__", "strace_gen"})
    names = argv or available
    unknown = [n for n in names if n not in available]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; available: {', '.join(available)}", file=sys.stderr)
        return 2
    failed = []
    for name in names:
        print(f"=== {name}", flush=True)
        if run_one(name) != 0:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
