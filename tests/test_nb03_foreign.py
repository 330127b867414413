"""Notebook 03 on captures it was not built on: real page-cache probes and counter snapshots from tests/data/nb03."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from workbench.report import execute_notebook

ROOT = Path(__file__).resolve().parent.parent
NB = ROOT / "notebooks" / "03_readahead_amplification.ipynb"
DATA = ROOT / "tests" / "data" / "nb03"
FLEET = ("snapshots", "tsdb_csv", "nodes_csv", "demand_probe", "fetch_probe", "early_probe", "openat_probe",
         "cache_trap_snapshots", "cache_trap_demand", "probe_dir")
SECTIONS = ("1. The graph", "2. Choose the anchor", "3. The cache trap", "4. The amplifier", "5. Reads vs writes",
            "6. Nodes", "7. Reconciliation", "8. The openat", "9. The same mechanism")


def _run(tmp_path: Path, params: dict) -> tuple[dict, dict, str]:
    """Findings (values), their explanations, and the Markdown the notebook displayed."""
    res = execute_notebook(NB, {**dict.fromkeys(FLEET, ""), **params}, out_dir=tmp_path, render=False)
    assert res.status == "ok", res.error
    assert res.ipynb is not None
    nb = nbformat.read(res.ipynb, as_version=4)
    text = "\n".join(o["data"]["text/markdown"] for c in nb.cells if c.cell_type == "code"
                     for o in c.get("outputs", []) if "text/markdown" in o.get("data", {}))
    return ({k: v.value for k, v in res.findings.items()}, {k: v.explain for k, v in res.findings.items()}, text)


def _skipped(text: str) -> set[str]:
    return {s for s in SECTIONS if f"**{s}" in text and "skipped: needs" in text.split(f"**{s}", 1)[1].split("\n")[0]}


@pytest.mark.slow
def test_probe_on_ext4_loop_device_with_diskstats_anchor_and_mixed_sizes(tmp_path: Path) -> None:
    f, why, text = _run(tmp_path, {"probe_dir": str(DATA / "ext4_loop_probe"), "probe_anchor": "diskstats:loop0/read_bytes"})
    assert _skipped(text) == set(SECTIONS[:8])
    assert f["amplification"] is None and why["amplification"].startswith("skipped: needs")
    assert f["anchor"] is None and f["reconciliation_verdict"] is None
    # the sizes come from the distribution, not the first row
    assert f["lab_read_sizes"].startswith("16 B–505 B") and "median 254 B" in f["lab_read_sizes"]
    assert "reads of 16 B–505 B" in text
    assert f["lab_environment"] == {"fstype": "ext4", "device": "7:0", "read_ahead_kb": 128}
    # the anchor is the loop device: 1,085,440 B under NORMAL, 397,312 B under RANDOM for ~25 KiB asked each
    amp = f["lab_amplification_by_advice"]
    assert set(amp) == {"normal", "random"}
    assert 40 <= amp["normal"] <= 45 and 14 <= amp["random"] <= 16.5
    assert f["lab_amplification_verdict"] == {"normal": "yes", "random": "yes"}
    adv = f["lab_advice_verdict"]
    assert adv["verdict"] == "yes" and adv["evidence"]["most"] == "normal" and adv["evidence"]["comparisons"] == 1
    assert "normal pulls more per byte asked than random" in text
    assert f["lab_position_verdict"]["verdict"] == "yes" and f["lab_position_verdict"]["evidence"]["most"] == "offset 0"
    # pid_io and vmstat reproduce the loop device's bytes; the per-read mincore sum misses ~11 % under NORMAL
    assert f["lab_reconciliation_verdict"] == {"normal": "no", "random": "yes"}
    assert f["lab_disagreeing"] == ["normal: per-read sum (mincore) (-10.6%)"]
    assert "Anchor: <code>diskstats:loop0/read\\_bytes</code>" in text
    assert "bundled" not in text


@pytest.mark.slow
def test_snapshot_tree_with_pid_io_demand_and_diskstats_anchor(tmp_path: Path) -> None:
    f, why, text = _run(tmp_path, {
        "snapshots": str(DATA / "ext4_loop_tree"), "anchor": "diskstats:loop0/read_bytes",
        "demand_counter": "pid_io:16458/rchar", "demand_ops_counter": "pid_io:16458/syscr",
        "instruments": "vmstat:/pgpgin,pid_io:16458/read_bytes,net_dev:eth9/rx_bytes", "profiled_host": ""})
    assert _skipped(text) == {SECTIONS[i] for i in (0, 2, 5, 7, 8)}
    assert "interfaces eth1 and eth0 in /proc/net/dev (found: " in why["private_over_public_rx"]
    assert f["anchor"] == "diskstats:loop0/read_bytes" and f["anchor_resets"] == 0
    assert f["host_outliers"]["verdict"] == "inconclusive"  # one host
    assert f["read_ahead_kb"] == 128
    # 512 reads of 64 B (+ 4 reads of the reader's stdin) fetched 2,101,248 B from the loop device
    v = f["amplification_verdict"]
    assert v["verdict"] == "yes" and 60 <= f["amplification"] <= 68
    assert v["evidence"]["read_ops"] == 516 and v["evidence"]["demanded_bytes"] == 32780
    assert "pid\\_io:16458/rchar counted 32 KiB asked in 516 reads" in text
    assert 3.9 <= f["fetched_per_read_kib"] <= 4.1
    assert f["fetched_per_request_mib"] is None
    # /proc/vmstat pgpgin is system-wide (the loop device and the disk under its image): it overcounts
    r = f["reconciliation_verdict"]
    assert r["verdict"] == "no" and f["disagreeing_instruments"] == ["vmstat:/pgpgin"]
    assert r["evidence"]["agreeing"] == ["pid_io:16458/read_bytes"] and f["reconciliation_max_rel_diff"] == 0
    assert "Not compared: counter 'net\\_dev:eth9/rx\\_bytes' is not in the series" in text
    assert f["read_write_ratio"] is not None and f["read_write_ratio"] < 1  # loop0 written more (mkfs) than read
    assert "Writes dominate on the host" in text
    assert f["lab_read_sizes"] is None and "bundled" not in text


@pytest.mark.slow
def test_probe_on_tmpfs_with_one_advice_is_inconclusive(tmp_path: Path) -> None:
    f, _, text = _run(tmp_path, {"probe_dir": str(DATA / "tmpfs_probe")})
    assert _skipped(text) == set(SECTIONS[:8])
    assert f["lab_environment"]["fstype"] == "tmpfs"
    assert f["lab_read_sizes"] == "4 KiB"
    assert f["lab_amplification_verdict"] == {"sequential": "inconclusive"}
    assert "saw no bytes fetched" in text
    adv = f["lab_advice_verdict"]
    assert adv["verdict"] == "inconclusive" and "fewer than two advice groups" in adv["because"]
    pos = f["lab_position_verdict"]
    assert pos["verdict"] == "inconclusive" and "no read in any position group pulled a page" in pos["because"]
    assert f["lab_reconciliation_verdict"] == {"sequential": "inconclusive"}
    assert "Caveat: tmpfs keeps file data only in memory" in text


@pytest.mark.slow
def test_no_input_at_all_skips_every_section_with_its_reason(tmp_path: Path) -> None:
    f, why, text = _run(tmp_path, {})
    assert _skipped(text) == set(SECTIONS)
    assert all(v is None for v in f.values()), {k: v for k, v in f.items() if v is not None}
    assert why["amplification_verdict"].startswith("skipped: needs snapshots (counter snapshots)")
    assert "Fleet counters: no counter snapshots. Anchor:" in text


@pytest.mark.slow
def test_wrong_maps_and_unknown_host_skip_only_their_sections(tmp_path: Path) -> None:
    sim = "data/03_readahead_amplification/sim/"
    f, why, text = _run(tmp_path, {"snapshots": sim + "snapshots", "demand_probe": sim + "probes/fe02_openat.bt.txt",
                                   "profiled_host": "fe99", "anchor": "cephfs_metrics:read/total_sz_bytes"})
    assert _skipped(text) == {SECTIONS[i] for i in (2, 3, 5, 6, 7, 8)}
    assert f["private_over_public_rx"] is not None  # the interfaces are in the snapshots
    assert "maps @demand_bytes, @reads in demand_probe (it holds @opens)" in why["cache_trap_demand_mib"]
    assert "profiled_host 'fe99' among the anchor's hosts" in why["amplification"]
    assert f["anchor"] == "cephfs_metrics:read/total_sz_bytes" and f["anchor_resets"] >= 1
    assert f["read_write_ratio"] is not None and f["read_write_ratio"] > 20
