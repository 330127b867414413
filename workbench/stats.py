"""Shared statistics: modes and quanta of a distribution, percentile CIs, effect sizes.

- :func:`find_modes` — peaks of a kernel density estimate that are prominent
  and hold enough samples (no spurious bumps from a too-small bandwidth).
- :func:`find_quantum` — the common spacing of the modes (e.g. the 40 ms
  delayed-ACK quantum), or ``None`` when the data are not quantised.
- :func:`percentile_ci` / :func:`percentile_cis` — bootstrap confidence
  intervals of percentiles, with the number of samples beyond the percentile.
- :func:`compare` — ratio of percentiles between two conditions with a CI that
  resamples runs or blocks of consecutive samples, never single requests.
- :func:`wilson_interval` — the Wilson score interval of a proportion k/n.
- :func:`holm_adjust` — Holm–Bonferroni adjusted p-values for a family of tests.

All functions take plain arrays (any unit) and return frozen dataclasses in
the same unit as their input.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import UsageError

__all__ = [
    "Comparison",
    "circular_score",
    "Mode",
    "PercentileCI",
    "compare",
    "find_modes",
    "find_quantum",
    "holm_adjust",
    "kde_bandwidth",
    "percentile_ci",
    "percentile_cis",
    "wilson_interval",
]


def _gauss(x: np.ndarray, h: float) -> np.ndarray:
    """The normal density with standard deviation ``h`` at ``x``."""
    return np.exp(-0.5 * (x / h) ** 2) / (h * math.sqrt(2 * math.pi))


def _finite(values: Sequence[float] | np.ndarray) -> np.ndarray:
    x = np.asarray(values, dtype="float64").ravel()
    return x[np.isfinite(x)]


# ------------------------------------------------------------------ modes ----

@dataclass(frozen=True)
class Mode:
    """One mode of a distribution.

    Fields: ``location`` (value at the density peak, input unit), ``low`` and
    ``high`` (the valleys bounding the mode), ``count`` (samples between them),
    ``fraction`` (count / all samples) and ``prominence`` (peak height above its
    surrounding valleys, as a fraction of the highest density).
    """

    location: float
    low: float
    high: float
    count: int
    fraction: float
    prominence: float


def kde_bandwidth(x: np.ndarray) -> float:
    """Silverman's bandwidth with a robust spread: 0.9 · min(std, IQR/1.34) · n^(-1/5).

    The IQR term keeps the kernel narrow when the data are several tight modes
    far apart (where the standard deviation mostly measures the spacing).
    """
    x = _finite(x)
    if x.size < 2:
        raise UsageError(f"kde_bandwidth needs at least two finite values, got {x.size}")
    std = float(np.std(x, ddof=1))
    iqr = float(np.subtract(*np.percentile(x, [75, 25])))
    spread = min(std, iqr / 1.34) if iqr > 0 else std
    if spread <= 0:
        return 0.0
    return 0.9 * spread * x.size ** (-0.2)


def find_modes(values: Sequence[float] | np.ndarray, *, bandwidth: float | None = None,
               min_prominence: float = 0.05, min_count: int | None = None,
               grid_points: int = 4096) -> tuple[Mode, ...]:
    """The modes of ``values`` (ascending location), from a Gaussian KDE.

    A peak counts when its prominence is at least ``min_prominence`` of the
    highest density and at least ``min_count`` samples (default: max(10, 1 % of
    n)) lie between its valleys; weaker peaks are merged into their neighbours.
    ``bandwidth`` is in the values' unit (default :func:`kde_bandwidth`, after
    which each mode's location is refined by a KDE of its own samples with
    their own bandwidth; an explicit ``bandwidth`` is used as given).
    Non-finite values are ignored; fewer than 10 values give no modes.
    """
    x = _finite(values)
    n = x.size
    if n < 10:
        return ()
    min_count = max(10, math.ceil(0.01 * n)) if min_count is None else int(min_count)
    lo, hi = float(x.min()), float(x.max())
    if hi == lo:
        return (Mode(lo, lo, hi, n, 1.0, 1.0),)
    h = kde_bandwidth(x) if bandwidth is None else float(bandwidth)
    if h <= 0:
        h = (hi - lo) / 100
    grid = np.linspace(lo - 3 * h, hi + 3 * h, grid_points)
    # Binned KDE: histogram on the grid convolved with the Gaussian kernel (fast for large n).
    step = grid[1] - grid[0]
    counts, _ = np.histogram(x, bins=np.append(grid - step / 2, grid[-1] + step / 2))
    half = int(min(grid_points, math.ceil(4 * h / step)))
    kernel = _gauss(np.arange(-half, half + 1) * step, h)
    dens = np.convolve(counts, kernel, mode="same") / n
    from scipy import signal

    peaks, props = signal.find_peaks(dens, prominence=min_prominence * dens.max())
    if peaks.size == 0:
        peaks = np.array([int(np.argmax(dens))])
        props = {"prominences": np.array([dens.max()])}
    proms = np.asarray(props["prominences"], dtype=float)
    while True:
        # valleys between consecutive peaks bound each mode's sample count
        bounds = [grid[0] - step]
        for a, b in zip(peaks[:-1], peaks[1:], strict=False):
            bounds.append(grid[a + int(np.argmin(dens[a:b + 1]))])
        bounds.append(grid[-1] + step)
        edges = np.asarray(bounds)
        cnt = np.histogram(x, bins=edges)[0]
        weak = np.flatnonzero(cnt < min_count)
        if weak.size == 0 or peaks.size == 1:
            break
        drop = weak[np.argmin(proms[weak])]  # drop the least prominent weak peak, recount
        peaks = np.delete(peaks, drop)
        proms = np.delete(proms, drop)
    modes = []
    for k, p in enumerate(peaks):
        a, b = float(max(edges[k], lo)), float(min(edges[k + 1], hi))
        loc = float(grid[p]) if bandwidth is not None else _refine_peak(x[(x >= a) & (x <= b)], float(grid[p]))
        modes.append(Mode(location=loc, low=a, high=b,
                          count=int(cnt[k]), fraction=float(cnt[k] / n), prominence=float(proms[k] / dens.max())))
    return tuple(modes)


def _refine_peak(sub: np.ndarray, fallback: float) -> float:
    """Peak of a KDE of one mode's own samples (its own, narrower bandwidth).

    The bandwidth that separates modes is set by the whole sample and is often
    wider than a single mode: a skewed mode's peak then shifts toward its tail.
    """
    if sub.size < 10:
        return fallback
    h = kde_bandwidth(sub)
    if h <= 0:
        return float(np.median(sub))
    grid = np.linspace(sub.min(), sub.max(), 512)
    step = grid[1] - grid[0]
    counts, _ = np.histogram(sub, bins=np.append(grid - step / 2, grid[-1] + step / 2))
    half = int(min(512, math.ceil(4 * h / step)))
    kernel = _gauss(np.arange(-half, half + 1) * step, h)
    dens = np.convolve(counts, kernel, mode="same")
    return float(grid[int(np.argmax(dens))])


def circular_score(x: np.ndarray, quantum: float, origin: float = 0.0) -> float:
    """Phase-locking score |mean(exp(2πi (x − origin)/quantum))| in [0, 1] (1: all on a lattice)."""
    z = np.exp(2j * np.pi * (np.asarray(x, dtype=float) - origin) / quantum)
    return float(abs(z.mean()))


def find_quantum(values: Sequence[float] | np.ndarray, *, modes: Sequence[Mode] | None = None,
                 min_score: float = 0.5, near_max: float = 0.9, tolerance: float = 0.15,
                 max_values: int = 20000) -> float | None:
    """The common spacing of the modes of ``values`` (their unit), or ``None``.

    Method (formats C2): find the modes (:func:`find_modes`, or pass ``modes``);
    fewer than two means no quantum. For candidate spacings ``q`` up to the
    largest mode offset, score how well the samples, measured from the first
    mode, lock to a lattice of step ``q`` (:func:`circular_score`). Integer
    sub-multiples of the true quantum score almost as high, so take the
    **largest** ``q`` whose score is within ``near_max`` of the best, is at least
    ``min_score``, and puts every mode within ``tolerance · q`` of a multiple of
    ``q`` (a mode close to the first, e.g. a base latency split in two, sits on
    multiple 0; at least one mode must sit on a multiple ≥ 1). The result is refined by least squares over the mode
    offsets. Returns None when no candidate passes.
    """
    x = _finite(values)
    found = tuple(modes) if modes is not None else find_modes(x)
    if len(found) < 2:
        return None
    if x.size > max_values:
        x = np.random.default_rng(0).choice(x, max_values, replace=False)
    locs = np.sort([m.location for m in found])
    origin = float(locs[0])
    offsets = locs[1:] - origin
    if offsets.max() <= 0:
        return None
    q_max = float(offsets.max()) * 1.05
    q_min = float(offsets.max()) / 16
    grid = np.geomspace(q_min, q_max, 800)
    # score the samples near some mode (far outliers only blur every candidate alike)
    near = np.zeros(x.size, dtype=bool)
    for m in found:
        near |= (x >= m.low) & (x <= m.high)
    xs = x[near] - origin
    scores = np.array([abs(np.exp(2j * np.pi * xs / q).mean()) for q in grid])
    best = scores.max()
    if best < min_score:
        return None
    for k in np.argsort(-grid):  # largest first
        q, r = grid[k], scores[k]
        if r < max(min_score, near_max * best):
            continue
        mult = np.round(offsets / q)
        if mult.max() < 1:
            continue
        if np.all(np.abs(offsets - mult * q) <= tolerance * q):
            return float(np.sum(mult * offsets) / np.sum(mult * mult))
    return None


# ------------------------------------------------------------ percentiles ----

@dataclass(frozen=True)
class PercentileCI:
    """A percentile with its bootstrap confidence interval.

    Fields: ``q`` (percentile, 0–100), ``value`` (estimate, input unit), ``low``
    and ``high`` (CI bounds), ``confidence`` (e.g. 0.95), ``n`` (finite samples),
    ``n_beyond`` (samples above the estimate: the tail points it rests on),
    ``n_units`` (resampled units: samples, blocks or runs), ``unit`` (what was
    resampled) and ``n_resamples``.
    """

    q: float
    value: float
    low: float
    high: float
    confidence: float
    n: int
    n_beyond: int
    n_units: int
    unit: str
    n_resamples: int


def _units(n: int, groups: Sequence[Any] | np.ndarray | None, block_size: int | None) -> tuple[np.ndarray, str]:
    """Integer unit labels for each sample: given groups, consecutive blocks, or each sample."""
    if groups is not None:
        g = np.asarray(groups)
        if g.size != n:
            raise UsageError(f"groups has {g.size} labels for {n} values; give one label per value")
        return np.unique(g, return_inverse=True)[1].ravel(), "group"
    if block_size is not None:
        if block_size < 1:
            raise UsageError(f"block_size must be >= 1, got {block_size}")
        return np.arange(n) // int(block_size), "block" if block_size > 1 else "sample"
    return np.arange(n), "sample"


def _resample_stat(x: np.ndarray, labels: np.ndarray, qs: np.ndarray, n_resamples: int,
                   rng: np.random.Generator) -> np.ndarray:
    """Percentiles ``qs`` of ``n_resamples`` bootstrap resamples of units (rows: resamples)."""
    order = np.argsort(labels, kind="stable")
    xs, ls = x[order], labels[order]
    starts = np.searchsorted(ls, np.arange(ls.max() + 1))
    ends = np.append(starts[1:], xs.size)
    k = starts.size
    out = np.empty((n_resamples, qs.size))
    if k == xs.size:  # one sample per unit: plain bootstrap, vectorised in chunks
        chunk = max(1, 2_000_000 // max(1, xs.size))
        for s in range(0, n_resamples, chunk):
            m = min(chunk, n_resamples - s)
            idx = rng.integers(0, xs.size, size=(m, xs.size))
            out[s:s + m] = np.percentile(xs[idx], qs, axis=1).T
        return out
    pieces = [xs[a:b] for a, b in zip(starts, ends, strict=True)]
    for r in range(n_resamples):
        pick = rng.integers(0, k, size=k)
        out[r] = np.percentile(np.concatenate([pieces[i] for i in pick]), qs)
    return out


def percentile_cis(values: Sequence[float] | np.ndarray, qs: Sequence[float] = (50, 90, 99, 99.9), *,
                   confidence: float = 0.95, n_resamples: int = 1000, groups: Sequence[Any] | np.ndarray | None = None,
                   block_size: int | None = None, seed: int = 0) -> tuple[PercentileCI, ...]:
    """Percentiles of ``values`` with percentile-bootstrap CIs, one :class:`PercentileCI` per ``qs``.

    Resamples single samples by default; pass ``groups`` (a label per value,
    e.g. run ids) or ``block_size`` (consecutive samples, in the order given)
    to resample whole runs/blocks when samples are autocorrelated. NaNs are
    dropped (with their group labels). Raises ValueError on empty input.
    """
    raw = np.asarray(values, dtype="float64").ravel()
    keep = np.isfinite(raw)
    x = raw[keep]
    if x.size == 0:
        raise UsageError("percentile_cis needs at least one finite value, got none")
    g = None if groups is None else np.asarray(groups).ravel()
    if g is not None:
        if g.size != raw.size:
            raise UsageError(f"groups has {g.size} labels for {raw.size} values; give one label per value")
        g = g[keep]
    labels, unit = _units(x.size, g, block_size)
    qarr = np.asarray(qs, dtype=float)
    est = np.percentile(x, qarr)
    rng = np.random.default_rng(seed)
    boot = _resample_stat(x, labels, qarr, n_resamples, rng)
    alpha = (1 - confidence) / 2
    lows = np.percentile(boot, 100 * alpha, axis=0)
    highs = np.percentile(boot, 100 * (1 - alpha), axis=0)
    n_units = int(labels.max() + 1)
    return tuple(
        PercentileCI(q=float(q), value=float(v), low=float(lo), high=float(hi), confidence=confidence,
                     n=int(x.size), n_beyond=int(np.sum(x > v)), n_units=n_units, unit=unit,
                     n_resamples=n_resamples)
        for q, v, lo, hi in zip(qarr, est, lows, highs, strict=True)
    )


def percentile_ci(values: Sequence[float] | np.ndarray, q: float, **kwargs: Any) -> PercentileCI:
    """One percentile with its bootstrap CI (see :func:`percentile_cis` for the options)."""
    return percentile_cis(values, (q,), **kwargs)[0]


# ------------------------------------------------------------- comparison ----

@dataclass(frozen=True)
class Comparison:
    """Effect size of condition B against condition A for one percentile.

    Fields: ``q`` (percentile), ``a`` and ``b`` (the percentiles, input unit),
    ``ratio`` (b / a), ``low``/``high`` (CI of the ratio), ``confidence``,
    ``n_a``/``n_b`` (samples), ``units_a``/``units_b`` (runs or blocks resampled),
    ``unit`` ("group" or "block") and ``n_resamples``.
    """

    q: float
    a: float
    b: float
    ratio: float
    low: float
    high: float
    confidence: float
    n_a: int
    n_b: int
    units_a: int
    units_b: int
    unit: str
    n_resamples: int


def compare(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, qs: Sequence[float] = (50, 99), *,
            groups_a: Sequence[Any] | np.ndarray | None = None, groups_b: Sequence[Any] | np.ndarray | None = None, n_blocks: int = 20,
            confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> tuple[Comparison, ...]:
    """Ratio of percentiles (b / a) with bootstrap CIs that resample runs or blocks, not requests.

    With ``groups_a``/``groups_b`` (run labels per value) whole runs are resampled;
    otherwise each sample, in the order given, is cut into ``n_blocks`` blocks
    of consecutive values and blocks are resampled. Samples from one run are
    autocorrelated, so resampling single requests would make the CI too narrow.
    One :class:`Comparison` per percentile in ``qs``.
    """
    def prep(v: Sequence[float] | np.ndarray, g: Sequence[Any] | np.ndarray | None) -> tuple[np.ndarray, np.ndarray, str]:
        raw = np.asarray(v, dtype="float64").ravel()
        keep = np.isfinite(raw)
        x = raw[keep]
        if x.size == 0:
            raise UsageError("compare needs at least one finite value in each condition (a and b)")
        if g is not None:
            garr = np.asarray(g).ravel()
            if garr.size != raw.size:
                raise UsageError(f"groups has {garr.size} labels for {raw.size} values; give one label per value")
            labels, unit = _units(x.size, garr[keep], None)
        else:
            labels, unit = _units(x.size, None, max(1, math.ceil(x.size / n_blocks)))
            unit = "block"
        return x, labels, unit

    xa, la, ua = prep(a, groups_a)
    xb, lb, ub = prep(b, groups_b)
    qarr = np.asarray(qs, dtype=float)
    rng = np.random.default_rng(seed)
    ba = _resample_stat(xa, la, qarr, n_resamples, rng)
    bb = _resample_stat(xb, lb, qarr, n_resamples, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = bb / ba
    alpha = (1 - confidence) / 2
    pa, pb = np.percentile(xa, qarr), np.percentile(xb, qarr)
    out = []
    for k, q in enumerate(qarr):
        r = ratios[:, k]
        r = r[np.isfinite(r)]
        lo, hi = (np.percentile(r, [100 * alpha, 100 * (1 - alpha)]) if r.size else (math.nan, math.nan))
        out.append(Comparison(q=float(q), a=float(pa[k]), b=float(pb[k]),
                              ratio=float(pb[k] / pa[k]) if pa[k] != 0 else math.inf,
                              low=float(lo), high=float(hi), confidence=confidence, n_a=int(xa.size),
                              n_b=int(xb.size), units_a=int(la.max() + 1), units_b=int(lb.max() + 1),
                              unit=ua if ua == ub else f"{ua}/{ub}", n_resamples=n_resamples))
    return tuple(out)


# ------------------------------------------------------------ proportions ----

def wilson_interval(k: np.ndarray | int, n: np.ndarray | int, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval (low, high) of a binomial proportion k/n; arrays or scalars, elementwise.

    Exact at the edges: 0 successes give a low bound of 0, n successes a high bound of 1.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    from scipy import stats

    z = stats.norm.ppf(0.5 + confidence / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = np.where(k <= 0, 0.0, np.clip(centre - half, 0, 1))
    hi = np.where(k >= n, 1.0, np.clip(centre + half, 0, 1))
    return lo, hi


# ---------------------------------------------------- multiple comparisons ----

def holm_adjust(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values, in the input's order (NaN stays NaN).

    Compare each adjusted value with the family-wise level α: the step-down
    procedure controls the chance of any false positive among all the tests,
    whatever their dependence. Use it wherever several groups, steps, cells or
    syscalls are tested at once.
    """
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise UsageError(f"holm_adjust takes a flat sequence of p-values, got shape {p.shape}")
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    if ok.size == 0:
        return out
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise UsageError("p-values must lie in [0, 1]")
    m = ok.size
    order = ok[np.argsort(p[ok], kind="stable")]
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adjusted, 1.0)
    return out
