"""procfs and sysfs counters: this machine's files (copied and live) and hand-made edge cases."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.counters import (
    read_diskstats,
    read_net_dev,
    read_pid_io,
    read_read_ahead_kb,
    read_vmstat,
)
from workbench.errors import InputNotFoundError, ParseError
from workbench.sim._formats import net_dev as _write_net_dev

DATA = Path(__file__).parent / "data" / "counters"


def _v(df, item, counter):
    sel = df[(df["item"] == item) & (df["counter"] == counter)]
    assert len(sel) == 1
    return sel["value"].iloc[0]


def test_net_dev_from_this_machine() -> None:
    df = read_net_dev(DATA / "proc" / "net_dev.txt")
    assert {"lo", "eth0"} <= set(df["item"])
    assert _v(df, "lo", "rx_bytes") == _v(df, "lo", "tx_bytes")  # loopback sends what it receives
    assert _v(df, "eth0", "rx_bytes") == 302317600
    assert len(df[df["item"] == "eth0"]) == 16
    assert len(df.attrs["rejects"]) == 0


def test_net_dev_wide_counter_abutting_the_colon_and_dotted_names() -> None:
    text = ("Inter-|   Receive |  Transmit\n face |bytes packets|bytes\n"
            "eth0.100:123456789012 5 0 0 0 0 0 0 77 1 0 0 0 0 0 0\n"
            "  bad: 1 2 3\n")
    df = read_net_dev(text)
    assert _v(df, "eth0.100", "rx_bytes") == 123456789012
    assert df.attrs["rejects"].frame()["line"].tolist() == [4]
    with pytest.raises(ParseError, match="expected 16 integer counters"):
        read_net_dev(text, strict=True)


def test_net_dev_live_proc() -> None:
    df = read_net_dev("/proc/net/dev")
    assert "lo" in set(df["item"]) and len(df.attrs["rejects"]) == 0


def test_vmstat_units_and_kinds() -> None:
    df = read_vmstat(DATA / "proc" / "vmstat.txt")
    row = df.set_index("counter")
    assert row.loc["pgpgin", "unit"] == "KiB" and row.loc["pgpgin", "kind"] == "counter"
    assert row.loc["nr_file_pages", "unit"] == "pages" and row.loc["nr_file_pages", "kind"] == "gauge"
    assert row.loc["workingset_refault_file", "kind"] == "counter"
    assert len(df.attrs["rejects"]) == 0
    live = read_vmstat("/proc/vmstat")
    assert "pgpgin" in set(live["counter"])


def test_diskstats_20_fields_from_this_machine() -> None:
    df = read_diskstats(DATA / "proc" / "diskstats.txt")
    assert "vda" in set(df["item"])
    assert len(df[df["item"] == "vda"]) == 17
    assert len(df.attrs["rejects"]) == 0


@pytest.mark.parametrize("n_stats", [4, 11, 15, 17])
def test_diskstats_field_count_variants(n_stats: int) -> None:
    stats = " ".join(str(i + 1) for i in range(n_stats))
    df = read_diskstats(f"   8       0 sda {stats}\n")
    if n_stats == 4:  # old partition lines: reads, sectors read, writes, sectors written
        assert _v(df, "sda", "read_bytes") == 2 * 512 and _v(df, "sda", "write_bytes") == 4 * 512
    else:
        assert _v(df, "sda", "read_bytes") == 3 * 512  # sectors are 512 B
        assert _v(df, "sda", "in_flight") == 9
        assert len(df) == n_stats


def test_diskstats_wrong_field_count_rejected() -> None:
    df = read_diskstats("   8 0 sda 1 2 3 4 5\n   8 1 sda1 1 2 3 4\n")
    assert len(df.attrs["rejects"]) == 1 and "expected 7, 14, 18 or 20" in df.attrs["rejects"].frame()["reason"].iloc[0]


def test_pid_io_copied_and_live() -> None:
    df = read_pid_io(DATA / "proc" / "pid_io.txt")
    assert _v(df, "", "rchar") == 6976 and _v(df, "", "syscr") == 10
    live = read_pid_io("/proc/self/io")
    assert live["item"].iloc[0] == str(__import__("os").getpid())  # /proc/self resolves to our pid
    assert set(live["counter"]) == {"rchar", "wchar", "syscr", "syscw", "read_bytes", "write_bytes",
                                    "cancelled_write_bytes"}


def test_pid_io_garbage_is_an_error() -> None:
    with pytest.raises(ParseError, match="no /proc/<pid>/io lines"):
        read_pid_io("hello world\nfoo\n")


def test_read_ahead_kb_listing_file_and_live_dir() -> None:
    df = read_read_ahead_kb(DATA / "sys" / "bdi_read_ahead_kb.txt")
    assert _v(df, "254:0", "read_ahead_kb") == 8192
    assert _v(df, "253:0", "read_ahead_kb") == 128
    live = read_read_ahead_kb("/sys/class/bdi/*/read_ahead_kb")
    assert len(read_read_ahead_kb("/sys/class/bdi")) == len(live)  # the directory of symlinks
    assert len(live) >= 1 and (live["value"] >= 0).all()
    one = read_read_ahead_kb(sorted(Path("/sys/class/bdi").glob("*/read_ahead_kb"))[0])
    assert len(one) == 1


def test_read_ahead_kb_bad_line() -> None:
    df = read_read_ahead_kb("/sys/class/bdi/ceph-1/read_ahead_kb 8192\nceph-2 lots\n")
    assert _v(df, "ceph-1", "read_ahead_kb") == 8192
    assert len(df.attrs["rejects"]) == 1


@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9.]{0,8}", fullmatch=True),
                       st.lists(st.integers(min_value=0, max_value=2**63), min_size=16, max_size=16),
                       min_size=1, max_size=5))
def test_net_dev_round_trip_through_the_kernel_layout(ifaces: dict[str, list[int]]) -> None:
    df = read_net_dev(_write_net_dev(ifaces))
    assert len(df.attrs["rejects"]) == 0
    for name, values in ifaces.items():
        got = df[df["item"] == name].set_index("counter")["value"]
        assert got["rx_bytes"] == float(values[0]) and got["tx_bytes"] == float(values[8])


def test_all_bad_lines_strict_names_the_first_one_else_the_file_is_refused() -> None:
    text = "\nnot vmstat at all\nstill not\n"
    with pytest.raises(ParseError, match=r"<text>:2: expected '<name> <integer>'"):
        read_vmstat(text, strict=True)
    with pytest.raises(ParseError, match=r"<text>:2: no /proc/vmstat lines found; is this a /proc/vmstat file\?"):
        read_vmstat(text)


def test_a_folder_reads_every_file_in_it(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("pgpgin 1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_text("pgpgin 2\nbroken\n")
    df = read_vmstat(tmp_path)
    assert df["value"].tolist() == [1.0, 2.0]
    assert df.attrs["rejects"].frame()[["line", "text"]].values.tolist() == [[2, "broken"]]
    with pytest.raises(InputNotFoundError, match="no read_ahead_kb file in this folder"):
        read_read_ahead_kb(tmp_path)
