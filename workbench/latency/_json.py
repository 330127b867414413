"""JSON parsing shared by the ghz and fortio readers."""
from __future__ import annotations

import json
from typing import Any

from ..errors import ParseError
from ..sources import Input


def load_json(inp: Input, what: str) -> dict:
    """Parse ``inp`` as one JSON object or raise ParseError naming the line."""
    try:
        obj = json.loads(inp.text)
    except json.JSONDecodeError as e:
        raise ParseError(inp.name, e.lineno, inp.line(e.lineno), f"not valid JSON ({e.msg}); expected a {what}") from None
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
