"""Latency figures: rate sweeps, over-threshold counts, quantised histograms, bisections.

Each function draws results computed by :mod:`workbench.latency.analysis` or
:mod:`workbench.stats` and returns the matplotlib Axes.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter, NullFormatter

from ..latency.analysis import quantile_column
from .check import checked
from .style import legend_outside, new_axes

if TYPE_CHECKING:
    from ..stats import Mode


def _plain_ticks(ax: Axes, *axes: str) -> None:
    """Label log axes with plain numbers (5, 50, 500) instead of powers of ten."""
    fmt = FuncFormatter(lambda v, _: f"{v:g}")
    for name in axes:
        axis = ax.xaxis if name == "x" else ax.yaxis
        axis.set_major_formatter(fmt)
        axis.set_minor_formatter(NullFormatter())


@checked
def plot_rate_sweep(summary: pd.DataFrame, qs: Sequence[float] = (50, 99), ax: Axes | None = None,
                    label: str = "", threshold_s: float | None = None, title: str | None = None) -> Axes:
    """Percentiles (ms, with CI bars) against offered rate (log-log); unsustained rates hollow.

    ``summary`` is a :func:`workbench.latency.analysis.rate_sweep` frame.
    """
    ax = new_axes(ax)
    s = summary.sort_values("offered_per_s")
    x = s["offered_per_s"].to_numpy(float)
    sustained = s["sustained"].to_numpy(bool)
    for q in qs:
        c = quantile_column(q)
        y = s[f"{c}_s"].to_numpy(float) * 1e3
        lo = s[f"{c}_low_s"].to_numpy(float) * 1e3
        hi = s[f"{c}_high_s"].to_numpy(float) * 1e3
        yerr = np.vstack([np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)])
        name = f"{label} p{q:g}".strip()
        line = ax.errorbar(x, y, yerr=yerr, marker="o", capsize=3, label=name)
        color = line[0].get_color()
        if (~sustained).any():
            ax.plot(x[~sustained], y[~sustained], "o", mfc="white", mec=color, ms=9, zorder=5)
    if threshold_s is not None:
        ax.axhline(threshold_s * 1e3, color="grey", ls="--", lw=1, label=f"threshold {threshold_s * 1e3:g} ms")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("offered rate (requests/s)")
    ax.set_ylabel("latency from scheduled send (ms)")
    _plain_ticks(ax, "x", "y")
    ax.set_title(title or "Latency percentiles against offered rate (95 % CI; hollow = rate not sustained)")
    legend_outside(ax, fontsize="small", title="hollow: not sustained", title_fontsize="x-small")
    return ax


@checked
def plot_over_threshold(summary: pd.DataFrame, threshold_s: float, ax: Axes | None = None,
                        label: str = "", title: str | None = None) -> Axes:
    """Requests over the threshold per second against offered rate, with the fraction annotated."""
    ax = new_axes(ax)
    s = summary.sort_values("offered_per_s")
    x = s["offered_per_s"].to_numpy(float)
    y = s["over_per_s"].to_numpy(float)
    ax.plot(x, y, marker="s", label=label or f"> {threshold_s * 1e3:g} ms")
    for xi, yi, f in zip(x, y, s["fraction_over"].to_numpy(float), strict=True):
        ax.annotate(f"{100 * f:.0f} %", (xi, yi), textcoords="offset points", xytext=(0, 6),
                    ha="center", fontsize="x-small")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1)
    top = float(np.nanmax(y)) if np.isfinite(y).any() else 1.0
    ax.set_ylim(0, max(top, 1.0) * 3)
    _plain_ticks(ax, "x", "y")
    ax.set_xlabel("offered rate (requests/s)")
    ax.set_ylabel(f"requests over {threshold_s * 1e3:g} ms per second")
    ax.set_title(title or f"Requests slower than {threshold_s * 1e3:g} ms, per second (label: share of requests)")
    legend_outside(ax, fontsize="small")
    return ax


@checked
def plot_quantised_histogram(values_s: Mapping[str, np.ndarray] | np.ndarray, modes: Sequence[Mode] = (),
                             quantum_s: float | None = None, ax: Axes | None = None, bin_ms: float = 1.0,
                             title: str | None = None) -> Axes:
    """Histogram of latencies (ms), stacked by label if a mapping is given, with modes marked.

    ``modes`` and ``quantum_s`` come from :func:`workbench.stats.find_modes` /
    :func:`workbench.stats.find_quantum` on the same values (seconds).
    """
    ax = new_axes(ax, figsize=(8.5, 4.5))
    series = values_s if isinstance(values_s, Mapping) else {"samples": values_s}
    arrays = [np.asarray(v, float) * 1e3 for v in series.values()]
    allv = np.concatenate([a[np.isfinite(a)] for a in arrays]) if arrays else np.array([])
    if allv.size:
        top = np.percentile(allv, 99.9) * 1.1
        bins = np.arange(0, max(top, bin_ms * 5) + bin_ms, bin_ms)
        ax.hist([np.clip(a[np.isfinite(a)], 0, bins[-1]) for a in arrays], bins=cast("Sequence[float]", bins),
                stacked=True,
                label=list(series.keys()))
    ax.set_yscale("log")
    for k, m in enumerate(modes):
        ax.axvline(m.location * 1e3, color="black", ls=":", lw=1.2,
                   label="modes" if k == 0 else None)
        ax.annotate(f"{m.location * 1e3:.1f} ms\n({100 * m.fraction:.0f} %)", (m.location * 1e3, 1),
                    xycoords=("data", "axes fraction"), xytext=(3, -24), textcoords="offset points",
                    fontsize="x-small")
    sub = f"; quantum {quantum_s * 1e3:.1f} ms" if quantum_s else "; no common quantum"
    ax.set_xlabel("latency from scheduled send (ms)")
    ax.set_ylabel("requests per bin (log)")
    ax.set_title(title or f"Latency distribution, {bin_ms:g} ms bins{sub}")
    legend_outside(ax, fontsize="small")
    return ax


@checked
def plot_conditions(summaries: Mapping[str, pd.DataFrame], q: float = 99, ax: Axes | None = None,
                    threshold_s: float | None = None, title: str | None = None) -> Axes:
    """One percentile against offered rate for several conditions (log-log, CI bars)."""
    ax = new_axes(ax)
    c = quantile_column(q)
    for name, s in summaries.items():
        s = s.sort_values("offered_per_s")
        y = s[f"{c}_s"].to_numpy(float) * 1e3
        yerr = np.vstack([np.clip(y - s[f"{c}_low_s"].to_numpy(float) * 1e3, 0, None),
                          np.clip(s[f"{c}_high_s"].to_numpy(float) * 1e3 - y, 0, None)])
        ax.errorbar(s["offered_per_s"], y, yerr=yerr, marker="o", capsize=3, label=name)
    if threshold_s is not None:
        ax.axhline(threshold_s * 1e3, color="grey", ls="--", lw=1, label=f"{threshold_s * 1e3:g} ms")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("offered rate (requests/s)")
    ax.set_ylabel(f"p{q:g} latency (ms)")
    _plain_ticks(ax, "x", "y")
    ax.set_title(title or f"p{q:g} against offered rate per condition (95 % CI)")
    legend_outside(ax, fontsize="small")
    return ax


@checked
def plot_bisection(steps: pd.DataFrame, threshold_s: float, q: float = 90, ax: Axes | None = None,
                   title: str | None = None) -> Axes:
    """Bars of each bisection trial's percentile (ms), red when it regressed, threshold line.

    ``steps`` is :attr:`workbench.latency.analysis.BisectionResult.steps`.
    """
    ax = new_axes(ax, figsize=(8.5, 0.5 * len(steps) + 1.8))
    labels = ["all options" if not r else f"then without {r}" for r in steps["removed"]]
    y = np.arange(len(steps))[::-1]
    colors = ["tab:red" if g else "tab:green" for g in steps["regressed"]]
    vals = steps["p_s"].to_numpy(float) * 1e3
    ax.barh(y, vals, color=colors)
    for yi, v in zip(y, vals, strict=True):
        ax.annotate(f"{v:.1f} ms", (v, yi), xytext=(4, 0), textcoords="offset points", va="center",
                    fontsize="small")
    ax.axvline(threshold_s * 1e3, color="grey", ls="--", lw=1, label=f"regression threshold {threshold_s * 1e3:g} ms")
    ax.set_yticks(y, labels)
    ax.set_xscale("log")
    ax.set_xlim(max(np.nanmin(vals) / 3, 1e-3), np.nanmax(vals) * 3)
    _plain_ticks(ax, "x")
    ax.set_xlabel(f"p{q:g} latency of the trial (ms)")
    ax.set_title(title or "Removing socket options one at a time, cumulatively\n(red: the stall came back, so that option is put back)")
    legend_outside(ax, fontsize="small")
    return ax
