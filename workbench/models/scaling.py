"""Scaling laws for timing tables: power-law exponents, speed-ups with their noise floor, USL.

Written for the two-phase-commit bank study (three actor designs timed over a
grid of banks × clients per bank, and a "cores" table) but usable on any table
of times against a work size:

- loaders for the tidy tables (:func:`read_iteration_times`,
  :func:`read_cores_times`, :func:`read_lines_of_code`), read by
  :func:`workbench.tables.read_table` into their documented schemas; unparseable
  or negative values, empty text and repeated keys are kept in ``frame.attrs["rejects"]``;
- :func:`fit_power_law` — ``time_s = a · transfers^b`` fitted in log-log space,
  with cells under a stated timer-resolution floor excluded and counted;
- :func:`speedups` — per-cell time ratios between two designs with the interval
  the ±half-resolution rounding of each printed time allows;
- :func:`compare_iterations` — whether two designs differ, decided by confidence
  intervals, never by eye;
- :func:`fit_usl` — Gunther's Universal Scalability Law with covariance and
  bootstrap uncertainty, honest when κ is not identifiable;
- :func:`demand_hypotheses` — does a "fixed demand" table behave like fixed
  demand, or like the growing demand of the grid?
- :func:`bottlenecks` — the busiest actor of each simulated run from per-actor metrics;
- decisions with their evidence (:class:`~workbench.verdicts.Decision`):
  :func:`compare_exponents` (do groups scale differently; is a pooled exponent
  warranted), :func:`compare_designs` (Holm-corrected design comparisons),
  :func:`bottleneck_agreement` (one bottleneck kind per cell, or cells that disagree),
  :func:`usl_decision` (does the USL describe a cores table) and
  :func:`cores_reading` (fixed or growing demand).
"""
from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd

from ..errors import SchemaError, UsageError
from ..schema import Column, Schema, requires, validate
from ..sources import Source
from ..tables import AtLeast, NonEmpty, Rule, read_table
from ..verdicts import Decision

#: numbers given as a list, an array or a pandas Series
Values = Sequence[float] | np.ndarray | pd.Series

#: The printed resolution of the published timings (three decimals of a second).
RESOLUTION_S = 0.001
#: Default floor for fits and comparisons: 10 timer ticks, so a cell's rounding
#: error is at most ±5 % and a ratio of two cells at most about ±10 %.
DEFAULT_MIN_TIME_S = 10 * RESOLUTION_S

ITERATION_TIMES_SCHEMA = Schema(
    name="iteration_times",
    doc="Wall time of one full simulation (every client pays every other client 1 unit), "
        "per design iteration and grid cell; the mean of the runs behind each published figure.",
    columns=(
        Column("iteration", "int", doc="design iteration: 1 naive, 2 Transaction actor, 3 Account actor"),
        Column("banks", "int", doc="number of bank actors"),
        Column("clients_per_bank", "int", doc="client actors per bank"),
        Column("time_s", "float", "s", "wall time of the whole run (printed to 0.001 s)"),
        Column("clients", "int", doc="banks × clients_per_bank"),
        Column("transfers", "int", doc="clients × (clients − 1): one transfer per ordered pair"),
    ),
    extra_columns_allowed=False,
)

CORES_TIMES_SCHEMA = Schema(
    name="cores_times",
    doc="Wall time per design iteration against the number of cores the VM was given, "
        "published as a fixed demand (8 banks × 10 clients).",
    columns=(
        Column("iteration", "int", doc="design iteration"),
        Column("cores", "int", doc="cores allocated (as published)"),
        Column("time_s", "float", "s", "wall time of the whole run (printed to 0.001 s)"),
    ),
    extra_columns_allowed=False,
)

LINES_OF_CODE_SCHEMA = Schema(
    name="lines_of_code",
    doc="Non-empty lines of code of each actor module per design iteration.",
    columns=(
        Column("iteration", "int", doc="design iteration"),
        Column("actor", "string", doc="actor kind: coordinator, bank, client, transaction, account"),
        Column("lines", "int", "lines", "non-empty lines of code"),
    ),
    extra_columns_allowed=False,
)


# --------------------------------------------------------------------------- loading

#: the columns of ``iteration_times.csv`` as read (``clients`` and ``transfers`` are derived)
_ITERATION_INPUT = Schema(name="iteration_times", columns=ITERATION_TIMES_SCHEMA.columns[:4],
                          doc=ITERATION_TIMES_SCHEMA.doc)


def _table_rules(schema: Schema) -> dict[str, Rule]:
    """Every number of a timing table is ≥ 0 and every text cell is non-empty."""
    return {c.name: NonEmpty() if c.kind == "string" else AtLeast(0) for c in schema.columns if c.kind != "bool"}


def read_iteration_times(source: Source, strict: bool = False) -> pd.DataFrame:
    """Load the banks × clients-per-bank timing table (:data:`ITERATION_TIMES_SCHEMA`).

    Input columns ``iteration, banks, clients_per_bank, time_s`` (a path, plain
    or compressed, a stream or the CSV text; a path or text may give ``time_ms``
    instead of ``time_s``, converted to seconds); adds ``clients`` and ``transfers``.
    Rows with negative numbers, zero banks or clients, or a repeated
    (iteration, banks, clients_per_bank) are kept in ``attrs["rejects"]``.
    """
    df = _read_timing(source, _ITERATION_INPUT, strict, ("iteration", "banks", "clients_per_bank"),
                      _at_least_one("banks", "clients_per_bank"))
    df["clients"] = (df["banks"] * df["clients_per_bank"]).astype("int64")
    df["transfers"] = (df["clients"] * (df["clients"] - 1)).astype("int64")
    return validate(df, ITERATION_TIMES_SCHEMA)


def read_cores_times(source: Source, strict: bool = False) -> pd.DataFrame:
    """Load the time-against-cores table (:data:`CORES_TIMES_SCHEMA`): ``iteration, cores, time_s``
    (or ``time_ms``, converted to seconds)."""
    return _read_timing(source, CORES_TIMES_SCHEMA, strict, ("iteration", "cores"), _at_least_one("cores"))


def read_lines_of_code(source: Source, strict: bool = False) -> pd.DataFrame:
    """Load non-empty lines of code per actor (:data:`LINES_OF_CODE_SCHEMA`): ``iteration, actor, lines``."""
    return read_table(source, LINES_OF_CODE_SCHEMA, strict=strict, rules=_table_rules(LINES_OF_CODE_SCHEMA),
                      key=("iteration", "actor"))


def _read_timing(source: Source, schema: Schema, strict: bool, key: tuple[str, ...],
                 check: Callable[[dict[str, Any]], str | None]) -> pd.DataFrame:
    """:func:`read_table` of a timing table whose time column is ``time_s``, or else ``time_ms``
    (re-read as milliseconds and converted; ``attrs["time_unit"]`` says which was read)."""
    try:
        df = read_table(source, schema, strict=strict, rules=_table_rules(schema), key=key, check=check)
        df.attrs["time_unit"] = "s"
        return df
    except SchemaError as exc:
        if "time_s" not in str(exc) or not isinstance(source, (str, os.PathLike)):
            raise
        ms = Schema(name=schema.name, doc=schema.doc, extra_columns_allowed=schema.extra_columns_allowed,
                    columns=tuple(Column("time_ms", "float", "ms", c.doc) if c.name == "time_s" else c
                                  for c in schema.columns))
        try:
            df = read_table(source, ms, strict=strict, rules=_table_rules(ms), key=key, check=check)
        except SchemaError:
            raise SchemaError(f"{exc} (a time_ms column in milliseconds is accepted instead of time_s)") from None
    attrs = dict(df.attrs)
    df["time_ms"] = df["time_ms"] / 1000.0
    df = df.rename(columns={"time_ms": "time_s"})
    df.attrs.update(attrs)
    df.attrs["time_unit"] = "ms"
    return validate(df, schema)


def _at_least_one(*cols: str) -> Callable[[dict[str, Any]], str | None]:
    """A row check: the named columns must be ≥ 1."""

    def check(row: dict[str, Any]) -> str | None:
        bad = [c for c in cols if int(row[c]) < 1]
        return f"{' and '.join(bad)} must be at least 1" if bad else None

    return check


