"""Loader for the readahead probe's output directory (``workbench lab readahead --out DIR``).

The directory holds ``reads.csv`` (one row per tiny read, :data:`PROBE_READS_SCHEMA`),
``files.csv`` (whole-file residency per advice, :data:`PROBE_FILES_SCHEMA`),
``counters.snapshots`` (``/proc/vmstat`` and ``/proc/self/io`` before/after each advice, in
the snapshot-series log convention) and ``meta.json`` (configuration, environment, phase times).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..errors import ParseError
from ..paths import resolve
from ..schema import Column, Schema, attach_rejects, validate
from .series import read_series

PROBE_READS_SCHEMA = Schema(
    name="readahead_probe_reads",
    doc="One tiny read: where, how big, and the file's resident pages before and after it.",
    columns=(
        Column("advice", "string", doc="posix_fadvise advice in force: normal, random, sequential"),
        Column("file", "string"), Column("file_kind", "string", doc="small or large"),
        Column("size_bytes", "int", "bytes"), Column("offset_bytes", "int", "bytes"),
        Column("request_bytes", "int", "bytes", "bytes the read asked for"),
        Column("order", "int", doc="0 = the read at offset 0, then the random-offset reads"),
        Column("resident_before_pages", "int", "pages"), Column("resident_after_pages", "int", "pages"),
        Column("pulled_bytes", "int", "bytes", "residency change across the read × page size"),
    ),
)
PROBE_FILES_SCHEMA = Schema(
    name="readahead_probe_files",
    doc="Whole-file residency per advice: after the drop (baseline) and after the reads (final).",
    columns=(
        Column("advice", "string"), Column("file", "string"), Column("file_kind", "string"),
        Column("size_bytes", "int", "bytes"), Column("baseline_pages", "int", "pages"),
        Column("final_pages", "int", "pages"),
    ),
)


@dataclass(frozen=True)
class ProbeCapture:
    """A readahead probe run: per-read rows, per-file residency, counter snapshots, metadata."""

    reads: pd.DataFrame
    files: pd.DataFrame
    counters: pd.DataFrame
    meta: dict


def _csv(path: Path, schema: Schema) -> pd.DataFrame:
    try:
        df = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ParseError(str(path), None, "", f"not a readable CSV: {exc}") from exc
    missing = [c for c in schema.names() if c not in df.columns]
    if missing:
        raise ParseError(str(path), 1, ",".join(df.columns), f"missing columns {missing}")
    for c in schema.columns:
        if c.kind == "string":
            df[c.name] = df[c.name].astype(str).astype(object)
    attach_rejects(df, [])
    return validate(df, schema)


def read_readahead_probe(directory: str | Path) -> ProbeCapture:
    """Read a probe output directory into a :class:`ProbeCapture`."""
    d = resolve(directory)
    need = ["reads.csv", "files.csv", "counters.snapshots", "meta.json"]
    missing = [n for n in need if not (d / n).exists()]
    if missing:
        raise FileNotFoundError(f"{d}: not a readahead probe output (missing {', '.join(missing)})")
    meta = json.loads((d / "meta.json").read_text())
    return ProbeCapture(reads=_csv(d / "reads.csv", PROBE_READS_SCHEMA), files=_csv(d / "files.csv", PROBE_FILES_SCHEMA),
                        counters=read_series(d / "counters.snapshots"), meta=meta)
