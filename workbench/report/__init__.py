"""Run notebooks as a report: papermill → executed .ipynb → self-contained HTML + index.

- :mod:`workbench.report.runner` — :func:`execute_notebook`, :func:`run_report`
  (parallel workers), :func:`discover` / :func:`select` notebooks by name;
- :mod:`workbench.report.html` — one page per executed notebook, the index,
  ``findings.json`` and ``report.json`` (each with a ``"version"`` of its layout);
- :mod:`workbench.report.results` — :class:`NotebookResult`, :class:`CellError`;
- :mod:`workbench.report.notebooks` — a notebook's parameters cell, title and
  hygiene (outputs stripped, kernelspec, documented parameters).
"""
from __future__ import annotations

from .html import ERROR_ANCHOR, FINDINGS_JSON_VERSION, REPORT_JSON_VERSION, render_html, write_index
from .notebooks import (
    Parameter,
    coerce_value,
    hygiene_problems,
    notebook_title,
    parameters_cell,
    parse_parameters,
    read_parameters,
)
from .results import CellError, NotebookResult
from .runner import (
    discover,
    execute_notebook,
    resolve_parameters,
    run_report,
    select,
)

__all__ = [
    "ERROR_ANCHOR",
    "FINDINGS_JSON_VERSION",
    "REPORT_JSON_VERSION",
    "CellError",
    "NotebookResult",
    "Parameter",
    "coerce_value",
    "discover",
    "execute_notebook",
    "hygiene_problems",
    "notebook_title",
    "parameters_cell",
    "parse_parameters",
    "read_parameters",
    "render_html",
    "resolve_parameters",
    "run_report",
    "select",
    "write_index",
]
