"""Page-cache residency reports: util-linux ``fincore`` (text, ``-b``, ``-r``, ``-n``, ``-J``) and ``vmtouch``.

Both readers return a frame of :data:`RESIDENCY_SCHEMA`, one row per file (``vmtouch``
without ``-v`` only prints a total: file ``<total>``). Human sizes (``36K``, ``34.4K``,
``2M``) are powers of 1024 and rounded by the tool: ``exact`` is False on such rows.
``resident_bytes`` from ``fincore`` without ``-b`` is pages × ``page_size``.
"""
from __future__ import annotations

import json
import math
import re

import pandas as pd

from ..errors import ParseError, UsageError
from ..schema import Column, RejectRow, Schema, attach_rejects, validate
from ..sources import Collector, Source, open_inputs
from ._common import parse_count, parse_int

RESIDENCY_SCHEMA = Schema(
    name="residency",
    doc="Page-cache residency per file from fincore or vmtouch.",
    columns=(
        Column("file", "string", doc="file name as printed ('<total>' for vmtouch's summary)"),
        Column("resident_pages", "int", "pages", "pages in the page cache"),
        Column("total_pages", "float", "pages", "pages in the file (NaN when the tool does not say)"),
        Column("resident_bytes", "float", "bytes", "bytes in the page cache"),
        Column("size_bytes", "float", "bytes", "file size (NaN when not printed)"),
        Column("exact", "bool", doc="False when a size was printed rounded (human units)"),
        Column("tool", "string", doc="fincore or vmtouch"),
    ),
    extra_columns_allowed=False,
)

#: one residency row: file, resident_pages, total_pages, resident_bytes, size_bytes, exact, tool
ResidencyRow = tuple[str, int, float, float, float, bool, str]

_HUMAN = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<u>[BKMGTPE]?)(?:i?B)?$")
_POW = {"": 0, "B": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}


def human_bytes(tok: str) -> tuple[float, bool]:
    """Bytes of a size token (``4096``, ``36K``, ``34.4K``, ``3B``) and whether it is exact.

    Anything else raises :class:`~workbench.errors.UsageError` (a ``ValueError``) naming the token.
    """
    tok = tok.strip()
    if re.fullmatch(r"\d+", tok):
        return float(tok), True
    m = _HUMAN.match(tok)
    if not m:
        raise UsageError(f"not a size: {tok!r}; expected bytes or a number with a K/M/G/T/P/E suffix (36K, 34.4K)")
    exact = m["u"] in ("", "B")
    return float(m["n"]) * 1024 ** _POW[m["u"]], exact


def _frame(rows: list[ResidencyRow], rejects: list[RejectRow]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=RESIDENCY_SCHEMA.names())
    df = df.astype({"resident_pages": "int64", "total_pages": "float64", "resident_bytes": "float64",
                    "size_bytes": "float64", "exact": "bool"})
    df["file"] = df["file"].astype(object)
    df["tool"] = df["tool"].astype(object)
    attach_rejects(df, rejects)
    return validate(df, RESIDENCY_SCHEMA)


def read_fincore(source: Source, *, page_size: int = 4096, strict: bool = False) -> pd.DataFrame:
    """Read ``fincore`` output (default columns RES PAGES SIZE FILE; text or ``-J``)."""
    rows: list[ResidencyRow] = []
    rej: list[RejectRow] = []
    for inp in open_inputs(source, "fincore", directories=True):
        col = Collector(inp.name, strict)
        text = inp.text.strip()
        if text.startswith("{"):
            try:
                entries = json.loads(text)["fincore"]
            except (ValueError, KeyError, TypeError, RecursionError) as exc:
                raise ParseError(inp.name, 1, text[:80], f"expected fincore -J JSON with a 'fincore' list: {exc}") \
                    from None
            if not isinstance(entries, list):
                raise ParseError(inp.name, 1, text[:80], "expected fincore -J JSON with a 'fincore' list, "
                                 f"got a {type(entries).__name__}")
            for e in entries:
                try:
                    pages = parse_count(e["pages"])
                    size, ex = human_bytes(str(e["size"]))
                    res, rex = human_bytes(str(e["res"]))
                    rows.append((str(e["file"]), pages, math.nan, float(pages * page_size), size, ex and rex,
                                 "fincore"))
                except (KeyError, TypeError, ValueError) as exc:
                    col.reject(0, json.dumps(e), f"fincore entry needs res, pages, size, file: {exc}")
            col.check()
            rej.extend(col.sorted_rows())
            continue
        cols = ["RES", "PAGES", "SIZE", "FILE"]
        got_any = False
        inp = inp.complete(col)
        for n, raw in enumerate(inp.text.splitlines(), 1):
            if not raw.strip():
                continue
            toks = raw.split(None, len(cols) - 1)
            if toks and toks[0] == "RES":
                cols = raw.split()
                if "PAGES" not in cols or "FILE" not in cols:
                    raise ParseError(inp.name, n, raw, "fincore header must include PAGES and FILE")
                continue
            toks = raw.split(None, len(cols) - 1)
            if len(toks) != len(cols):
                col.reject(n, raw, f"expected {len(cols)} columns ({' '.join(cols)})")
                continue
            rec = dict(zip(cols, toks, strict=True))
            try:
                pages = parse_count(rec["PAGES"])
                size, ex = human_bytes(rec["SIZE"]) if "SIZE" in rec else (math.nan, True)
                res, rex = human_bytes(rec["RES"]) if "RES" in rec else (float(pages * page_size), True)
            except ValueError as exc:
                col.reject(n, raw, str(exc))
                continue
            got_any = True
            rows.append((rec["FILE"], pages, math.nan, float(pages * page_size), size, ex and rex, "fincore"))
        col.check()
        if not got_any and not col.rows:
            raise ParseError(inp.name, 1, inp.text[:80], "no fincore rows found")
        rej.extend(col.sorted_rows())
    return _frame(rows, rej)


