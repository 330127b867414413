"""Column-at-a-time tokenizer for the reference scanner (pyarrow's RE2 kernels and numpy).

It takes the three commonest line shapes of a block — a complete call, an
``<unfinished ...>`` half and a ``<... resumed>`` half — and gives their fields
as arrays; every other line is left to the sequential rules of
:mod:`._reference` (shape ``OTHER``). A line is taken only when

* it is ASCII (other bytes are decoded by the sequential rules);
* the whole line matches the same regex as the reference's fast patterns
  (:func:`._grammar.vector_patterns` of :func:`._grammar.fast_patterns`; RE2
  and Python agree on these: no back-references, and the one look-ahead is
  rewritten as a character class);
* for a complete call or a resumed half, ``) = `` (``\\) +=``) occurs exactly
  once in the line, so the greedy choice of the closing parenthesis is the
  only one.

Under these conditions the fields are where the cut points below say, and
they equal the fast patterns' groups (checked by the test suite, which runs
both ways on real captures and generated traces).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.lib.stride_tricks import sliding_window_view

from ._grammar import (
    COMPLETE,
    DIGITS,
    ERRNO_CHARS,
    NA,
    NAME_CHARS,
    OTHER,
    PID_COLUMN,
    RESUMED,
    TS_EPOCH,
    TS_TOD,
    UNFINISHED,
    UNFINISHED_MARK,
    Patterns,
    parse_retval,
)

_UNF = UNFINISHED_MARK.encode()
_POW = np.array([10 ** (9 - k) for k in range(10)], dtype=np.int64)


@dataclass
class Block:
    """Fields of one block; positions are line indexes within the block."""

    n: int
    starts: np.ndarray  # byte offset of each line
    ends: np.ndarray  # byte offset of each line's end (its newline)
    shape: np.ndarray  # int8 per line
    raw: np.ndarray | None  # int64 per line: timestamp in ns before midnight roll-over (fast lines only)
    cpos: np.ndarray
    upos: np.ndarray
    rpos: np.ndarray
    pid: np.ndarray | None  # int64 per line (NA for other lines), None without a pid column
    # per shape, in line order: name, args (large_string), and for C/R ret, retval, errno, dur
    c: dict
    u: dict
    r: dict


def tokenize(block: bytes, pid_mode: int, ts_mode: int, pats: Patterns) -> Block | None:
    """Fields of the fast lines of ``block`` (whole lines), or None when the block needs the sequential loop."""
    if not block:
        return None
    buf = np.frombuffer(block, dtype=np.uint8)
    starts, ends, lines = _lines(block, buf)
    n = len(ends)
    shape, split, eqpos = _classify(buf, ends, lines, pats)
    fast = np.flatnonzero(shape != OTHER)
    if not len(fast) or (ends[fast] - starts[fast]).max() >= 1 << 31:
        return None  # nothing to take in bulk (or a line beyond int32): the sequential loop does it all
    # cut points of the fast lines: their syntax is known, so each field is found by a short scan or a
    # fixed-width read (padding makes reads past the end of the block safe)
    b, e = starts[fast], ends[fast]
    isr = shape[fast] == RESUMED
    isu = shape[fast] == UNFINISHED
    win = sliding_window_view(np.concatenate([buf, np.zeros(_PAD, dtype=np.uint8)]), _PAD)
    pos = b.copy()
    pid = None
    if pid_mode == PID_COLUMN:
        got = _pid(buf, win, b, e)
        if got is None:
            return None
        pid, pos = got
    raw = None
    if ts_mode in (TS_TOD, TS_EPOCH):
        got = _tod(buf, win, pos, e) if ts_mode == TS_TOD else _epoch(buf, pos, e)
        if got is None:
            return None
        t, pos = got
        raw = np.zeros(n, dtype=np.int64)
        raw[fast] = t
        pos = pos + 1  # the space before the body
    name_s = np.where(isr, pos + 5, pos)  # '<... NAME resumed>' or 'NAME('
    # the name ends at the line's first '(' (a call, an unfinished half) or at the space before 'resumed>'
    name_e = np.empty(len(fast), dtype=np.int64)
    name_e[~isr] = _next(buf, 40, name_s[~isr])
    name_e[isr] = _scan(buf, name_s[isr], e[isr], _NAMECH)
    a = np.where(isr, name_e + 9, name_e + 1)  # the arguments start after ' resumed>' or '('
    z = np.where(isu, e - len(_UNF), split[fast])  # and end at ' <unfinished ...>' or ') += '
    ret_s = np.where(isu, z, eqpos[fast] + 2)
    ret = _returns(block, buf, win, isu, ret_s, e)
    if ret is None:
        return None
    ret_e, rv, err_s, err_e, has_err, dur = ret
    # strings: per shape and column, the pieces of the buffer taken out (copied once)
    data = pa.py_buffer(block)
    size = len(buf)
    null = pa.scalar(None, pa.large_string())

    def cols(k: int) -> dict:
        sel = shape[fast] == k
        d = {"name": _pieces(data, size, name_s[sel], name_e[sel]),
             "args": _pieces(data, size, a[sel], z[sel])}
        if k != UNFINISHED:
            d.update(ret=_pieces(data, size, ret_s[sel], ret_e[sel]), retval=rv[sel], dur=dur[sel],
                     errno=pc.if_else(pa.array(has_err[sel]), _pieces(data, size, err_s[sel], err_e[sel]), null))
        return d

    line_pid = None
    if pid is not None:
        line_pid = np.full(n, NA, dtype=np.int64)
        line_pid[fast] = pid
    cpos, upos, rpos = (np.flatnonzero(shape == k) for k in (COMPLETE, UNFINISHED, RESUMED))
    return Block(n=n, starts=starts, ends=ends, shape=shape, raw=raw, cpos=cpos, upos=upos, rpos=rpos,
                 pid=line_pid, c=cols(COMPLETE), u=cols(UNFINISHED), r=cols(RESUMED))


def _lines(block: bytes, buf: np.ndarray) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """Start and end (newline) offsets of every line, and the lines as an Arrow binary array."""
    size = len(buf)
    nl = np.flatnonzero(buf == 10)
    ends = (nl if block[-1:] == b"\n" else np.append(nl, size)).astype(np.int64)
    n = len(ends)
    starts = np.empty(n, dtype=np.int64)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    offs = np.empty(2 * n + 1, dtype=np.int64)  # lines and newlines alternate; the lines are taken out
    offs[0:2 * n:2] = starts
    offs[1:2 * n:2] = ends
    offs[2 * n] = size
    both = pa.Array.from_buffers(pa.large_binary(), 2 * n, [None, pa.py_buffer(offs), pa.py_buffer(block)])
    return starts, ends, both.take(pa.array(np.arange(0, 2 * n, 2)))


def _classify(buf: np.ndarray, ends: np.ndarray, lines: pa.Array,
              pats: Patterns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shape of every line, and for complete calls and resumed halves where their ``) += `` is."""
    n = len(ends)
    ok = np.ones(n, dtype=bool)
    if buf.max() >= 0x80:  # the sequential rules decode other bytes
        ok[np.searchsorted(ends, np.flatnonzero(buf >= 0x80), side="right")] = False
    unf = pc.ends_with(lines, _UNF).to_numpy(zero_copy_only=False)
    good = ok & pc.match_substring_regex(lines, pats.any).to_numpy(zero_copy_only=False)
    resumed = pc.match_substring_regex(lines, pats.resumed_head).to_numpy(zero_copy_only=False)
    shape = np.full(n, OTHER, dtype=np.int8)
    shape[good & unf] = UNFINISHED
    shape[good & ~unf & resumed] = RESUMED
    shape[good & ~unf & ~resumed] = COMPLETE
    # the closing parenthesis: one ') += ' in the line, or the line goes to the sequential rules
    cr = np.flatnonzero((shape == COMPLETE) | (shape == RESUMED))
    split = np.zeros(n, dtype=np.int64)  # absolute position of that ')'
    eqpos = np.zeros(n, dtype=np.int64)  # and of its '='
    if len(cr):
        paren, eq = _closings(buf)
        line_of = np.searchsorted(ends, paren)
        once = np.bincount(line_of, minlength=n)[cr] == 1
        first = np.searchsorted(line_of, cr)  # candidates are in position order, so in line order
        split[cr[once]] = paren[first[once]]
        eqpos[cr[once]] = eq[first[once]]
        shape[cr[~once]] = OTHER
    return shape, split, eqpos


