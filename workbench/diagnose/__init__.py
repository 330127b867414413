"""Point the workbench at a folder of captures: ranked suspects with their evidence and the notebook that explains each.

:func:`diagnose` reads every file with the loaders' own detection
(:mod:`workbench.diagnose.inventory`), runs every detector that applies
(:mod:`workbench.diagnose.detectors`) and ranks what they found by strength.
"""
from __future__ import annotations

import sys
import types
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .detectors import DETECTORS, NOTEBOOKS, Detection
from .inventory import InputFile, inventory

__all__ = ["DETECTORS", "NOTEBOOKS", "Detection", "Diagnosis", "InputFile", "JSON_VERSION", "diagnose", "inventory"]

#: version of the JSON document :meth:`Diagnosis.as_json` returns
JSON_VERSION = 1

_RANK = {"found": 0, "inconclusive": 1, "not found": 2}


@dataclass
class Diagnosis:
    """What was read (``inputs``), what every detector that ran said (``suspects``, strongest first) and
    which detectors did not apply (``not_applicable``, each with the input it needs)."""

    inputs: list[InputFile]
    suspects: list[Detection]
    not_applicable: list[Detection] = field(default_factory=list)

    @property
    def found(self) -> list[Detection]:
        """The suspects with verdict ``found``."""
        return [d for d in self.suspects if d.verdict == "found"]

    def as_json(self) -> dict[str, Any]:
        """The versioned JSON document (``version``, ``inputs``, ``suspects``, ``not_applicable``)."""
        return {"version": JSON_VERSION,
                "inputs": [f.as_json() for f in self.inputs],
                "suspects": [d.as_json() for d in self.suspects],
                "not_applicable": [{"detector": d.detector, "needs": d.needs} for d in self.not_applicable]}


def _run(name: str, files: list[InputFile]) -> Detection:
    """One detector; a defect inside it becomes an inconclusive answer that says so, not a lost diagnosis."""
    try:
        return DETECTORS[name](files)
    except Exception as exc:
        return Detection(name, "inconclusive", 0.0, f"the detector failed ({type(exc).__name__}: {exc}); "
                                                   "the other detectors' answers stand")


def diagnose(paths: str | Path | Iterable[str | Path], *, detectors: Sequence[str] | None = None) -> Diagnosis:
    """Read every file under ``paths`` and run the detectors (all, or those named) on what was found.

    Suspects are ranked found → inconclusive → not found, then by strength.
    Raises :class:`~workbench.errors.InputNotFoundError` for a path that does not exist and
    :class:`~workbench.errors.UsageError` for an unknown detector name.
    """
    from ..errors import UsageError

    items = [paths] if isinstance(paths, str | Path) else list(paths)
    names = list(DETECTORS) if detectors is None else list(detectors)
    unknown = [n for n in names if n not in DETECTORS]
    if unknown:
        raise UsageError(f"diagnose: unknown detector(s) {unknown}; expected some of {list(DETECTORS)}")
    files = inventory(items)
    results = [_run(n, files) for n in names]
    ran = [d for d in results if d.verdict != "not applicable"]
    ran.sort(key=lambda d: (_RANK[d.verdict], -d.strength, d.detector))
    return Diagnosis(files, ran, [d for d in results if d.verdict == "not applicable"])


class _CallableModule(types.ModuleType):
    """``workbench.diagnose`` is this package and also the function: ``workbench.diagnose(paths)``."""

    def __call__(self, paths: str | Path | Iterable[str | Path], *,
                 detectors: Sequence[str] | None = None) -> Diagnosis:
        return diagnose(paths, detectors=detectors)


sys.modules[__name__].__class__ = _CallableModule
