"""Figures of the interactive explorers (:mod:`workbench.explore`): each draws one explorer view."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .. import readable
from .check import checked
from .style import legend_outside, new_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..stats import Mode

__all__ = ["plot_counter_rates", "plot_latency_view"]


@checked
def plot_latency_view(samples_s: Mapping[str, np.ndarray], modes: Sequence[Mode] = (), threshold_s: float | None = None,
                      marks_s: Mapping[str, float] | None = None, ax: Axes | None = None, title: str = "") -> Axes:
    """Latency histograms on a log axis, one step line per condition; modes, the threshold and percentiles marked.

    ``samples_s``: condition → latencies (s); ``marks_s``: label → a latency to mark (e.g. each condition's p99).
    """
    ax = new_axes(ax, figsize=(9, 4.2))
    finite = [v[np.isfinite(v) & (v > 0)] for v in samples_s.values()]
    allv = np.concatenate(finite) if finite else np.array([])
    if allv.size:
        lo, hi = float(allv.min()), float(allv.max())
        edges = np.geomspace(lo / 1.05, hi * 1.05, 80) if hi > lo else np.array([lo / 1.1, lo * 1.1])
        for (name, _), v in zip(samples_s.items(), finite, strict=True):
            counts, _ = np.histogram(v, bins=edges)
            ax.stairs(counts, edges * 1e3, label=f"{name} (n={readable.count(v.size)})", lw=1.6)
    for m in modes:
        ax.axvline(m.location * 1e3, color="#7f8c8d", ls=":", lw=1)
    if modes:
        ax.plot([], [], color="#7f8c8d", ls=":", label="modes: " + ", ".join(readable.duration(m.location) for m in modes))
    if threshold_s is not None:
        ax.axvline(threshold_s * 1e3, color="#c0392b", ls="--", lw=1.2, label=f"threshold {readable.duration(threshold_s)}")
    for k, (label, v) in enumerate((marks_s or {}).items()):
        ax.axvline(v * 1e3, color=f"C{k}", ls="-.", lw=1, alpha=0.8, label=f"{label} {readable.duration(v)}")
    ax.set_xscale("log")
    ax.set_xlabel("latency (ms, log)")
    ax.set_ylabel("requests per bin")
    ax.set_title(title or "Latency distribution")
    legend_outside(ax, fontsize=8)
    return ax


@checked
def plot_counter_rates(deltas: pd.DataFrame, unit: str = "", ax: Axes | None = None, title: str = "") -> Axes:
    """Per-interval rate of one counter, one step line per host (resets and wraps marked ×)."""
    ax = new_axes(ax, figsize=(9, 4.2))
    if len(deltas):
        origin = float(deltas["start_timestamp"].min())
        for host, g in deltas.groupby("host", sort=True):
            g = g.sort_values("timestamp")
            edges = np.concatenate([[g["start_timestamp"].iloc[0]], g["timestamp"].to_numpy()])
            art = ax.stairs(g["rate_per_s"].to_numpy(), (edges - origin), label=str(host) or "(no host)", lw=1.6,
                            baseline=None)
            ev = g[g["event"] != ""]
            if len(ev):
                ax.scatter((ev["start_timestamp"] + ev["timestamp"]) / 2 - origin, ev["rate_per_s"], marker="x",
                           s=60, color=art.get_edgecolor(), zorder=3)
    ax.set_xlabel("seconds since the first snapshot")
    ax.set_ylabel(f"rate ({unit or 'units'} per second)")
    ax.set_title(title or "Counter rate per interval")
    if len(deltas):
        legend_outside(ax, fontsize=8)
    return ax
