"""TSDB CSV exports and the node attribute table: bad records counted, errors name file and line."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from workbench.counters import read_node_attributes, read_tsdb_csv
from workbench.errors import ParseError

TSDB = ("timestamp,host,metric,labels,value\n"
        "100,fe01,node_network_receive_bytes_total,device=eth1,10\n"
        "100,fe01,frontend_requests_total,,3\n"
        "115,fe01,node_network_receive_bytes_total,device=eth1,oops\n"
        "115,fe01,frontend_requests_total\n"
        "130,fe01,frontend_requests_total,,9\n")


def test_tsdb_rows_kinds_and_rejects() -> None:
    df = read_tsdb_csv(TSDB)
    assert len(df) == 3 and set(df["timestamp"]) == {100.0, 130.0}
    row = df[df["counter"] == "node_network_receive_bytes_total"].iloc[0]
    assert (row["item"], row["unit"], row["kind"], row["value"]) == ("eth1", "bytes", "counter", 10.0)
    rej = df.attrs["rejects"].frame()
    assert rej["line"].tolist() == [4, 5]
    assert "got '115' and 'oops'" in rej["reason"].iloc[0] and "expected 5 fields, got 3" in rej["reason"].iloc[1]
    with pytest.raises(ParseError, match=r"<text>:4: timestamp and value must be numbers"):
        read_tsdb_csv(TSDB, strict=True)


def test_tsdb_files_keep_their_own_rejects(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text(TSDB)
    (tmp_path / "b.csv").write_text(TSDB.replace("fe01", "fe02"))
    df = read_tsdb_csv(sorted(tmp_path.glob("*.csv")))
    assert len(df) == 6 and set(df["host"]) == {"fe01", "fe02"}
    rej = df.attrs["rejects"].frame()
    assert [Path(s).name for s in rej["source"]] == ["a.csv", "a.csv", "b.csv", "b.csv"]


def test_tsdb_header_and_unreadable_csv_are_named() -> None:
    with pytest.raises(ParseError, match=r"<text>:1: TSDB CSV needs a header with columns timestamp, host"):
        read_tsdb_csv("time,host,value\n1,a,2\n")
    huge = "timestamp,host,metric,labels,value\n1,a,m,\"" + "x" * 200_000 + "\",2\n"
    with pytest.raises(ParseError, match=r"<text>:2: not a readable CSV: field larger than field limit"):
        read_tsdb_csv(huge)


def test_node_attributes_from_text_stream_and_file(tmp_path: Path) -> None:
    text = "host,migration_state,role\nfe01,switched,api\n\nfe02,migrating,\n"
    df = read_node_attributes(text)
    assert df.to_dict("list") == {"host": ["fe01", "fe02"], "migration_state": ["switched", "migrating"],
                                  "role": ["api", ""]}
    assert len(df.attrs["rejects"]) == 0
    assert read_node_attributes(io.StringIO(text)).equals(df)
    (tmp_path / "nodes.csv").write_text(text)
    assert read_node_attributes(tmp_path / "nodes.csv").equals(df)


@pytest.mark.parametrize(("text", "message"), [
    ("name,state\nfe01,x\n", r"<text>:1: node attribute CSV needs a 'host' column; got columns \['name', 'state'\]"),
    ("host,state\nfe01,x\nfe02,y\nfe01,z\n", r"<text>:4: host listed twice \(first at <text>:2\)"),
    ("host,state\nfe01,x,extra\n", r"<text>:2: expected 2 fields \(host, state\), got 3"),
    ("\n\n", r"<text>: empty file; expected a CSV header with a 'host' column"),
])
def test_node_attribute_errors_name_file_and_line(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        read_node_attributes(text)
