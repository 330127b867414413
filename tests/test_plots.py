"""Plot modules: every figure function is named plot_*, old names forward with a warning, figures draw results."""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

import workbench.plots as plots_pkg  # noqa: E402
from workbench.plots import counters as pc  # noqa: E402
from workbench.plots import scaling as ps  # noqa: E402
from workbench.plots import stalls as pst  # noqa: E402

PLOT_MODULES = [importlib.import_module(f"workbench.plots.{m.name}")
                for m in pkgutil.iter_modules(plots_pkg.__path__)
                if not m.name.startswith("_") and m.name not in ("style", "check")]

OLD_NAMES = {
    pc: {"interface_bytes": "plot_interface_bytes", "rates_over_time": "plot_rates_over_time",
         "demand_vs_fetch": "plot_demand_vs_fetch", "size_histogram": "plot_size_histogram",
         "attribution": "plot_attribution", "node_rates": "plot_node_rates",
         "reconciliation": "plot_reconciliation", "probe_pages": "plot_probe_pages"},
    ps: {"time_heatmap": "plot_time_heatmap", "loglog_fits": "plot_loglog_fits",
         "speedup_heatmap": "plot_speedup_heatmap", "ratio_intervals": "plot_ratio_intervals",
         "usl_plot": "plot_usl", "demand_plot": "plot_demand_predictions", "loc_bars": "plot_loc_bars",
         "busiest_by_kind": "plot_busiest_by_kind"},
}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _public_functions(mod):
    return {n: f for n, f in vars(mod).items()
            if inspect.isfunction(f) and f.__module__ == mod.__name__ and not n.startswith("_")}


def test_every_plot_function_is_named_plot_and_fully_typed() -> None:
    assert {m.__name__.rsplit(".", 1)[1] for m in PLOT_MODULES} >= {"counters", "latency", "scaling", "stalls",
                                                                   "yields"}
    for mod in PLOT_MODULES:
        funcs = _public_functions(mod)
        assert funcs, mod.__name__
        for name, f in funcs.items():
            assert name.startswith("plot_"), f"{mod.__name__}.{name}"
            sig = inspect.signature(f)
            assert sig.return_annotation == "Axes", f"{mod.__name__}.{name} returns {sig.return_annotation}"
            untyped = [p for p in sig.parameters.values() if p.annotation is inspect.Parameter.empty]
            assert not untyped, f"{mod.__name__}.{name}: untyped {untyped}"
            assert "object" not in {str(p.annotation) for p in sig.parameters.values()}, name
            assert "ax" in sig.parameters, name
        if hasattr(mod, "__all__"):
            assert set(mod.__all__) == set(funcs), mod.__name__


def test_plot_names_are_unique_across_modules() -> None:
    seen: dict[str, str] = {}
    for mod in PLOT_MODULES:
        for name in _public_functions(mod):
            assert name not in seen, f"{name} in {seen.get(name)} and {mod.__name__}"
            seen[name] = mod.__name__


@pytest.mark.parametrize("mod", [pc, ps], ids=["counters", "scaling"])
def test_old_names_forward_with_a_deprecation_warning(mod) -> None:
    from workbench import _moved

    assert {old: new.split(":")[1] for old, new in _moved.NAMES[mod.__name__].items()} == OLD_NAMES[mod]
    for old, new in OLD_NAMES[mod].items():
        with pytest.warns(DeprecationWarning, match=rf"{mod.__name__}\.{old} is now {mod.__name__}\.{new}"):
            assert getattr(mod, old) is getattr(mod, new)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mod.__dict__.get(next(iter(OLD_NAMES[mod]))) is None  # not defined, only forwarded
        with pytest.raises(AttributeError, match="has no attribute 'nope'"):
            mod.nope  # noqa: B018


def test_old_name_works_in_a_from_import() -> None:
    with pytest.warns(DeprecationWarning, match="usl_plot is now"):
        from workbench.plots.scaling import usl_plot
    assert usl_plot is ps.plot_usl


