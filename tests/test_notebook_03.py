"""Notebook 03 on its bundled data, and on a regenerated fleet with other knobs (plus a live probe)."""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.report import execute_notebook
from workbench.sim.fleet import simulate_fleet

ROOT = Path(__file__).resolve().parent.parent
NB = ROOT / "notebooks" / "03_readahead_amplification.ipynb"


def _run(tmp_path: Path, params: dict) -> dict:
    res = execute_notebook(NB, params, out_dir=tmp_path, render=False)
    assert res.status == "ok", res.error
    return {k: v.value for k, v in res.findings.items()}


@pytest.mark.slow
def test_bundled_data_reproduces_the_investigation(tmp_path: Path) -> None:
    f = _run(tmp_path, {})
    assert f["anchor"] == "cephfs_metrics:read/total_sz_bytes"
    assert f["read_ahead_kb"] == 8192
    assert 11 <= f["amplification"] <= 15
    assert 127 <= f["fetched_per_read_kib"] <= 167
    assert 0.5 <= f["fetched_per_request_mib"] <= 0.8
    assert 28 <= f["read_write_ratio"] <= 34
    assert 906 * 0.95 <= f["cumulative_read_gb"] <= 906 * 1.05  # published: 906 GB read
    assert 29 * 0.95 <= f["cumulative_write_gb"] <= 29 * 1.05  # and 29 GB written
    assert 0.5 <= f["baseline_bytes_per_request_mib"] <= 0.8  # config-lookup baseline ≈ 0.65 MiB
    assert f["requested_per_read_kib"] * 11 <= f["fetched_per_read_kib"]
    assert 4 <= f["private_over_public_rx"] <= 12
    assert 15 <= f["private_rx_over_tx"] <= 23
    assert f["profiler_vs_anchor_ratio"] == pytest.approx(1 / 30, rel=0.15)
    assert f["disagreeing_instruments"] == ["profiler fe02_ceph_readahead.bt.txt"]
    assert f["reconciliation_verdict"]["verdict"] == "no"
    assert "profiler fe02_ceph_readahead.bt.txt undercounts" in f["reconciliation_verdict"]["because"]
    assert f["amplification_verdict"]["verdict"] == "yes"
    assert f["amplification_verdict"]["evidence"]["read_ops"] > 0
    assert f["reconciliation_max_rel_diff"] <= 0.06
    assert f["anchor_resets"] >= 1
    assert f["cache_trap_demand_mib"] > 100 * f["cache_trap_fetched_mib"]
    assert f["top_demand_file_cache_hit_pct"] > 90 > f["other_files_cache_hit_pct"]
    assert 3.5 <= f["other_state_bytes_per_request_mib"] <= 6
    lo, hi = f["other_state_read_rate_mib_s"]
    assert 5 <= lo <= hi <= 12
    assert all(v < 2 for v in f["prediction"].values())
    assert f["openat_coverage_pct"] < 50
    lab = f["lab_amplification_by_advice"]
    assert lab["normal"] > lab["random"]
    assert f["lab_reconciliation_max_rel_diff"] <= 0.05 or f["lab_disagreeing"]
    assert f["lab_read_sizes"] == "512 B"
    assert f["lab_advice_verdict"]["verdict"] == "yes"
    assert f["lab_advice_verdict"]["evidence"]["most"] == "normal"
    assert f["lab_advice_verdict"]["evidence"]["least"] == "random"
    assert f["lab_advice_verdict"]["evidence"]["comparisons"] == 3
    assert f["host_outliers"]["verdict"] in ("yes", "no")  # seven hosts: enough to decide


@pytest.mark.slow
def test_findings_follow_the_generator_and_live_probe_runs(tmp_path: Path) -> None:
    sim = simulate_fleet(tmp_path / "sim", read_ahead_kb=128, profiler_early_fraction=0.1, write_kib_per_request=52.0)
    params = {"snapshots": sim / "snapshots", "tsdb_csv": sim / "tsdb_export.csv", "nodes_csv": sim / "nodes.csv",
              "demand_probe": sim / "probes/fe02_ceph_read_iter.bt.txt",
              "fetch_probe": sim / "probes/fe02_page_cache_ra_unbounded.bt.txt",
              "early_probe": sim / "probes/fe02_ceph_readahead.bt.txt", "openat_probe": sim / "probes/fe02_openat.bt.txt",
              "cache_trap_snapshots": sim / "cache_trap/fe02.snapshots",
              "cache_trap_demand": sim / "cache_trap/fe02_ceph_read_iter.bt.txt"}
    f = _run(tmp_path / "out", {**{k: str(v) for k, v in params.items()}, "live": True})
    assert f["read_ahead_kb"] == 128
    assert 6.5 <= f["amplification"] <= 10
    assert f["fetched_per_read_kib"] <= 128
    assert f["profiler_vs_anchor_ratio"] == pytest.approx(0.1, rel=0.1)
    assert f["disagreeing_instruments"] == ["profiler fe02_ceph_readahead.bt.txt"]
    assert f["read_write_ratio"] < 25  # twice the writes per request
    lab = f["lab_amplification_by_advice"]
    assert set(lab) == {"normal", "random", "sequential"}
    if f["lab_environment"]["fstype"] not in ("tmpfs", "ramfs"):
        assert lab["normal"] > lab["random"]
