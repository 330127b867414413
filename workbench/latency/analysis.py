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
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from ..errors import InputNotFoundError, SchemaError, UsageError
from ..schema import requires
from ..stats import (
    Mode,
    compare,
    find_modes,
    find_quantum,
    holm_adjust,
    kde_bandwidth,
    percentile_cis,
)
from ..verdicts import Decision, Verdict, decide

__all__ = [
    "BisectionResult",
    "DEFAULT_QUANTILES",
    "NODELAY_SIDES",
    "NodelayDecision",
    "LAB_PHASES",
    "QuantumDecision",
    "RATE_COLUMNS",
    "bisection_culprit",
    "bisection_trials",
    "lab_phases",
    "delayed_ack_quantum",
    "latency_modes",
    "low_rates",
    "nodelay_side",
    "option_bisection",
    "over_threshold",
    "over_threshold_series",
    "percentiles",
    "quantile_column",
    "path_is_fast",
    "rate_sweep",
    "read_runs",
    "slow_per_second_at_low_rate",
    "tail_worse_at_low_rate",
    "work_is_not_the_cause",
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


# ------------------------------------------------------------ rate sweeps from any capture ----

#: Columns taken as the offered rate of a run, in order of preference (requests/s).
RATE_COLUMNS: tuple[str, ...] = ("rate_per_s", "offered_per_s", "rate_rps", "target_rps", "rps", "qps",
                                 "rate", "target_qps", "requests_per_s")
_RATE_IN_NAME = re.compile(r"(?:rate|rps|qps)[_\-=]?(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)[_\-]?(?:rps|qps|per_?s)",
                           re.IGNORECASE)


def _latency_files(path: Path) -> list[Path]:
    """The latency files of a folder (sorted, recursive; README and notes are not captures)."""
    files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")
                   and p.suffix.lower() not in (".md", ".py", ".sh"))
    if not files:
        raise InputNotFoundError(f"{path}: folder holds no latency file")
    return files


def read_runs(path: str | Path, *, phase: str | None = None) -> pd.DataFrame:
    """Read one latency file or a folder of them (one run per file) as samples with a ``rate_per_s`` column.

    Any :func:`~workbench.latency.read_latency` format that gives raw samples.
    The rate of each request comes from, in order: a rate column
    (:data:`RATE_COLUMNS`); a number in the file name (``rate_500.csv``,
    ``500rps.csv``); else the file's own achieved rate (answered requests per
    second of its time span, rounded to 2 significant digits).
    ``attrs["rate_from"]`` says which. A lab capture with a ``phase`` column
    keeps only the rows of ``phase`` (when given). Files with relative
    timestamps (hey) are laid end to end so their spans do not overlap.
    Returns the loader's columns plus ``rate_per_s`` (and ``file`` for a folder).
    """
    from . import read_latency

    p = Path(path)
    if not p.exists():
        raise InputNotFoundError(f"{p}: no such latency file or folder")
    files = _latency_files(p) if p.is_dir() else [p]
    frames = []
    rate_from: set[str] = set()
    offset = 0.0
    rejects = []
    formats = set()
    for f in files:
        fr = read_latency(f)
        if fr.attrs.get("kind") != "samples":
            raise SchemaError(f"{f}: a latency {fr.attrs.get('kind')} ({fr.attrs.get('format')}), not one row per "
                              "request; the rate sweep needs raw samples (a per-request CSV, hey -o csv, k6, "
                              "JMeter, ghz with details …)")
        rejects.append(fr.attrs["rejects"])
        formats.add(str(fr.attrs.get("format")))
        if phase is not None and "phase" in fr.columns:
            fr = fr[fr["phase"].astype(str) == phase].copy()
        else:
            fr = fr.copy()
        if "timestamp_s" in fr.columns and fr.attrs.get("timestamp_origin") == "relative" and len(files) > 1:
            fr["timestamp_s"] = fr["timestamp_s"] + offset
            if fr["timestamp_s"].notna().any():
                offset = float(fr["timestamp_s"].max()) + 1.0
        col = next((c for c in RATE_COLUMNS if c in fr.columns and pd.api.types.is_numeric_dtype(fr[c])), None)
        if col is not None:
            fr["rate_per_s"] = fr[col].astype("float64")
            rate_from.add(f"column {col}")
        else:
            m = _RATE_IN_NAME.search(f.stem)
            if m is not None:
                fr["rate_per_s"] = float(m.group(1) or m.group(2))
                rate_from.add("file name")
            else:
                fr["rate_per_s"] = _achieved_rate(fr)
                rate_from.add("achieved rate of each file")
        if len(files) > 1:
            fr["file"] = f.name
        frames.append(fr)
    out = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    from ..schema import Rejects, attach_rejects

    out.attrs = {"kind": "samples", "format": ",".join(sorted(formats)), "source": [str(f) for f in files],
                 "rate_from": ", ".join(sorted(rate_from))}
    return attach_rejects(out, Rejects.concat(rejects))


