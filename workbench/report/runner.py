"""Run notebooks as a report: papermill → executed .ipynb → self-contained HTML + index.

:func:`execute_notebook` runs one notebook and returns a :class:`NotebookResult`
(status, run time, parameters, findings read back from the executed notebook,
the failing cell's error, where the time went). :func:`run_report` runs several
in parallel worker processes and writes ``index.html``, ``findings.json``
(``{"version": 1, "findings": {notebook: {finding name: value}}}``) and
``report.json`` (``{"version": 1, "notebooks": [...], "run": {...}}``:
everything, for machines) into the output folder. A name or parameter no
notebook has raises :class:`~workbench.errors.UsageError` before anything runs.

Each worker keeps one warm kernel (:mod:`workbench.report.kernels`): started
once, the notebooks' imports paid once, reset to a clean namespace before each
notebook. ``warm=False`` starts a fresh kernel per notebook instead. The
longest notebooks (by their time in the folder's previous ``report.json``)
start first, so the last one to finish is a short one.
"""
from __future__ import annotations

import concurrent.futures as cf
import datetime as dt
import multiprocessing
import os
import socket
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputNotFoundError, UsageError, WorkbenchError
from ..findings import Finding, read_findings
from .html import page_info, render_html, write_index
from .kernels import KERNEL_ARGUMENTS, STACK_IMPORT, import_stack
from .notebooks import coerce_value, notebook_title, read_parameters
from .results import CellError, NotebookResult

if TYPE_CHECKING:
    from .kernels import WarmKernel


