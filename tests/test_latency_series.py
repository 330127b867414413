"""Rolling percentiles and change points on latency series; the documented overnight simulation."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.latency_series import change_points, rolling_percentiles
from workbench.sim.overnight import simulate_overnight


def _series(levels_ms: list[float], n_each: int, seed: int = 0, sigma: float = 0.15) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    lat = np.concatenate([lv * rng.lognormal(0, sigma, n_each) for lv in levels_ms]) / 1e3
    return pd.DataFrame({"timestamp_s": 1e9 + 60.0 * np.arange(lat.size), "latency_s": lat})


def test_rolling_percentiles_by_count_match_numpy() -> None:
    df = _series([100], 50)
    r = rolling_percentiles(df, window_n=10, qs=(50, 90), min_n=10)
    assert r["p50_s"].iloc[:9].isna().all()
    for i in (9, 25, 49):
        win = df["latency_s"].iloc[i - 9:i + 1]
        assert r["p50_s"].iloc[i] == pytest.approx(np.percentile(win, 50))
        assert r["p90_s"].iloc[i] == pytest.approx(np.percentile(win, 90))
    assert r["n"].iloc[-1] == 10


def test_rolling_percentiles_by_time_window() -> None:
    df = _series([100], 60)  # one sample a minute
    r = rolling_percentiles(df, window_s=600, qs=(50,), min_n=1)
    assert r["n"].max() == 10  # 600 s trailing window holds 10 samples
    win = df["latency_s"].iloc[50:60]
    assert r["p50_s"].iloc[59] == pytest.approx(np.median(win))
    with pytest.raises(ValueError, match="exactly one"):
        rolling_percentiles(df)


def test_change_points_find_level_shifts() -> None:
    df = _series([200, 450, 200], 100)
    cp = change_points(df, min_size=10)
    assert len(cp.breaks) == 2
    assert abs(cp.breaks[0] - 100) <= 5 and abs(cp.breaks[1] - 200) <= 5
    seg = cp.segments
    assert np.allclose(seg["median_ms"], [200, 450, 200], rtol=0.08)
    assert seg["n"].sum() == 300
    assert cp.break_times_s[0] == pytest.approx(df["timestamp_s"].iloc[cp.breaks[0]])


@pytest.mark.parametrize("seed", range(5))
def test_change_points_none_in_stationary_noise(seed: int) -> None:
    cp = change_points(_series([220], 400, seed=seed, sigma=0.3), min_size=10)
    assert cp.breaks == ()
    assert len(cp.segments) == 1


def test_change_points_refuses_short_or_non_positive() -> None:
    with pytest.raises(ValueError, match="at least"):
        change_points(_series([100], 10), min_size=10)
    bad = _series([100], 50)
    bad.loc[3, "latency_s"] = 0.0
    with pytest.raises(ValueError, match="positive"):
        change_points(bad)


def test_simulated_overnight_has_the_described_structure() -> None:
    s = simulate_overnight()
    assert len(s) == 14 * 30 and s["timestamp_s"].is_monotonic_increasing
    assert simulate_overnight().equals(s)  # deterministic for a seed
    cp = change_points(s, min_size=20)
    seg = cp.segments
    # slow drift up and a slow recovery: the middle is slower than both ends
    assert seg["median_ms"].max() > 2 * seg["median_ms"].iloc[0]
    assert seg["median_ms"].iloc[-1] < 1.3 * seg["median_ms"].iloc[0]
    # the ping stays flat apart from two spikes
    ping = 1e3 * s["ping_s"]
    assert (ping > 100).sum() == 2 and ping.median() == pytest.approx(36.5, abs=2)
    # every call is the base plus whole stalls
    resid = 1e3 * s["latency_s"] - 250 * s["stalls"]
    assert resid.between(120, 400).all()
