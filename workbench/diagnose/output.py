"""A diagnosis as terminal text and as a self-contained HTML page (no script, no external resource)."""
from __future__ import annotations

import html
import math
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import readable

if TYPE_CHECKING:
    from . import Diagnosis
    from .detectors import Detection

__all__ = ["code_span", "detection_markdown", "detectors_frame", "evidence_frame", "inputs_frame", "summary_text",
           "unrecognised_frame", "write_html"]


def _cut(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 1] + "…"


def _read_line(diag: Diagnosis) -> list[str]:
    read = [f for f in diag.inputs if f.kind != "unknown"]
    by_kind: dict[str, list[int]] = {}
    for f in read:
        s = by_kind.setdefault(f.kind, [0, 0, 0])
        s[0] += 1
        s[1] += f.rows
        s[2] += f.rejects
    parts = [f"{k} {v[0]} file(s), {readable.count(v[1])} rows, {readable.count(v[2])} rejects"
             for k, v in sorted(by_kind.items())]
    return [f"Read {len(read)} of {len(diag.inputs)} file(s): " + ("; ".join(parts) if parts else "nothing")]


def summary_text(diag: Diagnosis, width: int = 110) -> str:
    """The terminal summary: ranked suspects (with the command to run for each found or
    inconclusive one), what was read and not read, and the detectors that did not apply."""
    lines: list[str] = []
    found = diag.found
    if not diag.suspects:
        lines.append("No detector could run on these files: nothing to diagnose (see below for what each needs).")
    elif not found:
        lines.append(f"Nothing wrong found: {len(diag.suspects)} detector(s) ran, none found its anomaly.")
    else:
        lines.append(f"{len(found)} suspect(s) found by {len(diag.suspects)} detector(s) that ran, strongest first:")
    for i, d in enumerate(diag.suspects, 1):
        head = f"{i}. {d.detector} — {d.verdict} (strength {d.strength:.2f}): "
        lines.append(_cut(head + d.because, width))
        if d.command:
            lines.append(f"   next: {d.command}")
    lines += _read_line(diag)
    unknown = [f for f in diag.inputs if f.kind == "unknown"]
    if unknown:
        reasons = Counter(("not a capture" if f.reason.startswith("not a capture") else "no reader recognised it")
                          for f in unknown)
        example = next((f for f in unknown if not f.reason.startswith("not a capture")), unknown[0])
        lines.append(f"Not recognised: {len(unknown)} file(s) ("
                     + ", ".join(f"{n} {r}" for r, n in sorted(reasons.items())) + "); e.g. "
                     + _cut(f"{example.path}: {example.reason}", width - 40))
    if diag.not_applicable:
        lines.append("Did not apply: " + ", ".join(d.detector for d in diag.not_applicable)
                     + " (--json lists the input each needs)")
    return "\n".join(lines)


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 60em; padding: 0 1em; color: #222;
       overflow-wrap: anywhere; }