# --------------------------------------------------------------------------- power law

def _key(value: Any) -> int:
    """A groupby key (a numpy or Python integer) as an int."""
    return int(value)


@dataclass(frozen=True)
class PowerLawFit:
    """``time_s = prefactor_s · work^exponent`` fitted by least squares on logs.

    ``n_used`` cells at or above ``min_time_s`` were fitted, ``n_excluded`` were
    not (below the floor, including printed zeros that have no logarithm).
    ``resid_sd_log`` is the residual standard deviation in natural-log units;
    ``work_min``/``work_max`` the range of the fitted cells.
    """

    label: str
    exponent: float
    exponent_low: float
    exponent_high: float
    exponent_se: float
    prefactor_s: float
    n_used: int
    n_excluded: int
    min_time_s: float
    level: float
    r2: float
    resid_sd_log: float
    work_min: float
    work_max: float

    def predict_s(self, work: float | np.ndarray) -> np.ndarray:
        """Predicted time (s) at the given work (transfers)."""
        return self.prefactor_s * np.asarray(work, dtype=float) ** self.exponent

    def overlaps(self, other: PowerLawFit) -> bool:
        """True when the two exponents' confidence intervals overlap."""
        return not (self.exponent_low > other.exponent_high or other.exponent_low > self.exponent_high)


def fit_power_law(
    work: Values,
    time_s: Values,
    min_time_s: float = DEFAULT_MIN_TIME_S,
    level: float = 0.95,
    label: str = "",
) -> PowerLawFit:
    """Fit ``log time = log a + b · log work`` on cells with ``time_s >= min_time_s``.

    The CI of the exponent is Student-t on the OLS standard error. Raises
    :class:`~workbench.errors.UsageError` when fewer than 3 cells are above the
    floor (no CI possible).
    """
    x = np.asarray(work, dtype=float)
    y = np.asarray(time_s, dtype=float)
    if x.shape != y.shape:
        raise UsageError(f"fit_power_law: work and time_s differ in length ({x.size} vs {y.size})")
    keep = (y >= min_time_s) & (y > 0) & (x > 0)
    n = int(keep.sum())
    if n < 3:
        raise UsageError(f"{label or 'fit'}: only {n} cells at or above the floor min_time_s={min_time_s} s; "
                         "need 3 for a CI")
    lx, ly = np.log(x[keep]), np.log(y[keep])
    if np.ptp(lx) == 0:
        raise UsageError(f"{label or 'fit'}: all fitted cells have the same work; the exponent is undefined "
                         "(expected at least two distinct work values)")
    from scipy import stats

    res = stats.linregress(lx, ly)
    resid = ly - (res.intercept + res.slope * lx)
    dof = n - 2
    sd = float(np.sqrt(np.sum(resid**2) / dof)) if dof > 0 else float("nan")
    t = stats.t.ppf(0.5 + level / 2, dof) if dof > 0 else float("nan")
    return PowerLawFit(
        label=label, exponent=float(res.slope), exponent_low=float(res.slope - t * res.stderr),
        exponent_high=float(res.slope + t * res.stderr), exponent_se=float(res.stderr),
        prefactor_s=float(np.exp(res.intercept)), n_used=n, n_excluded=int((~keep).sum()),
        min_time_s=float(min_time_s), level=level, r2=float(res.rvalue**2), resid_sd_log=sd,
        work_min=float(x[keep].min()), work_max=float(x[keep].max()),
    )


def fit_power_laws(
    times: pd.DataFrame, min_time_s: float = DEFAULT_MIN_TIME_S, level: float = 0.95,
) -> dict[int, PowerLawFit]:
    """One :func:`fit_power_law` of ``time_s`` against ``transfers`` per ``iteration``."""
    requires(times, "iteration", "transfers", "time_s")
    return {
        _key(it): fit_power_law(g["transfers"], g["time_s"], min_time_s, level, label=f"iteration {it}")
        for it, g in times.groupby("iteration", sort=True)
    }


def power_law_table(fits: dict[int, PowerLawFit]) -> pd.DataFrame:
    """The fits as a frame: iteration, exponent, exponent_low, exponent_high, prefactor_s,
    n_used, n_excluded, min_time_s, r2, resid_sd_log."""
    return pd.DataFrame([
        {"iteration": k, "exponent": f.exponent, "exponent_low": f.exponent_low,
         "exponent_high": f.exponent_high, "prefactor_s": f.prefactor_s, "n_used": f.n_used,
         "n_excluded": f.n_excluded, "min_time_s": f.min_time_s, "r2": f.r2, "resid_sd_log": f.resid_sd_log}
        for k, f in fits.items()
    ])


def floor_sensitivity(times: pd.DataFrame, floors_s: Sequence[float], level: float = 0.95) -> pd.DataFrame:
    """Exponents per iteration for several floors: floor_s, iteration, exponent, exponent_low,
    exponent_high, n_used, n_excluded (fits with fewer than 3 cells are left out)."""
    requires(times, "iteration", "transfers", "time_s")
    rows = []
    for floor in floors_s:
        for it, g in times.groupby("iteration", sort=True):
            try:
                f = fit_power_law(g["transfers"], g["time_s"], floor, level)
            except ValueError:
                continue
            rows.append({"floor_s": float(floor), "iteration": _key(it), "exponent": f.exponent,
                         "exponent_low": f.exponent_low, "exponent_high": f.exponent_high,
                         "n_used": f.n_used, "n_excluded": f.n_excluded})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- speed-ups

def speedups(
    times: pd.DataFrame, numerator: int = 1, denominator: int = 2, half_resolution_s: float = RESOLUTION_S / 2,
) -> pd.DataFrame:
    """Per-cell speed-up ``time(numerator) / time(denominator)`` and its rounding noise floor.

    Each printed time is only known to ±``half_resolution_s``; the ratio therefore
    lies in [speedup_low, speedup_high] = [(tn − h)/(td + h), (tn + h)/(td − h)]
    (clipped at 0; unbounded when td ≤ h). Columns: banks, clients_per_bank,
    clients, transfers, time_num_s, time_den_s, speedup, speedup_low, speedup_high,
    rel_uncertainty (half-width / speed-up), defined (td > 0), resolved (the
    interval excludes 1, so the cells differ beyond rounding).
    """
    requires(times, "iteration", "banks", "clients_per_bank", "clients", "transfers", "time_s")
    keys = ["banks", "clients_per_bank", "clients", "transfers"]
    a = times[times["iteration"] == numerator].set_index(keys)["time_s"].rename("time_num_s")
    b = times[times["iteration"] == denominator].set_index(keys)["time_s"].rename("time_den_s")
    if a.empty or b.empty:
        raise UsageError(f"speedups: iterations numerator={numerator} and denominator={denominator} must both be "
                         f"in the table; it has {sorted(int(i) for i in times['iteration'].unique())}")
    df = pd.concat([a, b], axis=1, join="inner").reset_index()
    h = float(half_resolution_s)
    tn, td = df["time_num_s"].to_numpy(), df["time_den_s"].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        sp = np.where(td > 0, tn / np.where(td > 0, td, 1), np.nan)
        low = np.maximum(tn - h, 0) / (td + h)
        high = np.where(td > h, (tn + h) / np.where(td > h, td - h, 1), np.inf)
        rel = np.where(np.isfinite(high) & (sp > 0), (high - low) / 2 / sp, np.inf)
    df["speedup"] = sp
    df["speedup_low"] = low
    df["speedup_high"] = high
    df["rel_uncertainty"] = rel
    df["defined"] = td > 0
    df["resolved"] = (low > 1) | (high < 1)
    return df


def max_speedup(sp: pd.DataFrame) -> pd.Series:
    """The row of :func:`speedups` with the largest defined speed-up."""
    requires(sp, "defined", "speedup")
    d = sp[sp["defined"]]
    if d.empty:
        raise UsageError("max_speedup: no cell has a non-zero denominator time (column 'defined' is all False)")
    return d.loc[cast(Any, d["speedup"].idxmax())]