def _achieved_rate(fr: pd.DataFrame) -> float:
    """Answered requests per second over a file's time span, to 2 significant digits (NaN without times)."""
    if "timestamp_s" not in fr.columns:
        return math.nan
    n = int(np.isfinite(fr["latency_s"].to_numpy(dtype="float64")).sum())
    span = _span_s(fr["timestamp_s"].to_numpy(dtype="float64"))
    if not (n > 1 and span > 0):
        return math.nan
    r = n / span
    return float(f"{r:.2g}")


def low_rates(rates: Sequence[float], max_per_s: float | None = None) -> list[float]:
    """The "low" rates of a sweep: those ≤ ``max_per_s`` when given, else the lowest third (at least one)."""
    rs = sorted({float(r) for r in rates if np.isfinite(r)})
    if not rs:
        return []
    if max_per_s is not None and math.isfinite(max_per_s):
        return [r for r in rs if r <= max_per_s]
    return rs[:max(1, math.ceil(len(rs) / 3))]


# ------------------------------------------------------------------------ decisions ----

def _ms(x: float) -> str:
    return "n/a" if not np.isfinite(x) else f"{x * 1e3:.3g} ms"


def _rate(r: float) -> str:
    return f"{r:g}/s"


def _boot_q(x: np.ndarray, q: float, n: int, rng: np.random.Generator) -> np.ndarray:
    idx = rng.integers(0, x.size, size=(n, x.size))
    return np.percentile(x[idx], q, axis=1)


def tail_worse_at_low_rate(samples: pd.DataFrame, *, rates: Sequence[float] | None = None, q: float = 99,
                           rate_column: str = "rate_per_s", alpha: float = 0.05, margin: float = 0.1,
                           min_margin_s: float = 0.001, n_resamples: int = 500, seed: int = 0) -> Decision:
    """Is the ``q`` percentile worse at the lowest rate than at the highest? (yes / no / inconclusive)

    Compares the lowest rate of ``rates`` (default: all rates present; pass the
    sustained ones) with every other rate: bootstrap of the percentile
    difference (low − other), one-sided p-value that low is not higher,
    Holm-adjusted over the pairs. **yes**: low is higher than the highest rate
    (adjusted p < ``alpha``). **no**: the CI of that difference lies below
    ``margin`` × the high rate's percentile (at least ``min_margin_s``): at most
    negligibly worse. Otherwise, and with fewer than two rates or 20 samples a
    rate, **inconclusive**. Evidence: per rate the percentile and its CI
    (``pQ_ms_by_rate``, ``pQ_ci_ms_by_rate``), the pairs' adjusted p-values
    (``p_adjusted_by_rate``), the rates significantly better than the lowest
    (``better_than_lowest``) and ``low_rate``/``high_rate``.
    """
    requires(samples, "latency_s", rate_column, kind="samples")
    present = sorted({float(r) for r in samples[rate_column].dropna().unique()})
    use = present if rates is None else sorted({float(r) for r in rates} & set(present))
    qs = f"p{q:g}"
    question = f"Is the {qs} latency worse at the lowest rate than at the highest?"
    values = {r: samples.loc[samples[rate_column] == r, "latency_s"].to_numpy(dtype="float64") for r in use}
    values = {r: v[np.isfinite(v)] for r, v in values.items()}
    small = [r for r, v in values.items() if v.size < 20]
    use = [r for r in use if r not in small]
    caveats = tuple(f"rate {_rate(r)} has {values[r].size} answered requests, too few for a {qs}" for r in small)
    if len(use) < 2:
        return Decision(question, "inconclusive",
                        f"needs two rates with enough requests to compare; this sweep has {len(use)} "
                        f"({', '.join(_rate(r) for r in present) or 'none'} present)",
                        {"rates_per_s": present, "rates_compared_per_s": use}, caveats)
    rng = np.random.default_rng(seed)
    boots = {r: _boot_q(values[r], q, n_resamples, rng) for r in use}
    est = {r: float(np.percentile(values[r], q)) for r in use}
    ci = {r: (float(np.percentile(boots[r], 2.5)), float(np.percentile(boots[r], 97.5))) for r in use}
    low, high = use[0], use[-1]
    others = use[1:]
    p_raw = []
    for r in others:
        d = boots[low] - boots[r]
        p_raw.append(float((1 + np.sum(d <= 0)) / (n_resamples + 1)))
    p_adj = holm_adjust(p_raw)
    d_high = boots[low] - boots[high]
    d_ci = (float(np.percentile(d_high, 100 * alpha / 2)), float(np.percentile(d_high, 100 * (1 - alpha / 2))))
    allowed = max(min_margin_s, margin * est[high])
    better = [r for r, p in zip(others, p_adj, strict=True) if p < alpha]
    evidence: dict[str, Any] = {
        "low_rate_per_s": low, "high_rate_per_s": high,
        f"{qs}_ms_by_rate": {f"{r:g}": est[r] * 1e3 for r in use},
        f"{qs}_ci_ms_by_rate": {f"{r:g}": [ci[r][0] * 1e3, ci[r][1] * 1e3] for r in use},
        "p_adjusted_by_rate": {f"{r:g}": float(p) for r, p in zip(others, p_adj, strict=True)},
        "better_than_lowest": better, "difference_ci_ms": [d_ci[0] * 1e3, d_ci[1] * 1e3],
        "ratio_low_to_high": est[low] / est[high] if est[high] > 0 else math.inf, "alpha": alpha,
    }
    worse = bool(p_adj[-1] < alpha)
    not_worse = bool(d_ci[1] < allowed)
    ratio = evidence["ratio_low_to_high"]
    head = (f"{qs} is {_ms(est[low])} (95 % CI {_ms(ci[low][0])}–{_ms(ci[low][1])}) at {_rate(low)} and "
            f"{_ms(est[high])} ({_ms(ci[high][0])}–{_ms(ci[high][1])}) at {_rate(high)}")
    return decide(
        question, yes=worse, no=not_worse and not worse,
        because_yes=(f"{head}: {ratio:.1f}× worse with {high / low:.0f}× less load (Holm-adjusted p = "
                     f"{p_adj[-1]:.3g} over {len(others)} rate pair(s))"),
        because_no=(f"{head}: not worse at the lowest rate (95 % CI of the difference lowest − highest "
                    f"{_ms(d_ci[0])} to {_ms(d_ci[1])}, below the {_ms(allowed)} margin)"),
        because_inconclusive=(f"{head}: the difference (95 % CI {_ms(d_ci[0])} to {_ms(d_ci[1])}) neither "
                              f"clears zero after correcting for {len(others)} pair(s) nor stays within the "
                              f"{_ms(allowed)} margin"),
        evidence=evidence, caveats=caveats)


