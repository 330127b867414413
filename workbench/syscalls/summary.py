"""Per-syscall summaries of a read_strace frame: the equivalent of ``strace -c``.

strace counts a call when it *exits* (``count_syscall()`` runs at syscall exit):
a bare ``= ?`` (exit_group, a call cut short by the death of its thread) is
not counted; ``= ? ERESTART…`` is counted, as an error; every return with an
errno is an error.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..schema import SideTable, requires, validate
from ._schema import SUMMARY_SCHEMA


def counted_calls(frame: pd.DataFrame) -> np.ndarray:
    """Boolean numpy mask of the rows strace's -c counts (calls that returned: kind
    "call" and a return other than a bare ``?``)."""
    requires(frame, "kind", "ret_text")
    return (frame["kind"] == "call").to_numpy() & (frame["ret_text"] != "?").fillna(False).to_numpy()


def strace_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-syscall ``calls`` and ``errors`` under strace's rules, sorted by syscall name.

    Columns: syscall (str), calls (int64), errors (int64).
    """
    requires(frame, "kind", "ret_text", "syscall", "errno")
    m = counted_calls(frame)
    sub = pd.DataFrame({
        "syscall": frame["syscall"].astype(object).to_numpy()[m],
        "error": frame["errno"].notna().to_numpy()[m],
    })
    g = sub.groupby("syscall", sort=True)["error"].agg(["size", "sum"])
    out = pd.DataFrame({"syscall": g.index.astype(object), "calls": g["size"].astype("int64").to_numpy(),
                        "errors": g["sum"].astype("int64").to_numpy()})
    return out.reset_index(drop=True)


def syscall_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-syscall counts, errors and duration statistics (the ``strace -c`` table and more).

    Columns: syscall, calls, errors, total_s, mean_s, median_s, p99_s, max_s;
    sorted by total_s descending (then calls), like ``strace -c``.
    Durations come from -T (``duration_s``); NaN when the trace has none.
    """
    requires(frame, "kind", "ret_text", "syscall", "errno", "duration_s")
    m = counted_calls(frame)
    sub = pd.DataFrame({
        "syscall": frame["syscall"].astype(object).to_numpy()[m],
        "error": frame["errno"].notna().to_numpy()[m],
        "d": frame["duration_s"].to_numpy()[m],
    })
    g = sub.groupby("syscall", sort=True)
    out = pd.DataFrame({
        "calls": g.size().astype("int64"),
        "errors": g["error"].sum().astype("int64"),
        "total_s": g["d"].sum(min_count=1),
        "mean_s": g["d"].mean(),
        "median_s": g["d"].median(),
        "p99_s": g["d"].quantile(0.99),
        "max_s": g["d"].max(),
    })
    out.index = out.index.astype(object)
    out = out.rename_axis("syscall").reset_index()
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
    m = counted_calls(frame) & frame["duration_s"].notna().to_numpy()
    names = frame["syscall"].astype(object).to_numpy()[m]
    d = frame["duration_s"].to_numpy()[m]
    decades = np.log10(max_s) - np.log10(min_s)
    edges = np.logspace(np.log10(min_s), np.log10(max_s), int(round(decades * bins_per_decade)) + 1)
    idx = np.clip(np.searchsorted(edges, d, side="right") - 1, 0, len(edges) - 2)
    wanted = sorted(set(names)) if syscalls is None else list(syscalls)
    rows = []
    for s in wanted:
        counts = np.bincount(idx[names == s], minlength=len(edges) - 1)
        rows.append(pd.DataFrame({"syscall": s, "bin_lo_s": edges[:-1], "bin_hi_s": edges[1:],
                                  "count": counts.astype("int64")}))
    if not rows:
        return pd.DataFrame({"syscall": pd.Series(dtype=object), "bin_lo_s": pd.Series(dtype=float),
                             "bin_hi_s": pd.Series(dtype=float), "count": pd.Series(dtype="int64")})
    return pd.concat(rows, ignore_index=True)


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
