"""What read_latency and the latency analyses raise, and what the messages name; the shared input plumbing."""
from __future__ import annotations

import bz2
import json
import lzma
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.errors import InputNotFoundError, ParseError, SchemaError, UsageError, WorkbenchError
from workbench.latency import read_latency
from workbench.latency.analysis import over_threshold, over_threshold_series, percentiles
from workbench.latency.series import change_points, rolling_percentiles
from workbench.schema import Rejects

DATA = Path(__file__).parent / "data" / "latency"


# ---- arguments ------------------------------------------------------------------------

def test_unknown_format_names_the_parameter():
    with pytest.raises(UsageError, match=r"format='nope': unknown latency format; expected one of \["):
        read_latency("latency_ms\n1\n", format="nope")


def test_unknown_unit_names_the_parameter():
    with pytest.raises(UsageError, match=r"unknown latency unit \(unit=\) 'furlong'; expected one of s, ms"):
        read_latency("latency\n1\n", unit="furlong")
    with pytest.raises(UsageError, match=r"timestamp unit \(timestamp_unit=\) 'fortnight'"):
        read_latency("time,latency_ms\n1,1\n", timestamp_unit="fortnight")


def test_options_of_other_formats_are_refused_by_name():
    wrk = (DATA / "wrk_latency.txt").read_text()
    with pytest.raises(UsageError, match="latency_column= applies to plain CSV only, not to format 'wrk'"):
        read_latency(wrk, latency_column="x")
    with pytest.raises(UsageError, match="metric= applies to format 'k6' only, not to format 'wrk'"):
        read_latency(wrk, metric="http_req_duration")
    with pytest.raises(UsageError, match="unit= is not accepted for format 'wrk'"):
        read_latency(wrk, unit="ms")


def test_unit_contradicting_the_column_names_file_line_and_parameter(tmp_path):
    f = tmp_path / "a.csv"
    f.write_text("# note\nlatency_ms\n1\n")
    with pytest.raises(UsageError) as e:
        read_latency(f, unit="s")
    assert f"unit='s' contradicts {f}:2: latency column 'latency_ms' says 'ms'" in str(e.value)


def test_missing_units_are_parse_errors_at_the_header_line():
    with pytest.raises(ParseError) as e:
        read_latency("\nlatency\n1\n")
    assert e.value.line == 2 and e.value.text == "latency" and "pass unit=" in e.value.reason
    with pytest.raises(ParseError) as e:
        read_latency("time,latency_ms\n1,1\n2,1\n")
    assert e.value.line == 1 and "timestamp_unit=" in e.value.reason


def test_missing_file_is_input_not_found():
    with pytest.raises(InputNotFoundError, match="no such latency file"):
        read_latency("no/such/file.csv")


def test_undetected_format_names_the_first_line():
    with pytest.raises(ParseError) as e:
        read_latency("\n\nhello world\nnothing here\n")
    assert e.value.line == 3 and e.value.text == "hello world"
    assert "cannot tell the latency format" in e.value.reason and "format=" in e.value.reason


