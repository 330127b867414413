"""Modes, quanta, percentile CIs and comparisons on synthetic data with known answers."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from workbench.stats import (
    Mode,
    compare,
    find_modes,
    find_quantum,
    percentile_ci,
    percentile_cis,
)


def quantised(q: float, base: float, n: int = 3000, weights=(0.7, 0.2, 0.1), shape=(2.0, 0.5), seed: int = 1):
    """base + q·k + Gamma noise, k drawn with ``weights``."""
    rng = np.random.default_rng(seed)
    k = rng.choice(len(weights), n, p=weights)
    return base + q * k + rng.gamma(*shape, n)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("sigma", [0.25, 0.5, 1.0, 1.5])
def test_no_quantum_in_lognormal(sigma, seed):
    x = np.random.default_rng(seed).lognormal(1.0, sigma, 3000)
    assert find_quantum(x) is None


def test_no_quantum_in_gamma_or_uniform():
    rng = np.random.default_rng(5)
    assert find_quantum(rng.gamma(2.0, 1.0, 2000)) is None
    assert find_quantum(rng.uniform(0, 100, 2000)) is None


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(("q", "base", "shape"), [
    (40.0, 2.0, (2.0, 0.5)),    # Linux delayed-ACK minimum, ms
    (40.0, 2.0, (2.0, 2.0)),    # wider modes
    (200.0, 0.5, (2.0, 2.0)),   # Windows delayed ACK / TCP_RTO_MIN, ms
    (250.0, 5.0, (2.0, 3.0)),   # an application's 250 ms retry sleep, ms
])
def test_finds_known_quanta(q, base, shape, seed):
    x = quantised(q, base, shape=shape, seed=seed)
    found = find_quantum(x)
    assert found is not None
    assert found == pytest.approx(q, rel=0.03)


def test_quantum_in_seconds_keeps_unit():
    x = quantised(40.0, 2.0) / 1000.0
    assert find_quantum(x) == pytest.approx(0.040, rel=0.03)


def test_takes_largest_consistent_spacing_not_a_submultiple():
    # four modes 40 ms apart: 20 and 13.3 ms also phase-lock, 40 must win
    x = quantised(40.0, 2.0, weights=(0.4, 0.3, 0.2, 0.1), seed=3)
    assert find_quantum(x) == pytest.approx(40.0, rel=0.03)


def test_retransmit_backoff_multiples_share_200ms():
    # +200, +600 and +1400 ms (RTO backoff) are multiples 1, 3, 7 of 200 ms
    rng = np.random.default_rng(7)
    k = rng.choice([0, 200, 600, 1400], 4000, p=[0.6, 0.25, 0.1, 0.05])
    x = 1.0 + k + rng.gamma(2.0, 2.0, k.size)
    assert find_quantum(x) == pytest.approx(200.0, rel=0.03)


def test_base_split_in_two_close_modes_keeps_the_quantum():
    # a fast bulk at 3 and 4.5 ms (two modes) plus stalls of +250, +500, +1000 ms
    rng = np.random.default_rng(12)
    k = rng.choice([0.0, 1.5, 250.0, 500.0, 1000.0], 5000, p=[0.4, 0.45, 0.05, 0.05, 0.05])
    x = 3.0 + k + rng.gamma(4.0, 0.05, k.size)
    assert find_quantum(x) == pytest.approx(250.0, rel=0.03)


def test_two_modes_not_on_a_lattice_with_a_third():
    # modes at 0, 40 and 55: no common spacing explains all three within tolerance… except 5/15,
    # which would need modes that are not there; the finder must not invent 40.
    rng = np.random.default_rng(11)
    k = rng.choice([0.0, 40.0, 55.0], 3000, p=[0.5, 0.3, 0.2])
    x = 2.0 + k + rng.gamma(2.0, 0.5, k.size)
    q = find_quantum(x)
    assert q is None or q < 20.0


def test_find_modes_locations_counts_and_fields():
    x = quantised(40.0, 2.0, n=4000)
    modes = find_modes(x)
    assert len(modes) == 3
    assert [m.location for m in modes] == pytest.approx([3.0, 43.0, 83.0], abs=1.5)
    assert [m.fraction for m in modes] == pytest.approx([0.7, 0.2, 0.1], abs=0.03)
    assert sum(m.count for m in modes) == 4000
    assert all(m.low <= m.location <= m.high for m in modes)
    with pytest.raises(dataclasses.FrozenInstanceError):
        modes[0].location = 1.0  # type: ignore[misc]


def test_find_modes_keeps_a_tight_small_cluster_unless_min_count_forbids():
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.normal(10, 1, 2000), rng.normal(60, 0.2, 8)])
    bulk, small = find_modes(x)  # 8 samples, none between: its own mode, whatever the bulk's height
    assert small.count == 8 and small.location == pytest.approx(60, abs=0.5) and small.dip_z > 2.5
    assert len(find_modes(x, min_count=10)) == 1


def test_find_modes_small_and_degenerate_inputs():
    assert find_modes([1.0, 2.0]) == ()
    (m,) = find_modes(np.full(50, 3.0))
    assert m.location == 3.0 and m.count == 50
    assert find_quantum(np.full(50, 3.0)) is None
    assert find_modes([np.nan] * 30) == ()


def test_quantum_from_given_modes():
    modes = (Mode(1.0, 0, 20, 100, 0.5, 1.0), Mode(41.0, 20, 60, 100, 0.5, 1.0))
    x = np.concatenate([np.full(100, 1.0), np.full(100, 41.0)])
    assert find_quantum(x, modes=modes) == pytest.approx(40.0)


def test_percentile_ci_covers_truth_and_counts_tail():
    rng = np.random.default_rng(0)
    x = rng.exponential(1.0, 2000)
    r = percentile_ci(x, 99)
    assert r.low <= np.log(100) <= r.high
    assert r.low < r.value < r.high
    assert r.n == 2000 and r.n_beyond == 20 and r.unit == "sample"
    p50, p999 = percentile_cis(x, (50, 99.9))
    assert p50.low <= np.log(2) <= p50.high
    assert p999.n_beyond == 2  # p99.9 of 2000 samples rests on two points


def test_percentile_ci_by_group_is_wider_for_correlated_runs():
    rng = np.random.default_rng(4)
    runs = np.repeat(np.arange(10), 200)
    shift = rng.normal(0, 1.0, 10)[runs]  # each run has its own level
    x = 10 + shift + rng.normal(0, 0.1, runs.size)
    naive = percentile_ci(x, 50)
    grouped = percentile_ci(x, 50, groups=runs)
    assert grouped.unit == "group" and grouped.n_units == 10
    assert (grouped.high - grouped.low) > 3 * (naive.high - naive.low)
    blocks = percentile_ci(x, 50, block_size=200)
    assert blocks.unit == "block" and blocks.n_units == 10


def test_percentile_ci_drops_nan_and_rejects_empty():
    r = percentile_ci([1.0, 2.0, np.nan, 3.0, 4.0], 50)
    assert r.n == 4 and r.value == pytest.approx(2.5)
    with pytest.raises(ValueError):
        percentile_ci([np.nan, np.nan], 50)
    with pytest.raises(ValueError):
        percentile_ci([1.0, 2.0], 50, groups=[1])


def test_compare_ratio_with_run_resampling():
    rng = np.random.default_rng(9)
    a = np.concatenate([rng.lognormal(0.0, 0.5, 300) * rng.uniform(0.9, 1.1) for _ in range(8)])
    b = np.concatenate([rng.lognormal(np.log(3), 0.5, 300) * rng.uniform(0.9, 1.1) for _ in range(8)])
    runs = np.repeat(np.arange(8), 300)
    med, p99 = compare(a, b, (50, 99), groups_a=runs, groups_b=runs)
    assert med.ratio == pytest.approx(3.0, rel=0.15)
    assert med.low < 3.0 < med.high or abs(med.ratio - 3.0) < 0.3
    assert med.low > 2.0 and p99.low > 1.5
    assert med.unit == "group" and med.units_a == 8
    same = compare(a, a[::-1].copy(), (50,))[0]
    assert same.unit == "block" and same.units_a == 20
    assert same.low <= 1.0 <= same.high


def test_bad_arguments_are_usage_errors_that_name_them() -> None:
    import numpy as np
    import pytest

    from workbench.errors import UsageError
    from workbench.stats import compare, kde_bandwidth, percentile_cis

    with pytest.raises(UsageError, match="kde_bandwidth needs at least two finite values, got 1"):
        kde_bandwidth(np.array([1.0, np.nan]))
    with pytest.raises(UsageError, match="groups has 2 labels for 3 values"):
        percentile_cis([1.0, 2.0, 3.0], groups=[1, 2])
    with pytest.raises(UsageError, match="block_size must be >= 1, got 0"):
        percentile_cis([1.0, 2.0, 3.0], block_size=0)
    with pytest.raises(UsageError, match="needs at least one finite value"):
        percentile_cis([np.nan])
    with pytest.raises(UsageError, match=r"each condition \(a and b\)"):
        compare([1.0], [np.nan])


def test_holm_adjust_matches_the_step_down_rule() -> None:
    from workbench.errors import UsageError
    from workbench.stats import holm_adjust

    # worked example: p = (0.01, 0.04, 0.03, 0.005), m = 4 → sorted 0.005·4, 0.01·3, 0.03·2, 0.04·1, made monotone
    got = holm_adjust([0.01, 0.04, 0.03, np.nan, 0.005])
    np.testing.assert_allclose(got[[0, 1, 2, 4]], [0.03, 0.06, 0.06, 0.02])
    assert np.isnan(got[3])
    assert holm_adjust([0.9, 0.8]).tolist() == [1.0, 1.0]
    assert holm_adjust([]).size == 0
    with pytest.raises(UsageError):
        holm_adjust([1.5])
