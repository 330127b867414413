"""Shared figure defaults so every notebook's plots read the same way."""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.axes import Axes


def new_axes(ax: Axes | None = None, figsize: tuple[float, float] = (7.5, 4.5)) -> Axes:
    """Return ``ax`` or a fresh Axes on a new figure with a light grid."""
    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    ax.grid(True, alpha=0.3)
    return ax
