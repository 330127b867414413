"""The comparison as one self-contained HTML page, in the style of the report's index.

No script and no request to the network (a Content-Security-Policy forbids
both); each notebook links to its page in BASE and in NEW, by paths relative to
where the page is written, so the three folders can move together.
"""
from __future__ import annotations

import html
import os
import time
from pathlib import Path
from urllib.parse import quote

from ..findings import format_plain
from .compare import VERDICTS, Comparison, change_text
from .reading import RunReport

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; width: 100%; }
td, th { border: 1px solid #ccc; padding: 6px 10px; vertical-align: top; text-align: left; }
th { background: #f0f0f0; }
code { word-break: break-all; }
small { color: #555; }
.regressed { color: #b03a2e; font-weight: bold; }
.improved { color: #186a3b; font-weight: bold; }
.changed { color: #a0522d; font-weight: bold; }
.within-noise { color: #555; }
.added, .removed { color: #1a5fb4; font-weight: bold; }
tr.quiet td { color: #666; }
"""


def _link(report: RunReport, notebook: str, out_dir: Path, text: str) -> str:
    page = report.page(notebook)
    if page is None:
        return f"<small>{html.escape(text)}: no page</small>"
    href = os.path.relpath(page.resolve(), out_dir.resolve())
    return f'<a href="{html.escape(quote(Path(href).as_posix()))}">{html.escape(text)}</a>'


def _value(value: object, unit: str | None, ci: list | None) -> str:
    text = html.escape("—" if value is None else format_plain(value, unit))
    if ci is not None:
        text += f" <small>CI [{html.escape(format_plain(ci[0]))}, {html.escape(format_plain(ci[1]))}]</small>"
    return text


def write_compare_html(comp: Comparison, out_html: str | Path) -> Path:
    """Write the comparison page to ``out_html`` (its folder is created) and return its path."""
    out = Path(out_html)
    out.parent.mkdir(parents=True, exist_ok=True)
    counts = comp.counts()
    order = sorted(range(len(comp.changes)), key=lambda i: (VERDICTS.index(comp.changes[i].verdict), i))
    rows = []
    for i in order:
        c = comp.changes[i]
        css = c.verdict.replace(" ", "-")
        pages = (_link(comp.base, c.notebook, out.parent, "BASE") + " · "
                 + _link(comp.new, c.notebook, out.parent, "NEW"))
        name = html.escape(c.finding) if c.finding is not None else "<i>notebook status</i>"
        rows.append(
            f'<tr class="{"quiet" if c.verdict == "within noise" else ""}">'
            f'<td class="{css}">{html.escape(c.verdict)}</td>'
            f"<td>{html.escape(c.notebook)}<br><small>{pages}</small></td><td><code>{name}</code>"
            + (f"<br><small>{html.escape(c.explain)}</small>" if c.explain else "") + "</td>"
            f"<td>{_value(c.before, c.unit, c.before_ci)}</td><td>{_value(c.after, c.unit, c.after_ci)}</td>"
            f"<td>{html.escape(change_text(c))}</td>"
            f"<td>{html.escape(c.rule)}" + (f"<br><small>{html.escape(c.better)} is better</small>" if c.better else "")
            + "</td></tr>")
    summary = ", ".join(f'<span class="{k.replace(" ", "-")}">{v} {html.escape(k)}</span>' for k, v in counts.items())
    base_index = os.path.relpath((comp.base.folder / "index.html").resolve(), out.parent.resolve())
    new_index = os.path.relpath((comp.new.folder / "index.html").resolve(), out.parent.resolve())
    verdict = ('<p class="regressed">Something regressed.</p>' if comp.exit_code else
               '<p class="improved">Nothing regressed.</p>')
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<title>workbench compare</title>
<style>{_CSS}</style></head><body>
<h1>workbench compare</h1>
<p>BASE <a href="{html.escape(quote(Path(base_index).as_posix()))}"><code>{html.escape(str(comp.base.folder))}</code></a>
→ NEW <a href="{html.escape(quote(Path(new_index).as_posix()))}"><code>{html.escape(str(comp.new.folder))}</code></a>.
Generated {time.strftime('%Y-%m-%d %H:%M:%S %Z')}.</p>
<p>{summary}.</p>
{verdict}
<p><small>A number moved beyond its noise when the two runs' confidence intervals do not overlap (a run without
a CI lends its value the other run's CI widths) and the change exceeds any declared tolerance; without a CI, when it exceeds the
tolerance. A direction (lower or higher is better) turns such a move into regressed or improved; without one it is
changed. Values without a CI or tolerance that differ at all are changed.</small></p>
<table><tr><th>verdict</th><th>notebook</th><th>finding</th><th>before</th><th>after</th><th>change</th><th>rule</th></tr>
{''.join(rows)}
</table></body></html>
"""
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(page, encoding="utf-8")
    os.replace(tmp, out)
    return out
