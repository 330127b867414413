"""Scaling analyses on the published two-phase-commit tables and on synthetic data."""
from __future__ import annotations

import gzip
import io
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import ParseError, SchemaError, UsageError
from workbench.models import scaling as sc
from workbench.schema import validate

DATA = "data/05_actor_bottlenecks"


@pytest.fixture(scope="module")
def times() -> pd.DataFrame:
    return sc.read_iteration_times(f"{DATA}/iteration_times.csv")


@pytest.fixture(scope="module")
def cores() -> pd.DataFrame:
    return sc.read_cores_times(f"{DATA}/cores_times.csv")


# ---------------------------------------------------------------- loaders

def test_bundled_tables_load_whole(times: pd.DataFrame, cores: pd.DataFrame) -> None:
    loc = sc.read_lines_of_code(f"{DATA}/lines_of_code.csv")
    assert len(times) == 75 and len(cores) == 24 and len(loc) == 12
    for f in (times, cores, loc):
        assert len(f.attrs["rejects"]) == 0
    validate(times, sc.ITERATION_TIMES_SCHEMA)
    # the published totals are the sums of the per-actor lines
    assert loc.groupby("iteration")["lines"].sum().to_dict() == {1: 143, 2: 132, 3: 125}
    cell = times[(times.iteration == 1) & (times.banks == 5) & (times.clients_per_bank == 10)].iloc[0]
    assert cell.time_s == pytest.approx(2.892) and cell.clients == 50 and cell.transfers == 2450


def test_loader_rejects_bad_rows_with_reasons() -> None:
    text = ("iteration,banks,clients_per_bank,time_s\n"
            "1,1,2,0.001\n"
            "1,1,x,0.002\n"          # not a number
            "1,1,4,-0.5\n"           # negative time
            "1,1,2,0.003\n"          # duplicate key
            "1,1,6\n"                # missing field
            "\n# a comment\n"
            "1,0,6,0.1\n"            # zero banks
            "2,1,2,0.004\n")
    df = sc.read_iteration_times(text)
    assert len(df) == 2
    rej = df.attrs["rejects"].frame()
    assert len(rej) == 5
    reasons = " | ".join(rej["reason"])
    for word in ("whole number", "expected >= 0", "duplicate", "expected 4 fields", "at least 1"):
        assert word in reasons
    assert list(rej["line"][:4]) == [3, 4, 5, 6]


def test_loader_strict_names_file_line_and_text() -> None:
    with pytest.raises(ParseError) as exc:
        sc.read_cores_times("iteration,cores,time_s\n1,1,0.001\n1,2,abc\n", strict=True)
    assert exc.value.line == 3 and "abc" in str(exc.value) and "<text>" in str(exc.value)


def test_loader_missing_column_is_a_clear_error() -> None:
    with pytest.raises(SchemaError, match="lacks column"):
        sc.read_cores_times("iteration,time_s\n1,0.001\n")


def test_loader_reads_streams_and_gzip(tmp_path) -> None:
    text = "iteration,actor,lines\n1,coordinator,44\n"
    assert len(sc.read_lines_of_code(io.StringIO(text))) == 1
    p = tmp_path / "loc.csv.gz"
    p.write_bytes(gzip.compress(text.encode()))
    assert sc.read_lines_of_code(p).iloc[0]["lines"] == 44


@settings(max_examples=60)
@given(st.lists(st.text(alphabet="0123456789.,-x \t", max_size=20), max_size=15))
def test_every_line_is_parsed_or_rejected(lines: list[str]) -> None:
    text = "iteration,cores,time_s\n" + "\n".join(lines) + "\n"
    df = sc.read_cores_times(text)
    counted = sum(1 for ln in lines if ln.strip() and not ln.lstrip().startswith("#"))
    assert len(df) + len(df.attrs["rejects"]) == counted


# ---------------------------------------------------------------- power laws

def test_iteration1_exponent_clearly_above_iteration2(times: pd.DataFrame) -> None:
    fits = sc.fit_power_laws(times)
    f1, f2 = fits[1], fits[2]
    assert f1.exponent_low > f2.exponent_high, (f1, f2)
    assert 1.9 < f1.exponent < 2.5 and 0.8 < f2.exponent < 1.6
    # the floor is stated and the excluded cells are counted
    assert (f1.n_used, f1.n_excluded) == (13, 12)
    assert f2.n_used + f2.n_excluded == 25 and f2.min_time_s == sc.DEFAULT_MIN_TIME_S


