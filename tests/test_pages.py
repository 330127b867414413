"""Report pages open anywhere: no script, no network, the story first, a header that says what ran."""
from __future__ import annotations

import re
from pathlib import Path

from workbench.report import run_report

from .conftest import make_notebook


def _pages(tmp_path: Path, tiny_notebooks: Path, no_input: bool = False) -> Path:
    out = tmp_path / ("plain" if no_input else "full")
    run_report(sorted(tiny_notebooks.glob("*.ipynb")), {"x": "5"}, out_dir=out, no_input=no_input, echo=False)
    return out


def test_pages_are_self_contained_titled_and_lead_with_the_story(tmp_path: Path, tiny_notebooks: Path) -> None:
    out = _pages(tmp_path, tiny_notebooks)
    page = (out / "01_ok.html").read_text()
    assert "<script" not in page.lower()
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    urls = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)""", page)
    assert urls and all(u.startswith(("data:", "#", "index.html")) for u in urls), urls
    assert "@import" not in page and not re.search(r"url\(\s*['\"]?(?!data:)", page)  # no stylesheet load
    assert "<title>A notebook that works</title>" in page
    assert 'href="index.html"' in page
    assert page.count('<details class="wb-code">') == 4  # every code cell folded: parameters, injected ones, two more
    assert "set for this run" in page and "x = 5" in page  # the override is marked with its value
    assert "commit" in page and "numpy" in page and "ran " in page


def test_no_input_pages_keep_the_header_and_drop_the_code(tmp_path: Path, tiny_notebooks: Path) -> None:
    out = _pages(tmp_path, tiny_notebooks, no_input=True)
    page = (out / "01_ok.html").read_text()
    assert 'class="wb-header"' in page and "x = 5" in page
    assert 'class="wb-code"' not in page and "record_finding(" not in page


def test_page_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    nb = make_notebook(tmp_path / "nb" / "01_plain.ipynb", "y = 1  # a number", ["print(y)"])
    out = tmp_path / "out"
    run_report([nb], out_dir=out, echo=False)
    assert sorted(p.name for p in out.iterdir() if p.name.endswith(".tmp")) == []  # no temporary file left


def test_inline_html_in_markdown_outputs_stays_whole_and_local_images_are_embedded(tmp_path: Path) -> None:
    """An inline ``<code>`` keeps its text (nbconvert's image embedding used to close it at once)."""
    import base64

    import nbformat

    from workbench.notebook import esc
    from workbench.report.html import render_html

    png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
    (tmp_path / "pic.png").write_bytes(png)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell("show()")
    text = f"read your capture <code>{esc('data/nb01/calls_x.csv')}</code>: 3 rows; see {esc('https://h/x_y')}"
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/markdown": text, "text/plain": "md"})]
    nb.cells = [nbformat.v4.new_markdown_cell('a picture <img src="pic.png" alt="p"> here'), cell]
    nbformat.write(nb, str(tmp_path / "n.ipynb"))
    render_html(tmp_path / "n.ipynb", tmp_path / "n.html")
    page = (tmp_path / "n.html").read_text()
    assert "<code>data/nb01/calls_x.csv</code>: 3 rows" in page
    assert "https://h/x_y" in page and 'href="https://h' not in page  # data text, not a link
    assert re.search(r'<img[^>]*src="data:image/png;base64,', page) and 'src="pic.png"' not in page


def test_markup_in_code_is_shown_as_text_never_run(tmp_path: Path) -> None:
    src = ("s = \"<script>alert('x')</script><img src=x onerror=alert(1)>\"  # markup in a string\n"
           "# <b>a comment</b> & more")
    nb = make_notebook(tmp_path / "nb" / "01_markup.ipynb", "y = 1  # a number", [src])
    out = tmp_path / "out"
    run_report([nb], out_dir=out, echo=False)
    page = (out / "01_markup.html").read_text()
    assert "<script" not in page.lower() and "<img src=x" not in page and "<b>a comment" not in page
    assert "&lt;script&gt;" in page and "&lt;b&gt;a comment&lt;/b&gt; &amp; more" in page
