"""Content-keyed Parquet cache of read_strace results.

The key is a BLAKE2 hash of the input bytes, the reader options and the parser
sources, so an edited trace or a changed parser never reuses a stale entry. An
entry is three Parquet files (events, rejects, messages) plus the strace -C
table when the trace had one; scalar attributes travel in the events file's
metadata. Entries are written atomically (temporary name, then rename).
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

_HERE = Path(__file__).resolve().parent
_PARSER_FILES = ("_reference.py", "_native.c", "_read.py", "_schema.py")
_META_KEY = b"workbench.strace"


def default_dir() -> Path:
    """``$WORKBENCH_CACHE_DIR/strace``, else ``.workbench-cache/strace`` in the project
    checkout, else ``~/.cache/workbench/strace``."""
    base = os.environ.get("WORKBENCH_CACHE_DIR")
    if base:
        return Path(base) / "strace"
    try:
        from ..paths import project_root

        return project_root() / ".workbench-cache" / "strace"
    except FileNotFoundError:
        return Path.home() / ".cache" / "workbench" / "strace"


def _dir(where) -> Path:
    return default_dir() if where is True or where is None else Path(where)


def key_for(paths: list[Path], options: dict) -> str:
    """Hex key from the files' contents, the options and the parser's own sources."""
    h = hashlib.blake2b(digest_size=20)
    for name in _PARSER_FILES:
        p = _HERE / name
        if p.exists():
            h.update(p.read_bytes())
    h.update(json.dumps(options, sort_keys=True).encode())
    for path in paths:
        h.update(str(len(path.name)).encode() + path.name.encode())
        with open(path, "rb") as f:
            while chunk := f.read(1 << 22):
                h.update(chunk)
        h.update(b"\0end\0")
    return h.hexdigest()


def _write(table: pa.Table, path: Path) -> None:
    tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}")
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, path)


def store(key: str, where, frame: pd.DataFrame) -> None:
    """Write ``frame`` and its side tables under ``key``."""
    d = _dir(where)
    d.mkdir(parents=True, exist_ok=True)
    plain = frame.copy(deep=False)
    plain.attrs = {}
    meta = {"time_base": frame.attrs.get("time_base"), "lines": frame.attrs.get("lines"),
            "has_summary": frame.attrs.get("strace_summary") is not None,
            "categories": {c: [str(x) for x in frame[c].cat.categories]
                           for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)}}
    t = pa.Table.from_pandas(plain, preserve_index=False)
    t = t.replace_schema_metadata({**(t.schema.metadata or {}), _META_KEY: json.dumps(meta).encode()})
    for name in ("rejects", "messages", "strace_summary"):
        side = frame.attrs.get(name)
        if side is not None:
            _write(pa.Table.from_pandas(side, preserve_index=False), d / f"{key}.{name}.parquet")
    _write(t, d / f"{key}.parquet")  # last: its presence marks a complete entry


def load(key: str, where) -> pd.DataFrame | None:
    """The cached frame (with its attrs) or None when there is no complete entry."""
    d = _dir(where)
    main = d / f"{key}.parquet"
    if not main.exists():
        return None
    t = pq.read_table(main)
    meta = json.loads((t.schema.metadata or {}).get(_META_KEY, b"{}"))
    frame = t.to_pandas()
    for c, cats in meta.get("categories", {}).items():
        frame[c] = pd.Categorical(frame[c].astype(object), categories=pd.Index(cats, dtype=object))
    side = {}
    for name in ("rejects", "messages", "strace_summary"):
        p = d / f"{key}.{name}.parquet"
        if p.exists():
            side[name] = pq.read_table(p).to_pandas()
    if "rejects" not in side or "messages" not in side or (meta.get("has_summary") and "strace_summary" not in side):
        return None
    for df in side.values():
        for c in df.columns:
            if pd.api.types.is_string_dtype(df[c]) and not pd.api.types.is_object_dtype(df[c]):
                df[c] = df[c].astype(object)
    frame.attrs["rejects"] = side["rejects"]
    frame.attrs["messages"] = side["messages"]
    frame.attrs["strace_summary"] = side.get("strace_summary")
    frame.attrs["time_base"] = meta.get("time_base")
    frame.attrs["lines"] = meta.get("lines")
    return frame
