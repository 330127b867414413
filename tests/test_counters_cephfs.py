"""CephFS debugfs metrics: every layout, from the kernel's own printf formats and patch-thread samples."""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.counters import read_cephfs_metrics
from workbench.errors import ParseError

DATA = Path(__file__).parent / "data" / "counters" / "cephfs"


def _v(df, item, counter):
    sel = df[(df["item"] == item) & (df["counter"] == counter)]
    assert len(sel) == 1, (item, counter, len(sel))
    return sel["value"].iloc[0]


def test_2020_proposal_layout_sum_lat() -> None:
    df = read_cephfs_metrics(DATA / "metrics_2020_v7_proposal.txt")
    assert df.attrs["layouts"][str(DATA / "metrics_2020_v7_proposal.txt")] == "2020-proposal"
    assert _v(df, "write", "sum_lat_us") == 131205000
    assert _v(df, "metadata", "lat_ops") == 104
    assert _v(df, "caps", "hit") == 368218
    assert len(df.attrs["rejects"]) == 0


def test_2020_merged_layout_decimal_stdev_and_jiffies() -> None:
    df = read_cephfs_metrics(DATA / "metrics_2020_merged.txt")
    assert _v(df, "read", "stdev_lat_us") == pytest.approx(560.3)
    lat = df[df["counter"].isin(["avg_lat_us", "min_lat_us", "max_lat_us"])]["value"]
    assert (lat % 1000 == 0).all()  # jiffy quantised at HZ=250/1000
    assert "jiffies" in next(iter(df.attrs["layouts"].values()))


def test_514_single_file_with_opened_files_block_and_size_table() -> None:
    df = read_cephfs_metrics(DATA / "metrics_5.14.txt")
    assert _v(df, "inodes", "opened_files") == 0
    assert _v(df, "inodes", "pinned_i_caps") == 5
    assert _v(df, "inodes", "total_inodes") == 4  # repeated three times, kept once
    assert _v(df, "write", "total_sz_bytes") == 20971520  # the misaligned total_sz header
    assert _v(df, "write", "size_ops") == 5
    assert df.loc[df["counter"] == "total_sz_bytes", "kind"].eq("counter").all()
    assert len(df.attrs["rejects"]) == 0


def test_516_directory_reads_all_four_files() -> None:
    df = read_cephfs_metrics(DATA / "metrics_5.16")
    assert set(df["item"]) >= {"read", "write", "metadata", "copyfrom", "d_lease", "caps", "inodes"}
    assert _v(df, "copyfrom", "size_ops") == 0
    assert _v(df, "write", "total_sz_bytes") == 20971520
    assert _v(df, "inodes", "total_inodes") == 4
    assert all("5.16" in v for v in df.attrs["layouts"].values())


def test_instance_from_client_directory_path(tmp_path: Path) -> None:
    d = tmp_path / "sys/kernel/debug/ceph/abc-123.client4150/metrics"
    d.mkdir(parents=True)
    (d / "size").write_text((DATA / "metrics_5.16" / "size").read_text())
    df = read_cephfs_metrics(d / "size", host="fe01", timestamp=10.0)
    assert set(df["instance"]) == {"abc-123.client4150"}
    assert set(df["host"]) == {"fe01"} and set(df["timestamp"]) == {10.0}


def test_bad_rows_are_counted_and_strict_raises() -> None:
    text = (DATA / "metrics_5.16" / "latency").read_text() + "read          1           2\nwrite  x y z a b\n"
    df = read_cephfs_metrics(text)
    rej = df.attrs["rejects"].frame()
    assert list(rej["line"]) == [7, 8]
    assert "expected 6 fields" in rej["reason"].iloc[0]
    with pytest.raises(ParseError, match=r"<text>:7: expected 6 fields"):
        read_cephfs_metrics(text, strict=True)


def test_not_a_metrics_file_is_a_clear_error() -> None:
    with pytest.raises(ParseError, match="no 'item ...' metrics block"):
        read_cephfs_metrics("Inter-|   Receive\n lo: 1 2 3\n")


def test_511_single_file_without_size_table() -> None:
    """≈5.11–5.13 printed the opened-files block and latencies but no size table yet."""
    text = (DATA / "metrics_5.14.txt").read_text()
    head, _, rest = text.partition("\nitem          total       avg_sz(bytes)")
    caps = rest[rest.index("\nitem          total           miss"):]
    df = read_cephfs_metrics(head + caps)
    assert "total_sz_bytes" not in set(df["counter"])
    assert _v(df, "write", "lat_ops") == 5 and _v(df, "caps", "miss") == 68
    assert len(df.attrs["rejects"]) == 0
