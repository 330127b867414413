"""The figure check finds what makes a figure unreadable, and nothing else."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from workbench.errors import WorkbenchError  # noqa: E402
from workbench.plots.check import FigureLayoutError, checked, layout_problems  # noqa: E402


def test_overlapping_labels_are_named() -> None:
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1])
    ax.text(0.5, 0.5, "254 ms (n=10)")
    ax.text(0.52, 0.5, "505 ms (n=10)")
    assert layout_problems(fig) == ["'254 ms (n=10)' overlaps '505 ms (n=10)'"]
    plt.close(fig)


def test_a_clean_figure_has_no_problem_even_with_ticks_beyond_its_limits() -> None:
    fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    ax.plot([1, 10, 100], [3, 2, 1], label="a line")
    ax.set_xscale("log")
    ax.set_title("a title")
    ax.set_xlabel("x")
    ax.legend(loc="upper right")
    assert layout_problems(fig) == []
    plt.close(fig)


def test_text_leaving_the_figure_and_legend_over_data() -> None:
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([i / 20 for i in range(21)], [0.95] * 21, "o-", label="points under the legend")
    ax.set_ylim(0, 1)
    ax.legend(loc="upper left")
    fig.text(0.95, 0.5, "far too long a label for this place")
    problems = layout_problems(fig)
    assert "'far too long a label for this place' leaves the figure" in problems
    assert any("legend" in p and "plotted point" in p for p in problems), problems
    plt.close(fig)


def test_checked_plots_raise_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    @checked
    def plot_bad() -> object:
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.text(0.1, 0.1, "one label")
        ax.text(0.12, 0.1, "another label")
        return ax

    monkeypatch.delenv("WORKBENCH_CHECK_FIGURES", raising=False)
    plt.close(plot_bad().figure)
    monkeypatch.setenv("WORKBENCH_CHECK_FIGURES", "1")
    with pytest.raises(FigureLayoutError, match="plot_bad.*'one label' overlaps 'another label'") as info:
        plot_bad()
    assert isinstance(info.value, WorkbenchError)
    plt.close("all")


def test_every_public_plot_function_is_checked() -> None:
    import importlib
    import inspect
    import pkgutil

    import workbench.plots as plots

    unchecked = []
    for info in pkgutil.iter_modules(plots.__path__):
        mod = importlib.import_module(f"workbench.plots.{info.name}")
        for name, fn in inspect.getmembers(mod, inspect.isfunction):
            if name.startswith("plot_") and fn.__module__ == mod.__name__ and \
                    not getattr(fn, "__workbench_checked__", False):
                unchecked.append(f"{info.name}.{name}")
    assert unchecked == []
