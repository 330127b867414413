"""Where the project's notebooks and bundled data live, wherever the code runs from."""
from __future__ import annotations

from pathlib import Path

from .errors import InputNotFoundError


def project_root() -> Path:
    """The directory holding ``notebooks/`` and ``data/`` (the repository checkout).

    Found from the current directory upwards first (so a user's own checkout
    wins), then from the installed package's location (editable installs).
    Raises :class:`~workbench.errors.InputNotFoundError` when neither has one.
    """
    here = Path.cwd().resolve()
    for cand in (here, *here.parents):
        if (cand / "notebooks").is_dir() and (cand / "data").is_dir():
            return cand
    pkg = Path(__file__).resolve().parent.parent
    if (pkg / "notebooks").is_dir():
        return pkg
    raise InputNotFoundError(
        "cannot find the workbench project (a directory with notebooks/ and data/) "
        f"above {here} or at {pkg}; run from the repository checkout"
    )


def resolve(path: str | Path) -> Path:
    """Resolve an input path: as given if it exists, else relative to the project root.

    Notebook parameters default to project-relative paths such as
    ``data/04_event_loop_yields/published.csv``; this makes them work from the
    repository root (the report), from ``notebooks/`` (JupyterLab) and for absolute
    paths a user passes. Raises :class:`~workbench.errors.InputNotFoundError`
    (a FileNotFoundError) naming both places tried.
    """
    p = Path(path).expanduser()
    if p.exists():
        return p.resolve()
    if not p.is_absolute():
        q = project_root() / p
        if q.exists():
            return q
        raise InputNotFoundError(f"{path}: not found in {Path.cwd()} nor in the project root {project_root()}")
    raise InputNotFoundError(f"{path}: no such file or directory")
