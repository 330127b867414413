"""The one small-CSV reader: header, comments, per-column parsing, rules, key, check, rejects, strict."""
from __future__ import annotations

import bz2
import gzip
import io
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.errors import InputNotFoundError, ParseError, SchemaError, UsageError
from workbench.schema import Column, Rejects, Schema
from workbench.tables import Above, AtLeast, NonEmpty, OneOf, read_table

S = Schema("demo", (
    Column("n", "int", "count", "how many"),
    Column("time_s", "float", "s", "how long"),
    Column("name", "string", doc="who"),
    Column("ok", "bool", doc="whether it worked"),
    Column("note", "string", doc="free text", required=False),
))
HEADER = "n,time_s,name,ok"


def _rejects(frame: pd.DataFrame) -> pd.DataFrame:
    rej = frame.attrs["rejects"]
    assert isinstance(rej, Rejects)
    return rej.frame()


def test_parses_kinds_into_schema_order_and_drops_other_columns() -> None:
    text = "name,extra,ok,time_s,n\nalpha,zzz,true,0.5,3\nbeta,zzz,0,1e-3,4.0\n"
    df = read_table(text, S)
    assert list(df.columns) == ["n", "time_s", "name", "ok"]  # optional 'note' absent from the header: absent here
    assert df["n"].dtype == "int64" and df["time_s"].dtype == "float64" and df["ok"].dtype == "bool"
    assert df["n"].tolist() == [3, 4] and df["time_s"].tolist() == [0.5, 0.001]
    assert df["name"].tolist() == ["alpha", "beta"] and df["ok"].tolist() == [True, False]
    assert df.attrs["schema"] == "demo" and df.attrs["source"] == "<text>" and len(df.attrs["rejects"]) == 0


def test_optional_column_is_read_when_present() -> None:
    df = read_table(f"{HEADER},note\n1,0.1,a,true,hello\n", S)
    assert list(df.columns) == ["n", "time_s", "name", "ok", "note"] and df["note"].iloc[0] == "hello"


def test_comments_and_blank_lines_are_skipped_anywhere() -> None:
    text = f"# made by hand\n\n   \n{HEADER}\n# between rows\n1,0.1,a,true\n\n  # indented comment\n2,0.2,b,false\n"
    df = read_table(text, S)
    assert df["n"].tolist() == [1, 2] and len(df.attrs["rejects"]) == 0


def test_bad_cells_are_rejected_with_line_text_and_reason() -> None:
    text = (f"{HEADER}\n"
            "1,0.1,a,true\n"
            "x,0.1,a,true\n"          # line 3: not a whole number
            "2,nan,a,true\n"          # line 4: not finite
            "3,0.1,a,maybe\n"         # line 5: not a bool
            "4,0.1,a\n"               # line 6: missing field
            "5,0.5,e,false\n")
    df = read_table(text, S)
    assert df["n"].tolist() == [1, 5]
    rej = _rejects(df)
    assert rej["line"].tolist() == [3, 4, 5, 6]
    assert rej["text"].tolist() == ["x,0.1,a,true", "2,nan,a,true", "3,0.1,a,maybe", "4,0.1,a"]
    reasons = rej["reason"].tolist()
    assert "column 'n'" in reasons[0] and "whole number" in reasons[0]
    assert "column 'time_s'" in reasons[1] and "finite" in reasons[1]
    assert "column 'ok'" in reasons[2] and "true/false" in reasons[2]
    assert "expected 4 fields" in reasons[3]
    assert set(rej["source"]) == {"<text>"}


