"""Run notebooks as a report: papermill → executed .ipynb → self-contained HTML + index.

- :mod:`workbench.report.runner` — :func:`execute_notebook`, :func:`run_report`
  (parallel jobs), :func:`discover` / :func:`select` notebooks by name;
- :mod:`workbench.report.kernels` — :class:`~workbench.report.kernels.WarmKernel`: one kernel per job,
  its imports paid once, reset to a clean namespace before each notebook
  (:mod:`workbench.report.kernelside` is the part that runs inside the kernel);
- :mod:`workbench.report.html` — one page per executed notebook, the index,
  ``findings.json`` and ``report.json`` (each with a ``"version"`` of its layout);
- :mod:`workbench.report.results` — :class:`NotebookResult`, :class:`CellError`;
- :mod:`workbench.report.notebooks` — a notebook's parameters cell, title and
  hygiene (outputs stripped, kernelspec, documented parameters);
- :mod:`workbench.report.reading` — :func:`read_report`: a finished report back from ``report.json``;
- :mod:`workbench.report.compare` — :func:`compare_reports`: verdicts between two reports
  (``workbench compare``); :mod:`workbench.report.compare_page` its HTML page;
- :mod:`workbench.report.checks` — gates on findings from a TOML check file (``--check``);
- :mod:`workbench.report.junit` — JUnit XML; :mod:`workbench.report.summary` — Markdown
  for ``$GITHUB_STEP_SUMMARY``.
"""
from __future__ import annotations

from .checks import Check, CheckResult, evaluate_checks, read_checks
from .compare import COMPARE_JSON_VERSION, Change, Comparison, compare_reports
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
from .reading import RunReport, read_report
from .results import CellError, NotebookResult
from .runner import (
    discover,
    execute_notebook,
    resolve_parameters,
    run_report,
    select,
)

__all__ = [
    "COMPARE_JSON_VERSION",
    "ERROR_ANCHOR",
    "Change",
    "Check",
    "CheckResult",
    "Comparison",
    "RunReport",
    "compare_reports",
    "evaluate_checks",
    "read_checks",
    "read_report",
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