def test_power_law_recovers_a_known_exponent() -> None:
    rng = np.random.default_rng(0)
    x = np.geomspace(10, 1e4, 30)
    y = 1e-5 * x**1.7 * np.exp(0.05 * rng.standard_normal(x.size))
    f = sc.fit_power_law(x, y, min_time_s=0)
    assert f.exponent_low < 1.7 < f.exponent_high and abs(f.exponent - 1.7) < 0.05


def test_power_law_refuses_too_few_cells() -> None:
    with pytest.raises(ValueError, match="need 3"):
        sc.fit_power_law([1, 2, 3, 4], [0.0, 0.0, 0.02, 0.03], min_time_s=0.01)


def test_printed_zeros_are_never_fitted(times: pd.DataFrame) -> None:
    sens = sc.floor_sensitivity(times, [0.0001])
    zeros = times[times.time_s == 0].groupby("iteration").size()
    for _, r in sens.iterrows():
        assert r.n_excluded == zeros.get(r.iteration, 0)


# ---------------------------------------------------------------- speed-ups

def test_max_speedup_1_over_2_is_about_60(times: pd.DataFrame) -> None:
    sp = sc.speedups(times, 1, 2)
    best = sc.max_speedup(sp)
    assert (best.banks, best.clients_per_bank) == (5, 10)
    assert best.speedup == pytest.approx(2.892 / 0.047)
    assert 55 < best.speedup < 65
    assert best.speedup_low == pytest.approx(2.8915 / 0.0475) and best.speedup_high == pytest.approx(2.8925 / 0.0465)
    assert best.rel_uncertainty < 0.02 and best.resolved


def test_speedup_noise_floor_on_tiny_cells(times: pd.DataFrame) -> None:
    sp = sc.speedups(times, 1, 2).set_index(["banks", "clients_per_bank"])
    assert not sp.loc[(1, 2), "defined"] and math.isnan(sp.loc[(1, 2), "speedup"])
    one = sp.loc[(4, 2)]  # 0.001 / 0.001: anything from 1/3 to 3
    assert one.speedup == 1 and one.speedup_low == pytest.approx(1 / 3) and one.speedup_high == pytest.approx(3)
    assert not one.resolved


def test_iteration3_vs_2_not_claimed_without_ci_support(times: pd.DataFrame) -> None:
    c = sc.compare_iterations(times, 2, 3)
    ratio_excludes_one = c.ratio_low > 1 or c.ratio_high < 1
    assert c.distinguishable == (ratio_excludes_one or not c.exponents_overlap)
    # on the published tables, at the stated floor, neither test supports a difference
    assert not c.distinguishable
    assert c.ratio_low < 1 < c.ratio_high and c.exponents_overlap
    assert "includes 1" in c.reason


def test_compare_detects_a_real_difference(times: pd.DataFrame) -> None:
    fake = times.copy()
    slow = fake[fake.iteration == 2].copy()
    slow["iteration"] = 4
    slow["time_s"] = (slow["time_s"] * 2).round(3)
    c = sc.compare_iterations(pd.concat([fake, slow], ignore_index=True), 4, 2)
    assert c.distinguishable and c.ratio_low > 1.5


# ---------------------------------------------------------------- USL