def _poisson_p(k_a: int, t_a: float, k_b: int, t_b: float) -> float:
    """One-sided p-value that events per second in A are not higher than in B (conditional binomial test)."""
    from scipy import stats

    n = k_a + k_b
    if n == 0 or not (t_a > 0 and t_b > 0):
        return 1.0
    return float(stats.binomtest(k_a, n, t_a / (t_a + t_b), alternative="greater").pvalue)


def slow_per_second_at_low_rate(samples: pd.DataFrame, threshold_s: float, *, rates: Sequence[float] | None = None,
                                rate_column: str = "rate_per_s", alpha: float = 0.05) -> Decision:
    """Less load, more slow requests per second? Does some lower rate have more than the highest? (yes/no/inconclusive)

    Slow = over ``threshold_s`` or unanswered, counted per second of each
    rate's span (:func:`over_threshold`). Each lower rate is compared with the
    highest by the conditional binomial test for two Poisson rates, one-sided
    both ways, Holm-adjusted over the lower rates. **yes**: some lower rate has
    significantly more slow requests per second than the highest; **no**: the
    highest rate has significantly more than every lower rate; else (and with
    fewer than two timed rates) **inconclusive**. Evidence:
    ``over_per_s_by_rate``, ``n_over_by_rate``, ``duration_s_by_rate``,
    ``most_over_rate_per_s``, ``more_than_highest`` (the lower rates with
    significantly more) and the adjusted p-values by rate.
    """
    requires(samples, "latency_s", "timestamp_s", rate_column, kind="samples")
    present = sorted({float(r) for r in samples[rate_column].dropna().unique()})
    use = present if rates is None else sorted({float(r) for r in rates} & set(present))
    question = "Less load, more slow requests per second: does a lower rate have more than the highest?"
    sub = samples[samples[rate_column].isin(use)]
    ot = over_threshold(sub, threshold_s, by=rate_column) if len(sub) else pd.DataFrame()
    if len(use) < 2 or ot["duration_s"].isna().any():
        return Decision(question, "inconclusive",
                        f"needs two rates with timed requests; this sweep has {len(use)} usable",
                        {"rates_per_s": present})
    rate_of = [float(x) for x in ot[rate_column]]
    k = dict(zip(rate_of, (int(x) for x in ot["n_over"]), strict=True))
    t = dict(zip(rate_of, (float(x) for x in ot["duration_s"]), strict=True))
    per_s = dict(zip(rate_of, (float(x) for x in ot["over_per_s"]), strict=True))
    high = use[-1]
    lower = use[:-1]
    k_h, t_h = k[high], t[high]
    p_more = holm_adjust([_poisson_p(k[r], t[r], k_h, t_h) for r in lower])
    p_fewer = holm_adjust([_poisson_p(k_h, t_h, k[r], t[r]) for r in lower])
    more = [r for r, p in zip(lower, p_more, strict=True) if p < alpha]
    most = max(use, key=lambda r: per_s[r])
    evidence = {"threshold_ms": threshold_s * 1e3, "high_rate_per_s": high,
                "over_per_s_by_rate": {f"{r:g}": per_s[r] for r in use},
                "n_over_by_rate": {f"{r:g}": k[r] for r in use},
                "duration_s_by_rate": {f"{r:g}": t[r] for r in use},
                "most_over_rate_per_s": most, "more_than_highest": more,
                "p_more_adjusted_by_rate": {f"{r:g}": float(p) for r, p in zip(lower, p_more, strict=True)},
                "p_fewer_adjusted_by_rate": {f"{r:g}": float(p) for r, p in zip(lower, p_fewer, strict=True)}}
    top = more[int(np.argmax([k[r] / t[r] for r in more]))] if more else most
    head = (f"at the highest rate, {_rate(high)}, {k_h} requests over {_ms(threshold_s)} in {t_h:.3g} s "
            f"({k_h / t_h:.3g}/s)")
    return decide(question, yes=bool(more), no=bool(np.all(p_fewer < alpha)) and not more,
                  because_yes=(f"{head}; at {_rate(top)}, {k[top]} in {t[top]:.3g} s ({k[top] / t[top]:.3g}/s): "
                               f"less load, more slow requests per second ({len(more)} of {len(lower)} lower "
                               "rates, Holm-corrected)"),
                  because_no=(f"{head}, significantly more than at each of the {len(lower)} lower rates "
                              "(Holm-corrected): more load, more slow requests per second"),
                  because_inconclusive=(f"{head}; the most per second come at {_rate(most)} "
                                        f"({per_s[most]:.3g}/s), but no lower rate has "
                                        "significantly more after correcting for the comparisons, nor the highest "
                                        "more than all of them"),
                  evidence=evidence)


