"""What running a notebook gives: :class:`NotebookResult` and, for a failed run, :class:`CellError`."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..findings import Finding


@dataclass(frozen=True)
class CellError:
    """The error of the cell that stopped a notebook."""

    cell_index: int | None
    execution_count: int | None
    ename: str
    evalue: str
    traceback: str


@dataclass(frozen=True)
class NotebookResult:
    """Outcome of running one notebook."""

    name: str
    title: str
    status: str  # "ok" or "failed"
    seconds: float
    parameters: dict[str, Any]
    findings: dict[str, Finding] = field(default_factory=dict)
    error: CellError | None = None
    ipynb: str | None = None
    html: str | None = None
    #: where the time went: ``kernel`` ("warm"/"cold"), ``kernel_start_s``, ``warm_up_s`` (start and imports
    #: of a warm kernel, paid by the first notebook on it), ``reset_s``, ``cells_s``, ``slowest_cells``,
    #: ``render_s``, ``host``, ``worker_pid``, ``job`` and ``jobs`` (which of the run's parallel jobs),
    #: ``started_s`` (epoch); empty when not recorded
    timing: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["findings"] = {k: v.to_json() for k, v in self.findings.items()}
        return d
