"""What a folder of captures holds: every file's kind and format, found by the loaders' own readers.

:func:`inventory` walks the paths (folders recursively), and for each file asks the
loaders in turn, from the most specific to the most permissive:

1. bpftrace map output (``@name[key]: value`` lines) → :func:`workbench.counters.read_bpftrace`;
2. strace output (``name(args) = ret``) → :func:`workbench.syscalls.read_strace`;
3. a table whose header names a known schema → that schema's reader: per-step timings
   (request, step, duration_s: :func:`workbench.lab.stalls.steps_schema` through
   :func:`workbench.tables.read_table`), event-loop saves (:func:`workbench.models.yields.read_published`,
   :func:`workbench.lab.yields.read_capture`), per-actor metrics
   (:func:`workbench.lab.actors.read_actor_metrics`);
4. counter snapshots (marker logs, ``*.snapshots``) → :func:`workbench.counters.read_series`;
5. a single counter file (``/proc/vmstat``, ``/proc/diskstats``, ``/proc/net/dev``,
   ``/proc/<pid>/io``, ``read_ahead_kb``, CephFS ``metrics``), told by its name or content as
   :func:`workbench.counters.read_series` tells them → that file's procfs/bdi/cephfs reader;
6. anything else → :func:`workbench.latency.read_latency`, whose content detection knows
   the load tools' formats.

Some captures are folders, read whole before their files are looked at one by one:

- a readahead probe capture (``reads.csv``, ``files.csv``, ``counters.snapshots``,
  ``meta.json``: ``workbench lab readahead --out DIR``) → :func:`workbench.lab.readahead.read_readahead_probe`,
  listed as one input of format ``readahead_probe``;
- a snapshot tree (``<host>/<ts>/<path>``, ``<ts>/<path>``, or ``<ts>-<source>.txt`` files)
  → :func:`workbench.counters.read_series`, listed as one input of format ``snapshot_tree``.

Compressed files (gzip, bzip2, xz, zstd) are read through; the readers decompress.
A file no reader accepts is kept as kind ``unknown`` with each reader's reason.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputNotFoundError, WorkbenchError
from ..sources import open_decompressed

__all__ = ["InputFile", "KINDS", "capture_folders", "folder_capture", "inventory", "list_files"]

#: kinds of input, as the JSON output names them
KINDS = ("latency", "strace", "counters", "table", "unknown")

#: bytes of a file's (decompressed) head looked at to pick the reader
HEAD_BYTES = 65536

_BPF_LINE = re.compile(r"^@\w*(\[.*\])?:\s")
_STRACE_LINE = re.compile(r"^(\[pid\s+\d+\]\s+|\d+\s+)?([\d:.]+\s+)?\w+\(.*(\)\s+=\s+|<unfinished \.\.\.>)")
_SKIP_NAMES = {".gitignore", ".gitattributes"}
_DOC_SUFFIXES = {".md", ".rst", ".py", ".sh", ".ipynb", ".toml", ".png", ".svg", ".html"}


@dataclass
class InputFile:
    """One file and what was read from it.

    ``kind``: one of :data:`KINDS`; ``format``: the reader's own format name (``hey_csv``,
    ``strace``, ``bpftrace``, ``steps`` …); ``rows``/``rejects``: parsed and rejected
    records; ``span_s``: time covered by the rows' timestamps (NaN when they have none);
    ``reason``: why an ``unknown`` file was not read; ``frame``: the loaded data (not
    serialised); ``extra``: reader-specific details (e.g. the bpftrace maps present).
    """

    path: str
    kind: str
    format: str
    rows: int = 0
    rejects: int = 0
    span_s: float = math.nan
    reason: str = ""
    frame: Any = field(default=None, repr=False)
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        """The JSON record of this input (no data frame)."""
        out: dict[str, Any] = {"path": self.path, "kind": self.kind, "format": self.format,
                               "rows": int(self.rows), "rejects": int(self.rejects),
                               "span_s": None if not math.isfinite(self.span_s) else round(float(self.span_s), 3)}
        if self.reason:
            out["reason"] = self.reason
        return out


def list_files(paths: Sequence[str | Path]) -> list[Path]:
    """Every file under ``paths`` (folders walked recursively, hidden entries skipped), sorted, deduplicated.

    Raises :class:`~workbench.errors.InputNotFoundError` naming a path that does not exist.
    """
    out: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise InputNotFoundError(f"{p}: no such file or folder")
        if p.is_file():
            out.append(p)
            continue
        for f in sorted(p.rglob("*")):
            rel = f.relative_to(p).parts
            if f.is_file() and not any(part.startswith(".") or part == "__pycache__" for part in rel):
                out.append(f)
    seen: set[Path] = set()
    uniq = []
    for f in out:
        r = f.resolve()
        if r not in seen:
            seen.add(r)
            uniq.append(f)
    return uniq


def _head(path: Path) -> str:
    with open_decompressed(path) as fh:
        data = fh.read(HEAD_BYTES)
    return data.decode("utf-8", errors="replace")


def _lines(head: str, n: int = 50) -> list[str]:
    return [ln for ln in head.splitlines() if ln.strip()][:n]


def _header(head: str) -> list[str]:
    for ln in head.splitlines():
        s = ln.strip()
        if s and not s.startswith("#"):
            sep = "\t" if "\t" in s and "," not in s else ","
            return [c.strip().strip('"').lower() for c in s.split(sep)]
    return []


def _n_rejects(frame: Any) -> int:
    rej = getattr(frame, "attrs", {}).get("rejects")
    return len(rej) if rej is not None else 0


def _span(frame: pd.DataFrame, *cols: str) -> float:
    for c in cols:
        if c in frame.columns:
            t = pd.to_numeric(frame[c], errors="coerce").dropna()
            if len(t) >= 2:
                return float(t.max() - t.min())
    return math.nan


def _read_bpftrace(path: Path) -> InputFile:
    from ..counters import read_bpftrace

    out = read_bpftrace(path, units={"@demand_bytes": "bytes", "@ra_bytes": "bytes"})
    maps = out.maps
    names = sorted({str(c) for c in maps["counter"].unique()}) if "counter" in maps.columns else []
    return InputFile(str(path), "counters", "bpftrace", rows=len(maps) + len(out.hists), rejects=_n_rejects(maps),
                     frame=out, extra={"maps": names})


def _read_strace(path: Path) -> InputFile:
    from ..syscalls import read_strace

    fr = read_strace(path, progress=False)
    n_rej = _n_rejects(fr)
    if len(fr) == 0 or n_rej > len(fr):
        raise WorkbenchError(f"{path}: strace reader kept {len(fr)} records and rejected {n_rej}")
    timed = int(fr["duration_s"].notna().sum()) if "duration_s" in fr.columns else 0
    return InputFile(str(path), "strace", "strace", rows=len(fr), rejects=n_rej, span_s=_span(fr, "timestamp_s"),
                     frame=fr, extra={"timed_calls": timed})


def _table_reader(cols: set[str]) -> tuple[str, Any] | None:
    if {"request", "step", "duration_s"} <= cols:
        from ..lab.stalls import steps_schema
        from ..tables import read_table

        return "steps", lambda p: read_table(p, steps_schema(required_only=True))
    if {"mode", "sections", "yields", "lag_ms_measured", "duration_ms"} <= cols:
        from ..lab.yields import read_capture

        return "yields_capture", read_capture
    if {"event_loop_ms", "duration_ms", "yields"} <= cols:
        from ..models.yields import read_published

        return "yields_published", read_published
    if {"iteration", "banks", "clients_per_bank", "repeat", "actor", "kind", "busy_s"} <= cols:
        from ..lab.actors import read_actor_metrics

        return "actor_metrics", read_actor_metrics
    if {"iteration", "banks", "clients_per_bank"} <= cols and ({"time_s", "time_ms"} & cols):
        from ..models.scaling import read_iteration_times

        return "iteration_times", read_iteration_times
    if {"iteration", "banks", "clients_per_bank", "wall_s"} <= cols:
        from ..lab.actors import read_runs

        return "actor_runs", read_runs
    if {"timestamp", "host", "metric", "value"} <= cols:
        from ..counters import read_tsdb_csv

        return "tsdb_csv", read_tsdb_csv
    if {"iteration", "cores"} <= cols and ({"time_s", "time_ms"} & cols):
        from ..models.scaling import read_cores_times

        return "cores_times", read_cores_times
    if {"iteration", "actor", "lines"} <= cols:
        from ..models.scaling import read_lines_of_code

        return "lines_of_code", read_lines_of_code
    return None


def _read_table(path: Path, fmt: str, reader: Any) -> InputFile:
    fr = reader(path)
    kind = "counters" if fmt == "tsdb_csv" else "table"
    return InputFile(str(path), kind, fmt, rows=len(fr), rejects=_n_rejects(fr),
                     span_s=_span(fr, "start_s", "timestamp_s"), frame=fr)


def _read_series(path: Path) -> InputFile:
    from ..counters import read_series

    fr = read_series(path)
    if len(fr) == 0:
        raise WorkbenchError(f"{path}: no counter snapshot found")
    sources = sorted({str(s) for s in fr["source"].unique()}) if "source" in fr.columns else []
    return InputFile(str(path), "counters", "snapshots", rows=len(fr), rejects=_n_rejects(fr),
                     span_s=_span(fr, "timestamp_s", "timestamp"), frame=fr, extra={"sources": sources})


_COMPRESSED = (".gz", ".bz2", ".xz", ".zst")


def _snapshot_reader(path: Path, head: str) -> tuple[str, Any] | None:
    """(family, reader) of a single counter file, told as :func:`workbench.counters.read_series` tells them:
    by its path (``.txt`` and compression suffixes set aside, ``_`` read as ``/``), else by its content."""
    from ..counters import (
        read_cephfs_metrics,
        read_diskstats,
        read_net_dev,
        read_pid_io,
        read_read_ahead_kb,
        read_vmstat,
    )
    from ..counters.series import _parser_for

    name = path.name
    for suf in _COMPRESSED:
        name = name.removesuffix(suf)
    name = name.removesuffix(".txt")
    as_path = "/" + "/".join([*path.parent.parts[-2:], name.replace("net_dev", "net/dev").replace("pid_io", "self/io")])
    found = _parser_for(as_path, head)
    readers = {"vmstat": read_vmstat, "diskstats": read_diskstats, "net_dev": read_net_dev, "pid_io": read_pid_io,
               "bdi": read_read_ahead_kb, "cephfs_metrics": read_cephfs_metrics}
    if found is None or found[0] not in readers:
        return None
    return found[0], readers[found[0]]


def _read_snapshot(path: Path, family: str, reader: Any) -> InputFile:
    fr = reader(path)
    if len(fr) == 0:
        raise WorkbenchError(f"{path}: no {family} counter found")
    return InputFile(str(path), "counters", family, rows=len(fr), rejects=_n_rejects(fr), frame=fr,
                     extra={"sources": sorted({str(v) for v in fr["source"].unique()})})


def _read_latency(path: Path) -> InputFile:
    from ..latency import read_latency

    fr = read_latency(path, progress=False)
    kind = str(fr.attrs.get("kind", ""))
    return InputFile(str(path), "latency", str(fr.attrs.get("format", "?")), rows=len(fr), rejects=_n_rejects(fr),
                     span_s=_span(fr, "timestamp_s"), frame=fr, extra={"frame_kind": kind})


def _short(exc: Exception, path: Path | None = None) -> str:
    text = str(exc)
    if path is not None:
        for p in (str(path.resolve()), str(path)):
            text = text.replace(p + ":", "line ").replace(p, "")
    text = " ".join(text.split())
    return text if len(text) <= 160 else text[:157] + "…"


def read_one(path: Path) -> InputFile:
    """Detect ``path``'s kind and format and read it; never raises for bad content (kind ``unknown``)."""
    if path.name in _SKIP_NAMES or path.suffix.lower() in _DOC_SUFFIXES:
        return InputFile(str(path), "unknown", "", reason=f"not a capture ({path.suffix or path.name} file: "
                                                           "documentation, code or a page)")
    try:
        head = _head(path)
    except (OSError, WorkbenchError, EOFError, ValueError) as exc:
        return InputFile(str(path), "unknown", "", reason=f"cannot be read: {_short(exc)}")
    if "\x00" in head:
        return InputFile(str(path), "unknown", "", reason="binary content no reader knows")
    lines = _lines(head)
    if not lines:
        return InputFile(str(path), "unknown", "", reason="empty file")
    tried: list[str] = []
    attempts: list[tuple[str, Any]] = []
    first = lines[0].lstrip()
    bpf_json = first.startswith("{") and '"type"' in first and any(
        f'"{t}"' in first for t in ("attached_probes", "map", "hist", "stats", "lhist"))
    if bpf_json or sum(bool(_BPF_LINE.match(ln)) for ln in lines) >= 1:
        attempts.append(("bpftrace", _read_bpftrace))
    if sum(bool(_STRACE_LINE.match(ln)) for ln in lines) >= max(1, len(lines) // 3):
        attempts.append(("strace", _read_strace))
    table = _table_reader(set(_header(head)))
    if table is not None:
        fmt, reader = table
        attempts.append((fmt, lambda p, fmt=fmt, reader=reader: _read_table(p, fmt, reader)))
    if path.name.endswith((".snapshots", ".snapshots.gz")) or any(ln.startswith("#== snapshot") for ln in lines[:3]):
        attempts.append(("counter snapshots", _read_series))
    snap = _snapshot_reader(path, head) if table is None else None
    if snap is not None:
        family, sreader = snap
        attempts.append((family, lambda p, family=family, sreader=sreader: _read_snapshot(p, family, sreader)))
    attempts.append(("latency", _read_latency))
    for what, reader in attempts:
        try:
            return reader(path)
        except (WorkbenchError, ValueError, KeyError, TypeError, OSError, EOFError) as exc:
            tried.append(f"{what}: {_short(exc, path)}")
        except Exception as exc:  # a reader's own defect must not stop the other files being read
            tried.append(f"{what}: the reader failed ({type(exc).__name__}: {_short(exc, path)})")
    return InputFile(str(path), "unknown", "", reason="; ".join(tried))


#: the files of a readahead probe capture (``workbench lab readahead --out DIR``)
PROBE_FILES = ("reads.csv", "files.csv", "counters.snapshots", "meta.json")


def _is_ts(name: str) -> bool:
    try:
        float(name)
    except ValueError:
        return False
    return True


def _subdirs(d: Path) -> list[Path]:
    try:
        return [c for c in d.iterdir() if c.is_dir() and not c.name.startswith(".")]
    except OSError:
        return []


def folder_capture(folder: str | Path) -> str | None:
    """``"readahead_probe"`` or ``"snapshot_tree"`` when ``folder`` is such a capture, read whole; else None.

    A snapshot tree has ``<host>/<ts>/…`` or ``<ts>/…`` folders (``<ts>`` a number), or two
    or more ``<ts>-<source>.txt`` files.
    """
    from ..counters.series import SNAPSHOT_FILE

    d = Path(folder)
    if not d.is_dir():
        return None
    if all((d / n).is_file() for n in PROBE_FILES):
        return "readahead_probe"
    subs = _subdirs(d)
    if any(_is_ts(c.name) and _subdirs(c) for c in subs):
        return "snapshot_tree"
    if any(_is_ts(g.name) and _subdirs(g) for c in subs if not _is_ts(c.name) for g in _subdirs(c)):
        return "snapshot_tree"
    try:
        named = sum(1 for f in d.iterdir() if f.is_file() and SNAPSHOT_FILE.match(f.name))
    except OSError:
        named = 0
    return "snapshot_tree" if named >= 2 else None


def _read_folder(folder: Path, what: str) -> InputFile:
    """One folder capture as one input; a folder the reader refuses is kind ``unknown`` with its reason."""
    n_files = sum(1 for f in folder.rglob("*") if f.is_file())
    try:
        if what == "readahead_probe":
            from ..lab.readahead import read_readahead_probe

            cap = read_readahead_probe(folder)
            rows = len(cap.reads) + len(cap.files) + len(cap.counters)
            rej = sum(_n_rejects(f) for f in (cap.reads, cap.files, cap.counters))
            return InputFile(str(folder), "counters", what, rows=rows, rejects=rej,
                             span_s=_span(cap.counters, "timestamp"), frame=cap,
                             extra={"files": n_files, "advices": sorted(map(str, cap.reads["advice"].unique()))})
        from ..counters import read_series

        fr = read_series(folder)
        if len(fr) == 0:
            raise WorkbenchError(f"{folder}: no counter snapshot found")
        return InputFile(str(folder), "counters", what, rows=len(fr), rejects=_n_rejects(fr),
                         span_s=_span(fr, "timestamp"), frame=fr,
                         extra={"files": n_files, "sources": sorted({str(v) for v in fr["source"].unique()})})
    except (WorkbenchError, ValueError, KeyError, TypeError, OSError, EOFError) as exc:
        return InputFile(str(folder), "unknown", "", reason=f"{what}: {_short(exc, folder)}")


def _unit_of(f: Path, top: Path, cache: dict[Path, str | None]) -> Path | None:
    """The outermost folder from ``f``'s up to ``top`` that is a folder capture, if any (a tree
    ``<host>/<ts>/…`` is read from its root, where the host names are)."""
    d, best = f.parent, None
    while True:
        if d not in cache:
            cache[d] = folder_capture(d)
        if cache[d] is not None:
            best = d
        if d == top or d == d.parent or top not in d.parents:
            return best
        d = d.parent


def inventory(paths: Iterable[str | Path], *, recursive: bool = True) -> list[InputFile]:
    """Every capture under ``paths`` with its kind, format, rows, rejects and time span (see :class:`InputFile`).

    Folder captures (a readahead probe, a snapshot tree) are one input each; other files one
    each. ``recursive=False`` reads only the files directly in each folder given (and the folder
    itself when it is a folder capture).
    Raises :class:`~workbench.errors.InputNotFoundError` naming a path that does not exist.
    """
    out: list[InputFile] = []
    seen: set[Path] = set()
    cache: dict[Path, str | None] = {}
    for p in map(Path, paths):
        if not p.exists():
            raise InputNotFoundError(f"{p}: no such file or folder")
        what = folder_capture(p)
        if what is not None:
            if p.resolve() not in seen:
                seen.add(p.resolve())
                out.append(_read_folder(p, what))
            continue
        if p.is_dir() and not recursive:
            files = [f for f in sorted(p.iterdir()) if f.is_file() and not f.name.startswith(".")]
        else:
            files = list_files([p])
        for f in files:
            unit = _unit_of(f, p, cache) if p.is_dir() else None
            key = (unit or f).resolve()
            if key in seen:
                continue
            seen.add(key)
            if unit is not None:
                out.append(_read_folder(unit, str(cache[unit])))
            else:
                out.append(read_one(f))
    return out


def capture_folders(root: str | Path) -> list[Path]:
    """Every folder under ``root`` that holds files, a folder capture counted once at its own root."""
    top = Path(root)
    cache: dict[Path, str | None] = {}
    out: set[Path] = set()
    for f in list_files([top]):
        unit = _unit_of(f, top, cache)
        out.add(unit if unit is not None else f.parent)
    return sorted(out)