@dataclass(frozen=True)
class IterationComparison:
    """Whether two iterations' timings differ, judged by confidence intervals.

    ``ratio`` is the geometric mean over the well-measured cells of
    time(a)/time(b) (>1: b is faster), with its Student-t CI; ``exponents_overlap``
    compares the power-law exponents' CIs. ``n_faster``/``n_slower`` count cells
    where b is faster/slower beyond rounding. ``distinguishable`` is True only if
    the ratio CI excludes 1 or the exponent CIs are disjoint; ``reason`` says why.
    """

    a: int
    b: int
    min_time_s: float
    n_cells: int
    ratio: float
    ratio_low: float
    ratio_high: float
    p_value: float
    exponent_a: tuple[float, float, float]
    exponent_b: tuple[float, float, float]
    exponents_overlap: bool
    n_faster: int
    n_slower: int
    distinguishable: bool
    reason: str


def compare_iterations(
    times: pd.DataFrame, a: int = 2, b: int = 3, min_time_s: float = DEFAULT_MIN_TIME_S, level: float = 0.95,
) -> IterationComparison:
    """Do iterations ``a`` and ``b`` differ? Uses only cells where both times are ≥ ``min_time_s``.

    Two tests, both by CI: the geometric-mean ratio of paired cells (t-interval on
    the log ratios) and the overlap of the power-law exponents' CIs (each fitted on
    its own cells above the same floor).
    """
    requires(times, "iteration", "banks", "clients_per_bank", "clients", "transfers", "time_s")
    sp = speedups(times, a, b)
    well = sp[(sp["time_num_s"] >= min_time_s) & (sp["time_den_s"] >= min_time_s)]
    n = len(well)
    if n < 3:
        raise UsageError(f"compare_iterations: only {n} cells have both times ≥ min_time_s={min_time_s} s; "
                         "need 3 to compare")
    d = np.log(well["speedup"].to_numpy())
    m, se = float(d.mean()), float(d.std(ddof=1) / np.sqrt(n))
    from scipy import stats

    t = stats.t.ppf(0.5 + level / 2, n - 1)
    p = float(2 * stats.t.sf(abs(m) / se, n - 1)) if se > 0 else (0.0 if m != 0 else 1.0)
    fa, fb = (fit_power_law(g["transfers"], g["time_s"], min_time_s, level, label=f"iteration {it}")
              for it, g in ((it, times[times["iteration"] == it]) for it in (a, b)))
    overlap = fa.overlaps(fb)
    lo, hi = float(np.exp(m - t * se)), float(np.exp(m + t * se))
    ratio_excludes_one = lo > 1 or hi < 1
    n_faster = int((well["speedup_low"] > 1).sum())
    n_slower = int((well["speedup_high"] < 1).sum())
    distinguishable = ratio_excludes_one or not overlap
    pct = int(round(level * 100))
    parts = [
        f"over {n} cells with both times ≥ {min_time_s:g} s, time({a})/time({b}) has geometric mean "
        f"{np.exp(m):.2f} ({pct} % CI {lo:.2f}–{hi:.2f}, p = {p:.2g}), "
        + ("which excludes 1" if ratio_excludes_one else "which includes 1"),
        f"exponents {fa.exponent:.2f} [{fa.exponent_low:.2f}, {fa.exponent_high:.2f}] vs "
        f"{fb.exponent:.2f} [{fb.exponent_low:.2f}, {fb.exponent_high:.2f}] "
        + ("overlap" if overlap else "do not overlap"),
        f"{n_faster} cell(s) faster and {n_slower} slower beyond rounding",
    ]
    return IterationComparison(
        a=a, b=b, min_time_s=float(min_time_s), n_cells=n, ratio=float(np.exp(m)), ratio_low=lo,
        ratio_high=hi, p_value=p, exponent_a=(fa.exponent, fa.exponent_low, fa.exponent_high),
        exponent_b=(fb.exponent, fb.exponent_low, fb.exponent_high), exponents_overlap=overlap,
        n_faster=n_faster, n_slower=n_slower, distinguishable=bool(distinguishable), reason="; ".join(parts),
    )


def comparison_sensitivity(
    times: pd.DataFrame, floors_s: Sequence[float], a: int = 2, b: int = 3, level: float = 0.95,
) -> pd.DataFrame:
    """:func:`compare_iterations` at several floors: floor_s, n_cells, ratio, ratio_low,
    ratio_high, p_value, exponents_overlap, n_faster, n_slower, distinguishable."""
    requires(times, "iteration", "banks", "clients_per_bank", "clients", "transfers", "time_s")
    rows = []
    for floor in floors_s:
        try:
            c = compare_iterations(times, a, b, floor, level)
        except ValueError:
            continue
        rows.append({"floor_s": float(floor), "n_cells": c.n_cells, "ratio": c.ratio, "ratio_low": c.ratio_low,
                     "ratio_high": c.ratio_high, "p_value": c.p_value, "exponents_overlap": c.exponents_overlap,
                     "n_faster": c.n_faster, "n_slower": c.n_slower, "distinguishable": c.distinguishable})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- USL

def usl_throughput(n: float | np.ndarray, lam: float, sigma: float, kappa: float) -> np.ndarray:
    """Gunther's USL: ``X(N) = λN / (1 + σ(N−1) + κN(N−1))``."""
    n = np.asarray(n, dtype=float)
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def usl_peak(sigma: float, kappa: float) -> float:
    """``N* = sqrt((1 − σ)/κ)``; ``inf`` when κ = 0 (no peak)."""
    if kappa <= 0:
        return math.inf
    return math.sqrt(max(1 - sigma, 0.0) / kappa)


@dataclass(frozen=True)
class USLFit:
    """A Universal Scalability Law fit of throughput against N.

    Point estimates with covariance standard errors (``*_se``) and bootstrap
    percentile intervals (``*_low``/``*_high``, residual bootstrap in log space).
    ``n_star`` is None when κ = 0. ``kappa_identifiable`` is False when the κ
    interval reaches 0 or the data stop before half the estimated peak;
    ``retrograde`` is True when throughput falls within the measured range
    (N* below the largest N). ``rms_log_resid`` measures the fit in log units;
    ``adequate`` is False when it exceeds ``max_rms_log`` (the law does not
    describe the data). ``at_bounds`` names parameters stuck at a bound (their
    covariance SE is then meaningless). ``note`` says all of it in words.
    """

    lam: float
    sigma: float
    kappa: float
    lam_se: float
    sigma_se: float
    kappa_se: float
    lam_low: float
    lam_high: float
    sigma_low: float
    sigma_high: float
    kappa_low: float
    kappa_high: float
    n_star: float | None
    n_star_low: float | None
    n_star_high: float | None
    n_min: float
    n_max: float
    n_points: int
    kappa_identifiable: bool
    retrograde: bool
    rms_log_resid: float
    adequate: bool
    at_bounds: tuple[str, ...]
    note: str

    def predict(self, n: float | np.ndarray) -> np.ndarray:
        """Fitted throughput at N."""
        return usl_throughput(n, self.lam, self.sigma, self.kappa)

    def as_dict(self) -> dict[str, object]:
        """σ, κ, λ, N* and the flags as plain values (for findings)."""
        return {"sigma": self.sigma, "kappa": self.kappa, "lambda": self.lam, "n_star": self.n_star,
                "kappa_identifiable": self.kappa_identifiable, "retrograde": self.retrograde,
                "adequate": self.adequate}


