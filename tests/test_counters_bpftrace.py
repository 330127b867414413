"""bpftrace output: samples from bpftrace's own test outputs (bpftrace/bpftrace tests/runtime/outputs)
and captures made on this machine with bpftrace 0.17 (tests/data/counters/bpftrace/here_*)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.counters import read_bpftrace
from workbench.counters.bpftrace import bucket_bounds
from workbench.errors import ParseError, UsageError
from workbench.sim._formats import bpftrace_text

DATA = Path(__file__).parent / "data" / "counters" / "bpftrace"


def test_upstream_log2_hist_text() -> None:
    out = read_bpftrace(DATA / "upstream_hist.txt")
    h = out.hists
    assert list(h["count"]) == [1, 0, 0, 2, 1, 0, 1]
    assert h["lo"].iloc[0] == -math.inf and h["hi"].iloc[0] == 0
    assert (h["lo"].iloc[1], h["hi"].iloc[1]) == (0, 1)  # [0]
    assert (h["lo"].iloc[3], h["hi"].iloc[3]) == (2, 4)
    assert out.maps.empty and len(out.maps.attrs["rejects"]) == 0


def test_upstream_lhist_text_overflow_bucket() -> None:
    h = read_bpftrace(DATA / "upstream_lhist.txt").hists
    assert h["hi"].iloc[-1] == math.inf and h["lo"].iloc[-1] == 10
    assert h["count"].sum() == 5


def test_upstream_json_hist_pretty_printed_inclusive_bounds() -> None:
    h = read_bpftrace(DATA / "upstream_hist.json").hists
    assert (h["lo"].iloc[0], h["hi"].iloc[0]) == (2, 4)  # {"min": 2, "max": 3} → [2, 4)
    assert h["count"].sum() == 2 and set(h["map"]) == {"@hist"}


def test_upstream_json_lhist_without_max_is_overflow() -> None:
    h = read_bpftrace(DATA / "upstream_lhist.json").hists
    assert h["hi"].iloc[-1] == math.inf and h["lo"].iloc[-1] == 100


def test_upstream_json_multi_key_hist_and_maps_and_stats() -> None:
    h = read_bpftrace(DATA / "upstream_hist_multiple_multiple_keys.json").hists
    assert set(h["key"]) == {"bpftrace,2", "curl,3"}
    m = read_bpftrace(DATA / "upstream_multiple_maps.ndjson").maps
    assert dict(zip(m["counter"], m["value"], strict=True)) == {"@map1": 2, "@map2": 3}
    s = read_bpftrace(DATA / "upstream_stats.json").maps.set_index("counter")["value"]
    assert (s["@stats:count"], s["@stats:average"], s["@stats:total"]) == (2, 6, 12)
    t = read_bpftrace(DATA / "upstream_print_avg_map_args.txt").maps
    assert dict(zip(t["item"], t["value"], strict=True)) == {"c": 3, "d": 4}


def test_capture_from_this_machine_text_and_json_agree_in_shape() -> None:
    text = read_bpftrace(DATA / "here_readahead_text.txt", units={"@ra_bytes": "bytes"})
    assert text.attached_probes == 4
    m = text.maps.set_index(["counter", "item"])["value"]
    assert m[("@ra_bytes", "python3,ra_unbounded")] == 73728
    assert m[("@ra_bytes", "python3,ra_unbounded")] % 4096 == 0
    assert m[("@sync_window:count", "")] == 38
    assert text.maps.loc[text.maps["counter"] == "@ra_bytes", "unit"].iloc[0] == "bytes"
    js = read_bpftrace(DATA / "here_readahead.ndjson")
    assert js.attached_probes == 4
    assert set(js.maps["counter"]) == set(text.maps["counter"])
    assert set(js.hists["map"]) == {"@ra_size_bytes", "@sync_req_pages"}
    assert js.hists.loc[js.hists["map"] == "@ra_size_bytes", "lo"].iloc[0] == 4096


def test_broken_lines_counted_strict_raises_and_garbage_errors() -> None:
    text = "Attaching 1 probe...\n@a[x]: 5\nsome printf output\n[4, 8)   3 |@@@   |\n@b: twelve\n"
    out = read_bpftrace(text)
    assert len(out.maps) == 1
    assert out.maps.attrs["rejects"].frame()["line"].tolist() == [3, 4, 5]
    with pytest.raises(ParseError, match=r"<text>:3: not a bpftrace map"):
        read_bpftrace(text, strict=True)
    with pytest.raises(ParseError, match="no bpftrace map"):
        read_bpftrace("hello\nworld\n")
    bad_json = read_bpftrace('{"type": "map", "data": {"@m": {"k": 1}}}\n{"type": "printf", "data": "hi"}\n{oops\n')
    assert len(bad_json.maps) == 1 and len(bad_json.maps.attrs["rejects"]) == 2


@pytest.mark.parametrize("label,lo,hi", [("[4K, 8K)", 4096, 8192), ("[1M, 2M)", 2**20, 2**21), ("[0, 1]", 0, 2),
                                         ("(..., 0)", -math.inf, 0), ("[10, ...)", 10, math.inf), ("[1]", 1, 2)])
def test_bucket_labels(label: str, lo: float, hi: float) -> None:
    assert bucket_bounds(label) == (lo, hi)


@given(st.lists(st.integers(min_value=2, max_value=2**40), min_size=1, max_size=40))
def test_hist_writer_and_reader_round_trip(values: list[int]) -> None:
    out = read_bpftrace(bpftrace_text({}, {"@h": values}))
    h = out.hists
    assert h["count"].sum() == len(values)
    for v in values:  # every value falls in a bucket that counts at least one event
        b = h[(h["lo"] <= v) & (v < h["hi"])]
        assert len(b) == 1 and b["count"].iloc[0] >= 1


def test_wrong_values_in_json_are_rejects_not_crashes() -> None:
    text = ('{"type": "attached_probes", "data": {"probes": "two"}}\n'
            '{"type": "hist", "data": {"@h": [{"min": 0, "max": 1, "count": "many"}, {"min": 2, "max": 3, "count": 4}]}}\n'
            '{"type": "stats", "data": {"@s": {"count": 2, "average": "x", "total": 6}}}\n'
            '{"type": "stats", "data": {"@t": 5}}\n')
    out = read_bpftrace(text)
    rej = out.maps.attrs["rejects"].frame()
    assert rej["line"].tolist() == [1, 2, 3, 4]
    assert out.attached_probes is None and out.hists["count"].tolist() == [4]
    assert sorted(out.maps["counter"]) == ["@s:count", "@s:total"]
    with pytest.raises(ParseError, match="<text>:1: attached_probes count is not an integer"):
        read_bpftrace(text, strict=True)


def test_every_input_keeps_its_rejects_and_bad_arguments_are_named(tmp_path: Path) -> None:
    (tmp_path / "a.bt.txt").write_text("@a: 1\nnoise\n")
    (tmp_path / "b.bt.txt").write_text("@b: 2\nmore noise\nand more\n")
    out = read_bpftrace(tmp_path)  # a folder: every file in it
    assert sorted(out.maps["instance"]) == ["a.bt.txt", "b.bt.txt"]
    assert out.maps.attrs["rejects"].frame()["line"].tolist() == [2, 2, 3]
    assert len(out.hists.attrs["rejects"]) == 3
    with pytest.raises(UsageError, match=r"format='xml'; expected 'text', 'json' or None"):
        read_bpftrace(tmp_path, format="xml")
    with pytest.raises(UsageError, match=r"label '\[x, 8\)': bound 'x' is not an integer"):
        bucket_bounds("[x, 8)")
