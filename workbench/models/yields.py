"""Cooperative yields × event-loop lag: why a config save slows down on a loaded instance.

On a cooperative event loop (Tarantool fibers, asyncio tasks) every yield costs
at least one scheduler pass, and under load a pass lasts as long as the longest
non-yielding task between yields. Work that yields ``k`` times therefore takes
about ``k × loop-pass time``, whatever its own CPU cost. This module holds:

- loader: :func:`read_published` (the published table of save durations); the lab
  capture these analyses also take is read by :func:`workbench.lab.yields.read_capture`;
- fits: :func:`fit_duration` (duration against yields × loop lag) and
  :func:`fit_yields` (yields against config sections), ordinary least squares with
  t-based confidence intervals;
- prediction: :func:`predict_duration_ms`;
- risk: :func:`timeout_risk` — probability that the slowest of N instances
  exceeds a timeout, analytic ``1 − F(T)^N`` plus Monte Carlo that propagates
  the fits' uncertainty — with :func:`risk_curve` and :func:`weigh_options`;
- lab analyses: :func:`fit_lab`, :func:`offload_comparison` and :func:`lab_summary`.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import _moved
from ..errors import UsageError
from ..schema import Column, Schema, requires
from ..sources import Source
from ..stats import wilson_interval
from ..tables import Above, AtLeast, read_table
from ..verdicts import Decision, decide, intervals_disjoint

# --------------------------------------------------------------------------- schemas

PUBLISHED_SCHEMA = Schema(
    name="yields_published",
    doc=(
        "Published durations of a config save under event-loop load: one row per "
        "(config sections, mean loop-pass time) combination."
    ),
    columns=(
        Column("sections", "int", "count", "number of config sections written as files (optional: needed for "
               "yields against sections, the prediction and the timeout scenario)", required=False),
        Column("event_loop_ms", "float", "ms", "mean event-loop pass time on the instance"),
        Column("duration_ms", "float", "ms", "wall-clock duration of the config save"),
        Column("yields", "int", "count", "fiber context switches (yields) counted during prepare"),
    ),
)

#: the save modes a lab capture compares (values of its ``mode`` column)
_SAVE_MODES = ("yielding", "offloaded")

#: names that moved to :mod:`workbench.lab.yields` (the owner of the capture format)
__getattr__ = _moved.forward(__name__)  # the capture format moved to workbench.lab.yields in 0.2


# --------------------------------------------------------------------------- loading

def read_published(source: Source, strict: bool = False) -> pd.DataFrame:
    """Load the published table (CSV: event_loop_ms, duration_ms, yields and optionally sections).

    Accepts a path (plain or compressed), an open stream or the CSV text itself.
    Returns a frame with :data:`PUBLISHED_SCHEMA`: ``sections`` (int, only when the
    file has it), ``event_loop_ms`` (float, ms), ``duration_ms`` (float, ms), ``yields`` (int).
    Rows that do not parse (or carry negative values, or no sections) are kept in
    ``frame.attrs["rejects"]``; ``strict=True`` raises
    :class:`~workbench.errors.ParseError` at the first. Missing columns raise :class:`~workbench.errors.SchemaError` naming the
    file and the columns.
    """
    return read_table(source, PUBLISHED_SCHEMA, strict=strict, rules={
        "event_loop_ms": AtLeast(0.0), "duration_ms": AtLeast(0.0), "yields": AtLeast(0),
    }, check=_check_sections)


def _check_sections(record: dict[str, object]) -> str | None:
    bad = Above(0)(record["sections"]) if "sections" in record else None
    return None if bad is None else f"column 'sections': {bad}"


# --------------------------------------------------------------------------- least squares

CI_BASIS = (
    "ordinary least squares; intervals from Student's t with n-2 degrees of freedom, "
    "which assumes independent, equal-variance, normal residuals. With a handful of points "
    "this rests on the model being right (a straight line) more than on the data: the "
    "intervals describe scatter around the line, not model error."
)


@dataclass(frozen=True, eq=False)
class _Ols:
    intercept: float
    slope: float
    cov: np.ndarray  # 2×2 covariance of (intercept, slope)
    r2: float
    residual_sd: float
    dof: int
    fitted: np.ndarray
    residuals: np.ndarray


def _ols(x: np.ndarray, y: np.ndarray) -> _Ols:
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n = len(x)
    if n < 3:
        raise UsageError(f"need at least 3 points (rows) for a line with an interval, got {n}")
    if np.ptp(x) == 0:
        raise UsageError("all x values are equal; the slope is not identifiable (expected at least two distinct x)")
    X = np.column_stack([np.ones(n), x])
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    fitted = X @ beta
    resid = y - fitted
    dof = n - 2
    ss_res = float(resid @ resid)
    ss_tot = float(((y - y.mean()) ** 2).sum())
    s2 = ss_res / dof
    cov = s2 * np.linalg.inv(X.T @ X)
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan")
    return _Ols(float(beta[0]), float(beta[1]), cov, r2, math.sqrt(s2), dof, fitted, resid)


def _ci(est: float, se: float, dof: int, level: float) -> tuple[float, float]:
    from scipy import stats

    t = float(stats.t.ppf(0.5 + level / 2, dof))
    return (est - t * se, est + t * se)


@dataclass(frozen=True, eq=False)
class DurationFit:
    """duration_ms ≈ intercept_ms + slope × (yields × loop lag ms).

    ``slope`` is ms of duration per ms of (yields × loop-pass time): the number of
    loop passes one yield costs (1.0 when each yield waits exactly one pass).
    Fields: slope, slope_ci, intercept_ms, intercept_ci_ms (at ``level``), r2,
    residual_sd_ms, n, dof, level, cov (2×2 covariance of intercept, slope),
    x_ms (yields × lag per point), y_ms, fitted_ms, residuals_ms, ci_basis.
    """

    slope: float
    slope_ci: tuple[float, float]
    intercept_ms: float
    intercept_ci_ms: tuple[float, float]
    r2: float
    residual_sd_ms: float
    n: int
    dof: int
    level: float
    cov: np.ndarray
    x_ms: np.ndarray
    y_ms: np.ndarray
    fitted_ms: np.ndarray
    residuals_ms: np.ndarray
    ci_basis: str = CI_BASIS


@dataclass(frozen=True, eq=False)
class YieldsFit:
    """yields ≈ base_yields + yields_per_section × sections.

    Fields: yields_per_section, yields_per_section_ci, base_yields, base_yields_ci
    (at ``level``), r2, residual_sd, n, dof, level, cov (2×2 of base, per-section),
    sections, yields, fitted, residuals, ci_basis. Exact integer counts on a line give
    zero residuals and zero-width intervals: the table shows no scatter, which says
    nothing about section layouts it did not measure.
    """

    yields_per_section: float
    yields_per_section_ci: tuple[float, float]
    base_yields: float
    base_yields_ci: tuple[float, float]
    r2: float
    residual_sd: float
    n: int
    dof: int
    level: float
    cov: np.ndarray
    sections: np.ndarray
    yields: np.ndarray
    fitted: np.ndarray
    residuals: np.ndarray
    ci_basis: str = CI_BASIS


def fit_duration(
    frame: pd.DataFrame,
    lag_col: str = "event_loop_ms",
    yields_col: str = "yields",
    duration_col: str = "duration_ms",
    level: float = 0.95,
) -> DurationFit:
    """Fit duration against yields × loop lag (OLS, t intervals); see :class:`DurationFit`."""
    requires(frame, yields_col, lag_col, duration_col)
    x = frame[yields_col].to_numpy(float) * frame[lag_col].to_numpy(float)
    y = frame[duration_col].to_numpy(float)
    o = _ols(x, y)
    se = np.sqrt(np.diag(o.cov))
    return DurationFit(
        slope=o.slope, slope_ci=_ci(o.slope, se[1], o.dof, level),
        intercept_ms=o.intercept, intercept_ci_ms=_ci(o.intercept, se[0], o.dof, level),
        r2=o.r2, residual_sd_ms=o.residual_sd, n=len(x), dof=o.dof, level=level, cov=o.cov,
        x_ms=x, y_ms=y, fitted_ms=o.fitted, residuals_ms=o.residuals,
    )


def fit_yields(frame: pd.DataFrame, level: float = 0.95) -> YieldsFit:
    """Fit yields against sections (OLS over every row, t intervals); see :class:`YieldsFit`."""
    requires(frame, "sections", "yields")
    x = frame["sections"].to_numpy(float)
    y = frame["yields"].to_numpy(float)
    o = _ols(x, y)
    se = np.sqrt(np.diag(o.cov))
    return YieldsFit(
        yields_per_section=o.slope, yields_per_section_ci=_ci(o.slope, se[1], o.dof, level),
        base_yields=o.intercept, base_yields_ci=_ci(o.intercept, se[0], o.dof, level),
        r2=o.r2, residual_sd=o.residual_sd, n=len(x), dof=o.dof, level=level, cov=o.cov,
        sections=x, yields=y, fitted=o.fitted, residuals=o.residuals,
    )


def fit_band(fit: DurationFit, x_ms: Sequence[float] | np.ndarray) -> pd.DataFrame:
    """Fitted line with its confidence band (mean) and prediction band (one new point).

    Returns columns x_ms, fitted_ms, lo_ms, hi_ms (confidence band of the line at
    ``fit.level``), pred_lo_ms, pred_hi_ms (prediction band including residual scatter).
    """
    x = np.asarray(x_ms, dtype=float)
    X = np.column_stack([np.ones_like(x), x])
    mean = X @ np.array([fit.intercept_ms, fit.slope])
    se_mean = np.sqrt(np.einsum("ij,jk,ik->i", X, fit.cov, X))
    se_pred = np.sqrt(se_mean**2 + fit.residual_sd_ms**2)
    from scipy import stats

    t = float(stats.t.ppf(0.5 + fit.level / 2, fit.dof))
    return pd.DataFrame({
        "x_ms": x, "fitted_ms": mean, "lo_ms": mean - t * se_mean, "hi_ms": mean + t * se_mean,
        "pred_lo_ms": mean - t * se_pred, "pred_hi_ms": mean + t * se_pred,
    })


def predicted_yields(yields_fit: YieldsFit, sections: float | np.ndarray) -> np.ndarray:
    """Yields predicted for ``sections`` (vectorised): base_yields + yields_per_section × sections."""
    return yields_fit.base_yields + yields_fit.yields_per_section * np.asarray(sections, dtype=float)


def predict_duration_ms(
    fit: DurationFit,
    yields_fit: YieldsFit,
    sections: float | Sequence[float] | np.ndarray,
    loop_lag_ms: float | Sequence[float] | np.ndarray,
) -> np.ndarray:
    """Predicted save duration, ms, for section counts and loop-pass times (broadcast together)."""
    s, lag = np.broadcast_arrays(np.asarray(sections, dtype=float), np.asarray(loop_lag_ms, dtype=float))
    return fit.intercept_ms + fit.slope * predicted_yields(yields_fit, s) * lag


def prediction_grid(
    fit: DurationFit,
    yields_fit: YieldsFit,
    sections: Sequence[float],
    loop_lags_ms: Sequence[float] | np.ndarray,
) -> pd.DataFrame:
    """Predicted durations over every (sections, loop lag) pair.

    Returns columns sections, loop_lag_ms, yields (predicted), duration_ms (predicted).
    """
    s, lag = np.meshgrid(np.asarray(sections, dtype=float), np.asarray(loop_lags_ms, dtype=float), indexing="ij")
    return pd.DataFrame({
        "sections": s.ravel().astype(int) if np.all(s == np.round(s)) else s.ravel(),
        "loop_lag_ms": lag.ravel(),
        "yields": predicted_yields(yields_fit, s.ravel()),
        "duration_ms": predict_duration_ms(fit, yields_fit, s.ravel(), lag.ravel()),
    })


def lag_threshold_ms(fit: DurationFit, yields_fit: YieldsFit, sections: float, timeout_ms: float) -> float:
    """Loop-pass time at which the predicted duration reaches ``timeout_ms`` (0 if never below it)."""
    y = float(predicted_yields(yields_fit, sections))
    if fit.slope * y <= 0:
        return math.inf if fit.intercept_ms < timeout_ms else 0.0
    return max(0.0, (timeout_ms - fit.intercept_ms) / (fit.slope * y))


# --------------------------------------------------------------------------- lag distributions

@dataclass(frozen=True)
class LognormalLag:
    """Loop-pass times across instances, lognormal: ``median_ms`` and ``sigma`` (of ln lag)."""

    median_ms: float
    sigma: float

    def __post_init__(self) -> None:
        if not (self.median_ms > 0 and self.sigma >= 0):
            raise UsageError(f"LognormalLag needs median_ms > 0 and sigma >= 0, got median_ms={self.median_ms}, "
                             f"sigma={self.sigma}")

    def cdf(self, x_ms: np.ndarray | float) -> np.ndarray:
        from scipy import stats

        x = np.asarray(x_ms, dtype=float)
        with np.errstate(divide="ignore"):
            if self.sigma == 0:
                return (x >= self.median_ms).astype(float)
            z = (np.log(np.maximum(x, 0.0)) - math.log(self.median_ms)) / self.sigma
        return stats.norm.cdf(z)

    def ppf(self, q: float) -> float:
        if self.sigma == 0:
            return self.median_ms
        from scipy import stats

        return float(self.median_ms * math.exp(self.sigma * stats.norm.ppf(q)))

    def sample(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        return self.median_ms * np.exp(self.sigma * rng.standard_normal(size))


@dataclass(frozen=True, eq=False)
class EmpiricalLag:
    """Observed loop-pass times (ms), one value per instance or per observation."""

    values_ms: np.ndarray

    def __post_init__(self) -> None:
        v = np.asarray(self.values_ms, dtype=float)
        if v.ndim != 1 or len(v) == 0 or not np.all(np.isfinite(v)) or np.any(v < 0):
            raise UsageError(f"EmpiricalLag: observed lags must be a non-empty 1-D array of finite values >= 0 ms, "
                             f"got shape {v.shape}")
        object.__setattr__(self, "values_ms", np.sort(v))

    def cdf(self, x_ms: np.ndarray | float) -> np.ndarray:
        return np.searchsorted(self.values_ms, np.asarray(x_ms, dtype=float), side="right") / len(self.values_ms)

    def ppf(self, q: float) -> float:
        return float(np.quantile(self.values_ms, q, method="inverted_cdf"))

    def sample(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        return rng.choice(self.values_ms, size=size, replace=True)


LagDistribution = LognormalLag | EmpiricalLag


def as_lag_distribution(lags: LagDistribution | Iterable[float] | np.ndarray) -> LagDistribution:
    """A lag distribution from a :class:`LognormalLag`/:class:`EmpiricalLag` or an array of observed lags (ms)."""
    if isinstance(lags, (LognormalLag, EmpiricalLag)):
        return lags
    return EmpiricalLag(np.asarray(list(lags), dtype=float))


# --------------------------------------------------------------------------- timeout risk

@dataclass(frozen=True)
class TimeoutRisk:
    """P(the slowest of ``n_instances`` saves exceeds ``timeout_ms``).

    Fields:
    - probability: analytic ``1 − F(L*)^N`` at the fits' point estimates, where
      L* = (timeout − intercept) / (slope × yields) and F is the lag distribution's CDF;
    - probability_ci: (lo, hi) quantiles at ``level`` of the same formula over draws of
      the fit parameters (fit uncertainty only);
    - mc_probability, mc_ci: Monte Carlo fraction of simulated clusters whose slowest
      save exceeds the timeout (fit parameters, lag per instance and residual scatter all
      drawn), with a Wilson interval for simulation error;
    - per_instance_probability: 1 − F(L*); lag_threshold_ms: L*;
    - sections, yields (predicted), n_instances, timeout_ms, n_draws, level.
    """

    probability: float
    probability_ci: tuple[float, float]
    mc_probability: float
    mc_ci: tuple[float, float]
    per_instance_probability: float
    lag_threshold_ms: float
    sections: float
    yields: float
    n_instances: int
    timeout_ms: float
    n_draws: int
    level: float


def _draw_params(fit: DurationFit | YieldsFit, est: tuple[float, float], rng: np.random.Generator,
                 n: int) -> np.ndarray:
    """Draws of (intercept, slope) from a multivariate t with the fit's dof and covariance."""
    z = rng.multivariate_normal(np.zeros(2), fit.cov, size=n, method="eigh")
    w = rng.chisquare(fit.dof, size=n) / fit.dof
    return np.asarray(est) + z / np.sqrt(w)[:, None]


