"""workbench: load performance captures into tidy frames, analyse them, draw them.

Data flows one way: load → analyse → plot → notebook.

Loaders (each returns a frame with a documented schema; rejects in ``attrs``):

- :func:`read_latency` — latency samples and distributions (:mod:`workbench.latency`)
- :func:`read_strace` — strace output, one row per system call (:mod:`workbench.syscalls`)
- :mod:`workbench.counters` — CephFS metrics, /proc and /sys counters, bpftrace, page-cache residency

Analyses:

- :mod:`workbench.stats` — :func:`find_modes`, :func:`find_quantum`, bootstrap CIs, comparisons
- :mod:`workbench.latency_analysis` — percentiles, over-threshold rates, rate sweeps, option bisection
- :mod:`workbench.latency_series` — rolling percentiles, change points
- :mod:`workbench.stalls` — global-stall test, phase split, uptime, baseline, A/B interference
- :mod:`workbench.syscalls.waits` — idle waits vs kernel work, duration peaks, calls over a bound
- :mod:`workbench.counters.analysis` — anchor counter, demand vs fetch, amplification, reconciliation
- :mod:`workbench.models.yields` and :mod:`workbench.models.scaling` — fitted models

Figures: :mod:`workbench.plots` (one function per figure kind, each returns the Axes).
Experiments on this machine: :mod:`workbench.lab` (``workbench lab <name>``).
Notebooks: :func:`record_finding` / :func:`read_findings`, and :mod:`workbench.report`.

Heavy submodules are imported on first use, so ``import workbench`` stays fast.
"""
from __future__ import annotations

import importlib
from typing import Any

from .errors import ParseError, SchemaError, WorkbenchError
from .findings import Finding, read_findings, record_finding
from .paths import project_root, resolve
from .schema import Column, Schema, validate

# public name -> module that defines it (imported on first access)
_LAZY = {
    "read_latency": "workbench.latency",
    "read_strace": "workbench.syscalls",
    "syscall_summary": "workbench.syscalls",
    "find_modes": "workbench.stats",
    "find_quantum": "workbench.stats",
    "percentile_cis": "workbench.stats",
    "compare": "workbench.stats",
    "rate_sweep": "workbench.latency_analysis",
    "global_stall_test": "workbench.stalls",
    "change_points": "workbench.latency_series",
    "read_series": "workbench.counters",
}
_SUBMODULES = {
    "counters", "engine", "lab", "latency", "latency_analysis", "latency_series", "models", "plots",
    "report", "sim", "stalls", "stats", "syscalls",
}

__all__ = [
    "Column",
    "Finding",
    "ParseError",
    "Schema",
    "SchemaError",
    "WorkbenchError",
    "project_root",
    "read_findings",
    "record_finding",
    "resolve",
    "validate",
    *sorted(_LAZY),
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES)
