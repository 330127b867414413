"""The documented schema of :func:`workbench.syscalls.read_strace` frames."""
from __future__ import annotations

from ..schema import Column, Schema

STRACE_SCHEMA = Schema(
    name="strace_events",
    doc=(
        "One row per system call (an <unfinished ...>/<... resumed> pair is one row), "
        "signal delivery, group stop, exit or kill, in trace order (-ff sets: merged by time). "
        "Storage: kind, syscall, errno and signal are categorical (object categories, sorted; kind in "
        "the fixed order below); args, ret_text and backtrace are pandas' 'str' dtype on Arrow "
        "large_string buffers (the scanner's own, never Python objects; NaN where missing); pid and "
        "retval are nullable Int64; the *_s columns float64; line int64."
    ),
    columns=(
        Column("kind", "category", doc="categorical: call | unfinished (never resumed: death, detach, end of file) | "
               "signal | stopped | exit | killed | superseded"),
        Column("pid", "int", doc="thread id (Int64; missing where the trace does not say it)"),
        Column("timestamp_s", "float", "s", "start: epoch seconds (-ttt, ns), seconds since local "
               "midnight of the first line (-t/-tt, rolled over at midnight), seconds since the first "
               "line (-r), NaN without timestamps; attrs['time_base'] says which"),
        Column("end_timestamp_s", "float", "s", "timestamp of the line that completed the call "
               "(the <... resumed> half), else equal to timestamp_s"),
        Column("duration_s", "float", "s", "-T time spent in the call, NaN where not printed"),
        Column("syscall", "category", doc="system call name, categorical (missing for signal/exit rows)"),
        Column("args", "string", doc="raw argument text ('str' dtype, Arrow storage); both halves "
               "joined for split calls; siginfo for signals"),
        Column("ret_text", "string", doc="raw return text ('str' dtype, Arrow storage: '0', '-1 ENOENT (No such file or directory)', "
               "'? ERESTARTSYS (…)', '?'), the marker '<unfinished ...>'/'<detached ...>' for "
               "unfinished rows, 'exited with 0'/'killed by SIGKILL' for exits"),
        Column("retval", "int", doc="numeric return value (Int64; hex values as two's complement "
               "int64), exit status for exits; missing for '?'"),
        Column("errno", "category", doc="error name, categorical (ENOENT, ERESTARTSYS, 'errno 123'), missing if none"),
        Column("signal", "category", doc="signal name, categorical, for signal, stopped and killed rows"),
        Column("backtrace", "string", doc="-k stack frames of the call, one per line ('str' dtype, Arrow "
               "storage), missing (NaN) without -k"),
        Column("line", "int", doc="1-based line number of the row's first line in its file"),
    ),
)

SUMMARY_SCHEMA = Schema(
    name="strace_summary",
    doc="Per-syscall statistics computed from a read_strace frame (strace -c rules).",
    columns=(
        Column("syscall", "string", doc="system call name"),
        Column("calls", "int", doc="calls that returned (bare '= ?' not counted, ERESTART* counted)"),
        Column("errors", "int", doc="counted calls that returned an errno"),
        Column("total_s", "float", "s", "sum of -T durations of counted calls (NaN without -T)"),
        Column("mean_s", "float", "s", "mean duration"),
        Column("median_s", "float", "s", "median duration"),
        Column("p99_s", "float", "s", "99th percentile duration"),
        Column("max_s", "float", "s", "longest duration"),
    ),
)