def default_jobs() -> int:
    """Notebooks to run at once by default: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def discover(notebooks_dir: str | Path) -> list[Path]:
    """The investigation notebooks in a folder (``NN_*.ipynb``, sorted).

    A folder that does not exist raises :class:`~workbench.errors.InputNotFoundError`.
    """
    d = Path(notebooks_dir)
    if not d.is_dir():
        raise InputNotFoundError(f"{d}: no such folder of notebooks")
    return sorted(p for p in d.glob("*.ipynb") if not p.name.startswith((".", "_")))


def select(notebooks: list[Path], names: list[str]) -> list[Path]:
    """Pick notebooks by name, stem, or unique prefix (``04`` picks ``04_event_loop_yields``).

    A name that matches no notebook, or several, raises :class:`~workbench.errors.UsageError`
    listing the available ones.
    """
    if not names:
        return notebooks
    chosen: list[Path] = []
    for n in names:
        stem = Path(n).stem
        hits = [p for p in notebooks if p.stem == stem] or [p for p in notebooks if p.stem.startswith(stem)]
        if len(hits) != 1:
            avail = ", ".join(p.stem for p in notebooks)
            what = "matches several" if hits else "matches no"
            raise UsageError(f"notebook {n!r} {what} notebook; available: {avail or '(none)'}")
        if hits[0] not in chosen:
            chosen.append(hits[0])
    return chosen


def resolve_parameters(path: Path, overrides: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """Typed values for the overrides this notebook declares, and the names it does not.

    A value that does not fit the parameter's default (``-p live maybe``) raises
    :class:`~workbench.errors.UsageError` naming the parameter and the notebook.
    """
    declared = {p.name: p for p in read_parameters(path)}
    values: dict[str, Any] = {}
    unknown: list[str] = []
    for name, raw in overrides.items():
        if name not in declared:
            unknown.append(name)
            continue
        try:
            value = coerce_value(raw, declared[name].default, name=name) if isinstance(raw, str) else raw
        except UsageError as exc:
            raise UsageError(f"{path.name}: {exc}") from exc
        if isinstance(value, str) and value and not os.path.isabs(value) and os.path.exists(value):
            value = os.path.abspath(value)  # a user's relative path, from where they ran the command
        values[name] = value
    return values, unknown


def _error_from(exc: BaseException) -> CellError:
    return CellError(
        cell_index=getattr(exc, "cell_index", None),
        execution_count=getattr(exc, "exec_count", None),
        ename=getattr(exc, "ename", type(exc).__name__),
        evalue=str(getattr(exc, "evalue", exc)),
        traceback="\n".join(getattr(exc, "traceback", []) or []) or repr(exc),
    )


def execute_notebook(
    path: str | Path,
    parameters: dict[str, Any] | None = None,
    out_dir: str | Path = "reports",
    no_input: bool = False,
    timeout_s: float = 1800.0,
    render: bool = True,
    cwd: str | Path | None = None,
    kernel: WarmKernel | None = None,
) -> NotebookResult:
    """Execute one notebook with papermill and collect status, findings, errors and timing.

    The executed notebook is written to ``out_dir/<name>.ipynb`` even when a
    cell fails (papermill marks the failing cell); ``out_dir/<name>.html`` is
    rendered unless ``render`` is False. The kernel runs in ``cwd`` (default: the
    folder above the notebook's, i.e. the project root). With ``kernel`` (a
    :class:`~workbench.report.kernels.WarmKernel`) the notebook runs on it after
    a reset instead of on a fresh kernel.
    """
    import papermill as pm

    path = Path(path).resolve()
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    out_nb = out / f"{path.stem}.ipynb"
    params = dict(parameters or {})
    run_cwd = Path(cwd) if cwd is not None else path.parent.parent
    t0 = time.perf_counter()
    started_s = time.time()
    error: CellError | None = None
    reset_s: float | None = None
    static = os.environ.get("WORKBENCH_STATIC")
    if kernel is None:  # a warm kernel got it when it started (and this process's threads must not race on it)
        os.environ["WORKBENCH_STATIC"] = "1"  # the kernel inherits it: explorers draw static views on shared pages
    try:
        if kernel is not None:  # it runs in run_cwd after the reset, WORKBENCH_STATIC set when it started
            reset_s = kernel.reset(run_cwd)
            pm.execute_notebook(
                str(path), str(out_nb), parameters=params, kernel_name="python3", km=kernel.km,
                progress_bar=False, execution_timeout=timeout_s, request_save_on_cell_execute=False)
        else:
            pm.execute_notebook(
                str(path), str(out_nb), parameters=params, kernel_name="python3",
                cwd=str(run_cwd), progress_bar=False, execution_timeout=timeout_s,
                request_save_on_cell_execute=False, extra_arguments=list(KERNEL_ARGUMENTS))
    except Exception as exc:  # noqa: BLE001 - every failure becomes a failed result
        error = _error_from(exc)
    finally:
        if kernel is not None:
            pass
        elif static is None:
            os.environ.pop("WORKBENCH_STATIC", None)
        else:
            os.environ["WORKBENCH_STATIC"] = static
    seconds = time.perf_counter() - t0
    findings: dict[str, Finding] = {}
    html_path: Path | None = None
    render_s: float | None = None
    timing: dict[str, Any] = {"kernel": "cold" if kernel is None else "warm", "host": socket.gethostname(),
                              "worker_pid": os.getpid(), "started_s": round(started_s, 3)}
    if reset_s is not None:
        timing["reset_s"] = round(reset_s, 3)
    if out_nb.exists():
        timing.update(cell_timing(out_nb))
        try:
            findings = read_findings(out_nb)
        except Exception as exc:  # noqa: BLE001
            error = error or _error_from(exc)
        if render:
            t_render = time.perf_counter()
            html_path = out / f"{path.stem}.html"
            defaults = {p.name: p.default for p in read_parameters(path)}
            page = page_info(path.stem, notebook_title(path), "failed" if error else "ok", started_s, seconds,
                             _effective_parameters(path, params), defaults, sorted(params))
            try:
                with STACK_IMPORT:  # rendering imports lexers and templates as it goes (CPU-bound anyway)
                    render_html(out_nb, html_path, no_input=no_input, page=page)
            except Exception as exc:  # noqa: BLE001
                error = error or _error_from(exc)
                html_path = None
            render_s = time.perf_counter() - t_render
    if render_s is not None:
        timing["render_s"] = round(render_s, 3)
    return NotebookResult(
        name=path.stem,
        title=notebook_title(path),
        status="failed" if error else "ok",
        seconds=round(seconds, 3),
        parameters=_effective_parameters(path, params),
        findings=findings,
        error=error,
        ipynb=str(out_nb) if out_nb.exists() else None,
        html=str(html_path) if html_path else None,
        timing=timing,
    )


#: how many of a notebook's slowest cells its timing lists
SLOWEST_CELLS = 3


def cell_timing(ipynb: str | Path) -> dict[str, Any]:
    """Where an executed notebook's time went, from papermill's per-cell metadata.

    Keys: ``kernel_start_s`` (papermill's start to the first cell: the kernel's
    start, near 0 on a warm kernel), ``cells_s`` (sum of the code cells'
    durations) and ``slowest_cells`` (``[{"cell": index among all cells,
    "execution_count": n, "seconds": s}]``, slowest first). Missing metadata
    gives an empty dict.
    """
    import nbformat

    try:
        nb = nbformat.read(str(ipynb), as_version=4)
        start = _when(nb.metadata.get("papermill", {}).get("start_time"))
    except Exception:  # noqa: BLE001 - timing is a nicety; never fail a run for it
        return {}
    cells = []
    first: dt.datetime | None = None
    for i, cell in enumerate(nb.cells):
        pm_meta = cell.get("metadata", {}).get("papermill", {})
        began = _when(pm_meta.get("start_time"))
        if began is not None and (first is None or began < first):
            first = began
        if cell.get("cell_type") == "code" and isinstance(pm_meta.get("duration"), (int, float)):
            cells.append({"cell": i, "execution_count": cell.get("execution_count"),
                          "seconds": round(float(pm_meta["duration"]), 3)})
    out: dict[str, Any] = {"cells_s": round(sum(c["seconds"] for c in cells), 3),
                           "slowest_cells": sorted(cells, key=lambda c: -c["seconds"])[:SLOWEST_CELLS]}
    if start is not None and first is not None:
        out["kernel_start_s"] = round(max(0.0, (first - start).total_seconds()), 3)
    return out


def _when(text: Any) -> dt.datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _effective_parameters(path: Path, overrides: dict[str, Any]) -> dict[str, Any]:
    eff = {p.name: p.default for p in read_parameters(path)}
    eff.update(overrides)
    return {k: v if isinstance(v, (str, int, float, bool, type(None), list, dict)) else repr(v) for k, v in eff.items()}


_Item = tuple[str, dict[str, Any], str, bool, float]
_RUN_STACK = ("nbformat", "papermill", "nbconvert")  # what running and rendering a notebook import


def _run_one(args: _Item) -> NotebookResult:
    """Run one planned notebook on a fresh kernel (a worker process of a cold run)."""
    path, params, out_dir, no_input, timeout_s = args
    return execute_notebook(path, params, out_dir, no_input=no_input, timeout_s=timeout_s)


class _Lane:
    """One job of a warm run: a thread of this process with its own warm kernel, taking notebooks in turn."""

    def __init__(self, modules: list[str], number: int = 1, of: int = 1) -> None:
        self.modules, self.number, self.of = modules, number, of
        self.kernel: WarmKernel | None = None
        self.launched = threading.Event()  # set once this lane's first kernel process runs (or could not)

    def run(self, item: _Item) -> NotebookResult:
        """Run one notebook on this lane's kernel (started, or replaced after a failure, as needed)."""
        from dataclasses import replace

        from .kernels import KernelError, WarmKernel

        path, params, out_dir, no_input, timeout_s = item
        warm_up_s, note = 0.0, ""
        if self.kernel is not None and not self.kernel.alive():
            self.stop()
        if self.kernel is None:
            try:
                self.kernel = WarmKernel(Path(path).resolve().parent.parent, self.modules,
                                         env={"WORKBENCH_STATIC": "1"}, launched=self.launched.set)
                warm_up_s = self.kernel.start_s
            except KernelError as exc:  # run it on a fresh kernel, and say why
                note = str(exc)
            finally:
                self.launched.set()
        import_stack(*_RUN_STACK)
        r = execute_notebook(path, params, out_dir, no_input=no_input, timeout_s=timeout_s, kernel=self.kernel)
        timing = {**r.timing, "job": self.number, "jobs": self.of}
        if self.kernel is not None:
            self.kernel.notebooks += 1
            timing.update(warm_up_s=round(warm_up_s, 3), kernel_notebook=self.kernel.notebooks)
            if self.kernel.failed_imports:
                timing["warm_up_failed_imports"] = self.kernel.failed_imports
        if note:
            timing["warm_kernel_error"] = note
        if r.status != "ok":  # whatever a failure left behind, the next notebook gets a new kernel
            self.stop()
        return replace(r, seconds=round(r.seconds + warm_up_s, 3), timing=timing)

    def stop(self) -> None:
        if self.kernel is not None:
            self.kernel.shutdown()
            self.kernel = None


