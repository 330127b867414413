"""The single entry point of the latency loaders."""
from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

import pandas as pd
from tqdm.auto import tqdm

from ..cache import Cache, Key
from ..errors import ParseError, UsageError
from ..schema import Rejects, attach_rejects, rejects_of, validate
from ..sources import Collector, Input, Source, compression_of, decode, decompress, resolve_inputs
from ._common import unit_seconds
from ._detect import FORMATS, canonical_format, detect_format
from ._schemas import DISTRIBUTION_SCHEMA, SAMPLES_SCHEMA

if TYPE_CHECKING:
    import dask.dataframe as dd
    from distributed import Client

# format name -> (module, function); each function takes (Input, Collector, **options)
_READERS = {
    "csv": ("_csv", "read_csv_samples"),
    "hlog": ("_hdr", "read_hlog"),
    "hgrm": ("_hdr", "read_hgrm"),
    "wrk": ("_wrk", "read_wrk"),
    "ghz": ("_ghz", "read_ghz"),
    "fortio": ("_fortio", "read_fortio"),
    "k6": ("_k6", "read_k6"),
    "k6_summary": ("_k6", "read_k6_summary"),
    "locust": ("_locust", "read_locust"),
    "jmeter": ("_jmeter", "read_jmeter"),
    "jmeter_xml": ("_jmeter", "read_jmeter_xml"),
    "hey": ("_hey", "read_hey"),
    "hey_text": ("_summaries", "read_hey_text"),
    "ab": ("_summaries", "read_ab_text"),
    "ab_percentiles": ("_summaries", "read_ab_percentiles"),
    "ab_gnuplot": ("_summaries", "read_ab_gnuplot"),
    "curl": ("_curl", "read_curl_pairs"),
    "curl_json": ("_curl", "read_curl_json"),
    "siege": ("_siege", "read_siege"),
    "siege_log": ("_siege", "read_siege_log_text"),
    "httperf": ("_summaries", "read_httperf"),
    "locust_stats": ("_locust", "read_locust_stats"),
    "locust_failures": ("_locust", "read_locust_failures_text"),
    "values": ("_curl", "read_values"),
}
#: formats whose file is one document (JSON, XML), judged whole by its parser; the others are line-oriented
#: and reject a last line without its line end ("incomplete last line", files and streams only)
_DOCUMENT_FORMATS = frozenset({"ghz", "fortio", "k6_summary", "jmeter_xml"})
_CSV_ONLY = ("latency_column", "timestamp_column", "timestamp_unit")
#: plain CSV files bigger than this are read in blocks with a progress bar
STREAM_BYTES = 64 << 20
#: size of one block when streaming
BLOCK_BYTES = 32 << 20
_UNIT_FORMATS = ("csv", "hlog", "hgrm", "values")
#: the cache entries of read_latency: this loader's name, and the package folder whose code parses
_CACHE_LOADER = "latency"
_CACHE_CODE = ("latency",)

CacheWhere = bool | str | os.PathLike[str]


def is_text(s: str) -> bool:
    """A ``str`` source is the text itself when it holds a newline or starts with ``{`` (one-line JSON)."""
    return "\n" in s or "\r" in s or s.lstrip().startswith("{")


def _options_for(fmt: str, options: dict[str, Any]) -> dict[str, Any]:
    opts = {k: v for k, v in options.items() if v is not None}
    if fmt != "csv":
        for k in _CSV_ONLY:
            if opts.pop(k, None) is not None:
                raise UsageError(f"{k}= applies to plain CSV only, not to format {fmt!r}; leave it out")
    if fmt not in ("k6", "k6_summary") and opts.pop("metric", None) is not None:
        raise UsageError(f"metric= applies to format 'k6' only, not to format {fmt!r}; leave it out")
    if fmt not in _UNIT_FORMATS and opts.pop("unit", None) is not None:
        raise UsageError(f"unit= is not accepted for format {fmt!r}: its units are fixed by the tool; "
                         f"unit= applies to {', '.join(_UNIT_FORMATS)}")
    return opts


def _undetected(inp: Input) -> ParseError:
    """The error for a text whose format cannot be told: names the first non-blank line."""
    line, first = next(((n, ln) for n, ln in enumerate(inp.text.splitlines(), start=1) if ln.strip()), (None, ""))
    return ParseError(
        inp.name, line, first[:120],
        "cannot tell the latency format from the content; expected one of "
        + ", ".join(f"{k} ({v})" for k, v in FORMATS.items()) + "; pass format= to force one",
    )


def _read_one(inp: Input, fmt: str | None, strict: bool, options: dict[str, Any]) -> pd.DataFrame:
    if fmt is None:
        fmt = detect_format(inp.text, inp.name)
        if fmt is None:
            raise _undetected(inp)
    mod_name, fn_name = _READERS[fmt]
    fn: Callable[..., pd.DataFrame] = getattr(importlib.import_module(f"{__package__}.{mod_name}"), fn_name)
    col = Collector(inp.name, strict)
    if fmt not in _DOCUMENT_FORMATS:
        inp = inp.complete(col)
    return fn(inp, col, **_options_for(fmt, options))


