"""Every detector on every capture folder of the repository: the cells that say ``found``, each explained.

A new ``found`` cell (a false positive until explained) or a lost one fails this test.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.diagnose.detectors import DETECTORS
from workbench.diagnose.inventory import read_one

ROOT = Path(__file__).resolve().parents[1]

#: (folder, detector) → why it is found there
EXPECTED_FOUND = {
    ("data/01_quantized_latency", "latency_quantum"):
        "overnight_simulated.csv is simulated with k × 250 ms added to each call: a planted 250 ms step",
    ("data/01_quantized_latency/lab", "latency_quantum"):
        "calls.csv run=before: the server waited 250/500/1000 ms futex timeouts on chosen requests",
    ("data/01_quantized_latency/lab", "timed_waits"):
        "strace_before.txt holds those futex timeouts: peaks at 250, 500 and 1000 ms, each followed by the request",
    ("data/01_quantized_latency/lab", "global_stall"):
        "steps.csv condition=pauses: whole-process pauses hit steps in proportion to their length",
    ("data/02_low_qps_nagle", "latency_quantum"): "Nagle and delayed ACK on both sides: ~40 ms steps",
    ("data/02_low_qps_nagle", "low_rate_tail"): "the same capture: p99 ~48 ms at 5/s against ~7 ms at 5000/s",
    ("data/03_readahead_amplification/sim/probes", "readahead_amplification"):
        "simulated probes: the final readahead window fetches 14× the bytes the reads ask for",
    ("data/04_event_loop_yields", "event_loop_yields"): "published table and lab capture: one loop pass per yield",
    ("data/05_actor_bottlenecks/simulation", "hot_actor"): "the simulated bank's coordinator is the busiest actor",
    ("tests/data/modes", "latency_quantum"):
        "sleepy_*.csv: the server slept 0.5 s or 1 s (a 500 ms step); nagle_lab_20rps_*: one and two delayed ACKs",
    ("tests/data/nb01/http_tt", "timed_waits"): "an HTTP server with futex 300/600 ms and poll 500 ms timeouts",
    ("tests/data/nb02/hey/nagle", "latency_quantum"): "hey against a server writing in two send() calls: ~43 ms step",
    ("tests/data/nb02/hey/nodelay_server", "low_rate_tail"):
        "real but not Nagle's: p99 ~7.7 ms at 5/s against 0.9 ms at 400/s and no step in the latencies; an idle "
        "client and server pay wake-up costs a busy pair does not (notebook 02's NODELAY comparison tells the two "
        "apart)",
    ("tests/data/nb02/open_loop", "latency_quantum"): "Nagle on both sides, open loop: a 40 ms step at 50/s",
    ("tests/data/nb02/open_loop", "low_rate_tail"): "the same sweep: p99 worst at the lowest rate",
    ("tests/data/nb04/asyncio_executor", "event_loop_yields"):
        "every file call through an executor: two loop passes per yield, duration still grows as yields × lag",
    ("tests/data/nb05/asyncio_bank", "hot_actor"): "an asyncio bank whose coordinator is the busiest actor",
}


def _folders() -> list[Path]:
    files = [p for top in ("data", "tests/data") for p in (ROOT / top).rglob("*") if p.is_file()]
    return sorted({p.parent for p in files})


@pytest.fixture(scope="module")
def matrix() -> dict[tuple[str, str], str]:
    out = {}
    for folder in _folders():
        inputs = [read_one(p) for p in sorted(folder.iterdir()) if p.is_file()]
        for name, detector in DETECTORS.items():
            out[(folder.relative_to(ROOT).as_posix(), name)] = detector(inputs).verdict
    return out


def test_found_cells_are_exactly_the_explained_ones(matrix: dict[tuple[str, str], str]) -> None:
    found = {k for k, v in matrix.items() if v == "found"}
    assert found - set(EXPECTED_FOUND) == set(), "unexplained found (false positives?)"
    assert set(EXPECTED_FOUND) - found == set(), "planted anomalies no longer found"


def test_every_detector_ran_somewhere_without_finding(matrix: dict[tuple[str, str], str]) -> None:
    # each detector also says "not found" or "inconclusive" on some capture: it is not a constant
    ran = {name for (_, name), v in matrix.items() if v in ("not found", "inconclusive")}
    assert ran >= {"latency_quantum", "low_rate_tail", "timed_waits", "event_loop_yields"}
