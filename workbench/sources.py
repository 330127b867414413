"""The ``source`` argument every loader accepts, and the reject collector, written once for all.

A source is a path, a glob pattern, a list of those, an open stream, or a
string of text (a ``str`` holding a newline). :func:`split_sources` turns it
into files (``Path``, not yet read), :class:`Text` and :class:`Stream` items;
:func:`open_inputs` reads them all into named texts (:class:`Input`),
decompressing gzip, bzip2, xz and zstd by their magic bytes. A loader that
reads big files its own way (in blocks) takes the paths from
:func:`resolve_inputs` and reads them with :func:`read_bytes`.

:class:`Collector` keeps the rejected records of one input; under ``strict``
its :meth:`Collector.check` raises the earliest one, by line, once the input is
parsed — the one ``strict`` behaviour of every loader.

Incomplete last line: a file or stream whose last line has no line end was
cut while it was written (a capture still running, a copy stopped short), so
that line is never a record. Line-oriented loaders call
:meth:`Input.complete`, which rejects it with the reason
:data:`INCOMPLETE` ("incomplete last line") and parses the rest; a compressed
file is judged by its decompressed content. Text the program passes inline (a
``str`` source) is whole by construction: its last line needs no line end.
A blank last line is not a record and is not rejected.
"""
from __future__ import annotations

import bz2
import glob
import gzip
import lzma
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TextIO, cast

