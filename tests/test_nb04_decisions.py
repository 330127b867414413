"""The decision rules of the yields investigation, on synthetic saves built for each outcome.

Each rule (yield cost from a fit, yield cost from a pass count, offloading) answers yes,
no and inconclusive here on data made so that only one answer is right, and says why
with the numbers it used.
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from workbench.lab.yields import read_capture
from workbench.models.yields import (
    LognormalLag,
    fit_duration,
    fit_lab,
    fit_yields,
    lab_lag_column,
    lab_summary,
    offload_comparison,
    offload_decision,
    passes_per_yield_decision,
    read_published,
    weigh_options,
    yield_cost_decision,
)


def _table(passes_per_yield: float, noise_ms: float, n: int = 12, seed: int = 0) -> pd.DataFrame:
    """Saves whose duration is ``passes_per_yield`` × yields × lag plus Gaussian noise."""
    rng = np.random.default_rng(seed)
    yields = np.repeat([20, 40, 80, 160], n // 4)
    lag = np.resize([5.0, 10.0, 20.0], n)
    dur = passes_per_yield * yields * lag + 3.0 + rng.normal(0, noise_ms, n)
    return pd.DataFrame({"yields": yields, "event_loop_ms": lag, "duration_ms": dur})


# --------------------------------------------------------------------------- yield cost from a fit

def test_yield_cost_yes_when_the_interval_sits_near_one_pass() -> None:
    d = yield_cost_decision(fit_duration(_table(1.05, 20.0)), what="synthetic")
    assert d.verdict == "yes"
    assert d.evidence["ci_lo"] >= 0.75 and d.evidence["ci_hi"] <= 1.25
    assert "each yield waits about one loop pass" in d.because and "1.05" in d.because


def test_yield_cost_no_when_each_yield_costs_two_passes() -> None:
    d = yield_cost_decision(fit_duration(_table(2.0, 20.0)), what="synthetic")
    assert d.verdict == "no" and d.evidence["ci_lo"] > 1.25
    assert "more than one loop pass" in d.because and "2.00" in d.because


def test_yield_cost_no_when_yields_cost_less_than_a_pass() -> None:
    d = yield_cost_decision(fit_duration(_table(0.4, 5.0)), what="synthetic")
    assert d.verdict == "no" and d.evidence["ci_hi"] < 0.75
    assert "fewer than one loop pass" in d.because


def test_yield_cost_inconclusive_on_scattered_points() -> None:
    d = yield_cost_decision(fit_duration(_table(1.0, 4000.0, n=4, seed=3)), what="synthetic")
    assert d.verdict == "inconclusive"
    assert d.evidence["ci_lo"] < 0.75 or d.evidence["ci_hi"] > 1.25
    assert "only 4 points" in " ".join(d.caveats)


def test_yield_cost_inconclusive_says_when_the_interval_includes_zero() -> None:
    d = yield_cost_decision(fit_duration(_table(0.0, 3000.0, n=4, seed=1)), what="synthetic")
    assert d.verdict == "inconclusive" and d.evidence["ci_lo"] < 0 < d.evidence["ci_hi"]
    assert "includes 0" in d.because


def test_yield_cost_margin_is_a_parameter() -> None:
    fit = fit_duration(_table(1.3, 10.0))
    assert yield_cost_decision(fit, margin=0.25).verdict == "no"
    assert yield_cost_decision(fit, margin=0.5).verdict == "yes"


def test_yield_cost_summary_is_json_ready() -> None:
    import json

    s = yield_cost_decision(fit_duration(_table(1.0, 10.0))).summary()
    assert json.loads(json.dumps(s))["verdict"] == "yes"


# --------------------------------------------------------------------------- yield cost counted

def _capture(ratios: list[float], mode: str = "yielding") -> pd.DataFrame:
    yields = np.full(len(ratios), 40)
    return pd.DataFrame({"mode": mode, "yields": yields, "passes": np.round(yields * np.asarray(ratios)).astype(int)})


def test_pass_count_yes_no_inconclusive() -> None:
    assert passes_per_yield_decision(_capture([1.0, 1.0, 1.025, 1.0])).verdict == "yes"
    no = passes_per_yield_decision(_capture([2.0, 2.05, 1.95, 2.0]))
    assert no.verdict == "no" and "more than one loop pass" in no.because
    inc = passes_per_yield_decision(_capture([0.8, 1.3, 1.1, 0.9]))
    assert inc.verdict == "inconclusive" and "straddles" in inc.because


def test_pass_count_needs_two_saves_for_an_interval() -> None:
    d = passes_per_yield_decision(_capture([1.0]))
    assert d.verdict == "inconclusive" and "no interval" in " ".join(d.caveats)


def test_pass_count_zero_width_interval_is_a_caveat() -> None:
    d = passes_per_yield_decision(_capture([1.0, 1.0, 1.0]))
    assert d.verdict == "yes" and "zero width" in " ".join(d.caveats)


# --------------------------------------------------------------------------- offloading

def _modes(off_per_section_ms: float, yield_per_section_ms: float = 2.0, noise_ms: float = 1.0,
           seed: int = 0, hog: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for s in (2, 4, 8):
        for lag in (1.0, 5.0, 10.0):
            for mode, k in (("yielding", yield_per_section_ms), ("offloaded", off_per_section_ms)):
                row = {"mode": mode, "sections": s, "yields": 5 * s if mode == "yielding" else 1,
                       "lag_ms_measured": lag, "duration_ms": 5.0 + k * s * lag + rng.normal(0, noise_ms)}
                if hog:
                    row["hog_ms"] = lag
                rows.append(row)
    return pd.DataFrame(rows)


def test_offload_yes_when_the_offloaded_save_is_flat() -> None:
    d = offload_decision(offload_comparison(_modes(0.0)))
    assert d.verdict == "yes" and "do not overlap" in d.because
    assert d.evidence["speedup"] > 10


def test_offload_no_when_the_offloaded_save_grows_as_fast() -> None:
    d = offload_decision(offload_comparison(_modes(2.5)))
    assert d.verdict == "no" and "at least as fast" in d.because


def test_offload_inconclusive_when_intervals_overlap() -> None:
    d = offload_decision(offload_comparison(_modes(1.6, noise_ms=60.0, seed=2)))
    assert d.verdict == "inconclusive" and "overlap" in d.because


def test_offload_inconclusive_when_yielding_saves_do_not_grow() -> None:
    d = offload_decision(offload_comparison(_modes(0.0, yield_per_section_ms=0.0)))
    assert d.verdict == "inconclusive" and "nothing for offloading to remove" in d.because


def test_offload_without_hog_column_uses_the_measured_lag() -> None:
    c = offload_comparison(_modes(0.0, hog=False))
    assert np.isnan(c.worst_hog_ms) and c.worst_sections == 8 and c.worst_lag_ms == 10.0
    assert c.speedup > 10 and np.isfinite(c.offloaded_passes)
    assert "measured lag about 10.0 ms" in offload_decision(c).because
    assert "hog_ms" not in lab_summary(_modes(0.0, hog=False)).columns


def test_options_leave_out_an_offload_that_was_not_measured() -> None:
    pub = read_published(io.StringIO("sections,event_loop_ms,duration_ms,yields\n4,25,1532,59\n4,50,3084,59\n"
                                     "8,25,2966,107\n8,50,5682,107\n"))
    opts = weigh_options(fit_duration(pub), fit_yields(pub), 8, 10_000.0, LognormalLag(25.0, 0.5),
                         offloaded_passes=None)
    assert "offload save" not in set(opts["option"])


# --------------------------------------------------------------------------- inputs with fewer columns

def test_capture_without_optional_columns_keeps_every_row() -> None:
    text = ("mode,sections,yields,lag_ms_measured,duration_ms\n"
            "yielding,2,20,5.0,101\nyielding,4,40,5.0,203\nyielding,8,80,10.0,801\noffloaded,8,1,10.0,30\n")
    cap = read_capture(text)
    assert len(cap) == 4 and len(cap.attrs["rejects"]) == 0
    assert "passes" not in cap.columns and "fs_ms" not in cap.columns
    assert lab_lag_column(cap) == "lag_ms_measured"
    assert fit_lab(cap).slope == pytest.approx(1.0, abs=0.02)
    with pytest.raises(Exception, match="passes"):
        passes_per_yield_decision(cap)


def test_capture_optional_columns_are_checked_when_present() -> None:
    text = ("mode,sections,yields,lag_ms_measured,duration_ms,passes\n"
            "yielding,2,20,5.0,101,20\nyielding,4,40,5.0,203,-3\n")
    cap = read_capture(text)
    assert len(cap) == 1
    assert "passes" in cap.attrs["rejects"].frame()["reason"].iloc[0]


def test_capture_without_a_required_column_names_it() -> None:
    from workbench.errors import SchemaError

    with pytest.raises(SchemaError, match="lag_ms_measured"):
        read_capture("mode,sections,yields,duration_ms\nyielding,2,20,101\n")


def test_table_without_sections_loads_and_fits() -> None:
    pub = read_published("event_loop_ms,duration_ms,yields\n25,1532,59\n50,3084,59\n25,2966,107\n")
    assert "sections" not in pub.columns and len(pub) == 3
    assert yield_cost_decision(fit_duration(pub)).verdict in ("yes", "inconclusive")
    bad = read_published("sections,event_loop_ms,duration_ms,yields\n0,25,1532,59\n4,25,1532,59\n")
    assert len(bad) == 1 and "sections" in bad.attrs["rejects"].frame()["reason"].iloc[0]
