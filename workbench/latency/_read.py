"""The single entry point of the latency loaders."""
from __future__ import annotations

import functools
import importlib
import os
import warnings
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from ..errors import ParseError
from ..schema import attach_rejects, validate
from ._common import Collector, Input, unit_seconds
from ._detect import FORMATS, canonical_format, detect_format
from ._schemas import DISTRIBUTION_SCHEMA, SAMPLES_SCHEMA
from ._source import Source, read_path, resolve_sources

# format name -> (module, function); each function takes (Input, Collector, **options)
_READERS = {
    "csv": ("_csv", "read_csv_samples"),
    "hlog": ("_hdr", "read_hlog"),
    "hgrm": ("_hdr", "read_hgrm"),
    "wrk": ("_wrk", "read_wrk"),
    "ghz": ("_ghz", "read_ghz"),
    "fortio": ("_fortio", "read_fortio"),
    "k6": ("_k6", "read_k6"),
    "locust": ("_locust", "read_locust"),
    "jmeter": ("_jmeter", "read_jmeter"),
    "hey": ("_hey", "read_hey"),
}
_CSV_ONLY = ("latency_column", "timestamp_column", "timestamp_unit")
#: plain CSV files bigger than this are read in blocks with a progress bar
STREAM_BYTES = 64 << 20
#: size of one block when streaming
BLOCK_BYTES = 32 << 20
_UNIT_FORMATS = ("csv", "hlog", "hgrm")


def _options_for(fmt: str, options: dict) -> dict:
    opts = {k: v for k, v in options.items() if v is not None}
    if fmt != "csv":
        for k in _CSV_ONLY:
            if opts.pop(k, None) is not None:
                raise ValueError(f"{k}= applies to plain CSV only, not to format {fmt!r}")
    if fmt != "k6" and opts.pop("metric", None) is not None:
        raise ValueError("metric= applies to k6 only")
    if fmt not in _UNIT_FORMATS and opts.pop("unit", None) is not None:
        raise ValueError(f"unit= is not accepted for format {fmt!r}: its units are fixed by the tool")
    return opts


def _read_one(inp: Input, fmt: str | None, strict: bool, options: dict) -> pd.DataFrame:
    if fmt is None:
        fmt = detect_format(inp.text, inp.name)
        if fmt is None:
            first = next((ln for ln in inp.text.splitlines() if ln.strip()), "")
            raise ValueError(
                f"{inp.name}: cannot tell the latency format from the content (first line {first[:120]!r}); "
                f"expected one of {', '.join(f'{k} ({v})' for k, v in FORMATS.items())}; pass format= to force"
            )
    mod_name, fn_name = _READERS[fmt]
    fn = getattr(importlib.import_module(f"{__package__}.{mod_name}"), fn_name)
    return fn(inp, Collector(inp.name, strict), **_options_for(fmt, options))


def _head_format(path: Path, fmt: str | None) -> str | None:
    if fmt is not None:
        return fmt
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    if head[:2] == b"\x1f\x8b":
        return None
    text = head.decode("utf-8-sig", errors="replace")
    return detect_format(text[: text.rfind("\n") + 1] or text, str(path))


def _read_file(path: Path, fmt: str | None, strict: bool, options: dict, cache,
               progress: bool | None) -> pd.DataFrame:
    key = None
    if cache:
        from . import _cache

        key = _cache.key_for(path, {"format": fmt, **options})
        hit = _cache.load(key, cache)
        if hit is not None:
            hit.attrs["source"] = str(path)
            rej = hit.attrs["rejects"]
            rej["source"] = pd.Series([str(path)] * len(rej), index=rej.index, dtype=object)
            if strict and len(rej):
                first = rej.sort_values("line").iloc[0]
                raise ParseError(str(path), int(first["line"]), first["text"], first["reason"])
            return hit
    if path.stat().st_size > STREAM_BYTES and _head_format(path, fmt) == "csv":
        from ._csv import read_csv_stream

        frame = read_csv_stream(path, Collector(str(path), strict), block_bytes=BLOCK_BYTES,
                                progress=progress is not False, **_options_for("csv", options))
    else:
        frame = _read_one(read_path(path), fmt, strict, options)
    if key is not None:
        try:
            _cache.store(key, cache, frame, str(path))
        except (OSError, ValueError, TypeError) as e:  # e.g. mixed-type tag columns Parquet cannot hold
            warnings.warn(f"latency cache not written for {path}: {e}", stacklevel=3)
    return frame


def _read_part(path: Path, *, fmt: str | None, strict: bool, options: dict, cache,
               progress: bool) -> pd.DataFrame:
    """One file of a dask read: the pandas frame with its ``file`` column, validated."""
    fr = _read_file(path, fmt, strict, options, cache, progress)
    attrs = fr.attrs
    out = fr.assign(file=str(path))
    out.attrs = attrs
    return validate(out, SAMPLES_SCHEMA if attrs["kind"] == "samples" else DISTRIBUTION_SCHEMA)


