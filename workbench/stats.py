"""Shared statistics: modes and quanta of a distribution, percentile CIs, effect sizes.

- :func:`resolution` — the grid the values were recorded on (integer ms,
  printed decimals, HdrHistogram buckets), so that it is never taken for a quantum.
- :func:`find_modes` — peaks of a kernel density estimate, coarse to fine and on
  a log axis for latencies spanning decades, each holding enough samples above a
  significant valley (a 9-call cluster beside a 500-call bulk keeps its count).
- :func:`quantum_evidence` / :func:`find_quantum` — the common spacing of the
  modes (e.g. the 40 ms delayed-ACK quantum) with its evidence, or why there is
  none (one mode, no lattice, a broad hump, the tool's resolution).
- :func:`quantum_across` — a quantum shared by several conditions, only where
  their modes line up.
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import UsageError

if TYPE_CHECKING:
    from .verdicts import Decision

__all__ = [
    "Comparison",
    "circular_score",
    "Mode",
    "PercentileCI",
    "Quantum",
    "QuantumAcross",
    "Resolution",
    "compare",
    "find_modes",
    "find_quantum",
    "holm_adjust",
    "kde_bandwidth",
    "percentile_ci",
    "percentile_cis",
    "quantum_across",
    "quantum_evidence",
    "resolution",
    "wilson_interval",
]


def _gauss(x: np.ndarray, h: float) -> np.ndarray:
    """The normal density with standard deviation ``h`` at ``x``."""
    return np.exp(-0.5 * (x / h) ** 2) / (h * math.sqrt(2 * math.pi))


def _finite(values: Sequence[float] | np.ndarray) -> np.ndarray:
    x = np.asarray(values, dtype="float64").ravel()
    return x[np.isfinite(x)]


# ------------------------------------------------------------- resolution ----

@dataclass(frozen=True)
class Resolution:
    """The grid the values were recorded or printed on (their unit).

    Fields: ``kind`` — ``"grid"`` (one step everywhere, e.g. integer ms or
    4-decimal seconds), ``"log-grid"`` (the step grows with the value, e.g.
    HdrHistogram buckets), ``"continuous"`` (no grid found), ``"few"`` (fewer
    than ``min_distinct`` distinct values: no grid can be told), ``"single"`` or
    ``"empty"``; ``step`` (the finest step
    found over all values, 0.0 when none); ``bands`` (``(low, high, step)`` per
    quarter octave of |value| holding at least ``min_band_distinct`` distinct
    values and locked to a grid); ``score`` (lowest phase-locking score of the steps
    found, 1 = every sample on the grid); ``n`` and ``n_distinct``.
    Use :meth:`at` for the step near one value.
    """

    kind: str
    step: float
    bands: tuple[tuple[float, float, float], ...]
    score: float
    n: int
    n_distinct: int

    def at(self, value: float) -> float:
        """The grid step near ``value`` (0.0 for continuous data)."""
        if not self.bands:
            return self.step
        v = abs(float(value))
        for low, high, step in self.bands:
            if low <= v < high:
                return step
        below = [b for b in self.bands if b[1] <= v]
        if not below:  # under the first octave with a grid of its own: the finest step found
            return self.step
        low, high, step = below[-1]
        above_all = below[-1] is self.bands[-1]
        return step * (v / high if self.kind == "log-grid" and above_all else 1.0)

    def at_many(self, values: np.ndarray) -> np.ndarray:
        """:meth:`at` for each of ``values``."""
        v = np.asarray(values, dtype=float)
        if not self.bands:
            return np.full(v.shape, self.step)
        uniq, inv = np.unique(v, return_inverse=True)
        return np.array([self.at(u) for u in uniq])[inv].reshape(v.shape)


def _grid_step(u: np.ndarray, c: np.ndarray, min_score: float, *, fractions: bool = True,
               max_values: int = 4000) -> tuple[float, float]:
    """Largest step d (and its score) such that the samples lock to ``u[0] + k·d``; (0, score) if none.

    Candidates are the smallest gaps between distinct values and, with
    ``fractions``, their fractions 1/2 … 1/8 (a sparse grid whose neighbouring
    points are rarely both occupied); without, only the smallest gap itself.
    """
    if u.size < 2:
        return 0.0, 0.0
    if u.size > max_values:
        pick = np.sort(np.random.default_rng(0).choice(u.size, max_values, replace=False))
        u, c = u[pick], c[pick]
    gaps = np.diff(u)
    scale = max(float(np.max(np.abs(u))), 1e-300)
    gaps = gaps[gaps > scale * 1e-12]
    if gaps.size == 0:
        return 0.0, 0.0
    # the smallest distinct gaps (equal up to float noise) and their integer fractions
    gs = np.unique(np.round(gaps / gaps.min(), 6)) * gaps.min()
    cands = np.unique(np.concatenate([gs[:6] / k for k in range(1, 9)])) if fractions else gs[:1]
    cands = cands[cands > scale * 1e-12]
    off = u - u[0]
    w = c / c.sum()
    best = 0.0
    for d in np.sort(cands)[::-1]:  # largest first
        s = float(abs(np.sum(w * np.exp(2j * np.pi * off / d))))
        best = max(best, s)
        if s >= min_score:
            return float(d), s
    return 0.0, best


def resolution(values: Sequence[float] | np.ndarray, *, min_score: float = 0.95,
               min_distinct: int = 8, min_band_distinct: int = 10) -> Resolution:
    """The grid ``values`` sit on: integer ms, printed decimals, histogram buckets (see :class:`Resolution`).

    Over all values (at least ``min_distinct`` distinct ones) the step is the
    largest spacing d, taken from the smallest gaps between distinct values and
    their fractions 1/2 … 1/8, for which the samples lock to a lattice of step d
    (:func:`circular_score` weighted by count ≥ ``min_score``). Per quarter
    octave of |value| (2^(k/4) ≤ |v| < 2^((k+1)/4)) with at least
    ``min_band_distinct`` distinct values, the band's step is its smallest gap when its samples lock to it. A step that grows with the value is a log grid
    (HdrHistogram keeps a fixed number of significant digits). Continuous data
    give ``kind="continuous"`` and step 0.0.
    """
    x = _finite(values)
    u, c = np.unique(x, return_counts=True)
    if u.size < min_distinct:
        kind = "single" if u.size == 1 else "empty" if u.size == 0 else "few"
        return Resolution(kind=kind, step=0.0, bands=(), score=0.0, n=int(x.size), n_distinct=int(u.size))
    step, score_all = _grid_step(u, c, min_score)
    mag = np.abs(u)
    pos = mag > 0
    key = np.full(u.size, np.nan)
    key[pos] = np.floor(4 * np.log2(mag[pos]))  # quarter octaves: a log grid's step changes at one point
    if (~pos).any() and pos.any():
        key[~pos] = np.nanmin(key)
    bands: list[tuple[float, float, float]] = []
    scores = []
    for k in np.unique(key[np.isfinite(key)]):
        sel = key == k
        if sel.sum() < min_band_distinct:
            continue
        d, s = _grid_step(u[sel], c[sel], min_score, fractions=False)
        if d > 0:
            bands.append((float(2.0 ** (k / 4)), float(2.0 ** ((k + 1) / 4)), d))
            scores.append(s)
    if not bands and step > 0:
        kind = "grid"
        scores.append(score_all)
    elif not bands:
        kind = "continuous"
    else:
        steps = np.array([b[2] for b in bands])
        kind = "grid" if np.allclose(steps, steps[0], rtol=0.01) else "log-grid"
        if step <= 0:
            step = float(steps.min())
    return Resolution(kind=kind, step=float(step), bands=tuple(bands),
                      score=float(min(scores)) if scores else float(score_all), n=int(x.size),
                      n_distinct=int(u.size))


def _dither(x: np.ndarray, res: Resolution) -> np.ndarray:
    """Spread the tied samples of each grid value evenly across its bucket (deterministic).

    A KDE of gridded values with a bandwidth below the step sees one spike per
    grid value; spreading each value's samples over [v − step/2, v + step/2]
    gives the density the bucket stands for.
    """
    if res.kind not in ("grid", "log-grid"):
        return x
    order = np.argsort(x, kind="stable")
    xs = x[order]
    u, start, cnt = np.unique(xs, return_index=True, return_counts=True)
    steps = res.at_many(u)
    if u.size > 1:  # never past a neighbouring recorded value (a step guessed too wide)
        gaps = np.diff(u)
        steps = np.minimum(steps, np.minimum(np.append(gaps, np.inf), np.insert(gaps, 0, np.inf)))
    rank = np.arange(xs.size) - np.repeat(start, cnt)
    frac = (rank + 0.5) / np.repeat(cnt, cnt) - 0.5
    out = np.empty_like(x)
    out[order] = xs + np.repeat(steps, cnt) * frac
    return out


# ------------------------------------------------------------------ modes ----

@dataclass(frozen=True)
class Mode:
    """One mode of a distribution.

    Fields: ``location`` (value at the density peak, input unit), ``low`` and
    ``high`` (the valleys bounding the mode), ``count`` (samples between them),
    ``fraction`` (count / all samples), ``prominence`` (peak height above its
    higher neighbouring valley, as a fraction of the peak's own height: 1 for
    an isolated cluster) and ``dip_z`` (how significantly the samples near the
    peak outnumber those near that valley, in Poisson standard deviations;
    ``inf`` for the only mode).
    """

    location: float
    low: float
    high: float
    count: int
    fraction: float
    prominence: float
    dip_z: float = math.inf


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


@dataclass
class _Peak:
    at: float        # peak position (transformed axis)
    low: float
    high: float
    prominence: float
    dip_z: float


def _kde(t: np.ndarray, h: float, grid_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Binned Gaussian KDE of ``t`` with bandwidth ``h``: (grid, density)."""
    lo, hi = float(t.min()) - 3 * h, float(t.max()) + 3 * h
    points = int(min(1 << 18, max(grid_points, math.ceil((hi - lo) / (h / 4)))))
    grid = np.linspace(lo, hi, points)
    step = grid[1] - grid[0]
    counts, _ = np.histogram(t, bins=np.append(grid - step / 2, grid[-1] + step / 2))
    half = int(min(points, math.ceil(4 * h / step)))
    kernel = _gauss(np.arange(-half, half + 1) * step, h)
    from scipy import signal

    dens = signal.fftconvolve(counts, kernel, mode="same") / t.size
    return grid, np.clip(dens, 0.0, None)