def _streams(path: Path, fmt: str | None) -> bool:
    """Whether ``path`` is a plain CSV big enough to be read in blocks (never a compressed file)."""
    if path.stat().st_size <= STREAM_BYTES:
        return False
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    if compression_of(head) is not None:
        return False
    if fmt is not None:
        return fmt == "csv"
    text = decode(head)
    return detect_format(text[: text.rfind("\n") + 1] or text, str(path)) == "csv"


def _blocks(path: Path) -> Iterator[bytes]:
    """A file's bytes in blocks of :data:`BLOCK_BYTES` (to key a file too big to hold whole)."""
    with open(path, "rb") as f:
        while block := f.read(BLOCK_BYTES):
            yield block


def _from_cache(hit: pd.DataFrame, name: str, strict: bool) -> pd.DataFrame:
    """A cached frame as a fresh parse of the file ``name`` gives it (the same bytes may have another name).

    Under ``strict`` the earliest cached reject is raised, as the parse would have.
    """
    col = Collector(name, strict)
    for _src, line, text, reason in rejects_of(hit).rows():
        col.reject(line, text, reason)
    col.check()
    hit.attrs["source"] = name
    return attach_rejects(hit, Rejects.from_rows(col.rows))


def _read_file(path: Path, fmt: str | None, strict: bool, options: dict[str, Any], cache: CacheWhere,
               progress: bool | None) -> pd.DataFrame:
    """One file, through the cache when ``cache`` is set (keyed by the bytes that are parsed)."""
    store = Cache(_CACHE_LOADER, cache) if cache else None
    name = str(path)
    whole: bytes | None = None
    if _streams(path, fmt):
        contents: Iterator[bytes] | list[bytes] = _blocks(path)
    else:
        whole = path.read_bytes()
        contents = [whole]
    key = None
    beside: Path | None = None
    beside_bytes = None
    if store is not None:
        beside = Path(name[: -len("_stats.csv")] + "_failures.csv") if name.endswith("_stats.csv") else None
        lookup = Key(_CACHE_LOADER, _CACHE_CODE, {"format": fmt, **options})
        for block in contents:
            lookup.feed(block)
        lookup.end_part()
        if beside is not None and beside.is_file() and whole is not None:
            beside_bytes = beside.read_bytes()  # Locust stats read their failures file too
            lookup.feed(beside_bytes)
            lookup.end_part()
        key = lookup.hexdigest()
        hit = store.load(key)
        if hit is not None:
            return _from_cache(hit, name, strict)
    if whole is None:
        from ._csv import read_csv_stream

        # a streamed file is keyed again by the blocks the parser reads: an entry never outlives its bytes
        parsed = Key(_CACHE_LOADER, _CACHE_CODE, {"format": fmt, **options}) if store is not None else None
        frame = read_csv_stream(path, Collector(name, strict), block_bytes=BLOCK_BYTES,
                                progress=progress is not False, key=parsed, **_options_for("csv", options))
        if parsed is not None:
            parsed.end_part()
            key = parsed.hexdigest()
    else:  # the key above and this frame come from the same bytes, ``whole``
        frame = _read_one(Input(name, decode(decompress(whole, name))), fmt, strict, options)
        if beside is not None and beside_bytes is not None and beside.is_file() \
                and beside.read_bytes() != beside_bytes:
            key = None  # the failures file changed while it was read: not known which bytes were parsed
    if store is not None and key is not None:
        store.store(key, frame)
    return frame


def _read_part(path: Path, *, fmt: str | None, strict: bool, options: dict[str, Any], cache: CacheWhere,
               progress: bool) -> pd.DataFrame:
    """One file of a dask read: the pandas frame with its ``file`` column, validated."""
    out = _read_file(path, fmt, strict, options, cache, progress).assign(file=str(path))
    return validate(out, SAMPLES_SCHEMA if out.attrs["kind"] == "samples" else DISTRIBUTION_SCHEMA)


@overload
def read_latency(
    source: Source, format: str | None = None, *, unit: str | None = None, strict: bool = False,
    latency_column: str | None = None, timestamp_column: str | None = None, timestamp_unit: str | None = None,
    metric: str | None = None, cache: CacheWhere = False, progress: bool | None = None,
    engine: Literal["pandas"] = "pandas", client: Client | str | None = None,
) -> pd.DataFrame: ...


@overload
def read_latency(
    source: Source, format: str | None = None, *, unit: str | None = None, strict: bool = False,
    latency_column: str | None = None, timestamp_column: str | None = None, timestamp_unit: str | None = None,
    metric: str | None = None, cache: CacheWhere = False, progress: bool | None = None,
    engine: Literal["dask"], client: Client | str | None = None,
) -> dd.DataFrame: ...


