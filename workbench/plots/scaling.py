"""Figures for timing tables, scaling-law fits and per-actor metrics.

Every function takes frames or fit results from :mod:`workbench.models.scaling`
(or the actor lab) and returns the matplotlib Axes it drew on. The names before
``plot_`` was added (``time_heatmap``, ``usl_plot``, …) still work for one
release, with a DeprecationWarning.
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm
from matplotlib.patches import Rectangle

from .. import _moved
from .check import checked
from .style import layout_paused, legend_outside, new_axes

if TYPE_CHECKING:
    from ..models.scaling import PowerLawFit, USLFit

__all__ = [
    "plot_busiest_by_kind",
    "plot_cell_bottlenecks",
    "plot_demand_predictions",
    "plot_loc_bars",
    "plot_loglog_fits",
    "plot_ratio_intervals",
    "plot_speedup_heatmap",
    "plot_time_heatmap",
    "plot_usl",
]

ITERATION_COLORS = {1: "#c0392b", 2: "#2471a3", 3: "#229954"}
KIND_COLORS = {"coordinator": "#c0392b", "bank": "#2471a3", "client": "#7f8c8d",
               "transaction": "#d68910", "account": "#229954"}


def _g(v: float) -> str:
    """A parameter for a legend: 3 significant digits, 0 for values under 1e-9."""
    return "0" if abs(v) < 1e-9 else f"{v:.3g}"


def _iteration(key: Hashable) -> int:
    """A groupby key of the ``iteration`` column as an int."""
    return int(cast("int", key))  # an int or numpy integer (pandas-stubs types keys as Hashable)


_MORE_COLORS = ("#8e44ad", "#d68910", "#17a589", "#5d6d7e", "#a04000", "#1f618d")


def _color(it: Hashable) -> str:
    """A fixed colour for iterations 1–3, then a cycle of others (any number of iterations)."""
    i = _iteration(it)
    return ITERATION_COLORS.get(i, _MORE_COLORS[i % len(_MORE_COLORS)])


@checked
def plot_time_heatmap(times: pd.DataFrame, iteration: int, ax: Axes | None = None, resolution_s: float = 0.001,
                 vmin_s: float = 0.0005, vmax_s: float | None = None) -> Axes:
    """Heatmap of ``time_s`` over banks × clients per bank for one iteration (log colour scale, seaborn).

    Every cell is annotated with its time; cells printed as 0 (under half the resolution) are hatched
    and labelled "<0.5 ms"; cells not measured stay blank.
    """
    import seaborn as sns

    ax = new_axes(ax, figsize=(5, 4))
    ax.grid(False)
    g = times[times["iteration"] == iteration].pivot(index="banks", columns="clients_per_bank", values="time_s")
    data = g.to_numpy(dtype=float)
    shown = np.where(data > 0, data, np.nan)
    vmax = vmax_s or float(np.nanmax(shown))
    labels = np.where(np.isfinite(shown), np.vectorize(lambda v: f"{v:.3g}")(np.nan_to_num(shown)), "")
    with layout_paused(ax.get_figure(root=True)):
        sns.heatmap(pd.DataFrame(shown, index=g.index, columns=g.columns), ax=ax, cmap="viridis",
                    norm=LogNorm(vmin=vmin_s, vmax=vmax), annot=labels, fmt="", annot_kws={"fontsize": 8},
                    linewidths=0.5, linecolor="white", cbar_kws={"label": "time, s (log scale)"})
    for i, j in zip(*np.nonzero(data == 0), strict=True):
        ax.add_patch(Rectangle((j, i), 1, 1, fill=False, hatch="///", edgecolor="#999999", lw=0))
        ax.text(j + 0.5, i + 0.5, f"<{resolution_s / 2 * 1000:g} ms", ha="center", va="center", fontsize=7)
    ax.invert_yaxis()  # banks grow upwards
    ax.set_xlabel("clients per bank")
    ax.set_ylabel("banks")
    ax.set_title(f"Iteration {iteration}: wall time, s")
    return ax


@checked
def plot_loglog_fits(times: pd.DataFrame, fits: Mapping[int, PowerLawFit], lines: pd.DataFrame, ax: Axes | None = None,
                work_col: str = "transfers", time_col: str = "time_s", resolution_s: float | None = 0.001,
                title: str = "Time against transfers, log-log, with fitted power laws") -> Axes:
    """Scatter of time against work per iteration with the fitted power laws.

    Filled markers were fitted; hollow ones were under the floor (printed zeros are
    drawn at half the resolution with a downward triangle; ``resolution_s=None`` for
    measured times without printing resolution). ``lines`` is
    :func:`workbench.models.scaling.power_law_lines` output; ``fits`` maps
    iteration → PowerLawFit (for the legend).
    """
    ax = new_axes(ax, figsize=(7.5, 5))
    for it, g in times.groupby("iteration", sort=True):
        f = fits.get(_iteration(it))
        col = _color(it)
        floor = f.min_time_s if f is not None else 0.0
        used = g[g[time_col] >= floor]
        under = g[(g[time_col] < floor) & (g[time_col] > 0)]
        zero = g[g[time_col] <= 0]
        jitter = {1: 0.94, 2: 1.0, 3: 1.06}.get(_iteration(it), 1.0)
        label = f"iteration {it}"
        if f is not None:
            label += (f": exponent {f.exponent:.2f} [{f.exponent_low:.2f}, {f.exponent_high:.2f}]"
                      f" ({f.n_used} fitted, {f.n_excluded} under {f.min_time_s:g} s)")
        ax.scatter(used[work_col] * jitter, used[time_col], color=col, s=28, zorder=3, label=label)
        ax.scatter(under[work_col] * jitter, under[time_col], facecolors="none", edgecolors=col, s=28, zorder=3)
        if resolution_s is not None:
            ax.scatter(zero[work_col] * jitter, np.full(len(zero), resolution_s / 2), marker="v",
                       facecolors="none", edgecolors=col, s=28, zorder=3)
        ln = lines[lines["iteration"] == it]
        ax.plot(ln["work"], ln["time_s"], color=col, lw=1.5)
    floors = {f.min_time_s for f in fits.values()}
    for fl in floors:
        ax.axhline(fl, color="#888888", ls="--", lw=1)
        ax.text(float(times[work_col].min()), fl * 1.1, f"fit floor {fl:g} s", fontsize=8, color="#555555")
    if resolution_s is not None:
        ax.axhline(resolution_s, color="#bbbbbb", ls=":", lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("transfers = clients × (clients − 1)")
    ax.set_ylabel("wall time, s")
    ax.set_title(title)
    legend_outside(ax, fontsize=8)
    return ax


@checked
def plot_speedup_heatmap(sp: pd.DataFrame, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Heatmap of per-cell speed-ups (from :func:`~workbench.models.scaling.speedups`), each
    annotated with its rounding interval; undefined cells (zero denominator) say so (seaborn)."""
    import seaborn as sns

    ax = new_axes(ax, figsize=(5.5, 4))
    ax.grid(False)
    g = sp.pivot(index="banks", columns="clients_per_bank", values="speedup")
    lo = sp.pivot(index="banks", columns="clients_per_bank", values="speedup_low").to_numpy()
    hi = sp.pivot(index="banks", columns="clients_per_bank", values="speedup_high").to_numpy()
    data = g.to_numpy(dtype=float)
    shown = np.where(np.isfinite(data) & (data > 0), data, np.nan)
    vmax = max(float(np.nanmax(shown)), 2.0)
    vmin = min(float(np.nanmin(shown)), 0.5)
    labels = np.full(data.shape, "", dtype=object)
    for i, j in np.ndindex(data.shape):
        if np.isfinite(data[i, j]):
            hi_t = "∞" if not np.isfinite(hi[i, j]) else f"{hi[i, j]:.3g}"
            labels[i, j] = f"{data[i, j]:.3g}\n[{lo[i, j]:.2g}, {hi_t}]"
    with layout_paused(ax.get_figure(root=True)):
        sns.heatmap(pd.DataFrame(shown, index=g.index, columns=g.columns), ax=ax, cmap="magma",
                    norm=LogNorm(vmin=vmin, vmax=vmax), annot=labels, fmt="", annot_kws={"fontsize": 7},
                    linewidths=0.5, linecolor="white", cbar_kws={"label": "speed-up, × (log scale)"})
    for i, j in zip(*np.nonzero(~np.isfinite(data)), strict=True):
        ax.text(j + 0.5, i + 0.5, "n/a\n(0 / 0)", ha="center", va="center", fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("clients per bank")
    ax.set_ylabel("banks")
    ax.set_title(title or "Speed-up per cell [rounding interval]")
    return ax


@checked
def plot_ratio_intervals(sp: pd.DataFrame, min_time_s: float, ax: Axes | None = None,
                    label: str = "time(2) / time(3)") -> Axes:
    """Per-cell ratio against transfers with its rounding interval; cells where both times
    reach ``min_time_s`` are filled, the others hollow; a line marks 1 (no difference)."""
    ax = new_axes(ax, figsize=(7.5, 4.5))
    d = sp[sp["defined"] & (sp["speedup"] > 0)].copy()
    well = (d["time_num_s"] >= min_time_s) & (d["time_den_s"] >= min_time_s)
    hi = d["speedup_high"].where(np.isfinite(d["speedup_high"]), d["speedup"] * 20)
    for mask, face, name in ((well, "#2471a3", f"both times ≥ {min_time_s:g} s"),
                             (~well, "none", "under the floor (rounding dominates)")):
        x = d.loc[mask, "transfers"].to_numpy(dtype=float)
        y = d.loc[mask, "speedup"].to_numpy()
        yerr = np.vstack([y - d.loc[mask, "speedup_low"].to_numpy(), hi[mask].to_numpy() - y])
        ax.errorbar(x, y, yerr=yerr, fmt="o", mfc=face, mec="#2471a3", ecolor="#9db4c8", capsize=2, label=name)
    ax.axhline(1.0, color="black", lw=1, ls="--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(0.1, 20)
    ax.set_xlabel("transfers")
    ax.set_ylabel(f"{label}, × (log scale)")
    ax.set_title(f"Per-cell {label} with its rounding interval")
    legend_outside(ax, fontsize=8)
    return ax


@checked
def plot_usl(thr: pd.DataFrame, curves: pd.DataFrame, fits: Mapping[int, USLFit], ax: Axes | None = None) -> Axes:
    """Throughput against cores per iteration (log y) with the fitted USL curves; the legend
    gives σ, κ and N* of each fit.

    ``fits`` is :func:`workbench.models.scaling.usl_by_iteration` output, ``curves``
    :func:`workbench.models.scaling.usl_curves` output."""
    ax = new_axes(ax, figsize=(7.5, 4.8))
    for it, g in thr.groupby("iteration", sort=True):
        col = _color(it)
        f = fits.get(_iteration(it))
        lab = f"iteration {it}"
        if f is not None:
            ns = "none" if f.n_star is None else f"{f.n_star:.2g}"
            lab += (f": σ={_g(f.sigma)}, κ={_g(f.kappa)}, N*={ns}, "
                    f"RMS log resid {f.rms_log_resid:.2f}")
        ax.plot(g["cores"], g["throughput_per_s"], "o", color=col, label=lab)
        c = curves[curves["iteration"] == it]
        ax.plot(c["n"], c["throughput_per_s"], "-", color=col, lw=1.3)
    ax.set_yscale("log")
    ax.set_xlabel("cores allocated (as published)")
    ax.set_ylabel("throughput, transfers/s (log scale)")
    ax.set_title("Cores table read as a fixed demand (6320 transfers): throughput and USL fits")
    legend_outside(ax, fontsize=8)
    return ax


@checked
def plot_demand_predictions(pred: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Cores-table times (points) against the grid power law's predictions under the two
    readings (:func:`~workbench.models.scaling.demand_predictions`): dashed = fixed
    demand of 80 clients, solid = 8 × N clients."""
    ax = new_axes(ax, figsize=(7.5, 4.8))
    for it, g in pred.groupby("iteration", sort=True):
        col = _color(it)
        ax.plot(g["cores"], g["time_s"], "o", color=col, label=f"iteration {it}: published")
        ax.plot(g["cores"], g["demand_grows_s"], "-", color=col, lw=1.3)
        ax.plot(g["cores"], g["fixed_demand_s"], "--", color=col, lw=1)
    ax.plot([], [], "-", color="black", label="grid law at 8 × N clients (demand grows)")
    ax.plot([], [], "--", color="black", label="grid law at 80 clients (fixed demand)")
    ax.set_yscale("log")
    ax.set_xlabel("cores allocated (as published)")
    ax.set_ylabel("wall time, s (log scale)")
    ax.set_title("Which demand did the cores table run?")
    legend_outside(ax, fontsize=8)
    return ax


@checked
def plot_loc_bars(loc: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Stacked bars of non-empty lines of code per actor, one bar per iteration."""
    ax = new_axes(ax, figsize=(6.5, 4))
    piv = loc.pivot(index="iteration", columns="actor", values="lines").fillna(0)
    order = [k for k in KIND_COLORS if k in piv.columns] + [c for c in piv.columns if c not in KIND_COLORS]
    bottom = np.zeros(len(piv))
    x = np.arange(len(piv))
    for actor in order:
        v = piv[actor].to_numpy()
        ax.bar(x, v, bottom=bottom, color=KIND_COLORS.get(actor, "#999999"), label=actor, width=0.6)
        for xi, (b, h) in enumerate(zip(bottom, v, strict=True)):
            if h > 0:
                ax.text(xi, b + h / 2, f"{int(h)}", ha="center", va="center", fontsize=8, color="white")
        bottom += v
    for xi, tot in enumerate(bottom):
        ax.text(xi, tot + 2, f"total {int(tot)}", ha="center", fontsize=9)
    ax.set_xticks(x, [f"iteration {i}" for i in piv.index])
    ax.set_ylabel("non-empty lines of code")
    ax.set_ylim(0, bottom.max() * 1.15)
    ax.set_title("Lines of code per actor")
    legend_outside(ax, fontsize=8, title="actor")
    return ax


@checked
def plot_busiest_by_kind(shares: pd.DataFrame, metric: str = "max_work", ax: Axes | None = None,
                    ylabel: str = "work of the busiest actor of the kind", title: str | None = None) -> Axes:
    """Grouped bars: per iteration, the ``metric`` of the busiest actor of each kind
    (rows of :func:`~workbench.models.scaling.kind_shares` for one grid cell and repeat), log y."""
    ax = new_axes(ax, figsize=(8, 4.5))
    kinds = [k for k in KIND_COLORS if k in set(shares["kind"])]
    its = sorted(shares["iteration"].unique())
    width = 0.8 / max(len(kinds), 1)
    for j, kind in enumerate(kinds):
        vals = [shares[(shares["iteration"] == it) & (shares["kind"] == kind)][metric].sum() for it in its]
        xs = np.arange(len(its)) + (j - (len(kinds) - 1) / 2) * width
        ax.bar(xs, [v if v > 0 else np.nan for v in vals], width=width, color=KIND_COLORS[kind], label=kind)
    for i, it in enumerate(its):
        g = shares[shares["iteration"] == it]
        top = g.loc[g[metric].idxmax()]
        ax.text(i, top[metric] * 1.6, f"bottleneck: {top['kind']}", ha="center", fontsize=9, fontweight="bold")
    ax.set_yscale("log")
    ax.set_ylim(top=shares[metric].max() * 8)
    ax.set_xticks(np.arange(len(its)), [f"iteration {i}" for i in its])
    ax.set_ylabel(f"{ylabel} (log scale)")
    ax.set_title(title or f"Busiest actor of each kind: {metric}")
    legend_outside(ax, fontsize=8, ncol=len(kinds))
    return ax


#: old name → new name, for one release
__getattr__ = _moved.forward(__name__)  # old names of 0.1, one release


@checked
def plot_cell_bottlenecks(cells: pd.DataFrame, iteration: int, ax: Axes | None = None) -> Axes:
    """Grid of banks × clients per bank for one iteration, each cell coloured by its bottleneck kind
    (from :func:`workbench.models.scaling.cell_bottlenecks`); unsettled cells are hatched and say so."""
    ax = new_axes(ax, figsize=(5, 4))
    ax.grid(False)
    g = cells[cells["iteration"] == iteration]
    banks = sorted(g["banks"].unique())
    cpb = sorted(g["clients_per_bank"].unique())
    for r in g.itertuples():
        i, j = banks.index(r.banks), cpb.index(r.clients_per_bank)
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=KIND_COLORS.get(str(r.kind), "#555555"),
                               alpha=0.85 if r.settled else 0.35, hatch=None if r.settled else "///",
                               edgecolor="white", lw=1))
        ax.text(j, i, f"{r.kind}\n{r.dominance:.2g}×" + ("" if r.settled else "\nunsettled"),
                ha="center", va="center", fontsize=7)
    ax.set_xlim(-0.5, len(cpb) - 0.5)
    ax.set_ylim(-0.5, len(banks) - 0.5)
    ax.set_xticks(range(len(cpb)), [str(c) for c in cpb])
    ax.set_yticks(range(len(banks)), [str(b) for b in banks])
    ax.set_xlabel("clients per bank")
    ax.set_ylabel("banks")
    ax.set_title(f"Iteration {iteration}: bottleneck kind per cell (lead over other kinds)")
    return ax
