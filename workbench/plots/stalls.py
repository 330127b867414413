"""Figures of the quantised-latency investigation: sequences, histograms, peaks, the stall test.

Every function takes frames or results computed elsewhere and returns the Axes.
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import NullFormatter, ScalarFormatter

from .check import checked
from .style import legend_outside, new_axes, place_labels

if TYPE_CHECKING:
    from ..latency.series import ChangePoints
    from ..models.stalls import StallTest
    from ..stats import Mode
    from ..syscalls.waits import DurationPeak

__all__ = [
    "plot_ab_blocks",
    "plot_baseline",
    "plot_call_sequence",
    "plot_duration_histogram",
    "plot_latency_histogram",
    "plot_long_run",
    "plot_phase_split",
    "plot_stall_test",
    "plot_uptime",
]


@checked
def plot_call_sequence(latency_s: Sequence[float], ax: Axes | None = None, title: str = "") -> Axes:
    """Latency of consecutive calls (ms) against call number."""
    ax = new_axes(ax)
    y = 1e3 * np.asarray(latency_s, dtype=float)
    ax.plot(np.arange(1, y.size + 1), y, "o-", ms=4, lw=0.8)
    ax.set_xlabel("call number")
    ax.set_ylabel("latency (ms)")
    ax.set_title(title or f"{y.size} sequential calls")
    return ax


@checked
def plot_latency_histogram(latency_s: Sequence[float], modes: Sequence[Mode] = (), ax: Axes | None = None,
                           title: str = "", bins_per_decade: int = 25) -> Axes:
    """Histogram of latency on log bins with the found modes marked (modes in ms).

    ``modes``: the ``modes`` of :func:`workbench.models.stalls.latency_modes` (locations in ms).
    """
    ax = new_axes(ax)
    x = 1e3 * np.asarray(latency_s, dtype=float)
    x = x[np.isfinite(x) & (x > 0)]
    lo, hi = np.floor(np.log10(x.min())), np.ceil(np.log10(x.max()))
    edges = np.logspace(lo, hi, int((hi - lo) * bins_per_decade) + 1)
    ax.hist(x, bins=cast("Sequence[float]", edges), color="#4a7bb7", alpha=0.85, label=f"calls (n={x.size})")
    for k, m in enumerate(modes):
        ax.axvline(m.location, color="#d62728", ls="--", lw=1, label="modes" if k == 0 else None)
    ax.set_xscale("log")
    ax.set_xlabel("latency (ms, log scale)")
    ax.set_ylabel("calls")
    ax.set_title(title or "Latency histogram")
    legend_outside(ax)
    top = ax.get_ylim()[1]
    ax.set_ylim(0, top * 1.6)  # room above the bars for the mode labels
    place_labels(ax, [(m.location, top, f"{m.location:.0f} ms\n(n={m.count})")
                      for m in sorted(modes, key=lambda m: m.location)], color="#d62728", boxed=True)
    return ax


@checked
def plot_long_run(rolling: pd.DataFrame, change: ChangePoints | None = None, ax: Axes | None = None,
                  baseline_s: Sequence[float] | None = None, title: str = "") -> Axes:
    """A long latency series: raw calls, rolling percentiles, change-point segments and an optional baseline.

    ``rolling``: output of :func:`workbench.latency.series.rolling_percentiles`;
    ``change``: a :class:`workbench.latency.series.ChangePoints`.
    """
    ax = new_axes(ax, figsize=(10, 4.8))
    t0 = rolling["timestamp_s"].min()
    h = (rolling["timestamp_s"] - t0) / 3600
    ax.scatter(h, 1e3 * rolling["latency_s"], s=6, color="0.6", label="calls")
    for col, colour in (("p50_s", "#1f77b4"), ("p90_s", "#ff7f0e"), ("p99_s", "#d62728")):
        if col in rolling:
            ax.plot(h, 1e3 * rolling[col], color=colour, lw=1.6, label=f"rolling {col[:-2]}")
    if baseline_s is not None:
        ax.plot(h, 1e3 * np.asarray(baseline_s, dtype=float), color="#2ca02c", lw=0.8, label="ping")
    if change is not None:
        seg = change.segments
        for _, r in seg.iterrows():
            a, b = (r["start_s"] - t0) / 3600, (r["end_s"] - t0) / 3600
            ax.hlines(r["median_ms"], a, b, color="k", lw=2.5,
                      label="segment median (change points)" if r["segment"] == 0 else "_nolegend_")
        for bt in change.break_times_s:
            ax.axvline((bt - t0) / 3600, color="k", ls=":", lw=1)
    ax.set_xlabel("hours since the first call")
    ax.set_ylabel("latency (ms)")
    ax.set_title(title or "Long-run series")
    legend_outside(ax, fontsize=8, ncol=2)
    return ax


@checked
def plot_baseline(calls: pd.DataFrame, baseline: pd.DataFrame, ax: Axes | None = None, title: str = "") -> Axes:
    """Calls and the network baseline over the same time (ms, log scale)."""
    ax = new_axes(ax, figsize=(10, 4.2))
    t0 = min(calls["timestamp_s"].min(), baseline["timestamp_s"].min())
    ax.plot(baseline["timestamp_s"] - t0, 1e3 * baseline["latency_s"], ".", ms=2, color="#2ca02c",
            label=f"connect ping (n={len(baseline)})")
    ax.plot(calls["timestamp_s"] - t0, 1e3 * calls["latency_s"], "o", ms=3, color="#4a7bb7",
            label=f"calls (n={len(calls)})")
    ax.set_yscale("log")
    ax.set_xlabel("time since start (s)")
    ax.set_ylabel("latency (ms, log scale)")
    ax.set_title(title or "Calls against the network baseline")
    legend_outside(ax)
    return ax


@checked
def plot_duration_histogram(hist: pd.DataFrame, peaks: Sequence[DurationPeak] = (),
                            syscalls: Sequence[str] | None = None,
                            ax: Axes | None = None, title: str = "", min_s: float = 1e-6) -> Axes:
    """Per-syscall duration histograms on log bins (step lines), peaks marked.

    ``hist``: :func:`workbench.syscalls.duration_histogram` output (syscall,
    bin_lo_s, bin_hi_s, count); ``peaks``: :class:`workbench.syscalls.waits.DurationPeak`.
    """
    ax = new_axes(ax, figsize=(10, 4.8))
    names = list(syscalls) if syscalls is not None else sorted(set(hist["syscall"]))
    for name in names:
        h = hist[(hist["syscall"] == name) & (hist["bin_hi_s"] > min_s)]
        if h["count"].sum() == 0:
            continue
        edges = np.append(h["bin_lo_s"].to_numpy(), h["bin_hi_s"].to_numpy()[-1]) * 1e3
        ax.stairs(h["count"].to_numpy(), edges, label=f"{name} (n={int(h['count'].sum())})", lw=1.4)
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1)
    ymax = max(1.0, float(hist["count"].max()))
    ax.set_ylim(0, ymax * 60)
    ordered = sorted(peaks, key=lambda q: q.location_s)
    for p in ordered:
        ax.axvline(1e3 * p.location_s, color="k", ls=":", lw=1)
    ax.set_xlabel("syscall duration (ms, log bins; shorter calls counted in the first bin)")
    ax.set_ylabel("calls per bin (symlog)")
    ax.set_title(title or "Syscall durations")
    legend_outside(ax, fontsize=8)
    place_labels(ax, [(1e3 * p.location_s, ymax * 1.6, f"{1e3 * p.location_s:.0f} ms\n×{p.count}") for p in ordered],
                 fontsize=7, boxed=True)
    return ax


@checked
def plot_stall_test(result: StallTest, ax: Axes | None = None, title: str = "") -> Axes:
    """P(step is slow) against mean step duration, with Wilson intervals and the fitted line.

    ``result``: a :class:`workbench.models.stalls.StallTest` (:func:`~workbench.models.stalls.global_stall_test`).
    """
    ax = new_axes(ax)
    t = result.steps
    yerr = np.clip(np.vstack([t["p_slow"] - t["p_slow_low"], t["p_slow_high"] - t["p_slow"]]), 0, None)
    ax.errorbar(t["mean_ms"], t["p_slow"], yerr=yerr, fmt="o", capsize=3, label="steps (95 % Wilson interval)")
    if np.isfinite(result.slope_per_ms):
        xs = np.linspace(0, t["mean_ms"].max() * 1.05, 50)
        ax.plot(xs, result.intercept + result.slope_per_ms * xs, "r-",
                label=f"fit: slope {result.slope_per_ms:.4f}/ms, r = {result.correlation:.2f}")
    ax.set_xlabel("mean step duration (ms)")
    ax.set_ylabel(f"P(step slower than median + {result.slow_excess_ms:g} ms)")
    ax.set_title(title or f"Global-stall test: {result.verdict}")
    legend_outside(ax)
    # last: the fit line (from 0 ms) and the legend change the limits and the Axes' size, which move points
    # labelled earlier closer together
    place_labels(ax, [(float(r["mean_ms"]), float(r["p_slow"]), str(int(r["step"]))) for _, r in t.iterrows()],
                 fontsize=7, color="0.3")
    return ax


@checked
def plot_phase_split(per_request: pd.DataFrame, phases: Sequence[str], ax: Axes | None = None,
                     title: str = "") -> Axes:
    """Per-request time in each phase (ms) in request order, stacked; slow requests stand out."""
    ax = new_axes(ax, figsize=(10, 4.2))
    bottom = np.zeros(len(per_request))
    x = np.arange(len(per_request))
    for name in phases:
        v = 1e3 * per_request[f"{name}_s"].to_numpy()
        ax.bar(x, v, bottom=bottom, width=1.0, label=name)
        bottom += v
    ax.set_xlabel("request (in order)")
    ax.set_ylabel("time (ms)")
    ax.set_title(title or "Where each request spends its time")
    legend_outside(ax)
    return ax


@checked
def plot_uptime(uptime_s: Sequence[float], latency_s: Sequence[float], groups: Sequence[Hashable] | None = None,
                ax: Axes | None = None, title: str = "") -> Axes:
    """Request latency (ms) against the serving process's uptime (s), coloured by process."""
    ax = new_axes(ax)
    u = np.asarray(uptime_s, dtype=float)
    y = 1e3 * np.asarray(latency_s, dtype=float)
    if groups is None:
        ax.plot(u, y, "o", ms=3)
    else:
        g = np.asarray(groups)
        for k in np.unique(g):
            ax.plot(u[g == k], y[g == k], "o", ms=3, label=f"process {k}")
        legend_outside(ax)
    ax.set_xlabel("process uptime at request start (s)")
    ax.set_ylabel("request time (ms)")
    ax.set_title(title or "Request time against process uptime")
    return ax


@checked
def plot_ab_blocks(frame: pd.DataFrame, colours: Mapping[str, str] | None = None, ax: Axes | None = None,
                   title: str = "") -> Axes:
    """Latency per request over time, coloured by condition, for an A/B run in blocks (ms, log scale)."""
    ax = new_axes(ax, figsize=(10, 4.2))
    colours = dict(colours or {})
    t0 = frame["timestamp_s"].min()
    for k, (cond, sub) in enumerate(frame.groupby("condition", sort=True)):
        ax.plot(sub["timestamp_s"] - t0, 1e3 * sub["latency_s"], ".", ms=3,
                color=colours.get(str(cond), f"C{k}"), label=f"{cond} (median {1e3 * sub['latency_s'].median():.2f} ms)")
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("time since start (s)")
    ax.set_ylabel("request latency (ms, log scale)")
    ax.set_title(title or "A/B in alternating blocks")
    legend_outside(ax)
    return ax
