"""A config save on a loaded asyncio event loop: yielding file operations vs one offloaded call.

The experiment reproduces, on asyncio, what slows a cluster-wide config apply on a
loaded Tarantool instance. Hog tasks busy-spin ``hog_ms`` between yields, so every
event-loop pass takes about that long; a probe task counts the passes and times
them (the loop lag is measured, not assumed). Meanwhile ``save`` writes a config of
S sections as files the way ``cartridge.clusterwide-config.save`` does: a randomised
temp directory, per section ``mktree`` (a ``stat`` of every path component from ``/``,
``mkdir`` where missing), ``open(O_CREAT|O_EXCL|O_WRONLY|O_SYNC)``, ``write``,
``close``, then ``rename`` of the tree into place, ``rmtree`` on error. Two modes:

- ``yielding``: the save yields to the event loop around every file-system call, as a
  Tarantool fiber does on every ``fio`` call (the call goes to a worker pool and the fiber
  waits for a later loop pass). Here each call runs inline followed by one
  ``await asyncio.sleep(0)``, so one yield is one loop pass, as one fiber context switch is.
- ``offloaded``: the same file work runs in a worker thread behind a single
  ``await asyncio.to_thread(...)``: the save waits a fixed couple of passes whatever the
  section count.

The hogs spin by hashing a buffer: ``hashlib`` releases the GIL on large buffers, so the
worker thread can run while the loop is busy, as Tarantool's worker threads run beside its
busy transaction thread. (A pure-Python spin would hold the GIL and starve the thread — a
CPython artefact, not part of the effect.)

Everything is written under one ``tempfile.mkdtemp`` directory that is removed at the
end (also on error or interrupt); the sweep is bounded in run count and wall time and
shows a progress bar. Run it as ``workbench lab yields --out capture.csv``; this module
owns the capture format: :data:`CAPTURE_SCHEMA`, :func:`write_capture` and
:func:`read_capture` (the analyses are in :mod:`workbench.models.yields`).
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import concurrent.futures as cf
import contextlib
import functools
import hashlib
import os
import shutil
import stat
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..schema import Column, Schema, attach_rejects, validate
from ..sources import Source
from ..tables import Above, AtLeast, OneOf, Rule, read_table

#: the two ways a save runs (values of the capture's ``mode`` column)
MODES = ("yielding", "offloaded")

CAPTURE_SCHEMA = Schema(
    name="yields_lab_capture",
    doc=(
        "One save on an event loop per row (written by `workbench lab yields`, or your own "
        "capture with at least the required columns): a config of `sections` files saved "
        "while other tasks load the loop; the loop-pass time is measured, not assumed. "
        "Optional columns may be absent: the analyses that need them are skipped."
    ),
    columns=(
        Column("mode", "string", "", "'yielding' (yield around every file operation) or "
               "'offloaded' (whole save in a worker thread, one await)"),
        Column("sections", "int", "count", "config sections written (one file each)"),
        Column("hog_ms", "float", "ms", "busy-spin time of each hog task between its yields (the load knob; "
               "optional)", required=False),
        Column("n_hogs", "int", "count", "hog tasks running (optional)", required=False),
        Column("repeat", "int", "count", "repeat index of this (mode, sections, hog_ms) point (optional)",
               required=False),
        Column("yields", "int", "count", "awaits the save made (event-loop yields)"),
        Column("passes", "int", "count", "event-loop passes a probe counted during the save (optional; "
               "needed for the direct passes-per-yield count)", required=False),
        Column("lag_ms_measured", "float", "ms", "mean event-loop pass time measured under the same "
               "load around the save (the loop's speed, independent of the save)"),
        Column("lag_ms_median", "float", "ms", "median event-loop pass time in the measuring window (optional)",
               required=False),
        Column("lag_ms_during", "float", "ms", "mean event-loop pass time during the save, including the "
               "save's own inline work (optional)", required=False),
        Column("lag_ms_others", "float", "ms", "mean event-loop pass time during the save less the save's own "
               "time per pass: the loop lag the save got from everything else (optional)", required=False),
        Column("duration_ms", "float", "ms", "wall-clock duration of the save"),
        Column("fs_ms", "float", "ms", "time spent inside file-system calls, sum (optional)", required=False),
        Column("written_bytes", "int", "bytes", "bytes written to section files (optional)", required=False),
    ),
)

#: columns every capture needs (the rest are optional)
CAPTURE_REQUIRED = tuple(c.name for c in CAPTURE_SCHEMA.columns if c.required)

#: what every captured value must satisfy (other than ``repeat``, which is not checked)
_REQUIRED_RULES: dict[str, Rule] = {
    "mode": OneOf(frozenset(MODES)), "sections": Above(0), "yields": AtLeast(0),
    "lag_ms_measured": AtLeast(0.0), "duration_ms": AtLeast(0.0),
}
#: the same for optional columns, applied when the column is there
_OPTIONAL_RULES: dict[str, Rule] = {
    "hog_ms": AtLeast(0.0), "n_hogs": AtLeast(0), "passes": AtLeast(0), "lag_ms_median": AtLeast(0.0),
    "lag_ms_during": AtLeast(0.0), "lag_ms_others": AtLeast(0.0), "fs_ms": AtLeast(0.0), "written_bytes": AtLeast(0),
}


def _check_optional(record: dict[str, Any]) -> str | None:
    for col, rule in _OPTIONAL_RULES.items():
        if col in record:
            bad = rule(record[col])
            if bad is not None:
                return f"column {col!r}: {bad}"
    return None


#: open flags of every section file, as in cartridge's save()
OPEN_FLAGS = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_SYNC", 0)

DEFAULT_SECTIONS = (2, 4, 8, 16)
DEFAULT_HOG_MS = (0.0, 2.0, 5.0, 10.0)
QUICK_SECTIONS = (2, 8, 16)
QUICK_HOG_MS = (0.0, 5.0, 10.0)

_SPIN_BUF = os.urandom(16 * 1024)
_PROBE_BUF = os.urandom(64 * 1024)

Op = tuple[Callable[..., Any], tuple[Any, ...]]


# --------------------------------------------------------------------------- the save, written once

def make_config(sections: int, section_bytes: int = 2048, seed: int = 0) -> dict[str, bytes]:
    """A config of ``sections`` YAML-like sections of about ``section_bytes`` each (name → content).

    Every fourth section sits in a sub-directory, as nested sections do in a
    cluster-wide config (``auth.yml``, ``topology.yml``, ``roles/<name>.yml`` …).
    """
    if sections < 1:
        raise UsageError(f"make_config: sections must be >= 1, got {sections}")
    rng = np.random.default_rng(seed)
    out: dict[str, bytes] = {}
    for i in range(sections):
        name = f"roles/section_{i:03d}.yml" if i % 4 == 3 else f"section_{i:03d}.yml"
        lines = [f"# section {i}"]
        while sum(len(x) + 1 for x in lines) < section_bytes:
            lines.append(f"key_{len(lines):04d}: {int(rng.integers(0, 1 << 62)):x}")
        out[name] = ("\n".join(lines) + "\n").encode()
    return out


def _randomize_path(path: str) -> str:
    return path.rstrip("/") + "." + base64.urlsafe_b64encode(os.urandom(9)).decode()


def _stat_or_none(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def _mkdir(path: str) -> None:
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        if not os.path.isdir(path):
            raise


def _mktree_ops(path: str) -> Generator[Op, Any, None]:
    """cartridge utils.mktree: stat every component from ``/``; mkdir the missing ones."""
    current = "/"
    for part in os.path.abspath(path).strip("/").split("/"):
        current = os.path.join(current, part)
        st = yield (_stat_or_none, (current,))
        if st is None:
            yield (_mkdir, (current,))
        elif not stat.S_ISDIR(st.st_mode):
            raise NotADirectoryError(f"{current}: exists and is not a directory")


def _save_ops(config: dict[str, bytes], path: str) -> Generator[Op, Any, None]:
    """The file operations of one save, as a generator of (function, args) the drivers execute.

    Rollback (removing the randomised tree) happens inside, without yielding, on any
    error and when the driver closes the generator (cancellation).
    """
    random_path = _randomize_path(path)
    try:
        yield from _mktree_ops(random_path)
        for section, content in config.items():
            abspath = os.path.join(random_path, section)
            yield from _mktree_ops(os.path.dirname(abspath))
            fd = yield (os.open, (abspath, OPEN_FLAGS, 0o644))
            try:
                view = memoryview(content)
                while len(view):
                    n = yield (os.write, (fd, view))
                    view = view[n:]
            except BaseException:
                with contextlib.suppress(OSError):
                    os.close(fd)
                raise
            try:
                yield (os.close, (fd,))
            except GeneratorExit:  # closed by the driver before the close ran: close here
                os.close(fd)
                raise
        yield (os.rename, (random_path, path))
    except BaseException:
        shutil.rmtree(random_path, ignore_errors=True)
        raise


@dataclass
class SaveStats:
    """What one save did: file-system calls (= yields when yielding), time inside them, bytes written,
    and ``own_s``, the time the save itself ran on the event-loop thread (between its yields)."""

    calls: int = 0
    fs_s: float = 0.0
    written_bytes: int = 0
    own_s: float = 0.0


def _execute(op: Op, st: SaveStats) -> Any:
    fn, args = op
    t0 = time.perf_counter()
    try:
        result = fn(*args)
    finally:
        st.fs_s += time.perf_counter() - t0
        st.calls += 1
    if fn is os.write:
        st.written_bytes += int(result)
    return result


def save_blocking(config: dict[str, bytes], path: str | os.PathLike[str]) -> SaveStats:
    """Save ``config`` as a file tree at ``path`` synchronously (no yields). Returns its :class:`SaveStats`."""
    st = SaveStats()
    gen = _save_ops(config, os.fspath(path))
    result: Any = None
    exc: BaseException | None = None
    try:
        while True:
            try:
                op = gen.throw(exc) if exc is not None else gen.send(result)
            except StopIteration:
                return st
            exc = None
            try:
                result = _execute(op, st)
            except Exception as e:  # noqa: BLE001 - handed back to the save, which rolls back and re-raises
                result, exc = None, e
    finally:
        gen.close()  # interrupted (KeyboardInterrupt): the save's rollback runs


async def save_yielding(config: dict[str, bytes], path: str | os.PathLike[str]) -> tuple[int, SaveStats]:
    """Save ``config`` yielding to the event loop around every file-system call.

    Returns (yields, stats): the number of ``await``s made and the :class:`SaveStats`.
    Each call's result is handed to the save before the yield, so a cancellation at
    any yield finds the save holding everything it opened and its rollback closes it.
    """
    st = SaveStats()
    yields = 0
    resumed = time.perf_counter()
    gen = _save_ops(config, os.fspath(path))
    try:
        op: Op | None = gen.send(None)
        while op is not None:
            exc: BaseException | None = None
            result: Any = None
            try:
                result = _execute(op, st)
            except Exception as e:  # noqa: BLE001 - handed back to the save, which rolls back and re-raises
                exc = e
            try:
                op = gen.throw(exc) if exc is not None else gen.send(result)
            except StopIteration:
                op = None
            st.own_s += time.perf_counter() - resumed
            await asyncio.sleep(0)  # the fiber waits for the loop to come back
            resumed = time.perf_counter()
            yields += 1
        return yields, st
    finally:
        gen.close()  # on cancellation: the save's rollback runs


async def save_offloaded(config: dict[str, bytes], path: str | os.PathLike[str]) -> tuple[int, SaveStats]:
    """The fix: the whole save in a worker thread behind one await. Returns (1, stats)."""
    st = await asyncio.to_thread(save_blocking, config, path)
    return 1, st


# --------------------------------------------------------------------------- load and probe

def _spin(seconds: float) -> None:
    """Keep a core busy for ``seconds`` without holding the GIL for long (hashing releases it)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        hashlib.sha256(_SPIN_BUF).digest()


