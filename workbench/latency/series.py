"""Long-run structure of a latency series: rolling percentiles and change points.

A scheduled probe that calls a service every few minutes overnight gives a
series whose interesting part is its *structure*: slow drift up, a plateau, a
slow recovery. Two tools find it without eyeballing:

- :func:`rolling_percentiles` — percentiles over a sliding window (by time or by
  sample count), so the tail can be followed, not only the mean;
- :func:`change_points` — segments of constant level found by penalised
  change-point detection (``ruptures`` PELT; formats C4), on log latency by
  default because latency is heavy-tailed; each segment comes with its median
  and share of slow calls.

The **simulated** overnight series bundled with notebook 01 comes from
:func:`workbench.sim.overnight.simulate_overnight`.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..schema import requires

__all__ = ["ChangePoints", "change_points", "rolling_percentiles"]


def rolling_percentiles(frame: pd.DataFrame, *, window_s: float | None = None, window_n: int | None = None,
                        qs: Sequence[float] = (50, 90, 99), min_n: int = 5) -> pd.DataFrame:
    """Percentiles of ``latency_s`` over a trailing window, one row per sample.

    ``frame``: raw samples with ``timestamp_s`` and ``latency_s`` (seconds).
    Give ``window_s`` (a time window, seconds) or ``window_n`` (a number of
    samples). Columns: timestamp_s, latency_s, n (samples in the window) and
    ``pQ_s`` per percentile (NaN while the window holds fewer than ``min_n``).
    """
    requires(frame, "timestamp_s", "latency_s", kind="samples")
    if (window_s is None) == (window_n is None):
        raise UsageError(f"rolling_percentiles: give exactly one of window_s or window_n "
                         f"(got window_s={window_s!r}, window_n={window_n!r})")
    df = pd.DataFrame({"timestamp_s": frame["timestamp_s"].to_numpy(dtype=float),
                       "latency_s": frame["latency_s"].to_numpy(dtype=float)})
    df = df.dropna().sort_values("timestamp_s", kind="stable").reset_index(drop=True)
    s = df["latency_s"]
    if window_s is not None:
        if not window_s > 0:
            raise UsageError(f"rolling_percentiles: window_s={window_s!r}; expected a window > 0 seconds")
        idx = pd.to_datetime(df["timestamp_s"], unit="s")
        s = pd.Series(df["latency_s"].to_numpy(), index=idx)
        roll = s.rolling(pd.Timedelta(seconds=window_s), min_periods=1)
    elif window_n is not None:
        if window_n < 1:
            raise UsageError(f"rolling_percentiles: window_n={window_n!r}; expected a window of >= 1 samples")
        roll = s.rolling(int(window_n), min_periods=1)
    out = df.copy()
    out["n"] = roll.count().to_numpy().astype("int64")
    for q in qs:
        name = "p" + f"{q:g}".replace(".", "_") + "_s"
        v = roll.quantile(q / 100, interpolation="linear").to_numpy()
        out[name] = np.where(out["n"].to_numpy() >= min_n, v, np.nan)
    return out


@dataclass(frozen=True)
class ChangePoints:
    """Segments of a series with a constant level.

    Fields: ``breaks`` (indices where a new segment starts, into the sorted
    series), ``break_times_s`` (their timestamps), ``segments`` (frame: segment,
    start_s, end_s, n, median_ms, p90_ms, slow_share — share above
    ``slow_threshold_ms`` — and level: the mean of the transformed signal),
    ``penalty`` (the PELT penalty used), ``model``, ``transform`` ("log" or "none")
    and ``slow_threshold_ms``.
    """

    breaks: tuple[int, ...]
    break_times_s: tuple[float, ...]
    segments: pd.DataFrame
    penalty: float
    model: str
    transform: str
    slow_threshold_ms: float


def change_points(frame: pd.DataFrame, *, model: str = "l2", penalty: float | None = None, min_size: int = 10,
                  jump: int = 1, log: bool = True, smooth_n: int = 1, slow_threshold_ms: float | None = None
                  ) -> ChangePoints:
    """Change points in ``latency_s`` (ordered by ``timestamp_s``) with ruptures' PELT.

    The signal is log latency (``log=True``) optionally smoothed by a centred
    rolling mean of ``smooth_n`` samples. The default penalty is
    ``3 · σ² · ln n`` with σ the noise level estimated robustly from first
    differences (MAD / 0.6745 / √2), the usual BIC-like choice for a mean shift
    (``l2``). ``min_size``: shortest segment, samples. ``slow_threshold_ms``:
    the bound for each segment's slow share (default: twice the overall median).
    """
    requires(frame, "timestamp_s", "latency_s", kind="samples")
    import ruptures as rpt

    df = pd.DataFrame({"timestamp_s": frame["timestamp_s"].to_numpy(dtype=float),
                       "latency_s": frame["latency_s"].to_numpy(dtype=float)})
    df = df.dropna().sort_values("timestamp_s", kind="stable").reset_index(drop=True)
    n = len(df)
    if n < 2 * min_size:
        raise UsageError(f"change_points: min_size={min_size} needs at least {2 * min_size} samples with a "
                         f"timestamp and a latency; the frame has {n}")
    lat = df["latency_s"].to_numpy()
    if log and np.any(lat <= 0):
        raise UsageError(f"change_points: log=True needs positive latencies, but {int(np.sum(lat <= 0))} "
                         "latency_s value(s) are <= 0; pass log=False")
    sig = np.log(lat) if log else lat.copy()
    if smooth_n > 1:
        sig = pd.Series(sig).rolling(int(smooth_n), center=True, min_periods=1).mean().to_numpy()
    if penalty is None:
        d = np.diff(sig)
        sigma = float(np.median(np.abs(d - np.median(d))) / 0.6745 / math.sqrt(2)) if d.size else 0.0
        if sigma == 0:
            sigma = float(np.std(sig)) or 1.0
        penalty = 3.0 * sigma * sigma * math.log(n)
    ends = rpt.Pelt(model=model, min_size=min_size, jump=jump).fit(sig.reshape(-1, 1)).predict(pen=penalty)
    starts = [0, *ends[:-1]]
    thr = 2 * 1e3 * float(np.median(lat)) if slow_threshold_ms is None else float(slow_threshold_ms)
    ts = df["timestamp_s"].to_numpy()
    rows = []
    for k, (a, b) in enumerate(zip(starts, ends, strict=True)):
        seg = lat[a:b]
        rows.append({"segment": k, "start_s": float(ts[a]), "end_s": float(ts[b - 1]), "n": int(b - a),
                     "median_ms": 1e3 * float(np.median(seg)), "p90_ms": 1e3 * float(np.percentile(seg, 90)),
                     "slow_share": float(np.mean(1e3 * seg > thr)), "level": float(np.mean(sig[a:b]))})
    breaks = tuple(int(x) for x in ends[:-1])
    return ChangePoints(breaks=breaks, break_times_s=tuple(float(ts[i]) for i in breaks),
                        segments=pd.DataFrame(rows), penalty=float(penalty), model=model,
                        transform="log" if log else "none", slow_threshold_ms=thr)
