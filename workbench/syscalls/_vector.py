"""Column-at-a-time tokenizer for the reference scanner (pyarrow's RE2 kernels and numpy).

It takes the three commonest line shapes of a block — a complete call, an
``<unfinished ...>`` half and a ``<... resumed>`` half — and gives their fields
as arrays; every other line is left to the sequential rules of
:mod:`._reference` (shape ``OTHER``). A line is taken only when

* it is ASCII (other bytes are decoded by the sequential rules);
* the whole line matches the same regex as the reference's fast patterns
  (``_fast_patterns``; RE2 and Python agree on these: no back-references, and
  the one look-ahead is rewritten as a character class);
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

from . import _reference as ref

COMPLETE, UNFINISHED, RESUMED, OTHER = 0, 1, 2, 3
_UNF = b" <unfinished ...>"
_TAIL = (r"\) += (?P<ret>(?P<tok>-?[0-9]+|0x[0-9a-f]+|\?)(?:<[^<>\"\[\]\\\n]*>)?"
         r"(?: (?P<err>E[A-Z0-9_]+) \([^()\"<>\[\]\n]*\))?)(?: <(?P<di>[0-9]+)(?:\.(?P<df>[0-9]{1,9}))?>)?")
_NAME = r"[A-Za-z0-9_]+"
_POW = np.array([10 ** (9 - k) for k in range(10)], dtype=np.int64)


def _head(pid_mode: int, ts_mode: int, named: bool) -> str:
    def g(name: str, body: str) -> str:
        return f"(?P<{name}>{body})" if named else f"(?:{body})"

    out = "^"
    if pid_mode == ref.PID_COLUMN:
        out += g("pid", "[0-9]+") + " +"
    if ts_mode == ref.TS_TOD:
        out += g("h", "[0-9][0-9]?") + ":" + g("m", "[0-9][0-9]") + ":" + g("s", "[0-9][0-9]")
        out += r"(?:\." + g("f", "[0-9]{1,9}") + ")? "
    elif ts_mode == ref.TS_EPOCH:
        out += g("sec", "[0-9]+") + r"(?:\." + g("f", "[0-9]{1,9}") + ")? "
    return out


@dataclass
class Patterns:
    complete: str
    unfinished: str
    resumed: str
    head: str
    tail: str


def patterns(pid_mode: int, ts_mode: int) -> Patterns:
    """The whole-line regexes (the reference's fast patterns in RE2 syntax) and the field extractors."""
    h = _head(pid_mode, ts_mode, named=False)
    tail = _TAIL.replace("?P<ret>", "?:").replace("?P<tok>", "?:").replace("?P<err>", "?:")
    tail = tail.replace("?P<di>", "?:").replace("?P<df>", "?:")
    return Patterns(
        complete=h + _NAME + r"\(.*" + tail + "$",
        unfinished=h + _NAME + r"\(.* <unfinished \.\.\.>$",
        resumed=h + r"<\.\.\. " + _NAME + r" resumed>(?:[^ ].*)?" + tail + "$",
        head=_head(pid_mode, ts_mode, named=True)
        + r"(?:(?P<name>" + _NAME + r")\(|<\.\.\. (?P<rname>" + _NAME + r") resumed>)$",
        tail="^" + _TAIL + "$",
    )


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
    # per shape, in line order: pid (int64), name, args (large_string), and for C/R ret, retval, errno, dur
    c: dict
    u: dict
    r: dict


def tokenize(block: bytes, pid_mode: int, ts_mode: int, pats: Patterns) -> Block | None:
    """Fields of the fast lines of ``block`` (whole lines), or None when the block needs the sequential loop."""
    buf = np.frombuffer(block, dtype=np.uint8)
    size = len(buf)
    if size == 0:
        return None
    nl = np.flatnonzero(buf == 10)
    ends = nl if block[-1:] == b"\n" else np.append(nl, size)
    n = len(ends)
    starts = np.empty(n, dtype=np.int64)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    ends = ends.astype(np.int64)
    offs = np.empty(2 * n + 1, dtype=np.int64)
    offs[0:2 * n:2] = starts
    offs[1:2 * n:2] = ends
    offs[2 * n] = size
    data = pa.py_buffer(block)
    both = pa.Array.from_buffers(pa.large_binary(), 2 * n, [None, pa.py_buffer(offs), data])
    lines = both.take(pa.array(np.arange(0, 2 * n, 2)))
    ok = np.ones(n, dtype=bool)
    if buf.max() >= 0x80:
        ok[np.searchsorted(ends, np.flatnonzero(buf >= 0x80), side="right")] = False
    unf = pc.ends_with(lines, _UNF).to_numpy(zero_copy_only=False) & ok
    shape = np.full(n, OTHER, dtype=np.int8)

    def valid(mask: np.ndarray, pattern: str) -> np.ndarray:
        idx = np.flatnonzero(mask)
        if not len(idx):
            return idx
        hit = pc.match_substring_regex(lines.take(pa.array(idx)), pattern).to_numpy(zero_copy_only=False)
        return idx[hit]

    upos = valid(unf, pats.unfinished)
    shape[upos] = UNFINISHED
    rest = ok & ~unf
    cpos = valid(rest, pats.complete)
    shape[cpos] = COMPLETE
    rest[cpos] = False
    ridx = np.flatnonzero(rest)
    if len(ridx):
        has = pc.match_substring(lines.take(pa.array(ridx)), "resumed>").to_numpy(zero_copy_only=False)
        rmask = np.zeros(n, dtype=bool)
        rmask[ridx[has]] = True
        rpos = valid(rmask, pats.resumed)
    else:
        rpos = ridx
    shape[rpos] = RESUMED
    # the closing parenthesis: one ') += ' in the line, or the line goes to the sequential rules
    cr = np.sort(np.concatenate([cpos, rpos]))
    split = np.zeros(n, dtype=np.int64)  # absolute position of that ')'
    eqpos = np.zeros(n, dtype=np.int64)  # and of its '='
    if len(cr):
        paren, eq = _closings(buf)
        line_of = np.searchsorted(ends, paren)
        count = np.bincount(line_of, minlength=n)
        once = count[cr] == 1
        first = np.searchsorted(line_of, cr)  # candidates are in position order, so in line order
        ok1 = cr[once]
        split[ok1] = paren[first[once]]
        eqpos[ok1] = eq[first[once]]
        shape[cr[~once]] = OTHER
        cpos = np.flatnonzero(shape == COMPLETE)
        rpos = np.flatnonzero(shape == RESUMED)
    fast = np.flatnonzero(shape != OTHER)
    if not len(fast):
        return None  # nothing to take in bulk: the sequential loop does it all
    if (ends[fast] - starts[fast]).max() >= 1 << 31:
        return None
    # absolute cut points of the fast lines (their syntax is known: no searching beyond what is below)
    b = starts[fast]
    e = ends[fast]
    isr = shape[fast] == RESUMED
    isu = shape[fast] == UNFINISHED
    pos = b.copy()
    if pid_mode == ref.PID_COLUMN:
        sp = _scan(buf, b, e, _DIGIT)  # the pid's digits, then spaces
        if (sp - b).max() >= 19:
            return None
        pid = _uint(buf, b, sp)
        pos = _scan(buf, sp, e, _SPACE)
    else:
        pid = None
    raw = None
    if ts_mode == ref.TS_TOD:
        one = buf[pos + 1] == 58  # 'H:MM:SS'
        h = _uint(buf, pos, pos + 2 - one)
        pos = pos + 3 - one
        mi = _uint(buf, pos, pos + 2)
        sec = _uint(buf, pos + 3, pos + 5)
        pos = pos + 5
        t = ((h * 60 + mi) * 60 + sec) * 1_000_000_000
    elif ts_mode == ref.TS_EPOCH:
        dot = _scan(buf, pos, e, _DIGIT)
        if (dot - pos).max() >= 11:
            return None
        whole = _uint(buf, pos, dot)
        if (whole > 9_223_372_035).any():
            return None
        t = whole * 1_000_000_000
        pos = dot
    if ts_mode in (ref.TS_TOD, ref.TS_EPOCH):
        frac = buf[pos] == 46
        f0 = pos + 1
        f1 = np.where(frac, _scan(buf, f0, e, _DIGIT), f0)
        t = t + _uint(buf, f0, f1) * _POW[np.where(frac, f1 - f0, 0)]
        pos = np.where(frac, f1, pos)
        raw = np.zeros(n, dtype=np.int64)
        raw[fast] = t
        pos = pos + 1  # the space before the body
    name_s = np.where(isr, pos + 5, pos)  # '<... NAME resumed>' or 'NAME('
    name_e = _scan(buf, name_s, e, _NAMECH)
    a = np.where(isr, name_e + 9, name_e + 1)  # after ' resumed>' or '('
    z = np.where(isu, e - len(_UNF), split[fast])
    # return text: after ') += ', up to ' <duration>' or the end
    ret_s = np.where(isu, z, eqpos[fast] + 2)
    # a duration ' <S.F>' ends the line: digits and a dot back from the '>' to a '<' after a space
    ends_gt = ~isu & (buf[e - 1] == 62)
    lt_at = np.where(ends_gt, _scan_back(buf, e - 1, ret_s, _DURCH), ret_s)
    has_dur = ends_gt & (lt_at > ret_s) & (buf[lt_at] == 60) & (buf[lt_at - 1] == 32)
    ret_e = np.where(isu, z, np.where(has_dur, lt_at - 1, e))
    # the value token ends at '<' (annotation), ' ' or the end of the return text
    tok_e = _scan(buf, ret_s, ret_e, _TOKEN)
    ann = (tok_e < ret_e) & (buf[np.minimum(tok_e, len(buf) - 1)] == 60)
    after = tok_e.copy()
    if ann.any():  # an annotation holds no '<' or '>': it ends at the first '>'
        gt = np.flatnonzero(buf == 62)
        after[ann] = gt[np.searchsorted(gt, tok_e[ann])] + 1
    has_err = ~isu & (after + 1 < ret_e) & (buf[np.minimum(after, len(buf) - 1)] == 32) \
        & (buf[np.minimum(after + 1, len(buf) - 1)] == 69)
    err_s = np.where(has_err, after + 1, ret_e)
    err_e = np.where(has_err, _scan(buf, err_s, ret_e, _ERRCH), ret_e)
    # durations
    d0 = lt_at + 1
    d1 = np.where(has_dur, _scan(buf, d0, e, _DIGIT), e)
    dur = np.full(len(fast), ref.NA, dtype=np.int64)
    if has_dur.any():
        if (np.where(has_dur, d1 - d0, 0)).max() >= 10:
            return None
        dfrac = has_dur & (buf[np.minimum(d1, len(buf) - 1)] == 46)
        df1 = np.where(dfrac, e - 1, d1 + 1)
        v = _uint(buf, np.where(has_dur, d0, e), np.where(has_dur, d1, e)) * 1_000_000_000 \
            + _uint(buf, np.where(dfrac, d1 + 1, e), np.where(dfrac, df1, e)) * _POW[np.where(dfrac, df1 - d1 - 1, 0)]
        dur[has_dur] = v[has_dur]
    # return values: plain decimals here, the rest (hex, octal, '?', long) as the sequential rules read them
    neg = buf[ret_s] == 45
    tl = tok_e - ret_s
    first = buf[np.where(neg, ret_s + 1, ret_s)]
    simple = ~isu & (tl < 19) & (first != 63) & ((buf[ret_s] != 48) | (tl == 1))
    rv = np.full(len(fast), ref.NA, dtype=np.int64)
    mag = _uint(buf, np.where(simple, ret_s + neg, e), np.where(simple, tok_e, e))
    rv[simple] = np.where(neg, -mag, mag)[simple]
    odd = np.flatnonzero(~isu & ~simple)
    if len(odd):
        rv[odd] = [ref._retval(block[x:y].decode("ascii")) for x, y in zip(ret_s[odd].tolist(), tok_e[odd].tolist(),
                                                                              strict=True)]
    # strings: one partition of the buffer per column kind, the wanted pieces taken out (copied once)
    names = _pieces(data, size, fast, name_s, name_e)
    args = _pieces(data, size, fast, a, z)
    rets = _pieces(data, size, fast, ret_s, ret_e)
    errs = _pieces(data, size, fast, err_s, err_e)
    errs = pc.if_else(pa.array(has_err), errs, pa.scalar(None, pa.large_string()))
    where = np.full(n, -1, dtype=np.int64)
    where[fast] = np.arange(len(fast))

    def cols(p: np.ndarray, tail: bool) -> dict:
        w = where[p]
        k = pa.array(w)
        d = {"pid": None if pid is None else pid[w], "name": names.take(k), "args": args.take(k)}
        if tail:
            d.update(ret=rets.take(k), retval=rv[w], errno=errs.take(k), dur=dur[w])
        return d

    return Block(n=n, starts=starts, ends=ends, shape=shape, raw=raw, cpos=cpos, upos=upos, rpos=rpos,
                 c=cols(cpos, True), u=cols(upos, False), r=cols(rpos, True))


def _table(chars: bytes) -> np.ndarray:
    t = np.zeros(256, dtype=bool)
    t[np.frombuffer(chars, dtype=np.uint8)] = True
    return t


_DIGIT = _table(b"0123456789")
_SPACE = _table(b" ")
_TOKEN = _table(b"0123456789abcdefx?-")
_ERRCH = _table(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_NAMECH = _table(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_DURCH = _table(b"0123456789.")


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


def _pieces(data: pa.Buffer, size: int, rows: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> pa.Array:
    """The byte ranges [lo, hi) (ordered, disjoint) of ``data`` as a large_string array."""
    cut = np.empty(2 * len(lo) + 2, dtype=np.int64)
    cut[0] = 0
    cut[1:-1:2] = lo
    cut[2:-1:2] = hi
    cut[-1] = size
    arr = pa.Array.from_buffers(pa.large_binary(), len(cut) - 1, [None, pa.py_buffer(cut), data])
    return arr.take(pa.array(np.arange(1, 2 * len(lo), 2))).cast(pa.large_string())
