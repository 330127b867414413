"""The **simulated** overnight series of notebook 01 (the original data are not public).

A documented model, not a measurement: :func:`simulate_overnight` draws API
call latencies whose stall rate follows a slow cycle, and a ping series that
shares their timestamps. Its output has the raw-sample columns the latency
analyses read (``timestamp_s``, ``latency_s``) plus the model's ground truth.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import UsageError

__all__ = ["simulate_overnight"]


def simulate_overnight(*, hours: float = 14.0, every_s: float = 120.0, start_s: float = 1_425_600_000.0,
                       base_ms: float = 220.0, quantum_ms: float = 250.0, seed: int = 1) -> pd.DataFrame:
    """A **simulated** overnight series of API calls and pings (the model behind notebook 01's long run).

    One call every ``every_s`` for ``hours``. Each call takes ``base_ms`` times
    a log-normal factor (σ = 0.08) plus k stalls of ``quantum_ms`` where k is
    Poisson with a rate that follows a slow cycle: low for the first quarter of
    the night, rising linearly over the next quarter (background I/O building
    up), high for a sixth, then recovering slowly. A ping series, flat at
    ~35 ms with two isolated spikes, shares the timestamps. Columns:
    timestamp_s, latency_s, ping_s, stall_rate (the model's expected stalls per
    call: the ground truth), stalls (k). Fewer than two calls raise
    :class:`~workbench.errors.UsageError` naming ``hours`` and ``every_s``.
    """
    n = int(hours * 3600 / every_s) if hours > 0 and every_s > 0 else 0
    if n < 2:
        raise UsageError(f"simulate_overnight: hours={hours!r}, every_s={every_s!r} give {n} calls; expected "
                         "hours > 0 and every_s > 0 with at least two calls (hours × 3600 ≥ 2 × every_s)")
    rng = np.random.default_rng(seed)
    t = start_s + every_s * np.arange(n) + rng.uniform(0, 5, n)
    x = np.arange(n) / max(n - 1, 1)
    rate = np.select(
        [x < 0.25, x < 0.5, x < 0.67],
        [0.08, 0.08 + (x - 0.25) / 0.25 * 1.1, 1.18],
        1.18 - (x - 0.67) / 0.33 * 1.05,
    )
    k = rng.poisson(rate)
    lat_ms = base_ms * np.exp(rng.normal(0, 0.08, n)) + quantum_ms * k
    ping_ms = 35.0 + rng.gamma(4.0, 0.4, n)
    for i in rng.choice(n, 2, replace=False):
        ping_ms[i] += rng.uniform(150, 300)
    return pd.DataFrame({"timestamp_s": t, "latency_s": lat_ms / 1e3, "ping_s": ping_ms / 1e3,
                         "stall_rate": rate, "stalls": k.astype("int64")})
