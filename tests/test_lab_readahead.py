"""The readahead probe, live on this machine: small, bounded runs."""
from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.counters import analysis as A
from workbench.errors import InputNotFoundError, LabError, ParseError, SchemaError, UsageError
from workbench.lab.readahead import (
    CAPTURE_FILES,
    ProbeConfig,
    Residency,
    environment,
    read_readahead_probe,
    run_probe,
)


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
    rc = main(["lab", "readahead", "--out", str(tmp_path / "o2"), "--advice", "normal,willneed", "--quiet"])
    assert rc == 2 and "unknown advice ['willneed']" in capsys.readouterr().err
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


BUNDLED = Path(__file__).resolve().parent.parent / "data" / "03_readahead_amplification" / "lab"


def _copy_capture(dst: Path) -> Path:
    dst.mkdir()
    for name in CAPTURE_FILES:
        (dst / name).write_bytes((BUNDLED / name).read_bytes())
    return dst


def test_writer_header_is_the_reader_schema() -> None:
    import workbench.lab.readahead as R

    assert R.READS_COLUMNS == R.PROBE_READS_SCHEMA.names()
    assert {"PROBE_READS_SCHEMA", "READS_COLUMNS", "read_readahead_probe"} <= set(dir(R))
    assert R.FILES_COLUMNS == R.PROBE_FILES_SCHEMA.names()
    header = (BUNDLED / "reads.csv").read_text().splitlines()[0].split(",")
    assert header == R.READS_COLUMNS
    assert (BUNDLED / "files.csv").read_text().splitlines()[0].split(",") == R.FILES_COLUMNS


def test_bundled_capture_reads_without_rejects() -> None:
    cap = read_readahead_probe(BUNDLED)
    assert len(cap.reads.attrs["rejects"]) == 0 and len(cap.files.attrs["rejects"]) == 0
    assert len(cap.counters.attrs["rejects"]) == 0
    assert set(cap.reads["advice"]) == set(cap.meta["phases"])
    assert str(cap.reads["pulled_bytes"].dtype) == "int64"


def test_bad_rows_are_rejects_and_strict_names_file_and_line(tmp_path: Path) -> None:
    d = _copy_capture(tmp_path / "cap")
    lines = (d / "reads.csv").read_text().splitlines()
    n = len(lines) - 1
    lines[3] = lines[3].replace("normal", "willneed", 1)
    lines[5] = lines[5].replace(",512,", ",-512,", 1)
    (d / "reads.csv").write_text("\n".join(lines) + "\n")
    cap = read_readahead_probe(d)
    rej = cap.reads.attrs["rejects"].frame()
    assert len(cap.reads) == n - 2 and rej["line"].tolist() == [4, 6]
    assert "'advice'" in rej["reason"].iloc[0] and "'request_bytes'" in rej["reason"].iloc[1]
    with pytest.raises(ParseError, match=r"reads\.csv:4: column 'advice'"):
        read_readahead_probe(d, strict=True)


def test_missing_files_missing_columns_and_bad_meta(tmp_path: Path) -> None:
    with pytest.raises(InputNotFoundError, match="no such readahead probe folder"):
        read_readahead_probe(tmp_path / "nowhere")
    d = _copy_capture(tmp_path / "cap")
    with pytest.raises(UsageError, match="is a file"):
        read_readahead_probe(d / "meta.json")
    (d / "files.csv").unlink()
    with pytest.raises(InputNotFoundError, match=r"missing files\.csv"):
        read_readahead_probe(d)
    d = _copy_capture(tmp_path / "cap2")
    (d / "files.csv").write_text("advice,file,size_bytes\nnormal,a,1\n")
    with pytest.raises(SchemaError, match=r"files\.csv:1: the header lacks column\(s\) \['file_kind'"):
        read_readahead_probe(d)
    d = _copy_capture(tmp_path / "cap3")
    (d / "meta.json").write_text('{"phases": {\n  "normal": oops}\n')
    with pytest.raises(ParseError, match=r"meta\.json:2: not valid JSON"):
        read_readahead_probe(d)
    (d / "meta.json").write_text("[1, 2]\n")
    with pytest.raises(ParseError, match="expected a JSON object with 'phases'"):
        read_readahead_probe(d)


