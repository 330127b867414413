"""Old import paths of release 0.1, kept working for one release (each import warns once).

| old module | new home |
|---|---|
| ``workbench.latency_analysis`` | :mod:`workbench.latency.analysis` |
| ``workbench.latency_series`` | :mod:`workbench.latency.series` (``simulate_overnight``: :mod:`workbench.sim.overnight`) |
| ``workbench.stalls`` | :mod:`workbench.models.stalls` |
| ``workbench.notebooks`` | :mod:`workbench.report.notebooks` |
| ``workbench.counters.probe`` | :mod:`workbench.lab.readahead` |

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
from collections.abc import Sequence
from typing import Any

#: old module → new modules, searched in order for each attribute
MOVED: dict[str, tuple[str, ...]] = {
    "workbench.latency_analysis": ("workbench.latency.analysis",),
    "workbench.latency_series": ("workbench.latency.series", "workbench.sim.overnight"),
    "workbench.stalls": ("workbench.models.stalls", "workbench.stats"),
    "workbench.notebooks": ("workbench.report.notebooks",),
    "workbench.counters.probe": ("workbench.lab.readahead",),
}


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
