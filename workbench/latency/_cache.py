"""Content-keyed Parquet cache of read_latency results, one entry per file.

The key is a BLAKE2 hash of the file's bytes, the reader options and this
package's own sources, so an edited file or a changed parser never reuses a stale
entry. An entry is the frame as Parquet plus its attrs (rejects, summaries)
pickled beside it; both are written atomically (temporary name, then rename),
the Parquet file last so its presence marks a complete entry. The attrs file is
read only from the cache directory this library wrote.
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
from pathlib import Path

import numpy as np
import pandas as pd

_HERE = Path(__file__).resolve().parent


def default_dir() -> Path:
    """``$WORKBENCH_CACHE_DIR/latency`` or ``~/.cache/workbench/latency``."""
    base = os.environ.get("WORKBENCH_CACHE_DIR")
    return (Path(base) if base else Path.home() / ".cache" / "workbench") / "latency"


def cache_dir(where: bool | str | os.PathLike) -> Path:
    return default_dir() if where is True else Path(where)


_SOURCES_DIGEST: bytes | None = None


def _sources_digest() -> bytes:
    global _SOURCES_DIGEST
    if _SOURCES_DIGEST is None:
        h = hashlib.blake2b(digest_size=16)
        for p in sorted(_HERE.glob("*.py")):
            h.update(p.name.encode() + b"\0" + p.read_bytes())
        _SOURCES_DIGEST = h.digest()
    return _SOURCES_DIGEST


def key_for(path: Path, options: dict) -> str:
    """Hex key from the file's bytes, the options and the loader's sources."""
    h = hashlib.blake2b(digest_size=20)
    h.update(_sources_digest())
    h.update(json.dumps(options, sort_keys=True, default=str).encode())
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def _atomic(path: Path, write) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    write(tmp)
    os.replace(tmp, path)


def store(key: str, where, frame: pd.DataFrame, source_name: str) -> None:
    """Write ``frame`` (without the source name, which the reader sets) under ``key``."""
    d = cache_dir(where)
    d.mkdir(parents=True, exist_ok=True)
    plain = frame.copy(deep=False)
    plain.attrs = {}
    attrs = dict(frame.attrs)
    attrs["_object_columns"] = [c for c in frame.columns if pd.api.types.is_object_dtype(frame[c])]

    def dump(p: Path) -> None:
        with open(p, "wb") as f:
            pickle.dump(attrs, f, protocol=pickle.HIGHEST_PROTOCOL)

    _atomic(d / f"{key}.attrs.pkl", dump)
    _atomic(d / f"{key}.parquet", lambda p: plain.to_parquet(p, index=False, compression="zstd"))


def load(key: str, where) -> pd.DataFrame | None:
    """The cached frame with its attrs, or None when there is no complete entry."""
    d = cache_dir(where)
    main, side = d / f"{key}.parquet", d / f"{key}.attrs.pkl"
    if not (main.exists() and side.exists()):
        return None
    frame = pd.read_parquet(main)
    with open(side, "rb") as f:
        attrs = pickle.load(f)  # noqa: S301 - written by store() in the user's own cache directory
    for c in attrs.pop("_object_columns", []):  # Parquet brings these back as strings
        col = frame[c].astype(object)
        frame[c] = col.where(col.notna(), np.nan)  # missing values are NaN, as the loaders write them
    frame.attrs = attrs
    return frame
