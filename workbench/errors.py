"""Exceptions shared by loaders and analyses."""
from __future__ import annotations


class WorkbenchError(Exception):
    """Base class of every error the workbench raises on purpose."""


class ParseError(WorkbenchError, ValueError):
    """An input line or record could not be parsed.

    Carries the file name (or ``"<text>"``), the 1-based line number, the
    offending text and what was expected, so the message alone is enough to
    find and fix the input.
    """

    def __init__(self, source: str, line: int | None, text: str, reason: str) -> None:
        self.source = source
        self.line = line
        self.text = text
        self.reason = reason
        where = f"{source}:{line}" if line is not None else source
        shown = text if len(text) <= 200 else text[:200] + "…"
        super().__init__(f"{where}: {reason}: {shown!r}")


class SchemaError(WorkbenchError, ValueError):
    """A frame does not match its documented schema."""
