"""Readahead probe: what does a tiny read pull into the page cache, under each ``posix_fadvise`` advice?

For each advice (``normal``, ``random``, ``sequential``) the probe:

1. drops the files from the page cache (``posix_fadvise(POSIX_FADV_DONTNEED)``; clean pages only)
   and records what stays resident (the baseline);
2. snapshots ``/proc/vmstat`` and ``/proc/self/io``;
3. replays tiny reads — at offset 0 and at random offsets — on many small files and a few
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
Output (``--out DIR``): ``reads.csv``, ``files.csv``, ``counters.snapshots`` (snapshot-series
log of ``/proc/vmstat`` and ``/proc/self/io``) and ``meta.json`` (environment, phases).
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
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ADVICE = {
    "normal": os.POSIX_FADV_NORMAL,
    "random": os.POSIX_FADV_RANDOM,
    "sequential": os.POSIX_FADV_SEQUENTIAL,
}
PAGE = os.sysconf("SC_PAGE_SIZE")
READS_COLUMNS = ["advice", "file", "file_kind", "size_bytes", "offset_bytes", "request_bytes", "order",
                 "resident_before_pages", "resident_after_pages", "pulled_bytes"]
FILES_COLUMNS = ["advice", "file", "file_kind", "size_bytes", "baseline_pages", "final_pages"]

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]
PROT_READ, MAP_SHARED = 0x1, 0x01
MAP_FAILED = ctypes.c_void_p(-1).value


class Residency:
    """A read-only mapping of one file whose resident pages ``count()`` reports (mincore)."""

    def __init__(self, fd: int, size: int) -> None:
        self.size = size
        self.pages = (size + PAGE - 1) // PAGE
        self.addr = None
        if size == 0:
            return
        addr = _libc.mmap(None, size, PROT_READ, MAP_SHARED, fd, 0)
        if addr in (None, MAP_FAILED):
            err = ctypes.get_errno()
            raise OSError(err, f"mmap failed: {os.strerror(err)}")
        self.addr = addr
        self.vec = (ctypes.c_ubyte * self.pages)()

    def count(self) -> int:
        """Pages of the file now in the page cache."""
        if self.addr is None:
            return 0
        if _libc.mincore(self.addr, self.size, self.vec) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"mincore failed: {os.strerror(err)}")
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
    request_bytes: int = 512  # bytes per tiny read
    random_reads_per_file: int = 2  # reads at random offsets after the one at offset 0
    advices: tuple[str, ...] = ("normal", "random", "sequential")
    seed: int = 1
    max_files: int = 200  # cap when pointing at a directory
    max_seconds: float = 120.0  # stop reading (and say so) after this long


def _mount_of(path: Path) -> dict:
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


def environment(directory: Path) -> dict:
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
                if p.is_file() and not p.is_symlink() and p.stat().st_size > 0:
                    files.append(p)
            except OSError:
                continue
            if len(files) >= cfg.max_files:
                return files
    return files


def _snapshot(host: str, path: str, text: str) -> str:
    return f"#== snapshot ts={time.time():.6f} host={host} path={path}\n{text}"


def _counters(host: str) -> str:
    return _snapshot(host, "/proc/vmstat", Path("/proc/vmstat").read_text()) + \
        _snapshot(host, "/proc/self/io", Path("/proc/self/io").read_text())


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
    bad = [a for a in cfg.advices if a not in ADVICE]
    if bad:
        raise ValueError(f"unknown advice {bad}; choose from {sorted(ADVICE)}")
    if cfg.request_bytes <= 0 or cfg.random_reads_per_file < 0:
        raise ValueError("request_bytes must be > 0 and random_reads_per_file >= 0")
    if cfg.n_small + cfg.n_large > 2000 or cfg.large_bytes > 1 << 30 or cfg.max_files > 2000:
        raise ValueError("refusing more than 2000 files or files over 1 GiB: keep the probe small")
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
            if not where.is_dir():
                raise NotADirectoryError(f"{where}: not a directory")
            paths = _pick_files(where, cfg)
            if not paths:
                raise FileNotFoundError(f"{where}: no readable regular file to probe")
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
                    maps[p] = Residency(fd, sizes[p])
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
                    last = max(sizes[p] - cfg.request_bytes, 0)
                    offsets = [0] + [rng.randrange(0, last + 1) for _ in range(cfg.random_reads_per_file)]
                    for k, off in enumerate(offsets):
                        before = res.count()
                        os.pread(fd, cfg.request_bytes, off)
                        after = res.count()
                        reads_rows.append([advice, p.name, kind[p], sizes[p], off, cfg.request_bytes, k,
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
            w.writerow(READS_COLUMNS)
            w.writerows(reads_rows)
        with open(out / "files.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(FILES_COLUMNS)
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


def _cmd(args: argparse.Namespace) -> int:
    cfg = ProbeConfig(n_small=args.n_small, small_bytes=args.small_kib * 1024, n_large=args.n_large,
                      large_bytes=args.large_mib * 1024 * 1024, request_bytes=args.request_bytes,
                      random_reads_per_file=args.random_reads, advices=tuple(args.advice.split(",")),
                      seed=args.seed, max_files=args.max_files, max_seconds=args.max_seconds)
    out = run_probe(args.out, directory=args.dir, cfg=cfg, tmp_parent=args.tmp_parent, progress=not args.quiet)
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
    p.add_argument("--request-bytes", type=int, default=512, help="bytes per tiny read (default 512)")
    p.add_argument("--random-reads", type=int, default=2, help="reads at random offsets per file (default 2)")
    p.add_argument("--advice", default="normal,random,sequential", help="advices to compare, comma-separated")
    p.add_argument("--seed", type=int, default=1, help="random offsets and file order seed")
    p.add_argument("--max-files", type=int, default=200, help="at most this many files with --dir")
    p.add_argument("--max-seconds", type=float, default=120.0, help="stop reading after this long")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_cmd)
