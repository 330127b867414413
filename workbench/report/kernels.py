"""Warm kernels: one Jupyter kernel per report worker, started and warmed once, reset between notebooks.

A cold run starts a kernel per notebook and each notebook imports numpy,
pandas, matplotlib, scipy and workbench again (about 0.6 s + 2 s on a 2-core
machine). A :class:`WarmKernel` starts one kernel, imports the modules the
notebooks import (:func:`imported_modules`, read from their code cells) and
draws one figure off screen; before each notebook :meth:`WarmKernel.reset`
empties the namespace and restores the process state a fresh kernel has (see
:mod:`workbench.report.kernelside`), so a notebook sees nothing of the one
before and its outputs are those of a cold run. papermill then executes the
notebook on this kernel (its parameters injected as usual).
"""
from __future__ import annotations

import ast
import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..errors import WorkbenchError

#: always imported by the warm-up: what ipykernel's inline figures and the notebooks' helpers need
BASE_MODULES = ("numpy", "pandas", "matplotlib.pyplot", "IPython.display", "workbench", "workbench.notebook",
                "workbench.findings")

#: the kernel's arguments: it listens on 127.0.0.1 only (its notice about unencrypted TCP, and the
#: interrupt it logs when stopped, are noise here); figures at twice their displayed size
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=CRITICAL", "--InlineBackend.figure_formats=retina"]


class KernelError(WorkbenchError):
    """A warm kernel could not be started, warmed or reset."""


