"""JSON parsing shared by the ghz and fortio readers."""
from __future__ import annotations

import json
from typing import Any

from ..errors import ParseError
from ..sources import Input

#: deepest nesting a load-tool's JSON has any reason to reach
MAX_DEPTH = 64
#: longest integer literal read (int64 has 19 digits; longer ones are not counts or times)
MAX_INT_DIGITS = 20


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text.lstrip('-'))} digits (more than {MAX_INT_DIGITS})")
    return int(text)


def _depth_ok(text: str) -> bool:
    """False when brackets nest deeper than :data:`MAX_DEPTH` (checked in one pass, strings skipped)."""
    depth = 0
    in_str = escaped = False
    for ch in text:
        if in_str:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def parse_json(text: str) -> Any:
    """``json.loads`` for untrusted text: ValueError (never RecursionError or a digit-limit crash) for
    nesting deeper than :data:`MAX_DEPTH`, integers longer than :data:`MAX_INT_DIGITS` digits, or bad JSON."""
    if ("[" in text or "{" in text) and not _depth_ok(text):
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text, parse_int=_int)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None


def load_json(inp: Input, what: str) -> dict:
    """Parse ``inp`` as one JSON object or raise ParseError naming the line."""
    try:
        obj = parse_json(inp.text)
    except json.JSONDecodeError as e:
        raise ParseError(inp.name, e.lineno, inp.line(e.lineno), f"not valid JSON ({e.msg}); expected a {what}") from None
    except ValueError as e:
        raise ParseError(inp.name, None, inp.line(1)[:200], f"not a {what}: {e}") from None
    if not isinstance(obj, dict):
        raise ParseError(inp.name, 1, inp.line(1), f"expected a JSON object ({what}), got {type(obj).__name__}")
    return obj


def entries(inp: Input, obj: dict[str, Any], key: str, where: str = "") -> list[Any]:
    """The list under ``obj[key]`` (empty when absent or null); ParseError naming the key otherwise."""
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ParseError(inp.name, None, compact(value)[:200],
                         f"{where}{key}: expected a JSON list of entries, got {type(value).__name__}")
    return value


def number(x: object) -> float | None:
    """A finite JSON number (bool excluded), or None."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    v = float(x)
    return v if v == v and v not in (float("inf"), float("-inf")) else None


def compact(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True)
