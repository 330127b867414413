"""Figures nobody can read are bugs: find overlapping labels and labels that leave the figure.

:func:`layout_problems` draws a figure and returns, in words, every pair of
visible text artists (titles, axis and tick labels, annotations, legend
entries) whose boxes overlap, every text that leaves the figure, and every
legend that covers plotted data. :func:`checked` wraps a ``plot_*``
function so that, when ``WORKBENCH_CHECK_FIGURES=1`` (set by the test suite),
each figure it draws is checked on return and a :class:`FigureLayoutError`
names the problems. Whatever the setting, titles wider than their Axes are
wrapped (:func:`wrap_titles`).
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar, cast

from matplotlib.layout_engine import LayoutEngine

from ..errors import WorkbenchError

__all__ = ["FigureLayoutError", "checked", "layout_problems", "wrap_titles"]

F = TypeVar("F", bound=Callable[..., Any])

#: overlaps smaller than this many pixels (at 100 dpi) in both directions are rounding, not collisions
SLACK_PX = 1.0


class FigureLayoutError(WorkbenchError):
    """A figure has labels that overlap or leave it."""


def _drawn_texts(fig: Any) -> list[Any]:
    """Draw ``fig`` and return the texts actually drawn (tick labels beyond the axis limits are not)."""
    from matplotlib.text import Text

    drawn: list[Any] = []
    original = Text.draw

    def draw(self: Any, renderer: Any) -> None:
        original(self, renderer)
        if self.get_visible() and self.get_text().strip() and self not in drawn:
            drawn.append(self)

    Text.draw = draw  # type: ignore[method-assign]
    try:
        fig.canvas.draw()
    finally:
        Text.draw = original  # type: ignore[method-assign]
    return drawn


def _label(t: Any) -> str:
    text = t.get_text().replace("\n", " ")
    return repr(text if len(text) <= 40 else text[:37] + "…")


def _shrunk(bb: Any) -> Any:
    from matplotlib.transforms import Bbox

    return Bbox.from_extents(bb.x0 + SLACK_PX, bb.y0 + SLACK_PX, bb.x1 - SLACK_PX, bb.y1 - SLACK_PX)


def layout_problems(fig: Any) -> list[str]:
    """Every readability problem of ``fig``, in words (empty when it is fine).

    Checks: two visible texts whose boxes overlap; a text partly outside the
    figure; a legend drawn over the axes that covers a plotted point.
    """
    texts = _drawn_texts(fig)
    renderer = fig._get_renderer()
    fig_box = fig.bbox
    from matplotlib.text import Text

    # the text alone: an annotation's extent would include its arrow back to the point
    boxes = [(t, _shrunk(Text.get_window_extent(t, renderer))) for t in texts]
    problems: list[str] = []
    for t, bb in boxes:
        if bb.x0 < fig_box.x0 - SLACK_PX or bb.y0 < fig_box.y0 - SLACK_PX or \
                bb.x1 > fig_box.x1 + SLACK_PX or bb.y1 > fig_box.y1 + SLACK_PX:
            problems.append(f"{_label(t)} leaves the figure")
    for i in range(len(boxes)):
        ti, bi = boxes[i]
        for j in range(i + 1, len(boxes)):
            tj, bj = boxes[j]
            if bi.width > 0 and bj.width > 0 and bi.overlaps(bj):
                problems.append(f"{_label(ti)} overlaps {_label(tj)}")
    problems += _legends_over_data(fig, renderer)
    return problems


def _legends_over_data(fig: Any, renderer: Any) -> list[str]:
    """Legends inside an Axes that hide a plotted point of a line or a scatter."""
    import numpy as np
    from matplotlib.collections import PathCollection
    from matplotlib.lines import Line2D

    out = []
    for ax in fig.axes:
        leg = ax.get_legend()
        if leg is None or not leg.get_visible():
            continue
        box = _shrunk(leg.get_window_extent(renderer))
        hidden = 0
        for artist in ax.get_children():
            if isinstance(artist, Line2D) and artist.get_visible() and not str(artist.get_label()).startswith("_"):
                xy = artist.get_xydata()
            elif isinstance(artist, PathCollection) and artist.get_visible():
                xy = artist.get_offsets()
            else:
                continue
            xy = np.asarray(xy, dtype=float)
            if xy.ndim != 2 or not len(xy):
                continue
            xy = xy[np.isfinite(xy).all(axis=1)]
            pts = artist.get_transform().transform(xy) if len(xy) else xy
            area = ax.bbox  # only points drawn inside the Axes can be hidden
            shown = ((pts[:, 0] >= area.x0) & (pts[:, 0] <= area.x1) & (pts[:, 1] >= area.y0) & (pts[:, 1] <= area.y1))
            inside = shown & ((pts[:, 0] > box.x0) & (pts[:, 0] < box.x1) & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1))
            hidden += int(inside.sum())
        if hidden:
            out.append(f"the legend of {_label(ax.title) if ax.get_title() else 'an Axes'} hides {hidden} plotted point(s)")
    return out


def checked(func: F) -> F:
    """Check the figure ``func`` drew when ``WORKBENCH_CHECK_FIGURES=1``; raise :class:`FigureLayoutError`."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = func(*args, **kwargs)
        fig = _figure_of(result)
        if fig is not None:
            wrap_titles(fig)
        if os.environ.get("WORKBENCH_CHECK_FIGURES") == "1":
            if fig is not None:
                problems = layout_problems(fig)
                if problems:
                    raise FigureLayoutError(f"{func.__qualname__}: " + "; ".join(problems))
        return result

    wrapper.__workbench_checked__ = True  # type: ignore[attr-defined]
    return cast(F, wrapper)