def run_report(
    notebooks: list[Path],
    overrides: dict[str, str] | None = None,
    out_dir: str | Path = "reports",
    no_input: bool = False,
    jobs: int | None = 1,
    timeout_s: float = 1800.0,
    echo: bool = True,
    warm: bool = True,
) -> list[NotebookResult]:
    """Run notebooks (up to ``jobs`` at once) and write the index, findings.json and report.json.

    ``overrides`` maps parameter names to command-line strings; each is passed
    (typed by the parameter's default) to the notebooks that declare it. A name
    no selected notebook declares raises :class:`~workbench.errors.UsageError`
    before anything runs. ``jobs=None`` means :func:`default_jobs`; ``warm``
    keeps one warm kernel per worker (``False``: a fresh kernel per notebook).
    Results come back in the order of ``notebooks``.
    """
    overrides = overrides or {}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plan: list[_Item] = []
    unused = set(overrides)
    for nb in notebooks:
        values, unknown = resolve_parameters(nb, overrides)
        unused -= set(values)
        plan.append((str(nb), values, str(out), no_input, timeout_s))
    if unused:
        names = ", ".join(p.stem for p in notebooks)
        raise UsageError(f"parameter(s) {sorted(unused)} are not declared by any selected notebook ({names}); "
                         "see `workbench list` for each notebook's parameters")
    jobs = max(1, min(default_jobs() if jobs is None else jobs, len(plan) or 1))
    with _exclusive(out, echo):
        t0, started_s = time.perf_counter(), time.time()
        by_name = {r.name: r for r in _run_plan(_longest_first(plan, out), jobs, echo, warm)}
        ordered = [by_name[Path(item[0]).stem] for item in plan]
        run = {"host": socket.gethostname(), "jobs": jobs, "cores": default_jobs(),
               "kernels": "warm" if warm else "cold", "started_s": round(started_s, 3),
               "wall_s": round(time.perf_counter() - t0, 3)}
        write_index(_with_earlier(ordered, out, echo), out, no_input=no_input, run=run)
    return ordered