def latency_modes(lat: np.ndarray) -> tuple[Mode, ...]:
    """Modes of one group's latencies; unrefined KDE peaks where the per-mode refinement cannot run."""
    try:
        return find_modes(lat)
    except (IndexError, ArithmeticError):
        # the per-mode peak refinement cannot run on some modes (very skewed, or values on a coarse grid
        # such as hey's 0.1 ms): the peaks of the whole sample's KDE are used unrefined
        return find_modes(lat, bandwidth=kde_bandwidth(lat))


@dataclass(frozen=True)
class QuantumDecision(Decision):
    """A delayed-ACK quantum decision; ``table``: one row per group (see :func:`delayed_ack_quantum`)."""

    table: pd.DataFrame = field(default_factory=pd.DataFrame)
    quantum_s: float | None = None


def delayed_ack_quantum(samples: pd.DataFrame, by: str | Sequence[str] = "rate_per_s", *,
                        base_by: str | None = None, range_s: tuple[float, float] = (0.03, 0.25),
                        min_samples: int = 50, agree: float = 0.15) -> QuantumDecision:
    """Do latencies sit on steps of a delayed-ACK timer (Linux ≥ 40 ms, at most 200 ms)? (yes / no / inconclusive)

    :func:`~workbench.stats.find_modes` and :func:`~workbench.stats.find_quantum`
    run on each group of ``by`` (rate, socket setting) separately, never on the
    pooled samples: a quantum is a property of one condition. Steps are counted
    from the group's fastest mode; with ``base_by`` (e.g. the rate column) from
    the fastest mode of any group sharing that value when it is faster by at
    least ``range_s[0]`` (a setting where *every* request stalls has no base
    mode of its own: its steps are counted from the latency the same rate has
    without the stall). **yes**: at least one group with ``min_samples``
    answered requests has a quantum inside ``range_s``; **no**: every group has
    enough samples and none does; **inconclusive**: no group has enough samples.
    ``quantum_s``: the smallest in-range quantum when every in-range quantum
    lies within ``agree`` × that quantum of one of its integer multiples, else
    None. ``table``: the ``by`` columns, ``n``, ``n_modes``, ``modes_ms``
    (text), ``base_ms`` (where steps are counted from), ``quantum_ms`` (NaN if
    none), ``delayed_ack`` (in range) and ``enough``.
    """
    keys = _keys(by)
    requires(samples, "latency_s", *keys, *([base_by] if base_by else []), kind="samples")
    found: list[tuple[dict[str, Any], np.ndarray, tuple[Mode, ...]]] = []
    for key, sub in _groups(samples, keys):
        lat = sub["latency_s"].to_numpy(dtype="float64")
        lat = lat[np.isfinite(lat)]
        row: dict[str, Any] = dict(zip(keys, key, strict=True))
        row["n"] = int(lat.size)
        modes = latency_modes(lat) if lat.size >= min_samples else ()
        found.append((row, lat, modes))
    # the fastest mode per base_by value, with the samples inside it
    bases: dict[Any, tuple[Mode, np.ndarray]] = {}
    if base_by is not None:
        at = keys.index(base_by) if base_by in keys else None
        for row, lat, modes in found:
            if not modes or at is None:
                continue
            v = row[base_by]
            m = modes[0]
            if v not in bases or m.location < bases[v][0].location:
                bases[v] = (m, lat[(lat >= m.low) & (lat <= m.high)])
    rows = []
    for row, lat, modes in found:
        if lat.size < min_samples:
            row.update(n_modes=0, modes_ms="", base_ms=math.nan, quantum_ms=math.nan, delayed_ack=False, enough=False)
            rows.append(row)
            continue
        base = bases.get(row[base_by]) if base_by is not None else None
        if base is not None and modes[0].location - base[0].location >= range_s[0]:
            qv = find_quantum(np.concatenate([lat, base[1]]), modes=(base[0], *modes))
            origin = base[0].location
        else:
            qv = find_quantum(lat, modes=modes) if len(modes) >= 2 else None
            origin = modes[0].location
        row.update(n_modes=len(modes), modes_ms=", ".join(f"{m.location * 1e3:.3g} ({m.count})" for m in modes),
                   base_ms=origin * 1e3, quantum_ms=math.nan if qv is None else qv * 1e3,
                   delayed_ack=bool(qv is not None and range_s[0] <= qv <= range_s[1]), enough=True)
        rows.append(row)
    table = pd.DataFrame(rows, columns=[*keys, "n", "n_modes", "modes_ms", "base_ms", "quantum_ms", "delayed_ack",
                                        "enough"])
    question = "Do the latencies sit on steps of a delayed-ACK timer?"
    enough = table[table["enough"]]
    hits = table[table["delayed_ack"]]
    label = ", ".join(keys)
    quanta = hits["quantum_ms"].to_numpy(dtype="float64") / 1e3
    common = None
    if quanta.size:
        q0 = float(quanta.min())
        mult = np.maximum(1, np.round(quanta / q0))
        if np.all(np.abs(quanta - mult * q0) <= agree * q0):
            common = float(np.sum(mult * quanta) / np.sum(mult * mult))
    others = enough[~enough["delayed_ack"] & enough["quantum_ms"].notna()]
    evidence = {"groups": len(table), "groups_with_enough_samples": len(enough), "groups_with_quantum": len(hits),
                "quantum_ms_by_group": {" ".join(f"{v:g}" if isinstance(v, float) else str(v)
                                                 for v in r[keys]): r["quantum_ms"] for _, r in hits.iterrows()},
                "common_quantum_ms": None if common is None else common * 1e3,
                "range_ms": [range_s[0] * 1e3, range_s[1] * 1e3]}
    caveats = []
    if quanta.size and common is None:
        caveats.append(f"the groups' quanta differ ({', '.join(f'{x * 1e3:.3g} ms' for x in quanta)}) and are not multiples of "
                       "one step: no common one")
    if len(others):
        caveats.append(f"{len(others)} group(s) show a spacing outside the delayed-ACK range "
                       f"({', '.join(f'{x:.3g} ms' for x in others['quantum_ms'])})")
    small = len(table) - len(enough)
    if small:
        caveats.append(f"{small} group(s) have fewer than {min_samples} answered requests and were not searched")
    d = decide(question, yes=len(hits) > 0, no=len(hits) == 0 and len(enough) == len(table) and len(table) > 0,
               because_yes=(f"{len(hits)} of {len(enough)} group(s) by {label} have modes on steps of "
                            + (f"{common * 1e3:.3g} ms" if common is not None else
                               ", ".join(f"{x * 1e3:.3g} ms" for x in quanta))
                            + f", inside the delayed-ACK range {range_s[0] * 1e3:g}–{range_s[1] * 1e3:g} ms"
                            + (f" (steps counted from the fastest mode at the same {base_by})" if base_by else "")),
               because_no=(f"none of the {len(enough)} group(s) by {label} has modes on steps inside "
                           f"{range_s[0] * 1e3:g}–{range_s[1] * 1e3:g} ms"),
               because_inconclusive=(f"{len(enough)} of {len(table)} group(s) by {label} have {min_samples} "
                                     "answered requests to search, none with a quantum"),
               evidence=evidence, caveats=tuple(caveats))
    return QuantumDecision(d.question, d.verdict, d.because, d.evidence, d.caveats, table=table, quantum_s=common)


