"""strace output → tidy frames: :func:`read_strace` and per-syscall summaries.

Reads every output shape of strace (pid prefixes of ``-f -o``, ``[pid N]`` on
stderr, ``-ff`` file sets, no prefix; ``-t/-tt/-ttt``, nanosecond and ``-r``
timestamps; ``-T``; ``-y/-yy`` annotations; ``-k`` stacks; ``-n/-i``; old and
new ``<... resumed>`` spacing) exactly: when the trace ends with strace's own
``-c/-C`` table, the per-syscall call and error counts are checked against it.
A file's or stream's last line without its newline (a trace cut while strace
wrote it) is rejected as "incomplete last line" by both scanners alike, never
read as a call; text passed inline by the program is whole.

A C scanner does the work when built (``pip install -e .``); the reference
scanner (Python, numpy and pyarrow; about 7 times slower) is used otherwise (or
with ``WORKBENCH_NO_NATIVE=1``) and both give identical frames.

:func:`to_parquet` converts a trace of any size to Parquet in bounded memory;
``read_strace`` loads it back (the same frame), or a part of it with
``columns=`` and ``filters=``.
"""
from ._read import native_available, read_strace
from ._schema import STRACE_SCHEMA, SUMMARY_SCHEMA
from .convert import ConvertResult, read_converted, to_parquet
from .summary import (
    compare_with_strace,
    counted_calls,
    duration_histogram,
    group_syscalls,
    parse_summary_table,
    strace_counts,
    syscall_summary,
)
from .waits import (
    calls_exceeding,
    classify_waits,
    duration_peaks,
    peaks_frame,
    slowest_calls,
    wait_summary,
)

__all__ = [
    "STRACE_SCHEMA",
    "ConvertResult",
    "read_converted",
    "to_parquet",
    "calls_exceeding",
    "classify_waits",
    "duration_peaks",
    "peaks_frame",
    "slowest_calls",
    "wait_summary",
    "SUMMARY_SCHEMA",
    "compare_with_strace",
    "counted_calls",
    "duration_histogram",
    "group_syscalls",
    "native_available",
    "parse_summary_table",
    "read_strace",
    "strace_counts",
    "syscall_summary",
]
