"""ghz, fortio, k6, Locust, JMeter and hey outputs."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.errors import ParseError
from workbench.latency import DISTRIBUTION_SCHEMA, SAMPLES_SCHEMA, read_latency
from workbench.schema import validate

DATA = Path(__file__).parent / "data" / "latency"


# ---- ghz ------------------------------------------------------------------------------

def test_ghz_details_are_samples():
    df = read_latency(DATA / "ghz_sayhello_report2.json")
    validate(df, SAMPLES_SCHEMA)
    rep = json.loads((DATA / "ghz_sayhello_report2.json").read_text())
    assert df.attrs["format"] == "ghz" and len(df) == len(rep["details"]) == 181
    # integer ns → s; fastest/slowest of the report are the extremes of the details
    assert df["latency_s"].min() == pytest.approx(rep["fastest"] * 1e-9)
    assert df["latency_s"].max() == pytest.approx(rep["slowest"] * 1e-9)
    # ok = no error and status OK; failures match the report's error distribution
    assert (~df["ok"]).sum() == sum(rep["errorDistribution"].values()) == 19
    assert set(df.loc[~df["ok"], "status"]) == {"Internal", "Unavailable", "PermissionDenied"}
    # RFC 3339 with a -04:00 offset → epoch seconds
    assert df["timestamp_s"].iloc[0] == pytest.approx(
        pd.Timestamp(rep["details"][0]["timestamp"]).timestamp(), abs=1e-6)
    assert df.attrs["reported_percentiles_s"][99.0] == pytest.approx(rep["latencyDistribution"][-1]["latency"] * 1e-9)


def test_ghz_errors_are_not_ok():
    df = read_latency(DATA / "ghz_routeguide_unavailable.json")
    assert len(df) == 8 and not df["ok"].any()
    assert (df["status"] == "Unavailable").all() and df["error"].str.contains("connection refused").all()


def test_ghz_without_details_gives_the_histogram():
    rep = json.loads((DATA / "ghz_routeguide_unavailable.json").read_text())
    rep.pop("details")
    df = read_latency(json.dumps(rep, indent=1))
    validate(df, DISTRIBUTION_SCHEMA)
    assert df.attrs["kind"] == "distribution" and df.attrs["rows_from"] == "histogram"
    assert df["count"].sum() == sum(b["count"] for b in rep["histogram"]) == 200
    assert df["percentile"].iloc[-1] == 100.0
    rep.pop("histogram")
    df2 = read_latency(json.dumps(rep, indent=1))
    assert df2["percentile"].tolist() == [10, 25, 50, 75, 90, 95, 99]
    assert "count" not in df2.columns


def test_ghz_broken_entries_and_json():
    rep = json.loads((DATA / "ghz_sayhello_report2.json").read_text())
    rep["details"][3]["latency"] = "fast"
    rep["details"][5]["timestamp"] = "yesterday"
    df = read_latency(json.dumps(rep, indent=1))
    assert len(df) + len(df.attrs["rejects"]) == 181
    assert df.attrs["rejects"].frame()["reason"].tolist() == [
        "details[3]: expected a non-negative latency in ns", "details[5]: timestamp is not RFC 3339"]
    with pytest.raises(ParseError, match="not valid JSON"):
        read_latency('{"details": [\n{"latency": 1,}\n]}\n', format="ghz")


# ---- fortio -------------------------------------------------------------------------

def test_fortio_histogram():
    df = read_latency(DATA / "fortio_httpbin_v1.57.3.json")
    validate(df, DISTRIBUTION_SCHEMA)
    assert df.attrs["format"] == "fortio" and len(df) == 17
    assert df["count"].sum() == 100 and df["cumulative_count"].iloc[-1] == 100
    assert df["latency_s"].iloc[-1] == pytest.approx(0.040490042)
    assert df["bucket_start_s"].iloc[0] == pytest.approx(0.004223875)
    # fortio's Percent is the cumulative share of the counts
    assert np.allclose(df["percentile"], 100 * df["cumulative_count"] / 100, atol=1)
    assert df.attrs["reported_percentiles_s"][50.0] == pytest.approx(0.014571428571428572)
    s = df.attrs["summary"]
    assert s["RequestedQPS"] == "8" and s["actual_duration_s"] == pytest.approx(12.538231589)
    assert s["start_time_s"] == pytest.approx(pd.Timestamp("2023-07-21T14:00:40.134434969Z").timestamp())


def test_fortio_old_grpc_result():
    df = read_latency(DATA / "fortio_grpc_ping_v0.9.0.json")
    assert len(df) == 1 and df["count"].item() == 40 and df["percentile"].item() == 100
    assert df.attrs["summary"]["RunType"].startswith("GRPC")


def test_fortio_broken_bucket_and_missing_histogram():
    rep = json.loads((DATA / "fortio_httpbin_v1.57.3.json").read_text())
    rep["DurationHistogram"]["Data"][2]["Count"] = -1
    df = read_latency(json.dumps(rep))
    assert len(df) == 16 and len(df.attrs["rejects"]) == 1
    with pytest.raises(ParseError):
        read_latency(json.dumps(rep), strict=True)
    del rep["DurationHistogram"]
    with pytest.raises(ParseError, match="DurationHistogram"):
        read_latency(json.dumps(rep), format="fortio")


# ---- k6 -----------------------------------------------------------------------------

def test_k6_documented_output():
    df = read_latency(DATA / "k6_docs_json_output.json")
    assert df.attrs["format"] == "k6" and len(df) == 1
    assert df["latency_s"].item() == pytest.approx(0.459865729)
    end = pd.Timestamp("2017-05-09T14:34:45.239531499+02:00").timestamp()
    assert df["end_timestamp_s"].item() == pytest.approx(end, abs=1e-6)
    assert df["timestamp_s"].item() == pytest.approx(end - 0.459865729, abs=1e-6)
    assert df["status"].item() == "200" and df["method"].item() == "GET"
    assert "ok" not in df.columns  # this k6 version wrote no expected_response tag
    assert df.attrs["skipped"] == {"Metric declarations": 2, "Point vus": 1}


def test_k6_newer_output_with_expected_response(tmp_path):
    df = read_latency(DATA / "k6_learn_results.json")
    assert df["ok"].tolist() == [True] and df["latency_s"].item() == pytest.approx(0.11896)
    # gzip output (--out json=file.gz) reads the same
    gz = tmp_path / "out.json.gz"
    gz.write_bytes(gzip.compress((DATA / "k6_learn_results.json").read_bytes()))
    pd.testing.assert_frame_equal(read_latency(gz), df)
    # a counter is not a latency: asking for it is refused
    with pytest.raises(ParseError, match="not a time metric"):
        read_latency(DATA / "k6_learn_results.json", metric="http_reqs")


def test_k6_lines_add_up_and_errors():
    lines = (DATA / "k6_learn_results.json").read_text().splitlines()
    point = json.loads(lines[3])
    extra = []
    for v in [5.0, -1, "x"]:
        p = json.loads(json.dumps(point))
        p["data"]["value"] = v
        extra.append(json.dumps(p))
    text = "\n".join(lines + extra + ["{not json", '{"type":"Sample"}']) + "\n"
    df = read_latency(text)
    rej = df.attrs["rejects"].frame()
    assert len(df) == 2 and len(rej) == 4
    assert len(df) + len(rej) + sum(df.attrs["skipped"].values()) == len(lines) + 5
    with pytest.raises(ParseError, match="no Point records of metric 'nope'"):
        read_latency(DATA / "k6_learn_results.json", metric="nope")
    decl = '{"type":"Metric","data":{"type":"counter","contains":"default"},"metric":"http_req_duration"}\n'
    with pytest.raises(ParseError, match="not a time metric"):
        read_latency(decl + lines[3] + "\n")


# ---- Locust -------------------------------------------------------------------------

def test_locust_history_is_cumulative_percentiles():
    df = read_latency(DATA / "locust_stats_history.csv")
    validate(df, DISTRIBUTION_SCHEMA)
    assert df.attrs["format"] == "locust" and df.attrs["cumulative"] is True
    raw = pd.read_csv(DATA / "locust_stats_history.csv")
    pcols = [c for c in raw.columns if c.endswith("%")]
    assert len(df) == (len(raw) - 1) * len(pcols)  # the N/A row is skipped, not lost
    assert df.attrs["skipped"] == {"rows before the first request (N/A)": 1}
    last = df[df["timestamp_s"] == df["timestamp_s"].max()].set_index("percentile")["latency_s"]
    assert last[50.0] == pytest.approx(raw.iloc[-1]["50%"] / 1000)
    # cumulative: the request count never decreases
    per_row = df.groupby("timestamp_s")["total_request_count"].first()
    assert per_row.is_monotonic_increasing
    # percentiles rise with the percentile level within each row
    assert df.groupby("timestamp_s")["latency_s"].apply(lambda s: s.is_monotonic_increasing).all()


def test_locust_full_history_is_windowed_and_zero_windows_are_skipped():
    df = read_latency(DATA / "locust_full_history_stats_history.csv")
    assert df.attrs["cumulative"] is False and "sliding window" in df.attrs["percentiles_over"]
    assert set(df["tag"]) == {"/index.html", "/missing.html", "Aggregated"}
    assert set(df.loc[df["tag"] != "Aggregated", "request_type"]) == {"GET"}
    raw_rows = len(pd.read_csv(DATA / "locust_full_history_stats_history.csv"))
    skipped = sum(df.attrs["skipped"].values())
    assert len(df) / 11 + skipped == raw_rows
    assert (df["latency_s"] > 0).all()


def test_locust_bad_rows_and_header():
    text = (DATA / "locust_stats_history.csv").read_text().splitlines()
    text[3] = text[3].replace(",6,7,8,", ",6,oops,8,", 1)
    text[4] = "1796018788,5,,Aggregated"
    df = read_latency("\n".join(text) + "\n")
    assert df.attrs["rejects"].frame()["line"].tolist() == [4, 5]
    with pytest.raises(ParseError, match="stats_history header"):
        read_latency("Timestamp,User Count,Type,Name\n1,2,,Aggregated\n", format="locust")


# ---- JMeter -------------------------------------------------------------------------

def test_jmeter_jtl():
    df = read_latency(DATA / "jmeter_HTMLReportTestFile.csv")
    validate(df, SAMPLES_SCHEMA)
    raw = pd.read_csv(DATA / "jmeter_HTMLReportTestFile.csv")
    assert df.attrs["format"] == "jmeter" and len(df) == len(raw) == 255
    assert (df["latency_s"] * 1000).round().astype(int).tolist() == raw["elapsed"].tolist()
    assert df["timestamp_s"].iloc[0] == pytest.approx(1551783627.191)
    assert (~df["ok"]).sum() == 3 and set(df.loc[~df["ok"], "responseCode"]) == {400}
    assert {"first_byte_s", "connect_s", "idle_s", "label", "threadName", "URL"} <= set(df.columns)


def test_jmeter_other_column_set_by_header_name():
    df = read_latency(DATA / "jmeter_HTMLReportFalseTestFile.csv")
    assert len(df) == 50 and not df["ok"].any() and "responseCode" not in df.columns
    assert df["label"].iloc[0] == "Requête HTTP"


def test_jmeter_rfc4180_quoting_and_bad_rows():
    text = (
        "timeStamp,elapsed,label,responseCode,responseMessage,threadName,success,failureMessage\n"
        '1667975613816,408,Login,500,"Internal, very","TG 1-1",false,"Expected ""ok"", got:\nstack"\n'
        "1667975613900,12,Login,200,OK,TG 1-2,true,\n"
        "1667975614000,soon,Login,200,OK,TG 1-2,true,\n"
        "1667975614100,15,Login,200,OK,TG 1-2,maybe,\n"
        "1667975614200,15,Login,200,OK,TG 1-2\n"
    )
    df = read_latency(text)
    assert len(df) == 2
    assert df["responseMessage"].iloc[0] == "Internal, very"
    assert df["failureMessage"].iloc[0] == 'Expected "ok", got:\nstack'
    rej = df.attrs["rejects"].frame()
    assert rej["line"].tolist() == [5, 6, 7]
    assert len(df) + len(rej) == 5
    with pytest.raises(ParseError, match="JTL header lacks"):
        read_latency("timeStamp,label\n1,x\n", format="jmeter")


# ---- hey ----------------------------------------------------------------------------

def test_hey_8_columns():
    df = read_latency(DATA / "hey_index_8col.csv")
    validate(df, SAMPLES_SCHEMA)
    assert df.attrs["format"] == "hey" and len(df) == 300
    assert df.attrs["timestamp_origin"] == "relative"
    assert (df["status_code"] == 200).all()
    # offsets are seconds from the start of a ~1 s run
    assert 0 <= df["timestamp_s"].min() < df["timestamp_s"].max() < 10
    # resolution 0.1 ms: every value is a multiple of 1e-4 s
    assert np.allclose(np.round(df["latency_s"] / 1e-4), df["latency_s"] / 1e-4, atol=1e-6)
    # phases never exceed the total
    assert (df["response_delay_s"] <= df["latency_s"] + 1e-4).all()
    assert (read_latency(DATA / "hey_404_8col.csv")["status_code"] == 404).all()


def test_hey_older_6_and_7_column_variants():
    lines = (DATA / "hey_index_8col.csv").read_text().splitlines()
    seven = "\n" + "\n".join(",".join(ln.split(",")[:7]) for ln in lines) + "\n"   # hey before 2018-09-18
    six = "\n" + "\n".join(",".join(ln.split(",")[:6]) for ln in lines) + "\n"     # hey before 2018-09-05
    d7 = read_latency(seven)
    d6 = read_latency(six)
    assert len(d7) == len(d6) == 300
    assert "timestamp_s" not in d7.columns and "status_code" in d7.columns
    assert "status_code" not in d6.columns
    assert d6["latency_s"].tolist() == d7["latency_s"].tolist()


def test_hey_bad_rows():
    text = (DATA / "hey_404_8col.csv").read_text().splitlines()
    text[2] = text[2].replace("404", "40x")
    text[5] = "0.0051,0.0003"
    df = read_latency("\n".join(text) + "\n")
    assert len(df) + len(df.attrs["rejects"]) == 200
    assert df.attrs["rejects"].frame()["line"].tolist() == [3, 6]


# ---- wrong file for the forced format: a clear error naming the file -----------------

@pytest.mark.parametrize(
    ("fmt", "name"),
    [
        ("csv", "wrk_latency.txt"),
        ("hlog", "hey_index_8col.csv"),
        ("hgrm", "ghz_sayhello_report2.json"),
        ("wrk", "locust_stats_history.csv"),
        ("ghz", "jmeter_HTMLReportTestFile.csv"),
        ("fortio", "ghz_sayhello_report2.json"),
        ("k6", "fortio_httpbin_v1.57.3.json"),
        ("locust", "hey_index_8col.csv"),
        ("jmeter", "locust_stats_history.csv"),
        ("hey", "jmeter_HTMLReportTestFile.csv"),
    ],
)
def test_forcing_the_wrong_format_fails_clearly(fmt, name):
    with pytest.raises(ParseError) as e:
        read_latency(DATA / name, format=fmt)
    assert e.value.source.endswith(name)
    assert "expected" in str(e.value)


def test_every_real_file_is_detected_as_its_tool():
    expect = {"wrk": "wrk", "wrk2": "wrk2", "hey": "hey", "locust": "locust", "hdrh": "hgrm",
              "jHiccup": "hlog", "tagged": "hlog", "raphael": "hlog", "ghz": "ghz", "fortio": "fortio",
              "k6": "k6", "jmeter": "jmeter"}
    for p in sorted(DATA.iterdir()):
        if p.suffix == ".md":
            continue
        prefix = next(k for k in sorted(expect, key=len, reverse=True) if p.name.startswith(k))
        assert read_latency(p).attrs["format"] == expect[prefix], p.name


def test_binary_junk_is_not_guessed():
    with pytest.raises(ValueError, match="cannot tell the latency format"):
        read_latency("\x00\x01\x02 PNG junk\nmore junk\n")