def _synthetic(n_max: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = np.arange(1, n_max + 1)
    return n, sc.usl_throughput(n, 1000.0, 0.05, 0.0005) * (1 + 0.02 * rng.standard_normal(n.size))


@pytest.mark.parametrize("seed", [1, 2])
def test_usl_recovers_sigma_kappa_past_the_peak(seed: int) -> None:
    n, x = _synthetic(128, seed)
    f = sc.fit_usl(n, x, n_boot=60, seed=seed)
    assert abs(f.sigma / 0.05 - 1) < 0.10 and abs(f.kappa / 0.0005 - 1) < 0.10
    assert f.kappa_identifiable and f.retrograde and f.adequate
    assert f.n_star == pytest.approx(math.sqrt(0.95 / 0.0005), rel=0.10)
    assert f.kappa_low < 0.0005 < f.kappa_high


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_usl_says_kappa_unidentifiable_well_before_the_peak(seed: int) -> None:
    n, x = _synthetic(128, seed)
    f = sc.fit_usl(n[:16], x[:16], n_boot=60, seed=seed)
    assert not f.kappa_identifiable and not f.retrograde
    assert "not identifiable" in f.note


def test_usl_needs_four_distinct_n() -> None:
    with pytest.raises(ValueError, match="at least 4"):
        sc.fit_usl([1, 2, 3], [1.0, 1.8, 2.5])


def test_cores_table_is_retrograde_and_not_usl_shaped(cores: pd.DataFrame, times: pd.DataFrame) -> None:
    thr = sc.cores_throughput(cores)
    assert (thr["transfers"] == 80 * 79).all()
    fits = sc.usl_by_iteration(thr, n_boot=30)
    for f in fits.values():
        assert f.retrograde and f.n_star is not None and f.n_star < 1
        assert not f.adequate and f.rms_log_resid > 0.25
    growth = sc.time_growth_exponent(cores)
    assert growth[1].exponent_low > 2  # faster than any USL response time can grow
    hyp = sc.demand_hypotheses(cores, sc.fit_power_laws(times)).pivot(
        index="iteration", columns="hypothesis", values="rms_log_error")
    assert (hyp["demand grows"] < 0.3).all() and (hyp["fixed demand"] > 1).all()
    m = sc.grid_matches(cores, times)
    assert m[m.both_measured]["ratio"].between(0.7, 1.3).all()


# ---------------------------------------------------------------- lines of code and bottlenecks

def test_loc_summary() -> None:
    s = sc.loc_summary(sc.read_lines_of_code(f"{DATA}/lines_of_code.csv")).set_index("iteration")
    assert s.loc[3, "total_change_pct"] < -10
    assert s.loc[1, "mean_lines_per_actor"] == pytest.approx(143 / 3) and s.loc[3, "mean_lines_per_actor"] == 25


def _actors(rows: list[tuple[int, str, str, int, float]]) -> pd.DataFrame:
    return pd.DataFrame([{"iteration": it, "banks": 1, "clients_per_bank": 2, "repeat": 1, "transfers": 2,
                          "actor": a, "kind": k, "received": w, "sent": 0, "peak_mailbox": 1, "busy_s": b,
                          "peers": 1, "scanned": 0, "work": w} for it, a, k, w, b in rows])


def test_bottlenecks_pick_the_busiest_single_actor() -> None:
    acts = _actors([
        (1, "coordinator", "coordinator", 100, 0.5), (1, "bank-1", "bank", 10, 0.01), (1, "bank-2", "bank", 10, 0.01),
        # many transactions together outweigh the bank, but no single one does
        (2, "coordinator", "coordinator", 5, 0.001), (2, "bank-1", "bank", 30, 0.002),
        *[(2, f"tx-{i}", "transaction", 3, 0.0001) for i in range(40)],
    ])
    b = sc.bottlenecks(acts).set_index("iteration")
    assert b.loc[1, "kind"] == "coordinator" and b.loc[1, "dominance"] == pytest.approx(10)
    assert b.loc[2, "kind"] == "bank" and b.loc[2, "runner_up_kind"] == "coordinator"
    assert sc.bottleneck_by_iteration(acts, by="busy_s") == {1: "coordinator", 2: "bank"}
    shares = sc.kind_shares(acts)
    tx = shares[(shares.iteration == 2) & (shares.kind == "transaction")].iloc[0]
    assert tx.actors == 40 and tx.work_share > 0.5
    with pytest.raises(ValueError, match="unknown metric"):
        sc.bottlenecks(acts, by="nope")


def test_analyses_name_the_columns_they_need(times: pd.DataFrame, cores: pd.DataFrame) -> None:
    with pytest.raises(SchemaError, match=r"fit_power_laws needs column\(s\) \['transfers'\]"):
        sc.fit_power_laws(cores)
    with pytest.raises(SchemaError, match=r"speedups needs column\(s\)"):
        sc.speedups(cores)
    with pytest.raises(SchemaError, match=r"usl_by_iteration needs column\(s\) \['throughput_per_s'\]"):
        sc.usl_by_iteration(cores)
    with pytest.raises(SchemaError, match=r"grid_matches needs column\(s\) \['cores'\]"):
        sc.grid_matches(times, times)
    with pytest.raises(SchemaError, match=r"loc_summary needs column\(s\) \['lines'\]"):
        sc.loc_summary(times)
    with pytest.raises(SchemaError, match="kind_shares needs column"):
        sc.kind_shares(times)
    with pytest.raises(UsageError, match="numerator=1 and denominator=9"):
        sc.speedups(times, 1, 9)
    with pytest.raises(UsageError, match="min_time_s=100"):
        sc.fit_power_law([1, 2, 3], [1.0, 2.0, 3.0], min_time_s=100)
