"""Reading a finished report back: ``report.json`` (or the folder holding it) → :class:`RunReport`.

``workbench compare`` and ``workbench check`` start here. A report folder is
whatever ``workbench report --out DIR`` wrote; a CI artifact downloaded
elsewhere works too, since the notebook pages are looked up beside
``report.json`` rather than at the absolute paths the run recorded.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputNotFoundError, ParseError, UsageError
from ..findings import Finding, finding_from_json
from .html import REPORT_JSON_VERSION
from .results import CellError, NotebookResult


@dataclass(frozen=True)
class RunReport:
    """A report read back: where it is, its layout version and its notebooks (by name, in run order)."""

    path: Path  # the report.json
    version: int
    notebooks: dict[str, NotebookResult]

    @property
    def folder(self) -> Path:
        return self.path.parent

    def page(self, notebook: str) -> Path | None:
        """The notebook's HTML page beside ``report.json``, if it is there."""
        result = self.notebooks.get(notebook)
        name = Path(result.html).name if result is not None and result.html else f"{notebook}.html"
        page = self.folder / name
        return page if page.is_file() else None


def report_json_path(path: str | Path, role: str = "report") -> Path:
    """``report.json`` of a report folder, or the file itself.

    A path that does not exist, or a folder without ``report.json``, raises
    :class:`~workbench.errors.InputNotFoundError` naming ``role`` (e.g. "BASE").
    """
    p = Path(path)
    if not p.exists():
        raise InputNotFoundError(f"{role} {p}: no such report folder or file")
    if p.is_dir():
        if not (p / "report.json").is_file():
            raise InputNotFoundError(f"{role} {p}: folder has no report.json "
                                     "(expected the --out folder of `workbench report`)")
        return p / "report.json"
    return p


def read_report(path: str | Path, role: str = "report") -> RunReport:
    """Read a report folder or its ``report.json`` (layout versions up to :data:`REPORT_JSON_VERSION`).

    Raises :class:`~workbench.errors.InputNotFoundError` when it is missing,
    :class:`~workbench.errors.ParseError` when it is not a report, and
    :class:`~workbench.errors.UsageError` when its version is newer than this
    workbench reads — each message names ``role`` and the file.
    """
    file = report_json_path(path, role)
    text = file.read_text(encoding="utf-8", errors="replace")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"{role} {file}", exc.lineno, "", f"not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("notebooks"), list):
        raise ParseError(f"{role} {file}", None, text[:80], 'expected a report.json: {"version": N, "notebooks": [...]}')
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ParseError(f"{role} {file}", None, repr(version), "expected an integer layout 'version' >= 1")
    if version > REPORT_JSON_VERSION:
        raise UsageError(f"{role} {file}: report.json layout version {version} is newer than this workbench "
                         f"reads (up to {REPORT_JSON_VERSION}); upgrade workbench to compare it")
    notebooks: dict[str, NotebookResult] = {}
    for index, entry in enumerate(data["notebooks"]):
        result = _notebook_from(entry, f"{role} {file}", index)
        notebooks[result.name] = result
    return RunReport(path=file, version=version, notebooks=notebooks)


def _notebook_from(entry: Any, source: str, index: int) -> NotebookResult:
    where = f"notebooks[{index}]"
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise ParseError(source, None, repr(entry)[:200], f"{where}: expected an object with a 'name'")
    name = entry["name"]
    status = entry.get("status")
    if status not in ("ok", "failed"):
        raise ParseError(source, None, repr(status), f"{where} ({name}): expected status 'ok' or 'failed'")
    raw_findings = entry.get("findings") or {}
    if not isinstance(raw_findings, dict):
        raise ParseError(source, None, repr(raw_findings)[:200], f"{where} ({name}): 'findings' must be an object")
    findings: dict[str, Finding] = {}
    for key, payload in raw_findings.items():
        findings[key] = finding_from_json(payload, source, f"{name}.{key}")
    error = None
    if isinstance(entry.get("error"), dict):
        e = entry["error"]
        error = CellError(cell_index=e.get("cell_index"), execution_count=e.get("execution_count"),
                          ename=str(e.get("ename", "")), evalue=str(e.get("evalue", "")),
                          traceback=str(e.get("traceback", "")))
    seconds = entry.get("seconds")
    params = entry.get("parameters")
    return NotebookResult(
        name=name, title=str(entry.get("title") or name), status=status,
        seconds=float(seconds) if isinstance(seconds, (int, float)) else 0.0,
        parameters=params if isinstance(params, dict) else {},
        findings=findings, error=error, ipynb=entry.get("ipynb"), html=entry.get("html"),
        timing=entry["timing"] if isinstance(entry.get("timing"), dict) else {})
