"""The report's pages: each executed notebook as self-contained HTML, and the index.

:func:`render_html` turns an executed notebook into one HTML file with its
figures inline; :func:`write_index` writes ``index.html``, ``findings.json``
and ``report.json`` for a list of :class:`~workbench.report.runner.NotebookResult`.

The two JSON files carry the version of their layout:

- ``findings.json``: ``{"version": 1, "findings": {notebook: {finding name: value}},
  "uncertainty": {notebook: {finding name: {"ci": [low, high], "tolerance": …,
  "rel_tolerance": …, "better": "lower"|"higher"}}}}`` — ``uncertainty`` lists only
  the findings that declare something, and only the keys they declare;
- ``report.json``: ``{"version": 1, "notebooks": [NotebookResult.to_json(), ...],
  "run": {...}}`` (status, run time, parameters, findings with units, explanations
  and the same optional uncertainty keys, the error, and ``timing``: where each
  notebook's time went, see :class:`~workbench.report.results.NotebookResult`);
  ``run`` (optional) says where and how the report ran: ``host``, ``jobs``,
  ``cores``, ``kernels`` ("warm" or "cold"), ``started_s`` (epoch), ``wall_s``.

A version changes when a reader of the previous one would misread the file;
optional keys that older readers can ignore (``uncertainty``, a finding's ``ci`` …)
leave it as it is.
"""
from __future__ import annotations

import html
import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..findings import Finding, describe_uncertainty, format_value, is_decision

if TYPE_CHECKING:
    from .results import NotebookResult

ERROR_ANCHOR = "papermill-error-cell"
#: layout version of ``findings.json``
FINDINGS_JSON_VERSION = 1
#: layout version of ``report.json``
REPORT_JSON_VERSION = 1


TEMPLATES = Path(__file__).resolve().parent / "templates"


def _page_exporter() -> type:
    """nbconvert's HTML exporter, with images embedded but inline HTML tags left whole.

    With ``embed_images`` nbconvert parses every inline HTML fragment on its own,
    so an opening tag such as ``<code>`` is closed at once and its text falls out
    of it (``<code></code>data/x.csv``). Only ``<img>`` fragments need embedding;
    every other fragment is passed through as Markdown gives it.
    """
    from jinja2 import pass_context
    from nbconvert import HTMLExporter
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    class Renderer(IPythonRenderer):
        def inline_html(self, html: str) -> str:
            if html.lstrip()[:4].lower() == "<img":
                return str(super().inline_html(html))
            return html

    class PageExporter(HTMLExporter):
        @pass_context
        def markdown2html(self, context: Any, source: str) -> str:
            cell = context.get("cell", {})
            renderer = Renderer(
                escape=False, attachments=cell.get("attachments", {}), embed_images=self.embed_images,
                path=context.get("resources", {}).get("metadata", {}).get("path", ""),
                anchor_link_text=self.anchor_link_text, exclude_anchor_links=self.exclude_anchor_links,
                **self.lexer_options)
            return str(MarkdownWithMath(renderer=renderer).render(source))

    return PageExporter


def render_html(ipynb: Path, out_html: Path, no_input: bool = False,
                page: Mapping[str, Any] | None = None) -> None:
    """Render an executed notebook as one self-contained page (images inline, no script, no network).

    ``page`` fills the page header (see :func:`page_info`): title, back-link to
    the index, status, run time, host, versions, commit, data sources and
    parameters with the ones set for this run marked. Code cells are folded.
    """
    import nbformat

    nb = nbformat.read(str(ipynb), as_version=4)
    exporter = _page_exporter()(template_name="workbench_page", extra_template_basedirs=[str(TEMPLATES)],
                            embed_images=True, exclude_input=no_input, exclude_input_prompt=no_input,
                            exclude_output_prompt=no_input)
    title = (page or {}).get("title") or ipynb.stem
    resources: dict[str, Any] = {"metadata": {"name": title, "path": str(ipynb.parent)}}
    if page:
        resources["workbench"] = dict(page)
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    tmp = out_html.with_name(f".{out_html.name}.tmp")
    tmp.write_text(body, encoding="utf-8")
    os.replace(tmp, out_html)


