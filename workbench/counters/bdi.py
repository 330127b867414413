"""Backing-device readahead size: ``/sys/class/bdi/<dev>/read_ahead_kb``.

Accepts the file itself (one integer; the device is taken from the path), a
``/sys/class/bdi`` directory, or a listing of ``<path or device> <kb>`` lines as
written by ``for f in /sys/class/bdi/*/read_ahead_kb; do echo "$f $(cat $f)"; done``.
Returns the long counters frame: ``source='bdi'``, item = device (``254:0``,
``ceph-1``), counter ``read_ahead_kb``, unit KiB, kind gauge.
"""
from __future__ import annotations

import os
import re
from pathlib import Path, PurePath

import pandas as pd

from ..errors import InputNotFoundError
from ..sources import Collector, Input, Source
from ._common import CounterRow, load_rows, no_rows_error


def _device(path: str) -> str:
    parts = PurePath(path).parts
    if parts and parts[-1] == "read_ahead_kb" and len(parts) >= 2:
        return parts[-2]
    return parts[-1] if parts else ""


def read_read_ahead_kb(source: Source, *, host: str = "", timestamp: float | None = None,
                       strict: bool = False) -> pd.DataFrame:
    """Read ``read_ahead_kb`` values (file, directory or listing) into the long counters frame."""
    if isinstance(source, (str, os.PathLike)) and "\n" not in str(source) and Path(source).is_dir():
        d = Path(source)  # /sys/class/bdi (entries are symlinks) or one device's directory
        files = sorted(d.glob("*/read_ahead_kb")) or ([d / "read_ahead_kb"] if (d / "read_ahead_kb").exists() else [])
        if not files:
            raise InputNotFoundError(f"{d}: no read_ahead_kb file in this folder nor in its subfolders; "
                                     "expected /sys/class/bdi, one device's folder or a read_ahead_kb file")
        source = files
    return load_rows(source, "read_ahead_kb", parse_read_ahead_kb, host=host, timestamp=timestamp, strict=strict)


def parse_read_ahead_kb(inp: Input, col: Collector) -> list[CounterRow]:
    """Rows of one ``read_ahead_kb`` file or listing (see :func:`read_read_ahead_kb`)."""
    rows: list[CounterRow] = []
    for n, raw in enumerate(inp.text.splitlines(), 1):
        if not raw.strip():
            continue
        toks = raw.split()
        if len(toks) == 1 and re.fullmatch(r"\d+", toks[0]):
            rows.append(("bdi", "", _device(inp.name), "read_ahead_kb", float(toks[0]), "KiB", "gauge"))
        elif len(toks) == 2 and re.fullmatch(r"\d+", toks[1]):
            rows.append(("bdi", "", _device(toks[0]), "read_ahead_kb", float(toks[1]), "KiB", "gauge"))
        else:
            col.reject(n, raw, "expected '<kb>' or '<device or path> <kb>'")
    if not rows:
        raise no_rows_error(inp, col, "read_ahead_kb")
    return rows
