"""Snapshot series: both on-disk conventions, resets and wraps reported, the collector script."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from workbench.counters import deltas, read_series, window_totals
from workbench.errors import InputNotFoundError, ParseError

ROOT = Path(__file__).resolve().parent.parent
NET = (Path(__file__).parent / "data" / "counters" / "proc" / "net_dev.txt").read_text()
SIZE = (Path(__file__).parent / "data" / "counters" / "cephfs" / "metrics_5.16" / "size").read_text()


def _net(rx: int) -> str:
    return NET.replace("302317600", str(rx))


def _marker(ts: float, path: str, host: str = "h1") -> str:
    return f"#== snapshot ts={ts} host={host} path={path}\n"


def test_log_convention_reset_reported_not_smoothed() -> None:
    log = "".join(_marker(t, "/proc/net/dev") + _net(v) for t, v in [(100, 1000), (160, 4000), (220, 500)])
    s = read_series(log)
    assert sorted(s["timestamp"].unique()) == [100, 160, 220]
    d = deltas(s)
    eth = d[(d["item"] == "eth0") & (d["counter"] == "rx_bytes")]
    assert eth["delta"].tolist() == [3000, 500]  # after the reset the new value counts from zero
    assert eth["event"].tolist() == ["", "reset"]
    assert eth["rate_per_s"].iloc[0] == pytest.approx(50.0)
    ev = d.attrs["events"].frame()
    assert set(ev["item"]) == {"eth0"} and set(ev["event"]) == {"reset"}
    w = window_totals(d)
    row = w[(w["item"] == "eth0") & (w["counter"] == "rx_bytes")].iloc[0]
    assert row["delta"] == 3500 and row["events"] == 1


def test_wrap_when_declared() -> None:
    log = _marker(0, "/proc/net/dev") + _net(2**32 - 100) + _marker(10, "/proc/net/dev") + _net(50)
    d = deltas(read_series(log), wrap_bits={"net_dev": 32})
    eth = d[(d["item"] == "eth0") & (d["counter"] == "rx_bytes")].iloc[0]
    assert eth["event"] == "wrap" and eth["delta"] == 150


def test_gauges_have_no_deltas_and_cephfs_instance_from_path() -> None:
    cdir = "/sys/kernel/debug/ceph/f00.client7/metrics/size"
    log = _marker(0, cdir) + SIZE + _marker(5, cdir) + SIZE.replace("20971520", "20975616")
    s = read_series(log)
    assert set(s["instance"]) == {"f00.client7"}
    d = deltas(s)
    assert "avg_sz_bytes" not in set(d["counter"])
    wr = d[(d["item"] == "write") & (d["counter"] == "total_sz_bytes")]
    assert wr["delta"].tolist() == [4096]


def test_directory_convention(tmp_path: Path) -> None:
    for ts, v in [("100.0", 10), ("200.0", 30)]:
        p = tmp_path / "fe01" / ts / "proc" / "net"
        p.mkdir(parents=True)
        (p / "dev").write_text(_net(v))
        q = tmp_path / "fe01" / ts / "proc" / "vmstat"
        q.write_text("pgpgin 5\nnr_file_pages 3\n")
    s = read_series(tmp_path)
    assert set(s["host"]) == {"fe01"} and set(s["source"]) == {"net_dev", "vmstat"}
    d = deltas(s)
    assert d[(d["item"] == "eth0") & (d["counter"] == "rx_bytes")]["delta"].tolist() == [20]


def test_unknown_files_and_bad_markers_are_rejects_or_errors() -> None:
    log = "stray line\n" + _marker(0, "/etc/motd") + "hello\n" + "#== snapshot host=x path=/proc/vmstat\npgpgin 1\n"
    s = read_series(log)
    reasons = " | ".join(s.attrs["rejects"].frame()["reason"])
    assert "before the first" in reasons and "cannot tell" in reasons and "ts=" in reasons
    with pytest.raises(ParseError):
        read_series(log, strict=True)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_collector_script_writes_the_convention(tmp_path: Path) -> None:
    out = tmp_path / "c.snapshots"
    subprocess.run(["bash", str(ROOT / "scripts" / "collect_counters.sh"), "-o", str(out), "-i", "0.1", "-n", "2",
                    "-H", "box1"], check=True, capture_output=True, timeout=60)
    s = read_series(out)
    assert set(s["host"]) == {"box1"} and len(s["timestamp"].unique()) >= 2
    assert {"net_dev", "vmstat", "diskstats"} <= set(s["source"])
    assert len(s.attrs["rejects"]) == 0
    d = deltas(s)
    assert (d.loc[d["counter"] == "pgpgin", "delta"] >= 0).all()
    bad = subprocess.run(["bash", str(ROOT / "scripts" / "collect_counters.sh"), "-n", "0"], capture_output=True)
    assert bad.returncode == 2 and b"-n must be" in bad.stderr


def test_rejects_point_at_the_line_of_the_log() -> None:
    log = "#== snapshot ts=1 host=a path=/proc/vmstat\npgpgin 3\nbad line here\n" \
          "#== snapshot ts=2 host=a path=/proc/vmstat\npgpgin 4\n"
    rej = read_series(log).attrs["rejects"].frame()
    assert rej[["line", "text"]].values.tolist() == [[3, "bad line here"]]
    with pytest.raises(ParseError, match=r"<text>:3: expected '<name> <integer>'"):
        read_series(log, strict=True)


def test_events_are_a_side_table_and_analyses_say_what_they_need() -> None:
    import pandas as pd

    from workbench.errors import SchemaError, UsageError

    log = "".join(_marker(t, "/proc/net/dev") + _net(v) for t, v in [(100, 1000), (160, 400)])
    d = deltas(read_series(log))
    assert len(d.attrs["events"]) == len(d.attrs["events"].frame()) == 1
    assert d.copy().attrs["events"] == d.attrs["events"]  # pandas copies and compares attrs without complaint
    with pytest.raises(SchemaError, match=r"deltas needs column\(s\) \['timestamp'"):
        deltas(pd.DataFrame({"x": [1.0]}))
    with pytest.raises(SchemaError, match=r"window_totals needs column\(s\) \['start_timestamp'"):
        window_totals(read_series(log))
    with pytest.raises(UsageError, match=r"wrap_bits=\{'net_dev': 0\}; expected a counter width in bits"):
        deltas(read_series(log), wrap_bits={"net_dev": 0})


def test_strict_raises_the_earliest_bad_line_of_each_file() -> None:
    log = ("stray\n" + _marker(1, "/proc/vmstat") + "pgpgin 3\nbad line\n"
           + "#== snapshot host=a path=/proc/vmstat\npgpgin 4\n")
    rej = read_series(log).attrs["rejects"].frame()
    assert rej["line"].tolist() == [1, 4, 5]
    assert rej["text"].iloc[2] == "#== snapshot host=a path=/proc/vmstat"  # the marker that lacks ts=
    with pytest.raises(ParseError, match=r"<text>:1: text before the first"):
        read_series(log, strict=True)


def test_sources_glob_stream_compressed_and_list_of_texts(tmp_path: Path) -> None:
    import gzip
    import io

    a = _marker(100, "/proc/net/dev") + _net(10)
    b = _marker(200, "/proc/net/dev") + _net(30) + "bad\n"
    (tmp_path / "a.snapshots").write_text(a)
    (tmp_path / "b.snapshots.gz").write_bytes(gzip.compress(b.encode()))
    s = read_series(str(tmp_path / "*.snapshots*"))
    assert sorted(s["timestamp"].unique()) == [100, 200]
    assert read_series(io.StringIO(a)).equals(read_series(a))
    both = read_series([a, b])
    assert len(both) == len(s) and len(both.attrs["rejects"]) == 1 == len(s.attrs["rejects"])
    with pytest.raises(InputNotFoundError):
        read_series(str(tmp_path / "none*.snapshots"))


def test_directory_tree_bad_path_is_a_reject_or_strict_error(tmp_path: Path) -> None:
    (tmp_path / "fe01" / "100.0" / "proc").mkdir(parents=True)
    (tmp_path / "fe01" / "100.0" / "proc" / "vmstat").write_text("pgpgin 5\n")
    (tmp_path / "fe01" / "notes.txt").write_text("hello\n")
    s = read_series(tmp_path)
    rej = s.attrs["rejects"].frame()
    assert len(s) == 1 and rej["reason"].tolist() == ["path is not <host>/<ts>/<path> nor <ts>/<path>"]
    with pytest.raises(ParseError, match=r"notes\.txt: path is not"):
        read_series(tmp_path, strict=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputNotFoundError, match="holds no snapshot file"):
        read_series(empty)


def test_glob_of_bundled_logs_equals_their_list_and_a_cut_log_rejects_its_last_line(tmp_path: Path) -> None:
    import pandas as pd

    from workbench.paths import resolve

    snaps = resolve("data/03_readahead_amplification/sim/snapshots")
    files = sorted(snaps.glob("fe0[12].snapshots"))
    by_glob = read_series(str(snaps / "fe0[12].snapshots"))
    pd.testing.assert_frame_equal(by_glob, read_series([str(f) for f in files]))
    assert set(by_glob["host"]) == {"fe01", "fe02"}
    data = files[0].read_bytes().rstrip(b"\n")
    cut = data[: data.rfind(b"\n") + 1] + data[data.rfind(b"\n") + 1:][:3]  # the last line cut after 3 bytes
    (tmp_path / "cut.snapshots").write_bytes(cut)
    rows = read_series(str(tmp_path / "cut*.snapshots")).attrs["rejects"].rows()
    assert rows[-1][1:] == (cut.count(b"\n") + 1, cut.rsplit(b"\n", 1)[1].decode(), "incomplete last line")
