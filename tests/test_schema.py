"""The shared schema validator and the rejects table."""
from __future__ import annotations

import pandas as pd
import pytest

from workbench.errors import ParseError
from workbench.schema import Column, Schema, attach_rejects, validate

S = Schema("demo", (Column("latency_s", "float", "s"), Column("n", "int"), Column("tag", "string", required=False)),
           extra_columns_allowed=False)


def test_valid_frame_passes_and_is_tagged() -> None:
    df = validate(pd.DataFrame({"latency_s": [0.1], "n": [1]}), S)
    assert df.attrs["schema"] == "demo"


def test_all_problems_reported_at_once() -> None:
    df = pd.DataFrame({"latency_s": ["x"], "extra": [1]})
    with pytest.raises(ValueError) as err:
        validate(df, S)
    msg = str(err.value)
    assert "missing column 'n'" in msg and "'latency_s' has dtype" in msg and "unexpected columns ['extra']" in msg


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown column kind"):
        Column("x", "floaty")


def test_rejects_travel_with_the_frame() -> None:
    df = attach_rejects(pd.DataFrame({"a": [1]}), [("f.csv", 3, "garbage", "expected a number")])
    rej = df.attrs["rejects"]
    assert list(rej.columns) == ["source", "line", "text", "reason"]
    assert rej.iloc[0].to_dict() == {"source": "f.csv", "line": 3, "text": "garbage", "reason": "expected a number"}


def test_parse_error_names_file_line_and_text() -> None:
    e = ParseError("trace.txt", 12, "bad line", "expected ') = '")
    assert str(e) == "trace.txt:12: expected ') = ': 'bad line'"
