"""Readahead probe: what does a tiny read pull into the page cache, under each ``posix_fadvise`` advice?

For each advice (``normal``, ``random``, ``sequential``) the probe:

1. drops the files from the page cache (``posix_fadvise(POSIX_FADV_DONTNEED)``; clean pages only)
   and records what stays resident (the baseline);
2. snapshots ``/proc/vmstat`` and ``/proc/self/io``;
3. replays tiny reads (one size, or sizes drawn from a range) — at offset 0 and at random offsets — on many small files and a few
   large ones, and after every read measures, with ``mincore()``, how many pages of that file
   are now resident (``mmap(PROT_READ)`` through libc via ctypes: Python's mmap module
   cannot map read-only without also being able to fault pages in, and mincore never faults);
4. snapshots the counters again and measures whole-file residency.

So the same bytes are counted three (four) ways: the sum of per-read residency changes, the
whole-file residency at the end, the ``/proc/vmstat`` ``pgpgin`` delta (system-wide, block
layer) and this process's ``/proc/self/io`` ``read_bytes`` delta.

By default the probe writes its own files in a fresh temporary directory (``--tmp-parent``)
and removes them; ``--dir`` points it at existing files instead (read-only: they are only
opened, advised and read). The run is bounded by file count and ``--max-seconds``.

The capture (``--out DIR``) has one owner, this module: :func:`run_probe` writes it and
:func:`read_readahead_probe` reads it back into a :class:`ProbeCapture`:

- ``reads.csv`` — one row per tiny read (:data:`PROBE_READS_SCHEMA`);
- ``files.csv`` — whole-file residency per advice (:data:`PROBE_FILES_SCHEMA`);
- ``counters.snapshots`` — ``/proc/vmstat``, ``/proc/self/io`` and ``/proc/diskstats`` before
  and after each advice, in the snapshot-series log convention (:func:`workbench.counters.read_series`);
- ``meta.json`` — configuration, environment and phase times.

The analyses of a capture (``probe_ways``, ``probe_breakdown``) are counter analyses and
live in :mod:`workbench.counters.analysis`.
"""
from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import json
import os
import platform
import random
import shutil
import socket
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputNotFoundError, LabError, ParseError, UsageError
from ..schema import Column, Schema

if TYPE_CHECKING:
    import pandas as pd

ADVICE = {
    "normal": os.POSIX_FADV_NORMAL,
    "random": os.POSIX_FADV_RANDOM,
    "sequential": os.POSIX_FADV_SEQUENTIAL,
}
FILE_KINDS = ("small", "large")
PAGE = os.sysconf("SC_PAGE_SIZE")
CAPTURE_FILES = ("reads.csv", "files.csv", "counters.snapshots", "meta.json")


PROBE_READS_SCHEMA = Schema(
    name="readahead_probe_reads",
    doc="One tiny read: where, how big, and the file's resident pages before and after it.",
    columns=(
        Column("advice", "string", doc="posix_fadvise advice in force: normal, random, sequential"),
        Column("file", "string", doc="file name (no folder)"),
        Column("file_kind", "string", doc="small or large (size against large_threshold_bytes)"),
        Column("size_bytes", "int", "bytes", "file size"),
        Column("offset_bytes", "int", "bytes", "where the read starts"),
        Column("request_bytes", "int", "bytes", "bytes the read asked for"),
        Column("order", "int", doc="0 = the read at offset 0, then the random-offset reads"),
        Column("resident_before_pages", "int", "pages", "pages of the file in the page cache before the read"),
        Column("resident_after_pages", "int", "pages", "pages of the file in the page cache after the read"),
        Column("pulled_bytes", "int", "bytes", "residency change across the read × page size"),
    ),
)
PROBE_FILES_SCHEMA = Schema(
    name="readahead_probe_files",
    doc="Whole-file residency per advice: after the drop (baseline) and after the reads (final).",
    columns=(
        Column("advice", "string", doc="posix_fadvise advice in force: normal, random, sequential"),
        Column("file", "string", doc="file name (no folder)"),
        Column("file_kind", "string", doc="small or large"),
        Column("size_bytes", "int", "bytes", "file size"),
        Column("baseline_pages", "int", "pages", "pages resident after dropping the file from the cache"),
        Column("final_pages", "int", "pages", "pages resident after this advice's reads"),
    ),
)
#: header rows the writer uses: the schemas' column names
READS_COLUMNS = PROBE_READS_SCHEMA.names()
FILES_COLUMNS = PROBE_FILES_SCHEMA.names()