def _usl_fit_once(n: np.ndarray, x: np.ndarray, p0: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Least squares on log throughput (relative errors), σ ∈ [0, 1], κ ≥ 0, λ > 0.

    Tries several starting points (or only ``p0`` when given) and keeps the best.
    """

    def logusl(nn: np.ndarray, loglam: float, s: float, k: float) -> np.ndarray:
        return loglam + np.log(nn) - np.log1p(s * (nn - 1) + k * nn * (nn - 1))

    def jac(nn: np.ndarray, loglam: float, s: float, k: float) -> np.ndarray:  # (exact: no finite differences)
        d = 1 + s * (nn - 1) + k * nn * (nn - 1)
        return np.column_stack([np.ones_like(nn), -(nn - 1) / d, -nn * (nn - 1) / d])

    from scipy import optimize

    y = np.log(x)
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    lam0 = float(np.log(np.max(x / n)))
    starts = [np.asarray(p0, dtype=float)] if p0 is not None else [
        np.array([lam0, s0, k0]) for s0, k0 in ((0.01, 1e-4), (0.1, 1e-2), (0.5, 1.0), (0.9, 100.0))]
    for start in starts:
        start = np.clip(start, [-np.inf, 0, 0], [np.inf, 1, np.inf])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                p, cov = optimize.curve_fit(logusl, n, y, p0=start, jac=jac,
                                            bounds=([-np.inf, 0, 0], [np.inf, 1, np.inf]), maxfev=20000)
            except (RuntimeError, ValueError):
                continue
        sse = float(np.sum((y - logusl(n, *p)) ** 2))
        if best is None or sse < best[0]:
            best = (sse, p, cov)
    if best is None:
        raise UsageError("fit_usl: the USL fit did not converge from any starting point; "
                         "expected throughputs a USL curve can describe")
    return best[1], best[2]


def fit_usl(
    n: Values,
    throughput: Values,
    n_boot: int = 200,
    level: float = 0.95,
    seed: int = 0,
    max_rms_log: float = 0.25,
) -> USLFit:
    """Fit the USL to throughput against N (≥ 4 distinct N) with honest uncertainty.

    Fitted on log throughput (relative errors, as timings are), with σ ∈ [0, 1],
    κ ≥ 0 and λ free (not forced to X(1)). Intervals come from ``n_boot``
    residual-bootstrap refits; SEs from the fit's covariance.
    """
    nn = np.asarray(n, dtype=float)
    xx = np.asarray(throughput, dtype=float)
    ok = np.isfinite(nn) & np.isfinite(xx) & (nn > 0) & (xx > 0)
    nn, xx = nn[ok], xx[ok]
    if np.unique(nn).size < 4:
        raise UsageError(f"fit_usl: the USL has 3 parameters; need at least 4 distinct N with positive throughput, "
                         f"got {np.unique(nn).size}")
    p, cov = _usl_fit_once(nn, xx)
    fitted = p[0] + np.log(nn) - np.log1p(p[1] * (nn - 1) + p[2] * nn * (nn - 1))
    resid = np.log(xx) - fitted
    rms = float(np.sqrt(np.mean(resid**2)))
    with np.errstate(invalid="ignore"):
        se = np.sqrt(np.abs(np.diag(cov))) if np.all(np.isfinite(cov)) else np.full(3, np.nan)
    lam, sigma, kappa = float(np.exp(p[0])), float(p[1]), float(p[2])
    sigma = 0.0 if sigma < 1e-12 else sigma  # solver round-off at the σ = 0 bound
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(max(0, n_boot)):
        y_b = fitted + rng.choice(resid, size=resid.size, replace=True)
        try:
            pb, _ = _usl_fit_once(nn, np.exp(y_b), p0=p)
        except ValueError:
            continue
        boots.append(pb)
    q = (0.5 - level / 2, 0.5 + level / 2)
    if len(boots) >= 20:
        b = np.array(boots)
        lam_lo, lam_hi = np.exp(np.quantile(b[:, 0], q))
        s_lo, s_hi = np.quantile(b[:, 1], q)
        k_lo, k_hi = np.quantile(b[:, 2], q)
        stars = np.array([usl_peak(s, k) for s, k in b[:, 1:]])
        ns_lo, ns_hi = np.quantile(stars, q)
    else:
        lam_lo = lam_hi = s_lo = s_hi = k_lo = k_hi = ns_lo = ns_hi = float("nan")
    n_star = usl_peak(sigma, kappa)
    tol = 1e-9
    at_bounds = tuple(name for name, v, lo, hi in (("sigma", sigma, 0, 1), ("kappa", kappa, 0, np.inf))
                      if abs(v - lo) < tol or abs(v - hi) < tol)
    n_max, n_min = float(nn.max()), float(nn.min())
    reaches_peak = math.isfinite(n_star) and n_max >= n_star / 2
    interval_clear_of_zero = bool(np.isfinite(k_lo) and k_lo > 1e-6 * kappa)
    kappa_identifiable = bool(kappa > 0 and interval_clear_of_zero and reaches_peak)
    retrograde = bool(math.isfinite(n_star) and n_star < n_max)
    adequate = rms <= max_rms_log
    notes = []
    if not kappa_identifiable:
        why = []
        if kappa <= 0 or not interval_clear_of_zero:
            why.append(f"its {int(level * 100)} % interval reaches 0")
        if not reaches_peak:
            why.append(f"the data stop at N = {n_max:g}, well before the implied peak"
                       + (f" N* ≈ {n_star:.3g}" if math.isfinite(n_star) else " (none)"))
        notes.append("κ is not identifiable: " + " and ".join(why))
    if retrograde:
        notes.append(f"retrograde: throughput peaks at N* = {n_star:.3g} and falls beyond it "
                     f"({'before the first added unit' if n_star < max(n_min, 1) + 1 else 'inside the measured range'})")
    if at_bounds:
        notes.append(f"{', '.join(at_bounds)} at a bound (covariance SE not meaningful there)")
    if not adequate:
        notes.append(f"poor fit: RMS log residual {rms:.2f} (> {max_rms_log}); the USL does not describe these data")
    finite = np.isfinite
    return USLFit(
        lam=lam, sigma=sigma, kappa=kappa, lam_se=float(lam * se[0]), sigma_se=float(se[1]), kappa_se=float(se[2]),
        lam_low=float(lam_lo), lam_high=float(lam_hi), sigma_low=float(s_lo), sigma_high=float(s_hi),
        kappa_low=float(k_lo), kappa_high=float(k_hi),
        n_star=float(n_star) if math.isfinite(n_star) else None,
        n_star_low=float(ns_lo) if finite(ns_lo) else None, n_star_high=float(ns_hi) if finite(ns_hi) else None,
        n_min=n_min, n_max=n_max, n_points=int(nn.size), kappa_identifiable=kappa_identifiable,
        retrograde=retrograde, rms_log_resid=rms, adequate=bool(adequate), at_bounds=at_bounds,
        note="; ".join(notes) if notes else "σ and κ identified; the peak lies within or near the data",
    )


def cores_throughput(cores: pd.DataFrame, banks: int = 8, clients_per_bank: int = 10,
                     min_time_s: float = RESOLUTION_S) -> pd.DataFrame:
    """Throughput of a fixed demand against cores: adds ``transfers`` (the fixed demand,
    clients × (clients − 1)), ``throughput_per_s`` (transfers / time_s; NaN when
    time_s < ``min_time_s``) and ``below_floor``."""
    requires(cores, "cores", "time_s")
    clients = banks * clients_per_bank
    df = cores.copy()
    df["transfers"] = clients * (clients - 1)
    below = df["time_s"] < min_time_s
    df["throughput_per_s"] = np.where(below, np.nan, df["transfers"] / df["time_s"].where(~below, 1.0))
    df["below_floor"] = below
    return df


def usl_by_iteration(thr: pd.DataFrame, n_boot: int = 200, seed: int = 0) -> dict[int, USLFit]:
    """:func:`fit_usl` of ``throughput_per_s`` against ``cores`` for each iteration."""
    requires(thr, "iteration", "cores", "throughput_per_s")
    out = {}
    for it, g in thr.groupby("iteration", sort=True):
        g = g[g["throughput_per_s"].notna()]
        out[_key(it)] = fit_usl(g["cores"], g["throughput_per_s"], n_boot=n_boot, seed=seed)
    return out


def usl_table(fits: dict[int, USLFit]) -> pd.DataFrame:
    """USL fits as a frame: iteration, lam_per_s, sigma, sigma_low, sigma_high, kappa, kappa_low,
    kappa_high, n_star, kappa_identifiable, retrograde, rms_log_resid, adequate, note."""
    return pd.DataFrame([
        {"iteration": k, "lam_per_s": f.lam, "sigma": f.sigma, "sigma_low": f.sigma_low, "sigma_high": f.sigma_high,
         "kappa": f.kappa, "kappa_low": f.kappa_low, "kappa_high": f.kappa_high, "n_star": f.n_star,
         "kappa_identifiable": f.kappa_identifiable, "retrograde": f.retrograde,
         "rms_log_resid": f.rms_log_resid, "adequate": f.adequate, "note": f.note}
        for k, f in fits.items()
    ])


def time_growth_exponent(cores: pd.DataFrame, min_time_s: float = DEFAULT_MIN_TIME_S) -> dict[int, PowerLawFit]:
    """How fast time grows with the cores column: ``time_s ∝ cores^b`` per iteration.

    The USL's response time ``R(N) = (1 + σ(N−1) + κN(N−1))/λ`` grows at most like
    N², so an exponent well above 2 is a growth the USL cannot represent.
    """
    requires(cores, "iteration", "cores", "time_s")
    return {_key(it): fit_power_law(g["cores"], g["time_s"], min_time_s, label=f"iteration {it}")
            for it, g in cores.groupby("iteration", sort=True)}


def demand_hypotheses(
    cores: pd.DataFrame,
    fits: dict[int, PowerLawFit],
    fixed_clients: int = 80,
    clients_per_core: int = 8,
    min_time_s: float = DEFAULT_MIN_TIME_S,
) -> pd.DataFrame:
    """Test two readings of the cores table against the grid's power laws.

    - ``fixed demand``: every column runs ``fixed_clients`` clients, so the grid fit
      predicts one constant time per iteration;
    - ``demand grows``: column N actually ran ``clients_per_core × N`` clients (what
      the table looks like if the loop variable changed the workload), so the grid
      fit predicts ``a · (8N(8N − 1))^b``.

    Only cells with time ≥ ``min_time_s`` count. Columns: iteration, hypothesis,
    n_cells, rms_log_error (natural-log units), median_ratio (observed / predicted),
    within_2x (share of cells within a factor 2 of the prediction).
    """
    requires(cores, "iteration", "cores", "time_s")
    rows = []
    for it, g in cores.groupby("iteration", sort=True):
        g = g[g["time_s"] >= min_time_s]
        if g.empty or _key(it) not in fits:
            continue
        f = fits[_key(it)]
        clients = {"fixed demand": np.full(len(g), float(fixed_clients)),
                   "demand grows": clients_per_core * g["cores"].to_numpy(dtype=float)}
        for hyp, c in clients.items():
            pred = f.predict_s(c * (c - 1))
            lr = np.log(g["time_s"].to_numpy() / pred)
            rows.append({"iteration": _key(it), "hypothesis": hyp, "n_cells": int(len(g)),
                         "rms_log_error": float(np.sqrt(np.mean(lr**2))),
                         "median_ratio": float(np.exp(np.median(lr))),
                         "within_2x": float(np.mean(np.abs(lr) <= np.log(2)))})
    return pd.DataFrame(rows, columns=["iteration", "hypothesis", "n_cells", "rms_log_error", "median_ratio",
                                       "within_2x"])


def demand_predictions(
    cores: pd.DataFrame,
    fits: dict[int, PowerLawFit],
    fixed_clients: int = 80,
    clients_per_core: int = 8,
) -> pd.DataFrame:
    """Per cores-table cell, the grid power law's predicted time under both readings
    (see :func:`demand_hypotheses`). Columns: iteration, cores, time_s,
    fixed_demand_s, demand_grows_s."""
    requires(cores, "iteration", "cores", "time_s")
    rows = []
    for _, r in cores.iterrows():
        it = int(r["iteration"])
        if it not in fits:
            continue
        c = clients_per_core * float(r["cores"])
        rows.append({"iteration": it, "cores": int(r["cores"]), "time_s": float(r["time_s"]),
                     "fixed_demand_s": float(fits[it].predict_s(fixed_clients * (fixed_clients - 1))),
                     "demand_grows_s": float(fits[it].predict_s(c * (c - 1)))})
    return pd.DataFrame(rows, columns=["iteration", "cores", "time_s", "fixed_demand_s", "demand_grows_s"])


def power_law_lines(fits: dict[int, PowerLawFit], points: int = 50) -> pd.DataFrame:
    """Fitted curves for drawing over each fit's own range of work: iteration, work, time_s."""
    parts = []
    for k, f in fits.items():
        w = np.geomspace(f.work_min, f.work_max, points)
        parts.append(pd.DataFrame({"iteration": k, "work": w, "time_s": f.predict_s(w)}))
    return pd.concat(parts, ignore_index=True)


def usl_curves(fits: dict[int, USLFit], n_min: float, n_max: float, points: int = 100) -> pd.DataFrame:
    """Fitted USL throughput for drawing: iteration, n, throughput_per_s."""
    n = np.linspace(n_min, n_max, points)
    return pd.concat([pd.DataFrame({"iteration": k, "n": n, "throughput_per_s": f.predict(n)})
                      for k, f in fits.items()], ignore_index=True)


def grid_matches(cores: pd.DataFrame, times: pd.DataFrame, min_time_s: float = DEFAULT_MIN_TIME_S,
                 clients_per_core: int = 8) -> pd.DataFrame:
    """Cells of the cores table that have a grid cell with the same client count (``clients_per_core`` × N).

    Columns: iteration, cores, clients, time_s (cores table), grid_time_s (mean of the
    grid cells with that many clients), ratio (time_s / grid_time_s), both_measured
    (both ≥ ``min_time_s``).
    """
    requires(cores, "iteration", "cores", "time_s")
    requires(times, "iteration", "clients", "time_s")
    g = times.groupby(["iteration", "clients"], as_index=False).agg(grid_time_s=("time_s", "mean"))
    c = cores.copy()
    c["clients"] = clients_per_core * c["cores"]
    m = c.merge(g, on=["iteration", "clients"], how="inner")
    m["ratio"] = m["time_s"] / m["grid_time_s"]
    m["both_measured"] = (m["time_s"] >= min_time_s) & (m["grid_time_s"] >= min_time_s)
    return m[["iteration", "cores", "clients", "time_s", "grid_time_s", "ratio", "both_measured"]]


# --------------------------------------------------------------------------- lines of code

def loc_summary(loc: pd.DataFrame) -> pd.DataFrame:
    """Per iteration: actors, total_lines, mean_lines_per_actor, max_lines, total_change_pct
    (against the first iteration), mean_change_pct."""
    requires(loc, "iteration", "lines")
    g = loc.groupby("iteration", sort=True)["lines"]
    df = pd.DataFrame({"actors": g.size(), "total_lines": g.sum(), "mean_lines_per_actor": g.mean(),
                       "max_lines": g.max()}).reset_index()
    first = df.iloc[0]
    df["total_change_pct"] = 100 * (df["total_lines"] / first["total_lines"] - 1)
    df["mean_change_pct"] = 100 * (df["mean_lines_per_actor"] / first["mean_lines_per_actor"] - 1)
    return df


# --------------------------------------------------------------------------- bottlenecks

RUN_KEYS = ("iteration", "banks", "clients_per_bank", "repeat")


def kind_shares(actors: pd.DataFrame) -> pd.DataFrame:
    """Per run and actor kind: actors, received, sent, busy_s, work and each kind's share of the
    run's totals (received_share, busy_share, work_share), plus the busiest single actor's
    values (max_received, max_busy_s, max_work, max_peak_mailbox, max_peers)."""
    requires(actors, *RUN_KEYS, "kind", "actor", "received", "sent", "busy_s", "work", "peak_mailbox", "peers")
    keys = list(RUN_KEYS)
    g = actors.groupby(keys + ["kind"], sort=True)
    df = g.agg(actors=("actor", "size"), received=("received", "sum"), sent=("sent", "sum"),
               busy_s=("busy_s", "sum"), work=("work", "sum"), max_received=("received", "max"),
               max_busy_s=("busy_s", "max"), max_work=("work", "max"), max_peak_mailbox=("peak_mailbox", "max"),
               max_peers=("peers", "max")).reset_index()
    for col in ("received", "busy_s", "work"):
        tot = df.groupby(keys)[col].transform("sum")
        df[f"{col}_share"] = np.where(tot > 0, df[col] / tot.where(tot > 0, 1), 0.0)
    return df


def bottlenecks(actors: pd.DataFrame, by: str = "work") -> pd.DataFrame:
    """The bottleneck actor of each run: the single actor with the largest ``by``
    (``work``: messages handled + sent + state entries examined, counted, so
    independent of the machine and of the instrumentation; ``busy_s``: measured
    time spent handling messages; ``received``: messages handled).

    An actor handles its mailbox one message at a time, so the busiest actor bounds
    the run. Columns: iteration, banks, clients_per_bank, repeat, transfers, actor,
    kind, value (its ``by``), share (of the run's total), runner_up_kind (kind of
    the busiest actor of another kind), dominance (value / runner-up value).
    """
    requires(actors, *RUN_KEYS, "kind", "actor")
    if by not in actors.columns:
        raise UsageError(f"bottlenecks: unknown metric by={by!r}; expected a column of the frame such as "
                         f"busy_s, work or received")
    rows = []
    for key, g in actors.groupby(list(RUN_KEYS), sort=True):
        top = g.loc[cast(Any, g[by].idxmax())]
        others = g[g["kind"] != top["kind"]]
        ru = others.loc[cast(Any, others[by].idxmax())] if not others.empty else None
        total = float(g[by].sum())
        rows.append({
            **dict(zip(RUN_KEYS, key, strict=True)),
            "transfers": int(g["transfers"].iloc[0]) if "transfers" in g else None,
            "actor": top["actor"], "kind": top["kind"], "value": float(top[by]),
            "share": float(top[by]) / total if total > 0 else float("nan"),
            "runner_up_kind": None if ru is None else ru["kind"],
            "dominance": (float(top[by]) / float(ru[by])) if ru is not None and ru[by] > 0 else float("inf"),
        })
    return pd.DataFrame(rows)


def bottleneck_by_iteration(actors: pd.DataFrame, by: str = "work") -> dict[int, str]:
    """The bottleneck actor kind of each iteration, read from its largest run (most transfers;
    ties broken by the majority kind over that size's repeats)."""
    requires(actors, *RUN_KEYS, "kind", "actor")
    b = bottlenecks(actors, by)
    out = {}
    for it, g in b.groupby("iteration", sort=True):
        big = g[g["transfers"] == g["transfers"].max()]
        out[_key(it)] = str(big["kind"].mode().sort_values().iloc[0])
    return out




# --------------------------------------------------------------------------- decisions
#
# Each question the notebook asks of these tables is answered here, as a
# :class:`~workbench.verdicts.Decision` with its evidence, so the notebook only renders it.

def infer_resolution_s(time_s: Values, candidates: Sequence[float] = (1.0, 0.1, 0.01, 0.001, 1e-4, 1e-5, 1e-6)
                       ) -> float | None:
    """The coarsest printing step that every time is a whole multiple of (``0.001`` for times printed
    with three decimals); None when the times are not rounded to any of ``candidates`` (measured floats)."""
    v = np.asarray(time_s, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return None
    for step in candidates:
        k = v / step
        if np.all(np.abs(k - np.round(k)) < 1e-6):
            return float(step)
    return None


def try_fit_power_laws(
    times: pd.DataFrame, min_time_s: float = DEFAULT_MIN_TIME_S, level: float = 0.95, work_col: str = "transfers",
) -> tuple[dict[int, PowerLawFit], dict[int, str]]:
    """:func:`fit_power_laws` for any number of iterations: ``(fits, not_fitted)``, where
    ``not_fitted`` maps each iteration that could not be fitted to the reason (too few cells above
    the floor, a single work value)."""
    requires(times, "iteration", work_col, "time_s")
    fits: dict[int, PowerLawFit] = {}
    reasons: dict[int, str] = {}
    for it, g in times.groupby("iteration", sort=True):
        try:
            fits[_key(it)] = fit_power_law(g[work_col], g["time_s"], min_time_s, level, label=f"iteration {it}")
        except UsageError as exc:
            reasons[_key(it)] = str(exc)
    return fits, reasons


@dataclass(frozen=True)
class CommonExponent:
    """One exponent shared by every group, each group keeping its own prefactor (log-log OLS with
    a dummy per group): the pooled fit, meaningful only when the groups' exponents agree."""

    exponent: float
    exponent_low: float
    exponent_high: float
    n_used: int
    groups: tuple[int, ...]


def fit_common_exponent(times: pd.DataFrame, min_time_s: float = DEFAULT_MIN_TIME_S, level: float = 0.95,
                        work_col: str = "transfers") -> CommonExponent:
    """Fit ``log time = log a_group + b · log work`` on cells ≥ ``min_time_s`` (one ``b`` for all groups)."""
    requires(times, "iteration", work_col, "time_s")
    d = times[(times["time_s"] >= min_time_s) & (times["time_s"] > 0) & (times[work_col] > 0)]
    groups = tuple(sorted(_key(i) for i in d["iteration"].unique()))
    n, k = len(d), len(groups)
    if n < k + 2:
        raise UsageError(f"fit_common_exponent: {n} cells ≥ {min_time_s:g} s for {k} groups; need at least {k + 2}")
    x = np.column_stack([np.log(d[work_col].to_numpy(dtype=float))]
                        + [(d["iteration"].to_numpy() == g).astype(float) for g in groups])
    y = np.log(d["time_s"].to_numpy(dtype=float))
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ beta
    dof = n - (k + 1)
    s2 = float(resid @ resid) / dof
    try:
        cov = s2 * np.linalg.inv(x.T @ x)
    except np.linalg.LinAlgError:
        raise UsageError("fit_common_exponent: the work values do not vary within the groups") from None
    from scipy import stats

    se = math.sqrt(max(cov[0, 0], 0.0))
    t = float(stats.t.ppf(0.5 + level / 2, dof))
    return CommonExponent(float(beta[0]), float(beta[0] - t * se), float(beta[0] + t * se), n, groups)


def compare_exponents(fits: dict[int, PowerLawFit], alpha: float = 0.05, margin: float = 0.25,
                      level: float = 0.95) -> Decision:
    """Do the groups' power-law exponents differ, i.e. does one design scale worse, not only slower?

    Every pair is tested (difference of slopes over its standard error, Student t with
    the pooled residual degrees of freedom); p-values are Holm-adjusted over the pairs.

    - ``yes``: at least one pair differs at family-wise level ``alpha`` by more than ``margin``;
      the evidence names the steepest group and the pairs that differ;
    - ``no``: every pair's ``level`` CI of the difference lies within ±``margin`` — the
      exponents agree, and a pooled (common-exponent) fit is warranted;
    - ``inconclusive``: fewer than two fitted groups, or no pair differs but the intervals
      are too wide to say the exponents agree.

    Evidence: ``exponents`` (group → exponent, low, high, n_used), ``pairs`` (a, b,
    difference, CI, p, p_holm, differs), ``steepest``, ``worse_than`` ([steeper, flatter] for
    each pair that differs), ``pooled_warranted``.
    """
    from scipy import stats

    from ..stats import holm_adjust
    from ..verdicts import decide

    question = "Do the exponents differ between groups (one scales worse, not only slower)?"
    exps = {str(k): {"exponent": f.exponent, "low": f.exponent_low, "high": f.exponent_high, "n_used": f.n_used}
            for k, f in sorted(fits.items())}
    keys = sorted(fits)
    pairs: list[dict[str, Any]] = []
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            fa, fb = fits[a], fits[b]
            diff = fa.exponent - fb.exponent
            se = math.hypot(fa.exponent_se, fb.exponent_se)
            dof = max(fa.n_used + fb.n_used - 4, 1)
            t = float(stats.t.ppf(0.5 + level / 2, dof))
            p = float(2 * stats.t.sf(abs(diff) / se, dof)) if se > 0 else (0.0 if diff != 0 else 1.0)
            pairs.append({"a": a, "b": b, "difference": diff, "low": diff - t * se, "high": diff + t * se,
                          "p": p})
    adj = holm_adjust([pp["p"] for pp in pairs]) if pairs else np.array([])
    for pp, pa in zip(pairs, adj, strict=True):
        pp["p_holm"] = float(pa)
        pp["differs"] = bool(pa < alpha and abs(pp["difference"]) > margin)
    differ = [pp for pp in pairs if pp["differs"]]
    agree = bool(pairs) and all(-margin <= pp["low"] and pp["high"] <= margin for pp in pairs)
    steepest = max(keys, key=lambda k: fits[k].exponent) if keys else None
    worse = [[pp["a"], pp["b"]] if pp["difference"] > 0 else [pp["b"], pp["a"]] for pp in differ]
    evidence = {"exponents": exps, "pairs": pairs, "alpha": alpha, "margin": margin,
                "steepest": steepest, "worse_than": worse, "pooled_warranted": bool(agree and not differ)}

    def fmt(pp: dict[str, Any]) -> str:
        return (f"{pp['a']} − {pp['b']} = {pp['difference']:+.2f} [{pp['low']:+.2f}, {pp['high']:+.2f}], "
                f"Holm p = {pp['p_holm']:.2g}")

    listing = "; ".join(f"group {k}: {v['exponent']:.2f} [{v['low']:.2f}, {v['high']:.2f}]" for k, v in exps.items())
    if len(keys) < 2:
        return decide(question, yes=False, no=False, because_yes="", because_no="",
                      because_inconclusive=f"only {len(keys)} group(s) could be fitted ({listing or 'none'}); "
                                           "nothing to compare", evidence=evidence)
    caveats = ("exponents are fitted on cells above the timing floor only",)
    return decide(
        question, yes=bool(differ), no=bool(agree and not differ),
        because_yes=(f"{len(differ)} of {len(pairs)} pair(s) differ by more than {margin:g} after Holm correction "
                     f"at α = {alpha:g} "
                     f"({'; '.join(fmt(pp) for pp in differ)}); steepest: group {steepest}. Exponents: {listing}"),
        because_no=(f"every pair's {int(level * 100)} % interval of the difference lies within ±{margin:g} "
                    f"({'; '.join(fmt(pp) for pp in pairs)}): the groups scale alike, so one pooled exponent "
                    f"is warranted. Exponents: {listing}"),
        because_inconclusive=(f"no pair differs by more than {margin:g} after Holm correction at α = {alpha:g}, "
                              f"but the intervals are too wide to show the exponents agree within ±{margin:g} "
                              f"({'; '.join(fmt(pp) for pp in pairs)}). Exponents: {listing}"),
        evidence=evidence, caveats=caveats)


def compare_designs(
    times: pd.DataFrame, pairs: Sequence[tuple[int, int]] | None = None, min_time_s: float = DEFAULT_MIN_TIME_S,
    alpha: float = 0.05, equivalence: float = 1.25, level: float = 0.95, exponent_margin: float = 0.25,
) -> dict[tuple[int, int], Decision]:
    """Does design ``b`` take a different time from design ``a``? One :class:`Decision` per pair
    (default: each iteration against the one before it), ratio p-values Holm-adjusted over the pairs.

    - ``yes``: the Holm-adjusted p-value of the geometric-mean ratio time(a)/time(b) is under
      ``alpha`` and the ratio lies outside [1/``equivalence``, ``equivalence``], or the exponents'
      CIs are disjoint and differ by more than ``exponent_margin``;
    - ``no``: the ratio's CI lies inside [1/``equivalence``, ``equivalence``] and the exponents' CIs
      overlap: no difference as large as the margin;
    - ``inconclusive``: neither (a difference that is significant but under the margin, with an
      interval that reaches past it, is inconclusive too), or fewer than 3 cells have both times
      above ``min_time_s``.

    Evidence: ratio, ratio_low, ratio_high, p, p_holm, n_cells, exponents_overlap,
    n_faster, n_slower (cells where b is faster / slower beyond rounding).
    """
    from ..stats import holm_adjust
    from ..verdicts import decide

    requires(times, "iteration", "banks", "clients_per_bank", "clients", "transfers", "time_s")
    its = sorted(_key(i) for i in times["iteration"].unique())
    todo = list(pairs) if pairs is not None else list(zip(its[:-1], its[1:], strict=True))
    results: dict[tuple[int, int], IterationComparison | str] = {}
    for a, b in todo:
        try:
            results[(a, b)] = compare_iterations(times, a, b, min_time_s, level)
        except UsageError as exc:
            results[(a, b)] = str(exc)
    ps = [r.p_value if isinstance(r, IterationComparison) else float("nan") for r in results.values()]
    adj = holm_adjust(ps) if ps else np.array([])
    out: dict[tuple[int, int], Decision] = {}
    for (key, r), p_holm in zip(results.items(), adj, strict=True):
        a, b = key
        question = f"Does iteration {b} take a different time from iteration {a}?"
        if isinstance(r, str):
            out[key] = decide(question, yes=False, no=False, because_yes="", because_no="",
                              because_inconclusive=r, evidence={"n_cells": 0})
            continue
        ev = {"ratio": r.ratio, "ratio_low": r.ratio_low, "ratio_high": r.ratio_high, "p": r.p_value,
              "p_holm": float(p_holm), "n_cells": r.n_cells, "exponents_overlap": r.exponents_overlap,
              "n_faster": r.n_faster, "n_slower": r.n_slower, "min_time_s": r.min_time_s}
        big_ratio = not (1 / equivalence <= r.ratio <= equivalence)
        big_exponent = abs(r.exponent_a[0] - r.exponent_b[0]) > exponent_margin
        differs = (bool(p_holm < alpha) and big_ratio) or (not r.exponents_overlap and big_exponent)
        same = (r.ratio_low >= 1 / equivalence and r.ratio_high <= equivalence and r.exponents_overlap)
        holm = f"Holm-adjusted p = {p_holm:.2g} over {len(results)} comparison(s)"
        caveats: list[str] = []
        if r.n_faster and r.n_slower:
            caveats.append(f"{r.n_faster} cell(s) faster and {r.n_slower} slower beyond rounding: "
                           "run-to-run noise, not the printing, sets the noise floor")
        out[key] = decide(
            question, yes=differs, no=bool(same and not differs),
            because_yes=f"{r.reason}; {holm}" + (f"; iteration {b} is faster" if r.ratio > 1 else
                                                  f"; iteration {b} is slower"),
            because_no=(f"{r.reason}; {holm}; the ratio's interval lies within "
                        f"{1 / equivalence:.2f}–{equivalence:.2f}, so any difference is under the margin"),
            because_inconclusive=(f"{r.reason}; {holm}; the ratio's interval is too wide to rule out a "
                                  f"difference beyond {1 / equivalence:.2f}–{equivalence:.2f}"),
            evidence=ev, caveats=tuple(caveats))
    return out


def cell_bottlenecks(actors: pd.DataFrame, by: str = "busy_s", min_dominance: float = 1.1) -> pd.DataFrame:
    """The bottleneck actor kind of each grid cell (:func:`bottlenecks` of every run, summarised over
    the cell's repeats).

    Columns: iteration, banks, clients_per_bank, transfers, kind (the kind most repeats name),
    repeats, repeats_agree (repeats naming ``kind``), dominance (median over repeats of the busiest
    ``kind`` actor's value over the busiest actor of any other kind — below 1 in a repeat that names
    another kind), settled (a strict majority of repeats names ``kind`` and the median dominance is
    at least ``min_dominance``).
    """
    b = bottlenecks(actors, by)
    top_by_kind = actors.groupby([*RUN_KEYS, "kind"], sort=True)[by].max().sort_index()
    rows = []
    for key, g in b.groupby(["iteration", "banks", "clients_per_bank"], sort=True):
        counts = g["kind"].value_counts()
        top = sorted(counts[counts == counts.max()].index)[0]
        leads = []
        for rep in g["repeat"].tolist():
            per_kind = top_by_kind.loc[(*key, rep)]
            others = per_kind.drop(top)
            best_other = float(others.max()) if len(others) else 0.0
            leads.append(float(per_kind[top]) / best_other if best_other > 0 else math.inf)
        dom = float(np.median(leads))
        agree = int(counts[top])
        rows.append({"iteration": _key(key[0]), "banks": _key(key[1]), "clients_per_bank": _key(key[2]),
                     "transfers": g["transfers"].iloc[0], "kind": str(top), "repeats": len(g),
                     "repeats_agree": agree, "dominance": dom,
                     "settled": bool(2 * agree > len(g) and dom >= min_dominance)})
    return pd.DataFrame(rows, columns=["iteration", "banks", "clients_per_bank", "transfers", "kind", "repeats",
                                       "repeats_agree", "dominance", "settled"])


def bottleneck_agreement(cells: pd.DataFrame, iteration: int, by: str = "busy_s") -> Decision:
    """Is one actor kind the bottleneck in every cell of ``iteration``? (``cells`` from :func:`cell_bottlenecks`.)

    - ``yes``: every cell names the same kind and at least one cell is settled;
    - ``no``: settled cells name different kinds — the cells disagree, and naming one
      bottleneck for the iteration would hide the others;
    - ``inconclusive``: no cell is settled, or the disagreement rests only on unsettled cells
      (no majority of repeats, or the lead is under the dominance threshold).

    Evidence: n_cells, kind_cells (kind → number of cells naming it), settled_kind_cells,
    largest_cell_kind (the kind of the cell with the most transfers), cells_by_kind
    (kind → "banks×clients_per_bank" labels).
    """
    from ..verdicts import decide

    requires(cells, "iteration", "banks", "clients_per_bank", "transfers", "kind", "settled")
    g = cells[cells["iteration"] == iteration]
    question = f"Is one actor kind the bottleneck of every cell of iteration {iteration}?"
    if g.empty:
        return decide(question, yes=False, no=False, because_yes="", because_no="",
                      because_inconclusive=f"no simulated run of iteration {iteration}", evidence={"n_cells": 0})
    kind_cells = {str(k): int(v) for k, v in g["kind"].value_counts().items()}
    settled = g[g["settled"]]
    settled_cells = {str(k): int(v) for k, v in settled["kind"].value_counts().items()}
    largest = g.sort_values(["transfers", "banks"]).iloc[-1]
    by_kind = {str(k): [f"{b}×{c}" for b, c in zip(sub["banks"].tolist(), sub["clients_per_bank"].tolist(),
                                                      strict=True)]
               for k, sub in g.groupby("kind", sort=True)}
    evidence = {"n_cells": len(g), "kind_cells": kind_cells, "settled_kind_cells": settled_cells,
                "n_settled": len(settled), "largest_cell_kind": str(largest["kind"]),
                "largest_cell": f"{int(largest['banks'])}×{int(largest['clients_per_bank'])}",
                "cells_by_kind": by_kind, "metric": by}
    counts = ", ".join(f"{k} in {v} of {len(g)}" for k, v in sorted(kind_cells.items(), key=lambda kv: -kv[1]))
    one_kind = len(kind_cells) == 1
    caveats: tuple[str, ...] = ()
    if len(settled) < len(g):
        caveats = (f"{len(g) - len(settled)} of {len(g)} cells are not settled (no majority of repeats, or the "
                   "busiest actor leads another kind's by less than the dominance threshold)",)
    return decide(
        question, yes=one_kind and len(settled) > 0, no=len(settled_cells) > 1,
        because_yes=f"by {by}, the busiest actor is a {next(iter(kind_cells))} in all {len(g)} cells",
        because_no=(f"by {by}, the cells disagree: {counts}; the largest cell "
                    f"({evidence['largest_cell']}) names {largest['kind']}, which hides the others"),
        because_inconclusive=(f"by {by}: {counts}, but only {len(settled)} cell(s) are settled"
                              + (f" and all settled ones name {next(iter(settled_cells))}"
                                 if len(settled_cells) == 1 else "")),
        evidence=evidence, caveats=caveats)


@dataclass(frozen=True)
class USLDecision(Decision):
    """A :class:`Decision` on a USL fit, carrying the fit (None when none was possible)."""

    fit: USLFit | None = None


def usl_decision(cores: pd.Series | np.ndarray | Sequence[float], throughput: Values, label: str = "",
                 n_boot: int = 200, seed: int = 0, growth: PowerLawFit | None = None) -> USLDecision:
    """Does the Universal Scalability Law describe throughput against cores?

    - ``yes``: the fit is adequate (RMS log residual within :func:`fit_usl`'s limit); the peak is
      named only when κ is identifiable;
    - ``no``: it is not — the law cannot follow these points (with ``growth``, a time
      growing faster than cores², which no USL response time can, is named);
    - ``inconclusive``: no fit was possible (fewer than 4 distinct N with a throughput).

    Evidence: sigma, kappa, lambda, n_star, kappa_identifiable, retrograde, adequate,
    rms_log_resid, n_points.
    """
    question = f"Does the USL describe throughput against cores{' for ' + label if label else ''}?"
    try:
        f = fit_usl(cores, throughput, n_boot=n_boot, seed=seed)
    except UsageError as exc:
        return USLDecision(question, "inconclusive", str(exc), {"n_points": int(np.size(cores))}, (), None)
    ev = {**f.as_dict(), "rms_log_resid": f.rms_log_resid, "n_points": f.n_points}
    caveats = [] if f.kappa_identifiable else ["κ is not identifiable, so N* is not either"]
    fitted = f"RMS log residual {f.rms_log_resid:.2f} over {f.n_points} points; σ = {f.sigma:.3g}, κ = {f.kappa:.3g}"
    if f.n_points < 8:
        caveats.append(f"only {f.n_points} points for 3 parameters: an adequate fit is weak evidence")
    if f.adequate:
        if not f.kappa_identifiable:
            peak = "the peak is not identified"
        elif f.n_star is None:
            peak = "no peak (κ = 0)"
        elif f.n_star < f.n_min:
            peak = (f"throughput is highest at the smallest N measured ({f.n_min:g}) and falls from there "
                    f"(N* = {f.n_star:.2g})")
        elif f.retrograde:
            peak = f"throughput peaks at N* = {f.n_star:.3g} inside the measured range and falls beyond it"
        else:
            peak = f"the peak N* = {f.n_star:.3g} lies beyond the data"
        return USLDecision(question, "yes", f"{fitted}; {peak}", ev, tuple(caveats), f)
    because = f"RMS log residual {f.rms_log_resid:.2f} (a factor {math.exp(f.rms_log_resid):.1f} typical miss)"
    if growth is not None and growth.exponent_low > 2:
        because += (f"; time grows as cores^{growth.exponent:.1f} [{growth.exponent_low:.1f}, "
                    f"{growth.exponent_high:.1f}], faster than the USL's response time can (at most N²)")
        ev["time_growth_exponent"] = growth.exponent
    return USLDecision(question, "no", because, ev, tuple(caveats), f)


def cores_reading(hyp: pd.DataFrame) -> Decision:
    """Does a "fixed demand" cores table behave like a fixed demand? (``hyp`` from :func:`demand_hypotheses`.)

    - ``yes``: the fixed-demand reading leaves the smaller RMS log error in every group;
    - ``no``: the growing-demand reading does, in every group;
    - ``inconclusive``: the groups disagree, or there is nothing to compare.

    Evidence: rms_fixed, rms_grows (group → RMS log error).
    """
    from ..verdicts import decide

    question = "Does the cores table behave like a fixed demand?"
    if hyp.empty:
        return decide(question, yes=False, no=False, because_yes="", because_no="",
                      because_inconclusive="no cores-table cell above the floor has a grid fit to compare with",
                      evidence={})
    piv = hyp.pivot(index="iteration", columns="hypothesis", values="rms_log_error")
    fixed = {str(k): float(v) for k, v in piv["fixed demand"].items()}
    grows = {str(k): float(v) for k, v in piv["demand grows"].items()}
    fixed_wins = [k for k in fixed if fixed[k] < grows[k]]
    grows_wins = [k for k in fixed if grows[k] < fixed[k]]
    errs = ("RMS log error against the grid's power law, fixed demand "
            + "/".join(f"{v:.2f}" for v in fixed.values()) + " vs demand growing with the column "
            + "/".join(f"{v:.2f}" for v in grows.values()) + f" (groups {', '.join(fixed)})")
    return decide(
        question, yes=len(fixed_wins) == len(fixed), no=len(grows_wins) == len(fixed),
        because_yes=f"{errs}: the fixed-demand reading fits every group better",
        because_no=f"{errs}: the table follows a demand that grows with the column, in every group",
        because_inconclusive=f"{errs}: the groups disagree on the reading",
        evidence={"rms_fixed": fixed, "rms_grows": grows})

