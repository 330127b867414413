"""HdrHistogram interval logs (.hlog) and percentile-distribution text (.hgrm)."""
from __future__ import annotations

import base64
import io
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram

from workbench.errors import ParseError
from workbench.latency import DISTRIBUTION_SCHEMA, read_latency
from workbench.schema import validate

DATA = __import__("pathlib").Path(__file__).parent / "data" / "latency"


def _data_lines(path):
    return [ln for ln in path.read_text().splitlines() if ln and not ln.startswith(("#", '"'))]


@pytest.mark.parametrize(
    ("name", "intervals", "total", "max_ns", "start"),
    [
        # totals and maxima asserted by HdrHistogram's own Java tests for these files
        ("jHiccup-2.0.7S.logV2.hlog", 62, 48761, 1796210687, 1441812279.474),
        ("jHiccup-2.0.6.logV1.hlog", 88, 65964, 1888485375, 1438867590.285),
    ],
)
def test_jhiccup_logs_match_the_reference_reader(name, intervals, total, max_ns, start):
    df = read_latency(DATA / name)
    validate(df, DISTRIBUTION_SCHEMA)
    assert df.attrs["kind"] == "distribution" and df.attrs["format"] == "hlog"
    assert df.attrs["intervals"] == intervals == len(_data_lines(DATA / name))
    assert df["count"].sum() == total
    assert df.attrs["latency_unit"] == "ns"
    # bucket upper edge of the max: within the 2-significant-digit bucket width
    assert df["latency_s"].max() == pytest.approx(max_ns * 1e-9, rel=0.01)
    assert df.attrs["start_time_s"] == pytest.approx(start)
    # relative timestamps are shifted by StartTime into epoch seconds
    assert df.attrs["timestamp_origin"] == "epoch"
    assert df["interval_start_s"].min() == pytest.approx(start + 0.13, abs=0.01)
    # per interval the cumulative percentile ends at 100
    last = df.groupby("interval_start_s")["percentile"].max()
    assert np.allclose(last, 100.0)


def test_tagged_log_keeps_every_tag():
    df = read_latency(DATA / "tagged-Log.logV2.hlog")
    assert df["count"].sum() == 32290  # Java test total
    untagged = df[df["tag"].isna()]
    tag_a = df[df["tag"] == "A"]
    assert untagged["count"].sum() == tag_a["count"].sum() == 32290 // 2


def test_non_monotonic_tagged_log_drops_nothing():
    # hdrh's own reader returns only Tag=A here; every line must come back
    df = read_latency(DATA / "tagged-non-monotonic.hlog")
    assert df.attrs["intervals"] == 6
    assert sorted(df["tag"].unique()) == ["A", "B", "C"]
    assert df.attrs["timestamp_origin"] == "relative"
    starts = df.groupby("tag")["interval_start_s"].min()
    assert starts["B"] == pytest.approx(0.127)


def test_v1_interval_before_start_time_is_kept():
    # hdrh (PyPI) rejects this V1 cookie and would skip an interval before StartTime
    df = read_latency(DATA / "raphael.hlog")
    assert df.attrs["intervals"] == 1
    assert df["count"].sum() == 140003
    assert df["interval_start_s"].iloc[0] == pytest.approx(1629447418.475)
    assert df["latency_s"].max() == pytest.approx(0.189792, rel=0.01)


def test_v1_decoding_matches_a_v2_reencoding():
    line = _data_lines(DATA / "jHiccup-2.0.6.logV1.hlog")[7]
    from workbench.latency._hdr import decode_histogram

    h1 = decode_histogram(line.split(",")[3])
    h2 = HdrHistogram.decode(h1.encode())
    assert h1.get_total_count() == h2.get_total_count() > 0
    assert h1.get_max_value() == h2.get_max_value()


def _mini_log(body: str) -> str:
    h = HdrHistogram(1, 3_600_000_000_000, 2)
    for v in (1_000_000, 2_000_000, 40_000_000):  # 1, 2, 40 ms in ns
        h.record_value(v)
    payload = h.encode().decode()
    return body.replace("PAYLOAD", payload)


def test_base_time_header_and_unit_override():
    text = _mini_log(
        "#[Histogram log format version 1.3]\n"
        "#[BaseTime: 1796000000.000 (seconds since epoch)]\n"
        '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"\n'
        "1.000,1.000,40.000,PAYLOAD\n"
    )
    df = read_latency(text)
    assert df["interval_start_s"].iloc[0] == pytest.approx(1796000001.0)
    assert df["latency_s"].max() == pytest.approx(0.040, rel=0.01)
    same = read_latency(text, unit="ns")
    assert same["latency_s"].tolist() == df["latency_s"].tolist()
    us = read_latency(text, unit="us")
    assert us["latency_s"].max() == pytest.approx(40.0, rel=0.01)


def test_unknown_payload_unit_asks_for_unit():
    text = _mini_log('"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"\n'
                     "0.000,1.000,7.000,PAYLOAD\n")
    with pytest.raises(ParseError, match="unit="):
        read_latency(text)
    assert read_latency(text, unit="ns")["count"].sum() == 3


