"""Report pages and JupyterLab in a real browser: headless Chromium driven by Playwright.

The pages must open from a file with no request to anywhere, no console
error and no script run (even when the data tries to inject one); their
title, back-link and code fold must work. JupyterLab must run a notebook with
an explorer and redraw when a control changes.

Chromium is the system one (``chromium`` on Debian, or ``WORKBENCH_CHROMIUM``):
Playwright cannot download browsers here. Without it these tests skip, unless
``WORKBENCH_BROWSER_TESTS=required`` (set by CI), where they fail.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from workbench.report import run_report

from .conftest import make_notebook

REQUIRED = os.environ.get("WORKBENCH_BROWSER_TESTS") == "required"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
        "--disable-dev-shm-usage"]


def _chromium() -> str | None:
    return os.environ.get("WORKBENCH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    exe = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        exe = None
    if exe is None:
        if REQUIRED:
            pytest.fail("browser tests are required but Chromium or Playwright is missing "
                        "(apt-get install chromium; pip install -e '.[dev]')")
        pytest.skip("no Chromium (apt-get install chromium) or no Playwright")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=ARGS)
        try:
            yield b
        finally:
            b.close()


class Watch:
    """Everything a page did that it should not: requests, console errors, page errors, dialogs."""

    def __init__(self, page: Any, allowed: tuple[str, ...]) -> None:
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("request", lambda r: None if r.url.startswith(allowed) else self.requests.append(r.url))
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

        def dialog(d: Any) -> None:
            self.dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", dialog)

    def assert_clean(self) -> None:
        assert self.requests == [] and self.errors == [] and self.dialogs == [], (
            self.requests, self.errors, self.dialogs)


HOSTILE = "<img src=x onerror=alert(1)><script>alert(2)</script>[a](javascript:alert(3)) **b**"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("browser")
    nbs = d / "notebooks"
    make_notebook(nbs / "01_plot.ipynb", "x = 2  # a number to double",
                  ["from workbench import record_finding\nimport matplotlib.pyplot as plt\n"
                   "fig, ax = plt.subplots(); ax.plot([1, 2, x]); ax.set_title('a line'); plt.show()",
                   "record_finding('double', x * 2, unit='ms', explain='twice x')"],
                  title="A notebook with a figure")
    make_notebook(nbs / "02_hostile.ipynb", f"name = {HOSTILE!r}  # text that came from a user's file",
                  ["from workbench import record_finding\nfrom workbench.notebook import esc, show_markdown\n"
                   "show_markdown('The file is ' + esc(name))",
                   "record_finding('label', name, explain=name)"],
                  title="Data that tries to be markup")
    out = d / "report"
    run_report(sorted(nbs.glob("*.ipynb")), {"x": "3"}, out_dir=out, echo=False)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name, title", [("01_plot.html", "A notebook with a figure"),
                                         ("02_hostile.html", "Data that tries to be markup")])
def test_report_page_in_a_browser(browser: Any, report: Path, name: str, title: str) -> None:
    page = browser.new_page()
    base = report.as_uri()
    watch = Watch(page, (base + "/", "data:"))
    page.goto(f"{base}/{name}")
    page.wait_for_load_state("load")
    assert page.title() == title
    # the story first: code is folded, and the fold opens on a click
    fold = page.locator("details.wb-code").first
    assert fold.count() == 1 and fold.get_attribute("open") is None
    code = fold.locator("pre, .highlight, .jp-InputArea").first
    assert not code.is_visible()
    fold.locator("summary").click()
    assert fold.get_attribute("open") is not None and code.is_visible()
    if name.startswith("02"):
        # the user's text is shown as text: literally, with no element made from it
        body = page.inner_text("body")
        assert "<img src=x onerror=alert(1)>" in body and "<script>alert(2)</script>" in body
        assert page.locator("img[src='x'], a[href^='javascript']").count() == 0
    else:
        img = page.locator("img[src^='data:image/png']").first
        img.scroll_into_view_if_needed()
        natural, shown = img.evaluate("i => [i.naturalWidth, i.clientWidth]")
        assert shown > 300 and natural >= 1.9 * shown, (natural, shown)  # drawn at twice the size shown
    # the back-link leads to the index
    page.get_by_role("link", name="index").first.click()
    page.wait_for_load_state("load")
    assert page.url.endswith("/index.html")
    watch.assert_clean()
    page.close()


@pytest.mark.slow
def test_index_in_a_browser(browser: Any, report: Path) -> None:
    page = browser.new_page(viewport={"width": 900, "height": 800})
    base = report.as_uri()
    watch = Watch(page, (base + "/", "data:"))
    page.goto(f"{base}/index.html")
    page.wait_for_load_state("load")
    body = page.inner_text("body")
    assert "double" in body and "<script>alert(2)</script>" in body  # the hostile finding shown as text
    assert page.locator("img[src='x']").count() == 0
    # readable at 900 px: nothing wider than the window
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 900, width
    for link in ("01_plot.html", "02_hostile.html"):
        assert page.locator(f"a[href='{link}']").count() >= 1
    watch.assert_clean()
    page.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if shutil.which("jupyter-lab", path=str(Path(sys.executable).parent)) is None:
        if REQUIRED:
            pytest.fail("browser tests are required but JupyterLab is missing (pip install -e '.[dev]')")
        pytest.skip("no JupyterLab")
    root = tmp_path_factory.mktemp("lab")
    make_notebook(root / "explore.ipynb", "n = 400  # samples", [
        "import numpy as np\nimport pandas as pd\nfrom workbench.explore import LatencyExplorer\n"
        "rng = np.random.default_rng(0)\n"
        "frame = pd.DataFrame({'latency_s': rng.lognormal(-5, 0.5, n), 'timestamp_s': np.arange(n) * 0.01})\n"
        "LatencyExplorer(frame).show()"], title="Explore")
    port, token = _free_port(), "workbench-browser-test"
    env = {**os.environ, "WORKBENCH_STATIC": "0", "JUPYTER_CONFIG_DIR": str(root / ".cfg"),
           "JUPYTER_RUNTIME_DIR": str(root / ".rt")}
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "jupyter-lab"), "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", "--allow-root",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        for _ in range(600):  # bounded by count: up to ~60 s on a busy machine
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if proc.poll() is not None:
                pytest.fail(f"jupyter lab exited with {proc.returncode}")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/lab/tree/{{name}}?token={token}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.slow
def test_jupyterlab_runs_a_notebook_and_its_explorer_redraws(browser: Any, lab: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(900_000)  # a busy machine: only an upper bound against a hang, never a target
    page.goto(lab.format(name="explore.ipynb"))
    watch = Watch(page, ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:"))
    page.locator(".jp-Notebook").wait_for()
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for()  # the kernel is up and connected
    page.get_by_role("menuitem", name="Run").click()
    page.get_by_text("Run All Cells", exact=True).click()
    out = page.locator(".jp-OutputArea-output .widget-output").first
    out.locator("img").first.wait_for()
    before = out.inner_text()
    assert "threshold 10 ms" not in before and "Modes at" in before and "\\(" not in before
    threshold = page.locator(".jp-OutputArea-output .widget-text input").first
    threshold.fill("1")
    threshold.press("Enter")
    # the control redraws the view: the table's count over the threshold changes, a figure is back
    page.wait_for_function("([el, old]) => el.innerText !== old && el.querySelector('img') !== null",
                           arg=[out.element_handle(), before])
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    tracebacks = [t for t in errors.all_inner_texts() if "Traceback" in t or "Error" in t]
    assert tracebacks == []
    assert watch.requests == [] and watch.dialogs == [], (watch.requests, watch.dialogs)  # loopback only
    page.close()

