"""Is something outside the code stalling it? Tests on per-step timings and latency samples.

- :func:`step_table` / :func:`global_stall_test` — the global-stall test: for each
  step of a request, the probability that the step is *slow* (longer than its
  typical time by more than ``slow_excess_s``) against the step's mean duration.
  A stall that freezes the whole process (or machine) at random moments hits a
  step with probability proportional to how long the step runs: P(slow) grows
  linearly with mean duration, through about zero. Slowness with a cause inside
  one step does not follow step length. The test reports slope, correlation,
  bootstrap CIs that resample whole requests, outlying steps, and a verdict.
- :func:`phase_split` — where the excess time of slow requests lands (before /
  during / after), against each phase's share of the typical time.
- :func:`uptime_effect` — do older worker processes answer slower?
- :func:`baseline_check` — is the network (a connect "ping" baseline) flat while
  the calls are not?
- :func:`interference_ab` — latency with and without an interfering load, as a
  ratio of percentiles with a CI that resamples blocks, not requests.

Inputs are plain frames (``request``, ``step``, ``duration_s`` …) or arrays in
seconds; results are frozen dataclasses and small frames, times in the units
their names say.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..schema import requires
from ..stats import (
    Comparison,
    Mode,
    compare,
    find_modes,
    find_quantum,
    holm_adjust,
    wilson_interval,
)
from ..verdicts import Decision, decide

__all__ = [
    "BaselineCheck",
    "InterferenceResult",
    "LatencyModes",
    "StallTest",
    "UptimeEffect",
    "after_fix_decision",
    "baseline_check",
    "global_stall_test",
    "group_modes",
    "interference_ab",
    "interference_decision",
    "latency_modes",
    "latency_sample",
    "network_decision",
    "parse_phases",
    "phase_decision",
    "phase_split",
    "quantized_decision",
    "select_rows",
    "stall_decision",
    "step_table",
    "uptime_effect",
    "wilson_interval",
]


# ------------------------------------------------------------------ global-stall test

def _slow_matrix(frame: pd.DataFrame, slow_excess_s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(steps, durations matrix requests×steps, slow matrix, valid mask) from a long frame."""
    wide = frame.pivot_table(index="request", columns="step", values="duration_s", aggfunc="sum")
    steps = wide.columns.to_numpy()
    dur = wide.to_numpy(dtype=float)
    valid = np.isfinite(dur)
    typical = np.nanmedian(dur, axis=0)
    slow = valid & (dur > typical + slow_excess_s)
    return steps, dur, slow, valid


def step_table(frame: pd.DataFrame, slow_excess_s: float = 0.010, confidence: float = 0.95) -> pd.DataFrame:
    """Per step: how long it takes and how often it is slow.

    ``frame``: one row per (request, step) with ``request``, ``step``,
    ``duration_s``. A step is slow in a request when it takes more than its
    median plus ``slow_excess_s``. Columns: step, n, median_ms, mean_ms,
    n_slow, p_slow, p_slow_low, p_slow_high (Wilson interval), mean_excess_ms
    (mean extra time of the slow occurrences over the median).
    """
    requires(frame, "request", "step", "duration_s")
    steps, dur, slow, valid = _slow_matrix(frame, slow_excess_s)
    n = valid.sum(axis=0)
    k = slow.sum(axis=0)
    lo, hi = wilson_interval(k, n, confidence)
    med = np.nanmedian(dur, axis=0)
    with np.errstate(invalid="ignore"):
        excess = np.array([np.mean(dur[slow[:, j], j] - med[j]) if k[j] else math.nan for j in range(len(steps))])
    return pd.DataFrame({
        "step": steps, "n": n.astype("int64"), "median_ms": 1e3 * med, "mean_ms": 1e3 * np.nanmean(dur, axis=0),
        "n_slow": k.astype("int64"), "p_slow": k / np.maximum(n, 1), "p_slow_low": lo, "p_slow_high": hi,
        "mean_excess_ms": 1e3 * excess,
    })


@dataclass(frozen=True)
class StallTest:
    """Result of the global-stall test.

    Fields: ``slope_per_ms`` (increase of P(slow) per ms of mean step
    duration) with ``slope_low``/``slope_high``; ``intercept`` (P(slow) of a
    0 ms step); ``correlation`` (Pearson r between mean duration and P(slow)
    over steps) with ``correlation_low``/``correlation_high``; ``confidence``;
    ``n_requests``, ``n_steps``, ``n_slow`` (slow step occurrences);
    ``slow_excess_ms`` (the slowness threshold); ``stall_rate_per_s`` (slope ×
    1000: stalls per second of running time this implies); ``outliers`` (steps
    whose slow count the fitted line does not allow: two-sided binomial test
    against the line's P(slow), Holm-adjusted over all steps, below 1 − confidence;
    the step table carries ``p_value`` and ``p_holm``);
    ``verdict`` (one of "global stall", "no effect", "not proportional to step
    length") and ``reason`` (one sentence); ``steps`` (the :func:`step_table`).
    CIs resample whole requests (the unit that shares a stall), ``n_resamples`` times.
    """

    slope_per_ms: float
    slope_low: float
    slope_high: float
    intercept: float
    correlation: float
    correlation_low: float
    correlation_high: float
    confidence: float
    n_requests: int
    n_steps: int
    n_slow: int
    slow_excess_ms: float
    stall_rate_per_s: float
    outliers: tuple[int, ...]
    verdict: str
    reason: str
    steps: pd.DataFrame
    n_resamples: int
    min_correlation: float = 0.5


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """(slope, intercept, r) of y on x; r is NaN when either is constant."""
    if np.ptp(x) == 0:
        return math.nan, math.nan, math.nan
    slope, intercept = np.polyfit(x, y, 1)
    r = math.nan if np.ptp(y) == 0 else float(np.corrcoef(x, y)[0, 1])
    return float(slope), float(intercept), r


