"""Findings: JSON conversion, validation and read-back from an executed notebook."""
from __future__ import annotations

import nbformat
import numpy as np
import pandas as pd
import pytest

from workbench.findings import (
    FINDING_MIME,
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
    with pytest.raises(TypeError, match="not JSON-serialisable"):
        record_finding("bad", object())
    with pytest.raises(ValueError, match="identifier"):
        record_finding("bad name!", 1)


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


def test_format_value() -> None:
    assert format_value(1.23456, "ms") == "1.235 ms"
    assert format_value({"1": 0.5, "2": [1.0, 2]}) == "{1: 0.5, 2: [1, 2]}"
    assert format_value({"10": 1, "5": 2, "100": 3}, "ms") == "{5: 2, 10: 1, 100: 3} ms"
    assert format_value({"b": 1, "a": 2}) == "{b: 1, a: 2}"
