"""The stalls lab: loopback only, strace required, real futex timeouts, capture files and their loader."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from workbench.cli import build_parser
from workbench.errors import ParseError
from workbench.lab import stalls as lab
from workbench.syscalls import read_strace
from workbench.syscalls.waits import calls_exceeding, duration_peaks

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "data" / "01_quantized_latency" / "lab"
needs_strace = pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")


@pytest.mark.parametrize("host", ["10.0.0.1", "8.8.8.8", "example.com", "::2"])
def test_refuses_non_loopback(host: str) -> None:
    with pytest.raises(ValueError, match="loopback"):
        lab.check_loopback(host)


def test_accepts_loopback() -> None:
    assert lab.check_loopback("127.0.0.2") == "127.0.0.2"
    assert lab.check_loopback("::1") == "::1"
    assert lab.check_loopback("localhost") == "127.0.0.1"


def test_missing_strace_says_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(lab.shutil, "which", lambda _name: None)
    with pytest.raises(RuntimeError, match="apt-get install strace"):
        lab.require_strace()
    with pytest.raises(RuntimeError, match="apt-get install strace"):
        lab.run_capture(tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()  # refused before doing anything


def test_futex_wait_times_out() -> None:
    res, t0, t1 = lab.futex_wait(50)
    assert res == "ETIMEDOUT"
    assert 0.045 <= t1 - t0 < 2.0


@needs_strace
def test_futex_wait_is_a_real_futex_timeout_under_strace(tmp_path: Path) -> None:
    out = tmp_path / "trace.txt"
    code = f"import runpy; m = runpy.run_path({str(Path(lab.__file__))!r}); print(m['futex_wait'](250)[0])"
    proc = subprocess.run(["strace", "-f", "-ttt", "-T", "-y", "-o", str(out), sys.executable, "-I", "-S",
                           "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ETIMEDOUT"
    text = out.read_text()
    assert "FUTEX_WAIT_PRIVATE, 0, {tv_sec=0, tv_nsec=250000000}) = -1 ETIMEDOUT" in text
    f = read_strace(out)
    over = calls_exceeding(f, 0.2)
    assert over["syscall"].tolist() == ["futex"] and int(over["calls_over"].iloc[0]) == 1
    assert over["max_ms"].iloc[0] == pytest.approx(250, rel=0.05)


def test_lab_registered_in_cli() -> None:
    args = build_parser().parse_args(["lab", "stalls", "--out", "x", "--requests", "50", "--per-kind", "3"])
    assert args.requests == 50 and args.per_kind == 3 and callable(args.func)


def test_rejects_impossible_plans(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="per_kind"):
        lab.run_capture(tmp_path, requests=10, per_kind=5, progress=False)


def test_bundled_capture_loads_with_documented_schemas() -> None:
    cap = lab.read_capture(BUNDLED)
    for name in ("calls", "injections", "ping", "steps", "pauses", "interference"):
        assert len(cap[name]) > 0, name
        assert len(cap[name].attrs["rejects"]) == 0, name
    inj = cap["injections"]
    assert inj.groupby("wait_ms").size().to_dict() == {250: 10, 500: 10, 1000: 10}
    assert set(inj["result"]) == {"ETIMEDOUT"}
    assert (inj["end_s"] - inj["start_s"]).between(0.24, 1.1).all()
    assert set(cap["steps"]["condition"]) == {"pauses", "control"}
    assert sorted(cap["steps"]["step"].unique()) == list(range(1, 16))
    assert set(cap["interference"]["condition"]) == {"writer_off", "writer_on"}
    assert cap["meta"]["strace"] == "strace -f -ttt -T -y"
    size = sum(p.stat().st_size for p in BUNDLED.iterdir())
    assert size < 3 * 2**20


def test_capture_loader_keeps_bad_rows(tmp_path: Path) -> None:
    d = tmp_path / "cap"
    shutil.copytree(BUNDLED, d)
    with open(d / "pauses.csv", "a") as f:
        f.write("0,123,not-a-time,1.0\n")
    cap = lab.read_capture(d)
    rej = cap["pauses"].attrs["rejects"]
    assert len(rej) == 1 and "not-a-time" in rej["text"].iloc[0]
    with pytest.raises(ParseError, match="pauses.csv"):
        lab.read_capture(d, strict=True)
    (d / "steps.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ParseError, match="expected the header"):
        lab.read_capture(d)
    (d / "ping.csv").unlink()
    with pytest.raises(FileNotFoundError, match="ping.csv"):
        lab.read_capture(d)


@pytest.mark.slow
@needs_strace
def test_small_live_capture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    paths = lab.run_capture(tmp_path / "cap", requests=40, per_kind=6, fixed_requests=10, pipeline_requests=60,
                            generations=2, control_requests=30, blocks=2, block_s=0.6, progress=False)
    assert list(scratch.iterdir()) == []  # temp files and directories removed
    cap = lab.read_capture(tmp_path / "cap")
    assert len(cap["calls"]) == 50
    assert cap["injections"].groupby("wait_ms").size().to_dict() == {250: 6, 500: 6, 1000: 6}
    trace = read_strace(paths["strace_before"])
    assert len(trace.attrs["rejects"]) == 0
    futex = [p for p in duration_peaks(trace) if p.syscall == "futex"]
    assert [round(p.location_s * 1e3, -1) for p in futex] == [250, 500, 1000]
    assert [p.count for p in futex] == [6, 6, 6]
    assert len(cap["pauses"]) > 0
    assert set(cap["steps"]["generation"]) == {0, 1, 2}
