"""`workbench compare` on real report folders: notebooks executed by `workbench report`."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import make_notebook
from workbench.cli import main
from workbench.findings import read_findings
from workbench.report.compare import compare_reports

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent

_GATE_CELLS = [
    "import pandas as pd\n"
    "from workbench import record_finding\n"
    "from workbench.stats import percentile_cis\n"
    "lat = pd.read_csv(capture_path)['latency_ms'].to_numpy()\n"
    "p50, p90, p99 = percentile_cis(lat, (50, 90, 99), n_resamples=1000, seed=seed)",
    "for name, p in (('p50_ms', p50), ('p90_ms', p90), ('p99_ms', p99)):\n"
    "    record_finding(name, p.value, unit='ms', ci=(p.low, p.high), better='lower')\n"
    "record_finding('samples', len(lat), unit='requests', tolerance=0)\n"
    "record_finding('capture_kind', kind)\n"
    "record_finding('old_style', 1.5, unit='ms', explain='a finding recorded the old way')\n"
    "if with_mean:\n"
    "    record_finding('mean_ms', lat.mean(), unit='ms', rel_tolerance=0.05, better='lower')",
]


def _captures(tmp_path: Path) -> tuple[Path, Path]:
    """A lognormal latency capture and the same one with its slowest 1.5 % three times slower."""
    rng = np.random.default_rng(7)
    lat = np.exp(rng.normal(np.log(2.0), 0.4, size=4000))
    slow = lat.copy()
    top = np.argsort(slow)[-60:]
    slow[top] *= 3
    paths = tmp_path / "base.csv", tmp_path / "slow_tail.csv"
    for path, values in zip(paths, (lat, slow), strict=True):
        path.write_text("latency_ms\n" + "\n".join(f"{v:.6f}" for v in values) + "\n")
    return paths


def report_ci(folder: Path) -> list[float]:
    return json.loads((folder / "report.json").read_text())["notebooks"][0]["findings"]["p99_ms"]["ci"]


def test_every_verdict_on_real_report_folders(tmp_path: Path, capsys) -> None:
    nbs = tmp_path / "notebooks"
    make_notebook(nbs / "01_latency_gate.ipynb",
                  "capture_path = ''  # CSV with a latency_ms column\nseed = 0  # bootstrap seed\n"
                  "kind = 'latency samples'  # what the capture is, text\n"
                  "with_mean = False  # also record the mean",
                  _GATE_CELLS, title="Latency with CIs")
    base_csv, slow_csv = _captures(tmp_path)
    runs = {}
    for name, csv in (("a", base_csv), ("a_again", base_csv), ("b", slow_csv)):
        runs[name] = tmp_path / name
        assert main(["report", "--notebooks", str(nbs), "--out", str(runs[name]), "--jobs", "1",
                     "-p", "capture_path", str(csv)]) == 0
    assert capsys.readouterr().out.count("6 findings (4 with a CI or tolerance)") == 3

    # the executed notebook, report.json and findings.json all carry the CI
    assert read_findings(runs["a"] / "01_latency_gate.ipynb")["p99_ms"].ci == report_ci(runs["a"])
    report = json.loads((runs["a"] / "report.json").read_text())
    p99 = report["notebooks"][0]["findings"]["p99_ms"]
    assert p99["better"] == "lower" and p99["ci"][0] <= p99["value"] <= p99["ci"][1]
    assert report["notebooks"][0]["findings"]["old_style"] == {"name": "old_style", "value": 1.5, "unit": "ms",
                                                               "explain": "a finding recorded the old way"}
    findings = json.loads((runs["a"] / "findings.json").read_text())
    assert findings["uncertainty"]["01_latency_gate"]["p99_ms"] == {"ci": p99["ci"], "better": "lower"}
    assert findings["uncertainty"]["01_latency_gate"]["samples"] == {"tolerance": 0.0}
    assert "old_style" not in findings["uncertainty"]["01_latency_gate"]

    # the same capture twice: within noise everywhere, exit 0
    assert main(["compare", str(runs["a"]), str(runs["a_again"]), "--no-html"]) == 0
    same = capsys.readouterr().out
    with capsys.disabled():
        print(same)  # shown with -s: the terminal output of the comparison
    assert "regressed 0, improved 0, changed 0, within noise 6, added 0, removed 0" in same
    assert {c.verdict for c in compare_reports(runs["a"], runs["a_again"]).changes} == {"within noise"}

    # the slow tail: p99 regressed (its CIs do not overlap), nothing else moved
    assert main(["compare", str(runs["a"]), str(runs["b"])]) == 1
    moved = capsys.readouterr().out
    with capsys.disabled():
        print(moved)  # shown with -s: the terminal output of the comparison
    assert len(moved.splitlines()) <= 20
    comp = compare_reports(runs["a"], runs["b"])
    verdicts = {c.finding: (c.verdict, c.rule.split(" (")[0]) for c in comp.changes}
    assert verdicts == {"p50_ms": ("within noise", "same value"), "p90_ms": ("within noise", "same value"),
                        "p99_ms": ("regressed", "CIs do not overlap"), "samples": ("within noise", "same value"),
                        "capture_kind": ("within noise", "same value"), "old_style": ("within noise", "same value")}
    [p99_change] = comp.with_verdict("regressed")
    assert p99_change.after_ci[0] > p99_change.before_ci[1]
    assert (runs["b"] / "compare.html").read_text().count('class="regressed">regressed') == 1

    # the other way round p99 improved: exit 0
    back = {c.finding: c.verdict for c in compare_reports(runs["b"], runs["a"]).changes}
    assert back["p99_ms"] == "improved" and set(back.values()) == {"improved", "within noise"}
    assert main(["compare", str(runs["b"]), str(runs["a"]), "--no-html"]) == 0

    # a finding added and a verdict string changed; then removed; then a notebook that failed
    runs["c"] = tmp_path / "c"
    assert main(["report", "--notebooks", str(nbs), "--out", str(runs["c"]), "--jobs", "1",
                 "-p", "capture_path", str(base_csv), "-p", "kind", "probe", "-p", "with_mean", "true"]) == 0
    runs["failed"] = tmp_path / "failed"
    assert main(["report", "--notebooks", str(nbs), "--out", str(runs["failed"]), "--jobs", "1",
                 "-p", "capture_path", str(tmp_path / "missing.csv")]) == 1
    capsys.readouterr()
    moved = {c.finding: (c.verdict, c.rule) for c in compare_reports(runs["a"], runs["c"]).changes
             if c.verdict != "within noise"}
    assert moved == {"capture_kind": ("changed", "a verdict string changed"),
                     "mean_ms": ("added", "recorded in NEW only")}
    assert compare_reports(runs["c"], runs["a"]).with_verdict("removed")[0].finding == "mean_ms"
    assert main(["compare", str(runs["a"]), str(runs["c"]), "--no-html"]) == 0
    failed = compare_reports(runs["a"], runs["failed"])
    assert {(c.finding, c.verdict) for c in failed.changes} == {
        (None, "regressed"), ("p50_ms", "removed"), ("p90_ms", "removed"), ("p99_ms", "removed"),
        ("samples", "removed"), ("capture_kind", "removed"), ("old_style", "removed")}
    assert main(["compare", str(runs["a"]), str(runs["failed"]), "--no-html"]) == 1
    assert "notebook went from ok to failed" in capsys.readouterr().out


def test_bundled_notebook_compares_within_noise_with_itself(tmp_path: Path, capsys) -> None:
    """Notebook 04 twice on its bundled data: within noise everywhere; a new Monte Carlo seed regresses nothing."""
    runs = {}
    for name, params in (("a", []), ("a_again", []), ("seed", ["-p", "seed", "5"])):
        runs[name] = tmp_path / name
        assert main(["report", "04", "--out", str(runs[name]), "--jobs", "1", *params]) == 0
    capsys.readouterr()
    assert main(["compare", str(runs["a"]), str(runs["a_again"])]) == 0
    out = capsys.readouterr().out
    with capsys.disabled():
        print(out)  # shown with -s: the terminal output of the comparison
    comp = compare_reports(runs["a"], runs["a_again"])
    assert len(comp.changes) >= 10 and {c.verdict for c in comp.changes} == {"within noise"}
    assert "nothing moved beyond its noise" in out

    assert main(["compare", str(runs["a"]), str(runs["seed"]), "--json", "--no-html"]) == 0
    data = json.loads(capsys.readouterr().out)
    moved = {c["finding"] for c in data["changes"] if c["verdict"] != "within noise"}
    # only what the Monte Carlo seed feeds may move, and none of it counts as a regression
    assert moved <= {"timeout_risk_ci", "timeout_risk_mc", "timeout_risk", "options"}
    fits = {c["finding"]: c for c in data["changes"] if c["finding"] in ("fit_slope", "fit_r2", "yields_per_section")}
    assert {c["verdict"] for c in fits.values()} == {"within noise"} and len(fits) == 3