_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]
PROT_READ, MAP_SHARED = 0x1, 0x01
MAP_FAILED = ctypes.c_void_p(-1).value


class Residency:
    """A read-only mapping of one file whose resident pages ``count()`` reports (mincore).

    ``name`` labels the file in errors; a failing ``mmap`` or ``mincore`` raises
    :class:`~workbench.errors.LabError`.
    """

    def __init__(self, fd: int, size: int, name: str = "") -> None:
        self.size = size
        self.name = name or f"fd {fd}"
        self.pages = (size + PAGE - 1) // PAGE
        self.addr: int | None = None
        self.vec = (ctypes.c_ubyte * self.pages)()
        if size == 0:
            return
        addr = _libc.mmap(None, size, PROT_READ, MAP_SHARED, fd, 0)
        if addr in (None, MAP_FAILED):
            err = ctypes.get_errno()
            raise LabError(f"{self.name}: mmap(PROT_READ) of {size} bytes failed: {os.strerror(err)}; "
                           "the probe needs files it can map read-only")
        self.addr = addr

    def count(self) -> int:
        """Pages of the file now in the page cache."""
        if self.addr is None:
            return 0
        if _libc.mincore(self.addr, self.size, self.vec) != 0:
            err = ctypes.get_errno()
            raise LabError(f"{self.name}: mincore failed: {os.strerror(err)}")
        return sum(b & 1 for b in self.vec)

    def close(self) -> None:
        if self.addr is not None:
            _libc.munmap(self.addr, self.size)
            self.addr = None


@dataclass(frozen=True)
class ProbeConfig:
    """What to read and how much (every count and size bounded)."""

    n_small: int = 64  # small files created (ignored with directory)
    small_bytes: int = 128 * 1024
    n_large: int = 4  # large files created (ignored with directory)
    large_bytes: int = 16 * 1024 * 1024
    large_threshold_bytes: int = 4 * 1024 * 1024  # files at least this big count as 'large'
    request_bytes: int = 512  # bytes per tiny read (the smallest, with request_max_bytes)
    request_max_bytes: int = 0  # > request_bytes: each read asks a size drawn uniformly in [request_bytes, this]
    random_reads_per_file: int = 2  # reads at random offsets after the one at offset 0
    advices: tuple[str, ...] = ("normal", "random", "sequential")
    seed: int = 1
    max_files: int = 200  # cap when pointing at a directory
    max_seconds: float = 120.0  # stop reading (and say so) after this long


def _mount_of(path: Path) -> dict[str, str]:
    """fstype, source and mount point holding ``path`` (from /proc/self/mountinfo)."""
    real = str(path.resolve())
    best = {"mount_point": "/", "fstype": "unknown", "source": ""}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return best
    for line in lines:
        left, _, right = line.partition(" - ")
        f = left.split()
        r = right.split()
        mp = f[4].replace("\\040", " ")
        if (real == mp or real.startswith(mp.rstrip("/") + "/")) and len(mp) >= len(best["mount_point"]):
            best = {"mount_point": mp, "fstype": r[0] if r else "unknown", "source": r[1] if len(r) > 1 else ""}
    return best