def test_rules_reject_values_out_of_range() -> None:
    text = (f"{HEADER}\n"
            "0,0.0,a,true\n"      # fine: n ≥ 0, time_s ≥ 0
            "-1,0.1,a,true\n"     # n < 0
            "1,-0.5,a,true\n"     # time_s < 0
            "1,0.1,,true\n"       # empty name
            "1,0.1,zed,true\n")   # name not allowed
    rules: dict[str, Any] = {"n": AtLeast(0), "time_s": AtLeast(0.0), "name": NonEmpty()}
    df = read_table(text, S, rules=rules)
    assert len(df) == 2 and len(df.attrs["rejects"]) == 3
    reasons = _rejects(df)["reason"].tolist()
    assert "column 'n'" in reasons[0] and ">= 0" in reasons[0]
    assert "column 'time_s'" in reasons[1] and ">= 0" in reasons[1]
    assert "column 'name'" in reasons[2] and "empty" in reasons[2]
    df = read_table(text, S, rules={"n": Above(0), "name": OneOf(frozenset({"a"}))})
    assert df["n"].tolist() == [1] and df["name"].tolist() == ["a"]
    reasons = _rejects(df)["reason"].tolist()
    assert "> 0" in reasons[0] and "one of ['a']" in reasons[-1]


def test_key_rejects_repeats_but_keeps_the_first() -> None:
    text = f"{HEADER}\n1,0.1,a,true\n1,0.2,b,true\n1,0.3,a,false\n2,0.4,a,true\n"
    df = read_table(text, S, key=("n", "name"))
    assert df["time_s"].tolist() == [0.1, 0.2, 0.4]
    rej = _rejects(df)
    assert rej["line"].tolist() == [4] and "duplicate" in rej["reason"].iloc[0] and "'n': 1" in rej["reason"].iloc[0]


def test_check_sees_the_parsed_record_and_its_reason_is_kept() -> None:
    seen: list[dict[str, Any]] = []

    def check(row: dict[str, Any]) -> str | None:
        seen.append(row)
        return "time must grow with n" if row["time_s"] < row["n"] / 10 else None

    df = read_table(f"{HEADER}\n1,0.1,a,true\n5,0.1,b,true\n", S, check=check)
    assert seen[0] == {"n": 1, "time_s": 0.1, "name": "a", "ok": True}
    assert len(df) == 1 and _rejects(df)["reason"].tolist() == ["time must grow with n"]


def test_strict_raises_the_earliest_bad_line() -> None:
    text = f"{HEADER}\n1,0.1,a,true\n1,0.1,a,true\nx,0.1,a,true\n"
    with pytest.raises(ParseError) as exc:
        read_table(text, S, strict=True, key=("n",))
    assert exc.value.line == 3 and "duplicate" in exc.value.reason and exc.value.source == "<text>"
    with pytest.raises(ParseError) as exc:
        read_table(f"{HEADER}\n1,0.1,a,true\n2,zz,a,true\nq,0.1,a,true\n", S, strict=True)
    assert exc.value.line == 3 and "zz" in str(exc.value)


def test_missing_header_column_names_file_line_and_units(tmp_path: Path) -> None:
    p = tmp_path / "broken.csv"
    p.write_text("# a comment first\nn,name,ok\n1,a,true\n")
    with pytest.raises(SchemaError) as exc:
        read_table(p, S)
    msg = str(exc.value)
    assert f"{p}:2:" in msg and "['time_s']" in msg
    assert "time_s (s)" in msg and "n (count)" in msg  # expected columns with their units


def test_missing_optional_column_is_fine_but_empty_input_is_not() -> None:
    assert len(read_table(f"{HEADER}\n", S)) == 0
    with pytest.raises(SchemaError, match="empty table"):
        read_table(io.StringIO("# only a comment\n"), S)


def test_reads_paths_streams_and_compressed_files(tmp_path: Path) -> None:
    text = f"{HEADER}\n1,0.1,a,true\n2,0.2,b,false\n"
    plain, gz, bz = tmp_path / "t.csv", tmp_path / "t.csv.gz", tmp_path / "t.csv.bz2"
    plain.write_text(text)
    gz.write_bytes(gzip.compress(text.encode()))
    bz.write_bytes(bz2.compress(text.encode()))
    frames = [read_table(src, S) for src in (plain, str(gz), bz, io.StringIO(text), io.BytesIO(gzip.compress(text.encode())))]
    for df in frames:
        assert df["n"].tolist() == [1, 2]
    assert frames[1].attrs["source"] == str(gz)