#: Socket settings a ``TCP_NODELAY`` comparison knows: label → side(s) with TCP_NODELAY.
NODELAY_SIDES: dict[str, str] = {"default": "neither side", "nodelay_client": "the client",
                                 "nodelay_server": "the server", "nodelay_both": "both sides"}


@dataclass(frozen=True)
class NodelayDecision(Decision):
    """Which side's ``TCP_NODELAY`` suffices: ``side`` is client, server, client or server, both, none or
    inconclusive; ``table``: one row per setting and rate (see :func:`nodelay_side`)."""

    side: str = "inconclusive"
    table: pd.DataFrame = field(default_factory=pd.DataFrame)


def nodelay_side(samples: pd.DataFrame, threshold_s: float, *, setting_column: str = "options",
                 rate_column: str = "rate_per_s", q: float = 99, n_resamples: int = 500,
                 seed: int = 0) -> NodelayDecision:
    """Which side's ``TCP_NODELAY`` keeps the ``q`` percentile under ``threshold_s`` at every rate measured?

    ``samples``: raw samples with ``setting_column`` holding labels of
    :data:`NODELAY_SIDES`. A setting *holds* at a rate when the upper 95 % CI
    bound of its percentile is ≤ ``threshold_s``, *fails* when the lower bound is
    above; it suffices when it holds at every rate, fails when it fails at one.
    ``side``: the one-side settings that suffice (client, server, "client or
    server"); else "both" when both sides suffice; "none" when even both fail
    (or one side fails and both was not measured); else inconclusive. Verdict:
    yes for a side that suffices, no for "none". ``table``: setting, rate,
    n, pQ_ms, pQ_low_ms, pQ_high_ms, holds (True/False/NaN = undecided).
    """
    requires(samples, "latency_s", setting_column, rate_column, kind="samples")
    rows = []
    for (setting, rate), sub in samples.groupby([setting_column, rate_column], sort=True):
        lat = sub["latency_s"].to_numpy(dtype="float64")
        if not np.isfinite(lat).any():
            continue
        (c,) = percentile_cis(lat, (q,), n_resamples=n_resamples, seed=seed)
        unanswered = bool((~np.isfinite(lat)).any())
        holds: float = (0.0 if (c.low > threshold_s or unanswered) else 1.0 if c.high <= threshold_s else math.nan)
        rows.append({"setting": str(setting), "rate_per_s": float(cast("float", rate)),
                     "n": int(np.isfinite(lat).sum()),
                     f"p{q:g}_ms": c.value * 1e3, f"p{q:g}_low_ms": c.low * 1e3, f"p{q:g}_high_ms": c.high * 1e3,
                     "holds": holds})
    table = pd.DataFrame(rows, columns=["setting", "rate_per_s", "n", f"p{q:g}_ms", f"p{q:g}_low_ms",
                                        f"p{q:g}_high_ms", "holds"])
    state: dict[str, str] = {}
    for setting, sub in table.groupby("setting"):
        h = sub["holds"]
        state[str(setting)] = "fails" if (h == 0).any() else "suffices" if (h == 1).all() else "undecided"
    unknown = sorted(set(state) - set(NODELAY_SIDES))
    question = "Does TCP_NODELAY keep the tail under the budget, and on which side?"
    ones = [s for s in ("nodelay_client", "nodelay_server") if state.get(s) == "suffices"]
    both = state.get("nodelay_both")
    one_fail = [s for s in ("nodelay_client", "nodelay_server") if state.get(s) == "fails"]
    if ones:
        side = " or ".join(s.removeprefix("nodelay_") for s in ones)
    elif both == "suffices":
        side = "both"
    elif both == "fails" or (both is None and len(one_fail) == 2):
        side = "none"
    else:
        side = "inconclusive"
    measured = "; ".join(f"{NODELAY_SIDES.get(s, s)}: {v}" for s, v in state.items())
    rates = sorted(table["rate_per_s"].unique()) if len(table) else []
    span = f"at {', '.join(_rate(r) for r in rates)}" if rates else "at no rate"
    budget = f"p{q:g} under {_ms(threshold_s)} (95 % CI) {span}"
    because = {
        "both": f"only TCP_NODELAY on both sides keeps {budget} ({measured})",
        "none": f"no measured setting keeps {budget} ({measured})",
        "inconclusive": (f"the measured settings do not decide it ({measured or 'no TCP_NODELAY setting measured'})"
                         if state else "no TCP_NODELAY setting was measured"),
    }.get(side, f"TCP_NODELAY on {side} alone keeps {budget} ({measured})")
    verdict: Verdict = "no" if side == "none" else "inconclusive" if side == "inconclusive" else "yes"
    caveats = tuple([f"unknown setting label(s) {unknown}: expected {sorted(NODELAY_SIDES)}"] if unknown else [])
    if "nodelay_client" not in state or "nodelay_server" not in state:
        missing = [NODELAY_SIDES[s] for s in ("nodelay_client", "nodelay_server") if s not in state]
        caveats += (f"not measured: TCP_NODELAY on {' and on '.join(missing)} alone",)
    return NodelayDecision(question, verdict, because, {"side": side, "state_by_setting": state, "rates_per_s": rates,
                                                        "threshold_ms": threshold_s * 1e3},
                           caveats, side=side, table=table)


