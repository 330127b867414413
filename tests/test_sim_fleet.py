"""The fleet simulation writes real formats that the loaders read cleanly, and its knobs move the results."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from workbench.counters import analysis as A
from workbench.counters import read_bpftrace, read_node_attributes, read_series, read_tsdb_csv
from workbench.errors import UsageError
from workbench.sim._formats import net_dev
from workbench.sim.fleet import DEFAULT_CATEGORIES, FleetParams, NodeSpec, simulate_fleet


def _measure(d: Path, host: str = "fe02") -> dict:
    s = read_series(d / "snapshots")
    assert len(s.attrs["rejects"]) == 0
    ts = sorted(s["timestamp"].unique())
    t0, t1 = ts[0], ts[-1]
    tsdb = read_tsdb_csv(d / "tsdb_export.csv")
    dem = read_bpftrace(d / "probes" / f"{host}_ceph_read_iter.bt.txt").maps
    early = read_bpftrace(d / "probes" / f"{host}_ceph_readahead.bt.txt").maps
    late = read_bpftrace(d / "probes" / f"{host}_page_cache_ra_unbounded.bt.txt").maps
    fetched = A.increase(s, source="cephfs_metrics", item="read", counter="total_sz_bytes", start=t0, end=t1, host=host)
    req = A.increase(tsdb, source="tsdb", item="", counter="frontend_requests_total", start=t0, end=t1, host=host)
    amp = A.amplification(fetched, A.map_values(dem, "@demand_bytes").sum(), A.map_values(dem, "@reads").sum(), req)
    return {"amp": amp, "early": A.map_values(early, "@ra_bytes").sum() / fetched,
            "late": A.map_values(late, "@ra_bytes").sum() / fetched, "series": s}


@pytest.fixture(scope="module")
def default_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simulate_fleet(tmp_path_factory.mktemp("fleet"))


def test_bundle_layout_and_formats(default_bundle: Path) -> None:
    d = default_bundle
    assert {p.name for p in d.iterdir()} >= {"snapshots", "probes", "cache_trap", "tsdb_export.csv", "nodes.csv", "params.json"}
    params = json.loads((d / "params.json").read_text())
    assert params["read_ahead_kb"] == 8192
    nodes = read_node_attributes(d / "nodes.csv")
    assert set(nodes["migration_state"]) == {"migrating", "switched"}
    s = read_series(d / "snapshots")
    assert set(s["source"]) == {"cephfs_metrics", "net_dev", "bdi"}
    # both metrics layouts are written: the 5.16 directory and the 5.14 single file (fe06)
    assert (d / "snapshots" / "fe06.snapshots").read_text().count("/ total inodes") > 0
    assert "metrics/size" in (d / "snapshots" / "fe01.snapshots").read_text()
    for f in (d / "probes").glob("*.bt.txt"):
        assert len(read_bpftrace(f).maps.attrs["rejects"]) == 0


def test_defaults_reproduce_the_investigation(default_bundle: Path) -> None:
    m = _measure(default_bundle)
    assert 11 <= m["amp"].amplification <= 15
    assert 127 <= m["amp"].fetched_per_read_bytes / 1024 <= 167
    assert 0.5 <= m["amp"].fetched_per_request_bytes / 2**20 <= 0.8
    assert m["early"] == pytest.approx(1 / 30, rel=0.15)
    assert m["late"] == pytest.approx(1.0, abs=1e-12)


def test_smaller_readahead_and_profiler_fraction_move_the_results(tmp_path: Path) -> None:
    m = _measure(simulate_fleet(tmp_path, read_ahead_kb=128, profiler_early_fraction=0.1))
    # a 128 KiB window clamps every fetch of a bigger file: expected ≈ 417 KiB/request ÷ 50 KiB asked
    assert 6.5 <= m["amp"].amplification <= 10
    assert m["amp"].fetched_per_read_bytes <= 128 * 1024
    assert m["early"] == pytest.approx(0.1, rel=0.1)


def test_params_object_and_override_agree(tmp_path: Path) -> None:
    a = simulate_fleet(tmp_path / "a", FleetParams(seed=11, n_intervals=2))
    b = simulate_fleet(tmp_path / "b", seed=11, n_intervals=2)
    assert (a / "tsdb_export.csv").read_text() == (b / "tsdb_export.csv").read_text()
    assert len(read_series(a / "snapshots")["timestamp"].unique()) == 3


@pytest.mark.parametrize(("overrides", "named"), [
    ({"readahead_kb": 128}, "unknown parameter(s) ['readahead_kb']"),
    ({"profiled_host": "fe99"}, "profiled_host='fe99'"),
    ({"remount_host": "fe99"}, "remount_host='fe99'"),
    ({"interval_s": 0.0}, "interval_s=0.0"),
    ({"n_intervals": 0, "read_ahead_kb": -1}, "n_intervals=0, read_ahead_kb=-1"),
    ({"nodes": (NodeSpec("fe02", 1.0, "switched"), NodeSpec("fe02", 2.0, "switched"))}, "each host once"),
    ({"nodes": (NodeSpec("fe02", 1.0, "switched", kernel_layout="6.1"),), "remount_host": ""},
     "kernel_layout {'fe02': '6.1'}"),
    ({"categories": DEFAULT_CATEGORIES[:-1]}, "exactly one category with n_files=1"),
])
def test_parameters_it_cannot_run_with_are_named(tmp_path: Path, overrides: dict, named: str) -> None:
    with pytest.raises(UsageError, match=re.escape(named)):
        simulate_fleet(tmp_path / "x", **overrides)
    assert not (tmp_path / "x").exists()  # refused before writing anything


def test_net_dev_writer_needs_sixteen_counters() -> None:
    with pytest.raises(UsageError, match=r"ifaces\['eth0'\] has 3 counters; expected 16"):
        net_dev({"eth0": [1, 2, 3]})
