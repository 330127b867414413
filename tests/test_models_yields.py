"""The yields × loop-lag model: loader, fits on the published table, prediction and timeout risk."""
from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest

from workbench.errors import ParseError, SchemaError, UsageError
from workbench.models.yields import (
    EmpiricalLag,
    LognormalLag,
    fit_band,
    fit_duration,
    fit_lab,
    fit_yields,
    lab_summary,
    lag_threshold_ms,
    offload_comparison,
    predict_duration_ms,
    prediction_grid,
    read_published,
    risk_curve,
    slowest_lag_ms,
    timeout_risk,
    weigh_options,
)
from workbench.paths import project_root

PUBLISHED = project_root() / "data" / "04_event_loop_yields" / "published.csv"


@pytest.fixture(scope="module")
def published() -> pd.DataFrame:
    return read_published(PUBLISHED)


# --------------------------------------------------------------------------- loading

def test_published_table_loads_with_schema(published: pd.DataFrame) -> None:
    assert list(published.columns) == ["sections", "event_loop_ms", "duration_ms", "yields"]
    assert len(published) == 6 and len(published.attrs["rejects"]) == 0
    assert published["sections"].dtype == "int64" and published["duration_ms"].dtype == "float64"
    assert published.attrs["schema"] == "yields_published"
    row = published.iloc[-1]
    assert (row.sections, row.event_loop_ms, row.duration_ms, row.yields) == (16, 50.0, 10822.0, 203)


def test_missing_column_names_file_and_columns(tmp_path) -> None:
    bad = tmp_path / "broken.csv"
    bad.write_text("sections,event_loop_ms,duration\n4,25,1532\n")
    with pytest.raises(SchemaError) as exc:
        read_published(bad)
    msg = str(exc.value)
    assert "broken.csv" in msg and "'duration_ms'" in msg and "'yields'" in msg


def test_bad_rows_are_rejected_with_reasons_or_raise_when_strict() -> None:
    text = ("sections,event_loop_ms,duration_ms,yields\n"
            "4,25,1532,59\n"
            "8,25,abc,107\n"       # not a number
            "8,50,5682\n"          # missing field
            "-1,25,100,5\n"        # impossible section count
            "16,25,5596,203\n")
    frame = read_published(io.StringIO(text))
    assert len(frame) == 2
    rej = frame.attrs["rejects"].frame()
    assert list(rej["line"]) == [3, 4, 5]
    assert "duration_ms" in rej["reason"].iloc[0] and "expected 4 fields" in rej["reason"].iloc[1]
    assert "sections" in rej["reason"].iloc[2]
    with pytest.raises(ParseError) as exc:
        read_published(text, strict=True)
    assert exc.value.line == 3 and "abc" in str(exc.value)


def test_empty_input_is_an_error() -> None:
    with pytest.raises(SchemaError, match="empty table"):
        read_published(io.StringIO("# only a comment\n"))


def test_capture_names_moved_to_the_lab_warn_and_forward() -> None:
    import workbench.lab.yields as lab
    import workbench.models.yields as models

    for name in ("read_capture", "CAPTURE_SCHEMA", "MODES"):
        with pytest.warns(DeprecationWarning, match=f"models.yields.{name} is now workbench.lab.yields.{name}"):
            assert getattr(models, name) is getattr(lab, name)
    with pytest.warns(DeprecationWarning):
        from workbench.models.yields import read_capture  # noqa: F401
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        models.nothing_here  # noqa: B018