def read_latency(
    source: Source,
    format: str | None = None,
    *,
    unit: str | None = None,
    strict: bool = False,
    latency_column: str | None = None,
    timestamp_column: str | None = None,
    timestamp_unit: str | None = None,
    metric: str | None = None,
    cache: bool | str | os.PathLike = False,
    progress: bool | None = None,
    engine: str = "pandas",
    client=None,
) -> pd.DataFrame:
    """Read latency samples or a latency distribution from any supported source.

    ``source``: a path, a glob, a list of paths, an open text stream or the text
    itself (a string with a newline, or one-line JSON starting with ``{``).
    ``format``: one of :data:`FORMATS` (detected from the content when None).
    ``unit``: latency unit (s, ms, us, ns) for sources that do not say (plain CSV
    with a bare ``latency`` column, hlog/hgrm values).
    ``latency_column``/``timestamp_column``/``timestamp_unit``: plain-CSV overrides.
    ``metric``: k6 metric to read (default ``http_req_duration``).
    ``strict``: raise :class:`~workbench.errors.ParseError` at the first record
    that cannot be parsed instead of keeping it in attrs["rejects"].
    ``cache``: True (``$WORKBENCH_CACHE_DIR/latency`` or ``~/.cache/workbench/latency``)
    or a directory: keep each file's result as Parquet keyed by its bytes, so the
    next load of the same file skips parsing. ``progress``: a progress bar over
    the files (default: when there are more than one); a plain CSV bigger than
    :data:`STREAM_BYTES` is read in blocks of whole records with a byte progress
    bar (default on), so memory holds one block of text at a time.

    Returns a frame with attrs["kind"] == "samples" (columns latency_s,
    timestamp_s, ok, carried columns; :data:`SAMPLES_SCHEMA`) or "distribution"
    (latency_s, percentile and/or count, …; :data:`DISTRIBUTION_SCHEMA`), see
    :mod:`workbench.latency`. Several files are concatenated with a ``file``
    column; they must give the same kind of frame.

    ``engine="dask"`` (files only) returns a dask DataFrame instead: one lazy
    partition per file, the same columns and dtypes as the pandas frame of
    several files (always with the ``file`` column), files in the given order;
    ``client`` is None (current Client, else a local in-process cluster), a
    scheduler address or a Client. Rejects: :func:`workbench.engine.rejects` or
    :func:`workbench.engine.compute`; see :mod:`workbench.engine`.
    """
    from ..engine import check_engine

    use_dask = check_engine(engine, source)
    fmt = canonical_format(format) if format is not None else None
    if unit is not None:
        unit_seconds(unit, "latency unit")
    options = {"unit": unit, "latency_column": latency_column, "timestamp_column": timestamp_column,
               "timestamp_unit": timestamp_unit, "metric": metric}
    items = resolve_sources(source)
    if use_dask:
        from ..engine import dask_frame

        if not all(isinstance(x, Path) for x in items):
            raise ValueError('engine="dask" reads files: give a path, a glob or a list of paths, not text')
        load = functools.partial(_read_part, fmt=fmt, strict=strict, options=options, cache=cache,
                                 progress=bool(progress))
        return dask_frame(items, load, client=client)
    names = [str(x) if isinstance(x, Path) else x.name for x in items]
    show = progress if progress is not None else len(items) > 1
    frames = []
    for item in tqdm(items, desc="read_latency", unit="file", disable=not show):
        if isinstance(item, Path):
            frames.append(_read_file(item, fmt, strict, options, cache, progress))
        else:
            frames.append(_read_one(item, fmt, strict, options))
    if len(frames) == 1:
        return frames[0]
    kinds = {fr.attrs["kind"] for fr in frames}
    if len(kinds) > 1:
        raise ValueError(f"the sources give different kinds of frame {sorted(kinds)}; read them separately")
    parts = []
    rejects = []
    skipped: dict[str, int] = {}
    for name, fr in zip(names, frames, strict=True):
        parts.append(fr.assign(file=name))
        rejects.extend(fr.attrs["rejects"].itertuples(index=False, name=None))
        for k, v in fr.attrs.get("skipped", {}).items():
            skipped[k] = skipped.get(k, 0) + v
    out = pd.concat(parts, ignore_index=True)
    out.attrs = {}
    kind = kinds.pop()
    validate(out, SAMPLES_SCHEMA if kind == "samples" else DISTRIBUTION_SCHEMA)
    out.attrs.update(
        kind=kind,
        format=",".join(sorted({fr.attrs["format"] for fr in frames})),
        source=names,
        skipped=skipped,
        per_file=[{k: v for k, v in fr.attrs.items() if k != "rejects"} for fr in frames],
    )
    return attach_rejects(out, rejects)
