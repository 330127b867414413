"""Reading notebooks without running them: the parameters cell and its documentation.

The first code cell tagged ``parameters`` holds one assignment per parameter,
each documented by a comment on the same line (or on the comment lines right
above it)::

    live = False  # rerun the experiment on this machine instead of reading bundled data
    timeout_ms = 1000.0  # prepare-phase timeout, ms

:func:`read_parameters` returns them in order; ``workbench list`` prints them
and the hygiene test requires every one to be documented.
"""
from __future__ import annotations

import ast
import io
import logging
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ParseError, UsageError

if TYPE_CHECKING:
    import nbformat


@dataclass(frozen=True)
class Parameter:
    """A notebook parameter: name, default (Python value), its source text and help."""

    name: str
    default: Any
    default_source: str
    help: str

    @property
    def type_name(self) -> str:
        return type(self.default).__name__


def parameters_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode | None:
    """The first code cell tagged ``parameters``, or None."""
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            return cell
    return None


def parse_parameters(source: str, name: str = "<parameters cell>") -> list[Parameter]:
    """Parse the assignments of a parameters cell with their comments.

    Raises SyntaxError on invalid code and :class:`~workbench.errors.ParseError`
    (naming ``name`` and the line within the cell) on statements other than
    simple ``name = value`` assignments (the cell must stay a plain list).
    """
    tree = ast.parse(source)
    comments: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string.lstrip("#").strip()
    lines = source.splitlines()
    params: list[Parameter] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        else:
            text = ast.get_source_segment(source, node) or ast.dump(node)
            raise ParseError(name, node.lineno, text.splitlines()[0] if text else "",
                             "only 'name = value' assignments are allowed in a parameters cell")
        if (node.end_lineno or node.lineno) != node.lineno:
            text = lines[node.lineno - 1]
            raise ParseError(name, node.lineno, text, "each parameter must fit on one line "
                             "(papermill reads the parameters cell line by line)")
        src = ast.get_source_segment(source, value) or ""
        try:
            default = ast.literal_eval(value)
        except (ValueError, TypeError):  # not a literal (an expression): keep its source text
            default = src
        help_parts = []
        end = getattr(node, "end_lineno", node.lineno) or node.lineno
        for ln in range(node.lineno, end + 1):
            if ln in comments:
                help_parts.append(comments[ln])
        if not help_parts:  # comment block right above
            ln = node.lineno - 1
            above: list[str] = []
            while ln >= 1 and lines[ln - 1].strip().startswith("#"):
                above.insert(0, comments.get(ln, lines[ln - 1].strip().lstrip("#").strip()))
                ln -= 1
            help_parts = above
        params.append(Parameter(target, default, src, " ".join(p for p in help_parts if p)))
    return params


def _cell_name(path: str | Path) -> str:
    return f"{path} [parameters cell]"


def read_parameters(path: str | Path) -> list[Parameter]:
    """Parameters of the notebook at ``path`` (empty list if it has no parameters cell)."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    cell = parameters_cell(nb)
    return parse_parameters(cell.source, name=_cell_name(path)) if cell is not None else []


def notebook_title(path: str | Path) -> str:
    """The first markdown heading of the notebook, or its file name."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return Path(path).stem


def coerce_value(raw: str, default: Any, name: str | None = None) -> Any:
    """Turn a command-line string into a parameter value, guided by the default's type.

    ``true/false/yes/no/1/0`` for bools, numbers for int/float defaults, Python
    literals (lists, dicts, None) where they parse, else the string itself. A
    bool parameter given anything else raises :class:`~workbench.errors.UsageError`
    (naming the parameter ``name`` when given).
    """
    low = raw.strip().lower()
    if isinstance(default, bool):
        if low in {"true", "yes", "1", "on"}:
            return True
        if low in {"false", "no", "0", "off"}:
            return False
        what = f"parameter {name!r}" if name else "a bool parameter"
        raise UsageError(f"{what}: expected a boolean (true/false, yes/no, on/off, 1/0), got {raw!r}")
    if low in {"none", "null"}:
        return None
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return raw
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(default, str) and not isinstance(value, str):
        return raw
    return value


def hygiene_problems(path: str | Path) -> list[str]:
    """What keeps a committed notebook from being clean (empty list when it is).

    Checks: no outputs and no execution counts; kernelspec with a name and a
    language in the metadata; a code cell tagged ``parameters`` whose
    assignments all carry a help comment.
    """
    import nbformat

    try:
        nb = nbformat.read(str(path), as_version=4)
    except Exception as exc:  # noqa: BLE001 - report unreadable notebooks as a problem
        return [f"not a readable notebook: {exc}"]
    problems: list[str] = []
    meta = nb.get("metadata", {})
    ks = meta.get("kernelspec", {})
    if not ks.get("name"):
        problems.append("metadata.kernelspec.name is missing")
    if not (ks.get("language") or meta.get("language_info", {}).get("name")):
        problems.append("no language in metadata (kernelspec.language or language_info.name)")
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if cell.get("outputs"):
            problems.append(f"cell {i} has outputs")
        if cell.get("execution_count") is not None:
            problems.append(f"cell {i} has an execution count")
    cell = parameters_cell(nb)
    if cell is None:
        problems.append("no code cell tagged 'parameters'")
    else:
        try:
            params = parse_parameters(cell.source, name=_cell_name(path))
        except (SyntaxError, ValueError) as exc:
            problems.append(f"parameters cell does not parse: {exc}")
        else:
            if not params:
                problems.append("parameters cell declares no parameters")
            for p in params:
                if not p.help:
                    problems.append(f"parameter {p.name!r} has no help comment")
            problems += _papermill_disagreements(cell, params)
    return problems


def _papermill_disagreements(cell: nbformat.NotebookNode, params: list[Parameter]) -> list[str]:
    """Lines papermill itself reads differently (it parses the cell line by line, not as Python)."""
    from papermill.translators import PythonTranslator

    with _quiet(logging.getLogger("papermill")):
        theirs = {p.name: p.default.strip() for p in PythonTranslator.inspect(cell)}
    problems = []
    for p in params:
        if p.name not in theirs:
            problems.append(f"papermill does not read parameter {p.name!r} (reword its line or its comment)")
        elif theirs[p.name] != p.default_source.strip():
            problems.append(f"papermill reads parameter {p.name!r} as {theirs[p.name]!r}, "
                            f"not {p.default_source.strip()!r}")
    return problems


class _quiet:
    """Silence a logger inside a ``with`` block."""

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger

    def __enter__(self) -> None:
        self.level = self.logger.level
        self.logger.setLevel(100)

    def __exit__(self, *exc: object) -> None:
        self.logger.setLevel(self.level)
