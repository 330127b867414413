"""Fuzzing in the suite: a short seeded budget per loader, and every kept crasher replayed."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests import fuzzing as F

BY_NAME = {t.name: t for t in F.TARGETS}
# The latency readers take part in `make fuzz`; here they are replayed through their kept crashers.
SHORT = [t for t in F.TARGETS if not t.name.startswith("latency_")]
KEPT = sorted(p for p in F.CRASHERS.rglob("*") if p.is_file() and p.name != "README.md")


@pytest.mark.parametrize("target", SHORT, ids=lambda t: t.name)
def test_short_budget_gives_frames_or_family_errors(target: F.Target, tmp_path: Path) -> None:
    tally = F.fuzz(target, 25, seed=2026, workdir=tmp_path, scanners=target.name == "strace_reference")
    assert tally.cases == 25, f"{target.name}: no seed files"
    assert tally.crashes == [] and tally.disagreements == []
    assert tally.undocumented == [] and tally.silent_losses == []


@pytest.mark.parametrize("path", KEPT, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_kept_crashers_stay_fixed(path: Path) -> None:
    target = BY_NAME[path.parent.name]
    kind, detail = F.run_case(target, path)
    assert kind in ("frame", "family"), detail
    if target.name == "strace_reference":
        assert F.compare_scanners(path) is None


def test_long_pids_are_rejected_by_both_scanners_alike() -> None:
    from workbench.syscalls import native_available, read_strace

    path = F.CRASHERS / "strace_reference" / "long_pids.txt"
    scanners = [False, True] if native_available() else [False]
    for native in scanners:
        f = read_strace(path, native=native, check_summary=False)
        rej = f.attrs["rejects"].frame()
        assert rej["line"].tolist() == [1, 3] and set(rej["reason"]) == {"pid longer than 10 digits"}
        assert f["pid"].tolist() == [4, 5]


def test_huge_counters_are_rejected_per_line_not_crashed() -> None:
    from workbench.counters import read_vmstat

    f = read_vmstat(F.CRASHERS / "vmstat" / "huge_integer.txt")
    assert f["counter"].tolist() == ["pgpgin"] and len(f.attrs["rejects"]) == 1
    assert "64 bits" in f.attrs["rejects"].rows()[0][3]


def test_wide_header_rejects_do_not_copy_the_header() -> None:
    from workbench.latency import read_latency

    f = read_latency(F.CRASHERS / "latency_jmeter" / "1adbd35964916205.csv", format="jmeter")
    rows = f.attrs["rejects"].rows()
    assert len(f) == 0 and len(rows) == 255
    assert all(len(r[3]) < 400 and "(8005 more)" in r[3] for r in rows)  # 8,017 names, 12 of them listed
