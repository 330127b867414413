"""What produced a report: commit, package versions, host — stated on every page and in ``report.json``."""
from __future__ import annotations

import functools
import platform
import socket
import subprocess
from importlib import metadata
from typing import Any

from ..paths import project_root

#: the packages whose versions change what a page shows
PACKAGES = ("numpy", "pandas", "scipy", "matplotlib", "pyarrow", "papermill", "nbconvert")


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


@functools.cache
def commit() -> str | None:
    """The project checkout's commit (``+changes`` when the work tree differs), or None outside git."""
    try:
        root = project_root()
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (FileNotFoundError, subprocess.SubprocessError, OSError):
        return None
    return f"{head}+changes" if dirty else head or None


@functools.cache
def run_info() -> dict[str, Any]:
    """Commit, workbench and package versions, Python, host: one dict, computed once per process."""
    return {
        "workbench": _version("workbench"),
        "commit": commit(),
        "python": platform.python_version(),
        "packages": {p: _version(p) for p in PACKAGES},
        "host": socket.gethostname(),
        "platform": platform.platform(terse=True),
    }


def versions_line(info: dict[str, Any]) -> str:
    """``Python 3.11.7, numpy 2.4.6, pandas 3.1.1, …`` for a page header."""
    pk = info.get("packages", {})
    return ", ".join([f"Python {info.get('python', '?')}"] + [f"{k} {v}" for k, v in pk.items()])
