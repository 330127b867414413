"""Snapshot folders whose files are named ``<timestamp_ns>-<source>.txt``."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from workbench.counters import deltas, read_series
from workbench.counters.series import snapshot_file_path, snapshot_file_time

SNAP = Path(__file__).parent / "data" / "formats" / "snapshots_ns"


def _lo_rx_bytes(text: str) -> int:
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("lo:"))
    return int(line.split(":", 1)[1].split()[0])


def test_named_snapshots_are_read_with_their_times_and_sources():
    df = read_series(SNAP)
    assert len(df.attrs["rejects"]) == 0
    files = sorted(SNAP.glob("*-*.txt"))
    stamps = sorted({int(f.name.split("-")[0]) for f in files})
    assert len(stamps) == 3
    got = np.sort(df["timestamp"].unique())
    np.testing.assert_allclose(got, [s / 1e9 for s in stamps], rtol=0, atol=1e-6)
    assert set(df["source"]) == {"net_dev", "vmstat", "diskstats"}
    # every value of one counter equals the number in its file
    lo = df[(df["source"] == "net_dev") & (df["item"] == "lo") & (df["counter"] == "rx_bytes")]
    want = [_lo_rx_bytes((SNAP / f"{s}-proc_net_dev.txt").read_text()) for s in stamps]
    assert lo.sort_values("timestamp")["value"].tolist() == want
    # vmstat: one row per line of each file
    n_vm = sum(len((SNAP / f"{s}-proc_vmstat.txt").read_text().splitlines()) for s in stamps)
    assert (df["source"] == "vmstat").sum() == n_vm


def test_deltas_use_the_nanosecond_names():
    d = deltas(read_series(SNAP))
    stamps = sorted({int(f.name.split("-")[0]) for f in SNAP.glob("*-*.txt")})
    want = np.diff(stamps) / 1e9
    got = np.unique(np.round(d["interval_s"].to_numpy(), 6))
    np.testing.assert_allclose(got, np.sort(np.round(want, 6)), rtol=0, atol=1e-6)


def test_named_snapshots_under_a_host_folder(tmp_path):
    shutil.copytree(SNAP, tmp_path / "web01")
    df = read_series(tmp_path)
    assert set(df["host"]) == {"web01"}
    assert len(df) == len(read_series(SNAP))


@pytest.mark.parametrize(("digits", "seconds"), [
    ("1796016241", 1796016241.0), ("1796016241717", 1796016241.717),
    ("1796016241717136", 1796016241.717136), ("1796016241717136078", 1796016241.717136078)])
def test_file_time_units_by_magnitude(digits, seconds):
    assert snapshot_file_time(digits) == pytest.approx(seconds, abs=1e-6)


def test_source_names_map_to_paths():
    assert snapshot_file_path("proc_net_dev") == "/proc/net/dev"
    assert snapshot_file_path("proc_1234_io") == "/proc/1234/io"
    assert snapshot_file_path("sys_class_bdi_8:0_read_ahead_kb") == "/sys/class/bdi/8:0/read_ahead_kb"


def test_an_unknown_source_is_a_reject_naming_the_file(tmp_path):
    shutil.copytree(SNAP, tmp_path / "s")
    (tmp_path / "s" / "1796251019559373713-mystery.txt").write_text("hello 1\n")
    df = read_series(tmp_path / "s")
    rej = df.attrs["rejects"].frame()
    assert len(rej) == 1 and rej["source"].iloc[0].endswith("mystery.txt")
    assert "cannot tell which counter file" in rej["reason"].iloc[0]
