"""Figures of the IO-counter investigation: each takes analysis results and returns the Axes.

Inputs come from :mod:`workbench.counters.analysis` (and the readahead lab).
The names before ``plot_`` was added (``interface_bytes``, ``node_rates``, …)
still work for one release, with a DeprecationWarning.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from .. import _moved
from .check import checked
from .style import legend_outside, new_axes

if TYPE_CHECKING:
    from ..counters.analysis import NodePrediction, Reconciliation

__all__ = [
    "plot_attribution",
    "plot_demand_vs_fetch",
    "plot_interface_bytes",
    "plot_node_rates",
    "plot_probe_pages",
    "plot_rates_over_time",
    "plot_reconciliation",
    "plot_size_histogram",
]

MIB = 2**20


@checked
def plot_interface_bytes(ratios: pd.DataFrame, ax: Axes | None = None, what: str = "cumulative") -> Axes:
    """Private (storage) vs public (client) received bytes per host, log scale, ratio on top.

    ``ratios`` is :func:`workbench.counters.analysis.interface_ratios` output.
    """
    ax = new_axes(ax)
    r = ratios[ratios["host"] != "all"]
    x = np.arange(len(r))
    ax.bar(x - 0.2, r["private_rx_bytes"] / 2**30, 0.4, label="private (storage) rx")
    ax.bar(x + 0.2, r["public_rx_bytes"] / 2**30, 0.4, label="public (client) rx")
    for xi, v, t in zip(x, r["private_rx_bytes"] / 2**30, r["private_over_public_rx"], strict=True):
        ax.annotate(f"×{t:.1f}", (xi - 0.2, v), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, r["host"])
    ax.set_yscale("log")
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi * 2.0)
    ax.set_ylabel("received, GiB (log)")
    ax.set_title(f"Private (storage) vs public (client) received bytes per host ({what})")
    legend_outside(ax)
    return ax


@checked
def plot_rates_over_time(d: pd.DataFrame, ax: Axes | None = None, title: str = "") -> Axes:
    """Rate per host over time (MiB/s) from delta rows of one counter; resets marked with ×."""
    ax = new_axes(ax)
    origin = d["start_timestamp"].min()
    for host, g in d.groupby("host"):
        g = g.sort_values("timestamp")
        edges = np.concatenate([[g["start_timestamp"].iloc[0]], g["timestamp"].to_numpy()])
        art = ax.stairs(g["rate_per_s"].to_numpy() / MIB, (edges - origin) / 60, label=host, lw=1.8, baseline=None)
        ev = g[g["event"] != ""]
        if len(ev):
            mid = ((ev["start_timestamp"] + ev["timestamp"]) / 2 - origin) / 60
            ax.scatter(mid, ev["rate_per_s"] / MIB, marker="x", s=80, color=art.get_edgecolor(), zorder=3,
                       label=f"{host}: counter reset (delta from zero)")
    ax.set_yscale("log")
    ax.set_xlabel("minutes since the first snapshot")
    ax.set_ylabel("read rate, MiB/s (log)")
    ax.set_title(title or "Per-interval rate of the anchor counter")
    legend_outside(ax, fontsize=7, ncol=2)
    return ax


@checked
def plot_demand_vs_fetch(dvf: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Demand vs fetched bytes per file (log-log), coloured by cache-hit %; the line is fetch = demand.

    ``dvf`` is :func:`workbench.counters.analysis.demand_vs_fetch` output.
    """
    ax = new_axes(ax)
    d = dvf[(dvf["demand_bytes"] > 0) & (dvf["fetched_bytes"] > 0)]
    y = d["fetched_bytes"] / 1024
    x = d["demand_bytes"] / 1024
    sc = ax.scatter(x, y, c=d["cache_hit_pct"], cmap="viridis", vmin=0, vmax=100, s=14, alpha=0.8)
    lo, hi = min(x.min(), y.min()), max(x.max(), y.max())
    zero = dvf[(dvf["demand_bytes"] > 0) & (dvf["fetched_bytes"] == 0)]
    if len(zero):
        ax.scatter(zero["demand_bytes"] / 1024, np.full(len(zero), lo / 2), marker="v", color="grey", s=18,
                   label=f"{len(zero)} files never fetched (all reads hit the cache)")
    ax.plot([lo, hi], [lo, hi], color="grey", ls="--", lw=1, label="fetched = demanded")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("demanded by the application (ceph_read_iter), KiB (log)")
    ax.set_ylabel("fetched from OSDs (readahead), KiB (log)")
    ax.set_title("Demand vs fetch per file")
    plt.colorbar(sc, ax=ax, label="cache-hit %")
    big = d.nlargest(1, "demand_bytes")
    for key, demand, fetched in zip(big["key"], big["demand_bytes"].to_numpy(float),
                                    big["fetched_bytes"].to_numpy(float), strict=True):
        ax.annotate(str(key).rsplit("/", 1)[-1], (demand / 1024, max(fetched, 1024) / 1024),
                    fontsize=8, xytext=(-60, 10), textcoords="offset points", arrowprops={"arrowstyle": "-"})
    legend_outside(ax)
    return ax