def environment(directory: Path) -> dict[str, Any]:
    """Filesystem, backing device and its read_ahead_kb for ``directory``, plus caveats."""
    st = os.stat(directory)
    maj, mnr = os.major(st.st_dev), os.minor(st.st_dev)
    mount = _mount_of(directory)
    ra = None
    for cand in (f"/sys/class/bdi/{maj}:{mnr}/read_ahead_kb", f"/sys/dev/block/{maj}:{mnr}/queue/read_ahead_kb"):
        try:
            ra = int(Path(cand).read_text().strip())
            break
        except (OSError, ValueError):
            continue
    notes = []
    if mount["fstype"] in ("tmpfs", "ramfs"):
        notes.append(f"{mount['fstype']} keeps file data only in memory: there is no storage to read ahead "
                     "from, DONTNEED cannot drop the pages and residency stays 100 %")
    if mount["fstype"] == "overlay":
        notes.append("overlayfs passes reads to the upper/lower filesystem: readahead and page cache belong "
                     "to the underlying files and the overlay's device has no read_ahead_kb")
    if ra is None:
        notes.append(f"no read_ahead_kb found for device {maj}:{mnr}")
    return {"directory": str(directory), "device": f"{maj}:{mnr}", "read_ahead_kb": ra, **mount,
            "page_bytes": PAGE, "kernel": platform.release(), "notes": notes}


def _make_files(root: Path, cfg: ProbeConfig) -> list[Path]:
    paths = []
    for kind, n, size in (("small", cfg.n_small, cfg.small_bytes), ("large", cfg.n_large, cfg.large_bytes)):
        for i in range(n):
            p = root / f"{kind}_{i:03d}.bin"
            with open(p, "wb") as fh:
                left = size
                while left > 0:
                    chunk = min(left, 1 << 20)
                    fh.write(os.urandom(chunk))
                    left -= chunk
                fh.flush()
                os.fsync(fh.fileno())  # clean pages, so DONTNEED can drop them
            paths.append(p)
    return paths


def _pick_files(directory: Path, cfg: ProbeConfig) -> list[Path]:
    files = []
    for dirpath, _dirs, names in os.walk(directory):
        for n in sorted(names):
            p = Path(dirpath) / n
            try:
                if p.is_file() and not p.is_symlink() and p.stat().st_size > 0 and os.access(p, os.R_OK):
                    files.append(p)
            except OSError:
                continue
            if len(files) >= cfg.max_files:
                return files
    return files


def _check(cfg: ProbeConfig) -> None:
    """Refuse a configuration that cannot run or is not small; the message names the field."""
    bad = [a for a in cfg.advices if a not in ADVICE]
    if bad:
        raise UsageError(f"ProbeConfig.advices={cfg.advices!r}: unknown advice {bad}; choose from {sorted(ADVICE)}")
    if not cfg.advices:
        raise UsageError(f"ProbeConfig.advices=(): expected at least one of {sorted(ADVICE)}")
    positive = {"request_bytes": cfg.request_bytes, "small_bytes": cfg.small_bytes, "large_bytes": cfg.large_bytes,
                "max_files": cfg.max_files, "max_seconds": cfg.max_seconds}
    not_positive = [f"{k}={v!r}" for k, v in positive.items() if not v > 0]
    if not_positive:
        raise UsageError(f"ProbeConfig {', '.join(not_positive)}: expected > 0")
    if cfg.request_max_bytes and cfg.request_max_bytes < cfg.request_bytes:
        raise UsageError(f"ProbeConfig request_max_bytes={cfg.request_max_bytes!r} < request_bytes="
                         f"{cfg.request_bytes!r}: expected 0 (one size) or a maximum at least the minimum")
    counts = {"n_small": cfg.n_small, "n_large": cfg.n_large, "random_reads_per_file": cfg.random_reads_per_file}
    negative = [f"{k}={v!r}" for k, v in counts.items() if v < 0]
    if negative:
        raise UsageError(f"ProbeConfig {', '.join(negative)}: expected >= 0")
    if cfg.n_small + cfg.n_large > 2000 or cfg.large_bytes > 1 << 30 or cfg.small_bytes > 1 << 30 \
            or cfg.max_files > 2000:
        raise UsageError(f"ProbeConfig n_small={cfg.n_small}, n_large={cfg.n_large}, max_files={cfg.max_files}, "
                         f"small_bytes={cfg.small_bytes}, large_bytes={cfg.large_bytes}: refusing more than 2000 "
                         "files or files over 1 GiB: keep the probe small")