def bisection_culprit(result: BisectionResult) -> Decision:
    """Did removing one option bring the stall back? yes (one culprit) / no (none) / inconclusive.

    Inconclusive when the full option set already regressed (nothing to
    bisect) or when several removals did. Evidence: ``culprits``,
    ``first_regressed``, ``sufficient_alone`` (options that avoid the stall on
    their own, when measured).
    """
    steps = result.steps
    question = "Which socket option's removal brings the stall back?"
    first_bad = bool(len(steps) and steps["regressed"].iloc[0])
    alone = sorted(o for o, ok in result.alone.items() if ok)
    evidence = {"culprits": list(result.culprits), "first_regressed": first_bad, "trials": len(steps),
                "sufficient_alone": alone if result.alone else None, "threshold_ms": result.threshold_s * 1e3,
                "q": result.q}
    crit = f"p{result.q:g} over {_ms(result.threshold_s)}"
    if len(steps) < 2 or first_bad:
        why = ("needs a first trial with every option and at least one removal" if len(steps) < 2 else
               f"the first trial, with every option, already has {crit}: there is no fixed state to bisect from")
        return Decision(question, "inconclusive", why, evidence)
    if len(result.culprits) == 1:
        return Decision(question, "yes", f"removing {result.culprits[0]} alone brought back {crit} "
                        f"(of {len(steps) - 1} removals)", evidence)
    if not result.culprits:
        return Decision(question, "no", f"none of {len(steps) - 1} removals brought back {crit}", evidence)
    return Decision(question, "inconclusive", f"{len(result.culprits)} removals each brought back {crit} "
                    f"({', '.join(result.culprits)}): no single culprit", evidence)


