"""The actor simulation of the two-phase-commit bank: invariants, bottlenecks, bounds, CLI."""
from __future__ import annotations

import pandas as pd
import pytest

from workbench.cli import main
from workbench.errors import ParseError
from workbench.lab import actors as lab
from workbench.models.scaling import bottleneck_by_iteration, bottlenecks
from workbench.schema import validate


@pytest.mark.parametrize("iteration", [1, 2, 3])
@pytest.mark.parametrize("banks,per_bank", [(1, 2), (2, 3), (3, 5)])
def test_every_transfer_commits_and_money_is_conserved(iteration: int, banks: int, per_bank: int) -> None:
    r = lab.simulate(iteration, banks, per_bank).run
    n = banks * per_bank
    assert r["status"] == "ok"
    assert r["transfers"] == n * (n - 1) == r["committed"]
    assert r["lost"] == 0 and r["abandoned"] == 0
    assert r["money_conserved"] and r["ledger_consistent"]
    assert r["money_final"] == r["money_expected"] == 10 * n


def test_more_transfers_than_funds_still_conserve_money() -> None:
    # 15 clients at one bank: each owes 14 units with 10 in hand, so prepares fail and retry
    for it in (1, 2, 3):
        r = lab.simulate(it, 1, 15).run
        assert r["retries"] > 0 or it == 1
        assert r["committed"] == 15 * 14 and r["money_conserved"] and r["ledger_consistent"]


def test_retry_cap_abandons_without_losing_transfers_or_money() -> None:
    r = lab.simulate(2, 1, 15, max_retries=0).run
    assert r["abandoned"] > 0 and r["lost"] == 0
    assert r["committed"] + r["abandoned"] == r["transfers"]
    assert r["money_conserved"] and r["ledger_consistent"]


def test_bottleneck_is_the_coordinator_in_iteration1_and_not_in_iteration2() -> None:
    runs, actors = lab.run_grid((1, 2, 3), banks=(3, 4), clients_per_bank=(4, 6), progress=False)
    assert (runs["status"] == "ok").all() and runs["money_conserved"].all() and (runs["lost"] == 0).all()
    named = bottleneck_by_iteration(actors)  # counted work: deterministic
    assert named[1] == "coordinator"
    assert named[2] != "coordinator"
    b = bottlenecks(actors)
    it1 = b[b.iteration == 1]
    assert (it1["kind"] == "coordinator").all() and (it1["dominance"] > 10).all()
    # the measured busy time agrees for iteration 1, where the coordinator dominates by far
    assert bottleneck_by_iteration(actors, by="busy_s")[1] == "coordinator"
    # iteration 2 spreads the work: the coordinator handles one message per transfer, the naive one four
    coord = actors[actors.kind == "coordinator"].groupby("iteration")["received"].max()
    assert coord[1] > 3 * coord[2]


def test_actor_metrics_are_complete_and_consistent() -> None:
    res = lab.simulate(3, 2, 3)
    a = pd.DataFrame(res.actors)
    assert set(a["kind"]) == {"coordinator", "bank", "client", "transaction", "account"}
    assert (a["kind"] == "transaction").sum() == res.run["transfers"]
    assert (a["kind"] == "account").sum() == 6
    # every message delivered was handled; messages from the driver are not counted as sent by an actor
    assert a["received"].sum() == res.run["messages"]
    assert a["sent"].sum() == res.run["messages"] - res.run["transfers"]
    assert (a["work"] == a["received"] + a["sent"] + a["scanned"]).all()
    assert (a["peak_mailbox"] >= 1).all() and (a["busy_s"] >= 0).all()
    assert res.run["actors"] == len(a)


def test_bounds_are_enforced() -> None:
    with pytest.raises(ValueError, match="exceeds the cap"):
        lab.simulate(1, 10, 10)
    with pytest.raises(ValueError, match="iteration"):
        lab.simulate(4, 1, 2)
    with pytest.raises(ValueError, match="cap is"):
        lab.grid_cells([1, 2, 3], list(range(1, 11)), list(range(1, 7)), repeats=2)
    r = lab.simulate(1, 2, 5, max_messages=50).run
    assert "message cap" in r["status"]
    r = lab.simulate(1, 5, 10, time_limit_s=0.005).run
    assert "time limit" in r["status"]


