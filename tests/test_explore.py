"""Explorers: the widget logic is a plain function of the controls, tested without a browser."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from workbench import explore  # noqa: E402
from workbench.errors import UsageError  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def nagle() -> pd.DataFrame:
    from workbench.latency import read_latency

    f = read_latency(ROOT / "data/02_low_qps_nagle/nagle_samples.csv")
    return f[f["phase"] == "sweep"]


def test_latency_view_follows_the_controls(nagle: pd.DataFrame) -> None:
    ex = explore.LatencyExplorer(nagle, condition="rate_per_s")
    assert ex.conditions[0] != ex.conditions[-1]
    low, high = sorted(ex.conditions, key=float)[0], sorted(ex.conditions, key=float)[-1]
    v = ex.view(q=99, threshold_ms=10, a=low, b=high)
    t = v.table.set_index("condition")
    assert list(t.index) == [low, high] and "p99_ms" in t.columns
    assert t.loc[low, "p99_ms"] > t.loc[high, "p99_ms"]  # the Nagle stall at low rate
    assert t.loc[low, "p99_low_ms"] <= t.loc[low, "p99_ms"] <= t.loc[low, "p99_high_ms"]
    v50 = ex.view(q=50, threshold_ms=10, a=low, b=high)
    assert v50.table.set_index("condition").loc[low, "p50_ms"] < t.loc[low, "p99_ms"]
    lax = ex.view(q=99, threshold_ms=1000, a=low, b=high).table.set_index("condition")
    assert lax.loc[low, "over_threshold"] < t.loc[low, "over_threshold"]
    assert "÷" in v.text and "Modes at" in v.text
    assert len(v.figure.axes[0].get_lines()) >= 2
    with pytest.raises(UsageError):
        ex.view(q=120)
    with pytest.raises(UsageError, match="not in"):
        ex.view(a="no such rate")


def test_time_window_narrows_the_samples(nagle: pd.DataFrame) -> None:
    ex = explore.LatencyExplorer(nagle)
    full = ex.view(**ex.defaults()).table["n"].iloc[0]
    half = ex.view(window_s=(0.0, ex.span_s / 2)).table["n"].iloc[0]
    assert 0 < half < full


def test_strace_view_filters_and_finds_the_futex_peaks() -> None:
    from workbench.syscalls import read_strace

    trace = read_strace(ROOT / "data/01_quantized_latency/lab/strace_before.txt")
    ex = explore.StraceExplorer(trace)
    v = ex.view(syscalls=["futex"], log10_range_s=(-1.0, 1.0))
    locs = sorted(round(x) for x in v.table["location_ms"])
    assert locs == [250, 500, 1000]
    narrow = ex.view(syscalls=["futex"], log10_range_s=(-0.5, 1.0))  # 316 ms and up: the 250 ms peak leaves
    assert sorted(round(x) for x in narrow.table["location_ms"]) == [500, 1000]
    assert "futex at 250 ms ×10" in v.text


def test_counters_view_sums_intervals_and_keeps_totals() -> None:
    from workbench.counters import read_series

    series = read_series(ROOT / "data/03_readahead_amplification/sim/snapshots")
    ex = explore.CountersExplorer(series)
    d = ex.defaults()
    v = ex.view(**d)
    v10 = ex.view(counter=d["counter"], hosts=d["hosts"], interval_s=3600.0)
    total = [c for c in v.table.columns if c.startswith("total")][0]
    assert np.allclose(v.table[total], v10.table[total])  # coarser windows, the same bytes
    assert (v10.table["intervals"] <= v.table["intervals"]).all()
    with pytest.raises(UsageError):
        ex.view(counter="nonsense")


def test_yields_view_moves_with_sections_and_lag() -> None:
    from workbench.models.yields import fit_duration, fit_yields, read_published

    pub = read_published(ROOT / "data/04_event_loop_yields/published.csv")
    ex = explore.YieldsExplorer(fit_duration(pub), fit_yields(pub), n_draws=500)
    a = ex.view(sections=8, median_lag_ms=25)
    b = ex.view(sections=16, median_lag_ms=50)
    assert "assumption" in a.text
    assert b.table["duration_ms"].max() > a.table["duration_ms"].max()


def test_show_is_static_in_a_report(monkeypatch: pytest.MonkeyPatch, nagle: pd.DataFrame) -> None:
    shown: list[object] = []
    monkeypatch.setenv("WORKBENCH_STATIC", "1")
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: shown.extend(a))
    explore.LatencyExplorer(nagle).show()
    kinds = [type(x).__name__ for x in shown]
    assert "Figure" in kinds and not any("Widget" in k or "Box" in k for k in kinds)


def test_widget_redraws_on_a_control_change(nagle: pd.DataFrame) -> None:
    ex = explore.LatencyExplorer(nagle, condition="rate_per_s")
    calls: list[dict] = []
    real = ex.view

    def spy(**state: object) -> explore.View:
        calls.append(state)
        return real(**state)

    ex.view = spy  # type: ignore[method-assign]
    box = ex.widget()
    controls = box.children[1].children
    q = next(c for c in controls if getattr(c, "description", "") == "percentile")
    q.value = 90.0
    assert len(calls) == 2 and calls[-1]["q"] == 90.0
