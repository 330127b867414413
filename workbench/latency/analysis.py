"""Analyses of raw latency samples: percentiles with CIs, over-threshold rates, rate sweeps.

Every function here accepts **raw-sample frames** only: one row per request
with ``latency_s`` (float, seconds; NaN = the request got no reply) and, where
rates are computed, ``timestamp_s`` (scheduled or actual start, seconds). That
is ``read_latency(...)`` output with ``attrs["kind"] == "samples"`` or a frame
built by hand with those columns. Each function first states what it needs
with :func:`workbench.schema.requires`: a missing column, or a pre-aggregated
distribution (``attrs["kind"] == "distribution"``: histograms, percentile
tables, whose percentiles cannot be bootstrapped and whose requests cannot be
counted per second), raises :class:`~workbench.errors.SchemaError`.

- :func:`percentiles` — p50/p90/p99/p99.9 with bootstrap CIs per group.
- :func:`over_threshold` — requests slower than a threshold, per second, per group.
- :func:`over_threshold_series` — the same per one-second bin (a time series).
- :func:`rate_sweep` — per offered rate: achieved rate, percentiles with CIs,
  over-threshold per second, and whether the rate was sustained.
- :func:`option_bisection` — read an option-removal bisection back from its runs.
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..schema import requires
from ..stats import percentile_cis

__all__ = [
    "BisectionResult",
    "DEFAULT_QUANTILES",
    "option_bisection",
    "over_threshold",
    "over_threshold_series",
    "percentiles",
    "quantile_column",
    "rate_sweep",
]

DEFAULT_QUANTILES: tuple[float, ...] = (50, 90, 99, 99.9)


def quantile_column(q: float) -> str:
    """Column stem for a percentile: 50 → ``p50``, 99.9 → ``p99_9``."""
    return "p" + f"{q:g}".replace(".", "_")


def _keys(by: str | Sequence[str] | None) -> list[str]:
    return [by] if isinstance(by, str) else list(by or [])


def _groups(frame: pd.DataFrame, by: str | Sequence[str] | None) -> Iterator[tuple[tuple[Any, ...], pd.DataFrame]]:
    keys = _keys(by)
    if not keys:
        yield (), frame
        return
    for key, sub in frame.groupby(keys, sort=True, dropna=False):
        yield (key if isinstance(key, tuple) else (key,)), sub


def _pct_columns(lat: np.ndarray, qs: Sequence[float], ci: bool, confidence: float, n_resamples: int,
                 groups: np.ndarray | None, seed: int) -> dict[str, float]:
    row: dict[str, float] = {}
    finite = lat[np.isfinite(lat)]
    for q in qs:
        stem = quantile_column(q)
        for suffix in ("_s", "_low_s", "_high_s"):
            row[stem + suffix] = math.nan
        row[stem + "_n_beyond"] = 0
    if finite.size == 0:
        return row
    if ci:
        res = percentile_cis(lat, qs, confidence=confidence, n_resamples=n_resamples,
                             groups=cast("Sequence[Any] | None", groups), seed=seed)
        for r in res:
            stem = quantile_column(r.q)
            row[stem + "_s"], row[stem + "_low_s"], row[stem + "_high_s"] = r.value, r.low, r.high
            row[stem + "_n_beyond"] = r.n_beyond
    else:
        for q, v in zip(qs, np.percentile(finite, qs), strict=True):
            stem = quantile_column(q)
            row[stem + "_s"] = float(v)
            row[stem + "_n_beyond"] = int(np.sum(finite > v))
    return row


def percentiles(frame: pd.DataFrame, by: str | Sequence[str] | None = None,
                qs: Sequence[float] = DEFAULT_QUANTILES, *, ci: bool = True, confidence: float = 0.95,
                n_resamples: int = 500, resample_by: str | None = None, seed: int = 0) -> pd.DataFrame:
    """Percentiles of ``latency_s`` per group, with percentile-bootstrap CIs.

    Unanswered requests (NaN latency) are counted, not used in the percentiles.
    ``resample_by`` names a column (e.g. ``run``) whose groups are resampled
    whole instead of single requests. Returns one row per group: the ``by``
    columns, ``n`` (answered), ``n_unanswered`` and for each q ``pQ_s``,
    ``pQ_low_s``, ``pQ_high_s`` (CI) and ``pQ_n_beyond`` (samples above the
    estimate; e.g. p99 of 200 samples rests on 2).
    """
    requires(frame, "latency_s", *_keys(by), *([resample_by] if resample_by else []), kind="samples")
    keys = _keys(by)
    rows = []
    for key, sub in _groups(frame, keys):
        lat = sub["latency_s"].to_numpy(dtype="float64")
        g = sub[resample_by].to_numpy() if resample_by else None
        row = dict(zip(keys, key, strict=True))
        row["n"] = int(np.isfinite(lat).sum())
        row["n_unanswered"] = int((~np.isfinite(lat)).sum())
        row.update(_pct_columns(lat, qs, ci, confidence, n_resamples, g, seed))
        rows.append(row)
    return pd.DataFrame(rows)


def _span_s(ts: np.ndarray) -> float:
    """Duration covered by start times: first to last, plus one typical gap."""
    ts = np.sort(ts[np.isfinite(ts)])
    if ts.size == 0:
        return math.nan
    if ts.size == 1:
        return math.nan
    gap = float(np.median(np.diff(ts)))
    return float(ts[-1] - ts[0] + gap)


def _throughput_per_s(t_done: np.ndarray) -> float:
    """Completions per second over the middle 90 % of completion times.

    Trimming 5 % at each end keeps one stalled first or last request from
    stretching a short run's span; a queue that builds up still stretches it.
    """
    t = np.sort(t_done[np.isfinite(t_done)])
    if t.size < 3:
        return math.nan
    lo, hi = np.percentile(t, [5, 95])
    inside = int(np.sum((t >= lo) & (t <= hi)))
    return (inside - 1) / (hi - lo) if hi > lo else math.nan


def over_threshold(frame: pd.DataFrame, threshold_s: float, by: str | Sequence[str] | None = None,
                   ) -> pd.DataFrame:
    """Requests slower than ``threshold_s`` (or unanswered), per second of run, per group.

    The run length is the span of ``timestamp_s`` plus one typical gap between
    requests. Returns the ``by`` columns, ``n``, ``n_over``, ``fraction_over``,
    ``duration_s`` and ``over_per_s``.
    """
    requires(frame, "latency_s", "timestamp_s", *_keys(by), kind="samples")
    keys = _keys(by)
    rows = []
    for key, sub in _groups(frame, keys):
        lat = sub["latency_s"].to_numpy(dtype="float64")
        over = int(np.sum(~np.isfinite(lat) | (lat > threshold_s)))
        dur = _span_s(sub["timestamp_s"].to_numpy(dtype="float64"))
        row = dict(zip(keys, key, strict=True))
        row.update(n=int(lat.size), n_over=over, fraction_over=over / lat.size if lat.size else math.nan,
                   duration_s=dur, over_per_s=over / dur if dur and dur > 0 else math.nan)
        rows.append(row)
    return pd.DataFrame(rows)


def over_threshold_series(frame: pd.DataFrame, threshold_s: float, bin_s: float = 1.0) -> pd.DataFrame:
    """Requests over ``threshold_s`` in each ``bin_s`` window of ``timestamp_s``.

    Returns ``t_s`` (bin start, seconds from the first request), ``n`` and
    ``n_over`` per bin, and ``over_per_s`` (n_over / bin_s).
    """
    requires(frame, "latency_s", "timestamp_s", kind="samples")
    if not bin_s > 0:
        raise UsageError(f"over_threshold_series: bin_s={bin_s!r}; expected a bin width > 0 seconds")
    ts = frame["timestamp_s"].to_numpy(dtype="float64")
    lat = frame["latency_s"].to_numpy(dtype="float64")
    ok = np.isfinite(ts)
    ts, lat = ts[ok], lat[ok]
    if ts.size == 0:
        return pd.DataFrame({"t_s": [], "n": [], "n_over": [], "over_per_s": []})
    rel = ts - ts.min()
    b = np.floor(rel / bin_s).astype("int64")
    over = ~np.isfinite(lat) | (lat > threshold_s)
    nb = int(b.max()) + 1
    n = np.bincount(b, minlength=nb)
    n_over = np.bincount(b, weights=over.astype(float), minlength=nb).astype("int64")
    return pd.DataFrame({"t_s": np.arange(nb) * bin_s, "n": n, "n_over": n_over, "over_per_s": n_over / bin_s})


def rate_sweep(frame: pd.DataFrame, threshold_s: float = 0.01, *, by: str | Sequence[str] | None = None,
               rate_column: str = "rate_per_s", recv_column: str | None = "recv_s",
               qs: Sequence[float] = DEFAULT_QUANTILES, sustain_fraction: float = 0.9,
               growth_limit_s: float = 0.05, ci: bool = True, n_resamples: int = 500,
               seed: int = 0) -> pd.DataFrame:
    """Summarise an open-loop rate sweep: one row per offered rate (and ``by`` group).

    Columns: the ``by`` columns, ``offered_per_s``, ``n``, ``n_unanswered``,
    ``achieved_per_s`` (answered requests per second over the middle 90 % of
    reply times, from ``recv_column``; else of ``timestamp_s``), the
    percentile columns of :func:`percentiles` (``p50_s``, ``p50_low_s``, …),
    ``over_per_s`` and ``fraction_over`` (requests above ``threshold_s``),
    ``backlog_growth_s`` (median latency of the last quarter minus the first:
    a queue that builds up) and ``sustained``: no unanswered request, achieved
    ≥ ``sustain_fraction`` × offered, and backlog growth ≤ ``growth_limit_s``.
    """
    requires(frame, "latency_s", "timestamp_s", rate_column, *_keys(by), kind="samples")
    keys = _keys(by) + [rate_column]
    rows = []
    for key, sub in _groups(frame, keys):
        sub = sub.sort_values("timestamp_s")
        lat = sub["latency_s"].to_numpy(dtype="float64")
        offered = float(key[-1])
        answered = np.isfinite(lat)
        if recv_column and recv_column in sub.columns:
            t_done = sub[recv_column].to_numpy(dtype="float64")[answered]
        else:
            t_done = sub["timestamp_s"].to_numpy(dtype="float64")[answered]
        achieved = _throughput_per_s(t_done)
        quarter = max(1, lat.size // 4)
        head, tail = lat[:quarter], lat[-quarter:]
        growth = (float(np.nanmedian(tail) - np.nanmedian(head))
                  if np.isfinite(head).any() and np.isfinite(tail).any() else math.nan)
        over = int(np.sum(~answered | (lat > threshold_s)))
        dur = _span_s(sub["timestamp_s"].to_numpy(dtype="float64"))
        row = dict(zip(keys[:-1], key[:-1], strict=True))
        row.update(offered_per_s=offered, n=int(lat.size), n_unanswered=int((~answered).sum()),
                   achieved_per_s=float(achieved))
        row.update(_pct_columns(lat, qs, ci, 0.95, n_resamples, None, seed))
        row.update(over_per_s=over / dur if dur and dur > 0 else math.nan,
                   fraction_over=over / lat.size if lat.size else math.nan,
                   backlog_growth_s=growth)
        row["sustained"] = bool(row["n_unanswered"] == 0 and np.isfinite(achieved)
                                and achieved >= sustain_fraction * offered
                                and np.isfinite(growth) and growth <= growth_limit_s)
        rows.append(row)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class BisectionResult:
    """An option-removal bisection read back from its runs.

    ``steps``: one row per trial in run order — ``run``, ``options`` (kept set,
    '+'-joined), ``removed`` (option taken out in this trial, '' for the first),
    ``p_s`` (the percentile used), ``regressed`` (p_s > threshold). ``culprits``:
    options whose removal brought the regression back. ``alone``: option →
    whether that option alone avoids the regression (empty when not measured).
    ``threshold_s`` and ``q`` say what "regressed" meant.
    """

    steps: pd.DataFrame
    culprits: tuple[str, ...]
    alone: dict[str, bool]
    threshold_s: float
    q: float


def _option_set(text: str) -> frozenset[str]:
    return frozenset() if text in ("", "none") else frozenset(text.split("+"))


def option_bisection(trials: pd.DataFrame, threshold_s: float = 0.02, *, q: float = 90,
                     options_column: str = "client_options", alone: pd.DataFrame | None = None,
                     ) -> BisectionResult:
    """Replay a one-option-at-a-time removal from the samples of its trials.

    ``trials``: raw samples with ``run`` and ``options_column`` ('+'-joined
    option names, 'none' for no option), one run per trial, in run order. The
    first trial is the full set; each later trial removes one option from the
    set kept so far. A trial regresses when its ``q`` percentile exceeds
    ``threshold_s`` (or a request went unanswered); a regressing removal names a
    culprit and the option is kept, otherwise it stays removed. ``alone``:
    optional samples of trials with a single option each. The verdicts are
    recomputed from the samples, not taken from the lab's own decisions.
    """
    requires(trials, "latency_s", "run", options_column, kind="samples")
    if alone is not None and len(alone):
        requires(alone, "latency_s", "run", options_column, kind="samples", by="option_bisection (alone=)")
    rows = []
    kept: frozenset[str] | None = None
    culprits: list[str] = []
    for run, sub in trials.groupby("run", sort=True):
        opts = _option_set(str(sub[options_column].iloc[0]))
        lat = sub["latency_s"].to_numpy(dtype="float64")
        p = float(np.nanpercentile(lat, q)) if np.isfinite(lat).any() else math.inf
        regressed = bool(p > threshold_s or not np.isfinite(lat).all())
        if kept is None:
            removed = ""
            kept = opts
        else:
            diff = kept - opts
            if len(diff) != 1 or not opts <= kept:
                raise UsageError(f"option_bisection: trials run {run}: options {sorted(opts)} are not the kept "
                                 f"set {sorted(kept)} minus one option; expected one removal per trial, in run order")
            removed = next(iter(diff))
            if regressed:
                culprits.append(removed)
            else:
                kept = opts
        rows.append({"run": run, "options": "+".join(sorted(opts)) or "none", "removed": removed,
                     "p_s": p, "regressed": regressed})
    fixes: dict[str, bool] = {}
    if alone is not None and len(alone):
        for _, sub in alone.groupby("run", sort=True):
            opts = _option_set(str(sub[options_column].iloc[0]))
            lat = sub["latency_s"].to_numpy(dtype="float64")
            p = float(np.nanpercentile(lat, q)) if np.isfinite(lat).any() else math.inf
            fixes["+".join(sorted(opts))] = bool(p <= threshold_s and np.isfinite(lat).all())
    return BisectionResult(pd.DataFrame(rows), tuple(culprits), fixes, float(threshold_s), float(q))
