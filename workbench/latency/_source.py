"""Turn the ``source`` argument of a loader into named texts."""
from __future__ import annotations

import glob
import gzip
import io
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from ..paths import resolve
from ._common import Input

Source = str | os.PathLike | TextIO | Iterable[str | os.PathLike]


def read_path(p: Path) -> Input:
    data = p.read_bytes()
    if data[:2] == b"\x1f\x8b":  # gzip (k6 --out json=file.gz)
        data = gzip.decompress(data)
    text = data.decode("utf-8-sig", errors="replace")
    return Input(str(p), text)


def _expand(item: str | os.PathLike) -> list[Path]:
    s = os.fspath(item)
    if any(ch in s for ch in "*?["):
        hits = sorted(glob.glob(os.path.expanduser(s), recursive=True))
        if not hits:
            raise FileNotFoundError(f"{s}: the pattern matches no file")
        return [Path(h) for h in hits]
    return [resolve(s)]


def open_inputs(source: Source) -> list[Input]:
    """Named texts from a path, a glob, a list of paths, an open text stream or a string."""
    return [read_path(x) if isinstance(x, Path) else x for x in resolve_sources(source)]


def resolve_sources(source: Source) -> list[Path | Input]:
    """Files (not yet read) or texts from a path, a glob, a list of paths, a stream or a string.

    A ``str`` containing a newline (or starting with ``{``, one-line JSON) is the
    text itself; otherwise it is a path (a glob pattern when it contains ``*?[``).
    """
    if isinstance(source, io.TextIOBase) or (hasattr(source, "read") and not isinstance(source, (str, bytes))):
        text = source.read()
        if isinstance(text, bytes):
            text = text.decode("utf-8-sig", errors="replace")
        name = getattr(source, "name", None)
        return [Input(str(name) if isinstance(name, str) else "<stream>", text.removeprefix("\ufeff"))]
    if isinstance(source, str) and ("\n" in source or "\r" in source or source.lstrip().startswith("{")):
        return [Input("<text>", source.removeprefix("\ufeff"))]
    if isinstance(source, (str, os.PathLike)):
        return list(_expand(source))
    if isinstance(source, Iterable):
        items = list(source)
        if not items:
            raise ValueError("empty list of sources")
        paths: list[Path] = []
        for it in items:
            if not isinstance(it, (str, os.PathLike)):
                raise TypeError(f"a list of sources must hold paths, got {type(it).__name__}")
            paths.extend(_expand(it))
        return list(paths)
    raise TypeError(f"cannot read latency from {type(source).__name__}; give a path, glob, list, stream or text")