def test_several_files_concatenate_and_rejects_name_their_file(tmp_path: Path) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text(f"{HEADER}\n1,0.1,a,true\n")
    b.write_text(f"{HEADER}\n2,0.2,b,true\n3,bad,c,true\n")
    df = read_table([a, b], S)
    assert df["n"].tolist() == [1, 2] and df.attrs["source"] == [str(a), str(b)]
    rej = _rejects(df)
    assert rej["source"].tolist() == [str(b)] and rej["line"].tolist() == [3]


def test_usage_errors() -> None:
    with pytest.raises(UsageError, match="not in schema"):
        read_table(f"{HEADER}\n", S, rules={"nope": AtLeast(0)})
    with pytest.raises(UsageError, match="not in schema"):
        read_table(f"{HEADER}\n", S, key=("nope",))
    with pytest.raises(InputNotFoundError):
        read_table("/nonexistent/table.csv", S)


def test_every_rejected_row_is_counted() -> None:
    lines = ["1,0.1,a,true", "", "garbage", "# c", "2,0.2,b,true,extra", "3,-1,c,false"]
    df = read_table(HEADER + "\n" + "\n".join(lines) + "\n", S, rules={"time_s": AtLeast(0)})
    data_lines = [ln for ln in lines if ln.strip() and not ln.startswith("#")]
    assert len(df) + len(df.attrs["rejects"]) == len(data_lines)


_CELLS = {
    "int": ["0", "7", "-3", "+4", "007", " 12 ", "1_000", "3.0", "1e3", "0x10", "99999999999999999999", "١٢",
            "", "x", "nan"],
    "float": ["0.5", "-1e-3", ".5", "5.", "+.25", "1E5", "4.9e-324", "1e400", "inf", "nan", "0x1p3", "1_0.5",
              " 2.5", "", "y"],
    "string": ["alpha", " beta ", "", "gamma delta", "é", "a\x1fb", "\x1fz"],
    "bool": ["true", "TRUE", "tRuE", "1", "false", "0", "False", "yes", "", " true "],
}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(*(st.sampled_from(_CELLS[k]) for k in ("int", "float", "string", "bool"))),
                min_size=1, max_size=12),
       st.booleans(), st.booleans())
def test_a_table_read_at_once_equals_it_read_record_by_record(rows: list[tuple[str, ...]], keyed: bool,
                                                              checked: bool) -> None:
    """Clean tables are parsed column-wise in Arrow; any cell Arrow might read otherwise sends the whole
    table through the record-by-record reader, so both ways give the same frame, rejects and errors."""
    import workbench.tables as tables

    text = HEADER + "\n" + "\n".join(",".join(r) for r in rows) + "\n"
    kw: dict[str, Any] = {"rules": {"time_s": AtLeast(-1.0), "name": NonEmpty()}}
    if keyed:
        kw["key"] = ("n",)
    if checked:
        kw["check"] = lambda rec: None if rec["n"] != 7 else "seven is not allowed"
    fast = read_table(text, S, **kw)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tables, "_columns_at_once", lambda *a, **k: None)
        slow = read_table(text, S, **kw)
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    pd.testing.assert_frame_equal(_rejects(fast), _rejects(slow))


def test_a_clean_table_is_read_at_once() -> None:
    import workbench.tables as tables

    got = tables._columns_at_once(["1,0.5,a,true", "2,1e-3,b,0"], 4, {"n": 0, "time_s": 1, "name": 2, "ok": 3},
                                  {c.name: c.kind for c in S.columns}, {}, (), None)
    assert got is not None
    assert got["n"].tolist() == [1, 2] and got["time_s"].tolist() == [0.5, 0.001]
    assert got["name"].tolist() == ["a", "b"] and got["ok"].tolist() == [True, False]
