"""Each reader against the tool's own printed numbers, to their printed precision (files: data/formats/README.md)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench.errors import ParseError
from workbench.latency import read_latency, read_siege_log

F = Path(__file__).parent / "data" / "formats"


def _pct(df, tag=None):
    d = df if tag is None else df[df["tag"] == tag]
    return dict(zip(d["percentile"].tolist(), np.round(d["latency_s"].to_numpy(), 9).tolist(), strict=True))


def test_hey_text_matches_its_summary():
    df = read_latency(F / "hey_summary.txt")
    assert df.attrs["kind"] == "distribution" and df.attrs["format"] == "hey_text"
    assert _pct(df) == {0.0: 0.0004, 10.0: 0.0005, 25.0: 0.0007, 50.0: 0.0010, 75.0: 0.0019, 90.0: 0.0040,
                        95.0: 0.0055, 99.0: 0.0171, 100.0: 0.0200}
    assert df.attrs["resolution_s"] == pytest.approx(1e-4)
    t = df.attrs["totals"]
    assert (t["requests"], t["failures"], t["non_2xx"], t["status_codes"]) == (200, 0, 0, {"200": 200})
    assert df.attrs["warnings"] == []
    hist = df.attrs["histogram"]
    assert len(hist) == 11 and sum(b["count"] for b in hist) == 200 and hist[1] == {"latency_s": 0.002, "count": 161}
    assert df.attrs["summary"]["requests_per_sec"] == pytest.approx(1038.3287)
    assert df.attrs["summary"]["details_s"]["resp wait"] == (0.0013, 0.0002, 0.0198)


def test_hey_text_404_and_refused_never_look_like_successes():
    df = read_latency(F / "hey_404_summary.txt")
    assert df.attrs["totals"]["non_2xx"] == 50 and df.attrs["totals"]["status_codes"] == {"404": 50}
    assert any("50 of 50 requests got a non-2xx response" in w for w in df.attrs["warnings"])
    ref = read_latency(F / "hey_refused_summary.txt")
    assert len(ref) == 0
    assert ref.attrs["totals"]["failures"] == 50 and ref.attrs["totals"]["errors"] == {"connection refused": 50}
    assert any("50 of 50 requests failed" in w for w in ref.attrs["warnings"])


AB_TABLE_MS = {50: 1, 66: 1, 75: 1, 80: 1, 90: 4, 95: 8, 98: 13, 99: 14, 100: 15}


def test_ab_report_matches_its_table():
    df = read_latency(F / "ab_report.txt")
    assert df.attrs["format"] == "ab" and df.attrs["resolution_s"] == 1e-3
    assert _pct(df) == {0.0: 0.0, **{float(p): v / 1000 for p, v in AB_TABLE_MS.items()}}
    t = df.attrs["totals"]
    assert (t["requests"], t["failures"], t["non_2xx"]) == (200, 0, 0)
    assert df.attrs["summary"]["connection_times_ms"]["Total"] == {"min": 0, "mean": 2, "sd": 2.6, "median": 1,
                                                                    "max": 15}
    bad = read_latency(F / "ab_404_report.txt")
    assert bad.attrs["totals"]["non_2xx"] == 50 and bad.attrs["warnings"]


def test_ab_gnuplot_samples_reproduce_the_reports_table():
    """The -g samples of the same run, ranked as ab ranks them, give the report's table exactly."""
    g = read_latency(F / "ab_gnuplot.tsv")
    assert g.attrs["kind"] == "samples" and len(g) == 200 and g.attrs["resolution_s"] == 1e-3
    ms = np.sort(np.round(g["latency_s"].to_numpy() * 1000).astype(int))
    for p, v in AB_TABLE_MS.items():
        assert ms[min(len(ms) - 1, len(ms) * p // 100)] == v
    assert g["timestamp_s"].min() == 1796250306.0
    e = read_latency(F / "ab_percentiles.csv")
    assert len(e) == 101 and e["percentile"].tolist() == list(range(101))
    assert e["latency_s"].iloc[-1] == pytest.approx(0.014871) and e.attrs["resolution_s"] == pytest.approx(1e-6)
    assert round(e["latency_s"].iloc[-1] * 1000) == AB_TABLE_MS[100]


def test_siege_summary_and_per_request_lines():
    s = read_latency(F / "siege_summary_stderr.txt")
    assert _pct(s) == {0.0: 0.0, 100.0: 0.04}
    assert s.attrs["resolution_s"] == 0.01
    assert s.attrs["totals"]["requests"] == 40 and s.attrs["totals"]["failures"] == 0
    assert s.attrs["summary"]["transaction_rate_per_s"] == 444.44
    v = read_latency(F / "siege_verbose_stdout.txt")
    summ = read_latency(F / "siege_verbose_summary_stderr.txt").attrs["summary"]
    assert v.attrs["kind"] == "samples" and len(v) == summ["transactions"] == 20
    assert v["latency_s"].max() == summ["longest_transaction_s"] == 0.03
    assert v["latency_s"].min() == summ["shortest_transaction_s"] == 0.0
    assert v["ok"].all() and set(v["status_code"]) == {200}


# siege 4.1+ prints its summary as JSON on stdout (src/main.c printf "\t\"transactions\":\t\t\t%12u,\n" …),
# as quoted in public run notes; siege 4.0.7 here prints the text form.
SIEGE_JSON = (
    '{\t"transactions":\t\t\t         500,\n\t"availability":\t\t\t      100.00,\n'
    '\t"elapsed_time":\t\t\t       36.14,\n\t"data_transferred":\t\t       20.95,\n'
    '\t"response_time":\t\t        2.64,\n\t"transaction_rate":\t\t       13.84,\n'
    '\t"throughput":\t\t\t        0.58,\n\t"concurrency":\t\t\t       36.51,\n'
    '\t"successful_transactions":\t         500,\n\t"failed_transactions":\t\t           0,\n'
    '\t"longest_transaction":\t\t       31.76,\n\t"shortest_transaction":\t\t        0.00\n}\n'
)


def test_siege_json_summary_then_a_non_json_line():
    df = read_latency(SIEGE_JSON + "FILE: /var/log/siege.log\n")
    assert df.attrs["format"] == "siege" and _pct(df) == {0.0: 0.0, 100.0: 31.76}
    assert df.attrs["summary"]["response_time_s"] == 2.64 and df.attrs["totals"]["requests"] == 500
    assert df.attrs["skipped"] == {"siege banner and notice lines": 1}
    junk = read_latency(SIEGE_JSON + "something else\n")
    assert junk.attrs["rejects"].frame()["line"].tolist() == [14]


def test_siege_log_is_refused_as_latency_and_read_as_runs():
    with pytest.raises(ParseError, match="one summary row per siege run"):
        read_latency(F / "siege.log")
    with pytest.raises(ParseError, match="siege's --log file"):
        read_latency(F / "siege.log", format="csv", unit="s")
    runs = read_siege_log(F / "siege.log")
    assert len(runs) == 1
    r = runs.iloc[0]
    assert (r["transactions"], r["okay"], r["failed"], r["elapsed_s"]) == (40, 40, 0, 0.09)
    assert r["response_time_mean_s"] == 0.0 and r["concurrency"] == 1.78


def test_httperf_connection_times():
    ok = read_latency(F / "httperf_summary_ok.txt")
    assert _pct(ok, "connection") == {0.0: 0.0005, 50.0: 0.0125, 100.0: 1.0184}
    assert ok.attrs["totals"]["requests"] == 60 and ok.attrs["totals"]["failures"] == 0
    assert ok.attrs["totals"]["status_codes"]["2xx"] == 60 and ok.attrs["warnings"] == []
    bad = read_latency(F / "httperf_connreset_summary.txt")
    assert bad.attrs["totals"]["failures"] == 50 and bad.attrs["totals"]["errors"] == {"connreset": 50}
    w = " | ".join(bad.attrs["warnings"])
    assert "50 of 100 requests failed" in w and "not request latencies" in w and "50 replies for 100" in w


def test_curl_w_lines():
    df = read_latency(F / "curl_w.txt")
    totals = [float(ln.split("total=")[1].split()[0]) for ln in (F / "curl_w.txt").read_text().splitlines()]
    assert df["latency_s"].tolist() == totals and len(df) == 20
    assert {"dns_s", "connect_s", "tls_s", "pretransfer_s", "starttransfer_s", "size"} <= set(df.columns)
    assert (df["starttransfer_s"] <= df["latency_s"]).all() and df["ok"].all()
    assert df.attrs["resolution_s"] == pytest.approx(1e-6)


def test_curl_json_lines_mark_failures():
    df = read_latency(F / "curl_json.jsonl")
    assert len(df) == 22
    assert df["status_code"].tolist()[-2:] == [404, 0] and df["exitcode"].tolist()[-1] == 7
    assert df["ok"].tolist() == [True] * 20 + [False, False]
    assert df.attrs["totals"]["failures"] == 2 and df.attrs["warnings"]
    assert df.attrs["totals"]["errors"] == {"Couldn't connect to server": 1}


def test_one_value_per_line_needs_a_unit():
    with pytest.raises(ParseError, match=r"curl_time_total\.txt:1: one number per line.*pass unit="):
        read_latency(F / "curl_time_total.txt")
    df = read_latency(F / "curl_time_total.txt", unit="s")
    want = [float(x) for x in (F / "curl_time_total.txt").read_text().split()]
    assert df["latency_s"].tolist() == want and df.attrs["resolution_s"] == pytest.approx(1e-6)
    assert read_latency("12\n15\n9\n", unit="ms")["latency_s"].tolist() == pytest.approx([0.012, 0.015, 0.009])
    assert read_latency("12\n15\n9\n", unit="ms").attrs["resolution_s"] == pytest.approx(1e-3)


def test_locust_stats_with_its_failures_file():
    df = read_latency(F / "locust_stats.csv")
    agg = _pct(df, "Aggregated")
    assert agg == {50.0: 0.004, 66.0: 0.005, 75.0: 0.006, 80.0: 0.006, 90.0: 0.008, 95.0: 0.01, 98.0: 0.017,
                   99.0: 0.021, 99.9: 0.026, 99.99: 0.026, 100.0: 0.026}
    t = df.attrs["totals"]
    assert (t["requests"], t["failures"]) == (288, 72)
    assert sum(t["errors"].values()) == 72 and df.attrs["failures_file"].endswith("locust_failures.csv")
    assert df.attrs["summary"]["/missing.html"]["failures"] == 72 and df.attrs["resolution_s"] == 1e-3
    with pytest.raises(ParseError, match="holds no latencies"):
        read_latency(F / "locust_failures.csv")


def test_hgrm_unit_guard_and_footer_flag():
    with pytest.raises(ParseError, match=r"hdrh_us_unscaled\.hgrm:\d+: every Value is a whole number"):
        read_latency(F / "hdrh_us_unscaled.hgrm")
    us = read_latency(F / "hdrh_us_unscaled.hgrm", unit="us")
    assert us.attrs["unit_rule"] == "given" and us.attrs["latency_unit"] == "us"
    assert us["latency_s"].max() == pytest.approx(49119e-6) and us["cumulative_count"].iloc[-1] == 100
    ms = read_latency(F / "hdrh_ms_scaled.hgrm")
    np.testing.assert_allclose(ms["latency_s"], us["latency_s"], rtol=1e-9)
    assert ms.attrs["unit_rule"].startswith("assumed ms")
    assert len(ms.attrs["warnings"]) == 1 and "StdDeviation 7949.97 exceeds Max 49.119" in ms.attrs["warnings"][0]
    rej = ms.attrs["rejects"].frame()
    assert len(rej) == 1 and "StdDeviation" in rej["text"].iloc[0]
    assert us.attrs["warnings"] == []  # unscaled: StdDeviation 7949.971 < Max 49119


def test_wrk_totals_and_resolution():
    df = read_latency(F / "wrk_latency.txt")
    assert _pct(df) == {50.0: 0.000848, 75.0: 0.00366, 90.0: 0.00785, 99.0: 0.02435}
    assert df.attrs["totals"]["requests"] == 2196 and df.attrs["totals"]["non_2xx"] == 0
    assert df.attrs["resolution_s"] == pytest.approx(1e-5)  # 2 decimals of ms is the coarsest printed step


def test_jmeter_xml_jtl_every_top_level_sample():
    import re

    path = F / "jmeter_BatchTestLocal.jtl"
    text = path.read_text()
    want = [(int(t), int(ts), s == "true") for t, ts, s in
            re.findall(r'<(?:sample|httpSample) t="(\d+)" lt="\d+" ts="(\d+)" s="(true|false)"', text)]
    df = read_latency(path)
    assert df.attrs["format"] == "jmeter_xml" and len(df) == len(want) == 133
    assert (np.round(df["latency_s"].to_numpy() * 1000).astype(int).tolist() == [w[0] for w in want])
    assert df["timestamp_s"].tolist() == pytest.approx([w[1] / 1000 for w in want])
    assert df["ok"].tolist() == [w[2] for w in want] and int((~df["ok"]).sum()) == 16
    assert df.loc[df["label"] == 'HTTP "Request,', "bytes"].tolist() == [136983]
    assert df.attrs["resolution_s"] == 1e-3


def test_jmeter_xml_nested_samples_and_bad_xml():
    text = ('<?xml version="1.0"?>\n<testResults version="1.2">\n'
            '<httpSample t="30" lt="10" ts="1506543684123" s="true" lb="page" rc="200">\n'
            '  <httpSample t="12" lt="5" ts="1506543684124" s="true" lb="page-0" rc="302"/>\n'
            '</httpSample>\n<httpSample t="x" ts="1" s="true" lb="bad"/>\n</testResults>\n')
    df = read_latency(text)
    assert df["latency_s"].tolist() == [0.03] and df.attrs["skipped"] == {
        "nested sub-samples (covered by their parent)": 1}
    assert df.attrs["rejects"].frame()["line"].tolist() == [6]
    with pytest.raises(ParseError, match=r"<text>:4: not well-formed XML"):
        read_latency('<?xml version="1.0"?>\n<testResults>\n<sample t="1" ts="2" s="true">\n</testResults>\n')


# k6 could not be installed here: the two summary shapes below are k6 outputs as published
# (legacy --summary-export: flat stats; handleSummary data: {"type": "trend", "values": …}).
K6_LEGACY = """{"metrics": {
  "http_req_duration{expected_response:true}": {"min": 2.0513, "med": 7.655150000000001, "max": 107.786,
      "p(90)": 16.144270000000002, "p(95)": 22.067334999999986, "avg": 9.716778102564119},
  "http_req_duration": {"max": 107.786, "p(90)": 16.144270000000002, "p(95)": 22.067334999999986,
      "avg": 9.716778102564119, "min": 2.0513, "med": 7.655150000000001, "thresholds": {"p(95)<500": false}},
  "http_req_failed": {"passes": 0, "fails": 5850, "value": 0},
  "http_reqs": {"count": 5850, "rate": 96.95}}}
"""
K6_HANDLE_SUMMARY = """{"metrics": {
  "http_req_failed": {"type": "rate", "contains": "default", "values": {"rate": 0.25, "passes": 1, "fails": 3}},
  "http_reqs": {"type": "counter", "contains": "default", "values": {"count": 4, "rate": 1.2}},
  "http_req_duration": {"type": "trend", "contains": "time", "values": {"p(95)": 756.0457749999999,
      "avg": 532.1963000000001, "min": 295.6045, "med": 527.2977000000001, "max": 778.5853,
      "p(90)": 733.50625}},
  "http_req_connecting": {"type": "trend", "contains": "time", "values": {"avg": 6.1373750000000005,
      "min": 0, "med": 6.026, "max": 12.4975, "p(90)": 12.363850000000001, "p(95)": 12.43}}},
 "state": {"testRunDurationMs": 3366.1}}
"""


def test_k6_summary_both_shapes():
    legacy = read_latency(K6_LEGACY)
    assert legacy.attrs["format"] == "k6_summary"
    assert _pct(legacy) == {0.0: 0.0020513, 50.0: 0.00765515, 90.0: 0.01614427, 95.0: 0.022067335, 100.0: 0.107786}
    assert legacy.attrs["totals"]["requests"] == 5850 and legacy.attrs["totals"]["failures"] == 0
    assert legacy.attrs["summary"]["avg"] == pytest.approx(9.716778102564119)
    assert "http_req_duration{expected_response:true}" in legacy.attrs["submetrics"]
    hs = read_latency(K6_HANDLE_SUMMARY)
    assert _pct(hs)[100.0] == pytest.approx(0.7785853) and _pct(hs)[90.0] == pytest.approx(0.73350625)
    # http_req_failed counts failures as "passes" (samples equal to 1)
    assert hs.attrs["totals"]["failures"] == 1 and "1 of 4 requests failed" in hs.attrs["warnings"][0]
    conn = read_latency(K6_HANDLE_SUMMARY, metric="http_req_connecting")
    assert _pct(conn)[0.0] == 0.0 and len(conn) == 5
    with pytest.raises(ParseError, match="without metrics\\['http_req_blocked'\\]"):
        read_latency(K6_HANDLE_SUMMARY, metric="http_req_blocked")


def test_wrk_404_run_is_not_a_success():
    df = read_latency(F / "wrk_404_latency.txt")
    assert _pct(df) == {50.0: 0.00104, 75.0: 0.00286, 90.0: 0.00491, 99.0: 0.06515}
    t = df.attrs["totals"]
    assert (t["requests"], t["non_2xx"], t["failures"]) == (1285, 1285, 0)
    assert df.attrs["warnings"][0].startswith("1285 of 1285 requests got a non-2xx response")


def test_several_files_report_the_coarsest_resolution():
    df = read_latency([F / "hey.csv", F / "ab_gnuplot.tsv"], progress=False)
    assert len(df) == 300 and df.attrs["resolution_s"] == 1e-3
    assert [p["resolution_s"] for p in df.attrs["per_file"]] == pytest.approx([1e-4, 1e-3])


def test_locust_stats_cache_follows_its_failures_file(tmp_path):
    import shutil

    for f in ("locust_stats.csv", "locust_failures.csv"):
        shutil.copy(F / f, tmp_path / f)
    cache = tmp_path / "cache"
    first = read_latency(tmp_path / "locust_stats.csv", cache=cache)
    assert sum(first.attrs["totals"]["errors"].values()) == 72
    (tmp_path / "locust_failures.csv").write_text("Method,Name,Error,Occurrences,First Seen,Last Seen\n")
    again = read_latency(tmp_path / "locust_stats.csv", cache=cache)
    assert again.attrs["totals"]["errors"] == {}
