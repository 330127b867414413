"""The strace line grammar shared by the scanners: codes, character classes, value rules and patterns.

Both Python scanners read it — the reference's sequential rules
(:mod:`._reference`) and the column-at-a-time tokenizer (:mod:`._vector`) —
and the C scanner (``_native.c``) mirrors it: its ``enum``s of row kinds,
timestamp modes and pid modes, ``NA`` and the day lengths hold the same values
as the constants here (a test reads them out of the C source and compares).

A record line is ``[PID ][TIMESTAMP ]BODY``; :func:`head_pattern` gives the
regex of the part before the body for one pid mode and timestamp mode, and
:func:`fast_patterns` the whole-line regexes of the three commonest bodies (a
complete call, an ``<unfinished ...>`` half, a ``<... NAME resumed>`` half).
:func:`vector_patterns` gives the same three in RE2 syntax for pyarrow.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# -- row kinds (the ``kind`` column's categories, in code order) ---------------------------------
KINDS = ("call", "unfinished", "signal", "stopped", "exit", "killed", "superseded")
K_CALL, K_UNFINISHED, K_SIGNAL, K_STOPPED, K_EXIT, K_KILLED, K_SUPERSEDED = range(7)

# -- how a trace prints pids and timestamps -----------------------------------------------------
TS_NONE, TS_TOD, TS_EPOCH, TS_REL = range(4)  # none, -t/-tt (time of day), -ttt/ns (epoch), -r
PID_NONE, PID_COLUMN, PID_FIXED = range(3)  # none or [pid N], a pid column, one pid per file (-ff)

NA = -(2**63)  # missing int64 (timestamps, durations, retval, pid)
DAY_NS = 86_400_000_000_000
HALF_DAY_NS = DAY_NS // 2  # a -t/-tt stamp this far before the previous one has passed midnight

# -- markers and character classes ---------------------------------------------------------------
UNFINISHED_MARK = " <unfinished ...>"
COLOUR_REASON = "ANSI colour escape in the trace: re-run strace with --color=never or -o FILE"
DIGITS = "0123456789"
HEX_DIGITS = "0123456789abcdef"
ERRNO_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"

# -- values ---------------------------------------------------------------------------------------
_M64 = 1 << 64


def wrap_int64(v: int) -> int:
    """``v`` modulo 2**64 as a signed int64 (two's complement), as the C scanner stores it."""
    v %= _M64
    return v - _M64 if v >= 1 << 63 else v


def parse_retval(tok: str) -> int:
    """The value of a return token: ``?`` (NA), hex ``0x…``, negative, octal ``0…`` or decimal, wrapped to int64."""
    if tok == "?":
        return NA
    if tok.startswith("0x"):
        return wrap_int64(int(tok[2:], 16))
    if tok.startswith("-"):
        return wrap_int64(-int(tok[1:]))
    if len(tok) > 1 and tok[0] == "0" and all(c in "01234567" for c in tok):
        return wrap_int64(int(tok, 8))
    return wrap_int64(int(tok))


# -- patterns ------------------------------------------------------------------------------------
#: the timestamp after the pid prefix, per timestamp mode (groups: whole part, fraction)
TS_PATTERNS = {
    TS_NONE: "",
    TS_TOD: r"([0-9]{1,2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]{1,9}))? ",
    TS_EPOCH: r"([0-9]+)(?:\.([0-9]{1,9}))? ",
    TS_REL: r" *([0-9]+)\.([0-9]{1,9}) ",
}
#: a simple return tail from the closing parenthesis to the end of the line
#: (groups: return text, value token, errno, duration seconds, duration fraction)
TAIL_PATTERN = (r"\) += ((-?[0-9]+|0x[0-9a-f]+|\?)(?:<[^<>\"\[\]\\\n]*>)?(?: (E[A-Z0-9_]+) \([^()\"<>\[\]\n]*\))?)"
                r"(?: <([0-9]+)(?:\.([0-9]{1,9}))?>)?\Z")


def head_pattern(pid_mode: int, ts_mode: int) -> str:
    """The start of a record line: the pid column (if any) and the timestamp (if any)."""
    return "^" + (r"([0-9]+) +" if pid_mode == PID_COLUMN else "") + TS_PATTERNS[ts_mode]


def fast_patterns(pid_mode: int, ts_mode: int) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    r"""Whole-line regexes for the three commonest shapes (complete, unfinished, resumed).

    They accept a subset of what the general rules accept and give the same
    fields: a greedy ``(.*)`` before ``\) = `` picks the rightmost ``)`` whose
    (simple) tail reaches the end of the line, which is the general rule's choice.
    """
    head = head_pattern(pid_mode, ts_mode)
    complete = re.compile(head + r"([A-Za-z0-9_]+)\((.*)" + TAIL_PATTERN)
    unfinished = re.compile(head + r"([A-Za-z0-9_]+)\((.*) <unfinished \.\.\.>\Z")
    resumed = re.compile(head + r"<\.\.\. ([A-Za-z0-9_]+) resumed>(?! )(.*)" + TAIL_PATTERN)
    return complete, unfinished, resumed


# -- line shapes of the column-at-a-time tokenizer -----------------------------------------------
COMPLETE, UNFINISHED, RESUMED, OTHER = 0, 1, 2, 3


@dataclass(frozen=True)
class Patterns:
    """The fast shapes in RE2 syntax (pyarrow's regex kernels)."""

    any: str  # a line of one of the three shapes
    resumed_head: str  # the start of a resumed half


def vector_patterns(pid_mode: int, ts_mode: int) -> Patterns:
    """The three :func:`fast_patterns`, in RE2 syntax, as one alternation; and a resumed half's start.

    The shapes exclude each other: after the head a resumed half has '<', the
    others a name; a call's return tail cannot end in ' <unfinished ...>'.
    """
    shapes = [p.pattern.replace(r"\Z", "$") for p in fast_patterns(pid_mode, ts_mode)]
    lookahead = "(?! )(.*)"  # RE2 has no look-ahead: the same language as a character class
    assert shapes[2].count(lookahead) == 1, shapes[2]
    shapes[2] = shapes[2].replace(lookahead, "((?:[^ ].*)?)")
    return Patterns(any="|".join(f"(?:{p})" for p in shapes),
                    resumed_head=head_pattern(pid_mode, ts_mode) + "<")
