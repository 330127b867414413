"""Modes, recording resolution and quanta on synthetic samples with a known answer, one per outcome."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.errors import UsageError
from workbench.stats import find_modes, find_quantum, quantum_across, quantum_evidence, resolution


def hdr_bucketed_ms(values_ms: np.ndarray, digits: int = 3) -> np.ndarray:
    """Values as an HdrHistogram (µs, ``digits`` significant digits) gives them back: bucket values, in ms."""
    from hdrh.histogram import HdrHistogram

    h = HdrHistogram(1, 3_600_000_000, digits)
    for v in np.maximum(1, np.round(np.asarray(values_ms) * 1000)).astype(int):
        h.record_value(int(v))
    out = [np.full(it.count_at_value_iterated_to, it.value_iterated_to / 1000.0) for it in h.get_recorded_iterator()]
    return np.concatenate(out)


def stalls_ms(q: float, base: float, n: int = 3000, weights=(0.7, 0.2, 0.1), spread: float = 0.5, seed: int = 1):
    """base + q·k + Gamma noise (mean 2·spread), k drawn with ``weights``."""
    rng = np.random.default_rng(seed)
    k = rng.choice(len(weights), n, p=weights)
    return base + q * k + rng.gamma(2.0, spread, n)


# ------------------------------------------------------------ resolution ----

def test_resolution_of_continuous_values_is_none():
    r = resolution(np.random.default_rng(0).lognormal(1.0, 0.5, 2000))
    assert r.kind == "continuous" and r.step == 0.0 and r.at(3.0) == 0.0


def test_resolution_of_integer_ms_and_printed_decimals():
    x = np.random.default_rng(1).lognormal(1.5, 0.6, 2000)
    r = resolution(np.round(x))
    assert r.kind == "grid" and r.step == pytest.approx(1.0) and r.at(25.0) == pytest.approx(1.0)
    r4 = resolution(np.round(x / 1000, 4))  # seconds printed with 4 decimals (hey)
    assert r4.step == pytest.approx(1e-4, rel=1e-6)


def test_resolution_of_hdr_buckets_grows_with_the_value():
    x = hdr_bucketed_ms(np.random.default_rng(2).lognormal(np.log(20), 1.0, 20000))
    r = resolution(x)
    assert r.kind == "log-grid"
    # 3 significant digits in µs: 1 µs steps up to 2.048 ms, 16 µs around 20–32 ms, 64 µs around 100 ms
    assert r.at(1.5) == pytest.approx(0.001, rel=0.01)
    assert r.at(25.0) == pytest.approx(0.016, rel=0.01)
    assert r.at(100.0) == pytest.approx(0.064, rel=0.01)


def test_resolution_needs_enough_distinct_values():
    assert resolution([1.0, 41.0] * 50).kind == "few"
    assert resolution([3.0] * 10).kind == "single"
    assert resolution([]).kind == "empty"


# ------------------------------------------------------------------ modes ----

def test_small_slow_clusters_beside_a_large_fast_bulk_keep_their_counts():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.lognormal(np.log(3.0), 0.3, 543),      # fast bulk, ms
                        505 + rng.gamma(2.0, 1.0, 18),                # 18 calls one 500 ms step up
                        1000 + rng.gamma(2.0, 1.0, 9)])               # 9 calls two steps up
    modes = find_modes(x)
    slow = [m for m in modes if m.location > 100]
    assert [round(m.location, -1) for m in slow] == [510.0, 1000.0]
    assert [m.count for m in slow] == [18, 9]
    q = quantum_evidence(x, modes=modes)
    assert q.verdict == "yes" and q.quantum == pytest.approx(500, rel=0.02)
    assert q.multiples[-2:] == (1, 2) and q.caveats == ()


def test_a_small_slow_cluster_beside_a_slow_bulk():
    rng = np.random.default_rng(4)
    x = np.concatenate([500 + rng.gamma(2.0, 1.5, 543), 1000 + rng.gamma(2.0, 1.0, 9)])
    modes = find_modes(x)
    assert modes[-1].count == 9 and modes[-1].location == pytest.approx(1002, abs=5)
    assert sum(m.count for m in modes) == x.size


def test_few_stragglers_are_not_a_mode():
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.normal(10, 1, 2000), rng.normal(60, 0.2, 4)])
    assert len(find_modes(x)) == 1
    assert len(find_modes(x, min_count=3)) == 1  # 4 samples: 2 Poisson sd above an empty valley
    assert len(find_modes(x, min_count=3, min_dip_z=1.5)) == 2


def test_bucket_spikes_are_not_modes():
    x = hdr_bucketed_ms(np.random.default_rng(6).lognormal(np.log(0.35), 0.15, 5000))
    assert len(find_modes(x)) == 1
    x_int = np.round(np.random.default_rng(7).lognormal(np.log(6), 0.4, 3000))  # integer ms
    assert len(find_modes(x_int)) == 1


def test_scale_options():
    x = stalls_ms(40.0, 2.0)
    assert [round(m.location, -1) for m in find_modes(x, scale="linear")] == [0.0, 40.0, 80.0]
    assert [round(m.location, -1) for m in find_modes(x, scale="log")] == [0.0, 40.0, 80.0]
    with pytest.raises(UsageError, match="positive values"):
        find_modes(x - 10, scale="log")
    with pytest.raises(UsageError, match="scale must be"):
        find_modes(x, scale="sqrt")


# ------------------------------------------------------------------ quanta ----

def test_single_mode_says_no_quantum():
    q = quantum_evidence(np.random.default_rng(8).lognormal(2.0, 0.4, 3000))
    assert q.quantum is None and q.verdict == "no" and "one mode" in q.reason


def test_too_few_values_is_inconclusive():
    q = quantum_evidence([1.0, 41.0, 81.0])
    assert q.quantum is None and q.verdict == "inconclusive"


def test_hdr_bucket_granularity_is_never_a_quantum():
    # two close humps 0.1 ms apart at 0.3 ms, on 16 µs buckets: their spacing is 6 buckets, not a quantum
    from workbench.stats import Mode

    rng = np.random.default_rng(9)
    raw = np.concatenate([rng.normal(0.28, 0.01, 2000), rng.normal(0.38, 0.01, 2000)])
    x = np.round(raw / 0.016384) * 0.016384 - 1e-6  # HdrHistogram's highest-equivalent values, ms
    modes = (Mode(0.28, 0.2, 0.33, 2000, 0.5, 1.0), Mode(0.38, 0.33, 0.45, 2000, 0.5, 1.0))
    q = quantum_evidence(x, modes=modes)
    assert q.resolution == pytest.approx(0.016384, rel=1e-3)
    assert q.quantum is None and q.verdict == "inconclusive" and "resolution" in q.reason
    assert find_quantum(raw, modes=modes) == pytest.approx(0.10, rel=0.05)  # unrounded values: a spacing


def test_quantum_survives_hdr_bucketing_and_integer_ms():
    x = stalls_ms(40.0, 2.0, spread=1.0)
    assert find_quantum(hdr_bucketed_ms(x)) == pytest.approx(40.0, rel=0.03)
    assert find_quantum(np.round(x)) == pytest.approx(40.0, rel=0.03)


def test_smooth_lognormal_on_integer_ms_has_no_quantum():
    for seed in range(3):
        x = np.round(np.random.default_rng(seed).lognormal(np.log(3), 0.6, 3000))
        q = quantum_evidence(x)
        assert q.quantum is None, q.reason
        assert q.resolution in (0.0, 1.0)


def test_delayed_ack_cells_with_unequal_weights():
    # a single-rate cell: most requests wait one 40 ms delayed ACK, few none, few two
    x = stalls_ms(40.0, 0.1, weights=(0.08, 0.85, 0.07), spread=0.8, seed=10)
    q = quantum_evidence(x)
    assert q.verdict == "yes" and q.quantum == pytest.approx(40.0, rel=0.05)
    assert [m.count for m in q.modes] == pytest.approx([240, 2550, 210], rel=0.15)


def test_a_broad_second_population_is_not_a_step():
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.lognormal(np.log(0.4), 0.1, 5000), rng.lognormal(np.log(700), 0.6, 300)])
    q = quantum_evidence(x)
    assert q.quantum is None and "broader" in q.reason


def test_two_clusters_are_a_spacing_with_a_caveat():
    x = stalls_ms(40.0, 0.1, weights=(0.5, 0.5), seed=12)
    q = quantum_evidence(x)
    assert q.quantum == pytest.approx(40.0, rel=0.05)
    assert q.multiples == (0, 1) and q.caveats and "one step only" in q.caveats[0]


def test_modes_on_whole_steps_from_zero():
    # no base mode: one and two delayed ACKs (42 and 88 ms); from zero that is 1 and 2 steps of ~44 ms
    x = stalls_ms(44.0, 42.0 - 44.0 + 44.0, weights=(0.5, 0.5), spread=0.3, seed=13)  # 42.6 and 86.6 ms
    q = quantum_evidence(x)
    assert q.origin == 0.0 and q.multiples == (1, 2)
    assert q.quantum == pytest.approx(43.5, rel=0.03)
    ev = q.evidence("ms")
    assert ev["quantum_ms"] == q.quantum and ev["mode_counts"] == [m.count for m in q.modes]


# ----------------------------------------------------------- across groups ----

def test_conditions_that_line_up_share_their_quantum():
    a = stalls_ms(40.0, 0.2, seed=14)
    b = stalls_ms(40.0, 3.0, weights=(0.5, 0.3, 0.2), seed=15)  # another base latency, same step
    r = quantum_across({"10/s": a, "20/s": b})
    assert r.verdict == "yes" and r.quantum == pytest.approx(40.0, rel=0.03)
    assert set(r.misfits) == {"10/s", "20/s"} and max(r.misfits.values()) < 0.1
    assert r.groups["10/s"].quantum == pytest.approx(40.0, rel=0.03)


def test_conditions_that_do_not_line_up_give_no_quantum_with_the_reason():
    a = stalls_ms(40.0, 0.2, seed=16)
    b = stalls_ms(55.0, 0.2, seed=17)
    r = quantum_across({"a": a, "b": b})
    assert r.quantum is None and r.verdict == "no"
    assert "do not line up" in r.reason and ("a has modes" in r.reason or "b has modes" in r.reason)
    assert r.groups["a"].quantum == pytest.approx(40.0, rel=0.03)
    assert r.groups["b"].quantum == pytest.approx(55.0, rel=0.03)


def test_conditions_without_two_modes_give_no_quantum():
    rng = np.random.default_rng(18)
    r = quantum_across({"a": rng.lognormal(1, 0.3, 1000), "b": rng.lognormal(2, 0.3, 1000)})
    assert r.quantum is None and "no condition has two modes" in r.reason
    with pytest.raises(UsageError):
        quantum_across({})


def test_single_mode_condition_adds_no_evidence():
    a, b = stalls_ms(40.0, 0.2, seed=19), stalls_ms(40.0, 1.0, seed=21)
    flat = np.random.default_rng(20).lognormal(0, 0.2, 1000)
    alone = quantum_across({"a": a, "flat": flat})
    assert alone.quantum is None and alone.verdict == "inconclusive" and "only a has two" in alone.reason
    assert alone.groups["a"].quantum == pytest.approx(40.0, rel=0.03)
    r = quantum_across({"a": a, "b": b, "flat": flat})
    assert r.quantum == pytest.approx(40.0, rel=0.03) and "flat with one mode add no evidence" in r.reason


# ------------------------------------------------------------- properties ----

@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(q=st.floats(5.0, 500.0), base_frac=st.floats(0.0, 0.2), seed=st.integers(0, 10_000))
def test_property_known_quantum_is_found(q, base_frac, seed):
    x = stalls_ms(q, base_frac * q, n=2000, weights=(0.6, 0.25, 0.15), spread=q / 80, seed=seed)
    found = find_quantum(x)
    assert found is not None and found == pytest.approx(q, rel=0.05)


@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(step=st.sampled_from([0.001, 0.1, 1.0, 10.0]), sigma=st.floats(0.1, 1.5), seed=st.integers(0, 10_000))
def test_property_no_quantum_at_the_recording_resolution(step, sigma, seed):
    x = np.random.default_rng(seed).lognormal(0.0, sigma, 1500) * 50 * step
    gridded = np.round(x / step) * step
    q = quantum_evidence(gridded)
    assert q.quantum is None or q.quantum >= 8 * step * 0.999


def test_quantum_as_a_decision():
    yes = quantum_evidence(stalls_ms(40.0, 2.0)).decision("ms")
    assert yes.verdict == "yes" and yes.evidence["quantum_ms"] == pytest.approx(40.0, rel=0.03)
    assert yes.summary()["evidence"]["multiples"] == [0, 1, 2]
    no = quantum_evidence(np.random.default_rng(22).lognormal(2.0, 0.4, 2000)).decision("ms")
    assert no.verdict == "no" and "one mode" in no.because and no.evidence["quantum_ms"] is None


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(bulk=st.integers(200, 5000), small=st.integers(8, 40), ratio=st.floats(3.0, 300.0),
       bulk_ms=st.floats(0.1, 50.0), seed=st.integers(0, 10_000))
def test_property_small_far_cluster_keeps_its_count(bulk, small, ratio, bulk_ms, seed):
    rng = np.random.default_rng(seed)
    far = bulk_ms * ratio
    x = np.concatenate([rng.lognormal(np.log(bulk_ms), 0.25, bulk), far * (1 + rng.normal(0, 0.005, small))])
    modes = find_modes(x)
    # the bulk's own far tail may put a sample or two past the valley (ratio 3 is 4.4 sd of its log)
    assert small <= modes[-1].count <= small + 2 and modes[-1].location == pytest.approx(far, rel=0.02)
    assert sum(m.count for m in modes) == x.size


@pytest.mark.parametrize("n", [200, 2000, 20000])
def test_no_false_quanta_on_smooth_samples_on_any_grid(n):
    draws = {
        "lognormal": lambda r: r.lognormal(1.0, 0.5, n),
        "pareto": lambda r: 1 + r.pareto(1.5, n),
        "gamma": lambda r: r.gamma(2.0, 1.0, n),
        "integer ms": lambda r: np.round(r.lognormal(1.5, 0.7, n)),
        "0.1 ms": lambda r: np.round(r.lognormal(0.0, 0.6, n), 1),
        "hdr buckets": lambda r: hdr_bucketed_ms(r.lognormal(np.log(0.3), 0.8, n)),
    }
    found = {name: [s for s in range(8) if find_quantum(draw(np.random.default_rng(1000 + s))) is not None]
             for name, draw in draws.items()}
    assert all(not seeds for seeds in found.values()), found