def page_info(name: str, title: str, status: str, started_s: float, seconds: float,
              parameters: Mapping[str, Any], defaults: Mapping[str, Any], overridden: Sequence[str]) -> dict[str, Any]:
    """The header of a page: what ran, when, where, with which parameters and data (all plain text)."""
    from .. import readable
    from .provenance import run_info, versions_line

    info = run_info()
    params = []
    sources = []
    for k, v in parameters.items():
        params.append({"name": k, "value": repr(v), "default": repr(defaults.get(k)), "overridden": k in overridden})
        if isinstance(v, str) and v and ("/" in v or v.endswith((".csv", ".txt", ".json", ".gz"))):
            sources.append(v)
    return {
        "name": name, "title": title, "status": status, "started": readable.when(started_s),
        "duration": readable.duration(seconds), "host": info["host"], "version": info["workbench"],
        "commit": info["commit"], "versions": versions_line(info), "sources": sources,
        "parameters": params, "overridden": list(overridden),
    }


#: at most this many answers lead a notebook's card when it marks none as headline
DEFAULT_HEADLINES = 3


def headlines(findings: dict[str, Finding]) -> list[str]:
    """The findings a notebook's card leads with: those marked ``headline``; else its decisions; else the first few."""
    marked = [k for k, f in findings.items() if f.headline]
    if marked:
        return marked
    decisions = [k for k, f in findings.items() if is_decision(f.value)]
    return (decisions or list(findings))[:DEFAULT_HEADLINES]


def _value_html(f: Finding) -> str:
    """A finding's value for the index: a small table for a mapping of plain values, text otherwise."""
    v = f.value
    if is_decision(v):
        because = f" — {html.escape(str(v['because']))}" if v.get("because") else ""
        return f"<b>{html.escape(str(v['verdict']))}</b>{because}"
    if isinstance(v, dict) and v and not is_decision(v) and all(not isinstance(x, dict | list) for x in v.values()):
        rows = "".join(f"<tr><td>{html.escape(str(k))}</td><td><b>{html.escape(format_value(x, f.unit))}</b></td></tr>"
                       for k, x in v.items())
        return f'<table class="kv">{rows}</table>'
    return f"<b>{html.escape(format_value(v, f.unit))}</b>"


def _finding_html(f: Finding) -> str:
    noise = describe_uncertainty(f)
    return (f"<code>{html.escape(f.name)}</code>: {_value_html(f)}"
            + (f" <small>({html.escape(noise)})</small>" if noise else "")
            + (f"<br><small>{html.escape(f.explain)}</small>" if f.explain else ""))


def _card(r: NotebookResult) -> str:
    """One notebook on the index: status, its answers first, then the rest folded."""
    link = f'<a href="{html.escape(Path(r.html).name)}">{html.escape(r.name)}</a>' if r.html else html.escape(r.name)
    status = '<span class="ok">ok</span>' if r.status == "ok" else '<span class="failed">failed</span>'
    lead = headlines(r.findings)
    answers = "".join(f"<li>{_finding_html(r.findings[k])}</li>" for k in lead)
    rest = [f for k, f in r.findings.items() if k not in lead]
    more = ""
    if rest:
        rows = "".join(f"<li>{_finding_html(f)}</li>" for f in rest)
        more = f"<details><summary>{len(rest)} more findings</summary><ul>{rows}</ul></details>"
    params = "".join(f"<li><code>{html.escape(k)}</code> = <code>{html.escape(repr(v))}</code></li>"
                     for k, v in r.parameters.items())
    params_html = (f"<details><summary>{len(r.parameters)} parameters</summary><ul>{params}</ul></details>"
                   if r.parameters else "")
    err = ""
    if r.error is not None:
        where = f" in cell {r.error.execution_count}" if r.error.execution_count is not None else ""
        anchor = f'{html.escape(Path(r.html).name)}#{ERROR_ANCHOR}' if r.html else ""
        err = (f'<div class="err"><b>{html.escape(r.error.ename)}</b>{where}: '
               f"{html.escape(r.error.evalue)}"
               + (f' (<a href="{anchor}">see the failing cell</a>)' if anchor else "") + "</div>")
    return (f'<section class="nb"><h2>{link} {status} <small>{r.seconds:.1f} s</small></h2>'
            f"<div><small>{html.escape(r.title)}</small></div>"
            + (f'<div class="timing"><small>{html.escape(timing_text(r))}</small></div>' if r.timing else "")
            + (f'<ul class="answers">{answers}</ul>' if answers else "<p><small>no findings</small></p>")
            + more + params_html + err + "</section>")


