"""Run every benchmark in this folder (each is also runnable on its own).

Benchmarks print their own figures and ratios against a baseline measured in
the same run; nothing here asserts a time, because shared machines are noisy.
"""
from __future__ import annotations

import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    names = argv or sorted(p.stem for p in HERE.glob("*.py") if p.stem not in {"run", "__init__"})
    for name in names:
        print(f"=== {name}", flush=True)
        runpy.run_path(str(HERE / f"{name}.py"), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
