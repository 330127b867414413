"""Notebook 04 (event-loop yields) runs on its bundled data and concludes what the data say."""
from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import NOTEBOOKS, run_notebook

NB = NOTEBOOKS / "04_event_loop_yields.ipynb"


def _execute(tmp_path: Path, params: dict | None = None) -> tuple[dict, dict, str]:
    return run_notebook(NB, tmp_path, params)


def _run(tmp_path: Path, params: dict | None = None) -> dict:
    return _execute(tmp_path, params)[0]


@pytest.mark.slow
def test_notebook_04_default_findings(tmp_path: Path) -> None:
    f, why, text = _execute(tmp_path)
    assert 1.0 <= f["fit_slope"] <= 1.15
    lo, hi = f["fit_slope_ci"]
    assert lo < f["fit_slope"] < hi
    assert f["fit_r2"] > 0.99
    assert f["yield_cost"]["verdict"] == "yes"  # CI 1.02-1.11 lies within 1 ± 0.25 passes
    assert f["yields_per_section"] == pytest.approx(12, abs=0.5)
    assert f["base_yields"] == pytest.approx(11, abs=1)
    # the bundled capture: the fit's own interval contains one pass, and the direct count agrees
    llo, lhi = f["lab_fit_slope_ci"]
    assert llo <= 1.0 <= lhi and f["lab_yield_cost"]["verdict"] == "yes"
    assert f["lab_passes_per_yield"] == pytest.approx(1.0, abs=0.1)
    assert f["lab_pass_count_cost"]["verdict"] == "yes"
    assert f["offload_verdict"]["verdict"] == "yes"
    assert f["offload_speedup"] > 10
    assert f["offload_spread_ratio"] < 0.1
    assert f["lab_fit_r2"] > 0.95
    assert f["offloaded_passes"] < 6  # a fixed few loop passes, not one per file operation
    assert 60 < f["lag_threshold_ms"] < 110  # one 8-section save reaches 10 s at ≈ 87 ms per pass
    # the timeout risk rests on an assumed spread: shown as a scenario, never recorded as a finding
    for name in ("timeout_risk", "timeout_risk_ci", "timeout_risk_mc", "options"):
        assert f[name] is None and "assumed" in why[name]
    assert "Scenario — an assumed lognormal" in text and "71.1%" in text
    assert "the bundled table of saves" in text and "the bundled event-loop save capture" in text
    assert "skipped" not in text


@pytest.mark.slow
def test_notebook_04_follows_its_parameters(tmp_path: Path) -> None:
    import numpy as np

    from workbench.models.yields import (
        EmpiricalLag,
        fit_duration,
        fit_yields,
        lag_threshold_ms,
        read_published,
        timeout_risk,
    )
    from workbench.paths import resolve

    observed = [12.0, 18.0, 25.0, 31.0, 44.0, 60.0]
    f, why, _ = _execute(tmp_path, {"sections": 4, "timeout_ms": 30000.0, "observed_lags_ms": observed})
    pub = read_published(resolve("data/04_event_loop_yields/published.csv"))
    fit, yf = fit_duration(pub), fit_yields(pub)
    assert f["lag_threshold_ms"] == pytest.approx(lag_threshold_ms(fit, yf, 4, 30000.0))
    # measured per-instance lags: the risk rests on data, so it is a finding
    expect = timeout_risk(fit, yf, 4, 30000.0, EmpiricalLag(np.asarray(observed)), n_draws=10).probability
    assert f["timeout_risk"] == pytest.approx(expect)
    assert "measured per-instance lags" in why["timeout_risk"]


@pytest.mark.slow
def test_notebook_04_margin_changes_the_verdict(tmp_path: Path) -> None:
    f = _run(tmp_path, {"pass_margin": 0.05, "capture_path": ""})
    # the published slope's CI (1.02-1.11) is not within 1 ± 0.05: neither yes nor a confident no
    assert f["yield_cost"]["verdict"] == "inconclusive"
    assert f["lab_fit_slope"] is None and f["offload_verdict"] is None


@pytest.mark.slow
def test_notebook_04_live_sweep(tmp_path: Path) -> None:
    f, _, text = _execute(tmp_path, {"live": True, "live_sections": [2, 8], "live_hog_ms": [0.0, 5.0],
                                     "live_repeats": 1, "live_max_seconds": 60.0})
    # judged on what was measured, with its interval: the count of passes per yield is direct,
    # and the fit against the loop lag each save actually got may be inconclusive on a busy
    # machine but must never confidently deny one pass per yield
    assert f["lab_pass_count_cost"]["verdict"] == "yes"
    assert f["lab_yield_cost"]["verdict"] in ("yes", "inconclusive")
    assert f["lab_yield_cost"]["evidence"]["ci_lo"] <= 1.25 and f["lab_yield_cost"]["evidence"]["ci_hi"] >= 0.75
    assert "lag_ms_others" in text
    assert f["offload_verdict"]["verdict"] in ("yes", "inconclusive")
    assert f["offload_speedup"] > 1
    assert "a live event-loop save capture made just now" in text
