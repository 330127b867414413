"""The ``source`` argument every loader accepts, taken apart once for all of them.

A source is a path, a glob pattern, a list of those, an open stream, or a
string of text (a ``str`` holding a newline). :func:`split_sources` turns it
into files (``Path``, not yet read), :class:`Text` and :class:`Stream` items;
each loader then reads them its own way (whole, in blocks, gunzipped, …).
"""
from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TextIO

from .paths import resolve

Source = str | os.PathLike | TextIO | Iterable[str | os.PathLike]


@dataclass(frozen=True)
class Text:
    """Text given inline, with the name used in messages."""

    name: str
    text: str


@dataclass(frozen=True)
class Stream:
    """An open stream (text or binary), not yet read."""

    name: str
    stream: IO


Item = Path | Text | Stream


def _has_newline(s: str) -> bool:
    return "\n" in s or "\r" in s


def expand(item: str | os.PathLike, what: str = "input") -> list[Path]:
    """Files named by one path or glob pattern (sorted; ``**`` recursive).

    A pattern character in the name of a file that exists is taken literally.
    Relative paths fall back to the project root (:func:`workbench.paths.resolve`).
    """
    s = os.fspath(item)
    if any(ch in s for ch in "*?[") and not os.path.exists(s):
        hits = sorted(glob.glob(os.path.expanduser(s), recursive=True))
        if not hits:
            raise FileNotFoundError(f"{s}: the pattern matches no file")
        return [Path(h) for h in hits]
    try:
        return [resolve(s)]
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{s}: no such {what} file (pass a string containing a newline to parse text)") from None


def split_sources(source: Source, what: str = "input",
                  is_text: Callable[[str], bool] = _has_newline) -> list[Item]:
    """Files, inline texts and streams from any accepted ``source``, in order.

    ``is_text`` decides when a ``str`` is text rather than a path (default: it
    holds a newline). ``what`` names the format in error messages.
    """
    if hasattr(source, "read") and not isinstance(source, (str, bytes, os.PathLike)):
        name = getattr(source, "name", None)
        return [Stream(name if isinstance(name, str) else "<stream>", source)]  # type: ignore[arg-type]
    if isinstance(source, str) and is_text(source):
        return [Text("<text>", source)]
    if isinstance(source, (str, os.PathLike)):
        return list(expand(source, what))
    if isinstance(source, Iterable) and not isinstance(source, bytes):
        items = list(source)
        if not items:
            raise ValueError(f"empty list of {what} sources")
        out: list[Item] = []
        for it in items:
            if not isinstance(it, (str, os.PathLike)):
                raise TypeError(f"a list of {what} sources must hold paths, got {type(it).__name__}")
            out.extend(expand(it, what))
        return out
    raise TypeError(f"cannot read {what} from {type(source).__name__}; give a path, glob, list, stream or text")


def read_stream(stream: IO, encoding: str = "utf-8") -> str:
    """The whole content of a text or binary stream as text (bytes decoded with ``encoding``)."""
    data = stream.read()
    return data.decode(encoding, errors="replace") if isinstance(data, bytes) else data
