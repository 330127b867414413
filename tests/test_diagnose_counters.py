"""Diagnose on counter captures: folder captures read whole, single /proc files read, readahead from each."""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.diagnose import diagnose
from workbench.diagnose.inventory import capture_folders, folder_capture, inventory

TD = Path(__file__).resolve().parent / "data"


def _cell(path: Path) -> dict:
    return next(s for s in diagnose(path).as_json()["suspects"] if s["detector"] == "readahead_amplification")


def test_probe_captures_and_snapshot_trees_are_one_input_each() -> None:
    got = {Path(f.path).name: f for f in inventory([TD / "nb03"])}
    assert got["ext4_loop_probe"].format == "readahead_probe" and got["ext4_loop_probe"].kind == "counters"
    assert got["ext4_loop_probe"].extra["advices"] == ["normal", "random"] and got["ext4_loop_probe"].rows > 1000
    tree = got["ext4_loop_tree"]
    assert tree.format == "snapshot_tree" and tree.rows == 2170 and tree.rejects == 0
    assert set(tree.frame["host"]) == {"vm"}  # read from the tree's root, where the host names are
    assert tree.extra["files"] == 25 and tree.span_s == pytest.approx(0.304, abs=0.01)
    assert not any("ext4_loop_tree/" in p or "ext4_loop_probe/" in p for p in got)  # their files are not listed again
    assert folder_capture(TD / "formats/snapshots_ns") == "snapshot_tree"
    assert folder_capture(TD / "nb03") is None
    folders = {p.relative_to(TD).as_posix() for p in capture_folders(TD / "nb03")}
    assert folders == {"nb03", "nb03/ext4_loop_probe", "nb03/ext4_loop_tree", "nb03/tmpfs_probe"}


def test_single_proc_files_are_read_by_their_readers() -> None:
    got = {Path(f.path).name: (f.kind, f.format, f.rows) for f in inventory([TD / "counters/proc", TD / "counters/sys"])}
    assert got == {"diskstats.txt": ("counters", "diskstats", 170), "net_dev.txt": ("counters", "net_dev", 64),
                   "pid_io.txt": ("counters", "pid_io", 7), "vmstat.txt": ("counters", "vmstat", 192),
                   "bdi_read_ahead_kb.txt": ("counters", "bdi", 10)}


def test_readahead_from_a_probe_capture_is_notebook_03s_decision() -> None:
    r = _cell(TD / "nb03/ext4_loop_probe")
    assert r["verdict"] == "found" and r["evidence"]["advice"] == "normal"
    assert r["evidence"]["ratio"] == pytest.approx(42.7, rel=0.01)
    assert r["evidence"]["verdict_by_advice"] == {"normal": "yes", "random": "yes"}
    assert "-p probe_dir " in r["command"] and "-p probe_anchor pid_io:self/read_bytes" in r["command"]
    tmpfs = _cell(TD / "nb03/tmpfs_probe")
    assert tmpfs["verdict"] == "inconclusive" and "served from memory" in tmpfs["because"]


def test_readahead_from_a_snapshot_tree_names_the_anchor_it_used() -> None:
    r = _cell(TD / "nb03/ext4_loop_tree")
    assert r["verdict"] == "found" and r["evidence"]["ratio"] == pytest.approx(64.1, rel=0.01)
    assert r["evidence"]["anchor"] == "diskstats:loop0/read_bytes" and r["evidence"]["demand"] == "pid_io:16458/rchar"
    assert r["evidence"]["read_ops"] == 516
    # vda read too in that window (the machine's own disk): both devices say yes, the smaller ratio is kept
    assert r["evidence"]["ratio_by_device"]["vda"] > r["evidence"]["ratio_by_device"]["loop0"]
    assert "no anchor declared" in r["caveats"][0]
    for part in ("-p snapshots ", "-p anchor diskstats:loop0/read_bytes", "-p demand_counter pid_io:16458/rchar",
                 "-p demand_ops_counter pid_io:16458/syscr", "-p profiled_host vm"):
        assert part in r["command"]
