"""Modes, recording resolution and quanta on real captures (loopback runs in tests/data/modes, tools' own files).

What each capture is and how it was made: tests/data/modes/README.md.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.latency import read_latency
from workbench.stats import find_modes, find_quantum, quantum_across, quantum_evidence, resolution

DATA = Path(__file__).parent / "data"
MODES = DATA / "modes"


def ms(name: str) -> np.ndarray:
    return pd.read_csv(MODES / name)["latency_ms"].to_numpy(dtype=float)


def hlog_ms(path: Path) -> np.ndarray:
    frame = read_latency(path)
    return np.repeat(frame["latency_s"].to_numpy(), frame["count"].to_numpy().astype(int)) * 1e3


def test_slow_clusters_beside_a_fast_bulk_are_found_with_their_counts():
    # 570 requests; the server slept 0.5 s on 19 of them and 1.0 s on 9
    x = ms("sleepy_fast.csv")
    modes = find_modes(x)
    slow = [m for m in modes if m.location > 100]
    assert [m.count for m in slow] == [19, 9]
    assert [m.location for m in slow] == pytest.approx([500.2, 1000.2], abs=2.0)
    q = quantum_evidence(x, modes=modes)
    assert q.verdict == "yes" and q.quantum == pytest.approx(500.0, rel=0.01)
    assert q.multiples[-2:] == (1, 2) and q.resolution == pytest.approx(0.001)


def test_a_small_slow_cluster_beside_a_slow_bulk():
    # 540 requests: 531 slept 0.5 s, 9 slept 1.0 s
    x = ms("sleepy_bulk500.csv")
    modes = find_modes(x)
    assert modes[-1].count == 9 and modes[-1].location == pytest.approx(1000.3, abs=2.0)
    assert sum(m.count for m in modes[:-1]) == 531
    q = quantum_evidence(x)
    assert q.quantum == pytest.approx(500.0, rel=0.01) and q.multiples[-1] == 2


def test_delayed_ack_cells_line_up_and_differ_from_another_rate():
    a, b = ms("nagle_lab_20rps_a.csv"), ms("nagle_lab_20rps_b.csv")
    for x in (a, b):  # one and two delayed ACKs: modes at ~42 and ~88-91 ms, one and two steps from zero
        q = quantum_evidence(x)
        assert q.verdict == "yes" and q.origin == 0.0 and q.multiples == (1, 2)
        assert 40.0 <= q.quantum <= 50.0
    same = quantum_across({"20/s run a": a, "20/s run b": b})
    assert same.verdict == "yes" and 42.0 <= same.quantum <= 47.0 and max(same.misfits.values()) < 0.1
    fast = ms("nagle_lab_100rps.csv")
    mixed = quantum_across({"20/s": a, "100/s": fast})
    assert mixed.quantum is None and mixed.verdict == "inconclusive" and "100/s" in mixed.reason
    three = quantum_across({"20/s a": a, "20/s b": b, "100/s": fast})
    assert three.verdict == "yes" and "100/s with one mode" in three.reason
    assert find_quantum(np.concatenate([a, fast])) is None  # pooled across rates: no invented spacing


def test_every_request_stalled_once_is_one_mode_and_no_quantum():
    # lockstep at 10/s: each request waits one delayed ACK (43.6 ms, some a timer tick later)
    q = quantum_evidence(ms("nagle_10rps.csv"))
    assert len(q.modes) == 1 and q.modes[0].location == pytest.approx(43.6, abs=1.0)
    assert q.quantum is None and q.verdict == "no" and "one mode" in q.reason


def test_hdr_interval_log_of_the_same_requests_agrees_with_the_csv():
    csv = ms("nagle_lab_100rps.csv")
    hdr = hlog_ms(MODES / "nagle_lab_100rps.hlog")
    assert hdr.size == csv.size == 500
    r = resolution(hdr)
    assert r.at(21.0) == pytest.approx(0.016, rel=0.01)  # 3 significant digits in µs: 16 µs buckets at 16-32 ms
    m_csv, m_hdr = find_modes(csv), find_modes(hdr)
    assert [m.count for m in m_hdr] == [m.count for m in m_csv]
    assert [m.location for m in m_hdr] == pytest.approx([m.location for m in m_csv], abs=0.1)
    assert find_quantum(hdr) is None and find_quantum(csv) is None


def test_hdr_bucket_spacing_is_not_a_quantum():
    # HdrHistogram's own test log: humps at 0.28 and 0.38 ms on 16.4 µs buckets
    x = hlog_ms(DATA / "latency" / "tagged-non-monotonic.hlog")
    q = quantum_evidence(x)
    assert q.resolution == pytest.approx(0.016384, rel=1e-3)
    assert q.quantum is None and q.verdict == "inconclusive" and "resolution" in q.reason


@pytest.mark.parametrize("name", ["jHiccup-2.0.6.logV1.hlog", "jHiccup-2.0.7S.logV2.hlog", "tagged-Log.logV2.hlog"])
def test_jhiccup_logs_have_a_broad_tail_not_a_quantum(name):
    x = hlog_ms(DATA / "latency" / name)
    r = resolution(x)
    assert r.kind == "log-grid" and r.at(0.3) == pytest.approx(0.016384, rel=1e-3) and r.at(1000.0) > 1.0
    q = quantum_evidence(x, grid=r)
    assert q.quantum is None and "broader" in q.reason


def test_integer_ms_from_ab_has_no_quantum():
    x = pd.read_csv(MODES / "ab_c4_gnuplot.tsv", sep="\t")["ttime"].to_numpy(dtype=float)
    r = resolution(x)
    assert r.kind == "grid" and r.step == 1.0
    q = quantum_evidence(x, grid=r)
    assert q.quantum is None and q.resolution == 1.0 and q.min_quantum == 8.0


def test_hey_four_decimal_seconds():
    x = pd.read_csv(MODES / "hey_c2.csv")["response-time"].to_numpy() * 1e3
    r = resolution(x)
    assert r.step == pytest.approx(0.1, rel=1e-6)
    assert len(find_modes(x)) == 1 and find_quantum(x) is None
