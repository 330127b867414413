"""The decision rules behind notebook 05, each on synthetic data for every outcome (yes, no, inconclusive)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.errors import SchemaError, UsageError
from workbench.models import scaling as sc

BANKS = (1, 2, 3, 4, 5)
CPB = (2, 4, 6, 8, 10)


def grid(spec: dict[int, tuple[float, float]], noise: float = 0.0, seed: int = 0,
         banks=BANKS, cpb=CPB, decimals: int = 9) -> pd.DataFrame:
    """A grid timing table: iteration → (prefactor_s, exponent), lognormal noise of sd ``noise``."""
    rng = np.random.default_rng(seed)
    lines = ["iteration,banks,clients_per_bank,time_s"]
    for it, (a, b) in spec.items():
        for nb in banks:
            for c in cpb:
                n = nb * c
                t = a * (n * (n - 1)) ** b * float(np.exp(noise * rng.standard_normal()))
                lines.append(f"{it},{nb},{c},{t:.{decimals}f}")
    return sc.read_iteration_times("\n".join(lines) + "\n")


# ----------------------------------------------------------------------------- resolution, fits

def test_resolution_is_inferred_from_printed_decimals() -> None:
    assert sc.infer_resolution_s([0.001, 0.016, 2.892, 0.0]) == 0.001
    assert sc.infer_resolution_s([0.0002, 0.1150, 0.0918]) == pytest.approx(1e-4)
    assert sc.infer_resolution_s([1.0, 2.0, 30.0]) == 1.0
    assert sc.infer_resolution_s([0.123456789, 0.2]) is None
    assert sc.infer_resolution_s([]) is None


def test_try_fit_power_laws_reports_groups_it_cannot_fit() -> None:
    t = grid({1: (1e-6, 2.0), 2: (1e-12, 1.0)})  # iteration 2 stays under the floor
    fits, reasons = sc.try_fit_power_laws(t, min_time_s=0.01)
    assert set(fits) == {1} and fits[1].exponent == pytest.approx(2.0, abs=1e-6)
    assert set(reasons) == {2} and "need 3" in reasons[2]


def test_common_exponent_recovers_a_shared_slope() -> None:
    t = grid({1: (1e-5, 1.5), 2: (3e-5, 1.5), 3: (1e-4, 1.5)}, noise=0.02)
    c = sc.fit_common_exponent(t, min_time_s=1e-4)
    assert c.exponent == pytest.approx(1.5, abs=0.01) and c.groups == (1, 2, 3) and c.n_used == 73
    assert c.exponent_low < c.exponent < c.exponent_high and c.exponent_high - c.exponent_low < 0.02
    with pytest.raises(UsageError):
        sc.fit_common_exponent(t.head(2), min_time_s=0)


# ----------------------------------------------------------------------------- exponents

def test_exponents_differ_yes_names_the_steepest() -> None:
    fits, _ = sc.try_fit_power_laws(grid({1: (1e-7, 2.2), 2: (1e-5, 1.2), 3: (1e-5, 1.2)}, noise=0.05), 1e-3)
    d = sc.compare_exponents(fits)
    assert d.verdict == "yes" and d.evidence["steepest"] == 1 and not d.evidence["pooled_warranted"]
    differs = {(p["a"], p["b"]) for p in d.evidence["pairs"] if p["differs"]}
    assert differs == {(1, 2), (1, 3)}  # 2 and 3 share an exponent
    assert d.evidence["worse_than"] == [[1, 2], [1, 3]]
    assert "Holm" in d.because and "steepest: group 1" in d.because


def test_exponents_agree_no_warrants_a_pooled_fit() -> None:
    fits, _ = sc.try_fit_power_laws(grid({1: (1e-6, 1.5), 2: (5e-6, 1.5)}, noise=0.01), 1e-4)
    d = sc.compare_exponents(fits)
    assert d.verdict == "no" and d.evidence["pooled_warranted"]
    assert "pooled exponent is warranted" in d.because


def test_exponents_inconclusive_when_intervals_are_wide() -> None:
    fits, _ = sc.try_fit_power_laws(grid({1: (1e-6, 1.5), 2: (1e-6, 1.6)}, noise=0.6, seed=3,
                                         banks=(1, 2, 3), cpb=(2, 4)), 1e-9)
    d = sc.compare_exponents(fits)
    assert d.verdict == "inconclusive" and not d.evidence["pooled_warranted"]
    assert "too wide" in d.because


def test_exponents_inconclusive_with_one_group() -> None:
    fits, _ = sc.try_fit_power_laws(grid({4: (1e-6, 1.5)}), 1e-6)
    d = sc.compare_exponents(fits)
    assert d.verdict == "inconclusive" and "only 1 group" in d.because


# ----------------------------------------------------------------------------- designs

def test_designs_differ_yes() -> None:
    d = sc.compare_designs(grid({1: (5e-6, 1.5), 2: (1e-6, 1.5)}, noise=0.05), min_time_s=1e-3)[(1, 2)]
    assert d.verdict == "yes" and d.evidence["ratio"] == pytest.approx(5, rel=0.1)
    assert "iteration 2 is faster" in d.because


def test_designs_same_no() -> None:
    d = sc.compare_designs(grid({1: (1e-6, 1.5), 2: (1e-6, 1.5)}, noise=0.02), min_time_s=1e-3)[(1, 2)]
    assert d.verdict == "no" and 0.8 <= d.evidence["ratio_low"] and d.evidence["ratio_high"] <= 1.25
    assert "under the margin" in d.because


def test_designs_inconclusive_when_noisy() -> None:
    d = sc.compare_designs(grid({1: (1e-6, 1.5), 2: (1.1e-6, 1.5)}, noise=0.5, seed=1), min_time_s=1e-3)[(1, 2)]
    assert d.verdict == "inconclusive" and "too wide" in d.because


def test_designs_inconclusive_without_cells_and_holm_over_pairs() -> None:
    t = grid({1: (5e-6, 1.5), 2: (1e-6, 1.5), 3: (1e-12, 1.0)}, noise=0.05)
    ds = sc.compare_designs(t, min_time_s=1e-3)
    assert set(ds) == {(1, 2), (2, 3)}
    assert ds[(2, 3)].verdict == "inconclusive" and "need 3" in ds[(2, 3)].because
    assert ds[(1, 2)].evidence["p_holm"] == pytest.approx(ds[(1, 2)].evidence["p"])  # one finite p: no inflation


# ----------------------------------------------------------------------------- bottleneck per cell

def actors_frame(busiest: dict[tuple[int, int], tuple[str, float]], iteration: int = 1, repeats: int = 2
                 ) -> pd.DataFrame:
    """Per-actor metrics: per cell (banks, clients_per_bank) the kind that is busiest and by what factor."""
    rows = []
    for (b, c), (kind, lead) in busiest.items():
        n = b * c
        for r in range(1, repeats + 1):
            for name, k in (("coordinator", "coordinator"), ("bank1", "bank"), ("client1", "client")):
                busy = 1.0 * lead if k == kind else (1.0 if k != "client" else 0.1)
                rows.append({"iteration": iteration, "banks": b, "clients_per_bank": c, "repeat": r,
                             "transfers": n * (n - 1), "actor": name, "kind": k, "received": 1, "sent": 1,
                             "peak_mailbox": 1, "busy_s": busy, "peers": 1, "scanned": 0, "work": 2})
    return pd.DataFrame(rows)


def test_bottleneck_yes_when_every_cell_names_one_kind() -> None:
    a = actors_frame({(b, c): ("coordinator", 3.0) for b in (1, 2) for c in (2, 4)})
    cells = sc.cell_bottlenecks(a, by="busy_s")
    assert cells["settled"].all() and (cells["kind"] == "coordinator").all()
    d = sc.bottleneck_agreement(cells, 1)
    assert d.verdict == "yes" and "coordinator in all 4 cells" in d.because


def test_bottleneck_no_when_settled_cells_disagree() -> None:
    a = actors_frame({(1, 2): ("coordinator", 3.0), (1, 4): ("coordinator", 3.0), (2, 2): ("bank", 3.0),
                      (2, 4): ("bank", 3.0), (3, 4): ("bank", 2.0)})
    d = sc.bottleneck_agreement(sc.cell_bottlenecks(a, by="busy_s"), 1)
    assert d.verdict == "no"
    assert d.evidence["kind_cells"] == {"bank": 3, "coordinator": 2}
    assert d.evidence["largest_cell_kind"] == "bank" and d.evidence["largest_cell"] == "3×4"
    assert d.evidence["cells_by_kind"]["coordinator"] == ["1×2", "1×4"]
    assert "the cells disagree" in d.because and "hides the others" in d.because


def test_bottleneck_inconclusive_when_disagreement_is_within_noise() -> None:
    a = actors_frame({(1, 2): ("coordinator", 3.0), (1, 4): ("coordinator", 3.0), (2, 4): ("bank", 1.05)})
    cells = sc.cell_bottlenecks(a, by="busy_s", min_dominance=1.1)
    assert not cells.set_index(["banks", "clients_per_bank"]).loc[(2, 4), "settled"]
    d = sc.bottleneck_agreement(cells, 1)
    assert d.verdict == "inconclusive" and "all settled ones name coordinator" in d.because
    assert d.caveats


def test_bottleneck_repeats_that_disagree_leave_a_cell_unsettled() -> None:
    a = pd.concat([actors_frame({(1, 2): ("coordinator", 3.0)}, repeats=1),
                   actors_frame({(1, 2): ("bank", 3.0)}, repeats=1).assign(repeat=2)])
    cells = sc.cell_bottlenecks(a, by="busy_s")
    assert cells["repeats"].iloc[0] == 2 and cells["repeats_agree"].iloc[0] == 1 and not cells["settled"].iloc[0]
    assert sc.bottleneck_agreement(cells, 1).verdict == "inconclusive"


def test_bottleneck_inconclusive_for_an_absent_iteration() -> None:
    cells = sc.cell_bottlenecks(actors_frame({(1, 2): ("coordinator", 3.0)}), by="busy_s")
    d = sc.bottleneck_agreement(cells, 7)
    assert d.verdict == "inconclusive" and "no simulated run of iteration 7" in d.because


# ----------------------------------------------------------------------------- USL and the cores table

def test_usl_yes_on_a_usl_curve() -> None:
    n = np.arange(1, 65, dtype=float)
    x = sc.usl_throughput(n, 1000.0, 0.05, 0.0005) * (1 + 0.01 * np.random.default_rng(0).standard_normal(n.size))
    d = sc.usl_decision(n, x, n_boot=50)
    assert d.verdict == "yes" and d.fit is not None and d.fit.kappa_identifiable
    assert "throughput peaks at N* = " in d.because and "inside the measured range" in d.because


def test_usl_yes_names_a_fall_from_the_first_point() -> None:
    n = np.arange(1, 9, dtype=float)
    d = sc.usl_decision(n, 1000 / (1 + 0.3 * (n - 1)), n_boot=50)
    assert d.verdict == "yes" and "highest at the smallest N measured (1)" in d.because


def test_usl_no_when_time_grows_faster_than_n_squared() -> None:
    n = np.arange(1, 9, dtype=float)
    time_s = 0.001 * n**4
    growth = sc.fit_power_law(n, time_s, min_time_s=0)
    d = sc.usl_decision(n, 1.0 / time_s, n_boot=50, growth=growth)
    assert d.verdict == "no" and "faster than the USL's response time can" in d.because


def test_usl_inconclusive_with_too_few_points() -> None:
    d = sc.usl_decision([1, 2, 3], [10.0, 18.0, 25.0])
    assert d.verdict == "inconclusive" and d.fit is None and "at least 4 distinct N" in d.because


def hyp(fixed: list[float], grows: list[float]) -> pd.DataFrame:
    rows = []
    for i, (f, g) in enumerate(zip(fixed, grows, strict=True), start=1):
        rows += [{"iteration": i, "hypothesis": "fixed demand", "rms_log_error": f},
                 {"iteration": i, "hypothesis": "demand grows", "rms_log_error": g}]
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("fixed", "grows", "verdict"), [
    ([0.1, 0.2], [2.0, 3.0], "yes"), ([4.0, 1.5], [0.1, 0.2], "no"), ([0.1, 2.0], [1.0, 0.2], "inconclusive")])
def test_cores_reading_each_outcome(fixed: list[float], grows: list[float], verdict: str) -> None:
    assert sc.cores_reading(hyp(fixed, grows)).verdict == verdict


def test_cores_reading_inconclusive_without_cells() -> None:
    d = sc.cores_reading(pd.DataFrame(columns=["iteration", "hypothesis", "rms_log_error"]))
    assert d.verdict == "inconclusive"


def test_cores_reading_on_published_tables_is_growing_demand() -> None:
    from workbench.paths import resolve

    times = sc.read_iteration_times(resolve("data/05_actor_bottlenecks/iteration_times.csv"))
    cores = sc.read_cores_times(resolve("data/05_actor_bottlenecks/cores_times.csv"))
    fits, _ = sc.try_fit_power_laws(times, 0.01)
    d = sc.cores_reading(sc.demand_hypotheses(cores, fits, fixed_clients=80, clients_per_core=8))
    assert d.verdict == "no"


def test_timing_tables_accept_milliseconds_and_say_so(tmp_path) -> None:
    p = tmp_path / "grid.csv"
    p.write_text("iteration,banks,clients_per_bank,time_ms\n7,1,3,1.5\n7,2,3,-4\n9,2,3,120\n")
    t = sc.read_iteration_times(p)
    assert t["time_s"].tolist() == [0.0015, 0.12] and t.attrs["time_unit"] == "ms"
    rows = t.attrs["rejects"].rows()
    assert len(rows) == 1 and rows[0][1] == 3 and "-4" in rows[0][2]  # line 3, its text and reason kept
    c = sc.read_cores_times("iteration,cores,time_ms\n1,1,250\n1,2,130\n")
    assert c["time_s"].tolist() == [0.25, 0.13] and list(c.columns) == ["iteration", "cores", "time_s"]
    with pytest.raises(SchemaError, match="time_ms column in milliseconds is accepted"):
        sc.read_cores_times("iteration,cores,duration\n1,1,2\n")


def test_runs_table_with_only_run_times_is_timed_not_checked() -> None:
    from workbench.lab import actors as lab

    r = lab.read_runs("iteration,banks,clients_per_bank,wall_s,host\n1,2,3,0.5,a\n1,2,3,0.6,a\n2,2,3,0.1,b\n"
                      "1,0,3,1,c\n")
    assert r["repeat"].tolist() == [1, 2, 1] and r["transfers"].tolist() == [30, 30, 30]
    assert "money_conserved" in r.attrs["columns_missing"] and "money_conserved" not in r.columns
    assert len(r.attrs["rejects"]) == 1  # zero banks: kept with its reason
    with pytest.raises(SchemaError, match="only iteration, banks, clients_per_bank and wall_s is accepted"):
        lab.read_runs("iteration,banks,seconds\n1,2,0.5\n")


def test_actor_table_with_only_busy_time_and_its_own_kinds() -> None:
    from workbench.lab import actors as lab

    a = lab.read_actor_metrics("iteration,banks,clients_per_bank,repeat,actor,kind,busy_s\n"
                               "1,1,2,1,r,router,0.5\n1,1,2,1,w1,worker,0.1\n1,1,2,1,w1,worker,0.3\n")
    assert a["transfers"].tolist() == [2, 2] and set(a["kind"]) == {"router", "worker"}
    assert "work" in a.attrs["columns_missing"] and len(a.attrs["rejects"]) == 1  # the repeated actor
    d = sc.bottleneck_agreement(sc.cell_bottlenecks(a, by="busy_s"), 1)
    assert d.verdict == "yes" and "router in all 1 cells" in d.because
    with pytest.raises(SchemaError, match="busy_s is accepted too"):
        lab.read_actor_metrics("iteration,actor,busy\n1,a,0.1\n")