def test_the_models_do_not_import_the_lab() -> None:
    import subprocess
    import sys

    code = ("import sys, workbench.models.yields, workbench.models.scaling, workbench.models.stalls; "
            "print(sorted(m for m in sys.modules if m.startswith('workbench.lab')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --------------------------------------------------------------------------- fits

def test_duration_fit_on_published_table(published: pd.DataFrame) -> None:
    fit = fit_duration(published)
    assert 1.0 <= fit.slope <= 1.15
    assert fit.r2 > 0.99
    lo, hi = fit.slope_ci
    assert lo < fit.slope < hi and hi - lo < 0.2
    assert fit.intercept_ci_ms[0] < 0 < fit.intercept_ci_ms[1]  # no evidence of a fixed cost
    np.testing.assert_allclose(fit.fitted_ms + fit.residuals_ms, published["duration_ms"])
    assert fit.dof == 4 and "t" in fit.ci_basis


def test_duration_fit_matches_numpy_polyfit(published: pd.DataFrame) -> None:
    fit = fit_duration(published)
    x = published["yields"] * published["event_loop_ms"]
    slope, intercept = np.polyfit(x, published["duration_ms"], 1)
    assert fit.slope == pytest.approx(slope) and fit.intercept_ms == pytest.approx(intercept)


def test_yields_fit_on_published_table(published: pd.DataFrame) -> None:
    y = fit_yields(published)
    assert y.yields_per_section == pytest.approx(12, abs=0.5)
    assert y.base_yields == pytest.approx(11, abs=1)
    assert y.r2 == pytest.approx(1.0)


def test_band_contains_line_and_widens_for_prediction(published: pd.DataFrame) -> None:
    fit = fit_duration(published)
    b = fit_band(fit, [0.0, 5000.0, 10000.0])
    assert (b["lo_ms"] < b["fitted_ms"]).all() and (b["fitted_ms"] < b["hi_ms"]).all()
    assert (b["pred_lo_ms"] < b["lo_ms"]).all() and (b["pred_hi_ms"] > b["hi_ms"]).all()


def test_prediction_is_vectorised_and_reproduces_table(published: pd.DataFrame) -> None:
    fit, y = fit_duration(published), fit_yields(published)
    pred = predict_duration_ms(fit, y, published["sections"], published["event_loop_ms"])
    np.testing.assert_allclose(pred, fit.fitted_ms)
    grid = predict_duration_ms(fit, y, np.array([[4], [16]]), np.array([25, 50]))
    assert grid.shape == (2, 2) and grid[1, 1] > grid[0, 0]
    g = prediction_grid(fit, y, [4, 16], [25, 50])
    assert list(g.columns) == ["sections", "loop_lag_ms", "yields", "duration_ms"] and len(g) == 4


def test_lag_threshold_inverts_prediction(published: pd.DataFrame) -> None:
    fit, y = fit_duration(published), fit_yields(published)
    l_star = lag_threshold_ms(fit, y, 8, 10_000.0)
    assert float(predict_duration_ms(fit, y, 8, l_star)) == pytest.approx(10_000.0)


# --------------------------------------------------------------------------- timeout risk

def _exact_fits() -> tuple:
    """duration = 1.0 × yields × lag exactly; yields = 100 × sections exactly (no scatter)."""
    line = pd.DataFrame({"sections": [1, 1, 1], "event_loop_ms": [1.0, 2.0, 3.0],
                         "yields": [100, 100, 100], "duration_ms": [100.0, 200.0, 300.0]})
    fit = fit_duration(line)
    ys = fit_yields(pd.DataFrame({"sections": [1, 2, 3], "yields": [100, 200, 300]}))
    return fit, ys


def test_timeout_risk_by_hand_empirical() -> None:
    # lags 10, 20, 30, 40 ms → durations 1, 2, 3, 4 s; timeout 2.5 s → F = 1/2;
    # slowest of 2 exceeds with 1 − (1/2)² = 0.75.
    fit, ys = _exact_fits()
    r = timeout_risk(fit, ys, 1, 2500.0, [10.0, 20.0, 30.0, 40.0], n_instances=2, n_draws=20_000, seed=1)
    assert r.lag_threshold_ms == pytest.approx(25.0)
    assert r.per_instance_probability == pytest.approx(0.5)
    assert r.probability == pytest.approx(0.75)
    assert r.probability_ci == pytest.approx((0.75, 0.75))
    assert r.mc_ci[0] <= 0.75 <= r.mc_ci[1] and abs(r.mc_probability - 0.75) < 0.02


def test_timeout_risk_by_hand_lognormal() -> None:
    # median lag equals the threshold → F(L*) = 1/2; N = 3 → 1 − 1/8.
    fit, ys = _exact_fits()
    r = timeout_risk(fit, ys, 1, 2000.0, LognormalLag(20.0, 0.7), n_instances=3, n_draws=20_000, seed=2)
    assert r.probability == pytest.approx(0.875)
    assert abs(r.mc_probability - 0.875) < 0.015
    r1 = timeout_risk(fit, ys, 1, 2000.0, LognormalLag(20.0, 0.7), n_instances=1, n_draws=10)
    assert r1.probability == pytest.approx(0.5)


def test_timeout_risk_on_published_fit_is_consistent(published: pd.DataFrame) -> None:
    fit, ys = fit_duration(published), fit_yields(published)
    lags = LognormalLag(25.0, 0.5)
    r = timeout_risk(fit, ys, 8, 10_000.0, lags, n_instances=200, n_draws=4000, seed=0)
    assert 0 < r.probability < 1
    assert r.probability_ci[0] <= r.probability <= r.probability_ci[1]
    assert abs(r.mc_probability - r.probability) < 0.05  # formula and simulation agree
    f = float(lags.cdf(r.lag_threshold_ms))
    assert r.probability == pytest.approx(1 - f**200)
    # more instances, more sections or slower loops only make it worse
    assert timeout_risk(fit, ys, 8, 10_000.0, lags, n_instances=20, n_draws=10).probability < r.probability
    assert timeout_risk(fit, ys, 16, 10_000.0, lags, n_draws=10).probability > r.probability


def test_risk_curve_is_monotone_in_lag(published: pd.DataFrame) -> None:
    fit, ys = fit_duration(published), fit_yields(published)
    c = risk_curve(fit, ys, [4, 16], np.geomspace(5, 200, 25), 0.5, 10_000.0, n_draws=500)
    for _, sub in c.groupby("sections"):
        assert np.all(np.diff(sub["probability"]) >= -1e-12)
        assert ((sub["lo"] <= sub["probability"] + 1e-12) & (sub["probability"] <= sub["hi"] + 1e-12)).all()
    at = c[c.median_lag_ms == c.median_lag_ms.iloc[10]].set_index("sections")["probability"]
    assert at[16] >= at[4]


def test_slowest_lag_and_options(published: pd.DataFrame) -> None:
    fit, ys = fit_duration(published), fit_yields(published)
    lags = LognormalLag(25.0, 0.5)
    q = slowest_lag_ms(lags, 200, 0.01)
    assert 1 - float(lags.cdf(q)) ** 200 == pytest.approx(0.01, rel=1e-6)
    assert slowest_lag_ms(EmpiricalLag(np.arange(1.0, 101.0)), 1, 0.5) == pytest.approx(50.0)
    opts = weigh_options(fit, ys, 8, 10_000.0, lags, target_risk=0.01).set_index("option")
    assert opts.loc["refactor", "risk_after"] == pytest.approx(0.01, rel=1e-3)
    assert opts.loc["longer timeout", "risk_after"] == pytest.approx(0.01, rel=1e-3)
    assert opts.loc["fewer sections", "risk_after"] <= 0.01
    assert opts.loc["refactor", "needed"] < 25.0 and opts.loc["longer timeout", "needed"] > 10_000.0
    assert opts.loc["offload save", "risk_after"] < 1e-6 < opts.loc["now", "risk_after"]


def test_lag_distributions_reject_nonsense() -> None:
    with pytest.raises(UsageError, match="median_ms=0.0"):
        LognormalLag(0.0, 0.5)
    with pytest.raises(UsageError, match="finite values"):
        EmpiricalLag(np.array([1.0, math.nan]))


def test_analyses_name_the_columns_they_need(published: pd.DataFrame) -> None:
    with pytest.raises(SchemaError, match=r"fit_duration needs column\(s\) \['event_loop_ms', 'duration_ms'\]"):
        fit_duration(published[["sections", "yields"]])
    with pytest.raises(SchemaError, match=r"fit_yields needs column\(s\) \['sections'\]"):
        fit_yields(published[["yields"]])
    with pytest.raises(SchemaError, match=r"fit_lab needs column\(s\) \['mode'"):
        fit_lab(published)
    with pytest.raises(SchemaError, match=r"offload_comparison needs column\(s\) \['mode'"):
        offload_comparison(published)
    with pytest.raises(SchemaError, match=r"lab_summary needs column\(s\) \['mode'"):
        lab_summary(published)
    with pytest.raises(UsageError, match="n_instances=0"):
        timeout_risk(fit_duration(published), fit_yields(published), 8, 1000.0, LognormalLag(10, 0.5), n_instances=0)