def _returns(block: bytes, buf: np.ndarray, win: np.ndarray, isu: np.ndarray, ret_s: np.ndarray,
             e: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The return tail from ``ret_s``: where its text ends, the value, the errno name's span, the duration.

    Returns (ret_end, retval, errno_start, errno_end, has_errno, duration_ns), or None for a duration
    beyond int64 nanoseconds. Unfinished halves (``isu``) get empty spans and missing values.
    """
    # a duration ' <S.F>' ends the line: digits and a dot back from the '>' to a '<' after a space;
    # the usual ' <S.ffffff>' is read in one step
    w = win[np.maximum(e - 11, 0), :11]
    fixed = ~isu & (w[:, 0] == 32) & (w[:, 1] == 60) & (w[:, 3] == 46) & (w[:, 10] == 62) \
        & ((w[:, _DUR_AT] - 48) < 10).all(axis=1) & (e - 10 > ret_s)
    ends_gt = ~isu & ~fixed & (buf[e - 1] == 62)
    lt_at = np.where(fixed, e - 10, ret_s)
    if ends_gt.any():
        lt_at[ends_gt] = _scan_back(buf, e[ends_gt] - 1, ret_s[ends_gt], _DURCH)
    has_dur = fixed | (ends_gt & (lt_at > ret_s) & (buf[lt_at] == 60) & (buf[lt_at - 1] == 32))
    ret_e = np.where(isu, ret_s, np.where(has_dur, lt_at - 1, e))
    dur = np.full(len(e), NA, dtype=np.int64)
    dur[fixed] = (w[fixed][:, _DUR_AT].astype(np.int64) - 48) @ _DUR_NS
    general = np.flatnonzero(has_dur & ~fixed)
    if len(general):
        e_g = e[general]
        d0 = lt_at[general] + 1
        d1 = _scan(buf, d0, e_g, _DIGIT)
        if (d1 - d0).max() >= 10:
            return None
        dfrac = buf[d1] == 46
        df0 = np.where(dfrac, d1 + 1, e_g)
        df1 = np.where(dfrac, e_g - 1, e_g)
        dur[general] = _uint(buf, d0, d1) * 1_000_000_000 + _uint(buf, df0, df1) * _POW[df1 - df0]
    # the value token ends at '<' (annotation), ' ' or the end of the return text
    last = len(buf) - 1
    tok_e = _scan(buf, ret_s, ret_e, _TOKEN)
    ann = (tok_e < ret_e) & (buf[np.minimum(tok_e, last)] == 60)
    after = tok_e.copy()
    if ann.any():  # an annotation holds no '<' or '>': it ends at the first '>'
        after[ann] = _next(buf, 62, tok_e[ann]) + 1
    has_err = ~isu & (after + 1 < ret_e) & (buf[np.minimum(after, last)] == 32) \
        & (buf[np.minimum(after + 1, last)] == 69)
    err_s = np.where(has_err, after + 1, ret_e)
    err_e = np.where(has_err, _scan(buf, err_s, ret_e, _ERRCH), ret_e)
    # values: plain decimals here, the rest (hex, octal, '?', long) as the sequential rules read them
    neg = buf[ret_s] == 45
    tl = tok_e - ret_s
    simple = ~isu & (tl < 19) & (buf[ret_s] != 63) & ((buf[ret_s] != 48) | (tl == 1))
    rv = np.full(len(e), NA, dtype=np.int64)
    mag = _uint(buf, np.where(simple, ret_s + neg, e), np.where(simple, tok_e, e))
    rv[simple] = np.where(neg, -mag, mag)[simple]
    odd = np.flatnonzero(~isu & ~simple)
    if len(odd):
        rv[odd] = [parse_retval(block[x:y].decode("ascii"))
                   for x, y in zip(ret_s[odd].tolist(), tok_e[odd].tolist(), strict=True)]
    return ret_e, rv, err_s, err_e, has_err, dur


def _epoch(buf: np.ndarray, pos: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """'S[.F]' at ``pos``: ns and where it ends; None beyond int64 nanoseconds."""
    dot = _scan(buf, pos, e, _DIGIT)
    if (dot - pos).max() >= 11:
        return None
    whole = _uint(buf, pos, dot)
    if (whole > 9_223_372_035).any():
        return None
    return _fraction(buf, dot, e, whole * 1_000_000_000)


def _table(chars: bytes) -> np.ndarray:
    t = np.zeros(256, dtype=bool)
    t[np.frombuffer(chars, dtype=np.uint8)] = True
    return t


_DIGIT = _table(DIGITS.encode())
_SPACE = _table(b" ")
_TOKEN = _table(b"0123456789abcdefx?-")
_ERRCH = _table(ERRNO_CHARS.encode())
_DURCH = _table(b"0123456789.")
_NAMECH = _table(NAME_CHARS.encode())


def _scan(buf: np.ndarray, lo: np.ndarray, hi: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Per element, the first index in [lo, hi) whose byte is not in ``table``, else ``hi``."""
    pos = lo.copy()
    act = np.flatnonzero(lo < hi)
    act = act[table[buf[pos[act]]]]
    while len(act):
        pos[act] += 1
        act = act[pos[act] < hi[act]]
        act = act[table[buf[pos[act]]]]
    return pos


_PAD = 32
_DUR_AT = np.array([2, 4, 5, 6, 7, 8, 9])  # digits of ' <S.ffffff>'
_DUR_NS = 10 ** np.arange(9, 2, -1, dtype=np.int64)
_TOD_AT = np.array([0, 1, 3, 4, 6, 7, 9, 10, 11, 12, 13, 14])  # digits of 'HH:MM:SS.ffffff '
_TOD_NS = np.array([36_000, 3_600, 600, 60, 10, 1], dtype=np.int64) * 1_000_000_000
_TOD_NS = np.concatenate([_TOD_NS, 10 ** np.arange(8, 2, -1, dtype=np.int64)])


def _next(buf: np.ndarray, ch: int, lo: np.ndarray) -> np.ndarray:
    """Per element, the first index at or after ``lo`` holding byte ``ch`` (meaningless where there is none)."""
    at = np.flatnonzero(buf == ch)
    if not len(at):
        return lo.copy()
    return at[np.minimum(np.searchsorted(at, lo), len(at) - 1)]


def _pid(buf: np.ndarray, win: np.ndarray, b: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The pid column: values and where the timestamp starts; None for a pid over 10 digits (the line loop
    rejects those lines)."""
    g = int(_scan(buf, b[:1], e[:1], _DIGIT)[0] - b[0])  # the first line's width, tried on all
    if g > 10:
        return None
    w = win[b, :g + 2]
    fit = (w[:, g] == 32) & (w[:, g + 1] != 32) & ((w[:, :g] - 48) < 10).all(axis=1)
    pid = (w[:, :g].astype(np.int64) - 48) @ _TEN[g - 1::-1][:g] if g else np.zeros(len(b), dtype=np.int64)
    pos = b + g + 1
    other = np.flatnonzero(~fit)
    if len(other):
        sp = _scan(buf, b[other], e[other], _DIGIT)
        if (sp - b[other]).max() > 10:
            return None
        pid[other] = _uint(buf, b[other], sp)
        pos[other] = _scan(buf, sp, e[other], _SPACE)
    return pid, pos


def _fraction(buf: np.ndarray, pos: np.ndarray, e: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Add an optional '.F' (1-9 digits) at ``pos`` to ``t`` (ns); also return where it ends."""
    frac = buf[pos] == 46
    f0 = pos + 1
    f1 = np.where(frac, _scan(buf, f0, e, _DIGIT), f0)
    return t + _uint(buf, f0, f1) * _POW[np.where(frac, f1 - f0, 0)], np.where(frac, f1, pos)


def _tod(buf: np.ndarray, win: np.ndarray, pos: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """'H:MM:SS[.F]' at ``pos``: ns since midnight and where it ends (at its space).

    The usual 'HH:MM:SS.ffffff ' is read in one step; anything else field by field.
    """
    w = win[pos, :16]
    fit = (w[:, 2] == 58) & (w[:, 5] == 58) & (w[:, 8] == 46) & (w[:, 15] == 32) \
        & ((w[:, _TOD_AT] - 48) < 10).all(axis=1)
    t = (w[:, _TOD_AT].astype(np.int64) - 48) @ _TOD_NS
    end = pos + 15
    other = np.flatnonzero(~fit)
    if len(other):
        p = pos[other]
        one = buf[p + 1] == 58  # 'H:MM:SS'
        h = _uint(buf, p, p + 2 - one)
        p = p + 3 - one
        base = ((h * 60 + _uint(buf, p, p + 2)) * 60 + _uint(buf, p + 3, p + 5)) * 1_000_000_000
        t[other], end[other] = _fraction(buf, p + 5, e[other], base)
    return t, end


def _scan_back(buf: np.ndarray, hi: np.ndarray, lo: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Per element, the last index in [lo, hi) whose byte is not in ``table``, else ``lo``."""
    pos = hi - 1
    act = np.flatnonzero(pos > lo)
    act = act[table[buf[pos[act]]]]
    while len(act):
        pos[act] -= 1
        act = act[pos[act] > lo[act]]
        act = act[table[buf[pos[act]]]]
    return np.maximum(pos, lo)


def _closings(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of every ``) += `` in the block: its ')' and its '=', in order."""
    eq = np.flatnonzero(buf == 61)
    eq = eq[(eq >= 2) & (eq + 1 < len(buf))]
    eq = eq[(buf[eq + 1] == 32) & (buf[eq - 1] == 32)]
    first = eq - 1  # walk back to the first space of the run before '='
    act = np.flatnonzero(first > 0)
    act = act[buf[first[act] - 1] == 32]
    while len(act):
        first[act] -= 1
        act = act[first[act] > 0]
        act = act[buf[first[act] - 1] == 32]
    paren = first - 1
    keep = (paren >= 0) & (buf[np.maximum(paren, 0)] == 41)
    return paren[keep], eq[keep]


_TEN = np.array([10 ** k for k in range(19)], dtype=np.int64)


def _uint(buf: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The decimal digits in [lo, hi) as int64 (empty: 0); callers keep them under 19 digits."""
    width = hi - lo
    if not len(width):
        return np.zeros(0, dtype=np.int64)
    w = int(width.max())
    if w == 0:
        return np.zeros(len(lo), dtype=np.int64)
    k = np.arange(w)
    d = buf[np.minimum(lo[:, None] + k, len(buf) - 1)].astype(np.int64) - 48
    if int(width.min()) == w:
        return d @ _TEN[w - 1::-1][:w]
    p = width[:, None] - 1 - k
    return np.where(p >= 0, d * _TEN[np.maximum(p, 0)], 0).sum(axis=1)


def _pieces(data: pa.Buffer, size: int, lo: np.ndarray, hi: np.ndarray) -> pa.Array:
    """The byte ranges [lo, hi) (ordered, disjoint) of ``data`` as a large_string array."""
    cut = np.empty(2 * len(lo) + 2, dtype=np.int64)
    cut[0] = 0
    cut[1:-1:2] = lo
    cut[2:-1:2] = hi
    cut[-1] = size
    arr = pa.Array.from_buffers(pa.large_binary(), len(cut) - 1, [None, pa.py_buffer(cut), data])
    return arr.take(pa.array(np.arange(1, 2 * len(lo), 2))).cast(pa.large_string())