def test_malformed_hlog_lines_are_counted():
    good = _data_lines(DATA / "jHiccup-2.0.7S.logV2.hlog")[:3]
    text = "\n".join([
        "#[Histogram log format version 1.2]",
        "#[StartTime: 1441812279.474 (seconds since epoch), Wed Sep 09 08:24:39 PDT 2015]",
        '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
        good[0],
        "0.5,1.0,HISTFAAAAEV42pNp",                        # 3 fields
        "x,1.0,2.0," + good[1].split(",")[3],               # bad number
        "1.0,1.0,2.0,HISTFAAAAEV42pNp!!!",                  # not base64
        "1.0,1.0,2.0," + base64.b64encode(b"\x00" * 16).decode(),  # unknown cookie
        good[1],
        good[2],
    ]) + "\n"
    df = read_latency(text)
    rej = df.attrs["rejects"].frame()
    assert df.attrs["intervals"] + len(rej) == 7
    assert rej["line"].tolist() == [5, 6, 7, 8]
    assert "expected [Tag=<tag>,]" in rej["reason"].iloc[0]
    assert "cookie" in rej["reason"].iloc[3]
    with pytest.raises(ParseError) as e:
        read_latency(text, strict=True)
    assert e.value.line == 5


def test_all_intervals_bad_is_an_error():
    raw = struct.pack(">ii", 0x1C849382, 0) + b""
    text = ('"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"\n'
            "0.1,1.0,1.0," + base64.b64encode(raw + zlib.compress(b"junk")).decode() + "\n")
    with pytest.raises(ParseError, match="no interval could be read"):
        read_latency(text, format="hlog")


# ---- percentile distribution text ---------------------------------------------------

@pytest.mark.parametrize("name", ["hdrh_py_interval_48.131.hgrm", "hdrh_py_interval_48.131.csv.hgrm"])
def test_hgrm_python_output_both_forms(name):
    df = read_latency(DATA / name)
    assert df.attrs["format"] == "hgrm"
    assert df["percentile"].iloc[0] == 0.0 and df["percentile"].iloc[-1] == 100.0
    assert df["cumulative_count"].iloc[-1] == df["count"].sum() == 1909
    assert df["latency_s"].max() == pytest.approx(1.80355)
    if "csv" not in name:
        assert df.attrs["footer"]["TotalCount"] == 1909


def test_hgrm_agrees_with_the_hlog_interval_it_came_from():
    hl = read_latency(DATA / "jHiccup-2.0.7S.logV2.hlog")
    one = hl[np.isclose(hl["interval_start_s"], 1441812279.474 + 48.131, rtol=0, atol=1e-3)]
    hg = read_latency(DATA / "hdrh_py_interval_48.131.hgrm")
    assert one["count"].sum() == hg["cumulative_count"].iloc[-1]
    assert one["latency_s"].max() == pytest.approx(hg["latency_s"].max(), rel=1e-3)


def test_hgrm_unit_and_malformed_rows():
    text = (
        "       Value     Percentile TotalCount 1/(1-Percentile)\n\n"
        "        1.00 0.000000000000          1           1.00\n"
        "        2.00 0.500000000000          5           2.00\n"
        "        1.50 0.400000000000          4           1.67\n"   # goes down: rejected
        "        abc  0.600000000000          6           2.50\n"   # not a number
        "        3.00 1.500000000000          9                \n"  # fraction > 1
        "        4.00 1.000000000000         10            inf\n"
        "#[Mean    =       2.00, StdDeviation   = 1.00]\n"
        "#[oops]\n"
    )
    df = read_latency(text)
    assert df["latency_s"].tolist() == [0.001, 0.002, 0.004]
    assert df["count"].tolist() == [1, 4, 5]
    rej = df.attrs["rejects"].frame()
    assert rej["line"].tolist() == [5, 6, 7, 10]
    assert len(df) + len(rej) == 7  # 6 data rows + 1 bad footer
    assert read_latency(text, unit="us")["latency_s"].iloc[-1] == pytest.approx(4e-6)
    with pytest.raises(ParseError, match="'Value Percentile TotalCount' header"):
        read_latency("1.0 0.5 3\n", format="hgrm")


def test_hgrm_from_a_stream_of_python_bytes_output():
    h = HdrHistogram(1, 60_000_000, 3)
    for v in range(1000, 101000, 1000):
        h.record_value(v)
    b = io.BytesIO()
    h.output_percentile_distribution(b, 1000.0)  # µs recorded → ms printed
    df = read_latency(io.StringIO(b.getvalue().decode()))
    assert df["cumulative_count"].iloc[-1] == 100
    assert df["latency_s"].max() == pytest.approx(0.1, rel=0.01)


def test_numpy_buckets_match_hdrh_recorded_iterator_on_every_test_log() -> None:
    """The distribution frame is built with numpy; it must equal what hdrh's own iterator walks."""
    import glob
    import re

    from workbench.latency._hdr import _decode, recorded

    root = Path(__file__).resolve().parent / "data"
    compared = 0
    for f in sorted(glob.glob(str(root / "**" / "*.hlog"), recursive=True)):
        for line in open(f, errors="replace"):
            parts = line.strip().split(",")
            if len(parts) < 4 or not (re.fullmatch(r"[\d.]+", parts[0]) or parts[0].startswith("Tag=")):
                continue
            h = _decode(parts[-1])
            if isinstance(h, str):
                continue
            walked = [(item.value_iterated_to, item.count_added_in_this_iter_step)
                      for item in h.get_recorded_iterator()]
            values, counts = recorded(h)
            assert walked == list(zip(values.tolist(), counts.tolist(), strict=True)), f
            compared += 1
    assert compared >= 200
