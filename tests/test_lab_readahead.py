"""The readahead probe, live on this machine: small, bounded runs."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.counters import analysis as A
from workbench.counters.probe import read_readahead_probe
from workbench.lab.readahead import ProbeConfig, Residency, environment, run_probe


def test_mincore_residency_sees_a_read(tmp_path: Path) -> None:
    p = tmp_path / "f.bin"
    p.write_bytes(os.urandom(64 * 4096))
    fd = os.open(p, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        r = Residency(fd, 64 * 4096)
        env = environment(tmp_path)
        if env["fstype"] in ("tmpfs", "ramfs"):
            pytest.skip("tmp is in memory: DONTNEED cannot drop pages")
        before = r.count()
        os.pread(fd, 100, 0)
        after = r.count()
        r.close()
    finally:
        os.close(fd)
    assert before == 0
    assert after >= 1


@pytest.mark.slow
def test_probe_normal_pulls_more_than_random_and_ways_reconcile(tmp_path: Path) -> None:
    env = environment(Path(tempfile.gettempdir()))
    if env["fstype"] in ("tmpfs", "ramfs") or not env["read_ahead_kb"]:
        pytest.skip(f"temp dir on {env['fstype']}: no readahead from storage to observe")
    cfg = ProbeConfig(n_small=16, small_bytes=128 * 1024, n_large=1, large_bytes=8 * 2**20,
                      advices=("normal", "random"), max_seconds=60)
    out = run_probe(tmp_path / "out", cfg=cfg, progress=False)
    assert not any(Path(tempfile.gettempdir()).glob("wb-readahead-*")), "temporary files left behind"
    cap = read_readahead_probe(out)
    assert len(cap.reads) == 2 * 17 * 3
    ways = A.probe_ways(cap.reads, cap.files, cap.counters, cap.meta["phases"]).set_index("advice")
    assert ways.loc["normal", "amplification"] > ways.loc["random", "amplification"]
    # RANDOM reads exactly the pages asked: a 512 B read touches one page, two when it straddles a boundary
    assert 1.0 <= ways.loc["random", "pages_per_read"] <= 1.5
    # per-read sums never exceed the whole-file residency (async pages land after the read)
    assert (ways["per_read_sum_bytes"] <= ways["residency_bytes"]).all()
    rel = (ways["per_read_sum_bytes"] / ways["residency_bytes"] - 1).abs()
    assert (rel < 0.25).all()
    # the probe's own storage reads match what became resident (nothing else reads these files)
    assert ways["pid_io_read_bytes"].to_numpy() == pytest.approx(ways["residency_bytes"].to_numpy(), rel=0.1)


def test_cli_runs_a_tiny_probe_and_refuses_bad_advice(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rc = main(["lab", "readahead", "--out", str(tmp_path / "o"), "--n-small", "2", "--n-large", "0",
               "--random-reads", "1", "--advice", "random", "--quiet"])
    assert rc == 0
    meta = json.loads((tmp_path / "o" / "meta.json").read_text())
    assert meta["phases"]["random"]["reads"] == 4 and meta["created_files"] is True
    assert "readahead probe" in capsys.readouterr().out
    with pytest.raises(ValueError, match="unknown advice"):
        run_probe(tmp_path / "x", cfg=ProbeConfig(advices=("willneed",)))
    with pytest.raises(ValueError, match="keep the probe small"):
        run_probe(tmp_path / "x", cfg=ProbeConfig(n_small=5000))


def test_probe_an_existing_directory_read_only(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for i in range(3):
        (src / f"c{i}.json").write_bytes(os.urandom(20000))
    before = {p.name: p.read_bytes() for p in src.iterdir()}
    out = run_probe(tmp_path / "o", directory=src, cfg=ProbeConfig(advices=("normal",), random_reads_per_file=1),
                    progress=False)
    assert {p.name: p.read_bytes() for p in src.iterdir()} == before
    cap = read_readahead_probe(out)
    assert set(cap.reads["file"]) == set(before) and cap.meta["created_files"] is False


def test_environment_detects_memory_filesystems() -> None:
    shm = Path("/dev/shm")
    if not shm.is_dir():
        pytest.skip("no /dev/shm")
    env = environment(shm)
    if env["fstype"] == "tmpfs":
        assert any("tmpfs" in n for n in env["notes"])