def test_stall_test_figure_draws_the_result() -> None:
    from workbench.models.stalls import global_stall_test

    rng = np.random.default_rng(0)
    steps_ms = np.array([0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0])
    rows = [(r, s, ms * rng.lognormal(0, 0.1) / 1e3 + 0.03 * rng.poisson(10.0 * ms / 1e3))
            for r in range(300) for s, ms in enumerate(steps_ms, 1)]
    result = global_stall_test(pd.DataFrame(rows, columns=["request", "step", "duration_s"]), n_resamples=200)
    ax = pst.plot_stall_test(result)
    assert isinstance(ax, Axes)
    assert result.verdict in ax.get_title()
    assert len(ax.texts) == len(steps_ms)  # each step annotated with its number
    assert ax.get_legend() is not None


def test_stall_test_labels_stay_apart_once_the_fit_and_legend_are_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Steps bunched far from 0 ms: the fit line (drawn from 0) and the legend squeeze them together, so
    their labels are placed after both (a live run of notebook 01 had two labels overlap)."""
    from workbench.models.stalls import global_stall_test
    from workbench.plots.check import FigureLayoutError

    monkeypatch.setenv("WORKBENCH_CHECK_FIGURES", "1")
    for seed in range(8):
        rng = np.random.default_rng(seed)
        base = rng.uniform(2, 40)
        steps_ms = base + np.sort(rng.uniform(0, base * 0.3, 15))
        rate = rng.uniform(0, 20)
        rows = [(r, s, ms * rng.lognormal(0, 0.05) / 1e3 + 0.03 * rng.poisson(rate * ms / 1e3))
                for r in range(100) for s, ms in enumerate(steps_ms, 1)]
        result = global_stall_test(pd.DataFrame(rows, columns=["request", "step", "duration_s"]), n_resamples=50)
        try:
            ax = pst.plot_stall_test(result)
        except FigureLayoutError as exc:
            pytest.fail(f"seed {seed}: {exc}")
        assert len(ax.texts) == 15
        plt.close(ax.get_figure(root=True))


def test_node_rates_and_reconciliation_figures_draw_the_results() -> None:
    from workbench.counters.analysis import node_rates, reconcile

    hosts = ["fe01", "fe02", "fe03", "fe04"]
    read = pd.Series([40e9, 42e9, 5e9, 4e9], index=hosts)
    reqs = pd.Series([1e5, 1.1e5, 1.2e5, 0.9e5], index=hosts)
    attrs = pd.DataFrame({"host": hosts, "kernel": ["old", "old", "new", "new"]})
    pred = node_rates(read, reqs, 600.0, attrs, "kernel", "new")
    ax = pc.plot_node_rates(pred)
    assert isinstance(ax, Axes)
    assert {t.get_text() for t in ax.texts} >= set(hosts)
    assert "by kernel" in ax.get_title()
    rec = reconcile(100e9, {"bpftrace": 99e9, "net rx": 20e9}, tolerance=0.05)
    ax = pc.plot_reconciliation(rec)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(rec.table["instrument"])


@pytest.mark.parametrize("layout", ["constrained", None])
def test_placed_labels_stay_apart_where_the_final_draw_puts_them(layout) -> None:
    """Labels are placed against the laid-out Axes (layout alone, no whole draw): after the final draw
    they are where they were measured, and no two overlap."""
    from matplotlib.text import Text

    from workbench.plots.style import place_labels

    fig, axes = plt.subplots(1, 2, figsize=(6, 3), layout=layout)
    x = np.linspace(1, 100, 400)
    axes[0].plot(x, np.log(x))
    axes[1].plot(x, x ** 2)
    axes[1].set_xscale("log")
    axes[1].set_title("a title long enough to need the layout engine to make room for it")
    axes[1].set_ylabel("a y label\non two lines")
    items = [(v, float(v) ** 2, f"{v:.0f} ms\n(n={i})") for i, v in enumerate([10, 11, 12, 13, 50, 51])]
    texts = place_labels(axes[1], items)
    renderer = fig.canvas.get_renderer()
    measured = [Text.get_window_extent(t, renderer).bounds for t in texts]  # the text, not its line back
    fig.canvas.draw()
    drawn = [Text.get_window_extent(t, renderer) for t in texts]
    assert np.allclose([b.bounds for b in drawn], measured, atol=0.5), (measured, [b.bounds for b in drawn])
    for i, a in enumerate(drawn):
        for b in drawn[i + 1:]:
            inner = a.intersection(a, b)
            assert inner is None or inner.width < 1 or inner.height < 1, (a, b)
    plt.close(fig)


@pytest.mark.parametrize("layout", ["constrained", None])
def test_a_title_wider_than_its_axes_is_wrapped_where_the_layout_puts_the_axes(layout) -> None:
    from workbench.plots.check import wrap_titles

    long = "a title that is much too long for the narrow Axes it sits on, so it must be broken onto lines"
    fig, axes = plt.subplots(1, 3, figsize=(7, 2.5), layout=layout)
    axes[0].set_title(long)
    axes[1].set_title("short")
    axes[2].set_title(long)
    axes[2].set_ylabel("a label that takes room")
    wrap_titles(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert axes[1].get_title() == "short"
    for ax in (axes[0], axes[2]):
        assert "\n" in ax.get_title() and ax.get_title().replace("\n", " ") == long
        assert ax.title.get_window_extent(renderer).width <= ax.get_window_extent(renderer).width
    if layout is not None:  # the figure's own engine still lays it out, its settings reachable
        fig.get_layout_engine().set(w_pad=0.1)
        assert fig.get_layout_engine().get()["w_pad"] == 0.1
        fig.canvas.draw()
    plt.close(fig)


@pytest.mark.parametrize("fmt", ["svg", "pdf", "png"])
def test_titles_are_wrapped_when_the_figure_is_saved_in_any_format(fmt) -> None:
    """Saving swaps in the format's own canvas (SVG, PDF): the wrapping layout measures with its renderer."""
    import io

    from workbench.plots.check import wrap_titles

    long = "a title that is much too long for the narrow Axes it sits on, so it must be broken onto lines"
    fig, ax = plt.subplots(figsize=(3, 2.5), layout="constrained")
    ax.set_title(long)
    wrap_titles(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt)
    assert buf.getbuffer().nbytes > 0
    assert "\n" in ax.get_title() and ax.get_title().replace("\n", " ") == long
    plt.close(fig)