@checked
def plot_size_histogram(hists: pd.DataFrame, map_name: str, ax: Axes | None = None, unit: str = "bytes") -> Axes:
    """A bpftrace histogram (one map) as bars over log2 buckets."""
    ax = new_axes(ax)
    h = hists[hists["map"] == map_name].reset_index(drop=True)
    nz = h.index[h["count"] > 0]
    if len(nz):
        h = h.loc[nz.min():nz.max()]
    labels = [_fmt_bytes(lo) for lo in h["lo"]]
    ax.bar(range(len(h)), h["count"].where(h["count"] > 0))
    ax.set_xticks(range(len(h)), labels, rotation=45, ha="right")
    ax.set_yscale("log")
    ax.set_xlabel(f"bucket lower bound ({unit}, log2 buckets)")
    ax.set_ylabel("events (log)")
    ax.set_title(f"{map_name}: size of each fetch")
    return ax


def _fmt_bytes(v: float) -> str:
    if not math.isfinite(v):
        return str(v)
    for suf, p in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if v >= 2**p:
            return f"{v / 2**p:g} {suf}"
    return f"{v:g} B"


@checked
def plot_attribution(table: pd.DataFrame, ax: Axes | None = None, title: str = "") -> Axes:
    """Share of fetched bytes per category (horizontal bars), titled as a hypothesis."""
    ax = new_axes(ax, figsize=(7.5, 3.5))
    t = table.iloc[::-1]
    ax.barh(t["category"], t["share_pct"], color="#8a8")
    for y, v in enumerate(t["share_pct"]):
        ax.annotate(f"{v:.0f} %", (v, y), va="center", xytext=(3, 0), textcoords="offset points", fontsize=8)
    ax.set_xlabel("share of fetched bytes, %")
    ax.set_title(title or "Attribution by path (a hypothesis, not a measurement)")
    return ax


@checked
def plot_node_rates(pred: NodePrediction, ax: Axes | None = None) -> Axes:
    """Read rate vs request rate per node, coloured by the attribute; arrows to the predicted rate.

    ``pred`` is :func:`workbench.counters.analysis.node_rates` output.
    """
    ax = new_axes(ax)
    t = pred.table
    for state, g in t.groupby(pred.attribute):
        ax.scatter(g["requests_per_s"], g["read_bytes_per_s"] / MIB, s=60, label=f"{pred.attribute} = {state}")
        for host, req, rate in zip(g["host"], g["requests_per_s"].to_numpy(float),
                                   g["read_bytes_per_s"].to_numpy(float), strict=True):
            ax.annotate(str(host), (req, rate / MIB), fontsize=8, xytext=(4, 4), textcoords="offset points")
    moving = t[t[pred.attribute] != pred.baseline_state]
    for req, predicted, rate in zip(moving["requests_per_s"].to_numpy(float),
                                    moving["predicted_read_bytes_per_s"].to_numpy(float),
                                    moving["read_bytes_per_s"].to_numpy(float), strict=True):
        ax.annotate("", (req, predicted / MIB), (req, rate / MIB), arrowprops={"arrowstyle": "->", "color": "grey"})
    xs = np.linspace(t["requests_per_s"].min() * 0.8, t["requests_per_s"].max() * 1.1, 10)
    ax.plot(xs, xs * pred.baseline_bytes_per_request / MIB, ls="--", color="grey",
            label=f"baseline {pred.baseline_bytes_per_request / MIB:.2f} MiB/request")
    ax.set_yscale("log")
    ax.set_xlabel("requests/s")
    ax.set_ylabel("CephFS read rate, MiB/s (log)")
    ax.set_title(f"Read rate vs request rate per node, by {pred.attribute} (arrows: prediction)")
    legend_outside(ax, fontsize=8)
    return ax


@checked
def plot_reconciliation(rec: Reconciliation, ax: Axes | None = None) -> Axes:
    """Each instrument's ratio to the anchor (log scale) with the tolerance band.

    ``rec`` is a :class:`workbench.counters.analysis.Reconciliation`.
    """
    ax = new_axes(ax, figsize=(7.5, 3.5))
    t = rec.table
    colors = ["#3a7" if a else "#c33" for a in t["agrees"]]
    ax.barh(t["instrument"], t["ratio_to_anchor"], color=colors)
    ax.axvspan(1 - rec.tolerance, 1 + rec.tolerance, color="grey", alpha=0.2,
               label=f"anchor ± {rec.tolerance:.0%}")
    ax.axvline(1, color="k", lw=1)
    for y, (v, txt) in enumerate(zip(t["ratio_to_anchor"], t["verdict"], strict=True)):
        ax.annotate(txt, (v, y), va="center", xytext=(4, 0), textcoords="offset points", fontsize=8)
    ax.set_xscale("log")
    ax.set_xlim(min(0.01, t["ratio_to_anchor"].min() / 2), 20)
    ax.set_xlabel(f"bytes ÷ anchor ({rec.anchor}), log")
    ax.set_title("Instruments against the anchor: red disagrees")
    legend_outside(ax, fontsize=8)
    return ax


@checked
def plot_probe_pages(breakdown: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Pages pulled per tiny read by advice, split by file kind and position."""
    ax = new_axes(ax)
    b = breakdown.copy()
    b["group"] = b["file_kind"] + " / " + b["position"]
    piv = b.pivot(index="group", columns="advice", values="pages_per_read")
    n = len(piv.columns)
    x = np.arange(len(piv))
    for i, adv in enumerate(piv.columns):
        ax.bar(x + (i - (n - 1) / 2) * 0.8 / n, piv[adv], 0.8 / n, label=adv)
    ax.set_xticks(x, piv.index)
    ax.set_ylabel("pages pulled into the page cache per read")
    ax.set_title("Pages pulled into the page cache per tiny read, by fadvise advice")
    legend_outside(ax, title="posix_fadvise")
    return ax


#: old name → new name, for one release
__getattr__ = _moved.forward(__name__)  # old names of 0.1, one release