@pytest.mark.parametrize(("cfg", "named"), [
    (ProbeConfig(advices=()), "advices=()"),
    (ProbeConfig(request_bytes=0), "request_bytes=0"),
    (ProbeConfig(max_seconds=-1.0), "max_seconds=-1.0"),
    (ProbeConfig(random_reads_per_file=-1), "random_reads_per_file=-1"),
    (ProbeConfig(n_large=-2), "n_large=-2"),
    (ProbeConfig(large_bytes=2 << 30), "large_bytes=2147483648"),
    (ProbeConfig(request_bytes=512, request_max_bytes=16), "request_max_bytes=16"),
])
def test_config_errors_name_the_field(tmp_path: Path, cfg: ProbeConfig, named: str) -> None:
    with pytest.raises(UsageError, match=re.escape(named)):
        run_probe(tmp_path / "x", cfg=cfg)
    assert not (tmp_path / "x").exists()  # refused before writing anything


def test_directory_errors_name_the_parameter(tmp_path: Path) -> None:
    with pytest.raises(InputNotFoundError, match="directory=.*does not exist"):
        run_probe(tmp_path / "o", directory=tmp_path / "nowhere", progress=False)
    (tmp_path / "f").write_text("x")
    with pytest.raises(UsageError, match="directory=.*is a file"):
        run_probe(tmp_path / "o", directory=tmp_path / "f", progress=False)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "zero").write_bytes(b"")
    with pytest.raises(InputNotFoundError, match="no readable, non-empty regular file"):
        run_probe(tmp_path / "o", directory=tmp_path / "empty", progress=False)


def test_residency_of_something_unmappable_is_a_lab_error(tmp_path: Path) -> None:
    fd = os.open(tmp_path, os.O_RDONLY)  # a folder cannot be mapped
    try:
        with pytest.raises(LabError, match=r"folder-x: mmap\(PROT_READ\) of 4096 bytes failed"):
            Residency(fd, 4096, "folder-x")
    finally:
        os.close(fd)


def test_module_import_stays_light() -> None:
    import subprocess
    import sys

    code = ("import sys, workbench.lab.readahead as r; assert 'pandas' not in sys.modules, 'pandas imported'; "
            "r.PROBE_FILES_SCHEMA.names(); assert 'pandas' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_request_sizes_from_a_range_and_diskstats_snapshots(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from workbench.lab.readahead import parse_request_bytes

    assert parse_request_bytes("512") == (512, 0) and parse_request_bytes("16-512") == (16, 512)
    with pytest.raises(UsageError, match="--request-bytes 'big'"):
        parse_request_bytes("big")
    rc = main(["lab", "readahead", "--out", str(tmp_path / "o"), "--n-small", "6", "--n-large", "0", "--small-kib", "16",
               "--random-reads", "3", "--advice", "normal", "--request-bytes", "16-512", "--quiet"])
    assert rc == 0
    cap = read_readahead_probe(tmp_path / "o")
    sizes = cap.reads["request_bytes"]
    assert len(cap.reads) == 24 and sizes.between(16, 512).all() and sizes.nunique() > 5
    assert cap.meta["config"]["request_max_bytes"] == 512
    if Path("/proc/diskstats").is_file():
        assert "diskstats" in set(cap.counters["source"])
    capsys.readouterr()
    rc = main(["lab", "readahead", "--out", str(tmp_path / "o2"), "--request-bytes", "16-x", "--quiet"])
    assert rc == 2 and "expected a size in bytes (512) or a range MIN-MAX" in capsys.readouterr().err
