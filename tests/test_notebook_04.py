"""Notebook 04 (event-loop yields) runs on its bundled data and concludes what the data say."""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.report import execute_notebook

from .conftest import NOTEBOOKS

NB = NOTEBOOKS / "04_event_loop_yields.ipynb"


def _run(tmp_path: Path, params: dict | None = None) -> dict:
    res = execute_notebook(NB, params or {}, out_dir=tmp_path, render=False)
    assert res.status == "ok", res.error
    return {k: v.value for k, v in res.findings.items()}


@pytest.mark.slow
def test_notebook_04_default_findings(tmp_path: Path) -> None:
    f = _run(tmp_path)
    assert 1.0 <= f["fit_slope"] <= 1.15
    lo, hi = f["fit_slope_ci"]
    assert lo < f["fit_slope"] < hi
    assert f["fit_r2"] > 0.99
    assert f["yields_per_section"] == pytest.approx(12, abs=0.5)
    assert f["base_yields"] == pytest.approx(11, abs=1)
    assert 0.8 <= f["lab_fit_slope"] <= 1.3
    assert f["lab_passes_per_yield"] == pytest.approx(1.0, abs=0.1)
    assert f["offload_speedup"] > 10
    assert f["offload_spread_ratio"] < 0.1
    assert f["lab_fit_r2"] > 0.95
    assert f["offloaded_passes"] < 6  # a fixed few loop passes, not one per file operation
    # the timeout risk: 8 sections, median loop pass 25 ms (lognormal σ 0.5), 200 instances, 10 s
    assert 0.4 < f["timeout_risk"] < 0.95
    rlo, rhi = f["timeout_risk_ci"]
    assert rlo <= f["timeout_risk"] <= rhi
    assert abs(f["timeout_risk_mc"] - f["timeout_risk"]) < 0.05
    assert 60 < f["lag_threshold_ms"] < 110  # one 8-section save reaches 10 s at ≈ 87 ms per pass
    opts = f["options"]
    assert opts["required_median_lag_ms"] < 25 and opts["required_timeout_ms"] > 10_000
    assert opts["max_sections"] < 8 and opts["offload_risk"] < 1e-6


@pytest.mark.slow
def test_notebook_04_follows_its_parameters(tmp_path: Path) -> None:
    from workbench.models.yields import (
        LognormalLag,
        fit_duration,
        fit_yields,
        lag_threshold_ms,
        read_published,
        timeout_risk,
    )
    from workbench.paths import resolve

    f = _run(tmp_path, {"sections": 4, "timeout_ms": 30000.0, "median_lag_ms": 60.0})
    pub = read_published(resolve("data/04_event_loop_yields/published.csv"))
    fit, yf = fit_duration(pub), fit_yields(pub)
    assert f["lag_threshold_ms"] == pytest.approx(lag_threshold_ms(fit, yf, 4, 30000.0))
    expect = timeout_risk(fit, yf, 4, 30000.0, LognormalLag(60.0, 0.5), n_draws=10).probability
    assert f["timeout_risk"] == pytest.approx(expect)


@pytest.mark.slow
def test_notebook_04_live_sweep(tmp_path: Path) -> None:
    f = _run(tmp_path, {"live": True, "live_sections": [2, 8], "live_hog_ms": [0.0, 5.0],
                        "live_repeats": 1, "live_max_seconds": 60.0})
    assert 0.8 <= f["lab_fit_slope"] <= 1.3
    assert f["offload_speedup"] > 3
