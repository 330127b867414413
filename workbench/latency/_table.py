"""Split delimited text into header and records, keeping line numbers (RFC 4180 quoting).

Structure is checked here (field count per record, line numbers); values are typed
by pandas' C parser over the records that passed, so big files stay fast: without
any ``"`` in the text each line is one record and is checked by counting
delimiters; with quotes the ``csv`` module splits records (a quoted field may span
lines) and the good records are re-serialised for pandas.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import ParseError
from ..sources import Collector, Input


@dataclass
class Table:
    """Header, the good records as CSV text, each record's first line number."""

    header: list[str]
    header_line: int
    delimiter: str
    records: str
    lines: list[int]
    comments: list[str] = field(default_factory=list)

    def frame(self) -> pd.DataFrame:
        """The records typed by pandas (int, float, bool, else string), indexed by line number.

        Empty cells are missing values; every other text (``NA``, ``N/A``, ``null``)
        is kept as written.
        """
        if not self.lines:
            df = pd.DataFrame(columns=list(dict.fromkeys(self.header)), dtype=object)  # one block: wide stays fast
        else:
            df = pd.read_csv(
                io.StringIO(self.records), sep=self.delimiter, header=None, names=self.header,
                dtype=None, keep_default_na=False, na_values=[""], engine="c", skip_blank_lines=False,
                low_memory=False,
            )
            if len(df) != len(self.lines):  # pragma: no cover - guards the line mapping
                raise AssertionError(f"{len(df)} rows parsed for {len(self.lines)} records")
        df.index = pd.Index(self.lines, name="line")
        return df


def _names(header: list[str], delim: str, most: int = 12) -> str:
    """The header's names for a reject reason: at most ``most`` of them, so a reject never copies a wide header."""
    if len(header) <= most:
        return delim.join(header)
    return delim.join(header[:most]) + f"{delim}… ({len(header) - most} more)"


def sniff_delimiter(line: str) -> str:
    """Tab if the header has tabs, else comma, else semicolon; comma for a single column."""
    if "\t" in line:
        return "\t"
    if "," in line:
        return ","
    if ";" in line:
        return ";"
    return ","


def split_table(inp: Input, col: Collector, *, delimiter: str | None = None, comments: bool = True) -> Table:
    """Parse ``inp`` as a delimited table with a header line.

    Blank lines are ignored; with ``comments`` lines starting with ``#`` are kept
    in ``Table.comments`` (not records). A record whose field count differs from
    the header is rejected with its line number.
    """
    raw = inp.text.splitlines()
    kept_comments: list[str] = []
    i = 0
    while i < len(raw) and (not raw[i].strip() or (comments and raw[i].startswith("#"))):
        if raw[i].startswith("#"):
            kept_comments.append(raw[i])
        i += 1
    if i == len(raw):
        raise ParseError(inp.name, None, "", "no header line: the input is empty")
    header_line = i + 1
    delim = delimiter or sniff_delimiter(raw[i])
    try:
        header = [h.strip() for h in next(csv.reader([raw[i]], delimiter=delim))]
    except csv.Error as exc:  # e.g. a field over the csv module's size limit
        raise ParseError(inp.name, header_line, raw[i][:200], f"not a CSV header ({exc})") from None
    n = len(header)
    body = raw[i + 1 :]
    if '"' not in inp.text:
        good: list[str] = []
        lines: list[int] = []
        for k, ln in enumerate(body, start=header_line + 1):
            if not ln.strip():
                continue
            if comments and ln.startswith("#"):
                kept_comments.append(ln)
                continue
            if ln.count(delim) != n - 1:
                col.reject(k, ln, f"expected {n} fields ({_names(header, delim)}), found {ln.count(delim) + 1}")
                continue
            good.append(ln)
            lines.append(k)
        return Table(header, header_line, delim, "\n".join(good) + "\n", lines, kept_comments)
    return _split_quoted(body, header, header_line, delim, col, comments, kept_comments)


def _split_quoted(body: list[str], header: list[str], header_line: int, delim: str, col: Collector,
                  comments: bool, kept_comments: list[str]) -> Table:
    n = len(header)
    yielded: list[int] = []

    def gen() -> Iterator[str]:
        for k, ln in enumerate(body, start=header_line + 1):
            if comments and ln.startswith("#"):
                kept_comments.append(ln)
                continue
            yielded.append(k)
            yield ln + "\n"

    out = io.StringIO()
    writer = csv.writer(out, delimiter=delim, lineterminator="\n")
    lines: list[int] = []
    mark = 0
    reader = csv.reader(gen(), delimiter=delim, strict=False)
    while True:
        try:
            rec = next(reader)
        except StopIteration:
            break
        except csv.Error as e:  # e.g. NUL byte
            start = yielded[mark] if mark < len(yielded) else yielded[-1]
            col.reject(start, body[start - header_line - 1], f"unreadable CSV record ({e})")
            mark = len(yielded)
            continue
        start = yielded[mark] if mark < len(yielded) else yielded[-1]
        end = yielded[-1]
        mark = len(yielded)
        if not rec or (len(rec) == 1 and not rec[0].strip()):
            continue
        if len(rec) != n:
            text = "\n".join(body[start - header_line - 1 : end - header_line])
            col.reject(start, text, f"expected {n} fields ({_names(header, delim)}), found {len(rec)}")
            continue
        writer.writerow(rec)
        lines.append(start)
    return Table(header, header_line, delim, out.getvalue(), lines, kept_comments)


_TRUE = {"true", "t", "yes", "y", "1"}
_FALSE = {"false", "f", "no", "n", "0"}


def to_float(values: pd.Series) -> pd.Series:
    """A column as float64; NaN where a cell is empty or not a number."""
    if pd.api.types.is_bool_dtype(values):
        return pd.Series(np.nan, index=values.index, dtype="float64")
    if pd.api.types.is_numeric_dtype(values):
        return values.astype("float64")
    return pd.to_numeric(values.astype(str).str.strip(), errors="coerce").astype("float64")


def parse_bool(values: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """true/false, yes/no, 1/0 (any case) to bool; also returns the mask of unparseable cells."""
    if pd.api.types.is_bool_dtype(values):
        return values.astype(bool), np.zeros(len(values), dtype=bool)
    low = values.astype(str).str.strip().str.lower()
    t = low.isin(_TRUE)
    f = low.isin(_FALSE)
    return t, ~(t | f).to_numpy()
