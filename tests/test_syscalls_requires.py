"""The syscall analyses say what they need: columns (SchemaError naming the analysis), parameters (UsageError)."""
from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from workbench.errors import SchemaError, UsageError
from workbench.syscalls import (
    calls_exceeding,
    classify_waits,
    compare_with_strace,
    counted_calls,
    duration_histogram,
    duration_peaks,
    read_strace,
    slowest_calls,
    strace_counts,
    syscall_summary,
    wait_summary,
)

TEXT = ("1 1700000000.000000 futex(0x1, FUTEX_WAIT, 0, NULL) = 0 <0.250000>\n"
        "1 1700000000.300000 read(3<socket:[1]>, \"x\", 1) = 1 <0.000010>\n"
        "1 1700000000.400000 openat(AT_FDCWD, \"a\", O_RDONLY) = -1 ENOENT (x) <0.000020>\n")


@pytest.fixture(scope="module")
def trace() -> pd.DataFrame:
    return read_strace(TEXT)


ANALYSES = [
    (counted_calls, "ret_text"), (strace_counts, "errno"), (syscall_summary, "duration_s"),
    (duration_histogram, "duration_s"), (classify_waits, "args"), (duration_peaks, "duration_s"),
    (lambda f: calls_exceeding(f, 0.1), "pid"), (slowest_calls, "line"), (wait_summary, "timestamp_s"),
]


@pytest.mark.parametrize(("analysis", "column"), ANALYSES)
def test_a_missing_column_is_named(trace: pd.DataFrame, analysis, column: str) -> None:
    analysis(trace)  # the whole frame is enough
    with pytest.raises(SchemaError, match=rf"needs column\(s\) \['{column}'\]"):
        analysis(trace.drop(columns=[column]))


def test_the_analysis_is_named_and_a_non_frame_refused(trace: pd.DataFrame) -> None:
    with pytest.raises(SchemaError, match=r"^syscall_summary needs column\(s\) \['duration_s'\]"):
        syscall_summary(trace.drop(columns=["duration_s"]))
    with pytest.raises(UsageError, match="wait_summary needs a pandas DataFrame, got list"):
        wait_summary([1, 2])


def test_compare_with_strace_takes_the_side_table_or_a_frame(trace: pd.DataFrame) -> None:
    table = pd.DataFrame({"syscall": ["futex", "openat", "read"], "calls": [1, 1, 1], "errors": [0, 1, 0]})
    assert compare_with_strace(trace, table).empty
    from workbench.schema import SideTable

    assert compare_with_strace(trace, SideTable(table)).empty
    with pytest.raises(SchemaError, match=r"compare_with_strace\(table=\) needs column\(s\) \['errors'\]"):
        compare_with_strace(trace, table.drop(columns=["errors"]))


def test_parameters_are_checked(trace: pd.DataFrame) -> None:
    with pytest.raises(UsageError, match=r"duration_peaks\(min_s=0.0, max_s=1.0\): expected 0 < min_s < max_s"):
        duration_peaks(trace, min_s=0.0, max_s=1.0)
    with pytest.raises(UsageError, match=r"duration_peaks\(bins_per_decade=0\)"):
        duration_peaks(trace, bins_per_decade=0)
    with pytest.raises(UsageError, match=r"duration_histogram\(min_s=1.0, max_s=0.5\)"):
        duration_histogram(trace, min_s=1.0, max_s=0.5)
    with pytest.raises(UsageError, match=r"duration_histogram\(bins_per_decade=0\)"):
        duration_histogram(trace, bins_per_decade=0)
    with pytest.raises(UsageError, match=r"slowest_calls\(wait_class='busy'\): expected 'idle', 'kernel' or None"):
        slowest_calls(trace, wait_class="busy")
    assert slowest_calls(trace, wait_class="idle")["syscall"].tolist() == ["futex", "read"]


def test_importing_syscalls_does_not_import_scipy() -> None:
    code = "import sys, workbench.syscalls; print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