async def _hog(hog_s: float, running: list[bool]) -> None:
    while running[0]:
        if hog_s > 0:
            _spin(hog_s)
        await asyncio.sleep(0)


async def _probe(running: list[bool], ends: list[float]) -> None:
    """Record the end time of every event-loop pass (one sleep(0) round trip = one pass).

    Each pass also hashes a 64 KiB buffer (tens of µs, GIL released) so that on an
    otherwise idle loop the spinning probe does not starve a worker thread of the GIL.
    """
    ends.append(time.perf_counter())
    while running[0]:
        hashlib.sha256(_PROBE_BUF).digest()
        await asyncio.sleep(0)
        ends.append(time.perf_counter())


@dataclass(frozen=True)
class Measurement:
    """One save under load: mode, sections, hog_ms, n_hogs, yields, passes, lag_ms_measured,
    lag_ms_median, lag_ms_during, lag_ms_others, duration_ms, fs_ms, written_bytes (see CAPTURE_SCHEMA)."""

    mode: str
    sections: int
    hog_ms: float
    n_hogs: int
    yields: int
    passes: int
    lag_ms_measured: float
    lag_ms_median: float
    lag_ms_during: float
    lag_ms_others: float
    duration_ms: float
    fs_ms: float
    written_bytes: int


async def measure_save(
    mode: str,
    config: dict[str, bytes],
    target: str | os.PathLike[str],
    hog_ms: float,
    n_hogs: int = 1,
    baseline_passes: int = 12,
    baseline_s: float = 0.02,
    timeout_s: float = 30.0,
) -> Measurement:
    """Run one save of ``config`` to ``target`` in ``mode`` while ``n_hogs`` tasks hog the loop.

    The probe measures the loaded loop on its own for at least ``baseline_passes``
    passes and ``baseline_s`` seconds (capped at 2 s) just before the save and again
    just after it: the mean and median pass time of both windows are ``lag_ms_measured``
    and ``lag_ms_median`` — the instance's loop speed, measured independently of the
    save (two windows, so a machine whose speed drifts during the save is not judged
    by its state before it alone). During the save it counts ``passes`` and their mean
    ``lag_ms_during`` (which includes the save's own inline work); ``lag_ms_others`` is
    that mean less the save's own time per pass: the loop lag the save actually got
    from the other tasks (and from whatever else the machine ran). The save is
    cancelled (and rolled back) after ``timeout_s``.
    """
    if mode not in MODES:
        raise UsageError(f"measure_save: mode must be one of {MODES}, got {mode!r}")
    running = [True]
    ends: list[float] = []
    tasks = [asyncio.create_task(_hog(hog_ms / 1e3, running)) for _ in range(n_hogs)]
    tasks.append(asyncio.create_task(_probe(running, ends)))
    try:
        while not ends:  # let the probe start
            await asyncio.sleep(0)
        tb = ends[0]
        cap = tb + 2.0
        while (len(ends) < baseline_passes + 2 or time.perf_counter() - tb < baseline_s) \
                and time.perf_counter() < cap:
            await asyncio.sleep(0)
        saver = save_yielding if mode == "yielding" else save_offloaded
        t0 = time.perf_counter()
        async with asyncio.timeout(timeout_s):  # no extra task, unlike wait_for on 3.11
            yields, st = await saver(config, target)
        t1 = time.perf_counter()
        n1 = len(ends)
        cap = t1 + 2.0
        while (len(ends) < n1 + baseline_passes + 1 or time.perf_counter() - t1 < baseline_s) \
                and time.perf_counter() < cap:
            await asyncio.sleep(0)
    finally:
        running[0] = False
        await asyncio.gather(*tasks, return_exceptions=True)
    e = np.asarray(ends)
    dt, end = np.diff(e), e[1:]
    start = e[:-1]
    before = dt[1:][end[1:] <= t0]  # skip the probe's first pass (start-up)
    after = dt[start >= t1]
    base = np.concatenate([before, after])
    during = dt[(end > t0) & (end <= t1)]
    others = (during.sum() - st.own_s) / len(during) if len(during) else float("nan")

    def ms(x: np.ndarray, f: Callable[[np.ndarray], Any]) -> float:
        return float(f(x) * 1e3) if len(x) else float("nan")

    return Measurement(
        mode=mode, sections=len(config), hog_ms=float(hog_ms), n_hogs=n_hogs, yields=int(yields),
        passes=int(len(during)), lag_ms_measured=ms(base, np.mean), lag_ms_median=ms(base, np.median),
        lag_ms_during=ms(during, np.mean), lag_ms_others=max(0.0, others * 1e3),
        duration_ms=(t1 - t0) * 1e3, fs_ms=st.fs_s * 1e3,
        written_bytes=st.written_bytes,
    )


