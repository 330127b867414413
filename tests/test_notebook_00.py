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


# ------------------------------------------------------------------ the pieces the notebook shows ----

def test_tables_of_the_diagnosis() -> None:
    from workbench.diagnose.output import (
        detectors_frame,
        evidence_frame,
        inputs_frame,
        unrecognised_frame,
    )

    folder = TD / "nb01"
    diag = diagnose(folder)
    read = inputs_frame(diag, folder)
    assert list(read.columns) == ["path", "kind", "format", "rows", "rejects", "span_s"]
    assert set(read["path"]) == {"hlog_only/calls.hlog", "http_tt/calls.csv", "http_tt/calls_after.csv",
                                 "http_tt/trace.txt"}  # relative to the folder
    trace = read.set_index("path").loc["http_tt/trace.txt"]
    assert (trace["kind"], trace["rows"], trace["rejects"]) == ("strace", 3115, 0) and 17 < trace["span_s"] < 19
    unknown = unrecognised_frame(diag, folder)
    assert len(unknown) + len(read) == len(diag.inputs) and unknown["why"].str.len().min() > 0
    dets = detectors_frame(diag, folder)
    assert list(dets["detector"]) == [d.detector for d in diag.suspects + diag.not_applicable]
    assert set(dets["detector"]) == set(DETECTORS)
    # both found, the quantum (150 ms step, one rule with notebook 01) ranked above the timed waits
    assert [tuple(r) for r in dets[["detector", "verdict", "rests_on"]].iloc[:2].itertuples(index=False)] == [
        ("latency_quantum", "found", "http_tt/calls.csv"), ("timed_waits", "found", "http_tt/trace.txt")]
    assert dets[dets["verdict"] == "not applicable"]["rests_on"].str.startswith("needs ").all()
    ev = evidence_frame(diag.suspects[1]).set_index("evidence")["value"]
    assert ev["peaks"].startswith("(syscall futex, location_ms 300") and ev["kernel_peaks"] == "none"


def test_detection_markdown_escapes_data_and_keeps_the_command_exact() -> None:
    from nbconvert.filters.markdown import markdown2html

    from workbench.diagnose.detectors import Detection
    from workbench.diagnose.output import code_span, detection_markdown

    cmd = "workbench report 01 -p strace_path '/tmp/<b>x_y</b> `z`.txt' --out reports/diagnose-01"
    d = Detection("timed_waits", "found", 0.5, "a *peak* in <i>x_y</i>", caveats=["[link](x.html)"],
                  notebook="01_quantized_latency", command=cmd)
    page = markdown2html(detection_markdown(d))
    assert "<i>" not in page and "<b>" not in page and "<a " not in page and "<em>peak" not in page
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert cmd in text and "a *peak* in <i>x_y</i>" in text and "[link](x.html)" in text
    assert code_span("a ``b`` c") == "``` a ``b`` c ```"


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
    planted = {"latency_quantum", "low_rate_tail", "timed_waits", "global_stall", "readahead_amplification",
               "event_loop_yields", "hot_actor"}
    assert set(f["suspects"]) == planted and all(f[k] == "found" for k in planted)
    assert f["suspects"] == [d.detector for d in diagnose(ROOT / "data").found]  # the library's ranking
    assert "Diagnosing the bundled folder data" in text
    assert "7 suspect(s) found by 7 detector(s) that ran, strongest first:" in text  # the terminal summary
    assert text.index("3.1 " + f["suspects"][0]) < text.index("3.7 " + f["suspects"][6])


@pytest.mark.slow
def test_triage_of_clean_captures_finds_nothing(tmp_path: Path) -> None:
    # tool outputs of healthy services and ordinary strace captures: two detectors apply, neither finds anything
    f, text, _ = _report(tmp_path, "folder", str(TD / "latency"), "paths", repr([str(TD / "strace")]))
    assert f["suspects"] == []
    # healthy servers' latencies have clusters without a common spacing: inconclusive, never found
    assert f["latency_quantum"] == "inconclusive" and f["timed_waits"] == "not found"
    assert {k for k in DETECTORS if f[k] == "not applicable"} == set(DETECTORS) - {"latency_quantum", "timed_waits"}
    assert "Nothing wrong found: 2 detector(s) ran, none found its anomaly." in text
    assert f["files_read"] == 40 and f["rows_rejected"] == 1  # the one rejected line of tests/data/latency


@pytest.mark.slow
def test_triage_without_captures_skips_and_says_why(tmp_path: Path) -> None:
    f, text, _ = _report(tmp_path, "folder", "")
    assert all(f[k] is None for k in ("suspects", "files_read", *DETECTORS))
    assert "skipped: needs a folder or files of captures" in text


@pytest.mark.slow
def test_triage_shows_hostile_file_names_as_text(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    name = "<i>sweep_$1$ *x*.csv"
    (folder / name).write_bytes((TD / "nb02/open_loop/sweep.csv").read_bytes())
    (folder / "<b>odd.csv").write_text("what,<i>ever\n1,2\n")
    f, text, page = _report(tmp_path / "out", "folder", str(folder))
    assert f["suspects"] == [d.detector for d in diagnose(folder).found]  # the library's ranking
    assert set(f["suspects"]) == {"latency_quantum", "low_rate_tail"} and f["files_not_recognised"] == 1
    assert "<i>sweep" not in page and "<b>odd" not in page and "<i>ever" not in page
    assert name in text and "<b>odd.csv" in text
    for d in diagnose(folder).found:
        assert d.command is not None and d.command in text  # the quoted path, exactly as a shell takes it