def _longest_first(plan: list[_Item], out: Path) -> list[_Item]:
    """The plan with the notebooks that took longest in ``out``'s previous report first (unknown ones first,
    then in plan order): the last notebook to start is a short one, so no worker idles at the end."""
    try:
        from .reading import read_report

        earlier = {name: r.seconds for name, r in read_report(out).notebooks.items()}
    except WorkbenchError:
        return plan
    return sorted(plan, key=lambda item: -earlier.get(Path(item[0]).stem, float("inf")))


#: the lock file that serialises report runs into one folder
LOCK_NAME = ".workbench-report.lock"


class _exclusive:
    """Hold an exclusive lock on ``out`` for a whole run: two runs into one folder take turns."""

    def __init__(self, out: Path, echo: bool) -> None:
        self.path, self.echo, self.fd = out / LOCK_NAME, echo, -1

    def __enter__(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not on POSIX: runs into one folder are not serialised
            return
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if self.echo:
                print(f"waiting for another report run into {self.path.parent} to finish", flush=True)
            fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing releases the lock


def _with_earlier(results: list[NotebookResult], out: Path, echo: bool) -> list[NotebookResult]:
    """This run's results, plus those of earlier runs into ``out`` for notebooks this run did not run
    (while their pages are still there): two runs of different notebooks into one folder both stay listed."""
    from .reading import read_report

    if not (out / "report.json").exists():
        return results
    try:
        earlier = read_report(out)
    except WorkbenchError as exc:
        if echo:
            print(f"warning: the earlier {out / 'report.json'} cannot be read ({exc}); the index lists this run only")
        return results
    ran = {r.name for r in results}
    kept = [r for name, r in earlier.notebooks.items() if name not in ran
            and r.html is not None and (out / Path(r.html).name).exists()]
    return sorted(results + kept, key=lambda r: r.name)


def _run_plan(plan: list[_Item], jobs: int, echo: bool, warm: bool = True) -> list[NotebookResult]:
    """Execute every planned notebook (``jobs`` at once, in plan order as jobs free up); results in plan order.

    Warm: ``jobs`` threads of this process, each with its own warm kernel (the kernels do the work; this
    process drives them and renders the pages). Cold: ``jobs`` worker processes, a fresh kernel per notebook.
    """
    results: dict[str, NotebookResult] = {}
    jobs = max(1, min(jobs, len(plan) or 1))

    def done(r: NotebookResult) -> None:
        results[r.name] = r
        if echo:
            _echo(r)

    if warm:
        _run_warm(plan, jobs, done)
    elif jobs == 1:
        for item in plan:
            done(_run_one(item))
    else:
        ctx = multiprocessing.get_context("spawn")
        with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futures = {pool.submit(_run_one, item): item for item in plan}
            for fut in cf.as_completed(futures):
                done(fut.result())
    return [results[Path(p[0]).stem] for p in plan]


def _run_warm(plan: list[_Item], jobs: int, done: Any) -> None:
    """Run ``plan`` on ``jobs`` lanes (threads with a warm kernel each); ``done(result)`` as each finishes."""
    import queue

    from .kernels import imported_modules

    modules = imported_modules(item[0] for item in plan)
    todo: queue.SimpleQueue[_Item] = queue.SimpleQueue()
    for item in plan:
        todo.put(item)
    finished: queue.SimpleQueue[NotebookResult | BaseException] = queue.SimpleQueue()
    lanes = [_Lane(modules, i + 1, jobs) for i in range(jobs)]

    def work(lane: _Lane) -> None:
        try:
            while True:
                try:
                    item = todo.get_nowait()
                except queue.Empty:
                    return
                finished.put(lane.run(item))
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
            finished.put(exc)
        finally:
            lane.launched.set()
            lane.stop()

    threads = [threading.Thread(target=work, args=(lane,), name=f"workbench-report-{i}", daemon=True)
               for i, lane in enumerate(lanes)]
    import_stack("jupyter_client", "jupyter_core.utils")  # what starting a kernel needs, before the lanes
    for t in threads:
        t.start()
    try:
        # while the kernels start and import, this process imports what running and rendering need (once
        # the lanes have launched them: launching imports in a lane, one importer at a time)
        for lane in lanes:
            lane.launched.wait(timeout=60)
        import_stack(*_RUN_STACK)

        for _ in plan:
            got = finished.get()
            if isinstance(got, BaseException):
                raise got
            done(got)
    finally:
        while True:  # each lane stops its own kernel (a kernel's sockets belong to its thread)
            try:
                todo.get_nowait()
            except queue.Empty:
                break
        for t in threads:
            t.join(timeout=10)
        for lane in lanes:  # interrupted mid-notebook (Ctrl-C, an error): no kernel outlives the run
            if lane.kernel is not None:
                lane.kernel.kill()


def _echo(r: NotebookResult) -> None:
    mark = "ok    " if r.status == "ok" else "FAILED"
    extra = "" if r.error is None else f"  {r.error.ename}: {r.error.evalue.splitlines()[0] if r.error.evalue else ''}"
    noisy = sum(f.ci is not None or f.tolerance is not None or f.rel_tolerance is not None for f in r.findings.values())
    print(f"{mark} {r.name}  {r.seconds:.1f} s  {len(r.findings)} findings ({noisy} with a CI or tolerance){extra}",
          flush=True)
