"""One small figure per diagnosed suspect, drawn from the data its detector kept (``Detection.plot``).

A plot payload is a dict with ``kind``:

- ``"hist"``: ``values`` (array), ``xlabel``, optional ``lines`` (x positions marked, e.g. a
  quantum's lattice), ``logx`` and ``logy``;
- ``"points"``: ``x``, ``y``, optional ``lo``/``hi`` (interval per point), ``fit_x``/``fit_y``
  (a fitted line), ``xlabel``, ``ylabel``, ``logx``;
- ``"bars"``: ``labels``, ``values``, ``ylabel`` (the values' axis): horizontal bars, one row per
  label, a label with "asked" in blue, the others in red.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .check import checked

__all__ = ["plot_suspect"]


@checked
def plot_suspect(plot: dict[str, Any], ax: Axes | None = None, title: str = "") -> Axes:
    """A small figure of one suspect's evidence (see the module docstring for ``plot``).

    Without ``ax`` a new 4.8 × 2.6 in figure is made outside pyplot (nothing to close).
    """
    if ax is None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        rows = len(plot.get("labels", ())) if plot.get("kind") == "bars" else 0
        fig = Figure(figsize=(4.8, max(2.6, 0.9 + 0.32 * rows)), layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
    ax.grid(True, alpha=0.3)
    kind = plot.get("kind")
    if kind == "hist":
        v = np.asarray(plot["values"], dtype="float64")
        v = v[np.isfinite(v)]
        if plot.get("logx"):
            v = v[v > 0]
            bins: Any = np.geomspace(max(v.min(), 1e-3), v.max() * 1.05, 80) if v.size else 10
            ax.set_xscale("log")
        else:
            bins = 120
        ax.hist(v, bins=bins, color="#4a6fa5")
        for x in plot.get("lines", []):
            ax.axvline(x, color="#b03a2e", lw=0.8, ls="--")
        if plot.get("logy"):
            ax.set_yscale("log")
        ax.set_ylabel("count")
    elif kind == "points":
        x, y = np.asarray(plot["x"], dtype="float64"), np.asarray(plot["y"], dtype="float64")
        if "lo" in plot and "hi" in plot:
            lo, hi = np.asarray(plot["lo"], dtype="float64"), np.asarray(plot["hi"], dtype="float64")
            ax.errorbar(x, y, yerr=[np.maximum(y - lo, 0), np.maximum(hi - y, 0)], fmt="o", ms=4, color="#4a6fa5")
        else:
            ax.plot(x, y, "o", ms=3, color="#4a6fa5")
        if "fit_x" in plot:
            order = np.argsort(plot["fit_x"])
            ax.plot(np.asarray(plot["fit_x"])[order], np.asarray(plot["fit_y"])[order], color="#b03a2e", lw=1)
        if plot.get("logx"):
            ax.set_xscale("log")
        ax.set_ylabel(plot.get("ylabel", ""))
    elif kind == "bars":
        # horizontal bars, one row per label: long or many labels never run into each other
        labels = [str(s) for s in plot["labels"]]
        colours = ["#4a6fa5" if "asked" in lab else "#b03a2e" for lab in labels]
        pos = np.arange(len(labels))
        ax.barh(pos, plot["values"], color=colours)
        ax.set_yticks(pos, labels)
        ax.invert_yaxis()
        ax.set_xlabel(plot.get("ylabel", ""))
        if title:
            ax.set_title(title, fontsize=9)
        return ax
    else:
        ax.text(0.5, 0.5, "no figure for this evidence", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel(plot.get("xlabel", ""))
    if title:
        ax.set_title(title, fontsize=9)
    return ax
