"""Notebook 00 (triage) renders the diagnosis of a folder: its findings are the detectors' verdicts."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.diagnose import DETECTORS, diagnose

from .conftest import ROOT

TD = ROOT / "tests" / "data"


def _report(tmp_path: Path, *params: str) -> tuple[dict, str, str]:
    """Run ``workbench report 00 -p …`` into ``tmp_path``: (findings, the page's visible text, the page's HTML)."""
    args = ["report", "00", "--out", str(tmp_path), "--jobs", "1"]
    for i in range(0, len(params), 2):
        args += ["-p", params[i], params[i + 1]]
    assert main(args) == 0
    findings = json.loads((tmp_path / "findings.json").read_text())["findings"]["00_triage"]
    page = (tmp_path / "00_triage.html").read_text()
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    return findings, text, page


@pytest.mark.slow
def test_triage_of_a_folder_with_anomalies(tmp_path: Path) -> None:
    folder = TD / "nb02"
    f, text, page = _report(tmp_path, "folder", str(folder))
    diag = diagnose(folder)
    # the planted anomalies: Nagle's ~40 ms step, and the tail worst at the lowest rate
    assert f["suspects"] == ["latency_quantum", "low_rate_tail"] == [d.detector for d in diag.found]
    assert f["latency_quantum"] == f["low_rate_tail"] == "found"
    for name in ("timed_waits", "global_stall", "readahead_amplification", "event_loop_yields", "hot_actor"):
        assert f[name] == "not applicable"  # only latency files in this folder
    assert set(DETECTORS) <= set(f)
    read = [i for i in diag.inputs if i.kind != "unknown"]
    assert f["files_read"] == len(read) == 13 and f["files_not_recognised"] == 2
    assert f["rows_read"] == sum(i.rows for i in read) and f["rows_rejected"] == 0
    # each suspect's section: the command that runs its notebook on these files, exactly as the library gives it
    for d in diag.found:
        assert d.command is not None
        assert d.command.replace(str(ROOT) + "/", "") in text.replace(str(ROOT) + "/", "")
    assert "3.1 latency_quantum: found" in text and "3.2 low_rate_tail: found" in text
    assert page.count("<img") == sum(bool(d.plot) for d in diag.suspects) == 2  # one small figure per suspect
    index = (tmp_path / "index.html").read_text()
    assert index.index("<code>suspects</code>") < index.index("<code>latency_quantum</code>")


@pytest.mark.slow
def test_triage_of_the_bundled_data_by_default(tmp_path: Path) -> None:
    f, text, _ = _report(tmp_path)
    # one planted anomaly of each kind in data/: every detector finds its own, strongest first
    assert sorted(f["suspects"]) == sorted(DETECTORS) and all(f[k] == "found" for k in DETECTORS)
    assert "Diagnosing the bundled folder data" in text
    assert "7 suspect(s) found by 7 detector(s) that ran, strongest first:" in text


@pytest.mark.slow
def test_triage_of_clean_captures_finds_nothing(tmp_path: Path) -> None:
    # tool outputs of healthy services and ordinary strace captures: two detectors apply, neither finds anything
    f, text, _ = _report(tmp_path, "folder", str(TD / "latency"), "paths", repr([str(TD / "strace")]))
    assert f["suspects"] == []
    assert f["latency_quantum"] == f["timed_waits"] == "not found"
    assert {k for k in DETECTORS if f[k] == "not applicable"} == set(DETECTORS) - {"latency_quantum", "timed_waits"}
    assert "Nothing wrong found: 2 detector(s) ran, none found its anomaly." in text
    assert f["files_read"] == 40 and f["rows_rejected"] == 1  # the one rejected line of tests/data/latency


@pytest.mark.slow
def test_triage_without_captures_skips_and_says_why(tmp_path: Path) -> None:
    f, text, _ = _report(tmp_path, "folder", "")
    assert all(f[k] is None for k in ("suspects", "files_read", *DETECTORS))
    assert "skipped: needs a folder or files of captures" in text
