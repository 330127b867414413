"""Plain CSV/TSV latency samples."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from workbench.errors import ParseError
from workbench.latency import SAMPLES_SCHEMA, read_latency
from workbench.schema import validate

LAB = (
    "timestamp_s,send_s,recv_s,latency_s,connection,rate_per_s,mode,client_nodelay,server_nodelay,options\n"
    "1796000000.000,1796000000.0001,1796000000.0411,0.0411,0,10,pipelined,False,False,none\n"
    "1796000000.100,1796000000.1001,1796000000.1406,0.0406,1,10,pipelined,True,False,TCP_NODELAY\n"
    "1796000000.200,1796000000.2001,1796000000.2003,0.0003,2,10,lockstep,True,True,\"TCP_NODELAY,TCP_QUICKACK\"\n"
)


def test_lab_columns_all_carried():
    df = read_latency(LAB)
    assert df.attrs["kind"] == "samples" and df.attrs["format"] == "csv"
    assert list(df.columns) == [
        "timestamp_s", "send_s", "recv_s", "latency_s", "connection", "rate_per_s", "mode",
        "client_nodelay", "server_nodelay", "options",
    ]
    validate(df, SAMPLES_SCHEMA)
    assert df["latency_s"].dtype == np.float64 and df["timestamp_s"].dtype == np.float64
    assert df["latency_s"].tolist() == [0.0411, 0.0406, 0.0003]
    assert df["connection"].dtype == np.int64
    assert df["client_nodelay"].tolist() == [False, True, True]
    assert df["options"].tolist() == ["none", "TCP_NODELAY", "TCP_NODELAY,TCP_QUICKACK"]
    assert df.attrs["timestamp_origin"] == "epoch"
    assert len(df.attrs["rejects"]) == 0


@pytest.mark.parametrize(
    ("col", "scale"),
    [("latency_s", 1.0), ("latency_ms", 1e-3), ("latency_us", 1e-6), ("latency_ns", 1e-9),
     ("elapsed_ms", 1e-3), ("duration_us", 1e-6), ("Latency (ms)", 1e-3), ("rtt_usec", 1e-6)],
)
def test_unit_from_column_name(col, scale):
    df = read_latency(f"{col}\n40\n250\n")
    np.testing.assert_allclose(df["latency_s"], [40 * scale, 250 * scale])


def test_bare_latency_needs_unit():
    with pytest.raises(ValueError, match="unit="):
        read_latency("latency\n40\n")
    df = read_latency("latency\n40\n", unit="ms")
    assert df["latency_s"].tolist() == [0.04]


def test_conflicting_unit_is_an_error():
    with pytest.raises(ValueError, match="says 'ms'"):
        read_latency("latency_ms\n40\n", unit="s")


def test_no_latency_column_names_expectation():
    with pytest.raises(ParseError, match="no latency column"):
        read_latency("foo,bar\n1,2\n", format="csv")


@pytest.mark.parametrize(
    ("header", "values", "expect"),
    [
        ("timestamp_s", ["1796000000.5", "1796000001.5"], [1796000000.5, 1796000001.5]),
        ("ts_ms", ["1796000000500", "1796000001500"], [1796000000.5, 1796000001.5]),
        ("time_us", ["1796000000500000", "1796000001500000"], [1796000000.5, 1796000001.5]),
        ("epoch_ns", ["1796000000500000000", "1796000001500000000"], [1796000000.5, 1796000001.5]),
        # no unit in the name: by magnitude
        ("timestamp", ["1796000000500", "1796000001500"], [1796000000.5, 1796000001.5]),
        ("ts", ["1796000000500000000", "1796000001500000000"], [1796000000.5, 1796000001.5]),
        ("timestamp", ["2026-11-30T06:00:00.5Z", "2026-11-30T08:00:01.5+02:00"],
         [1796018400.5, 1796018401.5]),
        ("time", ["2026-11-30 06:00:00.5", "2026-11-30 06:00:01.5"], [1796018400.5, 1796018401.5]),
    ],
)
def test_timestamps(header, values, expect):
    text = f"{header},latency_ms\n" + "".join(f"{v},1.5\n" for v in values)
    df = read_latency(text)
    np.testing.assert_allclose(df["timestamp_s"], expect, rtol=0, atol=1e-6)
    assert header not in df.columns or header == "timestamp_s"


def test_small_unitless_timestamp_is_refused():
    with pytest.raises(ValueError, match="timestamp_unit"):
        read_latency("t,latency_ms\n0,1\n1000,2\n")
    df = read_latency("t,latency_ms\n0,1\n1000,2\n", timestamp_unit="ms")
    assert df["timestamp_s"].tolist() == [0.0, 1.0]
    assert df.attrs["timestamp_origin"] == "relative"


def test_tsv_and_stream_and_ok():
    text = "ts_ms\tlatency_us\tsuccess\n1796000000000\t1000\ttrue\n1796000000001\t2000\tfalse\n"
    df = read_latency(io.StringIO(text))
    assert df["ok"].tolist() == [True, False]
    assert df["latency_s"].tolist() == [0.001, 0.002]


def test_rejects_add_up_and_strict():
    text = (
        "# captured by hand\n"
        "timestamp_s,latency_ms,connection\n"
        "1796000000.0,40.1,0\n"
        "1796000000.1,oops,1\n"       # line 4: bad number
        "1796000000.2,40.2\n"         # line 5: too few fields
        "\n"
        "yesterday,40.3,2\n"          # line 7: bad timestamp (ISO parse fails)
        "1796000000.3,-1,3\n"         # line 8: negative
        "1796000000.4,39.9,4\n"
    )
    df = read_latency(text)
    rej = df.attrs["rejects"].frame()
    assert len(df) == 2 and len(rej) == 4
    assert rej["line"].tolist() == [4, 5, 7, 8]
    assert rej.loc[rej.line == 5, "reason"].item().startswith("expected 3 fields")
    assert "expected a number" in rej.loc[rej.line == 4, "reason"].item()
    assert "negative" in rej.loc[rej.line == 8, "reason"].item()
    assert df.attrs["comments"] == ["# captured by hand"]
    with pytest.raises(ParseError) as e:
        read_latency(text, strict=True)
    assert e.value.line == 4 and "oops" in e.value.text


def test_empty_latency_is_a_request_without_reply():
    text = ("timestamp_s,latency_s,status\n"
            "1796000000.0,0.040,ok\n"
            "1796000000.2,,unanswered\n"
            "1796000000.4,0.041,ok\n")
    df = read_latency(text)
    assert len(df) == 3 and len(df.attrs["rejects"]) == 0
    assert df["latency_s"].isna().tolist() == [False, True, False]
    assert df.attrs["no_latency"] == 1
    assert df.loc[df["latency_s"].isna(), "status"].item() == "unanswered"


def test_files_glob_and_list(tmp_path):
    for i in range(3):
        (tmp_path / f"run{i}.csv").write_text(f"latency_ms\n{i}\n{i + 10}\noops\n")
    df = read_latency(str(tmp_path / "run*.csv"))
    assert len(df) == 6 and df["file"].nunique() == 3
    assert len(df.attrs["rejects"]) == 3
    df2 = read_latency([tmp_path / "run0.csv", tmp_path / "run2.csv"])
    assert sorted(df2["latency_s"]) == pytest.approx([0, 0.002, 0.010, 0.012])
    one = read_latency(tmp_path / "run1.csv")
    assert "file" not in one.columns and one.attrs["source"].endswith("run1.csv")


def test_missing_file_and_empty_glob(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_latency(tmp_path / "nope.csv")
    with pytest.raises(FileNotFoundError, match="matches no file"):
        read_latency(str(tmp_path / "*.csv"))


def test_undetectable_content_says_what_is_expected():
    with pytest.raises(ValueError, match="cannot tell the latency format"):
        read_latency("hello world\nnothing here\n")


def test_unknown_format_name():
    with pytest.raises(ValueError, match="unknown latency format"):
        read_latency("latency_ms\n1\n", format="nope")


def test_frame_roundtrip_through_to_csv():
    df = read_latency(LAB)
    again = read_latency(df.to_csv(index=False))
    pd.testing.assert_frame_equal(df, again, check_like=False)


STREAM_TEXT = (
    "# lab capture, scheduled send times\n"
    "# second comment line\n"
    "ts,latency_ms,connection,note\n"
    + "".join(f"{1796000000000 + 7 * i},{40 + (i % 5) * 0.1:.1f},{i % 3},plain\n" for i in range(60))
    + '1796000009000,41.0,1,"quoted, with comma"\n'
    + '1796000009001,41.5,2,"spans\nlines"\n'
    + "1796000009002,oops,1,bad latency\n"
    + "# a comment in the middle\n"
    + "1796000009003,42.0,1\n"
    + "\n"
    + "".join(f"{1796000010000 + 7 * i},{39 + (i % 7) * 0.5:.1f},{i % 3},tail\n" for i in range(40))
    + "1796000019000,,0,no reply\n"
)


@pytest.mark.parametrize("block", [1, 64, 333, 4096])
def test_streamed_read_equals_whole_read(block, tmp_path, monkeypatch):
    import workbench.latency._read as reader

    f = tmp_path / "big.csv"
    f.write_text(STREAM_TEXT)
    whole = read_latency(f)
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    monkeypatch.setattr(reader, "BLOCK_BYTES", block)
    streamed = read_latency(f, progress=False)
    assert streamed.attrs["streamed"] is True and "streamed" not in whole.attrs
    pd.testing.assert_frame_equal(streamed, whole)
    pd.testing.assert_frame_equal(streamed.attrs["rejects"].frame(), whole.attrs["rejects"].frame())
    assert whole.attrs["rejects"].frame()["line"].tolist() == [67, 69]  # bad latency; too few fields
    assert streamed.attrs["comments"] == whole.attrs["comments"]
    assert streamed.attrs["timestamp_unit"] == "ms" and streamed.attrs["no_latency"] == 1
    assert streamed["note"].tolist()[61] == "spans\nlines"


def test_detection_is_not_fooled_by_lookalike_headers():
    df = read_latency("latency_ms,HISTOGRAM_bucket,note\n1.5,3,Running 1 test @ nowhere\n")
    assert df.attrs["format"] == "csv" and df["HISTOGRAM_bucket"].tolist() == [3]


def test_progress_bar_over_files(tmp_path, capsys):
    for i in range(2):
        (tmp_path / f"r{i}.csv").write_text("latency_ms\n1\n")
    read_latency(str(tmp_path / "r*.csv"), progress=True)
    assert "read_latency" in capsys.readouterr().err


def test_byte_order_mark_and_crlf(tmp_path):
    text = "\ufefftimestamp_s,latency_ms\r\n1796000000.5,1.5\r\n1796000001.5,2.5\r\n"
    f = tmp_path / "bom.csv"
    f.write_bytes(text.encode("utf-8"))
    for src in (text, io.StringIO(text), f):
        df = read_latency(src)
        assert list(df.columns) == ["timestamp_s", "latency_s"]
        assert df["latency_s"].tolist() == [0.0015, 0.0025]
