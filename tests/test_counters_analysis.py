"""Analyses: anchor increase with resets, amplification, demand vs fetch, reconciliation, attribution."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from workbench.counters import analysis as A
from workbench.counters import read_series
from workbench.errors import SchemaError, UsageError

NET = open(__file__.replace("test_counters_analysis.py", "data/counters/proc/net_dev.txt")).read()


def _series(values: list[tuple[float, int]]) -> pd.DataFrame:
    return read_series("".join(f"#== snapshot ts={t} host=h path=/proc/net/dev\n" + NET.replace("302317600", str(v))
                               for t, v in values))


def test_increase_interpolates_and_corrects_resets() -> None:
    s = _series([(0, 1000), (10, 2000), (20, 500), (30, 1500)])
    full = A.increase(s, source="net_dev", item="eth0", counter="rx_bytes", start=0, end=30, host="h")
    assert full == 1000 + 500 + 1000
    half = A.increase(s, source="net_dev", item="eth0", counter="rx_bytes", start=5, end=10, host="h")
    assert half == pytest.approx(500)
    with pytest.raises(ValueError, match="not the window"):
        A.increase(s, source="net_dev", item="eth0", counter="rx_bytes", start=-5, end=10)


def test_reconcile_flags_the_instrument_that_disagrees() -> None:
    rec = A.reconcile(1000.0, {"net": 1019.0, "tsdb": 970.0, "early": 1000 / 30, "late": 1000.0}, 0.06)
    assert rec.disagreeing == ("early",)
    assert rec.max_rel_diff_agreeing == pytest.approx(0.03)
    v = rec.table.set_index("instrument")["verdict"]
    assert v["early"] == "undercounts ×30.0"
    assert A.reconcile(100.0, {"x": 150.0}).table["verdict"].iloc[0] == "overcounts ×1.50"
    with pytest.raises(ValueError):
        A.reconcile(0.0, {"x": 1.0})


def test_amplification_and_demand_vs_fetch() -> None:
    amp = A.amplification(fetched_bytes=13_000, requested_bytes=1_000, read_ops=10, requests=2)
    assert amp.amplification == 13 and amp.fetched_per_read_bytes == 1300 and amp.fetched_per_request_bytes == 6500
    dvf = A.demand_vs_fetch(pd.Series({"a": 1000.0, "b": 10.0}), pd.Series({"a": 100.0, "b": 2.0}),
                            pd.Series({"a": 40.0, "c": 5.0}), pd.Series({"a": 1.0, "c": 1.0}))
    row = dvf.set_index("key")
    assert row.loc["a", "cache_hit_pct"] == 99.0
    assert row.loc["b", "cache_hit_pct"] == 100.0 and row.loc["b", "fetched_bytes"] == 0
    assert math.isnan(row.loc["c", "cache_hit_pct"])  # fetched without demand seen: unknown


def test_node_rates_prediction_and_attribution_labelled_hypothesis() -> None:
    attrs = pd.DataFrame({"host": ["a", "b", "c"], "state": ["done", "done", "moving"]})
    pred = A.node_rates(pd.Series({"a": 600.0, "b": 1200.0, "c": 9000.0}), pd.Series({"a": 6.0, "b": 12.0, "c": 10.0}),
                        10.0, attrs, "state", "done")
    t = pred.table.set_index("host")
    assert pred.baseline_bytes_per_request == 100
    assert t.loc["c", "predicted_read_bytes_per_s"] == pytest.approx(100.0)
    assert t.loc["c", "predicted_drop_factor"] == pytest.approx(9.0)
    att = A.attribute(pd.Series({"/x/id/1": 30.0, "/x/id/2": 30.0, "/y/z": 40.0}), {"identity": "/id/"})
    assert att.set_index("category")["share_pct"].to_dict() == {"other": 40.0, "identity": 60.0}
    assert (att["status"] == A.HYPOTHESIS).all()
    cov = A.openat_coverage(pd.Series({"/a": 10.0, "/b": 30.0}), {"/a"})
    assert cov.set_index("files_group").loc["seen by openat", "share_pct"] == 25.0


def test_interface_and_read_write_ratios() -> None:
    snap = pd.DataFrame({
        "host": ["h"] * 4, "source": ["net_dev"] * 4, "item": ["eth1", "eth1", "eth0", "eth0"],
        "counter": ["rx_bytes", "tx_bytes", "rx_bytes", "tx_bytes"], "value": [190.0, 10.0, 20.0, 5.0]})
    ir = A.interface_ratios(snap, "eth1", "eth0").set_index("host")
    assert ir.loc["h", "private_rx_over_tx"] == 19 and ir.loc["h", "private_over_public_rx"] == 9.5
    with pytest.raises(ValueError, match="interface 'bond0'"):
        A.interface_ratios(snap, "bond0", "eth0")
    m = pd.DataFrame({"host": ["h", "h"], "source": ["cephfs_metrics"] * 2, "item": ["read", "write"],
                      "counter": ["total_sz_bytes"] * 2, "value": [906.0, 29.0]})
    rw = A.read_write_totals(m).set_index("host")
    assert rw.loc["all", "read_write_ratio"] == pytest.approx(906 / 29)


def test_analyses_say_first_what_they_need() -> None:
    with pytest.raises(SchemaError, match=r"latest needs column\(s\)"):
        A.latest(pd.DataFrame({"host": ["h"], "value": [1.0]}))
    with pytest.raises(SchemaError, match=r"map_values needs column\(s\) \['item'\]"):
        A.map_values(pd.DataFrame({"counter": ["@a"], "value": [1.0]}), "@a")
    with pytest.raises(SchemaError, match=r"interface_ratios needs column\(s\) \['delta'\]"):
        A.interface_ratios(pd.DataFrame(columns=["host", "item", "counter", "value"]), "eth1", "eth0", value="delta")
    with pytest.raises(SchemaError, match=r"node_rates needs column\(s\) \['state'\]"):
        A.node_rates(pd.Series({"a": 1.0}), pd.Series({"a": 1.0}), 1.0, pd.DataFrame({"host": ["a"]}), "state", "x")
    with pytest.raises(SchemaError, match=r"probe_breakdown needs column\(s\) \['file_kind', 'order'\]"):
        A.probe_breakdown(pd.DataFrame(columns=["advice", "pulled_bytes", "request_bytes"]))
    with pytest.raises(UsageError, match="increase needs a pandas DataFrame, got dict"):
        A.increase({}, source="x", item="y", counter="z", start=0, end=1)  # type: ignore[arg-type]


def test_errors_name_the_parameter_and_what_was_expected() -> None:
    s = _series([(0, 1000), (10, 2000)])
    with pytest.raises(UsageError, match=r"counter='rx_bits'.*expected a counter it holds"):
        A.increase(s, source="net_dev", item="eth0", counter="rx_bits", start=0, end=10)
    with pytest.raises(UsageError, match=r"start=-5, end=10: the samples of net_dev:eth0/rx_bytes \(host='h'"):
        A.increase(s, source="net_dev", item="eth0", counter="rx_bytes", start=-5, end=10)
    maps = pd.DataFrame({"item": ["k"], "counter": ["@a"], "value": [1.0]})
    with pytest.raises(UsageError, match=r"counter='@b' is not a map.*\['@a'\]"):
        A.map_values(maps, "@b")
    with pytest.raises(UsageError, match=r"read_ops=0, requested_bytes=10"):
        A.amplification(1.0, 10, 0, 1)
    with pytest.raises(UsageError, match=r"anchor_bytes=0.0"):
        A.reconcile(0.0, {"x": 1.0})
    attrs = pd.DataFrame({"host": ["a"], "state": ["done"]})
    with pytest.raises(UsageError, match=r"baseline_state='gone'.*\['done'\]"):
        A.node_rates(pd.Series({"a": 1.0}), pd.Series({"a": 1.0}), 10.0, attrs, "state", "gone")
    with pytest.raises(UsageError, match=r"window_s=0"):
        A.node_rates(pd.Series({"a": 1.0}), pd.Series({"a": 1.0}), 0, attrs, "state", "done")
    with pytest.raises(UsageError, match=r"rules\['bad'\]='\(' is not a regular expression"):
        A.attribute(pd.Series({"/a": 1.0}), {"bad": "("})
    reads = pd.DataFrame({"advice": ["normal"], "request_bytes": [512], "pulled_bytes": [4096]})
    files = pd.DataFrame({"advice": ["normal"], "baseline_pages": [0], "final_pages": [1]})
    with pytest.raises(UsageError, match=r"phases\['normal'\]=\{'start_ts': 0\}; expected a dict with start_ts and end_ts"):
        A.probe_ways(reads, files, s, {"normal": {"start_ts": 0}})
    with pytest.raises(UsageError, match=r"page_bytes=0"):
        A.probe_ways(reads, files, s, {}, page_bytes=0)


def test_series_from_loaders_keep_their_attrs_through_the_analyses() -> None:
    maps = read_series("#== snapshot ts=1 host=h path=x.bt.txt\n@a[k]: 5\n@b[k]: 7\nnoise\n")
    assert len(maps.attrs["rejects"]) == 1
    a, b = A.map_values(maps, "@a"), A.map_values(maps, "@b")
    dvf = A.demand_vs_fetch(a, a, b, b)  # Series carrying the same attrs concatenate without clearing them
    assert dvf["fetch_over_demand"].tolist() == [7 / 5]
    assert len(maps.attrs["rejects"]) == 1  # the caller's frame is left as it was