_VT_SUMMARY = re.compile(r"^\s*Resident Pages:\s+(\d+)/(\d+)\s+(\S+)/(\S+)\s+([\d.]+)%\s*$")
_VT_BAR = re.compile(r"^\[[Oo ]*\]\s+(\d+)/(\d+)\s*$")
_VT_KV = re.compile(r"^Files=\d+ .*ResidentPages=(\d+) TotalPages=(\d+) ResidentSize=(\d+) TotalSize=(\d+)")


def read_vmtouch(source: Source, *, page_size: int = 4096, strict: bool = False) -> pd.DataFrame:
    """Read ``vmtouch`` output: the summary, ``-v`` per-file bars and ``-o kv`` lines."""
    rows: list[ResidencyRow] = []
    rej: list[RejectRow] = []
    for inp in open_inputs(source, "vmtouch", directories=True):
        col = Collector(inp.name, strict)
        inp = inp.complete(col, newline_only=True)
        pending: str | None = None
        pending_line = 0
        found = False
        # -v redraws its bar with carriage returns: the last drawing on a line wins
        for n, raw in enumerate(inp.text.split("\n"), 1):
            line = raw.split("\r")[-1].rstrip() if "\r" in raw.rstrip("\r") else raw.rstrip("\r").rstrip()
            if "\r" in raw:
                draws = [d for d in raw.split("\r") if d.strip()]
                line = draws[-1].rstrip() if draws else ""
            if not line.strip():
                continue
            m = _VT_BAR.match(line)
            if m:
                if pending is None:
                    col.reject(n, raw, "progress bar without a file name line before it")
                    continue
                try:
                    res, tot = parse_count(m[1]), parse_count(m[2])
                except ValueError as exc:
                    col.reject(n, raw, str(exc))
                    continue
                rows.append((pending, res, float(tot), float(res * page_size), math.nan, True, "vmtouch"))
                pending, found = None, True
                continue
            m = _VT_SUMMARY.match(line)
            if m:
                try:
                    res, tot = parse_count(m[1]), parse_count(m[2])
                except ValueError as exc:
                    col.reject(n, raw, str(exc))
                    continue
                rows.append(("<total>", res, float(tot), float(res * page_size), math.nan, True, "vmtouch"))
                found = True
                continue
            m = _VT_KV.match(line)
            if m:
                try:
                    rows.append(("<total>", parse_count(m[1]), parse_int(m[2]), parse_int(m[3]), parse_int(m[4]),
                                 True, "vmtouch"))
                except ValueError as exc:
                    col.reject(n, raw, str(exc))
                    continue
                found = True
                continue
            if re.match(r"^\s*(Files|Directories|Elapsed|Touched Pages|Evicted Pages):", line):
                continue  # summary lines with nothing per-file to keep
            if pending is not None:
                col.reject(pending_line, pending, "file name line without a residency bar after it")
            pending, pending_line = line.strip(), n
        if pending is not None:
            col.reject(pending_line, pending, "file name line without a residency bar after it")
        col.check()
        if not found:
            raise ParseError(inp.name, 1, inp.text[:80], "no vmtouch 'Resident Pages:' summary or bar found")
        rej.extend(col.sorted_rows())
    return _frame(rows, rej)
