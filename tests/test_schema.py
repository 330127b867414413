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
    rej = df.attrs["rejects"].frame()
    assert list(rej.columns) == ["source", "line", "text", "reason"]
    assert rej.iloc[0].to_dict() == {"source": "f.csv", "line": 3, "text": "garbage", "reason": "expected a number"}


def test_parse_error_names_file_line_and_text() -> None:
    e = ParseError("trace.txt", 12, "bad line", "expected ') = '")
    assert str(e) == "trace.txt:12: expected ') = ': 'bad line'"


def test_rejects_are_a_value_pandas_carries_through_concat_copy_and_pickle() -> None:
    import copy
    import pickle

    from workbench.schema import Rejects, rejects_of

    a = attach_rejects(pd.DataFrame({"x": [1, 2]}), [("a.csv", 2, "bad", "expected a number")])
    b = attach_rejects(pd.DataFrame({"x": [3]}), [("a.csv", 2, "bad", "expected a number")])
    c = attach_rejects(pd.DataFrame({"x": [4]}), [("c.csv", 5, "worse", "too many fields")])
    assert isinstance(a.attrs["rejects"], Rejects) and len(a.attrs["rejects"]) == 1
    assert a.attrs["rejects"] == b.attrs["rejects"] and a.attrs["rejects"] != c.attrs["rejects"]
    both = pd.concat([a, c], ignore_index=True)  # different attrs: no error (pandas drops them)
    assert len(both) == 3
    same = pd.concat([a, b], ignore_index=True)  # equal attrs survive
    assert len(same.attrs["rejects"]) == 1
    assert a.equals(a.copy()) and copy.deepcopy(a).attrs["rejects"] is a.attrs["rejects"]
    back = pickle.loads(pickle.dumps(a))
    assert back.attrs["rejects"] == a.attrs["rejects"]
    merged = Rejects.concat([a.attrs["rejects"], c.attrs["rejects"], None, Rejects()])
    assert merged.rows() == [("a.csv", 2, "bad", "expected a number"), ("c.csv", 5, "worse", "too many fields")]
    assert merged.by_reason().to_dict() == {"expected a number": 1, "too many fields": 1}
    view = merged.frame()
    view.loc[0, "text"] = "changed"
    assert merged.rows()[0][2] == "bad"  # the table never changes
    assert len(rejects_of(pd.DataFrame())) == 0
    assert "<table" in merged._repr_html_() and "&lt;b&gt;" in Rejects.from_rows([("f", 1, "<b>", "r")])._repr_html_()


def test_requires_names_the_analysis_and_what_is_missing() -> None:
    from workbench.errors import SchemaError, UsageError
    from workbench.schema import requires

    def percentile_table(frame: pd.DataFrame) -> pd.DataFrame:
        return requires(frame, "latency_s", "timestamp_s", kind="samples")

    ok = pd.DataFrame({"latency_s": [0.1], "timestamp_s": [1.0]})
    assert percentile_table(ok) is ok
    with pytest.raises(SchemaError, match=r"percentile_table needs column\(s\) \['timestamp_s'\]; the frame has \['latency_s'\]"):
        percentile_table(pd.DataFrame({"latency_s": [0.1]}))
    dist = ok.copy()
    dist.attrs["kind"] = "distribution"
    with pytest.raises(SchemaError, match="needs a 'samples' frame, got a 'distribution' frame"):
        percentile_table(dist)
    with pytest.raises(UsageError, match="percentile_table needs a pandas DataFrame, got list"):
        percentile_table([1, 2])  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match="rate_sweep needs"):
        requires(ok, "rate_per_s", by="rate_sweep")


def test_every_error_is_of_the_family_and_of_the_builtin_callers_catch() -> None:
    from workbench import errors

    assert issubclass(errors.UsageError, ValueError) and issubclass(errors.ParseError, ValueError)
    assert issubclass(errors.SchemaError, ValueError) and issubclass(errors.InputNotFoundError, FileNotFoundError)
    assert issubclass(errors.LabError, RuntimeError) and issubclass(errors.ArgumentTypeError, TypeError)
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.WorkbenchError)
    import pickle

    e = pickle.loads(pickle.dumps(ParseError("f", 3, "t", "r")))
    assert (e.source, e.line, e.text, e.reason) == ("f", 3, "t", "r")
