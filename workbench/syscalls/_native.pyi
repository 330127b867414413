"""Types of the C strace scanner (``_native.c``), built by ``pip install -e .`` when a compiler is present.

The module exports one class, :class:`Parser`, and :func:`skip_lines`. :meth:`Parser.finish` returns
the raw columns as :class:`Blob` buffers (numbers: native-endian int32/int64
arrays, times float64 seconds, one item per row; text: Arrow ``large_string`` offsets, data and
validity bitmap) and the side tables as lists of tuples.
"""
from typing import TypedDict, type_check_only

from typing_extensions import Buffer

@type_check_only
class Blob:
    """Writable bytes owned by the scanner (``workbench.syscalls._native.Blob``; not exported): the frame's
    columns are views of them."""

    def __buffer__(self, flags: int, /) -> memoryview: ...

@type_check_only
class RawColumns(TypedDict):
    """What :meth:`Parser.finish` returns."""

    rows: int
    lines: int  # physical lines fed
    kind: Blob  # int32: index into the kinds (call, unfinished, signal, stopped, exit, killed, superseded)
    pid: Blob  # int64, INT64_MIN where missing
    ts: Blob  # float64 seconds, NaN where missing
    end: Blob  # float64 seconds
    dur: Blob  # float64 seconds
    name: Blob  # int32 code into names, -1 where missing
    retval: Blob  # int64
    errno: Blob  # int32 code into errnos, -1 where missing
    signal: Blob  # int32 code into signals, -1 where missing
    line: Blob  # int64, 1-based
    args: tuple[Blob, Blob, Blob | None]  # offsets (int64, rows + 1), UTF-8 data, validity bitmap or None
    ret_text: tuple[Blob, Blob, Blob | None]
    backtrace: tuple[Blob, Blob, Blob | None]
    names: list[str]
    errnos: list[str]
    signals: list[str]
    messages: list[tuple[int, str]]  # (line, text)
    rejects: list[tuple[int, str, str]]  # (line, text, reason)
    summary: list[tuple[int, str]]  # (line, text) of the -c/-C table

@type_check_only
class DrainedColumns(RawColumns):
    """What :meth:`Parser.drain` returns: :class:`RawColumns` of the rows given out, and

    ``held``, the rows kept (calls still ``<unfinished ...>`` and the last row);
    ``leader``, without a pid prefix, the pid that rows made before it was known
    were given once it became known (None until then).
    """

    held: int
    leader: int | None

class Parser:
    """Parser(pid_mode, ts_mode, fixed_pid=NA): native strace scanner."""

    def __init__(self, pid_mode: int, ts_mode: int, fixed_pid: int = ...) -> None: ...
    def feed(self, block: Buffer, /) -> None:
        """Parse a block of whole lines (bytes); runs without the GIL."""
    def finish(self, threads: int = 1, /) -> RawColumns:
        """Return the raw columns and side tables (once: the parser is spent afterwards).

        ``threads``: up to this many threads (at most 8, each at least 8 rows) copy the text columns
        into row order, the GIL released; the result is the same whatever the number.
        """
    def drain(self) -> DrainedColumns:
        """Return the rows no later line can change and go on scanning (see :class:`DrainedColumns`)."""
    def merge(self, other: Parser, threads: int = 1, /) -> bool:
        """Append a parser that scanned the following bytes; False when the split point cannot be joined.

        ``threads``: more than 1, their columns are appended after ours on two threads (the GIL
        released); the result is the same either way.

        Afterwards this parser is where one scanner of both parts would be: more
        parsers can be merged, lines fed, rows drained.
        """
    @property
    def colour(self) -> tuple[int, str] | None:
        """(line, text) of the first line with an ANSI colour escape, or None."""

def skip_lines(buffer: Buffer, n: int, /) -> tuple[int, int]:
    """(offset just past the ``n``-th newline of ``buffer``, or its length; newlines found); without the GIL."""
