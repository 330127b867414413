"""Per-syscall summaries of a read_strace frame: the equivalent of ``strace -c``.

strace counts a call when it *exits* (``count_syscall()`` runs at syscall exit):
a bare ``= ?`` (exit_group, a call cut short by the death of its thread) is
not counted; ``= ? ERESTART…`` is counted, as an error; every return with an
errno is an error.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..schema import SideTable, requires, validate
from ._derived import Derived, floats, group_by_code, group_order_stats
from ._schema import SUMMARY_SCHEMA


def counted_calls(frame: pd.DataFrame) -> np.ndarray:
    """Boolean numpy mask of the rows strace's -c counts (calls that returned: kind
    "call" and a return other than a bare ``?``)."""
    requires(frame, "kind", "ret_text")
    return Derived(frame).counted().copy()


def _counted_codes(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Syscall names, and the positions and codes of the counted calls that have a syscall."""
    der = Derived(frame)
    c = der.codes()
    pos = np.flatnonzero(der.counted() & (c.codes >= 0))
    return c.names, pos, c.codes[pos]


def _has_errno(frame: pd.DataFrame, pos: np.ndarray) -> np.ndarray:
    s = frame["errno"]
    if isinstance(s.dtype, pd.CategoricalDtype):
        return np.asarray(s.array.codes)[pos] >= 0
    return s.notna().to_numpy(dtype=bool)[pos]


def strace_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-syscall ``calls`` and ``errors`` under strace's rules, sorted by syscall name.

    Columns: syscall (str), calls (int64), errors (int64).
    """
    requires(frame, "kind", "ret_text", "syscall", "errno")
    names, pos, code = _counted_codes(frame)
    calls = np.bincount(code, minlength=len(names))
    errors = np.bincount(code, weights=_has_errno(frame, pos), minlength=len(names))
    present = np.flatnonzero(calls)
    out = pd.DataFrame({"syscall": pd.Index(names[present], dtype=object), "calls": calls[present].astype("int64"),
                        "errors": errors[present].astype("int64")})
    return out.sort_values("syscall", kind="stable").reset_index(drop=True)


def syscall_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-syscall counts, errors and duration statistics (the ``strace -c`` table and more).

    Columns: syscall, calls, errors, total_s, mean_s, median_s, p99_s, max_s;
    sorted by total_s descending (then calls), like ``strace -c``.
    Durations come from -T (``duration_s``); NaN when the trace has none.
    """
    requires(frame, "kind", "ret_text", "syscall", "errno", "duration_s")
    names, pos, code = _counted_codes(frame)
    d = floats(frame["duration_s"])[pos]
    calls = np.bincount(code, minlength=len(names))
    errors = np.bincount(code, weights=_has_errno(frame, pos), minlength=len(names))
    present = np.flatnonzero(calls)
    timed = ~np.isnan(d)
    g = group_by_code(d[timed], code[timed], len(names))
    median, (p99,) = group_order_stats(d[timed], code[timed], len(names), (0.99,))
    stats = pd.DataFrame({
        "total_s": g.sum(),
        "mean_s": g.mean(),
        "max_s": g.max(),
    })
    stats.index = np.asarray(stats.index, dtype=np.int64)
    stats = stats.reindex(present)
    out = pd.DataFrame({"syscall": names[present].astype(object), "calls": calls[present].astype("int64"),
                        "errors": errors[present].astype("int64")})
    out["total_s"] = stats["total_s"].to_numpy(dtype=float)
    out["mean_s"] = stats["mean_s"].to_numpy(dtype=float)
    out["median_s"] = median[present]
    out["p99_s"] = p99[present]
    out["max_s"] = stats["max_s"].to_numpy(dtype=float)
    out["syscall"] = out["syscall"].astype(object)
    out = out.sort_values(["total_s", "calls", "syscall"], ascending=[False, False, True],
                          na_position="last", kind="stable").reset_index(drop=True)
    return validate(out, SUMMARY_SCHEMA)


