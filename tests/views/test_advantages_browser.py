"""The advantages panel in a real JupyterLab (Debian's chromium, Playwright): drawn at 1280x800
with the file browser open and at 1920x1080, labels that fit, a click in the page that sets the
panel's ``episode`` and ``selection`` in the kernel, a config change that draws the before rings,
UUID policies, a second browser context, and no console error anywhere."""

from __future__ import annotations

import pytest
from helpers.browser_lab import (
    LABELS_JS,
    REPO,
    TIMEOUT_MS,
    lab_fixtures,
    open_notebook,
    output,
    run_all,
)

pytestmark = pytest.mark.browser

SHAPED = REPO / "configs" / "upstream_shaped.yaml"
CELLS = [
    "import ipywidgets as w, workbench\nfrom workbench.views.widgets import AdvantagesPanel\n"
    f"shaped = workbench.RewardConfig.from_file({str(SHAPED)!r})\n"
    # the long names are test helpers (tests/helpers), not the package: the kernel is told where
    f"import sys\nsys.path.insert(0, {str(REPO / 'tests')!r})\n"
    "from helpers.long_names import uuid_policies\ncorpus = uuid_policies(workbench.sample_corpus())\n"
    "panel = AdvantagesPanel(corpus, shaped)\n"
    "echo = w.HTML('none')\n"
    "panel.observe(lambda c: setattr(echo, 'value', f'{panel.episode} | {len(panel.selection)}'), ['episode', 'selection'])",
    "w.VBox([echo, panel])",
]


lab, browser = lab_fixtures("panel.ipynb", CELLS)


def _open(browser, lab, width: int, height: int, file_browser: bool):
    base, token = lab
    page = open_notebook(browser, base, token, "panel.ipynb", width=width, height=height, file_browser=file_browser)
    run_all(page, [1])
    view = output(page, 1)
    view.locator(".bqplot .dot").first.wait_for(timeout=TIMEOUT_MS)
    page.wait_for_timeout(1500)
    return page, view


def test_the_panel_draws_and_a_click_reaches_the_kernel_at_1280x800(browser, lab):
    page, view = _open(browser, lab, 1280, 800, True)
    assert view.locator(".bqplot .dot").count() >= 10  # every rollout a point
    labels = view.evaluate(LABELS_JS)
    assert labels["counted"] and labels["overlaps"] == [] and labels["cut"] == [], labels
    box = view.locator(".bqplot").first.bounding_box()
    assert box["width"] >= 300 and box["x"] + box["width"] <= 1280
    view.locator(".bqplot .dot").first.click()
    echo = view.locator(".widget-html-content").first
    page.wait_for_function("(e) => e.textContent !== 'none'", arg=echo.element_handle(), timeout=TIMEOUT_MS)
    picked, size = echo.inner_text().split(" | ")
    assert picked not in ("", "None") and int(size) >= 1  # an episode id and its group
    assert page.errors == []
    page.close()


def test_a_config_change_draws_the_rings_at_1920x1080_and_in_a_second_context(browser, lab):
    page, view = _open(browser, lab, 1920, 1080, False)
    page.evaluate("window.jupyterapp.commands.execute('notebook:insert-cell-below')")
    # set a new config from the kernel, as a linked Tuner would
    cell = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").last
    cell.locator(".cm-content").fill(
        "panel.config = shaped.with_changes(weights={**shaped.weights, 'collect_stone': 3.0})"
    )
    page.keyboard.press("Shift+Enter")
    page.wait_for_function(
        "(root) => root.textContent.includes('since the last config change')",
        arg=view.element_handle(),
        timeout=TIMEOUT_MS,
    )
    assert page.errors == []
    second = browser.new_context()
    try:
        other, other_view = _open(second, lab, 1280, 800, True)
        assert other_view.locator(".bqplot .dot").count() >= 10 and other.errors == []
    finally:
        second.close()
    page.close()
