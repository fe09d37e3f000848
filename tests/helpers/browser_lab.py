"""A JupyterLab on loopback and Debian's chromium driven by Playwright.

For the browser tests and ``benchmarks/bench_browser.py`` (a helper, not a test module; test-only
code, so it lives beside the tests and never ships in the wheel)."""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

import nbformat

CHROMIUM = Path("/usr/bin/chromium")
#: Chromium flags for a closed network, as root, without a screen (see the machine notes).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REPO = Path(__file__).resolve().parents[2]  # the checkout: these helpers are for its tests and benchmarks
TIMEOUT_MS = 90_000


class LabError(RuntimeError):
    """JupyterLab or chromium could not be started."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def write_notebook(path: Path, cells: Sequence[str]) -> Path:
    """A notebook of one code cell per source, with the python3 kernel."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, path)
    return path


@contextlib.contextmanager
def lab_server(root: Path) -> Iterator[tuple[str, str]]:
    """JupyterLab serving ``root`` on a free loopback port with a random token; yields (base URL,
    token) and stops the server by its PID. Kernels import this repository's ``workbench``."""
    port, token = free_port(), secrets.token_hex(16)
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    # Settings of this server only: every cell rendered (no windowing, so views below the fold
    # exist in the page) and no news prompt over the notebook.
    settings = root / "_lab_settings"
    for plugin, values in (
        ("notebook-extension/tracker", '{"windowingMode": "none"}'),
        ("apputils-extension/notification", '{"fetchNews": "false"}'),
    ):
        target = settings / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(values)
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
    }
    log_path = root / "server.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=1)
                    break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise LabError(f"JupyterLab did not start: {log_path.read_text()[-2000:]}") from None
                    time.sleep(0.25)
            yield base, token
        finally:
            server.terminate()
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                server.kill()


def open_notebook(browser, base: str, token: str, name: str, *, width: int, height: int, file_browser: bool):
    """A page with notebook ``name`` open at a window of ``width`` x ``height``, the file browser
    open or closed, and its kernel started. Page errors and console errors collect in ``page.errors``."""
    page = browser.new_page()  # ``browser`` may be a Browser or a BrowserContext (a second one)
    page.set_viewport_size({"width": width, "height": height})
    page.errors = []
    collect_errors(page, page.errors)
    page.goto(f"{base}/lab/tree/{name}?token={token}&reset")
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel"
        " && w.sessionContext.session.kernel.status === 'idle'; }",
        timeout=TIMEOUT_MS,
    )
    page.evaluate(
        "(open) => { const shell = window.jupyterapp.shell;"
        " if (open) { shell.activateById('filebrowser'); } else { shell.collapseLeft(); } }",
        file_browser,
    )
    return page


def run_all(page, cells_with_widgets: Sequence[int]) -> None:
    """Run every cell and wait until each listed cell shows a widget view."""
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    for cell in cells_with_widgets:
        view = output(page, cell).locator(".jupyter-widgets").first
        view.wait_for(state="attached", timeout=TIMEOUT_MS)
        view.scroll_into_view_if_needed(timeout=TIMEOUT_MS)


def output(page, cell: int):
    """The output area of code cell ``cell`` (0-based)."""
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").nth(cell).locator(".jp-OutputArea")


def launch(playwright):
    """Debian's chromium, headless (never a browser download of Playwright's own)."""
    if not CHROMIUM.exists():
        raise LabError(
            f"{CHROMIUM} is missing: install Debian's chromium (`apt-get install -y chromium`; `make test` does)"
        )
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


def lab_fixtures(notebook: str, cells: Sequence[str]):
    """A test module's ``lab`` and ``browser`` fixtures (module scope): a JupyterLab serving one
    notebook ``notebook`` of ``cells`` (``lab`` is ``(base URL, token)``), and Debian's chromium.
    Assign both in the module: ``lab, browser = lab_fixtures("x.ipynb", CELLS)``.
    """
    import pytest

    @pytest.fixture(scope="module")
    def lab(tmp_path_factory):
        root = tmp_path_factory.mktemp("lab")
        write_notebook(root / notebook, cells)
        with lab_server(root) as server:
            yield server

    @pytest.fixture(scope="module")
    def browser(lab):
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            chromium = launch(playwright)
            yield chromium
            chromium.close()

    return lab, browser