def test_grid_time_limit_skips_the_rest() -> None:
    runs, _ = lab.run_grid((1,), banks=(1, 2, 3), clients_per_bank=(2, 4), time_limit_s=0.0, progress=False)
    assert len(runs) == 0 and runs.attrs["skipped"] == 6


def test_cli_writes_csvs_the_loaders_read(tmp_path) -> None:
    rc = main(["lab", "actors", "--out", str(tmp_path), "--iterations", "1,2,3", "--banks", "1,2",
               "--clients-per-bank", "2,3", "--repeats", "2", "--quiet"])
    assert rc == 0
    runs = lab.read_runs(tmp_path / "runs.csv")
    actors = lab.read_actor_metrics(tmp_path / "actors.csv")
    assert len(runs) == 3 * 2 * 2 * 2 and len(runs.attrs["rejects"]) == 0 and len(actors.attrs["rejects"]) == 0
    validate(runs, lab.RUNS_SCHEMA)
    validate(actors, lab.ACTOR_METRICS_SCHEMA)
    assert runs["money_conserved"].all()
    assert set(actors.groupby(["iteration", "banks", "clients_per_bank", "repeat"]).size().index) == set(
        runs.set_index(["iteration", "banks", "clients_per_bank", "repeat"]).index)
    rc = main(["lab", "actors", "--out", str(tmp_path / "gz"), "--iterations", "2", "--banks", "1",
               "--clients-per-bank", "2", "--gzip", "--quiet"])
    assert rc == 0 and len(lab.read_actor_metrics(tmp_path / "gz" / "actors.csv.gz")) > 0


def test_cli_refuses_a_grid_over_the_cap(tmp_path, capsys) -> None:
    rc = main(["lab", "actors", "--out", str(tmp_path), "--banks", "10", "--clients-per-bank", "10", "--quiet"])
    assert rc == 2
    assert "outside" in capsys.readouterr().err
    assert not (tmp_path / "runs.csv").exists()


def test_loaders_reject_bad_rows() -> None:
    header = ",".join(lab.RUNS_SCHEMA.names())
    good = "1,1,2,1,2,2,0.0001,25,4,2,0,0,0,20,20,True,True,ok"
    bad = "1,1,3,1,3,6,0.0001,25,4,2,0,0,0,30,30,maybe,True,ok"
    df = lab.read_runs(f"{header}\n{good}\n{bad}\n")
    assert len(df) == 1 and "true/false" in df.attrs["rejects"].frame().iloc[0]["reason"]
    aheader = ",".join(lab.ACTOR_METRICS_SCHEMA.names())
    text = f"{aheader}\n1,1,2,1,2,bank-1,bank,1,1,1,0.1,1,0,2\n1,1,2,1,2,ghost,phantom,1,1,1,0.1,1,0,2\n"
    df = lab.read_actor_metrics(text)
    assert len(df) == 1 and df.attrs["rejects"].frame().iloc[0]["line"] == 3
    with pytest.raises(ParseError, match="unknown actor kind"):
        lab.read_actor_metrics(text, strict=True)


def test_invariant_checks_catch_a_broken_account(monkeypatch) -> None:
    original = lab.Account.handle

    def generous(self, msg):  # credits 2 units instead of 1
        original(self, msg)
        if msg[0] == "commit" and msg[1] == "plus":
            self.cash += 1

    monkeypatch.setattr(lab.Account, "handle", generous)
    r = lab.simulate(3, 2, 3).run
    assert not r["money_conserved"] and not r["ledger_consistent"]
    assert r["money_final"] > r["money_expected"]


def test_invariant_checks_catch_a_lost_rollback(monkeypatch) -> None:
    original = lab.Bank2.handle

    def forgetful(self, msg):  # drops every rollback
        if msg[0] != "rollback":
            original(self, msg)

    monkeypatch.setattr(lab.Bank2, "handle", forgetful)
    runs = [lab.simulate(2, 1, n).run for n in (12, 15, 18)]
    assert any(not r["money_conserved"] for r in runs)
