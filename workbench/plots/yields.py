"""Figures of the event-loop yields investigation (each takes results, returns the Axes)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from .check import checked
from .style import legend_outside, new_axes

if TYPE_CHECKING:
    from ..models.yields import DurationFit, YieldsFit

_MODE_STYLE: dict[str, dict[str, Any]] = {"yielding": dict(color="#c0392b", marker="o"), "offloaded": dict(color="#2471a3", marker="s")}


@checked
def plot_duration_fit(fit: DurationFit, band: pd.DataFrame, frame: pd.DataFrame | None = None,
                      ax: Axes | None = None, title: str | None = None) -> Axes:
    """Duration vs yields × loop lag: points, fitted line, confidence and prediction bands.

    ``band`` is :func:`workbench.models.yields.fit_band` output; ``frame`` (optional,
    aligned with the fit's points) labels points by their ``sections`` column.
    """
    ax = new_axes(ax)
    ax.fill_between(band["x_ms"], band["pred_lo_ms"], band["pred_hi_ms"], color="#aab7b8", alpha=0.25,
                    label=f"{fit.level:.0%} prediction band (one new point)")
    ax.fill_between(band["x_ms"], band["lo_ms"], band["hi_ms"], color="#1f618d", alpha=0.35,
                    label=f"{fit.level:.0%} confidence band of the line")
    ax.plot(band["x_ms"], band["fitted_ms"], color="#1f618d",
            label=f"fit: {fit.intercept_ms:.0f} ms + {fit.slope:.3f} × yields × lag  (R² = {fit.r2:.4f})")
    ax.plot(band["x_ms"], band["x_ms"], color="#7f8c8d", ls=":", label="one loop pass per yield (slope 1)")
    if frame is not None and "sections" in frame:
        for s, sub in frame.assign(_x=fit.x_ms, _y=fit.y_ms).groupby("sections"):
            ax.scatter(sub["_x"], sub["_y"], s=45, zorder=3, label=f"{s} sections")
    else:
        ax.scatter(fit.x_ms, fit.y_ms, s=45, zorder=3, color="k", label="measured")
    ax.set_xlabel("yields × mean loop-pass time (ms)")
    ax.set_ylabel("save duration (ms)")
    ax.set_title(title or "Save duration is yields × loop-pass time")
    legend_outside(ax, fontsize=8)
    return ax


@checked
def plot_residuals(fit: DurationFit, ax: Axes | None = None) -> Axes:
    """Residuals of a duration fit against yields × lag, with ± residual SD."""
    ax = new_axes(ax, figsize=(7.5, 2.8))
    ax.axhline(0, color="k", lw=0.8)
    ax.axhspan(-fit.residual_sd_ms, fit.residual_sd_ms, color="#aab7b8", alpha=0.3,
               label=f"± residual SD ({fit.residual_sd_ms:.0f} ms)")
    ax.vlines(fit.x_ms, 0, fit.residuals_ms, color="#1f618d")
    ax.scatter(fit.x_ms, fit.residuals_ms, color="#1f618d", zorder=3, label="measured − fitted")
    ax.set_xlabel("yields × mean loop-pass time (ms)")
    ax.set_ylabel("residual (ms)")
    ax.set_title("Residuals of the duration fit")
    legend_outside(ax, fontsize=8)
    return ax


@checked
def plot_yields_fit(fit: YieldsFit, sections_grid: np.ndarray, ax: Axes | None = None) -> Axes:
    """Yields vs config sections: points and the fitted line over ``sections_grid``."""
    ax = new_axes(ax, figsize=(6.5, 4))
    g = np.asarray(sections_grid, dtype=float)
    ax.plot(g, fit.base_yields + fit.yields_per_section * g, color="#1f618d",
            label=f"fit: {fit.base_yields:.1f} + {fit.yields_per_section:.2f} × sections")
    ax.scatter(fit.sections, fit.yields, color="k", zorder=3, s=45, label="published (two lags per point)")
    ax.set_xlabel("config sections")
    ax.set_ylabel("yields during prepare (count)")
    ax.set_title("Yields grow linearly with the number of sections")
    legend_outside(ax, fontsize=8)
    return ax


@checked
def plot_prediction_grid(grid: pd.DataFrame, timeout_ms: float, ax: Axes | None = None) -> Axes:
    """Predicted duration vs loop lag, one line per section count, with the timeout marked.

    ``grid`` has columns sections, loop_lag_ms, duration_ms.
    """
    ax = new_axes(ax)
    for s, sub in grid.groupby("sections"):
        ax.plot(sub["loop_lag_ms"], sub["duration_ms"], label=f"{s} sections")
    ax.axhline(timeout_ms, color="#c0392b", ls="--", label=f"timeout {timeout_ms / 1e3:g} s")
    ax.set_yscale("log")
    ax.set_xscale("log")
    ax.set_xlabel("mean loop-pass time on the instance (ms)")
    ax.set_ylabel("predicted save duration (ms)")
    ax.set_title("Predicted save duration")
    legend_outside(ax, fontsize=8)
    return ax


@checked
def plot_risk_curve(curve: pd.DataFrame, timeout_ms: float, n_instances: int, sigma: float,
                    ax: Axes | None = None) -> Axes:
    """P(slowest of N saves > timeout) vs median loop lag, one band per section count.

    ``curve`` is :func:`workbench.models.yields.risk_curve` output.
    """
    ax = new_axes(ax)
    for s, sub in curve.groupby("sections"):
        line, = ax.plot(sub["median_lag_ms"], sub["probability"], label=f"{s} sections")
        ax.fill_between(sub["median_lag_ms"], sub["lo"], sub["hi"], color=line.get_color(), alpha=0.25)
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("median mean-loop-pass time across instances (ms)")
    ax.set_ylabel("P(slowest save > timeout)")
    ax.set_title(f"Risk that a config apply times out: slowest of {n_instances} instances, "
                 f"timeout {timeout_ms / 1e3:g} s, lag spread σ = {sigma:g}", fontsize=10)
    legend_outside(ax, fontsize=8, title="bands: fit uncertainty", title_fontsize=8)
    return ax


@checked
def plot_lab_fit(capture: pd.DataFrame, fit: DurationFit, band: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Yielding saves' duration vs yields × loop lag (the fit's own points), coloured by sections, with the fit.

    ``fit`` is :func:`workbench.models.yields.fit_lab` of ``capture`` (its points are the
    capture's yielding saves, in order).
    """
    ax = new_axes(ax)
    y = capture[capture["mode"] == "yielding"]
    sc = ax.scatter(fit.x_ms, fit.y_ms, c=y["sections"].to_numpy(), cmap="viridis", s=30, zorder=3)
    ax.plot(band["x_ms"], band["fitted_ms"], color="#c0392b",
            label=f"fit: {fit.intercept_ms:.1f} ms + {fit.slope:.3f} × yields × lag  (R² = {fit.r2:.4f})")
    ax.plot(band["x_ms"], band["x_ms"], color="#7f8c8d", ls=":", label="one loop pass per yield")
    ax.figure.colorbar(sc, ax=ax, label="config sections")
    ax.set_xlabel("yields × measured mean loop-pass time (ms)")
    ax.set_ylabel("save duration (ms)")
    ax.set_title("Reproduction on an event loop: yielding save")
    legend_outside(ax, fontsize=8)
    return ax


@checked
def plot_offload(summary: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Median save duration vs sections × measured lag for both modes (log y).

    ``summary`` is :func:`workbench.models.yields.lab_summary` output.
    """
    ax = new_axes(ax)
    for mode, sub in summary.groupby("mode"):
        x = sub["sections"] * sub["lag_ms_measured"]
        st = _MODE_STYLE.get(str(mode), {})
        ax.scatter(x, sub["duration_ms"], label=f"{mode} save", s=35, zorder=3, **st)
    ax.set_yscale("log")
    ax.set_xscale("log")
    ax.margins(x=0.08)
    ax.set_xlabel("sections × measured mean loop-pass time (section·ms, log)")
    ax.set_ylabel("median save duration (ms, log)")
    ax.set_title("Yielding and offloaded saves against sections × loop lag")
    legend_outside(ax, fontsize=8)
    return ax


@checked
def plot_lag_check(capture: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Measured mean loop-pass time vs the hog's configured spin, per mode."""
    ax = new_axes(ax, figsize=(6, 4))
    for mode, sub in capture.groupby("mode"):
        st = _MODE_STYLE.get(str(mode), {})
        ax.scatter(sub["hog_ms"], sub["lag_ms_measured"], alpha=0.6, label=f"before {mode} saves", **st)
    hi = float(capture["hog_ms"].max())
    ax.plot([0, hi], [0, hi], color="#7f8c8d", ls=":", label="pass time = hog spin")
    ax.set_xlabel("hog busy-spin per pass (ms)")
    ax.set_ylabel("measured mean loop-pass time (ms)")
    ax.set_title("The probe measures the load the hogs create")
    legend_outside(ax, fontsize=8)
    return ax


@checked
def plot_offload_bars(summary: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Median duration per section count at the heaviest hog, yielding vs offloaded bars (log y).

    ``summary`` is :func:`workbench.models.yields.lab_summary` output.
    """
    ax = new_axes(ax)
    hog = summary["hog_ms"].max()
    top = summary[summary["hog_ms"] == hog].pivot(index="sections", columns="mode", values="duration_ms")
    xs = np.arange(len(top))
    w = 0.38
    for k, mode in enumerate(m for m in ("yielding", "offloaded") if m in top):
        bars = ax.bar(xs + (k - 0.5) * w, top[mode], w, label=f"{mode} save",
                      color=_MODE_STYLE[mode]["color"])
        ax.bar_label(bars, fmt="%.0f", fontsize=8, padding=2)
    ax.set_xticks(xs, [str(s) for s in top.index])
    ax.set_yscale("log")
    ax.set_ylim(1, float(top.max().max()) * 3)
    ax.set_xlabel(f"config sections (hog {hog:g} ms per pass)")
    ax.set_ylabel("median save duration (ms, log)")
    ax.set_title("Heaviest load: yielding vs offloaded save")
    legend_outside(ax, fontsize=8)
    return ax
