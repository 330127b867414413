"""Findings: JSON conversion, validation and read-back from an executed notebook."""
from __future__ import annotations

import nbformat
import numpy as np
import pandas as pd
import pytest

from workbench.errors import ParseError, UsageError
from workbench.findings import (
    FINDING_MIME,
    FINDING_VERSION,
    LEGACY_FINDING_MIME,
    format_value,
    read_findings,
    record_finding,
    to_jsonable,
)


def test_to_jsonable_converts_numpy_and_pandas() -> None:
    value = {np.int64(40): np.float64(1.5), "arr": np.array([1, 2]), "s": pd.Series({10.0: 3}),
             "nan": float("nan"), "flag": np.bool_(True), "t": (1, 2)}
    assert to_jsonable(value) == {"40": 1.5, "arr": [1, 2], "s": {"10": 3}, "nan": None, "flag": True, "t": [1, 2]}


def test_unserialisable_value_is_refused() -> None:
    with pytest.raises(UsageError, match="not JSON-serialisable"):
        record_finding("bad", object())
    with pytest.raises(UsageError, match=r"record_finding\(name=\.\.\.\).*identifier.*'bad name!'"):
        record_finding("bad name!", 1)
    with pytest.raises(ValueError, match="identifier"):  # a UsageError is a ValueError
        record_finding("", 1)


def test_record_outside_ipython_returns_finding() -> None:
    f = record_finding("slope", np.float64(1.07), unit="ms/ms", explain="why")
    assert f.value == 1.07 and isinstance(f.value, float)


def test_read_findings_last_one_wins() -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("")
    for v in (1, 2):
        cell.outputs.append(nbformat.v4.new_output(
            "display_data", data={FINDING_MIME: {"name": "n", "value": v, "unit": None, "explain": None}}))
    nb.cells = [cell]
    assert read_findings(nb)["n"].value == 2


def _notebook(*outputs: dict) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("")
    for data in outputs:
        cell.outputs.append(nbformat.v4.new_output("display_data", data=data))
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), cell]
    return nb


def test_mime_type_carries_the_format_version() -> None:
    assert FINDING_VERSION == 3
    assert FINDING_MIME == "application/vnd.workbench.finding.v3+json"
    assert LEGACY_FINDING_MIME == "application/vnd.workbench.finding+json"


def test_read_findings_reads_the_unversioned_mime_type_of_older_notebooks() -> None:
    old = {"name": "old", "value": [1, 2], "unit": "ms", "explain": "before versions"}
    new = {"name": "new", "value": 3, "unit": None, "explain": None}
    found = read_findings(_notebook({LEGACY_FINDING_MIME: old}, {FINDING_MIME: new}))
    assert found["old"].value == [1, 2] and found["old"].unit == "ms" and found["old"].explain == "before versions"
    assert found["new"].value == 3
    # the JSON text form some writers store reads the same
    assert read_findings(_notebook({LEGACY_FINDING_MIME: '{"name": "t", "value": 1}'}))["t"].value == 1


def test_read_findings_refuses_newer_formats_and_broken_payloads(tmp_path) -> None:
    newer = _notebook({"application/vnd.workbench.finding.v4+json": {"name": "n", "value": 1}})
    with pytest.raises(ParseError, match=r"cell 1: finding format v4 is newer.*v3"):
        read_findings(newer)
    path = tmp_path / "broken.ipynb"
    nbformat.write(_notebook({FINDING_MIME: {"value": 1}}), str(path))
    with pytest.raises(ParseError, match=r"broken\.ipynb: cell 1: not a finding: expected an object with 'name'"):
        read_findings(path)
    with pytest.raises(ParseError, match=r"unexpected keys \['colour'\]"):
        read_findings(_notebook({FINDING_MIME: {"name": "n", "value": 1, "colour": "red"}}))
    with pytest.raises(ParseError, match="not valid JSON"):
        read_findings(_notebook({FINDING_MIME: "{nope"}))
    with pytest.raises(ParseError, match=r"unexpected keys \['headline'\] for a v2 finding"):
        read_findings(_notebook({"application/vnd.workbench.finding.v2+json": {"name": "n", "value": 1,
                                                                               "headline": True}}))
    with pytest.raises(ParseError, match="'headline' must be true or false"):
        read_findings(_notebook({FINDING_MIME: {"name": "n", "value": 1, "headline": "yes"}}))


