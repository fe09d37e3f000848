"""The widgets in a real JupyterLab, in Debian's chromium driven by Playwright.

``test_widgets.py`` sets widget values in the kernel; this checks the half only a browser can:
that the views render in JupyterLab, that a control changed in the page reaches the kernel and
the new numbers come back to the page, and the Replayer's Play button, whose link to the step
slider lives in the browser (``jslink``). ``make test`` installs chromium (``apt-get``) and
Playwright (the ``dev`` extra); Playwright never downloads a browser of its own here.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from conftest import REPO
from workbench.config import RewardConfig
from workbench.sample import sample_corpus
from workbench.scoring import score

CHROMIUM = Path("/usr/bin/chromium")
#: Chromium flags for a closed network, as root, without a screen (see the machine notes).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
SHAPED = REPO / "configs" / "upstream_shaped.yaml"
RECOMMENDED = REPO / "configs" / "recommended.yaml"
REPLAYED = "scripted-s2024-00000"
#: One cell per widget, so each view is found in its own cell's output.
CELLS = [
    "import workbench\nfrom workbench.widgets import Compare, Replayer, Tuner\n"
    f"corpus = workbench.sample_corpus()\nshaped = workbench.RewardConfig.from_file({str(SHAPED)!r})\n"
    f"recommended = workbench.RewardConfig.from_file({str(RECOMMENDED)!r})",
    "tuner = Tuner(corpus, shaped)\ntuner",
    f"replayer = Replayer(corpus, shaped, episode={REPLAYED!r})\nreplayer",
    "compare = Compare(corpus, {'shaped': shaped, 'recommended': recommended})\ncompare",
]
TIMEOUT_MS = 90_000


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on loopback serving one notebook with the three widgets."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (`apt-get install -y chromium`; `make test` does)")
    root = tmp_path_factory.mktemp("lab")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, root / "widgets.ipynb")
    port, token = _free_port(), secrets.token_hex(16)
    command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
               "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None"]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = open(root / "server.log", "w")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=1)
            break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail(f"JupyterLab did not start: {(root / 'server.log').read_text()[-2000:]}")
            time.sleep(0.25)
    yield f"{base}/lab/tree/widgets.ipynb?token={token}"
    server.terminate()
    try:
        server.wait(15)
    except subprocess.TimeoutExpired:
        server.kill()
    log.close()


@pytest.fixture(scope="module")
def page(lab):
    """The notebook open in chromium, every cell run, every widget view rendered."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1200})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(lab)
        page.wait_for_function(
            "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
            " return w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel; }",
            timeout=TIMEOUT_MS,
        )
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        for cell in range(1, len(CELLS)):
            _output(page, cell).locator(".jupyter-widgets").first.wait_for(timeout=TIMEOUT_MS)
        page.errors = errors
        yield page
        browser.close()


def _output(page, cell: int):
    return page.locator(".jp-CodeCell").nth(cell).locator(".jp-OutputArea")


def _first_row(view) -> list[str]:
    return view.locator("table tbody tr").first.locator("td").all_inner_texts()


def test_the_views_render_without_errors(page, tmp_path):
    tuner, replayer, compare = (_output(page, cell) for cell in (1, 2, 3))
    assert tuner.locator(".widget-slider").count() >= 1 + 22  # lambda and a weight per achievement
    assert tuner.locator("img").first.get_attribute("src")  # the returns figure
    assert replayer.locator(".widget-play").count() == 1 and replayer.locator("img").count() == 2
    assert compare.locator("select").count() == 2
    for name, view in (("tuner", tuner), ("replayer", replayer), ("compare", compare)):
        view.screenshot(path=str(tmp_path / f"{name}.png"))  # to look at when something breaks
    assert page.errors == []


def test_editing_lambda_in_the_page_rescores_in_the_kernel(page):
    tuner = _output(page, 1)
    table = tuner.locator(".widget-html-content", has=page.locator("table"))
    assert _first_row(table)[:2] == ["scripted-s2024-00000", "12.020"]
    expected = score(sample_corpus(), RewardConfig.from_file(SHAPED).with_changes(indicator_lambda=1.0))
    lam = tuner.locator(".widget-slider", has=page.locator("label", has_text="lambda")).locator(".widget-readout")
    lam.fill("1.00")
    lam.press("Enter")
    page.wait_for_function(
        "([table, text]) => table.querySelector('tbody td:nth-child(2)').innerText === text",
        arg=[table.element_handle(), f"{expected.episodes['reward_sum'].iloc[0]:.3f}"],
        timeout=TIMEOUT_MS,
    )
    assert "acts like 1" in tuner.inner_text()  # lint is still shown beside the controls


def test_play_steps_through_the_episode(page):
    replayer = _output(page, 2)
    state = replayer.locator(".widget-html-content", has_text="inventory")
    assert "after decision 0 of" in state.inner_text()
    frame = replayer.locator("img").first.get_attribute("src")
    replayer.locator(".widget-play button").first.click()
    # Play -> step slider is a browser-side link; the slider then syncs to the kernel, which
    # redraws the state and the frame.
    page.wait_for_function(
        "(state) => !state.innerText.includes('after decision 0 of')",
        arg=state.element_handle(), timeout=TIMEOUT_MS,
    )
    assert replayer.locator("img").first.get_attribute("src") != frame
    replayer.locator(".widget-play button").nth(1).click()  # pause


def test_picking_another_config_in_compare(page):
    compare = _output(page, 3)
    summary = compare.locator(".widget-html-content", has_text="rank agreement")
    assert "B: recommended" in summary.inner_text()
    compare.locator("select").first.select_option("recommended")
    page.wait_for_function("(summary) => summary.innerText.includes('A: recommended')",
                           arg=summary.element_handle(), timeout=TIMEOUT_MS)
    assert summary.inner_text().count("0 episode pair(s) paid more for less progress") == 2