def path_is_fast(ping: pd.DataFrame, threshold_s: float, *, q: float = 99, n_resamples: int = 500,
                 seed: int = 0) -> Decision:
    """Is the network path fast: the ``q`` percentile of connect pings under ``threshold_s``? (yes/no/inconclusive)

    yes: the upper 95 % CI bound is ≤ ``threshold_s``; no: the lower bound is
    above; inconclusive otherwise or with fewer than 20 pings. Evidence:
    ``n``, ``p50_ms``, ``pQ_ms`` and its CI, ``n_over`` (pings over the budget).
    """
    requires(ping, "latency_s", kind="samples")
    lat = ping["latency_s"].to_numpy(dtype="float64")
    lat = lat[np.isfinite(lat)]
    question = "Is the network path fast (connect pings under the budget)?"
    if lat.size < 20:
        return Decision(question, "inconclusive", f"{lat.size} pings answered; needs at least 20", {"n": int(lat.size)})
    p50, c = percentile_cis(lat, (50, q), n_resamples=n_resamples, seed=seed)
    n_over = int((lat > threshold_s).sum())
    ev = {"n": int(lat.size), "p50_ms": p50.value * 1e3, f"p{q:g}_ms": c.value * 1e3,
          f"p{q:g}_ci_ms": [c.low * 1e3, c.high * 1e3], "n_over": n_over, "threshold_ms": threshold_s * 1e3}
    head = (f"{lat.size} connect pings: median {_ms(p50.value)}, p{q:g} {_ms(c.value)} (95 % CI {_ms(c.low)}–"
            f"{_ms(c.high)}), {n_over} over {_ms(threshold_s)}")
    return decide(question, yes=c.high <= threshold_s, no=c.low > threshold_s,
                  because_yes=f"{head}: the path itself is fast", because_no=f"{head}: the path itself is slow",
                  because_inconclusive=f"{head}: the CI straddles the budget", evidence=ev)