def _run_coroutine(make: Callable[[], Any]) -> Any:
    """Run a fresh event loop for ``make()``; in a worker thread if this thread already runs one (Jupyter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with cf.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


# --------------------------------------------------------------------------- the sweep

@dataclass(frozen=True)
class SweepPlan:
    """What a sweep runs: every (repeat, sections, hog_ms, mode), bounded by ``max_seconds``."""

    sections: tuple[int, ...] = DEFAULT_SECTIONS
    hog_ms: tuple[float, ...] = DEFAULT_HOG_MS
    modes: tuple[str, ...] = MODES
    repeats: int = 3
    n_hogs: int = 1
    section_bytes: int = 2048
    max_seconds: float = 300.0
    run_timeout_s: float = 30.0
    seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def runs(self) -> list[tuple[int, int, float, str]]:
        return [(r, s, h, m) for r in range(self.repeats) for s in self.sections
                for h in self.hog_ms for m in self.modes]


def run_sweep(plan: SweepPlan | None = None, progress: bool = True, **kw: Any) -> pd.DataFrame:
    """Run a sweep of saves and return the capture frame (:data:`CAPTURE_SCHEMA`).

    ``plan`` or keyword fields of :class:`SweepPlan` (sections, hog_ms, modes,
    repeats, n_hogs, section_bytes, max_seconds, run_timeout_s, seed). All files live in
    one temporary directory removed at the end. If ``max_seconds`` runs out the sweep
    stops early, warns, and sets ``frame.attrs["truncated"] = True``.
    """
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()}
    plan = plan or SweepPlan(**fields)
    for m in plan.modes:
        if m not in MODES:
            raise UsageError(f"run_sweep: unknown mode {m!r} in modes; expected {MODES}")
    if plan.repeats < 1 or not plan.sections or not plan.hog_ms:
        raise UsageError(f"run_sweep: a sweep needs repeats >= 1 and at least one sections and hog_ms value, got "
                         f"repeats={plan.repeats}, sections={list(plan.sections)}, hog_ms={list(plan.hog_ms)}")
    if any(s < 1 for s in plan.sections) or any(h < 0 for h in plan.hog_ms) or plan.n_hogs < 1:
        raise UsageError(f"run_sweep: sections must be >= 1, hog_ms >= 0 and n_hogs >= 1, got "
                         f"sections={list(plan.sections)}, hog_ms={list(plan.hog_ms)}, n_hogs={plan.n_hogs}")
    from tqdm import tqdm

    runs = plan.runs()
    rows: list[dict[str, Any]] = []
    truncated = False
    root = tempfile.mkdtemp(prefix="workbench-yields-")
    t_start = time.monotonic()
    try:
        workdir = os.path.join(root, "workdir")
        os.mkdir(workdir)
        configs = {s: make_config(s, plan.section_bytes, plan.seed + s) for s in plan.sections}
        bar = tqdm(runs, desc="yields sweep", unit="save", disable=not progress, file=sys.stderr)
        for i, (rep, s, h, mode) in enumerate(bar):
            if time.monotonic() - t_start > plan.max_seconds:
                truncated = True
                warnings.warn(f"yields sweep stopped after {i} of {len(runs)} saves: "
                              f"max_seconds={plan.max_seconds} reached", stacklevel=2)
                break
            target = os.path.join(workdir, f"config.prepare.{i}")
            m = _run_coroutine(functools.partial(measure_save, mode, configs[s], target, h, plan.n_hogs,
                                                 timeout_s=plan.run_timeout_s))
            shutil.rmtree(target, ignore_errors=True)
            row = m.__dict__ | {"repeat": rep}
            rows.append(row)
            bar.set_postfix(mode=mode[:5], S=s, hog=h, ms=f"{m.duration_ms:.0f}")
        bar.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    frame = pd.DataFrame(rows, columns=CAPTURE_SCHEMA.names())
    dtypes = {c.name: {"int": "int64", "float": "float64", "string": "object"}[c.kind] for c in CAPTURE_SCHEMA.columns}
    frame = frame.astype(dtypes)
    frame.attrs["truncated"] = truncated
    frame.attrs["source"] = "<live sweep>"
    attach_rejects(frame, [])
    return validate(frame, CAPTURE_SCHEMA)


def write_capture(frame: pd.DataFrame, out: str | os.PathLike[str], header_lines: Sequence[str] = ()) -> Path:
    """Write a capture as CSV (the columns of CAPTURE_SCHEMA it has), with optional ``#`` comment lines first."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8", newline="") as fh:
        for line in header_lines:
            fh.write(f"# {line}\n")
        frame[[c for c in CAPTURE_SCHEMA.names() if c in frame.columns]].to_csv(fh, index=False, float_format="%.4f", lineterminator="\n")
    return out