def _analytic_p(lags: LagDistribution, threshold: np.ndarray, n_instances: int) -> np.ndarray:
    f = np.where(threshold > 0, lags.cdf(np.maximum(threshold, 0.0)), 0.0)
    return 1.0 - np.power(f, n_instances)


def _thresholds(a: np.ndarray, b: np.ndarray, y: np.ndarray, timeout_ms: float) -> np.ndarray:
    by = b * y
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (timeout_ms - a) / by
    return np.where(by > 0, t, np.where(a < timeout_ms, np.inf, 0.0))


def _point_risk(fit: DurationFit, yields_fit: YieldsFit, sections: float, timeout_ms: float,
                dist: LagDistribution, n_instances: int, yields: float | None = None) -> float:
    y = float(predicted_yields(yields_fit, sections)) if yields is None else float(yields)
    thr = _thresholds(np.array(fit.intercept_ms), np.array(fit.slope), np.array(y), timeout_ms)
    return float(_analytic_p(dist, np.asarray(thr), n_instances))


def timeout_risk(
    fit: DurationFit,
    yields_fit: YieldsFit,
    sections: float,
    timeout_ms: float,
    lags: LagDistribution | Iterable[float] | np.ndarray,
    n_instances: int = 200,
    n_draws: int = 4000,
    seed: int | None = 0,
    level: float = 0.95,
    residual_noise: bool = True,
    yields: float | None = None,
) -> TimeoutRisk:
    """Probability that the slowest of ``n_instances`` config saves exceeds ``timeout_ms``.

    ``lags`` is the distribution of mean loop-pass times across instances: a
    :class:`LognormalLag` (median, sigma) or an array of observed lags in ms. Each
    instance's save takes ``intercept + slope × yields × lag``; the commit waits for
    all of them, so the slowest decides. ``yields`` overrides the count predicted from
    ``sections`` (e.g. 1 for a save offloaded to a thread). See :class:`TimeoutRisk`.
    """
    if n_instances < 1 or n_draws < 1:
        raise UsageError(f"timeout_risk: n_instances and n_draws must be >= 1, got n_instances={n_instances}, "
                         f"n_draws={n_draws}")
    dist = as_lag_distribution(lags)
    rng = np.random.default_rng(seed)
    y_hat = float(predicted_yields(yields_fit, sections)) if yields is None else float(yields)
    thr = float(_thresholds(np.array(fit.intercept_ms), np.array(fit.slope), np.array(y_hat), timeout_ms))
    f_point = float(dist.cdf(thr)) if thr > 0 else 0.0
    p_point = 1.0 - f_point**n_instances

    ab = _draw_params(fit, (fit.intercept_ms, fit.slope), rng, n_draws)
    if yields is None:
        yy = _draw_params(yields_fit, (yields_fit.base_yields, yields_fit.yields_per_section), rng, n_draws)
        y_draw = yy[:, 0] + yy[:, 1] * float(sections)
    else:
        y_draw = np.full(n_draws, float(yields))
    thr_draw = _thresholds(ab[:, 0], ab[:, 1], y_draw, timeout_ms)
    p_draw = _analytic_p(dist, thr_draw, n_instances)
    q = (1 - level) / 2
    p_ci = (float(np.quantile(p_draw, q)), float(np.quantile(p_draw, 1 - q)))

    exceed = 0
    chunk = max(1, 2_000_000 // n_instances)
    for start in range(0, n_draws, chunk):
        sl = slice(start, min(n_draws, start + chunk))
        m = sl.stop - sl.start
        lag = dist.sample(rng, (m, n_instances))
        dur = ab[sl, 0:1] + ab[sl, 1:2] * y_draw[sl, None] * lag
        if residual_noise and fit.residual_sd_ms > 0:
            dur = dur + fit.residual_sd_ms * rng.standard_normal((m, n_instances))
        exceed += int((dur.max(axis=1) > timeout_ms).sum())
    mc_lo, mc_hi = wilson_interval(exceed, n_draws, level)
    return TimeoutRisk(
        probability=p_point, probability_ci=p_ci,
        mc_probability=exceed / n_draws, mc_ci=(float(mc_lo), float(mc_hi)),
        per_instance_probability=1.0 - f_point, lag_threshold_ms=thr,
        sections=float(sections), yields=y_hat, n_instances=n_instances,
        timeout_ms=float(timeout_ms), n_draws=n_draws, level=level,
    )


def risk_curve(
    fit: DurationFit,
    yields_fit: YieldsFit,
    sections: Sequence[float],
    median_lags_ms: Sequence[float] | np.ndarray,
    sigma: float,
    timeout_ms: float,
    n_instances: int = 200,
    n_draws: int = 2000,
    seed: int | None = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """P(slowest of N > timeout) over a grid of median loop lags (lognormal, ``sigma``).

    Analytic at the point estimates, with an interval from fit-parameter draws
    (the same draws for every grid point, so the bands are smooth). Returns columns
    sections, median_lag_ms, probability, lo, hi.
    """
    rng = np.random.default_rng(seed)
    ab = _draw_params(fit, (fit.intercept_ms, fit.slope), rng, n_draws)
    yy = _draw_params(yields_fit, (yields_fit.base_yields, yields_fit.yields_per_section), rng, n_draws)
    q = (1 - level) / 2
    rows = []
    for s in sections:
        y_hat = float(predicted_yields(yields_fit, s))
        thr = _thresholds(np.array(fit.intercept_ms), np.array(fit.slope), np.array(y_hat), timeout_ms)
        thr_draw = _thresholds(ab[:, 0], ab[:, 1], yy[:, 0] + yy[:, 1] * float(s), timeout_ms)
        for m in np.asarray(median_lags_ms, dtype=float):
            dist = LognormalLag(float(m), sigma)
            p = float(_analytic_p(dist, np.asarray(thr), n_instances))
            pd_ = _analytic_p(dist, thr_draw, n_instances)
            rows.append((int(s), float(m), p, float(np.quantile(pd_, q)), float(np.quantile(pd_, 1 - q))))
    return pd.DataFrame(rows, columns=["sections", "median_lag_ms", "probability", "lo", "hi"])


def slowest_lag_ms(lags: LagDistribution | Iterable[float] | np.ndarray, n_instances: int, risk: float) -> float:
    """The lag the slowest of ``n_instances`` exceeds with probability ``risk``: F⁻¹((1 − risk)^(1/N))."""
    if not 0 < risk < 1:
        raise UsageError(f"slowest_lag_ms: risk must be in (0, 1), got {risk}")
    return as_lag_distribution(lags).ppf((1.0 - risk) ** (1.0 / n_instances))


def weigh_options(
    fit: DurationFit,
    yields_fit: YieldsFit,
    sections: float,
    timeout_ms: float,
    lags: LognormalLag,
    n_instances: int = 200,
    target_risk: float = 0.01,
    offloaded_passes: float | None = 2.0,
) -> pd.DataFrame:
    """What each remedy must achieve to bring P(slowest > timeout) down to ``target_risk``.

    Uses the point estimates and a lognormal lag distribution. Rows (column
    ``option``): "now" (the current risk), "refactor" (median loop lag needed, ms),
    "fewer sections" (largest section count), "longer timeout" (timeout needed, ms),
    "offload save" (risk when the save costs ``offloaded_passes`` loop passes instead
    of yields × slope; left out when ``offloaded_passes`` is None or not finite, i.e.
    not measured). Columns: option, knob, now, needed, unit, risk_after.
    """
    q = slowest_lag_ms(lags, n_instances, target_risk)
    y_now = float(predicted_yields(yields_fit, sections))
    p_now = _point_risk(fit, yields_fit, sections, timeout_ms, lags, n_instances)
    # refactor: scale the whole lag distribution down until its N-quantile hits L*
    l_star = lag_threshold_ms(fit, yields_fit, sections, timeout_ms)
    median_needed = lags.median_ms * l_star / q
    # fewer sections: largest S with intercept + slope × yields(S) × q <= timeout
    y_max = (timeout_ms - fit.intercept_ms) / (fit.slope * q)
    s_max = math.floor((y_max - yields_fit.base_yields) / yields_fit.yields_per_section)
    # longer timeout
    t_needed = fit.intercept_ms + fit.slope * y_now * q

    def risk_with(**kw: float) -> float:
        lg = LognormalLag(kw.get("median", lags.median_ms), lags.sigma)
        return _point_risk(fit, yields_fit, kw.get("sections", sections), kw.get("timeout", timeout_ms),
                           lg, n_instances)

    rows = [
        ("now", "P(slowest > timeout)", p_now, p_now, "probability", p_now),
        ("refactor", "median loop lag", lags.median_ms, median_needed, "ms",
         risk_with(median=median_needed * (1 - 1e-9))),
        ("fewer sections", "config sections", float(sections), float(max(s_max, 0)), "count",
         risk_with(sections=max(s_max, 0)) if s_max >= 0 else float("nan")),
        ("longer timeout", "prepare timeout", timeout_ms, t_needed, "ms", risk_with(timeout=t_needed * (1 + 1e-9))),
    ]
    if offloaded_passes is not None and math.isfinite(offloaded_passes):
        # offload: the save waits a fixed number of passes whatever the section count
        p_off = _point_risk(fit, yields_fit, sections, timeout_ms, lags, n_instances,
                            yields=offloaded_passes / fit.slope)
        rows.append(("offload save", "yields per save", y_now, offloaded_passes / fit.slope, "count", p_off))
    return pd.DataFrame(rows, columns=["option", "knob", "now", "needed", "unit", "risk_after"])


# --------------------------------------------------------------------------- lab analyses

def fit_lab(capture: pd.DataFrame, level: float = 0.95, lag_col: str | None = None) -> DurationFit:
    """Fit the yielding saves of a capture: duration_ms against yields × loop lag.

    ``lag_col`` names the lag column; by default ``lag_ms_others`` (the loop lag each save
    got from the other tasks while it ran) when the capture has it, else
    ``lag_ms_measured`` (the loop lag measured around the save).
    """
    requires(capture, "mode", "yields", "duration_ms")
    col = lab_lag_column(capture) if lag_col is None else lag_col
    requires(capture, col, by="fit_lab")
    y = capture[capture["mode"] == "yielding"]
    if len(y) < 3:
        raise UsageError(f"fit_lab: need at least 3 yielding saves in the capture, got {len(y)}")
    return fit_duration(y, lag_col=col, level=level)


def lab_lag_column(capture: pd.DataFrame) -> str:
    """The lag column :func:`fit_lab` uses: ``lag_ms_others`` when present, else ``lag_ms_measured``."""
    return "lag_ms_others" if "lag_ms_others" in capture.columns else "lag_ms_measured"


# --------------------------------------------------------------------------- decisions

#: how far from one loop pass per yield still counts as "one pass" (±, in passes per yield)
PASS_MARGIN = 0.25

YIELD_COST_RULE = (
    "equivalence to one pass: 'yes' when the whole confidence interval of loop passes per yield lies within "
    "1 ± margin, 'no' when it lies wholly outside that band (then each yield costs measurably more or fewer "
    "passes), 'inconclusive' when it straddles an edge of the band (too few or too scattered points)"
)


def _passes_decision(question: str, est: float, ci: tuple[float, float], level: float, margin: float,
                     what: str, evidence: dict[str, object], caveats: list[str]) -> Decision:
    lo, hi = ci
    band = (1.0 - margin, 1.0 + margin)
    finite = all(math.isfinite(v) for v in (est, lo, hi))
    inside = finite and band[0] <= lo and hi <= band[1]
    outside = finite and (hi < band[0] or lo > band[1])
    ci_text = f"{level:.0%} CI {lo:.2f} to {hi:.2f}"
    if not finite:
        because_inc = f"{what} give no finite estimate of passes per yield"
    elif lo <= 0 <= hi:
        because_inc = (f"{what}: {est:.2f} loop passes per yield ({ci_text}); the interval includes 0, so "
                       f"these data cannot tell one loop pass per yield from none")
    else:
        because_inc = (f"{what}: {est:.2f} loop passes per yield ({ci_text}); the interval straddles the edge "
                       f"of {band[0]:.2f} to {band[1]:.2f}, so neither one pass nor a different cost is shown")
    side = "more" if finite and lo > band[1] else "fewer"
    caveats = [*caveats, f"rule: yes when the whole interval lies within 1 ± {margin:g} passes per yield, no when "
                         f"it lies wholly outside, otherwise inconclusive"]
    return decide(
        question, yes=inside, no=outside,
        because_yes=(f"{what}: {est:.2f} loop passes per yield ({ci_text}), within {band[0]:.2f} to "
                     f"{band[1]:.2f}: each yield waits about one loop pass"),
        because_no=(f"{what}: {est:.2f} loop passes per yield ({ci_text}), {side} than {band[0]:.2f} to "
                    f"{band[1]:.2f}: each yield costs {side} than one loop pass"),
        because_inconclusive=because_inc,
        evidence={"passes_per_yield": est, "ci_lo": lo, "ci_hi": hi, "level": level, "margin": margin,
                  **evidence},
        caveats=tuple(caveats),
    )


def yield_cost_decision(fit: DurationFit, margin: float = PASS_MARGIN, what: str = "the fit") -> Decision:
    """Does each yield cost one loop pass? From a :class:`DurationFit`'s slope and its interval.

    The slope of duration against yields × loop lag is the loop passes one yield costs.
    Rule (:data:`YIELD_COST_RULE`): yes when the slope's CI lies within ``1 ± margin``,
    no when it lies wholly outside, inconclusive otherwise. Evidence: passes_per_yield,
    ci_lo, ci_hi, level, margin, n_points, r2, intercept_ms.
    """
    caveats = []
    if fit.dof < 3:
        caveats.append(f"only {fit.n} points ({fit.dof} degrees of freedom): the interval rests on the line "
                       f"being the right model")
    if math.isfinite(fit.r2) and fit.r2 < 0.9:
        caveats.append(f"the line explains only {fit.r2:.0%} of the variance in duration")
    return _passes_decision(
        "Does each yield cost one loop pass?", fit.slope, fit.slope_ci, fit.level, margin,
        f"{what} ({fit.n} saves, R² {fit.r2:.3f})",
        {"n_points": fit.n, "r2": fit.r2, "intercept_ms": fit.intercept_ms}, caveats)


def passes_per_yield_decision(capture: pd.DataFrame, level: float = 0.95,
                              margin: float = PASS_MARGIN) -> Decision:
    """Does each yield cost one loop pass, counted directly? Loop passes a probe counted per yield.

    Uses the yielding saves with at least one yield: the mean of passes / yields with a
    Student t interval over saves, judged by :data:`YIELD_COST_RULE`. Evidence:
    passes_per_yield, ci_lo, ci_hi, level, margin, n_saves, min_ratio, max_ratio.
    """
    requires(capture, "mode", "yields", "passes")
    y = capture[(capture["mode"] == "yielding") & (capture["yields"] > 0)]
    r = (y["passes"] / y["yields"]).to_numpy(float)
    n = len(r)
    caveats: list[str] = []
    if n >= 2:
        from scipy import stats

        mean, sd = float(r.mean()), float(r.std(ddof=1))
        half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
        ci = (mean - half, mean + half)
        if sd == 0:
            caveats.append(f"all {n} saves gave the same ratio, so the interval has zero width")
    else:
        mean = float(r[0]) if n else float("nan")
        ci = (float("nan"), float("nan"))
        caveats.append(f"{n} yielding save(s) with yields: no interval")
    return _passes_decision(
        "Does each yield cost one loop pass (passes counted during the save)?", mean, ci, level, margin,
        f"the probe's count over {n} yielding saves",
        {"n_saves": n, "min_ratio": float(r.min()) if n else float("nan"),
         "max_ratio": float(r.max()) if n else float("nan")}, caveats)


@dataclass(frozen=True)
class OffloadComparison:
    """How each save mode's duration responds to sections × loop lag in a capture.

    Fields: yielding_slope_ms, offloaded_slope_ms (ms of duration per section·ms of
    measured lag, OLS over all saves of the mode) and their CIs at ``level``
    (yielding_slope_ci, offloaded_slope_ci; NaN when the mode has fewer than 3 saves or
    one sections × lag value), slope_ratio (offloaded / yielding), yielding_spread_ms,
    offloaded_spread_ms (90th − 10th percentile of duration), spread_ratio (offloaded /
    yielding), worst_sections, worst_hog_ms (the heaviest point: the largest section
    count at the largest ``hog_ms``; NaN when the capture has no ``hog_ms``, then each
    mode's saves in its top quarter of measured lag at the largest section count),
    worst_lag_ms (median measured lag there), yielding_worst_ms, offloaded_worst_ms
    (median durations there), speedup (yielding_worst_ms / offloaded_worst_ms),
    offloaded_passes (median of offloaded duration / measured lag over loaded runs:
    ``hog_ms > 0``, or without ``hog_ms`` lag at or above the offloaded saves' median
    lag; NaN when there are none), level.
    """

    yielding_slope_ms: float
    offloaded_slope_ms: float
    slope_ratio: float
    yielding_spread_ms: float
    offloaded_spread_ms: float
    spread_ratio: float
    worst_sections: int
    worst_hog_ms: float
    yielding_worst_ms: float
    offloaded_worst_ms: float
    speedup: float
    offloaded_passes: float
    yielding_slope_ci: tuple[float, float] = (math.nan, math.nan)
    offloaded_slope_ci: tuple[float, float] = (math.nan, math.nan)
    worst_lag_ms: float = math.nan
    level: float = 0.95


def offload_comparison(capture: pd.DataFrame, level: float = 0.95) -> OffloadComparison:
    """Compare yielding and offloaded saves of a capture (see :class:`OffloadComparison`)."""
    requires(capture, "mode", "sections", "lag_ms_measured", "duration_ms")
    missing = [m for m in _SAVE_MODES if not (capture["mode"] == m).any()]
    if missing:
        raise UsageError(f"offload_comparison: the capture has no saves in mode(s) {missing}; "
                         f"need both {list(_SAVE_MODES)}")
    out: dict[str, float] = {}
    cis: dict[str, tuple[float, float]] = {}
    for mode in _SAVE_MODES:
        d = capture[capture["mode"] == mode]
        x = d["sections"].to_numpy(float) * d["lag_ms_measured"].to_numpy(float)
        if len(d) >= 3 and np.ptp(x) > 0:
            o = _ols(x, d["duration_ms"].to_numpy(float))
            slope, ci = o.slope, _ci(o.slope, float(np.sqrt(o.cov[1, 1])), o.dof, level)
        else:
            slope, ci = float("nan"), (float("nan"), float("nan"))
        out[f"{mode}_slope"], cis[mode] = slope, (float(ci[0]), float(ci[1]))
        q10, q90 = np.quantile(d["duration_ms"], [0.1, 0.9])
        out[f"{mode}_spread"] = float(q90 - q10)
    ws = int(capture["sections"].max())
    at_s = capture[capture["sections"] == ws]
    if "hog_ms" in capture.columns:
        wh = float(at_s["hog_ms"].max())
        at = at_s[at_s["hog_ms"] == wh]
        loaded = capture[(capture["mode"] == "offloaded") & (capture["hog_ms"] > 0)]
    else:
        wh = float("nan")
        top = at_s.groupby("mode")["lag_ms_measured"].transform(lambda v: v.quantile(0.75))
        at = at_s[at_s["lag_ms_measured"] >= top]
        off = capture[capture["mode"] == "offloaded"]
        loaded = off[(off["lag_ms_measured"] >= off["lag_ms_measured"].median()) & (off["lag_ms_measured"] > 0)]
    yw = float(at.loc[at["mode"] == "yielding", "duration_ms"].median())
    ow = float(at.loc[at["mode"] == "offloaded", "duration_ms"].median())
    passes = float((loaded["duration_ms"] / loaded["lag_ms_measured"]).median()) if len(loaded) else float("nan")

    def ratio(a: float, b: float) -> float:
        return a / b if b != 0 and math.isfinite(b) else float("nan")

    return OffloadComparison(
        yielding_slope_ms=out["yielding_slope"], offloaded_slope_ms=out["offloaded_slope"],
        slope_ratio=ratio(out["offloaded_slope"], out["yielding_slope"]),
        yielding_spread_ms=out["yielding_spread"], offloaded_spread_ms=out["offloaded_spread"],
        spread_ratio=ratio(out["offloaded_spread"], out["yielding_spread"]),
        worst_sections=ws, worst_hog_ms=wh, yielding_worst_ms=yw, offloaded_worst_ms=ow,
        speedup=ratio(yw, ow), offloaded_passes=passes,
        yielding_slope_ci=cis["yielding"], offloaded_slope_ci=cis["offloaded"],
        worst_lag_ms=float(at["lag_ms_measured"].median()), level=level,
    )


def offload_decision(cmp: OffloadComparison) -> Decision:
    """Does offloading the file work take the save off the sections × loop-lag path?

    Rule: the slopes of duration against sections × measured lag, with their CIs.
    'yes' when the yielding slope's CI is above 0 and the offloaded slope's CI lies wholly
    below it (disjoint); 'no' when the offloaded slope's CI lies at or above the yielding
    slope's estimate (the offloaded save grows at least as fast); 'inconclusive'
    otherwise (overlapping intervals, too few saves, or yielding saves that do not grow
    with sections × lag in this capture). Evidence: both slopes and CIs, speedup and
    durations at the heaviest point, offloaded_passes.
    """
    ys, oslope = cmp.yielding_slope_ms, cmp.offloaded_slope_ms
    (ylo, yhi), (olo, ohi) = cmp.yielding_slope_ci, cmp.offloaded_slope_ci
    finite = all(math.isfinite(v) for v in (ys, oslope, ylo, yhi, olo, ohi))
    grows = finite and ylo > 0
    yes = grows and intervals_disjoint(cmp.yielding_slope_ci, cmp.offloaded_slope_ci) and ohi < ylo
    no = finite and olo >= ys
    lvl = f"{cmp.level:.0%} CI"
    at = (f"{cmp.worst_sections} sections, hog {cmp.worst_hog_ms:g} ms" if math.isfinite(cmp.worst_hog_ms)
          else f"{cmp.worst_sections} sections, measured lag about {cmp.worst_lag_ms:.1f} ms")
    slopes = (f"the yielding save grows {ys:.3g} ms per section·ms of loop lag ({lvl} {ylo:.3g} to {yhi:.3g}), "
              f"the offloaded one {oslope:.3g} ({lvl} {olo:.3g} to {ohi:.3g})")
    heavy = (f"; at the heaviest point ({at}) {cmp.yielding_worst_ms:.0f} ms against "
             f"{cmp.offloaded_worst_ms:.1f} ms" if math.isfinite(cmp.speedup) else "")
    if not finite:
        inc = "one of the modes has too few saves or a single sections × lag value, so no slope with an interval"
    elif not grows:
        inc = (f"{slopes}: the yielding saves themselves do not grow measurably with sections × lag in this "
               f"capture, so there is nothing for offloading to remove")
    else:
        inc = f"{slopes}: the intervals overlap"
    return decide(
        "Does offloading the file work take the save off the sections × loop-lag path?", yes=yes, no=no,
        because_yes=f"{slopes}: the intervals do not overlap{heavy}",
        because_no=f"{slopes}: the offloaded save grows at least as fast{heavy}",
        because_inconclusive=inc + heavy,
        evidence={"yielding_slope_ms": ys, "yielding_slope_ci": list(cmp.yielding_slope_ci),
                  "offloaded_slope_ms": oslope, "offloaded_slope_ci": list(cmp.offloaded_slope_ci),
                  "speedup": cmp.speedup, "yielding_worst_ms": cmp.yielding_worst_ms,
                  "offloaded_worst_ms": cmp.offloaded_worst_ms, "worst_sections": cmp.worst_sections,
                  "offloaded_passes": cmp.offloaded_passes},
    )


def lab_summary(capture: pd.DataFrame) -> pd.DataFrame:
    """Medians over repeats per (mode, sections, hog_ms) — per (mode, sections) without ``hog_ms``.

    Returns columns mode, sections, hog_ms (when the capture has it), runs, yields,
    lag_ms_measured, duration_ms, and passes, fs_ms when the capture has them.
    """
    requires(capture, "mode", "sections", "duration_ms", "yields", "lag_ms_measured")
    keys = ["mode", "sections"] + (["hog_ms"] if "hog_ms" in capture.columns else [])
    aggs = {"runs": ("duration_ms", "size"), "yields": ("yields", "median"),
            "lag_ms_measured": ("lag_ms_measured", "median"), "duration_ms": ("duration_ms", "median")}
    for c in ("passes", "fs_ms"):
        if c in capture.columns:
            aggs[c] = (c, "median")
    return capture.groupby(keys, sort=True).agg(**aggs).reset_index()


__all__ = [
    "CI_BASIS", "PASS_MARGIN", "YIELD_COST_RULE", "DurationFit", "EmpiricalLag", "LognormalLag",
    "OffloadComparison", "PUBLISHED_SCHEMA", "TimeoutRisk", "YieldsFit", "as_lag_distribution",
    "fit_band", "fit_duration", "fit_lab", "fit_yields", "lab_lag_column", "lab_summary", "lag_threshold_ms",
    "offload_comparison", "offload_decision", "passes_per_yield_decision", "predict_duration_ms", "predicted_yields", "prediction_grid",
    "read_published", "risk_curve", "slowest_lag_ms", "timeout_risk", "weigh_options", "yield_cost_decision",
]
