"""Reference strace tokenizer in Python (with numpy and pyarrow for the bulk of a block).

It is the executable specification of the format: the native scanner
(``_native.c``) implements the same state machine and must produce the same
raw columns (checked by the test suite on real captures and generated traces).
It is used automatically when the extension is not built.

A block goes one of two ways, which give the same rows (tested both ways):

* ``_feed_seq``: every line through the sequential rules below, with whole-line
  regexes for the three commonest shapes (:func:`._grammar.fast_patterns`);
* ``_feed_vector``: with ``-t/-tt/-ttt`` or no timestamps (any pid prefix),
  those three shapes are tokenized column by column
  (:mod:`._vector`), ``<unfinished ...>``/``<... resumed>`` halves are joined
  per pid with numpy, and only the other lines meet the sequential rules.

Per physical line (see ``docs`` in :mod:`workbench.syscalls`):

1. summary mode (after a ``% time`` header, until the ``total`` row);
2. `` > `` stack frame: appended to the last record's ``stack``;
3. ``strace: …`` / ``[ Process …`` message: side table;
4. pid prefix (``column``: ``1234  `` or ``1234<comm> ``; ``none``: optional
   ``[pid 1234] `` with the pid of unprefixed lines inferred; ``fixed``);
5. timestamp (``tod`` ``HH:MM:SS[.f]`` with midnight roll-over, ``epoch``
   ``S.f``, ``rel`` ``-r`` deltas summed, or none), optional ``(+ S.f)``,
   ``[ nnn]`` / ``[hex]`` prefixes skipped;
6. body: ``<... NAME resumed>``, ``--- SIG … ---``, ``+++ … +++`` or
   ``NAME(ARGS`` followed by `` <unfinished ...>``-style marker or by the
   rightmost ``)`` from which the strict return tail parses to end of line.

A line that fails every rule and contains ``strace: `` is a stderr-mode splice:
the message goes to the side table and the line is joined with the next one.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from ._grammar import (
    COLOUR_REASON,
    COMPLETE,
    DAY_NS,
    DIGITS,
    ERRNO_CHARS,
    HALF_DAY_NS,
    HEX_DIGITS,
    K_CALL,
    K_EXIT,
    K_KILLED,
    K_SIGNAL,
    K_STOPPED,
    K_SUPERSEDED,
    K_UNFINISHED,
    NA,
    NAME_CHARS,
    OTHER,
    PID_COLUMN,
    PID_FIXED,
    PID_NONE,
    RESUMED,
    TS_EPOCH,
    TS_NONE,
    TS_PATTERNS,
    TS_REL,
    TS_TOD,
    UNFINISHED,
    UNFINISHED_MARK,
    Patterns,
    fast_patterns,
    parse_retval,
    vector_patterns,
    wrap_int64,
)

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

_DIGITS = frozenset(DIGITS)
_HEX = frozenset(HEX_DIGITS)
_ERRCH = frozenset(ERRNO_CHARS)
_NAMECH = frozenset(NAME_CHARS)
_PIDNUM = re.compile(r"Process (\d{1,10}) (attached|detached)")
# A fast path for the commonest tails; anything it refuses goes to _tail().
_SIMPLE_TAIL = re.compile(
    r" += (-?[0-9]+|0x[0-9a-f]+|\?)(?: (E[A-Z0-9_]+) \(([^()\"<>\[\]]*)\))?(?: <([0-9]+)(?:\.([0-9]{1,9}))?>)?\Z"
)
_I64 = 1 << 63


def _w(v: int) -> int:
    """v as the C scanner stores it: wrapped to int64 (two's complement)."""
    return v if -(1 << 63) <= v < (1 << 63) else wrap_int64(v)


PID_DIGITS = 10  # longer is no pid (pid_max is at most 2**22): the line is rejected, as the C scanner does


def _pid(text: str) -> int:
    return int(text)


def _isdec(v: str) -> bool:
    return v != "" and all(c in _DIGITS for c in v)


def _frac_ns(int_part: str, frac: str | None) -> int:
    """``int_part.frac`` seconds as integer nanoseconds (frac up to 9 digits)."""
    ns = int(int_part) * 1_000_000_000
    if frac:
        ns += int(frac) * 10 ** (9 - len(frac))
    return _w(ns)


def _skip_string(s: str, i: int) -> int:
    """s[i] == '"'; index after the closing quote, or -1."""
    n = len(s)
    i += 1
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        i += 1
    return -1


def _skip_angle(s: str, i: int) -> int:
    """s[i] == '<'; index after the matching '>' (nesting, [..] and strings skipped), or -1."""
    n = len(s)
    depth = 0
    while i < n:
        c = s[i]
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == '"':
            i = _skip_string(s, i)
            if i < 0:
                return -1
            continue
        elif c == "\\":
            i += 2
            continue
        elif c == "[":
            j = i + 1
            while j < n and s[j] != "]":
                if s[j] == '"':
                    j = _skip_string(s, j)
                    if j < 0:
                        return -1
                    continue
                j += 1
            if j >= n:
                return -1
            i = j
        i += 1
    return -1


def _skip_paren(s: str, i: int) -> int:
    """s[i] == '('; index after the matching ')', or -1."""
    n = len(s)
    depth = 0
    while i < n:
        c = s[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == '"':
            i = _skip_string(s, i)
            if i < 0:
                return -1
            continue
        elif c == "<":
            j = _skip_angle(s, i)
            if j > 0:
                i = j
                continue
        i += 1
    return -1


#: a parsed return tail: (return text, value, errno name or None, duration ns or NA)
Tail = tuple[str, int, str | None, int]


def _tail(s: str, i: int) -> Tail | None:
    """Parse the strict return tail starting right after the call's ')'.

    Returns (ret_text, retval, errno, dur_ns) or None when s[i:] is not a tail.
    """
    m = _SIMPLE_TAIL.match(s, i)
    if m is not None:
        tok, err, _, di, df = m.groups()
        end = m.start(4) - 2 if di is not None else len(s)
        dur = _frac_ns(di, df) if di is not None else NA
        return s[m.start(1):end], parse_retval(tok), err, dur
    n = len(s)
    if i >= n or s[i] != " ":
        return None
    while i < n and s[i] == " ":
        i += 1
    if i + 1 >= n or s[i] != "=" or s[i + 1] != " ":
        return None
    i += 2
    start = i
    if i < n and s[i] == "?":
        i += 1
    elif s.startswith("0x", i):
        i += 2
        j = i
        while i < n and s[i] in _HEX:
            i += 1
        if i == j:
            return None
    else:
        if i < n and s[i] == "-":
            i += 1
        j = i
        while i < n and s[i] in _DIGITS:
            i += 1
        if i == j:
            return None
    tok = s[start:i]
    if i < n and s[i] == "<":
        i = _skip_angle(s, i)
        if i < 0:
            return None
    if s.startswith(" /* ", i):
        j = s.find(" */", i + 4)
        if j < 0:
            return None
        i = j + 3
    errno = None
    if i + 2 < n and s[i] == " " and s[i + 1] == "E" and s[i + 2] in _ERRCH:
        j = i + 2
        while j < n and s[j] in _ERRCH:
            j += 1
        if j == n or s[j] == " ":
            errno = s[i + 1:j]
            i = j
    if errno is None and s.startswith(" (errno ", i):
        j = i + 8
        while j < n and s[j] in _DIGITS:
            j += 1
        if j > i + 8 and j < n and s[j] == ")":
            errno = "errno " + s[i + 8:j][:50]
    while i + 1 < n and s[i] == " " and s[i + 1] == "(":
        j = _skip_paren(s, i + 1)
        if j < 0:
            return None
        i = j
    end = i
    dur = NA
    if i + 1 < n and s[i] == " " and s[i + 1] == "<":
        j = i + 2
        k = j
        while k < n and s[k] in _DIGITS:
            k += 1
        if k == j:
            return None
        frac = None
        if k < n and s[k] == ".":
            f0 = k + 1
            k = f0
            while k < n and s[k] in _DIGITS:
                k += 1
            if k == f0 or k - f0 > 9:
                return None
            frac = s[f0:k]
        if k + 1 != n or s[k] != ">":
            return None
        dur = _frac_ns(s[j:f0 - 1] if frac is not None else s[j:k], frac)
        i = n
    if i != n:
        return None
    return s[start:end], parse_retval(tok), errno, dur


def _split_call(s: str, lo: int) -> tuple[str, str | None, Tail | None] | None:
    """Split 'ARGS<end>' where ARGS starts at lo.

    Returns (args, marker, tail) where exactly one of marker (text of a
    ``<… ...>`` marker such as ``<unfinished ...>``) and tail is set, or None.
    """
    if s.endswith("...>"):
        k = s.rfind(" <", lo)
        if k >= lo:
            marker = s[k + 1:]
            if marker in ("<unfinished ...>", "<detached ...>") or marker.startswith("<pid changed to "):
                return s[lo:k], marker, None
    p = len(s)
    while True:
        p = s.rfind(")", lo, p)
        if p < 0:
            return None
        t = _tail(s, p + 1)
        if t is not None:
            return s[lo:p], None, t


class _Intern:
    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self.names: list[str] = []

    def __call__(self, name: str | None) -> int:
        if name is None:
            return -1
        c = self.codes.get(name)
        if c is None:
            c = self.codes[name] = len(self.names)
            self.names.append(name)
        return c


# the other parts of a record line (the timestamp patterns are the grammar's)
_TS_RE = {k: re.compile(v) for k, v in TS_PATTERNS.items() if v}
_TS_GROUPS = {TS_NONE: 0, TS_TOD: 2, TS_EPOCH: 2, TS_REL: 2}
_POW = [10 ** (9 - k) if k <= 9 else 0 for k in range(10)]
_PLUS_RE = re.compile(r"\(\+ *[0-9]+\.[0-9]+\) ")
_BRACKET_RE = re.compile(r"(?:\[ *[0-9a-f?]+\] )+")
_COLPID_RE = re.compile(r"([0-9]+)")
_BRPID_RE = re.compile(r"\[pid +([0-9]{1,10})(?:<[^>]*>)?\] ")
_RESUMED_RE = re.compile(r"<\.\.\. ([A-Za-z0-9_]+) resumed>")
# row layout (one list per row; columns are formed in finish())
KIND, PID, TS, END, DUR, NAME, ARGS, RET, RETVAL, ERRNO, SIGNAL, STACK, LINE = range(13)
Row = list[Any]
#: the last record, which a following stack frame belongs to: a row, or (chunk, index) of a row kept as columns
RowRef = Row | tuple[int, int]
_ROW = {"kind": KIND, "pid": PID, "ts": TS, "end": END, "dur": DUR, "name": NAME, "args": ARGS, "ret_text": RET,
        "retval": RETVAL, "errno": ERRNO, "signal": SIGNAL, "backtrace": STACK, "line": LINE}


class RefParser:
    """Stateful line parser; ``feed`` text made of whole lines, then ``finish``."""

    def __init__(self, pid_mode: int, ts_mode: int, fixed_pid: int = NA) -> None:
        self.pid_mode = pid_mode
        self.ts_mode = ts_mode
        self.fixed_pid = fixed_pid
        self.lineno = 0
        self.rows: list[list] = []
        self.names = _Intern()
        self.errnos = _Intern()
        self.signals = _Intern()
        # side tables
        self.messages: list[tuple[int, str]] = []
        self.rejects: list[tuple[int, str, str]] = []
        self.summary: list[tuple[int, str]] = []
        # state
        self.in_summary = False
        self.pending: dict[int, Row] = {}  # pid -> row of its <unfinished ...> half
        self.last_row: RowRef | None = None
        self.day_off = 0
        self.last_ts = NA
        self.rel_sum = 0
        self.live: set[int] = set()
        self.announced: set[int] = set()
        self.unknown_rows: list[Row] = []
        self.leader_known = False
        self.leader_pid = NA
        self.unknown_cols: list[tuple[int, np.ndarray]] = []  # (chunk, row indexes) of rows kept as columns
        # that have no pid yet
        self.splice: str | None = None
        self.splice_line = 0
        self._fast = fast_patterns(pid_mode, ts_mode)
        self._vpats: Patterns | None = None  # the column-at-a-time tokenizer's patterns, made on first use
        self._hms: dict[str, int] = {}
        self.colour: tuple[int, str] | None = None  # first line with an ANSI colour escape
        self.chunks: list[tuple[Any, ...]] = []  # rows kept as columns: (line, pid, ts, end, dur, name, args, ret, retval, errno, kind)
        self.cstack: dict[tuple[int, int], str] = {}  # stack frames of rows kept as columns, by (chunk, index)

    # -- rows ---------------------------------------------------------------
    def _row(self, kind: int, pid: int, ts: int, lineno: int, name: int = -1, args: str = "",
             ret_text: str | None = None, retval: int = NA, errno: int = -1, dur: int = NA, signal: int = -1) -> Row:
        row = [kind, pid, ts, ts, dur, name, args, ret_text, retval, errno, signal, None, lineno]
        self.rows.append(row)
        if pid == NA and self.pid_mode == PID_NONE:
            self.unknown_rows.append(row)
        self.last_row = row
        return row

    def _ts(self, g: tuple) -> int:
        """Timestamp (ns) from the regex groups of the timestamp pattern."""
        mode = self.ts_mode
        if mode == TS_TOD:
            hms, fr = g
            t = self._hms.get(hms)
            if t is None:
                h, mi, se = hms.split(":")
                t = self._hms[hms] = ((int(h) * 60 + int(mi)) * 60 + int(se)) * 1_000_000_000
            if fr:
                t += int(fr) * _POW[len(fr)]
            if t + self.day_off < self.last_ts - HALF_DAY_NS:
                self.day_off += DAY_NS
            ts = t + self.day_off
            self.last_ts = ts
            return ts
        if mode == TS_EPOCH:
            return _frac_ns(g[0], g[1])
        self.rel_sum = _w(self.rel_sum + _frac_ns(g[0], g[1]))
        return self.rel_sum

    # -- lines --------------------------------------------------------------
    def _bulk_complete(self, ms: list[Any], cand: list[int], k: int,
                       kt: int) -> tuple[list[tuple[Any, ...]], list[int] | None, list[int], list[int]]:
        """Fields of the candidate complete lines, column by column (C-level loops where possible)."""
        cols = list(zip(*[ms[i].groups() for i in cand], strict=True))
        mode = self.ts_mode
        if mode == TS_TOD:
            hms_get, hms_cache = self._hms.get, self._hms
            raw = []
            for h, f in zip(cols[k], cols[k + 1], strict=True):
                t = hms_get(h)
                if t is None:
                    hh, mi, se = h.split(":")
                    t = hms_cache[h] = ((int(hh) * 60 + int(mi)) * 60 + int(se)) * 1_000_000_000
                raw.append(t + int(f) * _POW[len(f)] if f else t)
        elif mode in (TS_EPOCH, TS_REL):
            raw = [_w(int(i) * 1_000_000_000 + (int(f) * _POW[len(f)] if f else 0))
                   for i, f in zip(cols[k], cols[k + 1], strict=True)]
        else:
            raw = None
        dur = [NA if di is None else _w(int(di) * 1_000_000_000 + (int(df) * _POW[len(df)] if df else 0))
               for di, df in zip(cols[kt + 5], cols[kt + 6], strict=True)]
        rv = [int(t) if (t[0] != "0" or len(t) == 1) and t[0] != "?" and len(t) < 19 else parse_retval(t)
              for t in cols[kt + 3]]
        return cols, raw, dur, rv

    _force_seq = False  # tests set it to compare the two ways through a block
    vector_join_min = 48  # runs of at least this many halves are joined with numpy, shorter ones one by one

    def feed(self, block: str | bytes | memoryview) -> None:
        """Parse whole lines (text, or bytes read as Latin-1).

        Bytes with ``-t/-tt/-ttt`` timestamps or none go through
        ``_feed_vector``: the three commonest shapes column by column, the
        Python loop only for the other lines. Otherwise (``-r``, text, a
        midnight inside the block, colour escapes, a block that starts inside a
        summary table or a splice) every line goes through ``_feed_seq``. Both
        give the same rows.
        """
        n0 = self.lineno
        if isinstance(block, str):
            text = block
        else:
            data = bytes(block)
            if data.find(b"\x1b") < 0 or b"\x1b[" not in data:  # (one byte is found much faster)
                taken = self._feed_vector(data, n0)
                if taken is not None:
                    self.lineno = n0 + taken
                    return
            text = data.decode("latin-1")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        self._feed_seq(lines, n0)
        self.lineno = n0 + len(lines)

    def _intern(self, arr: pa.Array, table: _Intern) -> np.ndarray:
        """Codes of an Arrow string array in an intern table (-1 for nulls), as int64."""
        import numpy as np
        import pyarrow.compute as pc

        enc = pc.dictionary_encode(arr)
        codes = np.asarray([table(x) for x in enc.dictionary.to_pylist()] + [-1], dtype=np.int64)
        idx = enc.indices.fill_null(len(codes) - 1).to_numpy(zero_copy_only=False)
        return codes[idx]

    def _feed_vector(self, block: bytes, n0: int) -> int | None:
        """A block through the column-at-a-time tokenizer (``_vector``): its line count, or None (nothing
        done) where it does not apply.

        The other lines cut the block into runs of fast lines. In each run the
        ``<unfinished ...>``/``<... resumed>`` halves are joined as the pending
        map of ``_feed_seq`` would join them: per pid with numpy (``join_vec``)
        or, for short runs, one by one (``join_loop``). Each other line then goes
        to the sequential rules (``_line``), after halves still waiting get a
        row of their own, so those rules see the state ``_feed_seq`` would
        leave. Complete calls, joined halves and lone resumed halves become
        three column chunks. Timestamps are ``raw + day_off``: that holds when
        no two adjacent fast lines step back more than half a day (checked) and
        the first line after any other line is checked against the clock that
        line left. Without a pid column, a run's pid is the one the state
        infers (NA until known, patched when the leader is seen). A splice or a
        summary table hands the rest of the block to ``_feed_seq``.
        """
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        from . import _vector

        pid_mode, ts_mode = self.pid_mode, self.ts_mode
        if (self._force_seq or ts_mode == TS_REL or self.splice is not None or self.in_summary or not block):
            return None
        if self._vpats is None:
            self._vpats = vector_patterns(pid_mode, ts_mode)
        tb = _vector.tokenize(block, pid_mode, ts_mode, self._vpats)
        if tb is None:
            return None
        n, shape, raw = tb.n, tb.shape, tb.raw
        tod = ts_mode == TS_TOD
        if tod:
            assert raw is not None  # -t/-tt stamps are read by the tokenizer
            fast = shape != OTHER
            if ((raw[1:] < raw[:-1] - HALF_DAY_NS) & fast[1:] & fast[:-1]).any():
                return None  # a midnight inside the block: the sequential loop rolls the day over
        cpos, upos, rpos = tb.cpos, tb.upos, tb.rpos
        U, R, C = tb.u, tb.r, tb.c
        none_mode = pid_mode == PID_NONE
        # the pid of every line; without a pid column it is the traced process the state points to
        # (NA while unknown), set run by run below
        line_pid = tb.pid if tb.pid is not None else np.full(n, self.fixed_pid if pid_mode == PID_FIXED else NA,
                                                             dtype=np.int64)
        upid_np, rpid_np = line_pid[upos], line_pid[rpos]
        upid, rpid = upid_np.tolist(), rpid_np.tolist()
        # names as codes local to the block; interned only for rows that are kept (the categories)
        enc = pc.dictionary_encode(pa.concat_arrays([U["name"], R["name"]]))
        loc = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        values = enc.dictionary.to_pylist()
        ucode, rcode = loc[:len(upos)], loc[len(upos):]
        ucl, rcl = ucode.tolist(), rcode.tolist()
        glob: dict[int, int] = {}

        def name_of(local: int) -> int:
            c = glob.get(local)
            if c is None:
                c = glob[local] = self.names(values[local])
            return c

        def names_of(local: np.ndarray) -> np.ndarray:
            table = np.full(len(values), -1, dtype=np.int64)
            for v in np.unique(local).tolist():
                table[v] = name_of(v)
            return table[local]
        uidx = np.full(n, -1, dtype=np.int64)
        uidx[upos] = np.arange(len(upos))
        ridx = np.full(n, -1, dtype=np.int64)
        ridx[rpos] = np.arange(len(rpos))
        raw_l: list[int] = raw.tolist() if raw is not None else []  # empty without timestamps
        rdur, rrv = R["dur"], R["retval"]
        from bisect import bisect_left

        cand = cpos.tolist()
        day_off = self.day_off
        if tod and shape[0] != OTHER and raw_l[0] + day_off < self.last_ts - HALF_DAY_NS:
            day_off += DAY_NS
        offsets = [(0, day_off)]  # (first line, day offset)
        nch = len(self.chunks)
        HC, HP, HL = nch, nch + 1, nch + 2  # this block's chunks: complete, joined halves, lone resumed
        rows_append = self.rows.append
        pair_u: list[int] = []
        pair_r: list[int] = []
        lone: list[int] = []
        made: dict[int, Row] = {}  # unfinished halves given a row of their own
        last = self.last_row
        # while a block is taken, a half waiting here is its index in the block (made a row before any
        # other line is read)
        pending = cast("dict[int, Row | int]", self.pending)
        seg = 0  # first line of the current run of fast lines
        cut = n
        starts, ends = tb.starts, tb.ends

        def abs_ts(p: int) -> int:
            if raw is None:
                return NA
            return raw_l[p] + day_off if tod else raw_l[p]

        def unfinished_row(j: int) -> Row:
            p = int(upos[j])
            ts = abs_ts(p)
            row = [K_UNFINISHED, upid[j], ts, ts, NA, name_of(ucl[j]), U["args"][j].as_py(), "<unfinished ...>", NA,
                   -1, -1, None, n0 + 1 + p]
            rows_append(row)
            if none_mode and upid[j] == NA:
                self.unknown_rows.append(row)
            made[j] = row
            return row

        def merge(q: Row, j: int, p: int) -> None:  # a resumed half completes a row carried as a list
            q[KIND] = K_CALL
            q[ARGS] += R["args"][j].as_py()
            q[END] = abs_ts(p)
            q[DUR] = int(rdur[j])
            q[RET] = R["ret"][j].as_py()
            q[RETVAL] = int(rrv[j])
            e = R["errno"][j].as_py()
            q[ERRNO] = -1 if e is None else self.errnos(e)

        def join_loop(evs: list[int], last: RowRef | None) -> RowRef | None:
            """The halves of one run, one by one (the pending map as in _feed_seq)."""
            for p in evs:
                if shape_l[p] == 1:  # unfinished half
                    j = uidx_l[p]
                    pid = upid[j]
                    old = pending.get(pid)
                    if isinstance(old, int):
                        unfinished_row(old)  # superseded: it stays unfinished
                    pending[pid] = j
                    continue
                j = ridx_l[p]  # resumed half
                pid = rpid[j]
                q = pending.pop(pid, None)
                if q is None:
                    lone.append(j)
                    last = (HL, len(lone) - 1)
                elif isinstance(q, int):
                    if ucl[q] == rcl[j]:
                        pair_u.append(q)
                        pair_r.append(j)
                        last = (HP, len(pair_u) - 1)
                    else:
                        pending[pid] = q
                        lone.append(j)
                        last = (HL, len(lone) - 1)
                elif q[NAME] == name_of(rcl[j]):
                    merge(q, j, p)
                    last = q
                else:
                    pending[pid] = q
                    lone.append(j)
                    last = (HL, len(lone) - 1)
            return last

        def join_vec(lo: int, hi: int, last: RowRef | None) -> RowRef | None:
            """The halves of one run [lo, hi) at once: the same pairs as join_loop, found per pid with numpy."""
            ua, ub = np.searchsorted(upos, (lo, hi))
            ra, rb = np.searchsorted(rpos, (lo, hi))
            eu, er = np.arange(ua, ub), np.arange(ra, rb)
            line = np.concatenate([upos[eu], rpos[er]])
            pid = np.concatenate([upid_np[eu], rpid_np[er]])
            isu = np.zeros(len(line), dtype=bool)
            isu[:len(eu)] = True
            code = np.concatenate([ucode[eu], rcode[er]])
            idx = np.concatenate([eu, er])
            o = np.lexsort((line, pid))  # by pid, then line
            line, pid, isu, code, idx = line[o], pid[o], isu[o], code[o], idx[o]
            m = len(o)
            at = np.arange(m)
            head = np.ones(m, dtype=bool)
            head[1:] = pid[1:] != pid[:-1]
            gstart = np.maximum.accumulate(np.where(head, at, 0))
            lastu = np.maximum.accumulate(np.where(isu, at, -1))  # the latest unfinished half so far
            has_u = ~isu & (lastu >= gstart)
            lu = np.maximum(lastu, 0)
            hit = np.flatnonzero(has_u & (code == code[lu]))
            _, first = np.unique(lu[hit], return_index=True)
            r_at = hit[first]  # each waiting half is taken by the first resumed half of its name
            u_at = lu[r_at]
            is_lone = ~isu
            is_lone[r_at] = False
            joined = np.zeros(m, dtype=bool)
            joined[u_at] = True
            merged: dict[int, Row] = {}
            for k in np.flatnonzero(~isu & ~has_u).tolist():  # before any unfinished half of their pid
                q = pending.get(int(pid[k]))  # (a row: halves of this block wait only inside their run)
                if isinstance(q, list) and q[NAME] == name_of(int(code[k])):
                    merge(q, int(idx[k]), int(line[k]))
                    del pending[int(pid[k])]
                    is_lone[k] = False
                    merged[int(idx[k])] = q
            tail = np.ones(m, dtype=bool)
            tail[:-1] = pid[1:] != pid[:-1]
            lastu_g = lastu[tail]
            final_u = np.zeros(m, dtype=bool)
            for g, ustart in zip(lastu_g.tolist(), gstart[tail].tolist(), strict=True):
                if g >= ustart:  # the group had unfinished halves: its last one decides what waits
                    final_u[g] = True
                    if joined[g]:
                        pending.pop(int(pid[g]), None)
                    else:
                        pending[int(pid[g])] = int(idx[g])
            for k in np.flatnonzero(isu & ~joined & ~final_u).tolist():
                unfinished_row(int(idx[k]))  # superseded: it stays unfinished
            base_p, base_l = len(pair_u), len(lone)
            pr = idx[r_at]
            pair_u.extend(idx[u_at].tolist())
            pair_r.extend(pr.tolist())
            ls = idx[is_lone]
            lone.extend(ls.tolist())
            if hi > lo and shape_l[hi - 1] == 2:  # the row a following stack frame belongs to
                j = ridx_l[hi - 1]
                if j in merged:
                    return merged[j]
                at = np.flatnonzero(pr == j)
                if len(at):
                    return (HP, base_p + int(at[0]))
                return (HL, base_l + int(np.flatnonzero(ls == j)[0]))
            return last

        shape_l = shape.tolist()
        uidx_l, ridx_l = uidx.tolist(), ridx.tolist()
        halves = np.flatnonzero((shape == UNFINISHED) | (shape == RESUMED)).tolist()
        bounds = np.flatnonzero(shape == OTHER).tolist()
        hi_ = 0
        for p in bounds + [n]:
            lo_, hi_ = hi_, bisect_left(halves, p, hi_)
            if none_mode and p > seg:  # one pid for the whole run: the state changes only at other lines
                sp = next(iter(self.live)) if len(self.live) == 1 and self.leader_known else NA
                line_pid[seg:p] = sp
                for pos, arr, lst in ((upos, upid_np, upid), (rpos, rpid_np, rpid)):
                    a_, b_ = np.searchsorted(pos, (seg, p))
                    arr[a_:b_] = sp
                    lst[a_:b_] = [sp] * int(b_ - a_)
            if hi_ - lo_ >= self.vector_join_min:
                last = join_vec(seg, p, last)
            elif hi_ > lo_:
                last = join_loop(halves[lo_:hi_], last)
            if p == n:
                break
            # a line for the sequential rules: they see the state _feed_seq would leave
            for pid, q in list(pending.items()):
                if isinstance(q, int):
                    pending[pid] = unfinished_row(q)
            if p > seg:  # the run before it is all fast: its last line sets the clock and the last row
                if tod:
                    self.last_ts = raw_l[p - 1] + day_off
                prev = shape[p - 1]
                if prev == COMPLETE:
                    last = (HC, bisect_left(cand, p) - 1)
                elif prev == UNFINISHED:
                    last = made[int(uidx[p - 1])]
            self.last_row, self.day_off = last, day_off
            known = self.leader_known
            self._line(block[starts[p]:ends[p]].decode("latin-1"), n0 + 1 + p)
            last, day_off = self.last_row, self.day_off
            if none_mode and not known and self.leader_known:  # rows so far with no pid get the leader's
                before = line_pid[:p]
                before[before == NA] = self.leader_pid
            if self.splice is not None or self.in_summary:
                cut = p + 1
                break
            seg = p + 1
            if tod and seg < n and shape[seg] != OTHER and raw_l[seg] + day_off < self.last_ts - HALF_DAY_NS:
                day_off += DAY_NS
            if day_off != offsets[-1][1]:
                offsets.append((seg, day_off))
        for pid, q in list(pending.items()):  # halves still waiting carry over as rows
            if isinstance(q, int):
                pending[pid] = unfinished_row(q)
        if cut == n and n > seg:  # the block ends with a run of fast lines
            if tod:
                self.last_ts = raw_l[n - 1] + day_off
            prev = shape[n - 1]
            if prev == COMPLETE:
                last = (HC, len(cand) - 1)
            elif prev == UNFINISHED:
                last = made[int(uidx[n - 1])]
        self.last_row, self.day_off = last, day_off
        # absolute timestamps of every line (day offset by line range)
        if raw is None:
            ts_all = np.full(n, NA, dtype=np.int64)
        elif tod:
            bounds = [o[0] for o in offsets] + [n]
            off = np.repeat(np.asarray([o[1] for o in offsets], dtype=np.int64), np.diff(bounds))
            ts_all = raw + off
        else:
            ts_all = raw
        take = lambda arr, idx: arr.take(pa.array(np.asarray(idx, dtype=np.int64)))  # noqa: E731
        ntaken = bisect_left(cand, cut)
        cp = cpos[:ntaken]
        cts = ts_all[cp]
        self.chunks.append((n0 + 1 + cp, line_pid[cp], cts, cts, C["dur"][:ntaken],
                            self._intern(C["name"][:ntaken], self.names), C["args"][:ntaken], C["ret"][:ntaken],
                            C["retval"][:ntaken], self._intern(C["errno"][:ntaken], self.errnos),
                            np.full(ntaken, K_CALL)))
        pu = np.asarray(pair_u, dtype=np.int64)
        pr = np.asarray(pair_r, dtype=np.int64)
        joined = pc.binary_join_element_wise(take(U["args"], pu), take(R["args"], pr), pa.scalar("", pa.large_string()))
        self.chunks.append((n0 + 1 + upos[pu], line_pid[upos[pu]],
                            ts_all[upos[pu]], ts_all[rpos[pr]], rdur[pr], names_of(ucode[pu]), joined, take(R["ret"], pr),
                            rrv[pr], self._intern(take(R["errno"], pr), self.errnos), np.full(len(pu), K_CALL)))
        lo = np.asarray(lone, dtype=np.int64)
        self.chunks.append((n0 + 1 + rpos[lo], line_pid[rpos[lo]],
                            ts_all[rpos[lo]], ts_all[rpos[lo]], rdur[lo], names_of(rcode[lo]), take(R["args"], lo),
                            take(R["ret"], lo), rrv[lo], self._intern(take(R["errno"], lo), self.errnos),
                            np.full(len(lo), K_CALL)))
        if none_mode and not self.leader_known:  # rows with no pid yet: the leader's when it is known
            for c in (HC, HP, HL):
                miss = np.flatnonzero(self.chunks[c][1] == NA)
                if len(miss):
                    self.unknown_cols.append((c, miss))
        if cut < n:
            rest = block[starts[cut]:].decode("latin-1").split("\n")
            if rest and rest[-1] == "":
                rest.pop()
            self._feed_seq(rest, n0 + cut)
        return n

    def _feed_seq(self, lines: list[str], n0: int) -> None:
        """Every line through one sequential loop (any pid and timestamp mode)."""
        complete, unfinished, resumed = self._fast
        k = 1 if self.pid_mode == PID_COLUMN else 0
        nt = _TS_GROUPS[self.ts_mode]
        kt = k + nt
        column = self.pid_mode == PID_COLUMN
        fixed = self.pid_mode == PID_FIXED
        bulk = self.pid_mode != PID_NONE
        none_mode = self.pid_mode == PID_NONE
        tod = self.ts_mode == TS_TOD
        rel = self.ts_mode == TS_REL
        tsf = self._ts
        hms_get = self._hms.get
        name_get, names = self.names.codes.get, self.names
        errnos = self.errnos
        pending = self.pending
        append = self.rows.append
        slow = self._line
        colour = any("\x1b[" in s for s in lines)
        plain = self.splice is None and not self.in_summary
        last = self.last_row
        cm = complete.match  # (an <unfinished ...> line never is a complete call)
        ms = [None if s.endswith(UNFINISHED_MARK) else cm(s) for s in lines]
        if column:  # a pid over 10 digits is no pid: the rules reject the line
            ms = [None if m is not None and len(m.group(1)) > PID_DIGITS else m for m in ms]
        cand = [i for i, m in enumerate(ms) if m is not None] if bulk else []
        if cand:
            ccols, craw, cdur, crv = self._bulk_complete(ms, cand, k, kt)
            stamps = craw if craw is not None else []  # (read only with timestamps)
        taken: list[int] = []  # candidate positions taken as complete rows
        cts: list[int] = []  # their absolute timestamps
        ci = -1
        nch = len(self.chunks)  # the chunk this call adds (if it takes complete rows)
        day_off, last_ts = self.day_off, self.last_ts  # TOD roll-over state, synced around calls
        for lineno, s, m in zip(range(n0 + 1, n0 + 1 + len(lines)), lines, ms, strict=True):
            if m is not None and bulk:
                ci += 1
            if colour and "\x1b[" in s:
                if self.colour is None:
                    self.colour = (lineno, s)
                self.rejects.append((lineno, s, COLOUR_REASON))
                continue
            if not plain:
                m = None
            elif m is not None:
                if bulk:
                    if tod:
                        t = stamps[ci] + day_off
                        if t < last_ts - HALF_DAY_NS:
                            day_off += DAY_NS
                            t += DAY_NS
                        last_ts = t
                        cts.append(t)
                    elif rel:
                        self.rel_sum = _w(self.rel_sum + stamps[ci])
                        cts.append(self.rel_sum)
                    last = (nch, len(taken))
                    taken.append(ci)
                    continue
                shape = 0
            elif s.endswith(UNFINISHED_MARK):
                m = unfinished.match(s)
                shape = 1
            elif "resumed>" in s:
                m = resumed.match(s)
                shape = 2
            if m is None or (column and len(m.group(1)) > PID_DIGITS):  # no fast shape, or no pid: the rules
                self.last_row = last
                self.day_off, self.last_ts = day_off, last_ts
                slow(s, lineno)
                day_off, last_ts = self.day_off, self.last_ts
                last = self.last_row
                plain = self.splice is None and not self.in_summary
                continue
            g = m.groups()
            if column:
                pid = int(g[0])
            elif fixed:
                pid = self.fixed_pid
            elif len(self.live) == 1 and self.leader_known:
                pid = next(iter(self.live))
            else:
                pid = NA
            if tod:
                hms = g[k]
                known = hms_get(hms)
                if known is None:
                    self.day_off, self.last_ts = day_off, last_ts
                    ts = tsf((hms, g[k + 1]))
                    day_off, last_ts = self.day_off, self.last_ts
                else:
                    fr = g[k + 1]
                    if fr:
                        known += int(fr) * _POW[len(fr)]
                    if known + day_off < last_ts - HALF_DAY_NS:
                        day_off += DAY_NS
                    ts = known + day_off
                    last_ts = ts
            elif nt:
                ts = tsf(g[k:kt])
            else:
                ts = NA
            if shape == 1:
                name = g[kt]
                code = name_get(name)
                if code is None:
                    code = names(name)
                last = [K_UNFINISHED, pid, ts, ts, NA, code, g[kt + 1], "<unfinished ...>",
                        NA, -1, -1, None, lineno]
                append(last)
                pending[pid] = last  # an unknown pid (NA) is one process: the only one traced
                if pid == NA and none_mode:
                    self.unknown_rows.append(last)
                continue
            name, args, ret, tok, err, di, df = g[kt:]
            if di is None:
                dur = NA
            else:
                dur = int(di) * 1_000_000_000 + int(df) * _POW[len(df)] if df else int(di) * 1_000_000_000
                if dur >= _I64:
                    dur = wrap_int64(dur)
            c0 = tok[0]
            rv = int(tok) if (c0 != "0" or len(tok) == 1) and c0 != "?" and len(tok) < 19 else parse_retval(tok)
            ec = -1 if err is None else errnos(err)
            code = name_get(name)
            if code is None:
                code = names(name)
            if shape == 0:
                last = [K_CALL, pid, ts, ts, dur, code, args, ret, rv, ec, -1, None, lineno]
                append(last)
                if pid == NA and none_mode:
                    self.unknown_rows.append(last)
                continue
            row = pending.pop(pid, None)
            if row is not None and row[NAME] != code:
                pending[pid] = row
                row = None
            if row is None:
                row = [K_CALL, pid, ts, ts, dur, code, args, ret, rv, ec, -1, None, lineno]
                append(row)
                if pid == NA and none_mode:
                    self.unknown_rows.append(row)
            else:
                row[KIND] = K_CALL
                row[ARGS] += args
                row[END] = ts
                row[DUR] = dur
                row[RET] = ret
                row[RETVAL] = rv
                row[ERRNO] = ec
            last = row
        self.last_row = last
        self.day_off, self.last_ts = day_off, last_ts
        if taken:
            self._store_complete(ccols, craw, cdur, crv, cand, taken, cts, n0, k, kt)

    def _store_complete(self, ccols: Sequence[Sequence[Any]], craw: list[int] | None, cdur: list[int],
                        crv: list[int], cand: list[int], taken: list[int], cts: list[int], n0: int, k: int,
                        kt: int) -> None:
        """Keep the taken complete rows as columns (one chunk per block)."""
        if len(taken) != len(cand):
            keep = taken
            ccols = [[c[i] for i in keep] for c in ccols]
            cdur = [cdur[i] for i in keep]
            crv = [crv[i] for i in keep]
            craw = None if craw is None else [craw[i] for i in keep]
        lines = [n0 + 1 + cand[i] for i in taken]
        if self.pid_mode == PID_COLUMN:
            pid = [int(p) for p in ccols[0]]
        else:
            pid = [self.fixed_pid] * len(lines)
        ts: list[int] | None
        if self.ts_mode in (TS_TOD, TS_REL):
            ts = cts
        elif self.ts_mode == TS_EPOCH:
            ts = craw
        else:
            ts = [NA] * len(lines)
        intern_n, intern_e = self.names, self.errnos
        get_n, get_e = intern_n.codes.get, intern_e.codes.get
        name = [get_n(x) if x in intern_n.codes else intern_n(x) for x in ccols[kt]]
        errno = [-1 if x is None else (get_e(x) if x in intern_e.codes else intern_e(x)) for x in ccols[kt + 4]]
        self.chunks.append((lines, pid, ts, ts, cdur, name, list(ccols[kt + 1]), list(ccols[kt + 2]), crv, errno,
                            [K_CALL] * len(lines)))

    def _line(self, s: str, lineno: int) -> None:
        if self.splice is not None:
            s = self.splice + s
            lineno = self.splice_line
            self.splice = None
        if self.in_summary:
            self.summary.append((lineno, s))
            if s.lstrip(" 0123456789.").startswith("total") or s.endswith(" total"):
                self.in_summary = False
            return
        if s.startswith(" > "):
            row = self.last_row
            if row is None:
                self.rejects.append((lineno, s, "stack frame before any record"))
                return
            if isinstance(row, tuple):  # a row kept as columns: (chunk, index)
                old = self.cstack.get(row)
                self.cstack[row] = s[3:] if old is None else old + "\n" + s[3:]
                return
            old = row[STACK]
            row[STACK] = s[3:] if old is None else old + "\n" + s[3:]
            return
        if s.startswith("strace: ") or s.startswith("[ Process "):
            self._message(lineno, s)
            return
        if s.startswith("% time") or s.startswith("System call usage summary"):
            self.in_summary = True
            self.summary.append((lineno, s))
            return
        clock = (self.rel_sum, self.last_ts, self.day_off)
        reason = self._record(s, lineno)
        if reason is None:
            return
        k = s.rfind("strace: ")
        if k > 0:  # the record goes on on the next line: its timestamp is read again then
            self.rel_sum, self.last_ts, self.day_off = clock
            self._message(lineno, s[k:])
            self.splice = s[:k]
            self.splice_line = lineno
            return
        self.rejects.append((lineno, s, reason))

    def _message(self, lineno: int, s: str) -> None:
        self.messages.append((lineno, s))
        m = _PIDNUM.search(s)
        if m is not None:
            p = _pid(m.group(1))
            if m.group(2) == "attached":
                self.announced.add(p)
                self.live.add(p)
            else:
                self.live.discard(p)

    def _see_pid(self, p: int) -> None:
        if not self.leader_known and p not in self.announced:
            self.leader_known = True
            self.leader_pid = p
            for row in self.unknown_rows:
                row[PID] = p
            self.unknown_rows = []
            for c, idx in self.unknown_cols:
                self.chunks[c][1][idx] = p
            self.unknown_cols = []
        self.live.add(p)

    def _record(self, s: str, lineno: int) -> str | None:
        """Parse one record line; None on success, else the reason it failed."""
        i = 0
        n = len(s)
        if self.pid_mode == PID_COLUMN:
            m = _COLPID_RE.match(s)
            if m is None:
                return "expected a pid prefix"
            if len(m.group(1)) > PID_DIGITS:
                return "pid longer than 10 digits"
            pid = _pid(m.group(1))
            i = m.end()
            if i < n and s[i] == "<":
                i = _skip_angle(s, i)
                if i < 0:
                    return "unterminated <comm> after the pid"
            if i >= n or s[i] != " ":
                return "expected a space after the pid"
            while i < n and s[i] == " ":
                i += 1
        elif self.pid_mode == PID_FIXED:
            pid = self.fixed_pid
        else:
            m = _BRPID_RE.match(s)
            if m is not None:
                pid = _pid(m.group(1))
                i = m.end()
                self._see_pid(pid)
            elif len(self.live) == 1 and self.leader_known:
                pid = next(iter(self.live))
            else:
                pid = NA
        ts = NA
        if self.ts_mode != TS_NONE:
            m = _TS_RE[self.ts_mode].match(s, i)
            if m is None:
                return "expected a timestamp"
            ts = self._ts(m.groups())
            i = m.end()
            m = _PLUS_RE.match(s, i)
            if m is not None:
                i = m.end()
        if i < n and s[i] == "[":
            m = _BRACKET_RE.match(s, i)
            if m is not None:
                i = m.end()
        if i >= n:
            return "empty record"
        c = s[i]
        if c == "<":
            m = _RESUMED_RE.match(s, i)
            if m is None:
                return "expected '<... NAME resumed>'"
            name = m.group(1)
            j = m.end()
            if s.startswith(UNFINISHED_MARK, j):
                j += len(UNFINISHED_MARK)
            elif j < n and s[j] == " ":
                j += 1
            sp = _split_call(s, j)
            if sp is None:
                return "no return value after the resumed arguments"
            args, marker, tail = sp
            code = self.names(name)
            row = self.pending.pop(pid, None)
            if row is not None and row[NAME] != code:
                self.pending[pid] = row  # not its other half: leave it waiting
                row = None
            if row is None:
                row = self._row(K_UNFINISHED, pid, ts, lineno, name=code, args=args)
            else:
                row[ARGS] += args
                row[END] = ts
                self.last_row = row
            if marker is not None:
                row[RET] = marker
                if marker == "<unfinished ...>":
                    self.pending[pid] = row
                return None
            assert tail is not None  # a call ends in a marker or a tail
            rt, rv, er, du = tail
            row[KIND] = K_CALL
            row[RET] = rt
            row[RETVAL] = rv
            row[ERRNO] = self.errnos(er)
            row[DUR] = du
            return None
        if c == "-" and s.startswith("--- ", i):
            if not s.endswith(" ---") or n - 4 < i + 4:
                return "unterminated signal line"
            inner = s[i + 4:n - 4]
            if inner.startswith("stopped by "):
                self._row(K_STOPPED, pid, ts, lineno, signal=self.signals(inner[11:]), args=inner)
                return None
            k = inner.find(" ")
            sig = inner if k < 0 else inner[:k]
            rest = "" if k < 0 else inner[k + 1:]
            self._row(K_SIGNAL, pid, ts, lineno, signal=self.signals(sig), args=rest)
            return None
        if c == "+" and s.startswith("+++ ", i):
            if not s.endswith(" +++") or n - 4 < i + 4:
                return "unterminated exit line"
            inner = s[i + 4:n - 4]
            if inner.startswith("exited with "):
                v = inner[12:]
                if not _isdec(v):
                    return "bad exit status"
                self._row(K_EXIT, pid, ts, lineno, ret_text=inner, retval=wrap_int64(int(v)))
            elif inner.startswith("killed by "):
                k = inner.find(" ", 10)
                sig = inner[10:] if k < 0 else inner[10:k]
                self._row(K_KILLED, pid, ts, lineno, ret_text=inner, signal=self.signals(sig))
            elif inner.startswith("superseded by execve in pid "):
                v = inner[28:]
                if not _isdec(v):
                    return "bad pid in superseded line"
                self._row(K_SUPERSEDED, pid, ts, lineno, ret_text=inner, retval=wrap_int64(int(v)))
            else:
                return "unknown '+++' line"
            self.pending.pop(pid, None)
            self.live.discard(pid)
            return None
        j = i
        while j < n and s[j] in _NAMECH:
            j += 1
        if j == i or j >= n or s[j] != "(":
            return "expected a system call, signal, exit or resumed line"
        sp = _split_call(s, j + 1)
        if sp is None:
            return "no return value after the arguments"
        args, marker, tail = sp
        code = self.names(s[i:j])
        if marker is not None:
            row = self._row(K_UNFINISHED, pid, ts, lineno, name=code, args=args, ret_text=marker)
            if marker == "<unfinished ...>":
                self.pending[pid] = row
            return None
        assert tail is not None  # a call ends in a marker or a tail
        rt, rv, er, du = tail
        self._row(K_CALL, pid, ts, lineno, name=code, args=args, ret_text=rt, retval=rv,
                  errno=self.errnos(er), dur=du)
        return None

    def finish(self) -> dict:
        """Flush a pending splice; return the raw columns and side tables.

        Rows come in the order of their first line: the sequential rows and the
        column chunks of complete calls are merged by line number.
        """
        import numpy as np
        import pyarrow as pa

        if self.splice is not None:
            self.rejects.append((self.splice_line, self.splice, "record cut by a message at end of input"))
            self.splice = None
        from operator import itemgetter

        rows = self.rows
        nr = len(rows)
        chunks = self.chunks
        n = sum(len(ch[0]) for ch in chunks)
        # chunk columns: line, pid, ts, end, dur, name, args, ret, retval, errno, kind (lists or arrays)
        chunk_cols = {"line": 0, "pid": 1, "ts": 2, "end": 3, "dur": 4, "name": 5, "retval": 8, "errno": 9,
                      "kind": 10}

        def ints(key: str) -> np.ndarray:
            col = np.fromiter(map(itemgetter(_ROW[key]), rows), dtype=np.int64, count=nr)
            if not n:
                return col
            if key == "signal":
                return np.concatenate([col, np.full(n, -1, dtype=np.int64)])
            j = chunk_cols[key]
            return np.concatenate([col] + [np.asarray(ch[j], dtype=np.int64) for ch in chunks])

        def strings(key: str, j: int | None) -> pa.Array:
            col = pa.array(list(map(itemgetter(_ROW[key]), rows)), type=pa.large_string())
            if j is None or not n:
                return col
            return pa.concat_arrays([col] + [ch[j] if isinstance(ch[j], pa.Array)
                                             else pa.array(ch[j], type=pa.large_string()) for ch in chunks])

        line = ints("line")
        # rows in the order of their first line (the sequential rows and the chunks interleave, and
        # rows given to halves still waiting are made in pid order)
        order = None if len(line) < 2 or (line[1:] > line[:-1]).all() else np.argsort(line, kind="stable")
        out: dict = {"line": line if order is None else line[order]}
        for key in ("kind", "pid", "ts", "end", "dur", "name", "retval", "errno", "signal"):
            col = ints(key)
            out[key] = col if order is None else col[order]
        for key, j in (("args", 6), ("ret_text", 7)):
            col = strings(key, j)
            out[key] = col if order is None else col.take(order)
        bt = strings("backtrace", None)
        if n:
            extra: list = [None] * n
            if self.cstack:
                first = np.cumsum([0] + [len(ch[0]) for ch in chunks]).tolist()
                for (ch, i), text in self.cstack.items():
                    extra[first[ch] + i] = text
            bt = pa.concat_arrays([bt, pa.array(extra, type=pa.large_string())])
        out["backtrace"] = bt if order is None else bt.take(order)
        out.update({
            "names": self.names.names, "errnos": self.errnos.names, "signals": self.signals.names,
            "messages": self.messages, "rejects": self.rejects, "summary": self.summary,
            "lines": self.lineno,
        })
        return out