def timing_text(r: NotebookResult) -> str:
    """Where a notebook's time went, in one line: kernel, cells, slowest cell, page, host."""
    from .. import readable

    t = r.timing
    parts = []
    if t.get("kernel") == "warm":
        if t.get("warm_up_s"):
            parts.append(f"warm kernel started and imports loaded {readable.duration(t['warm_up_s'])}")
        else:
            parts.append(f"warm kernel (notebook {t.get('kernel_notebook', '?')} on it), reset "
                         f"{readable.duration(t.get('reset_s') or 0.0)}")
    elif t.get("kernel") == "cold" and "kernel_start_s" in t:
        parts.append(f"fresh kernel started {readable.duration(t['kernel_start_s'])}")
    if "cells_s" in t:
        parts.append(f"cells {readable.duration(t['cells_s'])}")
    slow = t.get("slowest_cells") or []
    if slow:
        c = slow[0]
        label = f"[{c['execution_count']}]" if c.get("execution_count") is not None else f"#{c['cell']}"
        parts.append(f"slowest cell {label} {readable.duration(c['seconds'])}")
    if "render_s" in t:
        parts.append(f"page {readable.duration(t['render_s'])}")
    if t.get("host"):
        where = f"job {t['job']} of {t['jobs']}" if "job" in t else f"worker process {t.get('worker_pid', '?')}"
        parts.append(f"on {t['host']}, {where}")
    if t.get("warm_kernel_error"):
        parts.append(f"ran on a fresh kernel: {t['warm_kernel_error']}")
    return "; ".join(parts)


def run_text(run: Mapping[str, Any]) -> str:
    """Where and how the report ran, in one sentence."""
    from .. import readable

    return (f"Ran on {run.get('host', '?')} with {run.get('jobs', '?')} notebook(s) at once "
            f"({run.get('cores', '?')} core(s) available), {run.get('kernels', '?')} kernels, in "
            f"{readable.duration(float(run.get('wall_s') or 0.0))} of wall time.")


def write_index(results: list[NotebookResult], out: Path, no_input: bool = False,
                run: Mapping[str, Any] | None = None) -> Path:
    """Write ``index.html``, ``findings.json`` and ``report.json`` for these results (``run``: see ``report.json``)."""
    findings = {r.name: {k: f.value for k, f in r.findings.items()} for r in results}
    uncertainty = {r.name: {k: f.uncertainty() for k, f in r.findings.items() if f.uncertainty()} for r in results}
    uncertainty = {k: v for k, v in uncertainty.items() if v}
    _write_whole(out / "findings.json",
        json.dumps({"version": FINDINGS_JSON_VERSION, "findings": findings, "uncertainty": uncertainty},
                   indent=2, allow_nan=False) + "\n")
    _write_whole(out / "report.json",
        json.dumps({"version": REPORT_JSON_VERSION, "notebooks": [r.to_json() for r in results],
                    **({"run": dict(run)} if run else {})}, indent=2, default=str) + "\n")
    cards = "".join(_card(r) for r in results)
    n_ok = sum(r.status == "ok" for r in results)
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>workbench report</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 60em; padding: 0 1em; color: #222;
        overflow-wrap: anywhere; }}
section.nb {{ border: 1px solid #ccc; border-radius: 6px; padding: .6em 1em; margin: 1em 0; }}
section.nb h2 {{ font-size: 1.15em; margin: .2em 0 .4em; }}
ul {{ margin: .2em 0; padding-left: 1.1em; }}
ul.answers li {{ margin: .35em 0; }}
table {{ border-collapse: collapse; width: 100%; table-layout: fixed; }}
td, th {{ border: 1px solid #ddd; padding: 4px 8px; vertical-align: top; text-align: left; }}
th {{ background: #f4f4f4; }}
table.kv {{ table-layout: auto; width: auto; }}
table.kv td {{ border: none; padding: 0 .8em 0 0; }}
details {{ margin: .4em 0; }}
summary {{ cursor: pointer; color: #225; }}
.ok {{ color: #186a3b; font-weight: bold; }}
.failed {{ color: #b03a2e; font-weight: bold; }}
.err {{ color: #b03a2e; margin-top: .5em; white-space: pre-wrap; }}
small {{ color: #555; }}
</style></head><body>
<h1>workbench report</h1>
<p>{n_ok} of {len(results)} notebooks ran cleanly. Generated {time.strftime('%Y-%m-%d %H:%M:%S %Z')}.
Machine-readable: <a href="findings.json">findings.json</a>, <a href="report.json">report.json</a>.
{html.escape(run_text(run)) if run else ""}</p>
{cards}
</body></html>
"""
    index = out / "index.html"
    _write_whole(index, page)
    return index


def _write_whole(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it into place: never half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
