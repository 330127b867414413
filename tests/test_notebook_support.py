"""Inputs, skipped sections, escaping and decisions: what every notebook builds on."""
from __future__ import annotations

import html
from pathlib import Path

import pandas as pd
import pytest

from workbench.errors import UsageError
from workbench.latency import read_latency
from workbench.notebook import Inputs, decision_markdown, esc
from workbench.verdicts import Decision, decide, intervals_disjoint

ROOT = Path(__file__).resolve().parent.parent


def test_inputs_record_what_was_read_and_where_from(tmp_path: Path) -> None:
    mine = tmp_path / "mine.csv"
    mine.write_text("timestamp_s,latency_ms\n1700000000,1.5\n1700000010,2.5\nbad,line\n")
    inputs = Inputs(sections={"symptom": ["samples_path"], "ping": ["ping_path"], "both": ["samples_path", "ping_path"]})
    bundled = inputs.load("samples_path", "data/02_low_qps_nagle/nagle_samples.csv", read_latency, what="latency samples")
    assert bundled is not None and inputs["samples_path"].origin == "bundled"
    assert inputs["samples_path"].describe().startswith("the bundled latency samples")
    inputs.load("ping_path", "", read_latency, what="TCP connect pings")
    assert not inputs["ping_path"].present and inputs.missing(["ping_path"]) == ["ping_path (TCP connect pings)"]
    mine_frame = inputs.load("mine", str(mine), read_latency, what="latency samples")
    assert mine_frame is not None and inputs["mine"].origin == "yours" and inputs["mine"].describe().startswith("your")
    t = inputs.table().set_index("input")
    assert t.loc["mine", "rows"] == 2 and t.loc["mine", "rejects"] == 1
    assert t.loc["mine", "first"] == "2023-11-14 22:13:20 UTC" and t.loc["mine", "span_s"] == 10.0
    assert t.loc["ping_path", "origin"] == "absent" and pd.isna(t.loc["ping_path", "rows"])
    plan = inputs.plan().set_index("section")
    assert plan.loc["symptom", "runs"] and not plan.loc["ping", "runs"] and not plan.loc["both", "runs"]
    assert plan.loc["both", "why_not"] == "ping_path (TCP connect pings)"


def test_skipped_section_records_its_findings_as_none(capsys: pytest.CaptureFixture[str]) -> None:
    inputs = Inputs(sections={"2. Suspects": ["ping_path"]})
    inputs.load("ping_path", None, read_latency, what="TCP connect pings")
    assert inputs.section("2. Suspects", findings=["ping_p99_ms"]) is False
    assert "2. Suspects — skipped: needs ping\\_path \\(TCP connect pings\\)" in capsys.readouterr().out
    inputs.require("overlap", False, "a ping series that overlaps the calls in time")
    assert inputs.section("x", needs=["overlap"]) is False
    inputs.require("overlap", True, "")
    assert inputs.section("x", needs=["overlap"]) is True


def test_a_given_but_broken_input_raises_never_skips(tmp_path: Path) -> None:
    inputs = Inputs()
    with pytest.raises(FileNotFoundError):
        inputs.load("samples_path", str(tmp_path / "nope.csv"), read_latency, what="latency samples")
    with pytest.raises(UsageError, match="takes a path"):
        inputs.load("samples_path", 3, read_latency, what="latency samples")


def test_escaping_keeps_data_from_becoming_markup() -> None:
    hostile = "/x/<img src=x onerror=alert(1)>.csv **bold** [link](javascript:x)"
    out = esc(hostile)
    assert "<img" not in out and "&lt;img" in out and "\\*\\*bold\\*\\*" in out and "\\[link\\]\\(" in out
    # what a reader sees once the Markdown is rendered: the original text, apostrophes and all
    # (nbconvert renders report pages with mistune)
    import mistune

    for text in (hostile, "the server's log", "a_b_c > 3 & d", 'say "hi"', "# not a title", "*x* `y`",
                 "see https://example.com/x_y"):
        rendered = mistune.html(esc(text)).strip()
        assert rendered.startswith("<p>") and rendered.endswith("</p>"), rendered
        assert html.unescape(rendered[3:-4]) == text, (text, rendered)
        assert "<a " not in rendered, rendered  # data text never becomes a link


def test_decisions_carry_verdict_evidence_and_caveats() -> None:
    d = decide("Is the tail worse at low rate?", yes=True, no=False, because_yes="p99 CIs do not overlap",
               because_no="", because_inconclusive="", evidence={"p99_low_ms": 48.3, "ratio": float("nan")},
               caveats=("few samples <10>",))
    assert d.yes and not d.no and d.verdict == "yes"
    assert d.summary() == {"verdict": "yes", "because": "p99 CIs do not overlap",
                           "evidence": {"p99_low_ms": 48.3, "ratio": None}, "caveats": ["few samples <10>"]}
    assert "&lt;10&gt;" in decision_markdown(d) and "**yes**" in decision_markdown(d)
    assert decide("q", yes=False, no=False, because_yes="", because_no="", because_inconclusive="why").verdict \
        == "inconclusive"
    with pytest.raises(UsageError):
        decide("q", yes=True, no=True, because_yes="", because_no="", because_inconclusive="")
    with pytest.raises(UsageError):
        Decision("q", "maybe", "x")  # type: ignore[arg-type]
    assert intervals_disjoint((1, 2), (3, 4)) and not intervals_disjoint((1, 3), (2, 4))
    assert not intervals_disjoint((1, float("nan")), (3, 4))
