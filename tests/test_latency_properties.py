"""Property tests: loaders keep every value and account for every line, on random input."""
from __future__ import annotations

import io

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogWriter
from hypothesis import given, settings
from hypothesis import strategies as st

import workbench.latency
from workbench.errors import ParseError
from workbench.latency import read_latency

UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}

good_row = st.tuples(
    st.integers(min_value=1_600_000_000_000, max_value=1_900_000_000_000),  # epoch ms
    st.decimals(min_value=0, max_value=10**6, places=3, allow_nan=False, allow_infinity=False),
)
bad_row = st.sampled_from(["x,1", "1796000000000,abc", "1796000000000,-5",
                           "1796000000000,1,2", "1796000000000,nan", ",,"])


@settings(max_examples=60)
@given(
    unit=st.sampled_from(sorted(UNITS)),
    rows=st.lists(st.one_of(good_row.map(lambda r: ("good", r)), bad_row.map(lambda r: ("bad", r)),
                            st.just(("noreply", (1_796_000_000_000, None)))),
                  min_size=1, max_size=40),
)
def test_every_line_is_parsed_or_rejected(unit, rows):
    lines = [f"ts_ms,latency_{unit}"]
    expected = []
    for kind, r in rows:
        if kind == "good":
            lines.append(f"{r[0]},{r[1]}")
            expected.append((r[0] / 1000, float(r[1]) * UNITS[unit]))
        elif kind == "noreply":  # a request listed without a latency: kept as NaN
            lines.append(f"{r[0]},")
            expected.append((r[0] / 1000, np.nan))
        else:
            lines.append(r)
    text = "\n".join(lines) + "\n"
    df = read_latency(text)
    if expected:
        np.testing.assert_allclose(df["latency_s"], [e[1] for e in expected], rtol=1e-12, atol=0)
        np.testing.assert_allclose(df["timestamp_s"], [e[0] for e in expected], rtol=0, atol=1e-6)
    assert len(df) + len(df.attrs["rejects"]) == len(rows)
    assert df.attrs["no_latency"] == sum(kind == "noreply" for kind, _ in rows)
    bad_lines = [i + 2 for i, (kind, _) in enumerate(rows) if kind == "bad"]
    assert df.attrs["rejects"].frame()["line"].tolist() == bad_lines


def test_help_documents_both_schemas():
    doc = workbench.latency.__doc__
    for word in ("latency_s", "timestamp_s", "percentile", "count", "interval_start_s", "tag",
                 "**m is minutes**", "**cumulative over the run so far**"):
        assert word in doc
    for fmt in workbench.latency.FORMATS:
        assert f"``{fmt}``" in doc


# ---- HdrHistogram writers' output, random content -------------------------------------

hist_values = st.lists(st.integers(min_value=1_000, max_value=10_000_000_000), min_size=1, max_size=50)


@settings(max_examples=40)
@given(intervals=st.lists(st.tuples(st.sampled_from([None, "A", "b-2"]), hist_values), min_size=1, max_size=6),
       give_unit=st.booleans())
def test_hlog_written_by_hdrh_reads_back(intervals, give_unit):
    out = io.StringIO()
    w = HistogramLogWriter(out)
    w.output_log_format_version()
    out.write("#[StartTime: 1796000000.000 (seconds since epoch), written by hdrh]\n")
    w.output_legend()
    for k, (tag, values) in enumerate(intervals):
        h = HdrHistogram(1, 3_600_000_000_000, 2)
        for v in values:
            h.record_value(v)
        line = io.StringIO()
        HistogramLogWriter(line).output_interval_histogram(h, start_time_stamp_sec=k + 0.5,
                                                           end_time_stamp_sec=k + 1.5)
        out.write((f"Tag={tag}," if tag else "") + line.getvalue())
    text = out.getvalue()
    if not give_unit and all(max(v) < 1_000_000 for _, v in intervals):
        with pytest.raises(ParseError, match="unit="):  # every Interval_Max printed as 0
            read_latency(text)
        return
    df = read_latency(text, unit="ns" if give_unit else None)
    assert df.attrs["latency_unit"] == "ns"
    assert df.attrs["intervals"] == len(intervals)
    assert df["count"].sum() == sum(len(v) for _, v in intervals)
    for k, (tag, values) in enumerate(intervals):
        rows = df[np.isclose(df["interval_start_s"], 1796000000.0 + k + 0.5, rtol=0, atol=1e-6)]
        assert rows["count"].sum() == len(values)
        assert (rows["tag"].isna().all() if tag is None else (rows["tag"] == tag).all())
        # bucket upper edges bound the recorded values within 2 significant digits
        assert rows["latency_s"].max() >= max(values) * 1e-9 * 0.99
        assert rows["latency_s"].max() <= max(values) * 1e-9 * 1.01 + 1e-9


@settings(max_examples=40)
@given(values=hist_values, use_csv=st.booleans())
def test_hgrm_written_by_hdrh_reads_back(values, use_csv):
    h = HdrHistogram(1, 3_600_000_000_000, 3)
    for v in values:
        h.record_value(v)
    b = io.BytesIO()
    h.output_percentile_distribution(b, 1e6, 5, use_csv=use_csv)  # ns recorded → ms printed
    df = read_latency(b.getvalue().decode())
    assert df["cumulative_count"].iloc[-1] == df["count"].sum() == len(values)
    assert df["percentile"].iloc[-1] == 100.0
    # values are printed in ms with 2 decimals
    assert df["latency_s"].max() == pytest.approx(h.get_max_value() * 1e-9, abs=1e-5 + 1e-9)


def _wrk_format_time_us(n: float) -> str:
    """wrk's format_time_us and format_units (src/units.c), line for line."""
    units, base, scale = ["ms", "s", None], "us", 1000
    if n >= 1_000_000:
        n, units, base, scale = n / 1_000_000, ["m", "h", None], "s", 60
    unit = base
    i = 0
    while units[i + 1] is not None and n >= scale * 0.85:
        n /= scale
        unit = units[i]
        i += 1
    return f"{n:.2f}{unit}"


@settings(max_examples=200)
@given(us=st.floats(min_value=1, max_value=3e10, allow_nan=False))
def test_wrk_times_read_back_in_seconds(us):
    from workbench.latency._wrk import wrk_time_s

    text = _wrk_format_time_us(us)
    back = wrk_time_s(text)
    # 2 decimals of the printed unit; "m" is minutes (a milliseconds reading would be off 60 000×)
    unit_s = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}[text.lstrip("0123456789.")]
    assert back == pytest.approx(us * 1e-6, abs=0.005 * unit_s + 1e-12)