def read_capture(source: Source, strict: bool = False) -> pd.DataFrame:
    """Load a capture written by ``workbench lab yields``, or your own, as :data:`CAPTURE_SCHEMA`.

    Required columns: mode, sections, yields, lag_ms_measured, duration_ms; optional
    (absent from the frame when absent from the file): hog_ms, n_hogs, repeat, passes,
    lag_ms_median, lag_ms_during, lag_ms_others, fs_ms, written_bytes (see the schema for
    units). Rows that do not parse, name an unknown mode, have no sections or a negative
    count or time go to ``frame.attrs["rejects"]``;
    ``strict=True`` raises :class:`~workbench.errors.ParseError` for the first.
    """
    return read_table(source, CAPTURE_SCHEMA, strict=strict, rules=_REQUIRED_RULES, check=_check_optional)


# --------------------------------------------------------------------------- command line

def _cmd(args: argparse.Namespace) -> int:
    sections = tuple(args.sections or (QUICK_SECTIONS if args.quick else DEFAULT_SECTIONS))
    hog = tuple(args.hog_ms or (QUICK_HOG_MS if args.quick else DEFAULT_HOG_MS))
    repeats = args.repeats if args.repeats is not None else (1 if args.quick else 3)
    plan = SweepPlan(sections=sections, hog_ms=hog, repeats=repeats, n_hogs=args.n_hogs,
                     section_bytes=args.section_bytes, max_seconds=args.max_seconds, seed=args.seed)
    frame = run_sweep(plan, progress=not args.no_progress)
    cmd = (f"workbench lab yields --out {args.out} --sections {' '.join(map(str, sections))} "
           f"--hog-ms {' '.join(f'{h:g}' for h in hog)} --repeats {repeats} --n-hogs {args.n_hogs} "
           f"--section-bytes {args.section_bytes} --seed {args.seed}")
    header = [
        f"made by: {cmd}",
        f"plan: sections={list(sections)} hog_ms={list(hog)} repeats={repeats} n_hogs={args.n_hogs} "
        f"section_bytes={args.section_bytes}",
        f"machine: {os.cpu_count()} cpus, {os.uname().sysname} {os.uname().release}, Python {sys.version.split()[0]}",
        f"date: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
    ]
    if frame.attrs.get("truncated"):
        header.append("truncated: max_seconds reached before the plan finished")
    path = write_capture(frame, args.out, header)
    print(f"wrote {len(frame)} saves to {path}")
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench lab yields``."""
    p = subparsers.add_parser(
        "yields",
        help="config save on a loaded asyncio loop: yielding file ops vs one offloaded call",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("--out", required=True, help="CSV file to write (capture format read by read_capture)")
    p.add_argument("--sections", type=int, nargs="+", help="config section counts (default 2 4 8 16)")
    p.add_argument("--hog-ms", type=float, nargs="+", help="hog busy-spin per pass, ms (default 0 2 5 10)")
    p.add_argument("--repeats", type=int, help="repeats of every point (default 3; 1 with --quick)")
    p.add_argument("--n-hogs", type=int, default=1, help="hog tasks (default 1)")
    p.add_argument("--section-bytes", type=int, default=2048, help="bytes per section file (default 2048)")
    p.add_argument("--max-seconds", type=float, default=300.0, help="stop the sweep after this many seconds")
    p.add_argument("--seed", type=int, default=0, help="seed of the section contents")
    p.add_argument("--quick", action="store_true", help="small sweep (sections 2 8 16, hog 0 5 10 ms, 1 repeat)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd)