def _bootstrap_fits(dur: np.ndarray, slow: np.ndarray, valid: np.ndarray, n_resamples: int,
                    rng: np.random.Generator) -> np.ndarray:
    """(slope, r) of P(slow) on mean step length (ms) for each resample of requests; NaN where < 3 steps.

    A resample is the count of times each request is drawn, so a block of
    resamples is a few matrix products over the requests×steps matrices;
    slope and r are the least-squares line's and Pearson's, over the steps
    with a duration, NaN when the lengths (or, for r, the shares) are all equal.
    """
    nreq, nsteps = dur.shape
    dur0 = np.where(valid, dur, 0.0)
    has, slw = valid.astype(float), slow.astype(float)
    out = np.full((n_resamples, 2), np.nan)
    block = max(1, min(n_resamples, 4_000_000 // max(nreq, nsteps, 1)))
    for a in range(0, n_resamples, block):
        b = min(n_resamples, a + block)
        counts = np.stack([np.bincount(rng.integers(0, nreq, nreq), minlength=nreq) for _ in range(a, b)]).astype(float)
        n_dur = counts @ has
        with np.errstate(invalid="ignore", divide="ignore"):
            x = 1e3 * (counts @ dur0) / n_dur
        y = (counts @ slw) / np.maximum(n_dur, 1)
        ok = n_dur > 0
        m = ok.astype(float)
        n = m.sum(axis=1)
        xz, yz = np.where(ok, x, 0.0), np.where(ok, y, 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            dx = (xz - (xz.sum(axis=1) / n)[:, None]) * m
            dy = (yz - (yz.sum(axis=1) / n)[:, None]) * m
            sxx, syy, sxy = (dx * dx).sum(axis=1), (dy * dy).sum(axis=1), (dx * dy).sum(axis=1)
            slope, r = sxy / sxx, sxy / np.sqrt(sxx * syy)
        flat_x = np.where(ok, x, -np.inf).max(axis=1) == np.where(ok, x, np.inf).min(axis=1)
        flat_y = np.where(ok, y, -np.inf).max(axis=1) == np.where(ok, y, np.inf).min(axis=1)
        slope[flat_x] = np.nan
        r[flat_x | flat_y] = np.nan
        enough = n >= 3
        out[a:b] = np.where(enough[:, None], np.column_stack([slope, r]), np.nan)
    return out


def global_stall_test(frame: pd.DataFrame, slow_excess_s: float = 0.010, *, confidence: float = 0.95,
                      n_resamples: int = 2000, min_slow: int = 10, min_correlation: float = 0.5,
                      exclude_steps: Sequence[int] = (), seed: int = 0) -> StallTest:
    """P(step is slow) against the step's mean duration: is a global stall hitting whatever runs?

    ``frame`` has one row per (request, step): ``request``, ``step``,
    ``duration_s``. For each step, P(slow) is the share of requests where it
    took more than its median + ``slow_excess_s``; x is its mean duration in ms
    (as in the original analysis: a long step has more time to be hit).
    A least-squares line P = intercept + slope·x is fitted over steps;
    bootstrap CIs resample requests. ``exclude_steps`` leaves out steps with a
    known cause of their own.

    Verdict: "no effect" when fewer than ``min_slow`` slow occurrences exist or
    the slope's CI reaches zero; "global stall" when the slope's CI is above zero
    and the correlation's lower bound is at least ``min_correlation``; otherwise
    "not proportional to step length" (slowness exists but does not follow
    step length: look inside the slow steps).
    """
    df = requires(frame, "request", "step", "duration_s")[["request", "step", "duration_s"]]
    if not 0 < confidence < 1:
        raise UsageError(f"global_stall_test: confidence must be in (0, 1), got {confidence}")
    if exclude_steps:
        df = df[~df["step"].isin(list(exclude_steps))]
    steps, dur, slow, valid = _slow_matrix(df, slow_excess_s)
    if len(steps) < 3:
        raise UsageError(f"the global-stall test needs at least 3 steps, got {len(steps)}")
    table = step_table(df, slow_excess_s, confidence)
    x = 1e3 * np.nanmean(dur, axis=0)
    y = slow.sum(axis=0) / np.maximum(valid.sum(axis=0), 1)
    slope, intercept, r = _fit(x, y)
    nreq = dur.shape[0]
    boots = _bootstrap_fits(dur, slow, valid, n_resamples, np.random.default_rng(seed))
    alpha = (1 - confidence) / 2

    def ci(col: int) -> tuple[float, float]:
        v = boots[:, col]
        v = v[np.isfinite(v)]
        if v.size < 0.5 * n_resamples:
            return math.nan, math.nan
        lo, hi = np.percentile(v, [100 * alpha, 100 * (1 - alpha)])
        return float(lo), float(hi)

    slope_lo, slope_hi = ci(0)
    r_lo, r_hi = ci(1)
    n_slow = int(slow.sum())
    # outliers: steps whose slow count the fitted line does not allow, Holm-corrected over all steps
    outliers: list[int] = []
    table["p_value"] = math.nan
    table["p_holm"] = math.nan
    if math.isfinite(slope) and n_slow >= min_slow:
        from scipy import stats

        pred = np.clip(intercept + slope * x, 1e-6, 1 - 1e-6)
        ks, ns = table["n_slow"].to_numpy(), table["n"].to_numpy()
        pv = np.array([stats.binomtest(int(k), int(n), float(p)).pvalue if n > 0 else math.nan
                       for k, n, p in zip(ks, ns, pred, strict=True)])
        table["p_value"] = pv
        table["p_holm"] = holm_adjust(pv)
        outliers = [int(s) for s, q in zip(steps, table["p_holm"], strict=True) if q < 1 - confidence]
    if n_slow < min_slow:
        verdict, reason = "no effect", (f"only {n_slow} slow step occurrences (threshold: {min_slow}); "
                                        "nothing to explain")
    elif not math.isfinite(slope_lo) or slope_lo <= 0:
        verdict, reason = "no effect", (f"the slope's {confidence:.0%} CI [{slope_lo:.3g}, {slope_hi:.3g}] per ms "
                                        "includes zero: long steps are not slow more often")
    elif math.isfinite(r_lo) and r_lo >= min_correlation:
        verdict, reason = "global stall", (f"P(slow) rises {slope:.3g} per ms of step length (CI "
                                           f"[{slope_lo:.3g}, {slope_hi:.3g}]), r = {r:.2f} (CI [{r_lo:.2f}, "
                                           f"{r_hi:.2f}]): stalls hit steps in proportion to how long they run")
    else:
        verdict, reason = "not proportional to step length", (
            f"slow steps exist ({n_slow}) and the slope is positive, but r = {r:.2f} (lower bound {r_lo:.2f} "
            f"< {min_correlation}): some steps are slow for reasons of their own")
    return StallTest(slope_per_ms=slope, slope_low=slope_lo, slope_high=slope_hi, intercept=intercept,
                     correlation=r, correlation_low=r_lo, correlation_high=r_hi, confidence=confidence,
                     n_requests=int(nreq), n_steps=int(len(steps)), n_slow=n_slow,
                     slow_excess_ms=1e3 * slow_excess_s, stall_rate_per_s=1e3 * slope, outliers=tuple(outliers),
                     verdict=verdict, reason=reason, steps=table, n_resamples=n_resamples,
                     min_correlation=min_correlation)


# ------------------------------------------------------------------ phase split

def phase_split(frame: pd.DataFrame, phases: Mapping[str, Sequence[int]], slow_excess_s: float = 0.010
                ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split every request into phases (groups of steps) and see where slow requests lose time.

    ``frame``: request, step, duration_s. ``phases``: name → steps (e.g.
    ``{"before": [1..5], "evaluate": [...], "after": [...]}``). Returns
    ``(per_request, summary)``: per_request has request, ``<phase>_s`` for each
    phase, total_s, excess_s (total − median total), slow (excess > threshold)
    and dominant_phase (the phase holding most of the request's excess);
    summary has one row per phase: phase, typical_ms (median), share_of_time
    (of the summed medians), share_of_excess (of slow requests' total excess),
    slow_requests_dominated (how many slow requests it dominates).
    For a global stall, share_of_excess ≈ share_of_time; a cause inside one
    phase puts nearly all the excess there.
    """
    df = requires(frame, "request", "step", "duration_s")[["request", "step", "duration_s"]]
    known = {s for v in phases.values() for s in v}
    unknown = sorted(set(df["step"]) - known)
    if unknown:
        raise UsageError(f"phase_split: steps {unknown} belong to no phase; phases cover {sorted(known)}")
    df["phase"] = df["step"].map({s: name for name, v in phases.items() for s in v})
    wide = df.pivot_table(index="request", columns="phase", values="duration_s", aggfunc="sum")
    names = list(phases)
    wide = wide.reindex(columns=names)
    per = pd.DataFrame({"request": wide.index.to_numpy()})
    for name in names:
        per[f"{name}_s"] = wide[name].to_numpy()
    per["total_s"] = wide.sum(axis=1).to_numpy()
    per["excess_s"] = per["total_s"] - per["total_s"].median()
    per["slow"] = per["excess_s"] > slow_excess_s
    excess_by_phase = np.column_stack([per[f"{n}_s"] - per[f"{n}_s"].median() for n in names])
    per["dominant_phase"] = np.array(names, dtype=object)[np.argmax(excess_by_phase, axis=1)]
    med = np.array([per[f"{n}_s"].median() for n in names])
    slow = per["slow"].to_numpy()
    ex_slow = np.clip(excess_by_phase[slow], 0, None).sum(axis=0)
    summary = pd.DataFrame({
        "phase": names, "typical_ms": 1e3 * med, "share_of_time": med / med.sum(),
        "share_of_excess": ex_slow / ex_slow.sum() if ex_slow.sum() > 0 else np.full(len(names), np.nan),
        "slow_requests_dominated": [int(np.sum(per.loc[slow, "dominant_phase"] == n)) for n in names],
    })
    return per, summary


# ------------------------------------------------------------------ uptime

@dataclass(frozen=True)
class UptimeEffect:
    """Do requests served by older processes take longer?

    Fields: ``spearman_rho`` with ``rho_low``/``rho_high`` (bootstrap CI),
    ``slope_ms_per_min`` (Theil–Sen slope of latency against uptime),
    ``median_young_ms``/``median_old_ms`` (latency in the youngest and oldest
    quarter of uptime), ``n``, ``verdict`` ("none", "small" or "strong") and ``reason``.
    """

    spearman_rho: float
    rho_low: float
    rho_high: float
    slope_ms_per_min: float
    median_young_ms: float
    median_old_ms: float
    n: int
    verdict: str
    reason: str


def uptime_effect(uptime_s: Sequence[float] | np.ndarray, latency_s: Sequence[float] | np.ndarray, *,
                  confidence: float = 0.95, n_resamples: int = 1000, small: float = 0.3, seed: int = 0
                  ) -> UptimeEffect:
    """Correlation of latency with process uptime (Spearman, bootstrap CI) and its size.

    Verdict: "none" when the CI of rho includes 0, "strong" when |rho| ≥
    ``small`` with the CI on the same side, else "small".
    """
    u = np.asarray(uptime_s, dtype=float)
    lat = np.asarray(latency_s, dtype=float)
    ok = np.isfinite(u) & np.isfinite(lat)
    u, lat = u[ok], lat[ok]
    if u.size < 10:
        raise UsageError(f"uptime_effect: need at least 10 finite (uptime_s, latency_s) pairs, got {u.size}")
    from scipy import stats

    rho = float(stats.spearmanr(u, lat).statistic)
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n_resamples):
        i = rng.integers(0, u.size, u.size)
        if np.ptp(u[i]) > 0 and np.ptp(lat[i]) > 0:
            boots.append(stats.spearmanr(u[i], lat[i]).statistic)
    alpha = (1 - confidence) / 2
    lo, hi = (np.percentile(boots, [100 * alpha, 100 * (1 - alpha)]) if boots else (math.nan, math.nan))
    slope = float(stats.theilslopes(1e3 * lat, u / 60.0).slope) if np.ptp(u) > 0 else math.nan
    q1, q3 = np.percentile(u, [25, 75])
    young, old = float(1e3 * np.median(lat[u <= q1])), float(1e3 * np.median(lat[u >= q3]))
    if lo <= 0 <= hi:
        verdict, reason = "none", f"Spearman rho = {rho:.2f}, CI [{lo:.2f}, {hi:.2f}] includes 0"
    elif abs(rho) >= small:
        verdict, reason = "strong", f"Spearman rho = {rho:.2f}, CI [{lo:.2f}, {hi:.2f}]"
    else:
        verdict, reason = "small", f"Spearman rho = {rho:.2f}, CI [{lo:.2f}, {hi:.2f}]: real but weak"
    return UptimeEffect(spearman_rho=rho, rho_low=float(lo), rho_high=float(hi), slope_ms_per_min=slope,
                        median_young_ms=young, median_old_ms=old, n=int(u.size), verdict=verdict, reason=reason)


# ------------------------------------------------------------------ network baseline

@dataclass(frozen=True)
class BaselineCheck:
    """The calls' spread against a network baseline (e.g. TCP connect "pings") over the same time.

    Fields: ``calls_p50_ms``/``calls_p99_ms``/``calls_max_ms``, ``baseline_p50_ms``/
    ``baseline_p99_ms``/``baseline_max_ms``; ``calls_spread_ms`` and
    ``baseline_spread_ms`` (p99 − p50); ``explained_share`` (baseline spread /
    calls spread: how much of the calls' tail the network could explain);
    ``slow_calls`` (calls above their p50 + ``slow_excess_ms``) and
    ``slow_calls_with_slow_baseline`` (of those, how many overlap a baseline probe
    slower than its own p99) and ``expected_by_chance`` (how many would overlap one if
    slow probes were independent of slow calls); ``verdict`` ("network ruled out", "network may
    contribute" or "no overlap") and ``reason``; ``overlap_s`` (time both series cover),
    ``calls_span_s``, ``probes_in_span`` (baseline probes inside the calls' span, the ones
    used) and ``probes`` (all baseline probes).
    """

    calls_p50_ms: float
    calls_p99_ms: float
    calls_max_ms: float
    baseline_p50_ms: float
    baseline_p99_ms: float
    baseline_max_ms: float
    calls_spread_ms: float
    baseline_spread_ms: float
    explained_share: float
    slow_calls: int
    slow_calls_with_slow_baseline: int
    expected_by_chance: float
    verdict: str
    reason: str
    overlap_s: float = math.nan
    calls_span_s: float = math.nan
    probes_in_span: int = 0
    probes: int = 0


def baseline_check(calls: pd.DataFrame, baseline: pd.DataFrame, *, slow_excess_s: float = 0.05,
                   max_share: float = 0.1, min_overlap_share: float = 0.5, min_probes: int = 10) -> BaselineCheck:
    """Could the network explain the calls' slowness? Compare with a baseline series.

    ``calls`` and ``baseline``: raw-sample frames with ``timestamp_s`` and
    ``latency_s`` (seconds, same clock). The network is ruled out when the
    baseline's spread (p99 − p50) is below ``max_share`` of the calls' spread
    and no more than a chance share of slow calls coincides with a slow probe.
    Only probes inside the calls' time span count: when the baseline covers
    less than ``min_overlap_share`` of that span or fewer than ``min_probes``
    probes fall in it, the verdict is "no overlap" (nothing is ruled out) and
    the spread fields are NaN.
    """
    c = requires(calls, "timestamp_s", "latency_s")[["timestamp_s", "latency_s"]].dropna()
    b_all = requires(baseline, "timestamp_s", "latency_s")[["timestamp_s", "latency_s"]].dropna()
    if c.empty or b_all.empty:
        raise UsageError(f"baseline_check: both the calls and the baseline need finite samples, got {len(c)} "
                         f"calls and {len(b_all)} baseline samples")
    t0, t1 = float(c["timestamp_s"].min()), float((c["timestamp_s"] + c["latency_s"]).max())
    b = b_all[(b_all["timestamp_s"] >= t0) & (b_all["timestamp_s"] <= t1)]
    bt0, bt1 = float(b_all["timestamp_s"].min()), float(b_all["timestamp_s"].max())
    overlap = max(0.0, min(t1, bt1) - max(t0, bt0))
    span = max(t1 - t0, 1e-9)
    if len(b) < min_probes or overlap < min_overlap_share * span:
        cl = c["latency_s"].to_numpy()
        bl = b_all["latency_s"].to_numpy()
        reason = (f"the baseline covers {overlap:.3g} s of the calls' {span:.3g} s ({len(b)} probes inside their "
                  f"span; needed: {min_overlap_share:.0%} and {min_probes} probes): a baseline from another time "
                  "says nothing about these calls")
        nan = math.nan
        return BaselineCheck(calls_p50_ms=1e3 * float(np.median(cl)), calls_p99_ms=1e3 * float(np.percentile(cl, 99)),
                             calls_max_ms=1e3 * float(cl.max()), baseline_p50_ms=1e3 * float(np.median(bl)),
                             baseline_p99_ms=1e3 * float(np.percentile(bl, 99)),
                             baseline_max_ms=1e3 * float(bl.max()), calls_spread_ms=nan, baseline_spread_ms=nan,
                             explained_share=nan, slow_calls=0, slow_calls_with_slow_baseline=0,
                             expected_by_chance=nan, verdict="no overlap", reason=reason, overlap_s=overlap,
                             calls_span_s=span, probes_in_span=int(len(b)), probes=int(len(b_all)))
    cl, bl = c["latency_s"].to_numpy(), b["latency_s"].to_numpy()
    cp50, cp99 = (float(v) for v in np.percentile(cl, [50, 99]))
    bp50, bp99 = (float(v) for v in np.percentile(bl, [50, 99]))
    cs, bs = cp99 - cp50, bp99 - bp50
    share = bs / cs if cs > 0 else math.inf
    slow = c[c["latency_s"] > cp50 + slow_excess_s]
    bad = b[b["latency_s"] > bp99]
    hits = 0
    if not bad.empty:
        bt = np.sort(bad["timestamp_s"].to_numpy())
        for t0, lat in zip(slow["timestamp_s"], slow["latency_s"], strict=True):
            i = np.searchsorted(bt, t0)
            if i < bt.size and bt[i] <= t0 + lat:
                hits += 1
    # chance overlaps: 1 % of probes are above p99 by definition; a call of length L spans L/interval probes
    interval = float(np.median(np.diff(np.sort(b["timestamp_s"].to_numpy())))) if len(b) > 1 else math.inf
    frac_bad = len(bad) / len(b)
    expected = float(np.sum(1 - (1 - frac_bad) ** (slow["latency_s"].to_numpy() / interval))) if interval > 0 else 0.0
    ruled_out = share < max_share and hits <= max(2.0, 3 * expected)
    verdict = "network ruled out" if ruled_out else "network may contribute"
    reason = (f"the baseline's p99 − p50 is {1e3 * bs:.3g} ms against {1e3 * cs:.4g} ms for the calls "
              f"({share:.1%}); {hits} of {len(slow)} slow calls overlap a slow probe (chance: {expected:.1f})")
    return BaselineCheck(calls_p50_ms=1e3 * cp50, calls_p99_ms=1e3 * cp99, calls_max_ms=1e3 * float(cl.max()),
                         baseline_p50_ms=1e3 * bp50, baseline_p99_ms=1e3 * bp99,
                         baseline_max_ms=1e3 * float(bl.max()), calls_spread_ms=1e3 * cs,
                         baseline_spread_ms=1e3 * bs, explained_share=float(share), slow_calls=int(len(slow)),
                         slow_calls_with_slow_baseline=int(hits), expected_by_chance=expected, verdict=verdict,
                         reason=reason, overlap_s=overlap, calls_span_s=span, probes_in_span=int(len(b)),
                         probes=int(len(b_all)))


# ------------------------------------------------------------------ A/B interference

@dataclass(frozen=True)
class InterferenceResult:
    """Latency under an interfering load (B) against without it (A).

    Fields: ``median`` and ``p99`` (:class:`workbench.stats.Comparison`: ratio
    B/A with a CI resampling blocks), ``a_label``/``b_label``, ``n_blocks_a``/
    ``n_blocks_b``, ``verdict`` ("interference", "no clear effect", "faster under load",
    or "too few blocks" when a condition has fewer than two blocks to resample) and ``reason``.
    """

    median: Comparison
    p99: Comparison
    a_label: str
    b_label: str
    n_blocks_a: int
    n_blocks_b: int
    verdict: str
    reason: str


def interference_ab(frame: pd.DataFrame, *, condition: str = "condition", block: str = "block",
                    a: str = "writer_off", b: str = "writer_on", confidence: float = 0.95,
                    n_resamples: int = 2000, seed: int = 0) -> InterferenceResult:
    """A/B comparison of ``latency_s`` between two conditions, resampling whole blocks.

    ``frame``: one row per request with ``latency_s``, the ``condition`` label
    and the ``block`` it ran in (consecutive requests under one condition). The
    ratio of medians and of p99s (B/A) get bootstrap CIs over blocks; the
    verdict is "interference" when the median ratio's CI lies above 1.
    """
    df = requires(frame, "latency_s", condition, block)[["latency_s", condition, block]].dropna(subset=["latency_s"])
    xa, xb = df[df[condition] == a], df[df[condition] == b]
    if xa.empty or xb.empty:
        raise UsageError(f"interference_ab: need samples under both conditions a={a!r} and b={b!r} of column "
                         f"{condition!r}; got {sorted(set(df[condition]))}")
    res = compare(xa["latency_s"].to_numpy(), xb["latency_s"].to_numpy(), qs=(50, 99),
                  groups_a=xa[block].to_numpy(),
                  groups_b=xb[block].to_numpy(), confidence=confidence,
                  n_resamples=n_resamples, seed=seed)
    med, p99 = res
    if min(med.units_a, med.units_b) < 2:
        verdict = "too few blocks"
    elif med.low > 1:
        verdict = "interference"
    elif med.high < 1:
        verdict = "faster under load"
    else:
        verdict = "no clear effect"
    reason = (f"median {1e3 * med.a:.3g} → {1e3 * med.b:.3g} ms, ratio {med.ratio:.2f} "
              f"(CI [{med.low:.2f}, {med.high:.2f}] over {med.units_a}+{med.units_b} blocks); "
              f"p99 ratio {p99.ratio:.2f} (CI [{p99.low:.2f}, {p99.high:.2f}])")
    return InterferenceResult(median=med, p99=p99, a_label=a, b_label=b, n_blocks_a=med.units_a,
                              n_blocks_b=med.units_b, verdict=verdict, reason=reason)


# ------------------------------------------------------------------ quantised latency

@dataclass(frozen=True)
class LatencyModes:
    """Modes of a latency sample found on a log axis, grouped into clusters, and their common spacing.

    Fields: ``modes`` (the clusters: :class:`workbench.stats.Mode` tuple in ms —
    location of the most populated member, low, high, summed count and
    fraction, largest prominence), ``raw_modes`` (the KDE modes before grouping),
    ``quantum_ms`` (common spacing of the clusters, None when not quantised) and
    ``bandwidth_decades`` (KDE bandwidth used).
    """

    modes: tuple[Mode, ...]
    raw_modes: tuple[Mode, ...]
    quantum_ms: float | None
    bandwidth_decades: float

    @property
    def locations_ms(self) -> list[float]:
        return [m.location for m in self.modes]


def group_modes(modes: Sequence[Mode], fraction: float = 0.2, *, max_ratio: float = 1.6) -> tuple[Mode, ...]:
    """Merge neighbouring modes that are sub-modes of one cluster.

    Two neighbours merge when their gap is below ``fraction`` of the largest
    gap between neighbours **and** their ratio is below ``max_ratio`` (1.6). A
    fast bulk often splits into sub-modes tens of per cent apart (CPU
    frequency, cache state) and they merge; an even lattice (250, 500, 750 ms)
    keeps its steps; a cluster at twice its neighbour's latency (a 1000 ms
    cluster beside a 505 ms bulk) never merges, however small it is or whatever
    lies further out. Returns Mode tuples (see :class:`LatencyModes`).
    """
    ms = sorted(modes, key=lambda m: m.location)
    if len(ms) < 2:
        return tuple(ms)
    locs = np.array([m.location for m in ms], dtype=float)
    gaps = np.diff(locs)
    ratios = locs[1:] / np.maximum(locs[:-1], 1e-300)
    limit = fraction * gaps.max()
    groups: list[list[Mode]] = [[ms[0]]]
    for m, gap, ratio in zip(ms[1:], gaps, ratios, strict=True):
        if gap < limit and ratio < max_ratio:
            groups[-1].append(m)
        else:
            groups.append([m])
    out = []
    for g in groups:
        top = max(g, key=lambda m: m.count)
        out.append(Mode(location=top.location, low=min(m.low for m in g), high=max(m.high for m in g),
                        count=sum(m.count for m in g), fraction=sum(m.fraction for m in g),
                        prominence=max(m.prominence for m in g)))
    return tuple(out)


def _gap_clusters(logx: np.ndarray, gap_decades: float, min_count: int) -> list[tuple[float, float, int, float]]:
    """Runs of sorted log values with no gap wider than ``gap_decades``: (low, high, count, median), big enough."""
    v = np.sort(logx)
    cuts = np.flatnonzero(np.diff(v) > gap_decades) + 1
    out = []
    for part in np.split(v, cuts):
        if part.size >= min_count:
            out.append((float(part[0]), float(part[-1]), int(part.size), float(np.median(part))))
    return out


def latency_modes(latency_s: Sequence[float] | np.ndarray, *, bandwidth_decades: float = 0.05,
                  min_count: int = 5, min_prominence: float = 0.05, group_fraction: float = 0.2,
                  gap_decades: float = 0.1) -> LatencyModes:
    """Modes of a latency sample on log10(ms), grouped into clusters, with their counts and quantum.

    A fast bulk and a few slow clusters (3 ms vs 250, 500, 1000 ms) cannot share
    one linear bandwidth; on the log axis a bandwidth of ``bandwidth_decades``
    (0.05 ≈ 12 %) separates modes whose ratio exceeds about 1.3. A small cluster
    far from a big bulk can be too low for the density's prominence test (9
    calls at 1000 ms beside 543 at 505 ms): any run of at least ``min_count``
    values set apart by an empty gap of ``gap_decades`` (0.1 ≈ 26 %) on each side
    is a cluster too. Modes closer than ``group_fraction`` of the largest gap are
    grouped (:func:`group_modes`). Every value is then counted in the cluster
    nearest to it on the log axis (counts add up to the sample). The quantum
    comes from :func:`workbench.stats.find_quantum` on the linear values with the
    clusters as modes. Values separated from every cluster's location by an
    empty gap of ``gap_decades`` (a lone outlier far out) are counted in none.
    """
    x = np.asarray(latency_s, dtype=float)
    x = 1e3 * x[np.isfinite(x) & (x > 0)]
    if x.size == 0:
        return LatencyModes(modes=(), raw_modes=(), quantum_ms=None, bandwidth_decades=bandwidth_decades)
    lx = np.log10(x)
    logm = list(find_modes(lx, bandwidth=bandwidth_decades, min_count=min_count, min_prominence=min_prominence))
    for lo, hi, n, med in _gap_clusters(lx, gap_decades, min_count):
        if not any(lo - gap_decades / 2 <= m.location <= hi + gap_decades / 2 for m in logm):
            logm.append(Mode(location=med, low=lo, high=hi, count=n, fraction=n / lx.size, prominence=math.nan))
    raw = tuple(sorted((Mode(10 ** m.location, 10 ** m.low, 10 ** m.high, m.count, m.fraction, m.prominence)
                        for m in logm), key=lambda m: m.location))
    grouped = group_modes(raw, group_fraction)
    if grouped:
        centres = np.log10([m.location for m in grouped])
        bounds = (centres[:-1] + centres[1:]) / 2
        owner = np.searchsorted(bounds, lx)
        # values joined by gaps narrower than gap_decades form runs; a run that holds no cluster's location
        # (a lone outlier far out) is counted in none
        order = np.argsort(lx, kind="stable")
        run = np.empty(lx.size, dtype=np.int64)
        run[order] = np.concatenate([[0], np.cumsum(np.diff(lx[order]) > gap_decades)])
        lo_run = np.full(run.max() + 1, np.inf)
        hi_run = np.full(run.max() + 1, -np.inf)
        np.minimum.at(lo_run, run, lx)
        np.maximum.at(hi_run, run, lx)
        tol = gap_decades / 2
        held = np.zeros(run.max() + 1, dtype=bool)
        for c in centres:
            held |= (lo_run - tol <= c) & (c <= hi_run + tol)
        owner = np.where(held[run], owner, -1)
        counts = np.bincount(owner[owner >= 0], minlength=len(grouped))
        grouped = tuple(Mode(m.location, float(x[owner == i].min()) if counts[i] else m.low,
                             float(x[owner == i].max()) if counts[i] else m.high, int(counts[i]),
                             float(counts[i] / x.size), m.prominence) for i, m in enumerate(grouped))
    quantum = find_quantum(x, modes=grouped) if len(grouped) >= 2 else None
    return LatencyModes(modes=grouped, raw_modes=raw, quantum_ms=quantum, bandwidth_decades=bandwidth_decades)


# ------------------------------------------------------------------ decisions

#: one step above the fastest cluster counts as a quantum only when it is at least this many times that
#: cluster's latency: a slow path 2–3× the fast one is common without any fixed wait (clusters on
#: multiples of one step from zero, as 41 and 81 ms, are judged as a lattice instead)
SINGLE_STEP_MIN_RATIO = 3.0


def quantized_decision(modes: LatencyModes, n_calls: int, *, min_calls: int = 20,
                       latency_s: Sequence[float] | np.ndarray | None = None) -> Decision:
    """Are the call times quantized? From :func:`latency_modes` (and, given, the sample itself).

    yes: two or more clusters with a common quantum; no: one cluster;
    inconclusive: fewer than ``min_calls`` calls, or several clusters without a
    common spacing (structure, but not whole multiples of one delay).

    With ``latency_s`` (the sample the modes came from) the quantum is judged by
    :func:`workbench.stats.quantum_evidence` over the clusters as modes — the same rule
    ``workbench diagnose`` applies: the spacing must sit above the output's resolution and
    every cluster on a step must be narrow (else inconclusive: a second population, not a step);
    and a single step from the fastest cluster smaller than that cluster's own latency
    (3.5 and 5.8 ms) is a split of the bulk, not a stall step; one step from the
    fastest cluster under ``SINGLE_STEP_MIN_RATIO`` times its latency (1.2 and 2.9 ms) may be a
    fast and a slow path: both inconclusive. Evidence then
    also has ``multiples``, ``score`` and ``resolution_ms``.
    """
    ev: dict[str, object] = {"calls": int(n_calls), "clusters_ms": [round(m.location, 2) for m in modes.modes],
                             "counts": [int(m.count) for m in modes.modes], "quantum_ms": modes.quantum_ms}
    many = len(modes.modes) >= 2
    listing = ", ".join(f"{m.location:.4g} ms ({m.count} calls)" for m in modes.modes)
    quantum = modes.quantum_ms
    why_not = f"{len(modes.modes)} clusters ({listing or 'none'}) without a common spacing"
    if latency_s is not None and many and n_calls >= min_calls:
        from ..stats import quantum_evidence

        x = 1e3 * np.asarray(latency_s, dtype=float)
        q = quantum_evidence(x[np.isfinite(x)], modes=modes.modes)
        ev.update({"multiples": list(q.multiples), "score": q.score, "resolution_ms": q.resolution})
        quantum = q.quantum if q.verdict == "yes" else None
        ev["quantum_ms"] = quantum
        first = min(m.location for m in modes.modes)
        steps = [k for k in q.multiples if k >= 1]
        if quantum is not None and len(steps) == 1 and q.origin != 0.0 and quantum < first:
            why_not = (f"{listing}: one step of {quantum:.4g} ms from the fastest cluster, smaller than that "
                       "cluster's own latency — a split of the bulk, not a stall step")
            quantum = None
            ev["quantum_ms"] = None
        elif (quantum is not None and len(steps) == 1 and q.origin != 0.0
              and quantum < SINGLE_STEP_MIN_RATIO * first):
            why_not = (f"{listing}: one step of {quantum:.4g} ms from the fastest cluster, under "
                       f"{SINGLE_STEP_MIN_RATIO:g}× that cluster's latency — a fast and a slow path look like this "
                       "too; a fixed wait shows as a step far above the bulk or as clusters on multiples of it")
            quantum = None
            ev["quantum_ms"] = None
        elif quantum is None:
            why_not = f"{len(modes.modes)} clusters ({listing}) without a common spacing: {q.reason}"
    return decide("Are the call times quantized?",
                  yes=n_calls >= min_calls and many and quantum is not None,
                  no=n_calls >= min_calls and len(modes.modes) == 1,
                  because_yes=f"{len(modes.modes)} clusters — {listing} — spaced by a common quantum of "
                              f"{quantum or 0:.4g} ms",
                  because_no=f"one cluster only ({listing})",
                  because_inconclusive=(f"only {n_calls} calls (at least {min_calls} needed)" if n_calls < min_calls
                                        else why_not),
                  evidence=ev)


def after_fix_decision(before_s: Sequence[float] | np.ndarray, after_s: Sequence[float] | np.ndarray | None,
                       modes: LatencyModes, *, confidence: float = 0.95, widen: float = 1.1) -> Decision:
    """Are the slow clusters gone after the fix? Counts in each slow cluster's window, before against after.

    The slow clusters are the :func:`latency_modes` clusters except the fastest
    (with a quantum: those at least half a quantum above the fastest); each one's window is its extent widened by ``widen`` on both sides. yes:
    every slow cluster's share after the fix is below its share before (Wilson
    yes: the share of calls in the slow clusters (pooled) is lower after the fix
    (Wilson intervals at ``confidence`` disjoint; calls left in a cluster are
    caveats); no: after-fix calls still fall in them at a share not clearly
    lower; inconclusive: no after-fix data, no slow cluster before, or none after
    but too few after-fix calls to tell. Evidence has the counts per cluster.
    """
    q = "Are the slow clusters gone after the fix?"
    after = None if after_s is None else np.asarray(after_s, dtype=float)
    after = None if after is None else after[np.isfinite(after)]
    before = np.asarray(before_s, dtype=float)
    before = before[np.isfinite(before)]
    if after is None or after.size == 0:
        return Decision(q, "inconclusive", "there is no after-fix data to compare with", {"after_calls": 0})
    ordered = sorted(modes.modes, key=lambda m: m.location)
    slow = ordered[1:]
    if modes.quantum_ms and ordered:
        # the quantized clusters: at least half a quantum above the fastest one (sub-clusters of the bulk are not)
        slow = [m for m in slow if m.location - ordered[0].location >= 0.5 * modes.quantum_ms]
    p99_b, p99_a = (1e3 * float(np.percentile(v, 99)) for v in (before, after))
    ev: dict[str, object] = {"before_calls": int(before.size), "after_calls": int(after.size),
                             "before_p99_ms": p99_b, "after_p99_ms": p99_a, "clusters": []}
    if not slow:
        return Decision(q, "inconclusive", "the calls before the fix have no slow cluster to look for", ev)
    rows = []
    for m in slow:
        lo, hi = m.low / widen / 1e3, m.high * widen / 1e3
        kb, ka = int(((before >= lo) & (before <= hi)).sum()), int(((after >= lo) & (after <= hi)).sum())
        rows.append({"cluster_ms": round(m.location, 2), "before": kb, "after": ka,
                     "before_share": kb / before.size, "after_share": ka / after.size})
    ev["clusters"] = rows
    kb, ka = sum(r["before"] for r in rows), sum(r["after"] for r in rows)
    (blo, _bhi), (_alo, ahi) = ((float(a), float(b)) for a, b in (wilson_interval(kb, before.size, confidence),
                                                                    wilson_interval(ka, after.size, confidence)))
    ev.update(slow_before=kb, slow_after=ka, slow_share_before=kb / before.size, slow_share_after=ka / after.size)
    gone = ahi < blo
    caveats = tuple(f"{r['after']} after-fix call(s) still near {r['cluster_ms']:g} ms" for r in rows if r["after"])
    return decide(q, yes=gone, no=not gone and ka > 0,
                  because_yes=(f"{ka} of {after.size} after-fix calls fall in the slow clusters against {kb} of "
                               f"{before.size} before (" + ", ".join(
                                   f"{r['after']} vs {r['before']} near {r['cluster_ms']:g} ms" for r in rows)
                               + f"); p99 {p99_b:.4g} → {p99_a:.4g} ms"),
                  because_no=(f"{ka} of {after.size} after-fix calls still fall in the slow clusters (before: {kb} of "
                              f"{before.size}), not clearly fewer: " + ", ".join(
                                  f"{r['after']} near {r['cluster_ms']:g} ms" for r in rows if r["after"])),
                  because_inconclusive=(f"none of {after.size} after-fix calls falls in the slow clusters, but "
                                        f"{kb} of {before.size} before is too rare a share to tell from so few calls"),
                  evidence=ev, caveats=caveats)


def network_decision(check: BaselineCheck) -> Decision:
    """Is the network ruled out? From :func:`baseline_check` (inconclusive when the series do not overlap)."""
    ev = {"verdict": check.verdict, "baseline_p99_ms": check.baseline_p99_ms, "calls_p99_ms": check.calls_p99_ms,
          "explained_share": check.explained_share, "overlap_s": check.overlap_s,
          "calls_span_s": check.calls_span_s, "probes_in_span": check.probes_in_span, "probes": check.probes,
          "slow_calls": check.slow_calls, "slow_calls_with_slow_baseline": check.slow_calls_with_slow_baseline}
    caveats = (("the baseline does not overlap the calls in time: measure it during the calls",)
               if check.verdict == "no overlap" else ())
    return decide("Is the network ruled out?", yes=check.verdict == "network ruled out",
                  no=check.verdict == "network may contribute", because_yes=check.reason, because_no=check.reason,
                  because_inconclusive=check.reason, evidence=ev, caveats=caveats)


def stall_decision(test: StallTest, control: StallTest | None = None) -> Decision:
    """Does a global stall hit whatever runs? From :func:`global_stall_test` (and its control run, if any).

    yes: "global stall"; no: "not proportional to step length" with the whole
    correlation CI below the test's ``min_correlation``, or fewer slow occurrences
    than the test needs; inconclusive: slow steps exist but the slope's CI reaches
    zero, or the slope is positive and the correlation's CI straddles
    ``min_correlation`` (a few stalls: too little evidence either way). Steps off
    the line (Holm-corrected over all steps) and a control run that shows the same
    effect are caveats.
    """
    ev = {"slope_per_ms": test.slope_per_ms, "slope_ci": [test.slope_low, test.slope_high],
          "correlation": test.correlation, "correlation_ci": [test.correlation_low, test.correlation_high],
          "slow_occurrences": test.n_slow, "steps": test.n_steps, "requests": test.n_requests,
          "outliers": list(test.outliers), "control_verdict": None if control is None else control.verdict}
    caveats = []
    if test.outliers:
        caveats.append(f"step(s) {', '.join(map(str, test.outliers))} stand off the line after a Holm correction "
                       f"over {test.n_steps} steps: look inside them")
    if control is not None and control.verdict == "global stall":
        caveats.append("the control run shows the same effect: its cause is not the one under test")
    few = test.verdict == "no effect" and "nothing to explain" in test.reason
    not_prop = test.verdict == "not proportional to step length"
    below = not_prop and math.isfinite(test.correlation_high) and test.correlation_high < test.min_correlation
    undecided = test.reason
    if not_prop and not below:
        undecided = (f"slow steps exist ({test.n_slow}) and the slope is positive; r = {test.correlation:.2f} with a "
                     f"CI [{test.correlation_low:.2f}, {test.correlation_high:.2f}] that straddles "
                     f"{test.min_correlation}: too few slow steps to tell a global stall from steps slow for reasons "
                     "of their own")
    return decide("Does a global stall hit whatever runs?", yes=test.verdict == "global stall",
                  no=below or few,
                  because_yes=test.reason, because_no=test.reason, because_inconclusive=undecided,
                  evidence=ev, caveats=tuple(caveats))


def interference_decision(res: InterferenceResult) -> Decision:
    """Does the interfering load slow the requests? From :func:`interference_ab`."""
    ev = {"median_ratio": res.median.ratio, "median_ratio_ci": [res.median.low, res.median.high],
          "p99_ratio": res.p99.ratio, "blocks": [res.n_blocks_a, res.n_blocks_b], "verdict": res.verdict}
    return decide(f"Does {res.b_label} slow the requests against {res.a_label}?",
                  yes=res.verdict == "interference", no=res.verdict == "faster under load",
                  because_yes=res.reason, because_no=res.reason, because_inconclusive=res.reason, evidence=ev)


def select_rows(frame: pd.DataFrame, column: str, value: str) -> pd.DataFrame:
    """Rows whose ``column`` equals ``value`` (a lab capture's run or condition); all rows when ``value`` is empty
    or the frame has no such column (a user's file without labels). Keeps attrs; ``attrs["selected"]`` says what."""
    if not value or column not in frame.columns:
        out = frame.copy()
        out.attrs["selected"] = "all rows" if not value else f"all rows (no {column!r} column)"
        return out
    labels = frame[column].astype(str)
    if not (labels == value).any():
        raise UsageError(f"no row has {column} == {value!r}; the values are {sorted(set(labels))}")
    out = frame[labels == value].reset_index(drop=True)
    out.attrs = dict(frame.attrs)
    out.attrs["selected"] = f"{column} == {value!r}"
    return out


def latency_sample(frame: pd.DataFrame) -> np.ndarray:
    """Latencies in seconds from any :func:`workbench.latency.read_latency` frame, one value per call.

    Raw samples give their ``latency_s``; a distribution (HdrHistogram log or
    percentile table with a ``count`` column) gives each bucket's value
    ``count`` times. A distribution without counts (percentiles only) cannot
    give calls: :class:`~workbench.errors.UsageError`.
    """
    requires(frame, "latency_s")
    v = frame["latency_s"].to_numpy(dtype=float)
    if frame.attrs.get("kind") == "distribution" or "count" in frame.columns and "percentile" in frame.columns:
        if "count" not in frame.columns:
            raise UsageError("this latency file holds percentiles without counts: it cannot give single calls")
        c = frame["count"].to_numpy(dtype=float)
        ok = np.isfinite(v) & np.isfinite(c) & (c > 0)
        return np.repeat(v[ok], c[ok].astype(np.int64))
    return v[np.isfinite(v)]


def parse_phases(text: str) -> dict[str, tuple[int, ...]]:
    """Phases of a pipeline from text such as ``"before:1-5;evaluate:6-12;after:13-15"`` (ranges or commas;
    ``name=…`` is read too)."""
    out: dict[str, tuple[int, ...]] = {}
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        name, sep, spec = part.partition(":") if ":" in part else part.partition("=")
        steps: list[int] = []
        try:
            for item in spec.split(","):
                lo, dash, hi = item.strip().partition("-")
                steps += list(range(int(lo), int(hi) + 1)) if dash else [int(lo)]
        except ValueError:
            steps = []
        if not sep or not name.strip() or not steps:
            raise UsageError(f"phases: expected 'name:1-5;other:6,7', got {part!r}")
        out[name.strip()] = tuple(steps)
    if not out:
        raise UsageError(f"phases: expected 'name:1-5;other:6,7', got {text!r}")
    return out


def phase_decision(summary: pd.DataFrame, *, max_gap: float = 0.15, min_slow: int = 5,
                   slow_requests: int | None = None) -> Decision:
    """Does one phase take far more than its share of the slow requests' excess? From :func:`phase_split`.

    yes: some phase's share of the excess exceeds its share of the typical time
    by ``max_gap`` or more (look inside it first); no: every phase takes about its
    share (a cause that hits all of them, such as a global stall); inconclusive:
    no excess to place, or fewer than ``min_slow`` slow requests (``slow_requests``).
    ``max_gap`` is a fixed threshold, not a confidence bound: it is named as an assumption.
    """
    requires(summary, "phase", "share_of_time", "share_of_excess")
    gaps = (summary["share_of_excess"] - summary["share_of_time"]).to_numpy(dtype=float)
    ev = {"phases": {str(p): {"share_of_time": float(t), "share_of_excess": float(e)}
                     for p, t, e in zip(summary["phase"], summary["share_of_time"], summary["share_of_excess"],
                                        strict=True)},
          "max_gap": max_gap, "slow_requests": slow_requests}
    known = bool(np.isfinite(gaps).all()) and (slow_requests is None or slow_requests >= min_slow)
    worst = int(np.nanargmax(gaps)) if np.isfinite(gaps).any() else 0
    name = str(summary["phase"].iloc[worst]) if len(summary) else ""
    listing = ", ".join(f"{p} {e:.0%} of the excess for {t:.0%} of the time" for p, t, e in
                        zip(summary["phase"], summary["share_of_time"], summary["share_of_excess"], strict=True))
    big = known and float(gaps[worst]) >= max_gap
    return decide("Does one phase take far more than its share of the excess?", yes=big, no=known and not big,
                  because_yes=f"{listing}: {name} takes {gaps[worst]:.0%} more than its share; look inside it first",
                  because_no=f"{listing}: each phase takes about its share (within {max_gap:.0%}), so something "
                             "hits all of them",
                  because_inconclusive=(f"only {slow_requests} slow requests (at least {min_slow} needed)"
                                        if known is False and np.isfinite(gaps).all()
                                        else "no slow request: there is no excess to place"),
                  evidence=ev, caveats=(f"the {max_gap:.0%} gap is a fixed threshold, not a confidence bound",))