from .errors import ArgumentTypeError, InputNotFoundError, ParseError, UsageError
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
            raise InputNotFoundError(f"{s}: the pattern matches no file")
        return [Path(h) for h in hits]
    try:
        return [resolve(s)]
    except FileNotFoundError:
        raise InputNotFoundError(
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
            raise UsageError(f"empty list of {what} sources")
        out: list[Item] = []
        for it in items:
            if not isinstance(it, (str, os.PathLike)):
                raise ArgumentTypeError(f"a list of {what} sources must hold paths, got {type(it).__name__}")
            out.extend(expand(it, what))
        return out
    raise ArgumentTypeError(f"cannot read {what} from {type(source).__name__}; give a path, glob, list, stream or text")


#: magic bytes → compression name, for :func:`decompress`
MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd"}


def compression_of(head: bytes) -> str | None:
    """The compression a file's first bytes announce (gzip, bzip2, xz, zstd), or None."""
    for magic, name in MAGIC.items():
        if head.startswith(magic):
            return name
    return None


def decompress(data: bytes, name: str = "<bytes>") -> bytes:
    """``data`` decompressed when its magic bytes say gzip, bzip2, xz or zstd; else as given.

    A damaged compressed stream raises :class:`ParseError` naming ``name``.
    """
    kind = compression_of(data[:6])
    if kind is None:
        return data
    try:
        if kind == "gzip":
            return gzip.decompress(data)
        if kind == "bzip2":
            return bz2.decompress(data)
        if kind == "xz":
            return lzma.decompress(data)
        import pyarrow as pa

        with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as f:
            return bytes(f.read())
    except (OSError, EOFError, ValueError, lzma.LZMAError) as exc:
        raise ParseError(name, None, "", f"damaged {kind} data ({exc}); expected a complete {kind} file") from None


def compression_of_file(path: Path) -> str | None:
    """The compression a file's magic bytes announce (gzip, bzip2, xz, zstd), or None; the suffix is not used."""
    with open(path, "rb") as f:
        return compression_of(f.read(6))


def open_decompressed(path: Path) -> IO[bytes]:
    """A binary stream of a file's content, decompressed on the fly when its magic bytes say so.

    Streams: nothing is decompressed into memory as a whole. The caller closes it.
    """
    kind = compression_of_file(path)
    stream: Any
    if kind == "gzip":
        stream = gzip.open(path, "rb")
    elif kind == "bzip2":
        stream = bz2.open(path, "rb")
    elif kind == "xz":
        stream = lzma.open(path, "rb")
    elif kind == "zstd":
        import pyarrow as pa

        stream = pa.CompressedInputStream(pa.OSFile(str(path), "rb"), "zstd")
    else:
        stream = open(path, "rb")  # noqa: SIM115 - the caller closes it
    return cast("IO[bytes]", stream)


def read_bytes(path: Path) -> bytes:
    """A file's content, decompressed when its magic bytes say it is compressed."""
    return decompress(path.read_bytes(), str(path))


def decode(data: bytes) -> str:
    """Bytes as text: UTF-8 (a byte-order mark dropped); undecodable bytes become U+FFFD."""
    return data.decode("utf-8-sig", errors="replace")


def read_stream(stream: IO, encoding: str = "utf-8") -> str:
    """The whole content of a text or binary stream as text (bytes decompressed and decoded)."""
    data = stream.read()
    if isinstance(data, bytes):
        data = decompress(data, getattr(stream, "name", "<stream>") if isinstance(getattr(stream, "name", None), str)
                          else "<stream>")
        return data.decode(encoding + ("-sig" if encoding == "utf-8" else ""), errors="replace")
    return data.removeprefix("\ufeff")


#: the reject reason of a last line without its line end (files and streams)
INCOMPLETE = "incomplete last line"


def incomplete_tail(text: str, newline_only: bool = False) -> tuple[int, str] | None:
    """(1-based line number, text) of ``text``'s last line when it has no line end and is not blank, else None.

    Lines are counted as :meth:`str.splitlines` counts them, or by ``\\n`` alone
    with ``newline_only`` (for loaders that split on it).
    """
    if not text or text[-1] in ("\n" if newline_only else "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"):
        return None
    lines = text.split("\n") if newline_only else text.splitlines()
    return (len(lines), lines[-1]) if lines and lines[-1].strip() else None


@dataclass
class Input:
    """One input text with the name used in messages (a path, ``<text>`` or ``<stream>``).

    ``inline``: the text was given by the program (a ``str`` source), so its last
    line is whole even without a line end (see :meth:`complete`).
    """

    name: str
    text: str
    _lines: list[str] | None = field(default=None, repr=False, compare=False)
    inline: bool = False

    def complete(self, col: Collector, newline_only: bool = False) -> Input:
        """This input without an incomplete last line, which ``col`` rejects (:data:`INCOMPLETE`).

        Files and streams only; inline text is returned as it is. ``newline_only``:
        lines end at ``\\n`` alone (see :func:`incomplete_tail`).
        """
        tail = None if self.inline else incomplete_tail(self.text, newline_only)
        if tail is None:
            return self
        line, last = tail
        col.reject(line, last, INCOMPLETE)
        return Input(self.name, self.text[: len(self.text) - len(last)], inline=self.inline)

    def line(self, n: int) -> str:
        """The text of 1-based line ``n`` (empty when out of range)."""
        if self._lines is None:
            self._lines = self.text.splitlines()
        return self._lines[n - 1] if 0 < n <= len(self._lines) else ""


def read_path(path: Path) -> Input:
    """A file as a named text (decompressed, decoded)."""
    return Input(str(path), decode(read_bytes(path)))


def resolve_inputs(source: Source, what: str = "input", is_text: Callable[[str], bool] = _has_newline,
                   directories: bool = False) -> list[Path | Input]:
    """Files (not yet read) and texts from any accepted ``source``, in order.

    With ``directories`` a folder stands for every file below it (sorted,
    recursive); otherwise a folder is an error naming it.
    """
    out: list[Path | Input] = []
    for item in split_sources(source, what, is_text=is_text):
        if isinstance(item, Text):
            out.append(Input(item.name, item.text.removeprefix("\ufeff"), inline=True))
        elif isinstance(item, Stream):
            out.append(Input(item.name, read_stream(item.stream)))
        elif item.is_dir():
            if not directories:
                raise UsageError(f"{item}: is a folder; expected a {what} file")
            files = sorted(q for q in item.rglob("*") if q.is_file())
            if not files:
                raise InputNotFoundError(f"{item}: folder holds no {what} file")
            out.extend(files)
        else:
            out.append(item)
    return out


def open_inputs(source: Source, what: str = "input", is_text: Callable[[str], bool] = _has_newline,
                directories: bool = False) -> list[Input]:
    """Named texts from any accepted ``source`` (files read, decompressed and decoded)."""
    return [read_path(x) if isinstance(x, Path) else x
            for x in resolve_inputs(source, what, is_text, directories)]


@dataclass
class Collector:
    """The rejected records of one input; with ``strict``, :meth:`check` raises the earliest one.

    Parsers call :meth:`reject` for every record they cannot use and
    :meth:`skip` for records that parse but are not data (counted in
    ``attrs["skipped"]``); the loader calls :meth:`check` once the input is
    parsed, so ``strict=True`` always reports the first bad line of the file,
    whatever order the parser found them in.
    """

    source: str
    strict: bool = False
    rows: list[tuple[str, int, str, str]] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)

    def reject(self, line: int, text: str, reason: str) -> None:
        """Keep a rejected record (1-based ``line``, 0 when not line-based)."""
        self.rows.append((self.source, int(line), text, reason))

    def skip(self, what: str, n: int = 1) -> None:
        """Count records that parse fine but are not data records."""
        self.skipped[what] = self.skipped.get(what, 0) + n

    def check(self) -> None:
        """With ``strict``, raise :class:`ParseError` for the earliest rejected record (by line)."""
        if self.strict and self.rows:
            src, line, text, reason = min(self.rows, key=lambda r: r[1])
            raise ParseError(src, line or None, text, reason)  # line 0: a record that is not a line

    def sorted_rows(self) -> list[tuple[str, int, str, str]]:
        """The rejects in line order."""
        return sorted(self.rows, key=lambda r: r[1])
