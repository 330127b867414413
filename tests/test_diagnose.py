"""workbench diagnose: each detector on real captures of the repository, the inventory, and the command line."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from workbench.cli import main
from workbench.diagnose import Diagnosis, diagnose

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
TD = ROOT / "tests" / "data"


def one(path: Path | str, detector: str) -> dict:
    d = diagnose(path, detectors=[detector])
    found = d.suspects + d.not_applicable
    assert len(found) == 1
    return found[0].as_json() | {"needs": found[0].needs}


# ------------------------------------------------------------------------------- latency_quantum ----

@pytest.mark.parametrize(("path", "quantum_ms", "notebook", "min_strength"), [
    (DATA / "01_quantized_latency/lab/calls.csv", 250.0, "01_quantized_latency", 0.8),
    (TD / "modes/sleepy_bulk500.csv", 500.0, "01_quantized_latency", 0.8),
    # one 150 ms call took 198 ms: notebook 01 calls this quantized, and so does the detector (one rule)
    (TD / "nb01/http_tt/calls.csv", 150.0, "01_quantized_latency", 0.8),
    # the step shows at 50/s only (41 and 81 ms); at the other rates every request waits: one cluster
    (TD / "nb02/open_loop/sweep.csv", 40.0, "02_low_qps_nagle", 0.4),
])
def test_latency_quantum_found(path: Path, quantum_ms: float, notebook: str, min_strength: float) -> None:
    r = one(path, "latency_quantum")
    assert r["verdict"] == "found"
    assert r["evidence"]["quantum_ms"] == pytest.approx(quantum_ms, rel=0.03)
    assert r["strength"] > min_strength
    assert r["notebook"] == notebook and r["command"].startswith(f"workbench report {notebook[:2]} -p ")


@pytest.mark.parametrize("path", [TD / "modes/hey_c2.csv", TD / "nb02/lockstep/nodelay_both.csv"])
def test_latency_quantum_not_found(path: Path) -> None:
    r = one(path, "latency_quantum")
    assert r["verdict"] == "not found" and r["strength"] == 0 and r["command"] is None
    assert "quantum_ms" not in r["evidence"]


def test_latency_quantum_never_reports_the_output_resolution() -> None:
    # ab's gnuplot output holds whole milliseconds: the 1 ms grid is the tool's, not a quantum
    r = one(TD / "modes/ab_c4_gnuplot.tsv", "latency_quantum")
    assert r["evidence"]["resolution_ms"] == pytest.approx(1.0)
    assert r["verdict"] in ("not found", "inconclusive") and "quantum_ms" not in r["evidence"]


def test_latency_quantum_needs_raw_samples() -> None:
    r = one(TD / "nb01/hlog_only", "latency_quantum")
    assert r["verdict"] == "not applicable" and "samples" in r["needs"]


# ---------------------------------------------------------------------------------- low_rate_tail ----

def test_low_rate_tail_found_in_the_bundled_sweep() -> None:
    r = one(DATA / "02_low_qps_nagle/nagle_samples.csv", "low_rate_tail")
    assert r["verdict"] == "found"
    ev = r["evidence"]
    assert (ev["low_rate_per_s"], ev["high_rate_per_s"]) == (5.0, 5000.0)
    assert ev["ratio_low_to_high"] > 4 and ev["p99_ms_by_rate"]["5"] > 40
    assert r["command"].startswith("workbench report 02 -p sweep_path ")


def test_low_rate_tail_found_in_a_folder_of_hey_files() -> None:
    r = one(TD / "nb02/hey/nodelay_server", "low_rate_tail")
    assert r["verdict"] == "found" and r["evidence"]["rate_from"]
    assert r["evidence"]["ratio_low_to_high"] > 4


@pytest.mark.parametrize("path", [TD / "nb02/lockstep/nodelay_both.csv", TD / "nb02/hey/nagle"])
def test_low_rate_tail_not_found(path: Path) -> None:
    r = one(path, "low_rate_tail")
    assert r["verdict"] == "not found"
    assert r["evidence"]["difference_ci_ms"][1] < 0  # the lowest rate is faster, not slower


def test_low_rate_tail_needs_several_rates() -> None:
    r = one(TD / "modes/hey_c2.csv", "low_rate_tail")
    assert r["verdict"] == "not applicable" and "two or more offered rates" in r["needs"]


# ------------------------------------------------------------------------------------ timed_waits ----

def test_timed_waits_found_on_the_bundled_trace() -> None:
    r = one(DATA / "01_quantized_latency/lab/strace_before.txt", "timed_waits")
    assert r["verdict"] == "found"
    locs = sorted(p["location_ms"] for p in r["evidence"]["peaks"])
    assert locs == pytest.approx([250, 500, 1000], rel=0.01)
    assert r["evidence"]["calls_in_peaks_one_off"] == 30  # 10 calls per peak, each followed by the request's work
    assert "-p strace_path data/01_quantized_latency/lab/strace_before.txt" in r["command"].replace(str(ROOT) + "/", "")


def test_timed_waits_found_on_an_http_server_trace() -> None:
    r = one(TD / "nb01/http_tt/trace.txt", "timed_waits")
    assert r["verdict"] == "found"
    got = {(p["syscall"], round(p["location_ms"] / 100)) for p in r["evidence"]["peaks"]}
    assert got == {("futex", 3), ("futex", 6), ("poll", 5)}


@pytest.mark.parametrize("path", [DATA / "01_quantized_latency/lab/strace_fixed.txt", TD / "strace"])
def test_timed_waits_not_found(path: Path) -> None:
    r = one(path, "timed_waits")
    assert r["verdict"] == "not found" and r["evidence"]["peaks"] == [] and r["evidence"]["timed_calls"] > 0


# ----------------------------------------------------------------------------------- global_stall ----

def test_global_stall_found_in_the_bundled_steps() -> None:
    r = one(DATA / "01_quantized_latency/lab/steps.csv", "global_stall")
    assert r["verdict"] == "found" and r["evidence"]["condition"] == "pauses"
    assert r["evidence"]["slope_ci"][0] > 0 and r["evidence"]["correlation"] > 0.9
    assert "-p steps_condition pauses" in r["command"] and "-p control_condition control" in r["command"]


def test_global_stall_not_found_in_the_control_runs(tmp_path: Path) -> None:
    steps = pd.read_csv(DATA / "01_quantized_latency/lab/steps.csv")
    path = tmp_path / "control_steps.csv"
    steps[steps["condition"] == "control"].to_csv(path, index=False)
    r = one(path, "global_stall")
    assert r["verdict"] == "not found" and r["evidence"]["slow_occurrences"] < 10


# ------------------------------------------------------------------------ readahead_amplification ----

def test_readahead_amplification_found_in_the_probes() -> None:
    r = one(DATA / "03_readahead_amplification/sim/probes", "readahead_amplification")
    assert r["verdict"] == "found"
    assert r["evidence"]["ratio"] == pytest.approx(14.1, abs=0.1)
    assert r["evidence"]["fetched_bytes"] > r["evidence"]["demanded_bytes"] > 0


@pytest.mark.parametrize("path", [DATA / "03_readahead_amplification/sim/cache_trap", TD / "counters/bpftrace"])
def test_readahead_amplification_needs_both_maps(path: Path) -> None:
    r = one(path, "readahead_amplification")
    assert r["verdict"] == "not applicable" and "@demand_bytes" in r["needs"]


# ------------------------------------------------------------------------------ event_loop_yields ----

@pytest.mark.parametrize(("path", "low", "high"), [
    (DATA / "04_event_loop_yields/published.csv", 0.95, 1.2),
    (DATA / "04_event_loop_yields/lab_capture.csv", 0.9, 1.1),
    (TD / "nb04/asyncio_executor", 1.7, 2.4),  # two passes per yield: found, with a caveat
])
def test_event_loop_yields_found(path: Path, low: float, high: float) -> None:
    r = one(path, "event_loop_yields")
    assert r["verdict"] == "found" and r["evidence"]["r2"] > 0.9
    assert low < r["evidence"]["passes_per_yield"] < high
    assert r["command"].startswith("workbench report 04 -p ")


def test_event_loop_yields_inconclusive_on_the_edge() -> None:
    r = one(TD / "nb04/node_callbacks", "event_loop_yields")
    assert r["verdict"] == "inconclusive"
    assert r["evidence"]["ci_lo"] < 1.25 < r["evidence"]["ci_hi"]
    assert 0 < r["strength"] <= 0.5


# -------------------------------------------------------------------------------------- hot_actor ----

@pytest.mark.parametrize(("path", "cells"), [(DATA / "05_actor_bottlenecks/simulation", 25),
                                             (TD / "nb05/asyncio_bank", 12)])
def test_hot_actor_found(path: Path, cells: int) -> None:
    r = one(path, "hot_actor")
    assert r["verdict"] == "found" and r["evidence"]["kind"] == "coordinator"
    assert r["evidence"]["cells"] == cells and r["evidence"]["cells_settled"] >= cells - 1
    assert "-p sim_actors " in r["command"]


def test_hot_actor_needs_per_actor_metrics() -> None:
    r = one(TD / "nb05/lab_runs_only", "hot_actor")
    assert r["verdict"] == "not applicable" and "busy_s" in r["needs"]


# ---------------------------------------------------------------------------- inventory & ranking ----

@pytest.fixture(scope="module")
def bundled() -> Diagnosis:
    return diagnose(DATA)


def test_mixed_folder_reads_every_kind_and_ranks_by_strength(bundled: Diagnosis) -> None:
    kinds = {f.kind for f in bundled.inputs}
    assert kinds == {"latency", "strace", "counters", "table", "unknown"}
    assert {d.detector for d in bundled.found} == {"latency_quantum", "low_rate_tail", "timed_waits", "global_stall",
                                                   "readahead_amplification", "event_loop_yields", "hot_actor"}
    strengths = [d.strength for d in bundled.suspects]
    assert strengths == sorted(strengths, reverse=True)
    gz = next(f for f in bundled.inputs if f.path.endswith("actors.csv.gz"))
    assert (gz.kind, gz.format, gz.rows, gz.rejects) == ("table", "actor_metrics", 76200, 0)
    calls = next(f for f in bundled.inputs if f.path.endswith("lab/calls.csv"))
    assert calls.rows == 300 and calls.span_s == pytest.approx(19.1, abs=0.1)


def test_unrecognised_files_are_listed_with_why(bundled: Diagnosis) -> None:
    unknown = {Path(f.path).name: f.reason for f in bundled.inputs if f.kind == "unknown"}
    assert "not a capture" in unknown["README.md"]
    assert "cannot tell the latency format" in unknown["injections.csv"]
    assert all(unknown.values())


def test_compressed_input_is_read(tmp_path: Path) -> None:
    import gzip

    src = (DATA / "01_quantized_latency/lab/strace_before.txt").read_bytes()
    path = tmp_path / "trace.txt.gz"
    path.write_bytes(gzip.compress(src))
    d = diagnose(tmp_path, detectors=["timed_waits"])
    assert (d.inputs[0].kind, d.inputs[0].rows) == ("strace", 2045)
    assert d.suspects[0].verdict == "found"


# ------------------------------------------------------------------------------------ command line ----

def test_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", str(TD / "modes"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["version"] == 1 and set(doc) >= {"inputs", "suspects"}
    for i in doc["inputs"]:
        assert set(i) >= {"path", "kind", "format", "rows", "rejects"}
        assert i["kind"] in {"latency", "strace", "counters", "table", "unknown"}
    (s,) = doc["suspects"]
    assert set(s) >= {"detector", "verdict", "strength", "evidence", "caveats", "notebook", "command"}
    assert (s["detector"], s["verdict"]) == ("latency_quantum", "found")
    assert s["evidence"]["quantum_ms"] == pytest.approx(500, rel=0.02)
    assert {n["detector"] for n in doc["not_applicable"]} == {
        "low_rate_tail", "timed_waits", "global_stall", "readahead_amplification", "event_loop_yields", "hot_actor"}


def test_terminal_summary_and_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "<b>odd.csv").write_text("what,<i>ever\n1,2\n")
    (folder / "calls.csv").write_bytes((DATA / "01_quantized_latency/lab/calls.csv").read_bytes())
    assert main(["diagnose", str(folder), "--out", str(tmp_path / "out")]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].startswith("1 suspect(s) found")
    assert "latency_quantum — found" in text and "Not recognised: 1 file(s)" in text
    assert len(text.splitlines()) <= 20
    page = (tmp_path / "out/diagnosis.html").read_text()
    assert "Content-Security-Policy" in page and "<script" not in page
    assert "&lt;b&gt;odd.csv" in page and "<b>odd.csv" not in page
    assert re.search(r"workbench report 01 -p calls_path \S*calls.csv", page)


def test_nothing_wrong_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", str(DATA / "01_quantized_latency/lab/strace_fixed.txt")]) == 0
    assert capsys.readouterr().out.startswith("Nothing wrong found: 1 detector(s) ran")


def test_missing_path_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", "/no/such/folder"]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_html_has_one_inline_figure_per_found_suspect(tmp_path: Path) -> None:
    from workbench.diagnose.output import write_html

    d = diagnose([DATA / "04_event_loop_yields", DATA / "01_quantized_latency/lab/strace_fixed.txt"])
    assert [s.verdict for s in d.suspects] == ["found", "not found"]
    page = write_html(d, tmp_path).read_text()
    assert page.count("<svg") == 1 and "<image" not in page and "href=\"http" not in page


def test_a_failing_detector_does_not_lose_the_diagnosis(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.diagnose import detectors

    def broken(inputs: object) -> None:
        raise IndexError("deep inside")

    monkeypatch.setitem(detectors.DETECTORS, "hot_actor", broken)
    d = diagnose(DATA / "04_event_loop_yields", detectors=["event_loop_yields", "hot_actor"])
    verdicts = {s.detector: s.verdict for s in d.suspects}
    assert verdicts == {"event_loop_yields": "found", "hot_actor": "inconclusive"}
    assert "IndexError" in next(s.because for s in d.suspects if s.detector == "hot_actor")


def test_workbench_diagnose_is_callable_as_documented() -> None:
    import workbench

    d = workbench.diagnose(ROOT / "tests" / "data" / "nb04" / "asyncio_executor")
    assert [(s.detector, s.verdict) for s in d.suspects][:1] == [("event_loop_yields", "found")]