section.nb { border: 1px solid #ccc; border-radius: 6px; padding: .6em 1em; margin: 1em 0; }
section.nb h2 { font-size: 1.15em; margin: .2em 0 .4em; }
ul { margin: .2em 0; padding-left: 1.1em; }
table { border-collapse: collapse; width: 100%; }
td, th { border: 1px solid #ddd; padding: 4px 8px; vertical-align: top; text-align: left; }
th { background: #f4f4f4; }
code { background: #f4f4f4; padding: 1px 3px; }
.found { color: #b03a2e; font-weight: bold; }
.inconclusive { color: #9a6700; font-weight: bold; }
.notfound { color: #186a3b; font-weight: bold; }
.bar { display: inline-block; height: .7em; background: #b03a2e; vertical-align: middle; }
small { color: #555; }
"""


def _value(v: Any) -> str:
    if isinstance(v, float):
        return "n/a" if not math.isfinite(v) else readable.number(v)
    if isinstance(v, list | tuple):
        return ", ".join(_value(x) for x in v[:12]) + (" …" if len(v) > 12 else "")
    if isinstance(v, dict):
        return "; ".join(f"{k}: {_value(x)}" for k, x in list(v.items())[:12]) + (" …" if len(v) > 12 else "")
    return str(v)


def _figure(d: Detection) -> str:
    """The suspect's figure as inline SVG (labels are data text: matplotlib escapes them in the SVG)."""
    if not d.plot or d.verdict == "not found":
        return ""
    import io

    from ..plots.diagnose import plot_suspect

    try:
        fig = plot_suspect(d.plot, title=str(d.plot.get("title", ""))).get_figure()
        buf = io.StringIO()
        fig.savefig(buf, format="svg")  # type: ignore[union-attr]
    except (ValueError, KeyError, TypeError):
        return ""
    text = buf.getvalue()
    return f'<div class="fig">{text[text.index("<svg"):]}</div>'


def _card(d: Detection) -> str:
    e = html.escape
    cls = d.verdict.replace(" ", "")
    rows = "".join(f"<tr><th>{e(str(k))}</th><td>{e(_value(v))}</td></tr>" for k, v in d.evidence.items())
    caveats = "".join(f"<li>{e(c)}</li>" for c in d.caveats)
    cmd = (f"<p>Explained by notebook <b>{e(d.notebook or '')}</b>; run it on these files:<br>"
           f"<code>{e(d.command)}</code></p>") if d.command else ""
    width = max(0.0, min(1.0, d.strength)) * 10
    figure = _figure(d)
    return (f'<section class="nb"><h2>{e(d.detector)}: <span class="{e(cls)}">{e(d.verdict)}</span> '
            f'<small>strength {d.strength:.2f}</small> <span class="bar" style="width:{width:.1f}em"></span></h2>'
            f"<p>{e(d.because)}</p>{figure}<p><small>inputs: {e(', '.join(d.inputs))}</small></p>{cmd}"
            f"<details><summary>evidence</summary><table>{rows}</table></details>"
            + (f"<p>Caveats:</p><ul>{caveats}</ul>" if caveats else "") + "</section>")


def write_html(diag: Diagnosis, out_dir: str | Path) -> Path:
    """Write ``diagnosis.html`` (and ``diagnosis.json``) into ``out_dir``; returns the page's path."""
    import json

    e = html.escape
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "diagnosis.json").write_text(json.dumps(diag.as_json(), indent=2, allow_nan=False) + "\n",
                                        encoding="utf-8")
    cards = "".join(_card(d) for d in diag.suspects)
    inputs = "".join(
        f"<tr><td>{e(f.path)}</td><td>{e(f.kind)}</td><td>{e(f.format)}</td><td>{f.rows}</td><td>{f.rejects}</td>"
        f"<td>{e(readable.duration(f.span_s) if math.isfinite(f.span_s) else '')}</td><td>{e(f.reason)}</td></tr>"
        for f in diag.inputs)
    na = "".join(f"<li><b>{e(d.detector)}</b> needs {e(d.needs)}</li>" for d in diag.not_applicable)
    head = e(summary_text(diag).splitlines()[0]) if diag.inputs else "No files."
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>workbench diagnose</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<style>{_STYLE}</style></head><body>
<h1>workbench diagnose</h1>
<p>{head} Generated {e(time.strftime('%Y-%m-%d %H:%M:%S %Z'))}. Machine-readable: <a href="diagnosis.json">diagnosis.json</a>.</p>
{cards}
<h2>Detectors that did not apply</h2><ul>{na or '<li>none</li>'}</ul>
<h2>Files</h2>
<table><tr><th>path</th><th>kind</th><th>format</th><th>rows</th><th>rejects</th><th>span</th><th>not read because</th></tr>
{inputs}</table>
</body></html>
"""
    path = out / "diagnosis.html"
    path.write_text(page, encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- notebook pieces ----
# The triage notebook (00_triage) shows the same diagnosis as tables and Markdown: these build them.

def _shown_path(path: str, base: str | Path | None) -> str:
    """``path`` relative to ``base`` when it lies inside it, else as it is."""
    if base is None:
        return path
    try:
        rel = Path(path).resolve().relative_to(Path(base).resolve())
    except ValueError:
        return path
    return rel.as_posix() or "."


def inputs_frame(diag: Diagnosis, base: str | Path | None = None) -> Any:
    """The files read, one row each: path (relative to ``base`` when inside it), kind, format, rows,
    rejects, span_s (time covered by the rows' timestamps; NaN without timestamps)."""
    import pandas as pd

    rows = [{"path": _shown_path(f.path, base), "kind": f.kind, "format": f.format, "rows": int(f.rows),
             "rejects": int(f.rejects), "span_s": f.span_s} for f in diag.inputs if f.kind != "unknown"]
    frame = pd.DataFrame(rows, columns=["path", "kind", "format", "rows", "rejects", "span_s"])
    return frame.astype({"rows": "int64", "rejects": "int64", "span_s": "float64"})


def unrecognised_frame(diag: Diagnosis, base: str | Path | None = None) -> Any:
    """The files no reader accepted, one row each: path (relative to ``base`` when inside it), why
    (the reason each reader gave, or "not a capture")."""
    import pandas as pd

    rows = [{"path": _shown_path(f.path, base), "why": f.reason} for f in diag.inputs if f.kind == "unknown"]
    return pd.DataFrame(rows, columns=["path", "why"])


def detectors_frame(diag: Diagnosis, base: str | Path | None = None) -> Any:
    """Every detector, those that ran first (in rank order), then those that did not apply: detector,
    verdict, strength (NaN when it did not apply), notebook (the one that explains a found or
    inconclusive suspect), rests_on (the files the answer rests on, or for a detector that did not
    apply the input it needs)."""
    import pandas as pd

    rows = [{"detector": d.detector, "verdict": d.verdict, "strength": float(d.strength),
             "notebook": d.notebook or "", "rests_on": ", ".join(_shown_path(p, base) for p in d.inputs)}
            for d in diag.suspects]
    rows += [{"detector": d.detector, "verdict": d.verdict, "strength": math.nan, "notebook": "",
              "rests_on": f"needs {d.needs}"} for d in diag.not_applicable]
    return pd.DataFrame(rows, columns=["detector", "verdict", "strength", "notebook", "rests_on"])


def evidence_frame(d: Detection) -> Any:
    """A detection's evidence, one row per item: evidence (its name, with the unit in it), value (as text)."""
    import pandas as pd

    def text(v: Any) -> str:
        if isinstance(v, list | tuple) and v and all(isinstance(x, dict) for x in v):
            return "; ".join("(" + ", ".join(f"{k} {_value(x)}" for k, x in item.items()) + ")" for item in v[:12]) \
                + (" …" if len(v) > 12 else "")
        if isinstance(v, list | tuple | dict) and not v:
            return "none"
        return _value(v)

    rows = [{"evidence": str(k), "value": text(v)} for k, v in d.evidence.items()]
    return pd.DataFrame(rows, columns=["evidence", "value"])


def code_span(text: str) -> str:
    """``text`` as a Markdown code span: shown exactly as it is (no escaping needed, none applied), and
    safe for any text, since the fence is longer than any run of backticks inside it."""
    import re

    run = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (run + 1)
    one_line = text.replace("\r", " ").replace("\n", " ")  # one line: a blank line would end the paragraph
    return f"{fence} {one_line} {fence}"


def detection_markdown(d: Detection) -> str:
    """One detection as Markdown (data text escaped): verdict and strength, the sentence behind it,
    its caveats, and for a found or inconclusive one the notebook that explains it and the command."""
    from ..notebook import esc

    text = f"**{esc(d.verdict)}**, strength {d.strength:.2f} of 1: {esc(d.because)}"
    if d.caveats:
        text += "\n\n*Caveats:*\n\n" + "\n".join(f"- {esc(c)}" for c in d.caveats)
    if d.command:
        text += (f"\n\nExplained step by step by notebook **{esc(d.notebook or '')}**; "
                 f"to run it on these very files:\n\n{code_span(d.command)}")
    return text
