"""workbench: load performance captures into tidy frames, analyse them, draw them.

Data flows one way: load → analyse → plot → notebook. Each data kind is a
package holding its readers and the analyses of that kind; analyses that span
kinds are models.

- :mod:`workbench.latency` — :func:`read_latency` (samples and distributions of every
  common load tool); ``latency.analysis`` (percentiles with CIs, over-threshold rates,
  rate sweeps, option bisection) and ``latency.series`` (rolling percentiles, change points)
- :mod:`workbench.syscalls` — :func:`read_strace`, :func:`syscall_summary`;
  ``syscalls.waits`` (idle waits vs kernel work, duration peaks, calls over a bound)
- :mod:`workbench.counters` — CephFS metrics, /proc and /sys counters, bpftrace, page-cache
  residency, snapshot series; ``counters.analysis`` (anchor, demand vs fetch, amplification)
- :mod:`workbench.models` — analyses that span kinds: ``stalls`` (global-stall test, phase
  split, baseline, A/B interference), ``yields`` (event-loop yields), ``scaling`` (power laws, USL)
- :mod:`workbench.stats` — shared maths: modes, quantum, bootstrap CIs, comparisons, Wilson interval
- :mod:`workbench.tables` — the one reader of small documented CSV tables
- :mod:`workbench.plots` — one ``plot_*`` function per figure kind, each returns the Axes
- :mod:`workbench.lab` — live experiments, each with the reader of its own capture
- :mod:`workbench.sim` — the documented simulations behind the simulated bundles
- :mod:`workbench.report` — papermill runner, pages, index; :func:`record_finding` /
  :func:`read_findings` carry a notebook's conclusions

Plumbing shared by all: :mod:`workbench.errors` (one error family),
:mod:`workbench.schema` (schemas, :func:`requires`, :class:`Rejects`),
:mod:`workbench.sources` (inputs, decompression, the reject collector) and
:mod:`workbench.cache` (the content-keyed cache of memory-mapped Arrow entries).

Heavy submodules are imported on first use, so ``import workbench`` stays light
(no pandas, scipy, nbformat or dask until a function needs them).
"""
from __future__ import annotations

import importlib
from typing import Any

from . import _moved
from .errors import (
    ArgumentTypeError,
    InputNotFoundError,
    LabError,
    ParseError,
    SchemaError,
    UsageError,
    WorkbenchError,
)
from .findings import Finding, read_findings, record_finding
from .paths import project_root, resolve

_moved.install()

# public name -> module that defines it (imported on first access)
_LAZY = {
    "read_latency": "workbench.latency",
    "read_strace": "workbench.syscalls",
    "syscall_summary": "workbench.syscalls",
    "find_modes": "workbench.stats",
    "find_quantum": "workbench.stats",
    "percentile_cis": "workbench.stats",
    "compare": "workbench.stats",
    "wilson_interval": "workbench.stats",
    "rate_sweep": "workbench.latency.analysis",
    "global_stall_test": "workbench.models.stalls",
    "change_points": "workbench.latency.series",
    "read_series": "workbench.counters",
    "read_table": "workbench.tables",
    "Column": "workbench.schema",
    "Schema": "workbench.schema",
    "Rejects": "workbench.schema",
    "requires": "workbench.schema",
    "validate": "workbench.schema",
}
_SUBMODULES = {
    "cache", "counters", "diagnose", "engine", "lab", "latency", "models", "plots", "report", "schema", "sim",
    "sources", "stats", "syscalls", "tables",
}

__all__ = [
    "ArgumentTypeError",
    "Finding",
    "InputNotFoundError",
    "LabError",
    "ParseError",
    "SchemaError",
    "UsageError",
    "WorkbenchError",
    "project_root",
    "read_findings",
    "record_finding",
    "resolve",
    *sorted(_LAZY),
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES or f"{__name__}.{name}" in _moved.MOVED:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES)