@overload
def read_latency(
    source: Source, format: str | None = None, *, unit: str | None = None, strict: bool = False,
    latency_column: str | None = None, timestamp_column: str | None = None, timestamp_unit: str | None = None,
    metric: str | None = None, cache: CacheWhere = False, progress: bool | None = None,
    engine: str = "pandas", client: Client | str | None = None,
) -> pd.DataFrame | dd.DataFrame: ...


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
    cache: CacheWhere = False,
    progress: bool | None = None,
    engine: str = "pandas",
    client: Client | str | None = None,
) -> pd.DataFrame | dd.DataFrame:
    """Read latency samples or a latency distribution from any supported source.

    ``source``: a path, a glob, a list of paths, an open text stream or the text
    itself (a string with a newline, or one-line JSON starting with ``{``).
    Files may be gzip, bzip2, xz or zstd compressed.
    ``format``: one of :data:`FORMATS` (detected from the content when None).
    ``unit``: latency unit (s, ms, us, ns) for sources that do not say (plain CSV
    with a bare ``latency`` column, hlog/hgrm values).
    ``latency_column``/``timestamp_column``/``timestamp_unit``: plain-CSV overrides.
    ``metric``: k6 metric to read (default ``http_req_duration``).
    ``strict``: raise :class:`~workbench.errors.ParseError` for the earliest record
    that cannot be parsed instead of keeping it in attrs["rejects"].
    ``cache``: True (``$WORKBENCH_CACHE_DIR/latency`` or ``~/.cache/workbench/latency``)
    or a directory: keep each file's result (:class:`workbench.cache.Cache`) keyed
    by its bytes, the options and this package's code, so the next load of the
    same file skips parsing. ``progress``: a progress bar over
    the files (default: when there are more than one); a plain CSV bigger than
    :data:`STREAM_BYTES` is read in blocks of whole records with a byte progress
    bar (default on), so memory holds one block of text at a time.

    Returns a frame with attrs["kind"] == "samples" (columns latency_s,
    timestamp_s, ok, carried columns; :data:`SAMPLES_SCHEMA`) or "distribution"
    (latency_s, percentile and/or count, …; :data:`DISTRIBUTION_SCHEMA`), see
    :mod:`workbench.latency`; attrs["rejects"] is a :class:`~workbench.schema.Rejects`.
    Several files are concatenated with a ``file`` column; they must give the
    same kind of frame.

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
        unit_seconds(unit, "latency unit (unit=)")
    options = {"unit": unit, "latency_column": latency_column, "timestamp_column": timestamp_column,
               "timestamp_unit": timestamp_unit, "metric": metric}
    items = resolve_inputs(source, "latency", is_text=is_text)
    if use_dask:
        from ..engine import dask_frame

        paths = [x for x in items if isinstance(x, Path)]
        if len(paths) != len(items):
            raise UsageError('engine="dask" reads files: give source= as a path, a glob or a list of paths, '
                             'not text or a stream (use engine="pandas" for those)')
        load = functools.partial(_read_part, fmt=fmt, strict=strict, options=options, cache=cache,
                                 progress=bool(progress))
        return dask_frame(paths, load, client=client)
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
        by_kind = {k: [n for n, fr in zip(names, frames, strict=True) if fr.attrs["kind"] == k] for k in sorted(kinds)}
        raise UsageError(f"source= names files that give different kinds of frame ({by_kind}); "
                         "expected one kind: read them separately")
    kind = kinds.pop()
    skipped: dict[str, int] = {}
    for fr in frames:
        for k, v in fr.attrs.get("skipped", {}).items():
            skipped[k] = skipped.get(k, 0) + v
    out = pd.concat([fr.assign(file=name) for name, fr in zip(names, frames, strict=True)], ignore_index=True)
    out.attrs = {
        "kind": kind,
        "format": ",".join(sorted({fr.attrs["format"] for fr in frames})),
        "source": names,
        "skipped": skipped,
        "per_file": [{k: v for k, v in fr.attrs.items() if k != "rejects"} for fr in frames],
    }
    steps = [fr.attrs.get("resolution_s") for fr in frames]
    known = [s for s in steps if isinstance(s, float)]
    out.attrs["resolution_s"] = max(known) if known and len(known) == len(steps) else None
    out.attrs["resolution_rule"] = ("the coarsest of the files' steps (attrs['per_file'])" if known
                                    and len(known) == len(steps) else "not one step: see attrs['per_file']")
    validate(out, SAMPLES_SCHEMA if kind == "samples" else DISTRIBUTION_SCHEMA)
    return attach_rejects(out, Rejects.concat([rejects_of(fr) for fr in frames]))