def test_labels_crowded_on_one_point_all_find_a_free_place() -> None:
    """Twenty labels on nearly the same point: more than the nine nearest places; none may overlap."""
    from matplotlib.text import Text

    from workbench.plots.style import place_labels

    fig, ax = plt.subplots(figsize=(6, 6), layout="constrained")
    ax.plot([0, 10], [0, 10])
    texts = place_labels(ax, [(5 + 0.01 * i, 5.0, str(i)) for i in range(20)])
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [Text.get_window_extent(t, renderer) for t in texts]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            inner = a.intersection(a, b)
            assert inner is None or inner.width < 1 or inner.height < 1, (a, b)
        assert fig.bbox.y0 <= a.y0 and a.y1 <= fig.bbox.y1 and fig.bbox.x0 <= a.x0 and a.x1 <= fig.bbox.x1
    plt.close(fig)


def test_labels_on_points_at_the_figure_edge_stay_inside_the_figure() -> None:
    """Points on the top edge of an Axes that fills the figure: their labels go below rather than off it."""
    from matplotlib.text import Text

    from workbench.plots.style import place_labels

    fig, ax = plt.subplots(figsize=(4, 3))
    fig.subplots_adjust(left=0.1, right=0.9, bottom=0.1, top=0.99)
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    texts = place_labels(ax, [(2 + 0.3 * i, 10.0, f"{i} ms") for i in range(5)] + [(5.0, 0.2, "low")])
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [Text.get_window_extent(t, renderer) for t in texts]
    for i, a in enumerate(boxes):
        assert fig.bbox.y0 <= a.y0 and a.y1 <= fig.bbox.y1 and fig.bbox.x0 <= a.x0 and a.x1 <= fig.bbox.x1, i
        for b in boxes[i + 1:]:
            inner = a.intersection(a, b)
            assert inner is None or inner.width < 1 or inner.height < 1, (a, b)
    assert boxes[0].y1 < ax.get_window_extent(renderer).y1  # (the first went below its point, not above)
    plt.close(fig)
