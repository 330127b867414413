"""Decision rules of the readahead investigation: every outcome on synthetic data, and the helpers they use."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from workbench.counters import analysis as A
from workbench.counters import read_series
from workbench.errors import UsageError


def _reads(groups: dict[str, tuple[float, float, int]], seed: int = 0, request: int = 512) -> pd.DataFrame:
    """Synthetic probe reads: per group (mean pulled bytes, sd, n)."""
    rng = np.random.default_rng(seed)
    rows = []
    for g, (mean, sd, n) in groups.items():
        pulled = np.maximum(rng.normal(mean, sd, n), 0)
        rows += [{"advice": g, "pulled_bytes": p, "request_bytes": request} for p in pulled]
    return pd.DataFrame(rows)


# --- is there amplification ----------------------------------------------------------------

def test_amplification_yes_no_inconclusive() -> None:
    yes = A.amplification_decision(64_000, 1_000, 10, anchor="diskstats:loop0/read_bytes", demand="rchar")
    assert yes.verdict == "yes" and yes.evidence["ratio"] == 64
    assert yes.evidence["fetched_per_read_bytes"] == 6_400 and yes.evidence["demanded_per_read_bytes"] == 100
    assert "64× the bytes asked" in yes.because and "diskstats:loop0/read_bytes" in yes.because
    no = A.amplification_decision(1_050, 1_000, anchor="a", demand="d")
    assert no.verdict == "no" and "no more than the reads needed" in no.because
    assert math.isnan(no.evidence["read_ops"])
    cached = A.amplification_decision(100, 1_000)  # reads served from cache: fetch below demand
    assert cached.verdict == "no"
    between = A.amplification_decision(1_500, 1_000)
    assert between.verdict == "inconclusive" and "below the 2×" in between.because
    nothing = A.amplification_decision(0, 1_000, anchor="pid_io:self/read_bytes")
    assert nothing.verdict == "inconclusive" and "saw no bytes fetched" in nothing.because
    no_demand = A.amplification_decision(1_000, 0, demand="rchar")
    assert no_demand.verdict == "inconclusive" and "rchar counted no bytes asked" in no_demand.because
    assert A.amplification_decision(1_000, math.nan).verdict == "inconclusive"
    with pytest.raises(UsageError):
        A.amplification_decision(1, 1, min_ratio=1.05, tolerance=0.1)


# --- which advice amplifies ----------------------------------------------------------------

def test_which_amplifies_yes_names_the_most_and_least() -> None:
    d = A.which_amplifies(_reads({"normal": (40_000, 8_000, 60), "random": (4_100, 300, 60),
                                  "sequential": (39_000, 8_000, 60)}))
    assert d.verdict == "yes"
    assert d.evidence["most"] == "normal" and d.evidence["least"] == "random"
    assert d.evidence["comparisons"] == 3
    assert "normal pulls more per byte asked than random" in d.because
    assert "adjusted for 3 comparison(s)" in d.because


def test_which_amplifies_no_when_all_groups_pull_alike() -> None:
    d = A.which_amplifies(_reads({"normal": (4096, 10, 200), "random": (4096, 10, 200)}))
    assert d.verdict == "no" and "the same within ±10%" in d.because


def test_which_amplifies_inconclusive_when_wide_or_single() -> None:
    wide = A.which_amplifies(_reads({"normal": (8000, 8000, 12), "random": (7000, 8000, 12)}, seed=3))
    assert wide.verdict == "inconclusive" and "too wide" in wide.because
    one = A.which_amplifies(_reads({"sequential": (8000, 100, 50)}))
    assert one.verdict == "inconclusive" and "fewer than two advice groups" in one.because
    few = A.which_amplifies(_reads({"normal": (8000, 100, 50), "random": (4000, 100, 3)}))
    assert few.verdict == "inconclusive" and "random (3 reads)" in few.because


def test_group_amplification_is_a_ratio_of_sums_with_an_interval() -> None:
    r = pd.DataFrame({"advice": ["a"] * 4, "pulled_bytes": [4096, 4096, 8192, 0], "request_bytes": [16, 512, 512, 16]})
    t = A.group_amplification(r).iloc[0]
    assert t["amplification"] == pytest.approx(16384 / 1056)
    assert t["amplification_low"] < t["amplification"] < t["amplification_high"]
    assert math.isnan(A.group_amplification(r.head(1)).iloc[0]["amplification_low"])


# --- reconciliation ------------------------------------------------------------------------

def test_reconciliation_yes_no_inconclusive() -> None:
    yes = A.reconciliation_decision(1000.0, {"pid_io": 1000.0, "residency": 1030.0}, 0.05, anchor="diskstats")
    assert yes.verdict == "yes" and yes.evidence["disagreeing"] == []
    assert "largest difference 3.0%" in yes.because and yes.reconciliation is not None
    no = A.reconciliation_decision(1000.0, {"vmstat pgpgin": 3900.0, "pid_io": 1000.0, "early": math.nan}, 0.05)
    assert no.verdict == "no" and no.evidence["disagreeing"] == ["vmstat pgpgin"]
    assert "vmstat pgpgin overcounts ×3.90" in no.because and "within it: pid_io" in no.because
    assert no.caveats == ("early measured nothing in this window",)
    alone = A.reconciliation_decision(1000.0, {}, anchor="diskstats:loop0/read_bytes")
    assert alone.verdict == "inconclusive" and "stands alone" in alone.because and alone.reconciliation is None
    blind = A.reconciliation_decision(0.0, {"x": 5.0})
    assert blind.verdict == "inconclusive" and "saw no bytes" in blind.because


# --- hosts ---------------------------------------------------------------------------------

def test_host_outliers_yes_no_inconclusive() -> None:
    v = pd.Series({"a": 10.0, "b": 11.0, "c": 9.5, "d": 10.4, "e": 80.0})
    yes = A.host_outliers(v, what="fetch rate")
    assert yes.verdict == "yes" and yes.evidence["outliers"] == ["e"] and "e stand(s) out" in yes.because
    no = A.host_outliers(v.drop("e"), what="fetch rate", fmt=lambda x: f"{x:.1f} B/s")
    assert no.verdict == "no" and no.evidence["outliers"] == [] and "median 10.2 B/s of 4 hosts" in no.because
    few = A.host_outliers(v.head(3))
    assert few.verdict == "inconclusive" and "at least 4" in few.because
    flat = A.host_outliers(pd.Series({"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 2.0}))
    assert flat.evidence["outliers"] == ["e"]


# --- naming counters, sizes ----------------------------------------------------------------

def test_parse_counter_and_write_counterpart() -> None:
    a = A.parse_counter("diskstats:loop0/read_bytes")
    assert (a.source, a.item, a.counter, a.label) == ("diskstats", "loop0", "read_bytes", "diskstats:loop0/read_bytes")
    assert A.parse_counter("vmstat:/pgpgin").item == ""
    assert [c.counter for c in A.parse_counters("net_dev:eth1/rx_bytes, vmstat:/pgpgin,")] == ["rx_bytes", "pgpgin"]
    with pytest.raises(UsageError, match="anchor='read_bytes'"):
        A.parse_counter("read_bytes", param="anchor")
    w = A.write_counterpart(a)
    assert w is not None and w.label == "diskstats:loop0/write_bytes"
    ceph = A.write_counterpart(A.parse_counter("cephfs_metrics:read/total_sz_bytes"))
    assert ceph is not None and ceph.label == "cephfs_metrics:write/total_sz_bytes"
    assert A.write_counterpart(A.parse_counter("net_dev:eth1/rx_bytes")).counter == "tx_bytes"  # type: ignore[union-attr]
    assert A.write_counterpart(A.parse_counter("x:y/z")) is None


def test_increase_bytes_scales_kib_and_refuses_counts() -> None:
    vm = "nr_free_pages 10\npgpgin {}\npgfault 5\n"
    s = read_series("".join(f"#== snapshot ts={t} host=h path=/proc/vmstat\n" + vm.format(v) for t, v in ((0, 100), (10, 300))))
    assert A.increase_bytes(s, A.parse_counter("vmstat:/pgpgin"), start=0, end=10) == 200 * 1024
    assert A.counter_hosts(s, A.parse_counter("vmstat:/pgpgin")) == ["h"]
    assert A.counter_hosts(s, A.parse_counter("vmstat:/nope")) == []
    with pytest.raises(UsageError, match="counts 'count', not bytes"):
        A.increase_bytes(s, A.parse_counter("vmstat:/pgfault"), start=0, end=10)
    with pytest.raises(UsageError, match="not in the series"):
        A.byte_scale(s, A.parse_counter("diskstats:sda/read_bytes"))


def test_describe_sizes_from_the_distribution() -> None:
    assert A.describe_sizes([512, 512, 512]) == "512 B"
    text = A.describe_sizes([485, 16, 512, 300, 100])
    assert text.startswith("16 B–512 B") and "median 300 B" in text
    assert A.describe_sizes([]) == "no read sizes"


def test_probe_phase_bytes_per_advice() -> None:
    io = "rchar: 1\nwchar: 0\nsyscr: 1\nsyscw: 0\nread_bytes: {}\nwrite_bytes: 0\ncancelled_write_bytes: 0\n"
    log = "".join(f"#== snapshot ts={t} host=h path=/proc/self/io\n" + io.format(v)
                  for t, v in ((1.0, 0), (2.0, 8192), (3.0, 8192), (4.0, 12288)))
    s = read_series(log)
    got = A.probe_phase_bytes(s, {"normal": {"start_ts": 0.5, "end_ts": 2.5}, "random": {"start_ts": 2.5, "end_ts": 4.5},
                                  "sequential": {"start_ts": 9, "end_ts": 10}}, A.parse_counter("pid_io:self/read_bytes"))
    assert got["normal"] == 8192 and got["random"] == 4096 and math.isnan(got["sequential"])
    with pytest.raises(UsageError, match="start_ts and end_ts"):
        A.probe_phase_bytes(s, {"x": {}}, A.parse_counter("pid_io:self/read_bytes"))


def test_which_amplifies_inconclusive_when_nothing_was_pulled() -> None:
    d = A.which_amplifies(_reads({"normal": (0, 0, 20), "random": (0, 0, 20)}))
    assert d.verdict == "inconclusive" and "no read in any advice group pulled a page" in d.because


def _disk(values: list[tuple[float, str, int, int]]) -> pd.DataFrame:
    """Snapshots of one /proc/diskstats line: (ts, host, read sectors, written sectors)."""
    line = "   7       0 loop0 10 0 {} 5 1 0 {} 2 0 7 7 0 0 0 0 0 0\n"
    return read_series("".join(f"#== snapshot ts={t} host={h} path=/proc/diskstats\n" + line.format(r, w)
                               for t, h, r, w in values))


def test_read_write_totals_with_a_write_counter_beside_the_anchor() -> None:
    s = _disk([(0, "a", 10, 0), (10, "a", 30, 4), (0, "b", 8, 2), (10, "b", 16, 2)])
    anc = A.parse_counter("diskstats:loop0/read_bytes")
    rw = A.read_write_totals(A.latest(s), anc, write=A.write_counterpart(anc)).set_index("host")
    assert rw.loc["a", "read_bytes"] == 30 * 512 and rw.loc["a", "write_bytes"] == 4 * 512
    assert rw.loc["all", "read_write_ratio"] == pytest.approx(46 / 6)
    none = A.read_write_totals(A.latest(_disk([(0, "a", 1, 0), (1, "a", 2, 0)])), anc, write=A.write_counterpart(anc))
    assert math.isnan(none.set_index("host").loc["all", "read_write_ratio"])


def test_common_window_and_instrument_bytes() -> None:
    s = _disk([(0, "a", 0, 0), (10, "a", 100, 0), (20, "a", 200, 0), (5, "b", 0, 0), (25, "b", 100, 0)])
    anc = A.parse_counter("diskstats:loop0/read_bytes")
    assert A.common_window(s, anc) == (5.0, 20.0)
    got, why = A.instrument_bytes(s, anc, start=5, end=20, host="a")
    assert got == pytest.approx(150 * 512) and why == ""
    missing, why = A.instrument_bytes(s, A.parse_counter("vmstat:/pgpgin"), start=5, end=20)
    assert math.isnan(missing) and "not in the series" in why
    absent, why = A.instrument_bytes(None, anc, start=5, end=20)
    assert math.isnan(absent) and "input is absent" in why
    apart = _disk([(0, "a", 0, 0), (1, "a", 1, 0), (5, "b", 0, 0), (6, "b", 1, 0)])
    with pytest.raises(UsageError, match="do not overlap"):
        A.common_window(apart, anc)
    with pytest.raises(UsageError, match="no host has two"):
        A.common_window(_disk([(0, "a", 0, 0)]), anc)


def test_parse_categories_keeps_order_and_names_bad_parts() -> None:
    assert list(A.parse_categories("shared map=/shared/; objects=/data/objects/;")) == ["shared map", "objects"]
    assert A.parse_categories("") == {}
    assert A.parse_categories("a b: /a=1/; c: x:y") == {"a b": "/a=1/", "c": "x:y"}  # papermill-safe form
    with pytest.raises(UsageError, match="'oops' is not 'name: regex'"):
        A.parse_categories("a=/a/;oops")
    with pytest.raises(UsageError, match="is not a regular expression"):
        A.parse_categories("a=(")