def imported_modules(notebooks: Iterable[str | Path]) -> list[str]:
    """Every module the notebooks' code cells import at the top level of a cell, plus :data:`BASE_MODULES`.

    ``from a.b import c`` gives ``a.b`` and ``?a.b.c`` (import ``a.b.c`` if it is a module).
    Magic and shell lines are skipped, cells that still do not parse too; relative imports are ignored.
    """
    names: list[str] = list(BASE_MODULES)
    for path in notebooks:
        try:
            cells = json.loads(Path(path).read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            continue
        for cell in cells:
            if cell.get("cell_type") != "code":
                continue
            src = cell.get("source", "")
            src = "".join(src) if isinstance(src, list) else str(src)
            # IPython's magics and shell escapes are not Python: blank them, keep the rest of the cell
            src = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in src.splitlines())
            try:
                tree = ast.parse(src)
            except SyntaxError:
                continue
            for node in tree.body:
                if isinstance(node, ast.Import):
                    names += [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names.append(node.module)
                    # ``from workbench.lab import actors``: actors may be a module; "?" = import it if it is one
                    names += [f"?{node.module}.{a.name}" for a in node.names if a.name != "*"]
    return list(dict.fromkeys(names))


# Held while a thread imports the notebook stack (jupyter_client, ipykernel, papermill, nbconvert) or
# does what imports parts of it lazily (starting a kernel, rendering a page). Two threads importing
# packages that import each other can each find the other's module half-made ("cannot import name ...
# from partially initialized module"); one importer at a time cannot.
STACK_IMPORT = threading.Lock()


def import_stack(*names: str) -> None:
    """Import ``names`` in order holding :data:`STACK_IMPORT` (cheap when they are loaded already)."""
    import importlib

    with STACK_IMPORT:
        for name in names:
            importlib.import_module(name)


class WarmKernel:
    """One kernel for many notebooks: started and warmed once, :meth:`reset` before each notebook.

    ``km`` is the kernel manager to hand to papermill (``km=``). ``start_s``
    is what the start and warm-up cost, ``failed_imports`` the warm-up imports
    that failed (the notebook that imports such a module shows the error).
    ``launched`` is called once the kernel's process is started, before it is
    waited for and warmed up.
    """

    def __init__(self, cwd: str | Path, modules: Iterable[str], env: dict[str, str] | None = None,
                 startup_timeout_s: float = 120.0, launched: Callable[[], object] | None = None) -> None:
        from jupyter_client import AsyncKernelManager, BlockingKernelClient
        from jupyter_core.utils import run_sync

        t0 = time.perf_counter()
        self.cwd = str(cwd)
        self.timeout_s = startup_timeout_s
        self.km = AsyncKernelManager(kernel_name="python3")
        self.kc = BlockingKernelClient()
        try:
            with STACK_IMPORT:  # finding the kernel's spec imports ipykernel and IPython in this thread
                run_sync(self.km.start_kernel)(cwd=self.cwd, extra_arguments=list(KERNEL_ARGUMENTS),
                                               env={**os.environ, **(env or {})})
            if launched is not None:  # the kernel's process runs; its start and warm-up follow
                launched()
            self.kc.load_connection_info(self.km.get_connection_info())
            # no heartbeat: on a loaded machine a kernel still importing misses its beats and would be
            # taken for dead; whether the process lives is asked of the kernel manager (:meth:`alive`)
            self.kc.start_channels(hb=False)
            self.kc.wait_for_ready(timeout=startup_timeout_s)
            self.started_s = time.perf_counter() - t0
            reply = self._run("import json as _j, workbench.report.kernelside as _w\n"
                              f"print(_j.dumps(_w.warm_up({list(modules)!r})))\ndel _j, _w", capture=True)
            self.failed_imports: list[str] = json.loads(reply) if reply else []
            self.reset()
        except KernelError:
            self.shutdown()
            raise
        except Exception as exc:
            self.shutdown()
            raise KernelError(f"the warm kernel did not start: {type(exc).__name__}: {exc}") from exc
        except BaseException:
            self.shutdown()
            raise
        self.start_s = time.perf_counter() - t0
        self.notebooks = 0

    def _run(self, code: str, capture: bool = False) -> str:
        """Run ``code`` in the kernel without a trace in its history; its stdout if ``capture``."""
        out: list[str] = []
        errors: list[str] = []

        def hook(msg: dict[str, Any]) -> None:
            kind, content = msg["header"]["msg_type"], msg["content"]
            if kind == "stream" and content.get("name") == "stdout":
                out.append(content["text"])
            elif kind == "error":
                errors.append(f"{content.get('ename')}: {content.get('evalue')}")

        try:
            reply = self.kc.execute_interactive(code, silent=not capture, store_history=False,
                                                timeout=self.timeout_s, output_hook=hook)
        except TimeoutError as exc:
            raise KernelError(f"the warm kernel did not answer within {self.timeout_s:g} s") from exc
        if reply["content"].get("status") != "ok" or errors:
            detail = "; ".join(errors) or f"{reply['content'].get('ename')}: {reply['content'].get('evalue')}"
            raise KernelError(f"the warm kernel could not run its set-up code: {detail}")
        return "".join(out)

    def reset(self, cwd: str | Path | None = None) -> float:
        """Empty the namespace, restore the fresh-kernel state (see :mod:`~workbench.report.kernelside`) and
        change to ``cwd`` (default: the folder the kernel started in); the seconds it took."""
        t0 = time.perf_counter()
        folder = str(cwd) if cwd is not None else self.cwd
        self._run(f"__import__('workbench.report.kernelside').report.kernelside.reset({folder!r})")
        return time.perf_counter() - t0

    def alive(self) -> bool:
        """Whether the kernel process still runs."""
        from jupyter_core.utils import run_sync

        return bool(run_sync(self.km.is_alive)())

    def kill(self) -> None:
        """Kill the kernel process at once, from any thread (no messages: its sockets belong to its own thread)."""
        import signal

        pid = getattr(getattr(self.km, "provisioner", None), "pid", None)
        if isinstance(pid, int) and pid > 0:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def shutdown(self) -> None:
        """Stop the kernel and close the channels (safe to call twice)."""
        from jupyter_core.utils import run_sync

        try:
            self.kc.stop_channels()
        except Exception:  # noqa: BLE001, S110 - closing what may be half-open
            pass
        try:
            if run_sync(self.km.is_alive)():
                run_sync(self.km.shutdown_kernel)(now=True)
        except Exception:  # noqa: BLE001, S110
            pass