def wrap_titles(fig: Any) -> None:
    """Break every Axes title that is wider than its Axes onto more lines (at word boundaries).

    With a layout engine the titles are measured where the figure's layout puts
    the Axes, when it is laid out (each draw, so a later change to the figure is
    seen too): the engine is wrapped in one that lays out, wraps, and lays out
    again only if a title changed. Without one, the titles are wrapped now.
    """
    engine = fig.get_layout_engine()
    if engine is None:
        _wrap_now(fig)
    elif not isinstance(engine, _TitleWrapping):
        fig.set_layout_engine(_TitleWrapping(engine))


def _wrap_now(fig: Any) -> bool:
    """Wrap the titles wider than their Axes as the Axes stand; whether any changed."""
    import textwrap

    # the renderer of whatever canvas draws the figure (a savefig to SVG or PDF swaps the canvas in), as
    # matplotlib's own layout engines take it
    renderer = fig._get_renderer()
    changed = False
    for ax in fig.axes:
        title = ax.title
        text = title.get_text()
        if not text or not ax.get_visible():
            continue
        width = title.get_window_extent(renderer).width
        room = ax.get_window_extent(renderer).width
        if width <= room or width == 0:
            continue
        lines = text.split("\n")
        chars = max(len(line) for line in lines)
        per_line = max(12, int(chars * room / width * 0.95))
        wrapped = "\n".join(textwrap.fill(line, per_line) for line in lines)
        if wrapped != text:
            title.set_text(wrapped)
            changed = True
    return changed


class _TitleWrapping(LayoutEngine):
    """A figure's layout engine, then its too-wide titles wrapped, then the layout again if one was."""

    def __init__(self, inner: LayoutEngine) -> None:
        super().__init__()
        self.inner = inner
        self._adjust_compatible = inner.adjust_compatible
        self._colorbar_gridspec = inner.colorbar_gridspec

    def set(self, **kwargs: Any) -> None:
        self.inner.set(**kwargs)

    def get(self) -> dict[str, Any]:
        return dict(self.inner.get())

    def execute(self, fig: Any) -> None:
        self.inner.execute(fig)
        if _wrap_now(fig):
            self.inner.execute(fig)


def _figure_of(result: Any) -> Any:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    if isinstance(result, Figure):
        return result
    if isinstance(result, Axes):
        return result.get_figure(root=True)
    if isinstance(result, tuple | list):
        for r in result:
            fig = _figure_of(r)
            if fig is not None:
                return fig
    return None
