"""The kernel's side of a warm kernel: imports paid once, a clean slate before every notebook.

Runs *inside* the Jupyter kernel (see :mod:`workbench.report.kernels`).
:func:`warm_up` imports the modules the notebooks import, draws one figure
off screen (fonts, Agg, the inline backend) and remembers the process state a
fresh kernel has; :func:`reset` brings that state back before each notebook:

- the user namespace, ``In``/``Out`` and the execution count (IPython's
  ``reset``: the first cell is ``[1]`` again, as in a fresh kernel);
- open figures, matplotlib's rcParams, numpy's print and error options,
  pandas' options, warning filters, ``os.environ``, ``sys.path``, the working
  folder; a local dask cluster a notebook started is closed.

Modules stay imported: that is the point. A module a notebook imported that the
warm-up did not is left in ``sys.modules`` too (as Python's own import cache
would); modules keep no results between notebooks (findings are display
outputs, not module state).
"""
from __future__ import annotations

import os
import sys
import warnings
from typing import Any

_STATE: dict[str, Any] = {}


def warm_up(modules: list[str]) -> list[str]:
    """Import ``modules``, draw one figure off screen, remember the state to reset to; the imports that failed.

    A name starting with ``?`` is imported only if it is a module (``from m import f`` may name a function).
    """
    import importlib
    import io

    failed = []
    for name in modules:
        optional = name.startswith("?")
        name = name.lstrip("?")
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if not (optional and exc.name == name):  # ``from m import f``: f is not a module, fine
                failed.append(f"{name}: {type(exc).__name__}: {exc}")
        except Exception as exc:  # noqa: BLE001 - the notebook that imports it meets the error itself
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
    try:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, 1], label="warm-up")
        ax.set_title("warm-up")
        ax.legend()
        fig.savefig(io.BytesIO(), format="png")
        plt.close(fig)
    except Exception as exc:  # noqa: BLE001
        failed.append(f"matplotlib: {type(exc).__name__}: {exc}")
    _snapshot()
    return failed


def _snapshot() -> None:
    _STATE["environ"] = dict(os.environ)
    _STATE["path"] = list(sys.path)
    _STATE["warnings"] = list(warnings.filters)
    if "matplotlib" in sys.modules:
        import matplotlib as mpl

        _STATE["rc"] = {k: v for k, v in mpl.rcParams.items() if k != "backend"}
    if "numpy" in sys.modules:
        import numpy as np

        _STATE["np_print"] = np.get_printoptions()
        _STATE["np_err"] = np.geterr()
    if "pandas" in sys.modules:
        _STATE["pandas"] = _pandas_options()


def _pandas_options() -> dict[str, Any]:
    import pandas as pd

    keys = list(getattr(pd._config.config, "_registered_options", {}))
    deprecated = getattr(pd._config.config, "_deprecated_options", {})
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in keys:
            if k in deprecated:
                continue
            try:
                out[k] = pd.get_option(k)
            except Exception:  # noqa: BLE001, S112 - an option that cannot be read back is not restored
                continue
    return out


def reset(cwd: str) -> None:
    """Bring the kernel back to the state :func:`warm_up` recorded, with an empty namespace, in ``cwd``."""
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
    engine = sys.modules.get("workbench.engine")
    if engine is not None and getattr(engine, "_local", None):
        engine._close_local()
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        shell.reset(new_session=True)  # namespace, In/Out, history; the next cell is [1]
    os.chdir(cwd)
    if "environ" in _STATE:
        os.environ.clear()
        os.environ.update(_STATE["environ"])
        sys.path[:] = _STATE["path"]
        warnings.filters[:] = _STATE["warnings"]  # type: ignore[index]
        warnings._filters_mutated()  # type: ignore[attr-defined]
    if "rc" in _STATE:
        import matplotlib as mpl

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mpl.rcParams.update(_STATE["rc"])
    if "np_print" in _STATE:
        import numpy as np

        np.set_printoptions(**_STATE["np_print"])
        np.seterr(**_STATE["np_err"])
    if "pandas" in _STATE:
        import pandas as pd

        now = _pandas_options()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k, v in _STATE["pandas"].items():
                if now.get(k, v) != v:
                    pd.set_option(k, v)
    import gc

    gc.collect()
