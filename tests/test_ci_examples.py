"""The CI examples run: each workflow's shell commands, on a fresh clone, with the CI services simulated.

No CI service is reachable from a test, so the steps that call one are stood in for:
checkout is the clone, ``make venv`` is a link to this environment's virtualenv,
downloading the previous artifact copies a report made earlier, and uploading or
publishing checks that the path it would upload holds a report. Every ``run:``
(GitHub) and ``script:`` (GitLab) command runs as written, in bash.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")  # installed with dask

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "ci"
INSTALL = "make venv"


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh clone of this checkout, its .venv linked to the running one."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout")
    dest = tmp_path_factory.mktemp("ci") / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(dest)], check=True)
    (dest / ".venv").symlink_to(Path(sys.prefix))  # stands in for `make venv`
    return dest


def _bash(script: str, cwd: Path, env: dict[str, str], strict: bool = True) -> subprocess.CompletedProcess:
    prefix = "set -eo pipefail\n" if strict else ""
    return subprocess.run(["bash", "-c", prefix + script], cwd=cwd, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=900)


def _junit(path: Path) -> dict[str, ET.Element]:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    return {s.get("name"): s for s in root.iter("testsuite")}


def _fresh(clone: Path) -> None:
    for name in ("reports", "baseline", "baseline-artifact", "public", "summary.md"):
        p = clone / name
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()


def test_gitlab_then_github_examples_run(clone: Path) -> None:
    _fresh(clone)
    # --- GitLab: no previous artifact on the first run
    gitlab = yaml.safe_load((EXAMPLES / "gitlab-ci.yml").read_text())
    job = gitlab["workbench-report"]
    env = {k: str(v) for k, v in job.get("variables", {}).items()}
    env.update(CI_JOB_TOKEN="", CI_PROJECT_ID="1", CI_DEFAULT_BRANCH="main", CI_JOB_NAME="workbench-report",
               CI_API_V4_URL="http://127.0.0.1:9/api/v4")  # loopback, nothing listens: "no previous report"
    script = "\n".join(line for line in job["script"] if line.strip() != INSTALL)
    assert INSTALL in job["script"]
    res = _bash(script, clone, env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "no previous report to compare with" in res.stdout
    assert "checks (examples/ci/checks.toml): 4 passed, 0 failed, 0 wrong" in res.stdout
    for path in job["artifacts"]["paths"]:
        assert (clone / path / "report.json").is_file()
    suites = _junit(clone / job["artifacts"]["reports"]["junit"][0])
    assert (suites["workbench.notebooks"].get("tests"), suites["workbench.notebooks"].get("failures")) == ("1", "0")
    assert (suites["workbench.checks"].get("tests"), suites["workbench.checks"].get("failures")) == ("4", "0")
    pages = gitlab["pages"]
    res = _bash("\n".join(pages["script"]), clone, {})
    assert res.returncode == 0, res.stderr
    assert (clone / pages["artifacts"]["paths"][0] / "index.html").is_file()
    gitlab_report = clone.parent / "gitlab-reports"
    shutil.rmtree(gitlab_report, ignore_errors=True)
    shutil.copytree(clone / "reports", gitlab_report)

    # --- GitHub: the GitLab run's reports/ stands in for the previous run's artifact
    _fresh(clone)
    workflow = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text())
    assert set(workflow.get("on", workflow.get(True, {}))) == {"push", "pull_request"}  # YAML 1.1 reads `on` as true
    env = {k: str(v) for k, v in workflow.get("env", {}).items()}
    env["GITHUB_STEP_SUMMARY"] = str(clone / "summary.md")
    ran: list[str] = []
    for step in workflow["jobs"]["report"]["steps"]:
        uses = step.get("uses", "")
        with_ = step.get("with", {})
        if uses.startswith(("actions/checkout@", "actions/setup-python@")):
            continue  # the clone is the checkout; Python is this one
        if uses.startswith("dawidd6/action-download-artifact@"):
            shutil.copytree(gitlab_report, clone / with_["path"])
        elif uses.startswith(("actions/upload-artifact@", "actions/upload-pages-artifact@")):
            assert (clone / with_["path"] / "report.json").is_file() and (clone / with_["path"] / "index.html").is_file()
        elif uses.startswith("mikepenz/action-junit-report@"):
            files = sorted(clone.glob(with_["report_paths"]))
            assert [f.name for f in files] == ["compare-junit.xml", "junit.xml"]
            for f in files:
                _junit(f)
        elif uses:
            pytest.fail(f"the test does not know how to stand in for {uses}")
        elif step["run"].strip() == INSTALL:
            continue  # .venv is linked
        else:
            res = _bash(step["run"], clone, env)
            assert res.returncode == 0, f"{step.get('name')}: {res.stdout}{res.stderr}"
            ran.append(res.stdout)
    assert len(ran) == 2
    assert "nothing moved beyond its noise" in ran[1] and "result: no regression (exit 0)" in ran[1]
    compare = _junit(clone / "reports" / "compare-junit.xml")["workbench.compare"]
    assert int(compare.get("tests")) >= 10 and compare.get("failures") == "0"
    assert (clone / "reports" / "compare.html").is_file()
    summary = (clone / "summary.md").read_text()
    assert "## workbench report" in summary and "### checks: 4 of 4 passed" in summary
    assert "## workbench compare" in summary and "Nothing moved beyond its noise." in summary
    publish = workflow["jobs"]["publish"]
    assert publish["needs"] == "report" and publish["steps"][0]["uses"].startswith("actions/deploy-pages@")


def test_a_broken_gate_fails_the_run_from_a_fresh_clone(clone: Path) -> None:
    gate = clone.parent / "strict.toml"
    gate.write_text('"04_event_loop_yields.fit_r2" = {min = 0.9999}\n'
                    '"04_event_loop_yields.fit_slope" = {max = 1.2}\n')
    out = clone.parent / "strict-report"
    res = _bash(f".venv/bin/workbench report 04 --out {out} --check {gate} --junit {out}/junit.xml", clone, {},
                strict=False)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "check FAILED: 04_event_loop_yields.fit_r2 = 0.9991: breaks min = 0.9999" in res.stdout
    checks = _junit(out / "junit.xml")["workbench.checks"]
    assert (checks.get("tests"), checks.get("failures"), checks.get("errors")) == ("2", "1", "0")
    failure = next(checks.iter("failure"))
    assert failure.get("message") == "04_event_loop_yields.fit_r2 = 0.9991: breaks min = 0.9999"
    # a misspelt finding is a mistake in the check file, not a pass
    gate.write_text('"04_event_loop_yields.fit_r_squared" = {min = 0.9}\n')
    res = _bash(f".venv/bin/workbench check {out} --check {gate}", clone, {}, strict=False)
    assert res.returncode == 2
    assert "unknown finding: 04_event_loop_yields records no 'fit_r_squared'" in res.stdout
