"""The one error family: everything the workbench raises on purpose derives from :class:`WorkbenchError`.

- :class:`ParseError` — an input line or record could not be parsed (file, line, text, reason);
- :class:`SchemaError` — a frame or table lacks the columns or dtypes an analysis needs;
- :class:`UsageError` — an argument or parameter is out of range, of the wrong kind, or
  contradicts another, such as a non-loopback host given to a lab (names the parameter
  and what was expected); :class:`ArgumentTypeError`
  when it is of the wrong Python type (also a ``TypeError``);
- :class:`InputNotFoundError` — a path, glob or folder named no input;
- :class:`LabError` — a live experiment could not run here (missing tool, a peer that
  did not answer, a simulation over its limits).

Each is also the built-in exception callers already catch (``ValueError``,
``FileNotFoundError``, ``RuntimeError``), so ``except ValueError`` keeps working.
"""
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

    def __reduce__(self) -> tuple[type, tuple[str, int | None, str, str]]:
        return (type(self), (self.source, self.line, self.text, self.reason))


class SchemaError(WorkbenchError, ValueError):
    """A frame or table does not have the columns or dtypes that are documented or needed."""


class UsageError(WorkbenchError, ValueError):
    """An argument or parameter is invalid; the message names it and what was expected."""


class ArgumentTypeError(UsageError, TypeError):
    """An argument is of the wrong Python type; the message names it and the types accepted."""


class InputNotFoundError(WorkbenchError, FileNotFoundError):
    """A path, glob pattern or folder named no readable input."""


class LabError(WorkbenchError, RuntimeError):
    """A live experiment cannot run here, or stopped: the message says why and what to do."""


__all__ = ["ArgumentTypeError", "InputNotFoundError", "LabError", "ParseError", "SchemaError", "UsageError", "WorkbenchError"]