def test_files_of_different_kinds_are_refused_naming_them(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.txt"
    a.write_text("latency_ms\n1\n")
    b.write_bytes((DATA / "wrk_latency.txt").read_bytes())
    with pytest.raises(UsageError, match="different kinds of frame") as e:
        read_latency([a, b])
    assert str(a) in str(e.value) and str(b) in str(e.value)


def test_dask_refuses_one_line_json_text():
    with pytest.raises(UsageError, match='engine="dask" reads files'):
        read_latency('{"details": []}', engine="dask")


def test_every_raise_is_a_workbench_error():
    for call in (lambda: read_latency("latency_ms\n1\n", format="nope"),
                 lambda: read_latency("hello\n"),
                 lambda: read_latency("missing.csv")):
        with pytest.raises(WorkbenchError):
            call()


# ---- the shared plumbing ---------------------------------------------------------------

def test_one_line_json_text_is_text_not_a_path():
    rep = json.loads((DATA / "ghz_sayhello_report2.json").read_text())
    one_line = json.dumps(rep)
    assert "\n" not in one_line
    df = read_latency(one_line)
    assert df.attrs["format"] == "ghz" and df.attrs["source"] == "<text>"


@pytest.mark.parametrize("compress", [bz2.compress, lzma.compress])
def test_bzip2_and_xz_files_read_like_the_plain_file(compress, tmp_path):
    plain = read_latency(DATA / "hey_index_8col.csv")
    f = tmp_path / "hey.csv.z"
    f.write_bytes(compress((DATA / "hey_index_8col.csv").read_bytes()))
    packed = read_latency(f)
    pd.testing.assert_frame_equal(packed, plain)
    assert packed.attrs["source"] == str(f)


def test_damaged_compressed_file_is_a_parse_error(tmp_path):
    f = tmp_path / "broken.csv.xz"
    f.write_bytes(lzma.compress(b"latency_ms\n1\n2\n")[:-8])
    with pytest.raises(ParseError, match=f"{f}: damaged xz data"):
        read_latency(f)


def test_rejects_are_a_value_and_add_up_over_files(tmp_path):
    for i in range(2):
        (tmp_path / f"r{i}.csv").write_text(f"latency_ms\n{i}\nbad{i}\n")
    df = read_latency(str(tmp_path / "r*.csv"))
    rej = df.attrs["rejects"]
    assert isinstance(rej, Rejects)
    assert [(Path(s).name, n, t) for s, n, t, _ in rej.rows()] == [("r0.csv", 3, "bad0"), ("r1.csv", 3, "bad1")]
    assert "rejects" not in df.attrs["per_file"][0]
    copy = df.copy()  # pandas copies and compares attrs holding a Rejects without complaint
    assert copy.attrs["rejects"] == rej and df.equals(copy)


def test_strict_raises_the_earliest_line_whatever_order_it_was_found_in():
    lines = (DATA / "k6_learn_results.json").read_text().splitlines()
    point = json.loads(lines[3])
    bad_time = json.loads(json.dumps(point))
    bad_time["data"]["time"] = "yesterday"  # found after all lines are read
    text = "\n".join([*lines[:3], json.dumps(bad_time), *lines[3:], "{not json"]) + "\n"
    df = read_latency(text)
    assert df.attrs["rejects"].frame()["line"].tolist() == [4, len(lines) + 2]
    with pytest.raises(ParseError) as e:
        read_latency(text, strict=True)
    assert e.value.line == 4 and "RFC 3339" in e.value.reason


def test_undecodable_histogram_payload_names_where_it_came_from():
    from workbench.latency._hdr import decode_histogram

    with pytest.raises(ParseError) as e:
        decode_histogram("HISTFAAAAEV42pNp!!!", "run.hlog", 12)
    assert e.value.source == "run.hlog" and e.value.line == 12 and "not base64" in e.value.reason


# ---- analyses ---------------------------------------------------------------------------

def _samples(n: int = 50) -> pd.DataFrame:
    f = pd.DataFrame({"timestamp_s": 1.7e9 + np.arange(n) * 0.1, "latency_s": np.full(n, 0.01)})
    f.attrs["kind"] = "samples"
    return f


def test_analyses_name_what_they_need():
    f = _samples()
    with pytest.raises(SchemaError, match=r"percentiles needs column\(s\) \['cond'\]"):
        percentiles(f, by="cond")
    with pytest.raises(SchemaError, match=r"over_threshold needs column\(s\) \['cond'\]"):
        over_threshold(f, 0.01, by="cond")
    with pytest.raises(UsageError, match="percentiles needs a pandas DataFrame, got list"):
        percentiles([0.1, 0.2])
    dist = pd.DataFrame({"latency_s": [0.1], "timestamp_s": [1.0]})
    dist.attrs["kind"] = "distribution"
    for call in (lambda: rolling_percentiles(dist, window_n=3), lambda: change_points(dist)):
        with pytest.raises(SchemaError, match="needs a 'samples' frame, got a 'distribution' frame"):
            call()
    with pytest.raises(SchemaError, match=r"rolling_percentiles needs column\(s\) \['timestamp_s'\]"):
        rolling_percentiles(pd.DataFrame({"latency_s": [0.1]}), window_n=3)


def test_analysis_parameters_are_named_in_errors():
    f = _samples()
    with pytest.raises(UsageError, match="over_threshold_series: bin_s=0"):
        over_threshold_series(f, 0.01, bin_s=0)
    with pytest.raises(UsageError, match="rolling_percentiles: window_s=-1"):
        rolling_percentiles(f, window_s=-1)
    with pytest.raises(UsageError, match="rolling_percentiles: window_n=0"):
        rolling_percentiles(f, window_n=0)
    with pytest.raises(UsageError, match=r"change_points: min_size=30 needs at least 60 samples .* has 50"):
        change_points(f, min_size=30)


# ---- damaged inputs never escape as pandas, numpy, json or hdrh errors -------------------

_LEGEND = '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"\n'


def _v1_payload(plen: int, digits: int, body: bytes) -> str:
    import base64
    import struct
    import zlib

    inner = struct.pack(">iiiiqqd", 0x1C849301 | (2 << 4), plen, 0, digits, 1, 1000, 1.0) + body
    z = zlib.compress(inner)
    return base64.b64encode(struct.pack(">ii", 0x1C849302 | (2 << 4), len(z)) + z).decode()


@pytest.mark.parametrize(("payload", "why"), [
    (_v1_payload(3, 2, b"abc"), "buffer size"),             # counts not a whole number of words
    (_v1_payload(2, 9, b"\x00\x01"), "significant_figures"),  # digits out of range
])
def test_damaged_v1_fields_are_rejects(payload, why):
    good = (DATA / "jHiccup-2.0.7S.logV2.hlog").read_text().splitlines()
    first = next(ln for ln in good if ln[:1].isdigit())
    df = read_latency(_LEGEND + first + "\n" + f"1.0,1.0,1.0,{payload}\n")
    ((_, line, _, reason),) = df.attrs["rejects"].rows()
    assert line == 3 and "V1 payload does not decode" in reason and why in reason


def test_unreadable_start_time_is_a_reject():
    good = (DATA / "jHiccup-2.0.7S.logV2.hlog").read_text().splitlines()
    first = next(ln for ln in good if ln[:1].isdigit())
    df = read_latency("#[StartTime: 1.2.3 (seconds since epoch)]\n" + _LEGEND + first + "\n")
    assert df.attrs["rejects"].rows() == [
        ("<text>", 1, "#[StartTime: 1.2.3 (seconds since epoch)]", "StartTime: expected seconds since the epoch")]
    assert df.attrs["start_time_s"] is None


def test_unreadable_footer_number_is_a_reject():
    text = ("       Value     Percentile TotalCount 1/(1-Percentile)\n\n"
            "       1.000 0.000000000000          1           1.00\n"
            "#[Mean    =  1.2.3, StdDeviation   =  0.5]\n")
    df = read_latency(text)
    assert df.attrs["rejects"].frame()["line"].tolist() == [4] and df.attrs["footer"] == {}


@pytest.mark.parametrize(("report", "key"), [
    ({"details": 5}, "details"),
    ({"latencyDistribution": {"p": 1}}, "latencyDistribution"),
    ({"histogram": "x", "rps": 1, "fastest": 1}, "histogram"),
])
def test_ghz_lists_that_are_not_lists_name_the_key(report, key):
    with pytest.raises(ParseError, match=f"{key}: expected a JSON list of entries"):
        read_latency(json.dumps(report), format="ghz")


def test_fortio_lists_that_are_not_lists_name_the_key():
    with pytest.raises(ParseError, match="DurationHistogram.Data: expected a JSON list of entries, got int"):
        read_latency(json.dumps({"DurationHistogram": {"Data": 5}}))
    ok = {"Start": 0, "End": 0.001, "Percent": 100, "Count": 1}
    with pytest.raises(ParseError, match="DurationHistogram.Percentiles: expected a JSON list"):
        read_latency(json.dumps({"DurationHistogram": {"Data": [ok], "Percentiles": 5}}))