def work_is_not_the_cause(base: pd.DataFrame, work: pd.DataFrame, *, rate_column: str = "rate_per_s",
                          band: tuple[float, float] = (0.8, 1.25), n_resamples: int = 500) -> Decision:
    """Does adding server work leave the median as it was? (yes: work is not the cause / no / inconclusive)

    Per rate present in both frames, :func:`~workbench.stats.compare` of the
    median (work ÷ no work, block bootstrap). yes: every ratio's CI lies inside
    ``band``; no: some CI lies wholly outside it; inconclusive otherwise or
    without a common rate. Evidence: ``ratio_by_rate`` and ``ratio_ci_by_rate``.
    """
    requires(base, "latency_s", rate_column, kind="samples")
    requires(work, "latency_s", rate_column, kind="samples")
    common = sorted(set(base[rate_column].dropna().unique()) & set(work[rate_column].dropna().unique()))
    question = "Is the server's work ruled out as the cause?"
    ratios, cis = {}, {}
    for r in common:
        a = base.loc[base[rate_column] == r, "latency_s"].to_numpy(dtype="float64")
        b = work.loc[work[rate_column] == r, "latency_s"].to_numpy(dtype="float64")
        if not (np.isfinite(a).any() and np.isfinite(b).any()):
            continue
        (c,) = compare(a, b, (50,), n_resamples=n_resamples)
        ratios[f"{r:g}"] = c.ratio
        cis[f"{r:g}"] = [c.low, c.high]
    ev = {"ratio_by_rate": ratios, "ratio_ci_by_rate": cis, "band": list(band)}
    if not ratios:
        return Decision(question, "inconclusive", "the runs with and without work share no rate", ev)
    inside = all(band[0] <= lo and hi <= band[1] for lo, hi in cis.values())
    outside = any(hi < band[0] or lo > band[1] for lo, hi in cis.values())
    text = ", ".join(f"{ratios[k]:.2f} (CI {lo:.2f}–{hi:.2f}) at {k}/s" for k, (lo, hi) in cis.items())
    return decide(question, yes=inside, no=outside,
                  because_yes=f"work changes the median by a factor {text}: within {band[0]:g}–{band[1]:g}",
                  because_no=f"work changes the median by a factor {text}: outside {band[0]:g}–{band[1]:g}",
                  because_inconclusive=f"work changes the median by a factor {text}: the CIs straddle "
                                       f"{band[0]:g}–{band[1]:g}", evidence=ev)


#: Inputs of a rate-sweep investigation that a lab capture (``workbench lab nagle``) holds as phases:
#: parameter stem → (phase, options label or None).
LAB_PHASES: dict[str, tuple[str, str | None]] = {
    "sweep": ("sweep", None), "nodelay_client": ("nodelay", "nodelay_client"),
    "nodelay_server": ("nodelay", "nodelay_server"), "nodelay_both": ("nodelay", "nodelay_both"),
    "ping": ("ping", None), "work": ("work", None), "bisection": ("bisect", None),
}


def lab_phases(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The non-empty parts of a lab capture by :data:`LAB_PHASES` name (``{}`` when ``frame`` has no ``phase``).

    ``bisection`` holds the ``bisect`` and ``alone`` trials (column ``phase`` tells them apart).
    """
    if "phase" not in frame.columns:
        return {}
    out = {}
    phase = frame["phase"].astype(str)
    for name, (ph, label) in LAB_PHASES.items():
        mask = phase.isin(["bisect", "alone"]) if name == "bisection" else phase == ph
        if label is not None:
            if "options" not in frame.columns:
                continue
            mask &= frame["options"].astype(str) == label
        part = frame[mask]
        if len(part):
            part = part.copy()
            part.attrs = {k: v for k, v in frame.attrs.items() if k != "rejects"}
            out[name] = part
    return out


def bisection_trials(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Split bisection samples into the removal trials and the single-option trials (``phase`` bisect/alone).

    Without a ``phase`` column every row is a removal trial and there are no single-option trials.
    """
    requires(frame, "latency_s", "run", "client_options", kind="samples", by="bisection_trials")
    if "phase" not in frame.columns:
        return frame, None
    phase = frame["phase"].astype(str)
    alone = frame[phase == "alone"]
    return frame[phase != "alone"], (alone if len(alone) else None)