def duration_histogram(frame: pd.DataFrame, bins_per_decade: int = 10, min_s: float = 1e-7,
                       max_s: float = 100.0, syscalls: list[str] | None = None) -> pd.DataFrame:
    """Log-binned histogram of call durations per syscall.

    Returns a long frame: syscall, bin_lo_s, bin_hi_s, count (int64); bins with
    zero count are kept so every syscall has the same edges. Durations below
    ``min_s`` land in the first bin, above ``max_s`` in the last.
    """
    requires(frame, "kind", "ret_text", "syscall", "duration_s")
    if not (0 < min_s < max_s):
        raise UsageError(f"duration_histogram(min_s={min_s!r}, max_s={max_s!r}): expected 0 < min_s < max_s")
    if bins_per_decade < 1:
        raise UsageError(f"duration_histogram(bins_per_decade={bins_per_decade!r}): expected at least 1")
    tv = Derived(frame).timed()
    decades = np.log10(max_s) - np.log10(min_s)
    edges = np.logspace(np.log10(min_s), np.log10(max_s), int(round(decades * bins_per_decade)) + 1)
    nb = len(edges) - 1
    has = tv.code >= 0
    idx = np.clip(np.searchsorted(edges, tv.dur[has], side="right") - 1, 0, nb - 1)
    # one 2-D bincount: (syscall code, bin)
    counts = np.bincount(tv.code[has].astype(np.int64) * nb + idx, minlength=len(tv.names) * nb).reshape(-1, nb)
    at = {str(n): i for i, n in enumerate(tv.names)}
    if syscalls is None:
        wanted = sorted({str(tv.names[c]) for c in np.unique(tv.code[has])})
    else:
        wanted = list(syscalls)
    if not wanted:
        return pd.DataFrame({"syscall": pd.Series(dtype=object), "bin_lo_s": pd.Series(dtype=float),
                             "bin_hi_s": pd.Series(dtype=float), "count": pd.Series(dtype="int64")})
    zero = np.zeros(nb, dtype=np.int64)
    rows = [counts[at[str(s)]] if str(s) in at else zero for s in wanted]
    return pd.DataFrame({"syscall": np.repeat(np.asarray(wanted, dtype=object), nb),
                         "bin_lo_s": np.tile(edges[:-1], len(wanted)), "bin_hi_s": np.tile(edges[1:], len(wanted)),
                         "count": np.concatenate(rows).astype("int64")})


def group_syscalls(frame: pd.DataFrame, keep: Iterable[str] = (), other: str = "all syscalls") -> pd.DataFrame:
    """``frame`` with every syscall name not in ``keep`` replaced by ``other`` (rows without a syscall keep none).

    For histograms and peaks of pooled calls: ``group_syscalls(trace)`` pools all
    calls under one name, ``group_syscalls(trace, ["futex"], "all other
    syscalls")`` keeps futex apart. The syscall column becomes a categorical
    (kept names, then ``other``); the other columns are shared with ``frame``
    (copy-on-write), nothing else is copied.
    """
    requires(frame, "syscall")
    c = Derived(frame).codes()
    wanted = sorted({str(n) for n in keep} & {str(n) for n in c.names} - {other})
    cats = [*wanted, other]
    at = {n: i for i, n in enumerate(cats)}
    lut = np.array([at.get(str(n), len(wanted)) for n in c.names] + [-1], dtype=np.int32)
    codes: np.ndarray[Any, np.dtype[np.int32]] = lut[c.codes]
    return frame.assign(syscall=pd.Categorical.from_codes(codes, categories=pd.Index(cats)))


def parse_summary_table(lines: list[str]) -> pd.DataFrame:
    """strace's ``-c/-C`` table (all personalities summed) as syscall, calls, errors, seconds.

    Rows are ``% time seconds usecs/call calls [errors] syscall``; the errors
    cell is blank when zero. The ``total`` row is dropped.
    """
    rows = []
    for line in lines:
        t = line.split()
        if len(t) < 5 or line.startswith("%") or line.startswith("-") or t[-1] == "total":
            continue
        try:
            float(t[0])  # % time
            secs, calls = float(t[1]), int(t[3])
            errors = int(t[4]) if len(t) >= 6 else 0
        except ValueError:
            continue  # not a table row (a damaged trace can put anything after a '% time' header)
        rows.append((t[-1], calls, errors, secs))
    df = pd.DataFrame(rows, columns=["syscall", "calls", "errors", "seconds"])
    df = df.groupby("syscall", sort=True, as_index=False).agg(
        calls=("calls", "sum"), errors=("errors", "sum"), seconds=("seconds", "sum"))
    df["syscall"] = df["syscall"].astype(object)
    return df


def compare_with_strace(frame: pd.DataFrame, table: pd.DataFrame | SideTable) -> pd.DataFrame:
    """Join parsed counts with strace's table; rows where calls or errors differ.

    ``table``: strace's own -c/-C table (``frame.attrs["strace_summary"]`` or
    :func:`parse_summary_table`'s frame). Columns: syscall, calls_strace,
    calls_parsed, errors_strace, errors_parsed. An empty frame means the parse
    reproduces strace's own summary exactly.
    """
    requires(frame, "kind", "ret_text", "syscall", "errno")
    table = requires(table.frame() if isinstance(table, SideTable) else table, "syscall", "calls", "errors",
                     by="compare_with_strace(table=)")
    mine = strace_counts(frame).rename(columns={"calls": "calls_parsed", "errors": "errors_parsed"})
    theirs = table[["syscall", "calls", "errors"]].rename(
        columns={"calls": "calls_strace", "errors": "errors_strace"})
    j = theirs.merge(mine, on="syscall", how="outer").fillna(0)
    for c in ("calls_strace", "calls_parsed", "errors_strace", "errors_parsed"):
        j[c] = j[c].astype("int64")
    bad = (j["calls_strace"] != j["calls_parsed"]) | (j["errors_strace"] != j["errors_parsed"])
    return j.loc[bad, ["syscall", "calls_strace", "calls_parsed", "errors_strace",
                       "errors_parsed"]].reset_index(drop=True)