def collect_errors(page, errors: list[str]) -> None:
    """Append to ``errors`` every uncaught page error and every console message of type error
    (bqplot's and the widget manager's included) that ``page`` logs from now on."""
    page.on("pageerror", lambda error: errors.append(f"pageerror: {error}"))
    page.on("console", lambda message: errors.append(f"console: {message.text}") if message.type == "error" else None)


#: Every figure's text (tick labels, category labels, titles) under ``root``: pairs of labels whose
#: boxes overlap, and labels reaching outside their figure (cut off). Only shown text counts.
LABELS_JS = """(root) => {
  const overlaps = [], cut = [], counted = [];
  for (const figure of root.querySelectorAll('.bqplot.figure, .bqplot > svg, svg.svg-figure')) {
    const frame = figure.getBoundingClientRect();
    if (!frame.width) continue;
    const texts = [...figure.querySelectorAll('text')].filter(t => t.textContent.trim()
        && getComputedStyle(t).display !== 'none' && getComputedStyle(t).visibility !== 'hidden'
        && t.getBoundingClientRect().width > 0);
    const boxes = texts.map(t => [t.textContent.trim(), t.getBoundingClientRect()]);
    counted.push(boxes.length);
    for (const [text, r] of boxes) {
      if (r.left < frame.left - 1 || r.right > frame.right + 1 || r.top < frame.top - 1 || r.bottom > frame.bottom + 1)
        cut.push(text);
    }
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const [a, p] = boxes[i], [b, q] = boxes[j];
      const dx = Math.min(p.right, q.right) - Math.max(p.left, q.left);
      const dy = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (dx > 1 && dy > 1) overlaps.push([a, b]);
    }
  }
  return {overlaps, cut, counted};
}"""


#: A Replayer (``root``: its ``.wb-replay``) scrolled to the top of its scrolling parent: the
#: vertical extents of its toolbar, reward strip and picture, to check they fit the window together.
REPLAY_BOXES_JS = """(root) => { root.scrollIntoView({block: 'start'});
  return ['.wb-toolbar', '.wb-strip', '.wb-picture'].map(s => { const r = root.querySelector(s).getBoundingClientRect();
    return [s, r.top, r.bottom]; }); }"""

#: Slider tracks, labels, buttons and boxes of the Tuner's control column, measured in the page.
LAYOUT_JS = """(root) => {
  const column = root.querySelector('.workbench-controls').getBoundingClientRect();
  const tracks = [...root.querySelectorAll('.workbench-controls .widget-slider .slider-container')]
      .filter(e => e.offsetParent !== null).map(e => e.getBoundingClientRect().width);
  const clipped = [...root.querySelectorAll('.workbench-controls .widget-label, .workbench-controls button,'
      + ' .workbench-controls .widget-readout, .workbench-controls input, .workbench-controls select')]
    .filter(e => e.offsetParent !== null)
    .filter(e => { const r = e.getBoundingClientRect();
      return e.scrollWidth > e.clientWidth + 1 || r.left < column.left - 1 || r.right > column.right + 1; })
    .map(e => e.className + ':' + (e.innerText || e.value || ''));
  return {tracks, clipped, left: column.left, width: column.width};
}"""

#: The Tuner's fixed text boxes: height, content height, line height, and (returns table) the table's height.
TEXT_BOXES_JS = """(root) => [...root.querySelectorAll('.widget-html')]
  .filter(e => e.offsetParent !== null && getComputedStyle(e).overflowY === 'auto').map(e => {
    const lined = e.querySelector('.widget-html-content > div'); const table = e.querySelector('table');
    return {text: e.innerText.slice(0, 30), height: e.clientHeight, content: e.scrollHeight,
            line: lined ? parseFloat(getComputedStyle(lined).lineHeight) : null,
            table: table ? table.getBoundingClientRect().height : null}; })"""