def _snapshot(host: str, path: str, text: str) -> str:
    return f"#== snapshot ts={time.time():.6f} host={host} path={path}\n{text}"


def _counters(host: str) -> str:
    """Snapshots of /proc/vmstat, /proc/self/io and (when readable) /proc/diskstats."""
    text = _snapshot(host, "/proc/vmstat", Path("/proc/vmstat").read_text()) + \
        _snapshot(host, "/proc/self/io", Path("/proc/self/io").read_text())
    try:
        text += _snapshot(host, "/proc/diskstats", Path("/proc/diskstats").read_text())
    except OSError:
        pass
    return text


def parse_request_bytes(text: str) -> tuple[int, int]:
    """``"512"`` → (512, 0); ``"16-512"`` → (16, 512): one request size, or a range drawn uniformly."""
    lo, sep, hi = str(text).strip().partition("-")
    try:
        a, b = int(lo), int(hi) if sep else 0
    except ValueError:
        raise UsageError(f"--request-bytes {text!r}: expected a size in bytes (512) or a range MIN-MAX "
                         "(16-512)") from None
    return a, b


def _drop(paths: list[Path]) -> None:
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def run_probe(out_dir: str | Path, directory: str | Path | None = None, cfg: ProbeConfig | None = None,
              tmp_parent: str | Path | None = None, progress: bool = True) -> Path:
    """Run the probe and write ``reads.csv``, ``files.csv``, ``counters.snapshots``, ``meta.json``.

    ``directory`` = existing files to probe (read-only); default: fresh temporary files
    under ``tmp_parent`` (default the system temp dir), removed afterwards. Returns ``out_dir``.
    """
    import csv

    from tqdm.auto import tqdm

    cfg = cfg or ProbeConfig()
    _check(cfg)
    reads_header, files_header = READS_COLUMNS, FILES_COLUMNS
    if directory is not None:
        where = Path(directory)
        if not where.exists():
            raise InputNotFoundError(f"run_probe: directory={str(directory)!r} does not exist; expected a folder "
                                     "of files to probe (read-only)")
        if not where.is_dir():
            raise UsageError(f"run_probe: directory={str(directory)!r} is a file; expected a folder of files to "
                             "probe (read-only)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    host = socket.gethostname().split(".")[0] or "localhost"
    rng = random.Random(cfg.seed)
    tmp = None
    try:
        if directory is None:
            tmp = Path(tempfile.mkdtemp(prefix="wb-readahead-", dir=tmp_parent))
            paths = _make_files(tmp, cfg)
            where = tmp
        else:
            where = Path(directory)
            paths = _pick_files(where, cfg)
            if not paths:
                raise InputNotFoundError(f"run_probe: directory={str(directory)!r} holds no readable, non-empty "
                                         "regular file to probe")
        env = environment(where)
        sizes = {p: p.stat().st_size for p in paths}
        kind = {p: "large" if sizes[p] >= cfg.large_threshold_bytes else "small" for p in paths}
        reads_rows: list[list] = []
        files_rows: list[list] = []
        snaps: list[str] = []
        phases: dict[str, dict] = {}
        deadline = time.monotonic() + cfg.max_seconds
        stopped_early = False
        for advice in cfg.advices:
            _drop(paths)
            order = list(paths)
            rng.shuffle(order)
            maps = {}
            baseline = {}
            fds = {}
            try:
                for p in order:
                    fd = os.open(p, os.O_RDONLY)
                    fds[p] = fd
                    maps[p] = Residency(fd, sizes[p], str(p))
                    baseline[p] = maps[p].count()
                t_before = time.time()
                snaps.append(_counters(host))
                n = 0
                for p in tqdm(order, desc=f"readahead {advice}", disable=not progress, leave=False):
                    if time.monotonic() > deadline:
                        stopped_early = True
                        break
                    fd, res = fds[p], maps[p]
                    os.posix_fadvise(fd, 0, 0, ADVICE[advice])
                    for k in range(1 + cfg.random_reads_per_file):
                        want = cfg.request_bytes if cfg.request_max_bytes <= cfg.request_bytes else \
                            rng.randint(cfg.request_bytes, cfg.request_max_bytes)
                        off = 0 if k == 0 else rng.randrange(0, max(sizes[p] - want, 0) + 1)
                        before = res.count()
                        os.pread(fd, want, off)
                        after = res.count()
                        reads_rows.append([advice, p.name, kind[p], sizes[p], off, want, k,
                                           before, after, (after - before) * PAGE])
                        n += 1
                snaps.append(_counters(host))
                t_after = time.time()
                for p in order:
                    files_rows.append([advice, p.name, kind[p], sizes[p], baseline[p], maps[p].count()])
                phases[advice] = {"start_ts": t_before, "end_ts": t_after, "reads": n}
            finally:
                for r in maps.values():
                    r.close()
                for fd in fds.values():
                    os.close(fd)
            if stopped_early:
                break
        _drop(paths)
        with open(out / "reads.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(reads_header)
            w.writerows(reads_rows)
        with open(out / "files.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(files_header)
            w.writerows(files_rows)
        (out / "counters.snapshots").write_text("".join(snaps))
        meta = {"config": asdict(cfg), "environment": env, "phases": phases, "host": host,
                "stopped_early": stopped_early, "created_files": directory is None,
                "python": platform.python_version()}
        (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
        return out
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


@dataclass(frozen=True)
class ProbeCapture:
    """A readahead probe run, as :func:`read_readahead_probe` reads it back.

    ``reads`` (:data:`PROBE_READS_SCHEMA`), ``files`` (:data:`PROBE_FILES_SCHEMA`), ``counters``
    (the long counters frame of the ``/proc/vmstat`` and ``/proc/self/io`` snapshots) each carry
    their rejected lines in ``attrs["rejects"]``; ``meta`` is ``meta.json`` (config, environment,
    phases with ``start_ts``/``end_ts``/``reads`` per advice, host, stopped_early, created_files).
    """

    reads: pd.DataFrame
    files: pd.DataFrame
    counters: pd.DataFrame
    meta: dict[str, Any]


def read_readahead_probe(directory: str | os.PathLike[str], *, strict: bool = False) -> ProbeCapture:
    """Read a probe output folder (``workbench lab readahead --out DIR``) into a :class:`ProbeCapture`.

    Rows that break the schema (an unknown advice, a negative size or page count, a
    non-number) are kept in the frame's ``attrs["rejects"]``; ``strict=True`` raises
    :class:`~workbench.errors.ParseError` for the first one instead. A folder without the
    four files raises :class:`~workbench.errors.InputNotFoundError` naming the missing ones.
    """
    from ..counters.series import read_series
    from ..paths import resolve
    from ..sources import read_path
    from ..tables import Above, AtLeast, NonEmpty, OneOf, Rule, read_table

    try:
        d = resolve(Path(directory))
    except FileNotFoundError:
        raise InputNotFoundError(f"{directory}: no such readahead probe folder; expected the output of "
                                 "'workbench lab readahead --out DIR'") from None
    if not d.is_dir():
        raise UsageError(f"read_readahead_probe: directory={str(directory)!r} is a file; expected the probe's "
                         f"output folder holding {', '.join(CAPTURE_FILES)}")
    missing = [n for n in CAPTURE_FILES if not (d / n).is_file()]
    if missing:
        raise InputNotFoundError(f"{d}: not a readahead probe output (missing {', '.join(missing)}); expected "
                                 f"{', '.join(CAPTURE_FILES)} as written by 'workbench lab readahead --out DIR'")
    meta_in = read_path(d / "meta.json")
    try:
        meta = json.loads(meta_in.text)
    except json.JSONDecodeError as exc:
        raise ParseError(meta_in.name, exc.lineno, meta_in.line(exc.lineno), f"not valid JSON: {exc.msg}") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("phases"), dict):
        raise ParseError(meta_in.name, None, meta_in.text[:80], "expected a JSON object with 'phases' "
                         "(advice -> start_ts, end_ts, reads), 'config' and 'environment'")
    reads_schema, files_schema = PROBE_READS_SCHEMA, PROBE_FILES_SCHEMA
    advice, kinds = OneOf(frozenset(ADVICE)), OneOf(frozenset(FILE_KINDS))
    common: dict[str, Rule] = {"advice": advice, "file": NonEmpty(), "file_kind": kinds, "size_bytes": AtLeast(0)}
    reads = read_table(d / "reads.csv", reads_schema, strict=strict, rules={
        **common, "offset_bytes": AtLeast(0), "request_bytes": Above(0), "order": AtLeast(0),
        "resident_before_pages": AtLeast(0), "resident_after_pages": AtLeast(0)})
    files = read_table(d / "files.csv", files_schema, strict=strict, rules={
        **common, "baseline_pages": AtLeast(0), "final_pages": AtLeast(0)})
    return ProbeCapture(reads=reads, files=files, counters=read_series(d / "counters.snapshots", strict=strict),
                        meta=meta)


def _cmd(args: argparse.Namespace) -> int:
    try:
        req_min, req_max = parse_request_bytes(args.request_bytes)
    except UsageError as exc:
        print(f"workbench lab readahead: {exc}", file=sys.stderr)
        return 2
    cfg = ProbeConfig(n_small=args.n_small, small_bytes=args.small_kib * 1024, n_large=args.n_large,
                      large_bytes=args.large_mib * 1024 * 1024, request_bytes=req_min, request_max_bytes=req_max,
                      random_reads_per_file=args.random_reads, advices=tuple(args.advice.split(",")),
                      seed=args.seed, max_files=args.max_files, max_seconds=args.max_seconds)
    try:
        out = run_probe(args.out, directory=args.dir, cfg=cfg, tmp_parent=args.tmp_parent, progress=not args.quiet)
    except (UsageError, InputNotFoundError, LabError) as exc:
        print(f"workbench lab readahead: {exc}", file=sys.stderr)
        return 2
    meta = json.loads((out / "meta.json").read_text())
    env = meta["environment"]
    print(f"readahead probe: {out} ({env['fstype']} on {env['device']}, read_ahead_kb={env['read_ahead_kb']})")
    for note in env["notes"]:
        print(f"note: {note}")
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench lab readahead``: tiny reads under each fadvise advice, page-cache residency via mincore."""
    p = subparsers.add_parser("readahead", help="what tiny reads pull into the page cache under each fadvise advice",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="readahead_probe", help="output directory (default: readahead_probe)")
    p.add_argument("--dir", default=None, help="probe existing files here (read-only) instead of temp files")
    p.add_argument("--tmp-parent", default=None, help="where to create the temporary files (default: system temp)")
    p.add_argument("--n-small", type=int, default=64, help="small files to create (default 64)")
    p.add_argument("--small-kib", type=int, default=128, help="small file size, KiB (default 128)")
    p.add_argument("--n-large", type=int, default=4, help="large files to create (default 4)")
    p.add_argument("--large-mib", type=int, default=16, help="large file size, MiB (default 16)")
    p.add_argument("--request-bytes", default="512",
                   help="bytes per tiny read, or a range MIN-MAX drawn uniformly per read (default 512)")
    p.add_argument("--random-reads", type=int, default=2, help="reads at random offsets per file (default 2)")
    p.add_argument("--advice", default="normal,random,sequential", help="advices to compare, comma-separated")
    p.add_argument("--seed", type=int, default=1, help="random offsets and file order seed")
    p.add_argument("--max-files", type=int, default=200, help="at most this many files with --dir")
    p.add_argument("--max-seconds", type=float, default=120.0, help="stop reading after this long")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_cmd)
