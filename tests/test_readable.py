"""One formatting layer: what a person reads never shows scientific notation, float counts or mixed units."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from workbench import readable as R


@pytest.mark.parametrize(("x", "text"), [
    (0.0337, "0.0337"), (40.62, "40.6"), (1.068, "1.07"), (12345.6, "12,346"), (1e-9, "0.000000001"),
    (0.21, "0.21"), (1e4, "10,000"), (-3.5, "-3.5"), (0, "0"), (float("nan"), "—"), (None, "—"),
    (float("inf"), "∞"),
])
def test_number_has_no_scientific_notation(x: float, text: str) -> None:
    assert R.number(x) == text


def test_units_that_fit() -> None:
    assert R.count(120.0) == "120" and R.count(100537) == "100,537" and R.count(2.5) == "2.5"
    assert R.size(512) == "512 B" and R.size(157_696) == "154 KiB" and R.size(1.563053e11) == "146 GiB"
    assert R.duration(0.0482) == "48.2 ms" and R.duration(3.1e-6) == "3.1 µs" and R.duration(150) == "2.5 min"
    assert R.duration(1.0) == "1 s" and R.duration(0.9996) == "1 s" and R.duration(7200) == "2 h"
    assert R.when(1_425_600_000) == "2015-03-06 00:00:00 UTC" and R.when(1_425_600_000.25).endswith(".250 UTC")
    assert R.times(44.98) == "45×" and R.times(14.13) == "14.1×" and R.percent(0.419) == "41.9 %"


def test_values_of_findings_by_unit() -> None:
    assert R.value(1004.6, "ms") == "1 s" and R.value(250.45, "ms") == "250 ms"
    assert R.value([254.0, 504.7], "ms") == "[254 ms, 505 ms]" and R.value([], "ms") == "none"
    assert R.value({"1000": 10, "250": 10, "500": 9}, "calls") == "{250: 10 calls, 500: 9 calls, 1000: 10 calls}"
    assert R.value(61.53191489361702, "×") == "61.5×" and R.value(True) == "yes" and R.value(None, "ms") == "—"
    assert R.value(0.0337) == "0.0337" and R.value(3, "requests/s") == "3 requests/s"
    assert R.value("network ruled out") == "network ruled out"


def test_table_formats_by_column_name_and_escapes_text() -> None:
    frame = pd.DataFrame({"host": ["<b>fe01</b>"], "rx_bytes": [1.563053e11], "latency_s": [0.0482],
                          "p99_ms": [91.9], "calls": np.array([120], dtype="int64"), "timestamp_s": [1.4256e9],
                          "over_per_s": [3.25], "share": [0.5], "ok": [True]})
    html = R.table(frame).to_html()
    for text in ("&lt;b&gt;fe01&lt;/b&gt;", "146 GiB", "48.2 ms", "91.9 ms", ">120<", "2015-03-06 00:00:00 UTC", "3.25/s",
                 "50 %", ">yes<"):
        assert text in html, text
    assert not re.search(r"\de[+-]\d", html)
