"""Shared figure defaults so every notebook's plots read the same way."""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.text import Text


def new_axes(ax: Axes | None = None, figsize: tuple[float, float] = (7.5, 4.5)) -> Axes:
    """Return ``ax`` or a fresh Axes on a new figure with a light grid."""
    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    ax.grid(True, alpha=0.3)
    return ax


@contextmanager
def layout_paused(fig: Any) -> Iterator[None]:
    """Leave ``fig``'s layout engine out while the block draws: a helper that draws the figure to measure
    its own labels (seaborn's heatmap, to rotate tick labels that overlap) does not lay out every Axes
    each time; the engine is back for the final draw."""
    engine = fig.get_layout_engine()
    if engine is None:
        yield
        return
    fig.set_layout_engine("none")
    try:
        yield
    finally:
        fig.set_layout_engine(engine)


def _free_box(t: Any, renderer: Any, placed: list[Any], up_pt: float) -> Any:
    """Move label ``t`` to ``up_pt`` points above its point; its box there, or None if it overlaps one placed."""
    t.xyann = (0, up_pt)
    t.update_positions(renderer)
    bb = Text.get_window_extent(t, renderer)  # the text alone, not its line back to the point
    return None if any(bb.overlaps(o) for o in placed) else bb


def place_labels(ax: Axes, items: Sequence[tuple[float, float, str]], *, fontsize: float = 8,
                 color: str = "black", boxed: bool = False, pad_px: float = 2.0) -> list[Text]:
    """Write each ``(x, y, text)`` label (data coordinates) where it overlaps no label placed before it.

    A label that would collide, or fall outside the figure, is moved up by its own height (then down,
    then further, as far as the labels before it could stack) until it is free and inside the figure
    (none inside: the first free place), with a thin line back to its point. Call it last, once the Axes has its limits, scales and
    legend: the layout is computed once before the labels are measured.
    """
    fig = ax.get_figure(root=True)
    assert fig is not None
    engine = fig.get_layout_engine()
    if engine is not None:  # the Axes' final place: the layout alone, not a whole draw
        engine.execute(fig)
    ax.get_xlim(), ax.get_ylim()  # autoscaled limits, as a draw would settle them
    renderer = fig._get_renderer()  # type: ignore[attr-defined]  # (any canvas, as layout engines take it)
    placed: list[Any] = []
    out: list[Text] = []
    box = {"boxstyle": "round,pad=0.2", "fc": "white", "ec": "0.7", "alpha": 0.9} if boxed else None
    line = {"arrowstyle": "-", "color": "0.6", "lw": 0.6, "shrinkA": 0, "shrinkB": 0}
    for x, y, text in items:
        t = ax.annotate(text, (x, y), xytext=(0, 4), textcoords="offset points", ha="center", va="bottom",
                        fontsize=fontsize, color=color, bbox=box, annotation_clip=False, arrowprops=line)
        t.set_in_layout(False)
        t.update_positions(renderer)
        height_pt = (Text.get_window_extent(t, renderer).height + pad_px) * 72 / fig.dpi

        # the nearest free place inside the figure: first these, then further out, up and down, as far as
        # every label placed so far could stack (one of those is free); none inside: the first free one
        near = (0, 1, -1, 2, -2, 3, 4, 5, 6)
        further = (v for k in range(3, len(placed) + 8) for v in (k + 4, -k))
        inside = first_free = None
        for s in (*near, *further):
            bb = _free_box(t, renderer, placed, 4 + s * height_pt)
            if bb is None:
                continue
            if fig.bbox.x0 <= bb.x0 and bb.x1 <= fig.bbox.x1 and fig.bbox.y0 <= bb.y0 and bb.y1 <= fig.bbox.y1:
                inside = s
                break
            first_free = s if first_free is None else first_free
        step = next((s for s in (inside, first_free) if s is not None), near[-1])
        _free_box(t, renderer, placed, 4 + step * height_pt)
        placed.append(Text.get_window_extent(t, renderer).padded(pad_px))
        out.append(t)
    return out


#: legend entries are wrapped to this many characters a line, so an outside legend stays in the figure
LEGEND_CHARS = 30


def legend_outside(ax: Axes, **kw: Any) -> None:
    """The legend to the right of the Axes, where it hides no data; long entries wrapped."""
    import textwrap

    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    labels = [textwrap.fill(label, LEGEND_CHARS) for label in labels]
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
              **{"fontsize": "small", **kw})