def _kde_pass(t: np.ndarray, h: float, *, min_count: int, min_prominence: float, min_dip_z: float,
              grid_points: int) -> list[_Peak]:
    """Significant peaks of a KDE of sorted ``t``: enough samples, a deep enough and significant valley."""
    from scipy import signal

    grid, dens = _kde(t, h, grid_points)
    peaks, _ = signal.find_peaks(dens, prominence=1e-9 * float(dens.max()))
    if peaks.size == 0:
        peaks = np.array([int(np.argmax(dens))])

    def near(v: np.ndarray) -> np.ndarray:  # samples within ±h of each position
        return np.searchsorted(t, v + h, side="right") - np.searchsorted(t, v - h, side="left")

    while True:
        valleys = np.array([a + int(np.argmin(dens[a:b + 1])) for a, b in zip(peaks[:-1], peaks[1:], strict=False)],
                           dtype=int)
        edges = np.concatenate([[-np.inf], grid[valleys], [np.inf]])
        cnt = np.diff(np.searchsorted(t, edges, side="left"))
        if peaks.size == 1:
            return [_Peak(float(grid[peaks[0]]), float(t[0]), float(t[-1]), 1.0, math.inf)]
        vd = dens[valleys]
        # the higher neighbouring valley limits how separate a peak is
        left = np.concatenate([[-1.0], vd])
        right = np.concatenate([vd, [-1.0]])
        use_left = left >= right
        vpos = np.where(use_left, np.concatenate([[0], valleys]), np.concatenate([valleys, [0]]))
        vheight = np.maximum(left, right)
        prom = (dens[peaks] - vheight) / np.maximum(dens[peaks], 1e-300)
        cp, cv = near(grid[peaks]), near(grid[vpos])
        z = (cp - cv) / np.sqrt(np.maximum(cp + cv, 1))
        ok = (cnt >= min_count) & (prom >= min_prominence) & (z >= min_dip_z)
        if ok.all():
            break
        bad = np.flatnonzero(~ok)
        order = bad[np.lexsort((cnt[bad], z[bad]))]  # least significant, then fewest samples
        # one at a time (a merge changes its neighbours' counts); many at once only among hundreds of bumps
        peaks = np.delete(peaks, order[:max(1, order.size // 4) if order.size > 100 else 1])
    return [_Peak(float(grid[p]), float(max(edges[k], t[0])), float(min(edges[k + 1], t[-1])), float(prom[k]),
                  float(z[k])) for k, p in enumerate(peaks)]


def _split(t: np.ndarray, peak: _Peak, depth: int, min_gap: float | None, **kw: Any) -> list[_Peak]:
    """Peaks of one mode's own samples with their own (narrower) bandwidth, recursively.

    Sub-peaks closer than ``min_gap`` on the working axis (a ratio of locations
    on a log axis) stay one mode: fine structure inside a cluster (timer ticks
    a few ms apart inside a 40 ms stall) is not a cluster of its own.
    """
    sub = t[(t >= peak.low) & (t <= peak.high)]
    if depth <= 0 or sub.size < max(20, 2 * int(kw["min_count"])):
        return [peak]
    h = kde_bandwidth(sub)
    if h <= 0:
        return [peak]
    found = _kde_pass(sub, h, **kw)
    if min_gap is not None and len(found) > 1:
        counts = [int(np.searchsorted(sub, p.high, side="right") - np.searchsorted(sub, p.low, side="left"))
                  for p in found]
        groups: list[list[int]] = [[0]]
        for k in range(1, len(found)):
            if found[k].at - found[groups[-1][-1]].at < min_gap:
                groups[-1].append(k)
            else:
                groups.append([k])
        merged = []
        for g in groups:
            top = max(g, key=lambda k: counts[k])
            merged.append(_Peak(found[top].at, found[g[0]].low, found[g[-1]].high,
                                min(found[k].prominence for k in g), min(found[k].dip_z for k in g)))
        found = merged
    if len(found) < 2:
        return [peak]
    found[0].low, found[-1].high = peak.low, peak.high
    out: list[_Peak] = []
    for p in found:
        out.extend(_split(t, p, depth - 1, min_gap, **kw))
    return out


def _split_ratio(t: np.ndarray, peak: _Peak, depth: int, ratio: float, **kw: Any) -> list[_Peak]:
    """:func:`_split` on a linear axis of positive values, sub-peaks apart by a factor ≥ ``ratio``."""
    parts = _split(t, peak, depth, None, **kw)
    out: list[_Peak] = [parts[0]]
    for p in parts[1:]:
        prev = out[-1]
        if p.at < ratio * prev.at:
            out[-1] = _Peak(prev.at, prev.low, p.high, min(prev.prominence, p.prominence), min(prev.dip_z, p.dip_z))
        else:
            out.append(p)
    return out if len(out) > 1 else [peak]


def find_modes(values: Sequence[float] | np.ndarray, *, bandwidth: float | None = None,
               min_prominence: float = 0.05, min_count: int | None = None,
               grid_points: int = 4096, scale: str = "auto", min_dip_z: float = 2.5,
               grid: Resolution | None = None, split_depth: int = 2,
               min_split_ratio: float = 1.25) -> tuple[Mode, ...]:
    """The modes of ``values`` (ascending location), from a Gaussian KDE.

    A peak counts when (1) at least ``min_count`` samples (default 5) lie
    between its valleys, (2) its higher neighbouring valley is at least
    ``min_prominence`` of its own height below it, and (3) the samples within
    one bandwidth of the peak outnumber those near that valley by
    ``min_dip_z`` Poisson standard deviations. Weaker peaks are merged into
    their neighbours. Nothing is relative to the tallest peak, so a small slow
    cluster beside a large fast bulk keeps its own mode and count.

    ``scale``: ``"log"`` works on log(values) (positive values only), ``"linear"``
    on the values, ``"auto"`` on the log when no ``bandwidth`` is given, all
    values are positive and max/min ≥ 20 (latencies spanning decades).
    ``bandwidth`` (in the values' unit, linear scale) is used as given;
    otherwise coarse to fine: Silverman's 0.9·std·n^(-1/5) on the working axis
    (clusters far apart, however small), then each mode is searched again with
    its own samples' robust bandwidth (:func:`kde_bandwidth`) (``split_depth``
    levels; on a log axis, or for positive values, sub-modes split off only
    when their locations differ by a factor ≥ ``min_split_ratio``); each mode's
    location is the peak of a KDE of its own values (linear axis). Values on a recording grid
    (:func:`resolution`, or pass ``grid``) are spread over their buckets first,
    so bucket spikes never become modes. Non-finite values are ignored; fewer
    than 10 values give no modes.
    """
    x = _finite(values)
    n = x.size
    if n < 10:
        return ()
    if scale not in ("auto", "log", "linear"):
        raise UsageError(f"scale must be 'auto', 'log' or 'linear', got {scale!r}")
    min_count = 5 if min_count is None else int(min_count)
    lo, hi = float(x.min()), float(x.max())
    if hi == lo:
        return (Mode(lo, lo, hi, n, 1.0, 1.0),)
    if scale == "log" and lo <= 0:
        raise UsageError(f"scale='log' needs positive values; the smallest is {lo:g}")
    use_log = scale == "log" or (scale == "auto" and bandwidth is None and lo > 0 and hi / lo >= 20)
    res = resolution(x) if grid is None else grid
    xd = _dither(x, res)
    if use_log:
        xd = np.maximum(xd, lo / 2)  # a bucket around the smallest value stays positive
    xd_sorted = np.sort(xd)
    t = np.log(xd_sorted) if use_log else xd_sorted
    kw: dict[str, Any] = {"min_count": min_count, "min_prominence": min_prominence, "min_dip_z": min_dip_z,
                          "grid_points": grid_points}
    if bandwidth is not None:
        h = float(bandwidth)
    else:
        # coarse first: Silverman's rule on the standard deviation separates clusters far apart,
        # however small; each is then searched again with its own, narrower bandwidth
        h = 0.9 * float(np.std(t, ddof=1)) * t.size ** (-0.2)
        if h <= 0:
            h = kde_bandwidth(t)
    if h <= 0:
        h = (float(t[-1]) - float(t[0])) / 100
    peaks = _kde_pass(t, h, **kw)
    if bandwidth is None and split_depth > 0:
        # positive values on a linear axis: compare the split's locations as a ratio there too
        gap = math.log(min_split_ratio) if use_log else None
        if not use_log and lo > 0:
            peaks = [q for p in peaks for q in _split_ratio(t, p, split_depth, min_split_ratio, **kw)]
        else:
            peaks = [q for p in peaks for q in _split(t, p, split_depth, gap, **kw)]

    def back(v: float) -> float:
        return float(math.exp(v)) if use_log else float(v)

    # bounds mapped back to the values' axis; counts from the recorded values
    edges = np.array([-np.inf] + [back(p.low) for p in peaks[1:]] + [np.inf])
    xs = np.sort(x)
    cnt = np.diff(np.searchsorted(xs, edges, side="left"))
    modes = []
    for k, p in enumerate(peaks):
        a, b = max(float(edges[k]), lo), min(float(edges[k + 1]), hi)
        loc = back(p.at)
        if bandwidth is None:  # the peak of the density of the values themselves (not of their log)
            sub_x = xd_sorted[(t >= p.low) & (t <= p.high)]
            loc = _refine_peak(sub_x, back(p.at))
        loc = min(max(loc, a), b)
        modes.append(Mode(location=loc, low=a, high=b, count=int(cnt[k]), fraction=float(cnt[k] / n),
                          prominence=p.prominence, dip_z=p.dip_z))
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
    grid, dens = _kde(sub, h, 512)
    inside = (grid >= sub.min()) & (grid <= sub.max())
    return float(grid[inside][int(np.argmax(dens[inside]))]) if inside.any() else fallback


def circular_score(x: np.ndarray, quantum: float, origin: float = 0.0) -> float:
    """Phase-locking score |mean(exp(2πi (x − origin)/quantum))| in [0, 1] (1: all on a lattice)."""
    z = np.exp(2j * np.pi * (np.asarray(x, dtype=float) - origin) / quantum)
    return float(abs(z.mean()))


@dataclass(frozen=True)
class Quantum:
    """A common spacing of the modes of a sample, or why there is none, with the evidence.

    Fields: ``quantum`` (the spacing, input unit; None when not quantised),
    ``verdict`` (``"yes"``, ``"no"`` or ``"inconclusive"``), ``reason`` (one
    sentence), ``modes`` (the modes used), ``multiples`` (per mode, its offset
    from the first mode in quanta; empty without a quantum), ``misfit`` (largest
    |offset − multiple·quantum| / quantum over the modes), ``score`` (phase-locking
    of the samples near the modes, :func:`circular_score`), ``resolution`` (the
    recording grid step at the modes, 0.0 when continuous), ``min_quantum``
    (smallest spacing that could be told from that grid), ``n`` (finite samples),
    ``widths`` (interquartile range of each mode's samples), ``caveats`` and
    ``origin`` (where the lattice starts: the first mode, or 0 when the modes
    sit on whole steps from zero; NaN without a quantum).
    """

    quantum: float | None
    verdict: str
    reason: str
    modes: tuple[Mode, ...]
    multiples: tuple[int, ...]
    misfit: float
    score: float
    resolution: float
    min_quantum: float
    n: int
    widths: tuple[float, ...] = ()
    caveats: tuple[str, ...] = ()
    origin: float = math.nan

    def decision(self, unit: str = "") -> Decision:
        """The answer to "do the modes sit on a fixed step?" as a :class:`workbench.verdicts.Decision`."""
        from .verdicts import Decision

        return Decision(question="Do the latency modes sit on a fixed step?", verdict=self.verdict,  # type: ignore[arg-type]
                        because=self.reason, evidence=self.evidence(unit), caveats=self.caveats)

    def evidence(self, unit: str = "") -> dict[str, Any]:
        """JSON-ready evidence: quantum, modes (location, count), multiples, misfit, score, resolution."""
        sfx = f"_{unit}" if unit else ""
        return {f"quantum{sfx}": self.quantum, f"origin{sfx}": self.origin, f"mode_locations{sfx}": [m.location for m in self.modes],
                "mode_counts": [m.count for m in self.modes], "multiples": list(self.multiples),
                "misfit": self.misfit, "score": self.score, f"resolution{sfx}": self.resolution,
                f"min_quantum{sfx}": self.min_quantum, f"mode_widths{sfx}": list(self.widths), "n": self.n}


def quantum_evidence(values: Sequence[float] | np.ndarray, *, modes: Sequence[Mode] | None = None,
                     min_score: float = 0.5, near_max: float = 0.9, tolerance: float = 0.15,
                     max_values: int = 20000, max_multiple: int = 10, min_steps: float = 8.0,
                     max_width: float = 0.2, grid: Resolution | None = None) -> Quantum:
    """The common spacing of the modes of ``values`` with its evidence (see :class:`Quantum`).

    Method (formats C2): find the modes (:func:`find_modes`, or pass ``modes``);
    fewer than two means no quantum. Candidate spacings ``q`` run from the
    largest mode offset / ``max_multiple`` up to that offset, but never below
    ``min_steps`` recording-grid steps at the modes (:func:`resolution`): a
    spacing the tool's output cannot resolve is its granularity, not a
    quantum. Each candidate is scored by how well the samples near the modes,
    measured from the first mode, lock to a lattice of step ``q``
    (:func:`circular_score`). Integer sub-multiples of the true quantum score
    almost as high, so the **largest** ``q`` is taken whose score is within
    ``near_max`` of the best, at least ``min_score``, that puts every mode
    within ``tolerance · q`` of a multiple of ``q`` no larger than
    ``max_multiple`` (a mode close to the first, e.g. a base latency split in
    two, sits on multiple 0; at least one mode must sit on a multiple ≥ 1).
    Every mode on a multiple ≥ 1 must be a narrow cluster: the interquartile
    range of its samples at most ``max_width · q`` (a broad hump far from the
    bulk is a second population, not a step). The result is refined by least
    squares over the mode offsets. Two modes give one step only: a spacing, said
    in ``caveats``.
    """
    x = _finite(values)
    n = int(x.size)
    res = resolution(x) if grid is None else grid
    found = tuple(sorted(modes, key=lambda m: m.location)) if modes is not None else find_modes(x, grid=res)
    step = max((res.at(m.location) for m in found), default=res.step)
    floor = min_steps * step
    widths = []
    for m in found:
        sub = x[(x >= m.low) & (x <= m.high)]
        widths.append(float(np.subtract(*np.percentile(sub, [75, 25]))) if sub.size else 0.0)

    def out(q: float | None, verdict: str, reason: str, mult: Sequence[int] = (), misfit: float = math.nan,
            score: float = math.nan, caveats: tuple[str, ...] = (), origin: float = math.nan) -> Quantum:
        return Quantum(quantum=q, verdict=verdict, reason=reason, modes=found, multiples=tuple(int(m) for m in mult),
                       misfit=float(misfit), score=float(score), resolution=float(step), min_quantum=float(floor), n=n,
                       widths=tuple(widths), caveats=caveats, origin=origin)

    if n < 10:
        return out(None, "inconclusive", f"only {n} finite values: too few to find modes")
    if len(found) < 2:
        return out(None, "no", "one mode: the values are not quantised" if found else "no mode found")
    if x.size > max_values:
        x = np.random.default_rng(0).choice(x, max_values, replace=False)
    locs = np.array([m.location for m in found])
    # score the samples near some mode (far outliers only blur every candidate alike)
    near = np.zeros(x.size, dtype=bool)
    for m in found:
        near |= (x >= m.low) & (x <= m.high)
    kw: dict[str, Any] = {"min_score": min_score, "near_max": near_max, "tolerance": tolerance,
                          "max_multiple": max_multiple, "max_width": max_width, "floor": floor}
    first = _lattice(locs, np.array(widths), x[near], float(locs[0]), **kw)
    fit = first
    if isinstance(first, tuple) and len({v for v in first[1] if v >= 1}) == 1 and locs[0] > 0:
        # one step from the first mode: modes at 1·q, 2·q … from zero (the first cluster one stall) say more
        zero = _lattice(locs, np.array(widths), x[near], 0.0, **kw)
        if isinstance(zero, tuple) and zero[1][0] == 1 and len({v for v in zero[1] if v >= 1}) >= 2:
            fit = zero
    if isinstance(fit, str):
        verdict = "inconclusive" if fit.startswith("the modes span") else "no"
        return out(None, verdict, fit + (f" (recording step {step:.3g})" if step > 0 else ""))
    qf, mult, misfit, r, origin = fit
    steps = {v for v in mult if v >= 1}
    cav = (("one step only (one cluster above the base): a spacing, not yet a lattice",)
           if steps == {1} and sum(1 for v in mult if v >= 1) == 1 else ())
    frm = "the first mode" if origin != 0.0 else "zero"
    return out(qf, "yes", f"{len(found)} modes sit on multiples {', '.join(map(str, mult))} of {qf:.4g} from {frm} "
                          f"(largest misfit {100 * misfit:.0f} % of a step; phase score {r:.2f}; "
                          f"recording step {step:.3g})", mult, misfit, r, cav, origin)


def _lattice(locs: np.ndarray, widths: np.ndarray, xs: np.ndarray, origin: float, *, min_score: float,
             near_max: float, tolerance: float, max_multiple: int, max_width: float,
             floor: float) -> tuple[float, list[int], float, float, float] | str:
    """The largest lattice step from ``origin`` that fits the modes: (q, multiples, misfit, score, origin) or why not."""
    offsets = locs - origin
    span = float(offsets.max())
    if span <= 0:
        return "the modes coincide"
    q_max, q_min = span * 1.05, max(span / max_multiple / 1.2, floor)
    if q_min >= q_max:
        return (f"the modes span {span:.4g}, within {floor:.4g} (the smallest spacing the recording grid "
                "resolves): their spacing is the tool's resolution, not a quantum")
    grid_q = np.geomspace(q_min, q_max, 800)
    z = xs - origin
    # phases from a fine histogram (bins ≤ q_min/64: under 0.1 rad off) when it is smaller than the sample
    nbins = math.ceil((float(z.max()) - float(z.min())) / (q_min / 64)) if z.size else 0
    if 0 < nbins < z.size:
        cnt, edges = np.histogram(z, bins=nbins)
        pts, wts = 0.5 * (edges[:-1] + edges[1:])[cnt > 0], cnt[cnt > 0].astype(float)
    else:
        pts, wts = z, np.ones(z.size)
    wts = wts / wts.sum()
    scores = np.array([abs(np.sum(wts * np.exp(2j * np.pi * pts / q))) for q in grid_q])
    best = float(scores.max())
    if best < min_score:
        return (f"the samples do not lock to any spacing between {q_min:.4g} and {q_max:.4g} "
                f"(best phase score {best:.2f} < {min_score:g})")
    broad = ""
    for k in np.argsort(-grid_q):  # largest first
        q, r = float(grid_q[k]), float(scores[k])
        if r < max(min_score, near_max * best):
            continue
        mult = np.round(offsets / q)
        if mult.max() < 1 or mult.max() > max_multiple:
            continue
        if not np.all(np.abs(offsets - mult * q) <= tolerance * q):
            continue
        qf = float(np.sum(mult * offsets) / np.sum(mult * mult))
        wide = (mult >= 1) & (widths > max_width * qf)
        if wide.any():
            j = int(np.flatnonzero(wide)[0])
            broad = (f"the mode at {locs[j]:.4g} is broader (interquartile range {widths[j]:.4g}) than "
                     f"{100 * max_width:.0f} % of a {qf:.4g} step: a second population, not a step")
            continue
        misfit = float(np.max(np.abs(offsets - mult * qf)) / qf)
        return qf, [int(v) for v in mult], misfit, r, origin
    if broad:
        return broad
    return (f"no spacing puts all {locs.size} modes within {100 * tolerance:.0f} % of a multiple "
            f"(at most {max_multiple}) of it")


def find_quantum(values: Sequence[float] | np.ndarray, *, modes: Sequence[Mode] | None = None,
                 min_score: float = 0.5, near_max: float = 0.9, tolerance: float = 0.15,
                 max_values: int = 20000, max_multiple: int = 10, min_steps: float = 8.0,
                 max_width: float = 0.2, grid: Resolution | None = None) -> float | None:
    """The common spacing of the modes of ``values`` (their unit), or ``None``.

    The number from :func:`quantum_evidence` (same arguments), which also says
    why there is none: one mode, no lattice, or a spacing the recording grid
    cannot resolve.
    """
    return quantum_evidence(values, modes=modes, min_score=min_score, near_max=near_max, tolerance=tolerance,
                            max_values=max_values, max_multiple=max_multiple, min_steps=min_steps,
                            max_width=max_width, grid=grid).quantum


@dataclass(frozen=True)
class QuantumAcross:
    """A quantum shared by several conditions, or why there is none.

    Fields: ``quantum`` (input unit, None unless the conditions' modes line up),
    ``verdict`` (``"yes"``/``"no"``/``"inconclusive"``), ``reason``, ``groups``
    (per condition, its :class:`Quantum`), ``misfits`` (per condition with ≥ 2
    modes: largest distance of its mode offsets from multiples of the common
    quantum, in quanta) and ``tolerance``.
    """

    quantum: float | None
    verdict: str
    reason: str
    groups: Mapping[str, Quantum]
    misfits: Mapping[str, float]
    tolerance: float


def quantum_across(groups: Mapping[str, Sequence[float] | np.ndarray], *, tolerance: float = 0.15,
                   max_multiple: int = 10, **kwargs: Any) -> QuantumAcross:
    """A common quantum of several conditions, only where their modes line up.

    Each condition's modes and quantum come from :func:`quantum_evidence`
    (``kwargs`` passed on). Each condition's modes are measured from its own
    lattice origin (its first mode, or zero), so conditions with different
    base latencies can still share a step. The per-condition quanta are tried
    as the common step, largest first; one is reported (refined by least
    squares over all conditions' mode offsets) only when every condition with
    two or more modes puts all its modes within ``tolerance`` of a multiple
    (1 … ``max_multiple`` for at least one mode), and at least two conditions
    have two or more modes (with only one the answer is ``inconclusive``: the
    others neither confirm nor contradict). Pooling the raw samples instead
    mixes base latencies and invents spacings.
    """
    if not groups:
        raise UsageError("quantum_across needs at least one condition")
    per = {str(k): quantum_evidence(v, tolerance=tolerance, max_multiple=max_multiple, **kwargs)
           for k, v in groups.items()}

    def result(q: float | None, verdict: str, reason: str, misfits: Mapping[str, float] | None = None) -> QuantumAcross:
        return QuantumAcross(quantum=q, verdict=verdict, reason=reason, groups=per, misfits=dict(misfits or {}),
                             tolerance=tolerance)

    multi = {k: np.array([m.location for m in r.modes]) for k, r in per.items() if len(r.modes) >= 2}
    cands = sorted({r.quantum for r in per.values() if r.quantum is not None}, reverse=True)
    if not multi:
        return result(None, "no", f"no condition has two modes ({', '.join(per)})")
    if not cands:
        return result(None, "no", "no condition is quantised on its own: "
                      + "; ".join(f"{k}: {r.reason}" for k, r in per.items()))

    def fit(locs: np.ndarray, q: float) -> tuple[float, np.ndarray, float] | None:
        """Best origin (first mode or zero) for ``locs`` on step ``q``: (origin, offsets, misfit)."""
        best = None
        for origin in ((float(locs[0]), 0.0) if locs[0] > 0 else (float(locs[0]),)):
            o = locs - origin
            mult = np.round(o / q)
            if mult.max() < 1 or mult.max() > max_multiple:
                continue
            mis = float(np.max(np.abs(o - mult * q)) / q)
            if best is None or mis < best[2]:
                best = (origin, o, mis)
        return best

    single = [k for k in per if k not in multi]
    if len(multi) == 1:
        (only,) = multi
        return result(None, "inconclusive", f"only {only} has two or more modes ({per[only].reason}); "
                      f"{', '.join(single)} with one mode neither confirm nor contradict a common step")
    failure = ""
    misfits: dict[str, float] = {}
    for q0 in cands:
        fits = {k: fit(locs, q0) for k, locs in multi.items()}
        bad = [k for k, f in fits.items() if f is None or f[2] > tolerance]
        if bad:
            if not failure:
                failure = "; ".join(
                    f"{k} has modes at {', '.join(f'{v:.4g}' for v in multi[k])}, "
                    + ("not on whole steps" if fits[k] is None else
                       f"{100 * fits[k][2]:.0f} % of a step off")  # type: ignore[index]
                    + f" of {q0:.4g}" for k in bad)
                misfits = {k: (math.nan if f is None else f[2]) for k, f in fits.items()}
            continue
        offs = np.concatenate([f[1] for f in fits.values() if f is not None])
        mult = np.round(offs / q0)
        q = float(np.sum(mult * offs) / np.sum(mult * mult))
        misfits = {}
        for k, f in fits.items():
            assert f is not None
            mis = float(np.max(np.abs(f[1] - np.round(f[1] / q) * q)) / q)
            misfits[k] = mis
        if max(misfits.values()) > tolerance:
            continue
        extra = f"; {', '.join(single)} with one mode add no evidence" if single else ""
        return result(q, "yes", f"{len(multi)} condition(s) have modes on multiples of {q:.4g} (largest misfit "
                                f"{100 * max(misfits.values()):.0f} % of a step){extra}", misfits)
    return result(None, "no", "the conditions' modes do not line up on one step: " + failure, misfits)


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
