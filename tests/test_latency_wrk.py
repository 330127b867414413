"""wrk and wrk2 text output."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench.errors import ParseError
from workbench.latency import read_latency
from workbench.latency._wrk import wrk_time_s

DATA = Path(__file__).parent / "data" / "latency"


def test_wrk_time_units_m_is_minutes():
    assert wrk_time_s("635.91us") == pytest.approx(635.91e-6)
    assert wrk_time_s("12.50ms") == pytest.approx(0.0125)
    assert wrk_time_s("1.42s") == pytest.approx(1.42)
    assert wrk_time_s("8.65m") == pytest.approx(8.65 * 60)  # minutes, not milliseconds
    assert wrk_time_s("2.00h") == pytest.approx(7200)
    assert wrk_time_s("12.5") is None and wrk_time_s("3ks") is None


def test_real_wrk_capture():
    df = read_latency(DATA / "wrk_latency.txt")
    assert df.attrs["format"] == "wrk" and df.attrs["kind"] == "distribution"
    assert df["percentile"].tolist() == [50.0, 75.0, 90.0, 99.0]
    assert df["latency_s"].tolist() == pytest.approx([0.00265, 0.00397, 0.00553, 0.00929])
    s = df.attrs["summary"]
    assert s["requests"] == 3976 and s["threads"] == 1 and s["connections"] == 4
    assert s["requests_per_s"] == pytest.approx(1324.10)
    assert s["transfer_bytes_per_s"] == pytest.approx(245.68 * 1024)
    assert s["req_per_s_avg"] == pytest.approx(1330.0)  # "1.33k"
    # summary max is above every reported percentile
    assert s["latency_max_s"] > df["latency_s"].max()
    assert len(df.attrs["rejects"]) == 0


def test_wrk2_spectrum_is_the_distribution():
    df = read_latency(DATA / "wrk2_readme_latency.txt")
    assert df.attrs["format"] == "wrk2"
    assert (df["tag"] == "recorded").all()
    assert df["cumulative_count"].iloc[-1] == df["count"].sum() == 39500
    assert df.attrs["summary"]["spectrum_footer"]["recorded"]["Total count"] == 39500
    # the spectrum agrees with the summary percentile lines printed above it
    p = df.attrs["summary"]["percentiles_s"]["recorded"]
    for q in (50.0, 90.0, 99.0):
        from_spectrum = np.interp(q, df["percentile"], df["latency_s"])
        assert from_spectrum == pytest.approx(p[q], rel=0.02)


def test_wrk2_recorded_and_uncorrected_blocks_with_a_stall():
    df = read_latency(DATA / "wrk2_readme_u_latency_stall.txt")
    blocks = df.groupby("tag")
    assert set(blocks.groups) == {"recorded", "uncorrected"}
    assert blocks["count"].sum().tolist() == [39500, 39500]
    p99 = {t: np.interp(99.0, g["percentile"], g["latency_s"]) for t, g in blocks}
    # coordinated omission: the corrected p99 sees the 1.4 s stall, the uncorrected one hides it
    assert p99["recorded"] > 1.0 and p99["uncorrected"] < 0.01
    assert df.attrs["summary"]["latency_max_s"] == pytest.approx(1.42)


MINUTES = """Running 30m test @ http://127.0.0.1:8080/
  2 threads and 10 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     7.90m     3.10m   19.29m    60.00%
    Req/Sec     0.10      0.30     1.00     90.00%
  Latency Distribution (HdrHistogram - Recorded Latency)
 50.000%    8.65m
 75.000%   11.01m
 90.000%   15.20m
 99.000%   19.29m
 99.900%   19.29m
 99.990%   19.29m
 99.999%   19.29m
100.000%   19.29m
  Socket errors: connect 0, read 3, write 0, timeout 120
  1200 requests in 30.00m, 1.20MB read
  Non-2xx or 3xx responses: 7
Requests/sec:      0.67
Transfer/sec:    682.67B
"""


def test_minutes_in_percentile_lines():
    df = read_latency(MINUTES)
    assert df["latency_s"].iloc[0] == pytest.approx(8.65 * 60)
    assert df["latency_s"].iloc[-1] == pytest.approx(19.29 * 60)
    s = df.attrs["summary"]
    assert s["duration_s"] == 1800 and s["elapsed_s"] == 1800
    assert s["socket_errors"] == {"connect": 0, "read": 3, "write": 0, "timeout": 120}
    assert s["non_2xx_3xx"] == 7


def test_unknown_and_broken_lines_are_rejects_not_silence():
    text = MINUTES.replace(" 75.000%   11.01m\n", " 75.000%   11.01x\n").replace(
        "Requests/sec:", "hello from a lua done()\nRequests/sec:")
    df = read_latency(text)
    rej = df.attrs["rejects"].frame()
    assert len(df) == 7 and len(rej) == 2
    assert "percentile" in rej["reason"].iloc[0]
    assert rej["text"].iloc[1] == "hello from a lua done()"
    with pytest.raises(ParseError) as e:
        read_latency(text, strict=True)
    assert e.value.line == 8


def test_without_latency_flag_is_a_clear_error():
    text = "\n".join(MINUTES.splitlines()[:5] + MINUTES.splitlines()[14:]) + "\n"
    with pytest.raises(ParseError, match="--latency"):
        read_latency(text)


def test_broken_spectrum_row_is_rejected():
    lines = (DATA / "wrk2_readme_latency.txt").read_text().splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.strip().startswith("4.053"))
    lines[i] = lines[i].replace("3951", "39x1")
    df = read_latency("\n".join(lines) + "\n")
    assert len(df.attrs["rejects"]) == 1 and df.attrs["rejects"].frame()["line"].iloc[0] == i + 1
    assert df["cumulative_count"].iloc[-1] == 39500
