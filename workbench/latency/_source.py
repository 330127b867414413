"""Turn the ``source`` argument of a loader into named texts."""
from __future__ import annotations

import gzip
from pathlib import Path

from ..sources import Source, Text, read_stream, split_sources
from ._common import Input


def read_path(p: Path) -> Input:
    data = p.read_bytes()
    if data[:2] == b"\x1f\x8b":  # gzip (k6 --out json=file.gz)
        data = gzip.decompress(data)
    text = data.decode("utf-8-sig", errors="replace")
    return Input(str(p), text)


def open_inputs(source: Source) -> list[Input]:
    """Named texts from a path, a glob, a list of paths, an open text stream or a string."""
    return [read_path(x) if isinstance(x, Path) else x for x in resolve_sources(source)]


def _is_text(s: str) -> bool:
    """A str is text when it holds a newline or starts with ``{`` (one-line JSON)."""
    return "\n" in s or "\r" in s or s.lstrip().startswith("{")


def resolve_sources(source: Source) -> list[Path | Input]:
    """Files (not yet read) or texts from a path, a glob, a list of paths, a stream or a string.

    A ``str`` containing a newline (or starting with ``{``, one-line JSON) is the
    text itself; otherwise it is a path (a glob pattern when it contains ``*?[``).
    """
    out: list[Path | Input] = []
    for item in split_sources(source, "latency", is_text=_is_text):
        if isinstance(item, Path):
            out.append(item)
        elif isinstance(item, Text):
            out.append(Input(item.name, item.text.removeprefix("\ufeff")))
        else:
            out.append(Input(item.name, read_stream(item.stream, "utf-8-sig").removeprefix("\ufeff")))
    return out