def test_headline_findings_say_so_and_others_keep_their_payload() -> None:
    f = record_finding("tail_worse", {"verdict": "yes", "because": "CIs do not overlap", "evidence": {}},
                       headline=True)
    assert f.headline and f.to_json()["headline"] is True
    assert "headline" not in record_finding("n", 1).to_json()
    assert read_findings(_notebook({FINDING_MIME: f.to_json()}))["tail_worse"].headline
    assert format_value(f.value) == "yes — CIs do not overlap"


def test_format_value() -> None:
    assert format_value(1.23456, "ms") == "1.23 ms"
    assert format_value(1.563053e11, "bytes") == "146 GiB" and format_value(1e4, "ms") == "10 s"
    assert format_value(120.0, "rows") == "120 rows" and format_value(0.21) == "0.21"
    assert format_value({"1": 0.5, "2": [1.0, 2]}) == "{1: 0.5, 2: [1, 2]}"
    assert format_value({"10": 1, "5": 2, "100": 3}, "ms") == "{5: 2 ms, 10: 1 ms, 100: 3 ms}"
    assert format_value({"b": 1, "a": 2}) == "{b: 1, a: 2}"
    assert format_value([], "ms") == "none"


def test_findings_carry_ci_tolerance_and_direction() -> None:
    f = record_finding("p99_ms", np.float64(12.5), unit="ms", ci=(np.float64(11.0), 14.25), better="lower")
    assert f.ci == [11.0, 14.25] and f.better == "lower"
    assert f.to_json() == {"name": "p99_ms", "value": 12.5, "unit": "ms", "explain": None,
                           "ci": [11.0, 14.25], "better": "lower"}
    assert f.uncertainty() == {"ci": [11.0, 14.25], "better": "lower"}
    # the old call keeps its old payload: no uncertainty keys at all
    assert record_finding("n", 3, unit="rows", explain="x").to_json() == {
        "name": "n", "value": 3, "unit": "rows", "explain": "x"}
    assert record_finding("r", 0.5, rel_tolerance=0.05).rel_tolerance == 0.05
    assert record_finding("n2", 7, tolerance=np.int64(2)).tolerance == 2.0  # numpy scalars are numbers too
    by_rate = record_finding("p99_by_rate", pd.Series({10.0: 1.0, 20.0: 2.0}),
                             ci=(pd.Series({10.0: 0.9, 20.0: 1.8}), pd.Series({10.0: 1.1, 20.0: float("nan")})))
    assert by_rate.ci == [{"10": 0.9, "20": 1.8}, {"10": 1.1, "20": None}]  # a NaN bound: no CI for that element


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"ci": (2.0, 1.0)}, r"ci = \(2.0, 1.0\) must be two numbers with low <= high"),
    ({"ci": (1.0,)}, "ci= must be a pair"),
    ({"ci": ([1.0], [2.0])}, "ci= bounds must have the value's shape"),
    ({"tolerance": -1}, "tolerance= must be a finite number >= 0"),
    ({"rel_tolerance": "5%"}, "rel_tolerance= must be a finite number >= 0"),
    ({"better": "smaller"}, "better= must be 'lower' or 'higher'"),
])
def test_wrong_uncertainty_is_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        record_finding("x", 1.5, **kwargs)


def test_read_findings_reads_v2_payloads_and_refuses_v2_keys_in_v1() -> None:
    v2 = {"name": "p", "value": 2.0, "unit": "ms", "explain": None, "ci": [1.5, 2.5], "tolerance": 0.1,
          "better": "higher"}
    f = read_findings(_notebook({FINDING_MIME: v2}))["p"]
    assert (f.ci, f.tolerance, f.better) == ([1.5, 2.5], 0.1, "higher")
    with pytest.raises(ParseError, match=r"unexpected keys \['better', 'ci', 'tolerance'\] for a v1 finding"):
        read_findings(_notebook({"application/vnd.workbench.finding.v1+json": v2}))
    with pytest.raises(ParseError, match="better= must be 'lower' or 'higher'"):
        read_findings(_notebook({FINDING_MIME: dict(v2, better="up")}))
