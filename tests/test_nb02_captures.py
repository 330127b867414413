"""Notebook 02 on captures it was not built on: a plain CSV open-loop sweep, hey runs per rate, a lockstep client.

The captures were made on loopback by tests/data/nb02/make_captures.py (see tests/data/nb02/README.md).
Each test asserts what the notebook found, which sections it skipped and the verdict sentences.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.report import execute_notebook

from .conftest import NOTEBOOKS

NB = NOTEBOOKS / "02_low_qps_nagle.ipynb"
DATA = "tests/data/nb02"
SKIPPABLE = ["work_ruled_out", "ping_p99_ms", "path_is_fast", "nodelay_p99_ms", "nodelay_speedup_p50_lowest_rate",
             "nodelay_side", "culprit_option", "sufficient_alone", "bisection"]


def _run(tmp_path: Path, params: dict) -> tuple[dict, str]:
    res = execute_notebook(NB, params, out_dir=tmp_path, render=False)
    assert res.status == "ok", res.error
    nb = json.loads((tmp_path / "02_low_qps_nagle.ipynb").read_text())
    text = "\n".join("".join(o.get("data", {}).get("text/markdown", "")) for c in nb["cells"]
                     for o in c.get("outputs", []))
    return {k: v.value for k, v in res.findings.items()}, text


@pytest.mark.slow
def test_plain_csv_open_loop_sweep_without_other_phases(tmp_path: Path) -> None:
    f, text = _run(tmp_path, {"sweep_path": f"{DATA}/open_loop/sweep.csv"})
    assert set(f["p99_ms_by_rate"]) == {"50", "500", "2000", "5000"}
    assert f["tail_worse_at_low_rate"]["verdict"] == "yes" and f["p99_ms_by_rate"]["50"] > 40
    # the most slow requests per second are at the highest rate here: the notebook must not claim the paradox
    slow = f["slow_per_s_at_low_rate"]
    assert slow["verdict"] == "no" and slow["evidence"]["most_over_rate_per_s"] == 5000
    assert "less load, more slow requests per second" not in text
    assert "more load, more slow requests per second" in text
    # low rates default to the lowest ones present (not a fixed 20/s that selects nothing here)
    q = f["delayed_ack_quantum"]
    assert q["verdict"] == "yes" and 35 <= f["quantum_ms"] <= 50 and list(q["evidence"]["quantum_ms_by_group"]) == ["default 50"]
    for name in SKIPPABLE:
        assert f[name] is None, name
    assert "skipped: needs ping\\_path" in text and "skipped: needs bisection\\_path" in text
    assert "skipped: needs a sweep with TCP\\_NODELAY" in text
    assert f["nagle_explains_it"] is None
    assert "bundled" not in text and "your rate sweep" in text


@pytest.mark.slow
def test_hey_folder_per_rate_with_nodelay_on_the_server(tmp_path: Path) -> None:
    f, text = _run(tmp_path, {"sweep_path": f"{DATA}/hey/nagle", "nodelay_server_path": f"{DATA}/hey/nodelay_server"})
    assert set(f["p99_ms_by_rate"]) == {"5", "20", "100", "400"}
    assert "from file name" in text
    # one hey worker cannot keep up with 100 or 400 req/s behind 44 ms stalls: only 5 and 20 are sustained
    assert f["highest_sustained_rate"] == 20
    # at 5/s hey's requests do not stall; at 20/s they do: the tail is *not* worse at the lowest rate
    assert f["tail_worse_at_low_rate"]["verdict"] == "no" and f["p99_ms_by_rate"]["5"] < 10
    assert f["slow_per_s_at_low_rate"]["verdict"] == "no"
    q = f["delayed_ack_quantum"]
    assert q["verdict"] == "yes" and 40 <= f["quantum_ms"] <= 50
    # hey prints latencies to 0.1 ms: spacings on that grid are not taken for a delayed-ACK step
    assert list(q["evidence"]["quantum_ms_by_group"]) == ["default 20"]
    side = f["nodelay_side"]
    assert side["evidence"]["state_by_setting"]["default"] == "fails"
    assert "not measured: TCP_NODELAY on the client alone" in side["caveats"]
    assert side["verdict"] == "inconclusive" and side["evidence"]["state_by_setting"]["nodelay_server"] == "undecided"
    for name in ("work_ruled_out", "path_is_fast", "bisection"):
        assert f[name] is None
    assert "Nagle" in text and "bundled" not in text


@pytest.mark.slow
def test_lockstep_client_with_nodelay_runs_and_pings(tmp_path: Path) -> None:
    f, text = _run(tmp_path, {"sweep_path": f"{DATA}/lockstep/sweep.csv",
                              "nodelay_client_path": f"{DATA}/lockstep/nodelay_client.csv",
                              "nodelay_both_path": f"{DATA}/lockstep/nodelay_both.csv",
                              "ping_path": f"{DATA}/lockstep/ping.csv"})
    assert "from column target\\_rps" in text
    # one request in flight behind 44–88 ms stalls: 20 and 50 req/s queue up and are not sustained
    assert f["highest_sustained_rate"] == 10
    assert f["p99_ms_by_rate"]["20"] > 1000
    # every request stalls at 5/s (once) and 10/s (twice): the tail grows with the rate, not against it
    assert f["tail_worse_at_low_rate"]["verdict"] == "no"
    assert f["slow_per_s_at_low_rate"]["verdict"] == "no"
    # no fast mode of their own: steps are counted from the nodelay runs' base latency at the same rate
    q = f["delayed_ack_quantum"]
    assert q["verdict"] == "yes" and 40 <= f["quantum_ms"] <= 50
    assert set(q["evidence"]["quantum_ms_by_group"]) == {"default 5", "default 10"}
    side = f["nodelay_side"]
    assert side["verdict"] == "yes" and side["evidence"]["side"] == "both"
    assert side["evidence"]["state_by_setting"]["nodelay_client"] == "fails"
    assert "not measured: TCP_NODELAY on the server alone" in side["caveats"]
    assert f["path_is_fast"]["verdict"] == "yes" and f["ping_p99_ms"] < 10
    assert f["nodelay_speedup_p50_lowest_rate"] > 10
    assert f["work_ruled_out"] is None and f["bisection"] is None
    assert f["nagle_explains_it"] is True
    assert "the tail is not shown to be worse at the lowest rate" in text


@pytest.mark.slow
def test_pings_alone_run_their_section_and_skip_the_rest(tmp_path: Path) -> None:
    f, text = _run(tmp_path, {"sweep_path": "", "ping_path": f"{DATA}/lockstep/ping.csv"})
    assert f["path_is_fast"]["verdict"] == "yes"
    for name in ("p99_ms_by_rate", "tail_worse_at_low_rate", "quantum_ms", "nodelay_side", "bisection"):
        assert f[name] is None, name
    assert "1. The symptom — skipped: needs sweep\\_path" in text and "Without a rate sweep:" in text
    assert f["nagle_explains_it"] is None
