"""Old import paths of release 0.1, kept working for one release (each import warns once).

| old module | new home |
|---|---|
| ``workbench.latency_analysis`` | :mod:`workbench.latency.analysis` |
| ``workbench.latency_series`` | :mod:`workbench.latency.series` (``simulate_overnight``: :mod:`workbench.sim.overnight`) |
| ``workbench.stalls`` | :mod:`workbench.models.stalls` |
| ``workbench.notebooks`` | :mod:`workbench.report.notebooks` |
| ``workbench.counters.probe`` | :mod:`workbench.lab.readahead` |

Names that moved out of a module that still exists, or were renamed in it, are
listed in :data:`NAMES`; the module's ``__getattr__`` is :func:`forward`.

An old module is an alias whose attributes are looked up in the new home(s);
nothing is copied, so both paths always give the same objects.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from collections.abc import Callable, Sequence
from typing import Any

#: old module → new modules, searched in order for each attribute
MOVED: dict[str, tuple[str, ...]] = {
    "workbench.latency_analysis": ("workbench.latency.analysis",),
    "workbench.latency_series": ("workbench.latency.series", "workbench.sim.overnight"),
    "workbench.stalls": ("workbench.models.stalls", "workbench.stats"),
    "workbench.notebooks": ("workbench.report.notebooks",),
    "workbench.counters.probe": ("workbench.lab.readahead",),
}


#: module → {old name: "new.module:new_name"}
NAMES: dict[str, dict[str, str]] = {
    "workbench.models.yields": {
        "CAPTURE_SCHEMA": "workbench.lab.yields:CAPTURE_SCHEMA",
        "MODES": "workbench.lab.yields:MODES",
        "read_capture": "workbench.lab.yields:read_capture",
    },
    "workbench.plots.counters": {old: f"workbench.plots.counters:plot_{new}" for old, new in (
        ("interface_bytes", "interface_bytes"), ("rates_over_time", "rates_over_time"),
        ("demand_vs_fetch", "demand_vs_fetch"), ("size_histogram", "size_histogram"),
        ("attribution", "attribution"), ("node_rates", "node_rates"),
        ("reconciliation", "reconciliation"), ("probe_pages", "probe_pages"))},
    "workbench.plots.scaling": {old: f"workbench.plots.scaling:plot_{new}" for old, new in (
        ("time_heatmap", "time_heatmap"), ("loglog_fits", "loglog_fits"),
        ("speedup_heatmap", "speedup_heatmap"), ("ratio_intervals", "ratio_intervals"),
        ("usl_plot", "usl"), ("demand_plot", "demand_predictions"), ("loc_bars", "loc_bars"),
        ("busiest_by_kind", "busiest_by_kind"))},
}


def forward(module: str) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``module``: an old name (:data:`NAMES`) gives the new object, with a warning."""
    table = NAMES[module]

    def __getattr__(name: str) -> Any:
        target = table.get(name)
        if target is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new_module, new_name = target.split(":")
        warnings.warn(f"{module}.{name} is now {new_module}.{new_name}; the old name works until the next release",
                      DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(new_module), new_name)

    return __getattr__


class _Alias(types.ModuleType):
    """A module whose attributes come from its new home(s)."""

    _targets: tuple[str, ...]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        for target in self._targets:
            mod = importlib.import_module(target)
            if hasattr(mod, name):
                return getattr(mod, name)
        raise AttributeError(f"module {self.__name__!r} (moved to {', '.join(self._targets)}) has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        names: set[str] = set()
        for target in self._targets:
            names |= set(dir(importlib.import_module(target)))
        return sorted(names)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname in MOVED:
            return importlib.machinery.ModuleSpec(fullname, self)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        mod = _Alias(spec.name, f"moved to {', '.join(MOVED[spec.name])}")
        mod._targets = MOVED[spec.name]
        return mod

    def exec_module(self, module: types.ModuleType) -> None:
        warnings.warn(f"{module.__name__} moved to {MOVED[module.__name__][0]}; the old path works until the "
                      "next release", DeprecationWarning, stacklevel=2)


def install() -> None:
    """Put the alias finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
