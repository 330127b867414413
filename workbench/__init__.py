"""workbench: load performance captures into tidy frames, analyse them, draw them.

Public names are listed here; submodules hold the details:

- :mod:`workbench.findings` — record and read back notebook findings
- :mod:`workbench.schema` — documented frame schemas and their validator
- :mod:`workbench.report` — run notebooks as a report (papermill → HTML)
- :mod:`workbench.models` — fitted models (event-loop yields, scaling laws)
- :mod:`workbench.lab` — real experiments on this machine
"""
from .errors import ParseError, SchemaError, WorkbenchError
from .findings import Finding, read_findings, record_finding
from .paths import project_root, resolve
from .schema import Column, Schema, validate

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
]
__version__ = "0.1.0"
