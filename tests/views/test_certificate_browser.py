"""The Tuner's shaping-certificate section in a real JupyterLab (Debian's chromium, Playwright): opened
at 1280x800 with the file browser open and at 1920x1080, bars and labels that fit, a cycle clicked
in the page that becomes the Tuner's episode in the kernel, a weight move that redraws the
certificate and the advantages section open beside it, and no console error. Screenshots go to
$WORKBENCH_LAB_SCREENSHOTS when it is set."""

from __future__ import annotations

import os
from pathlib import Path

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
    "import ipywidgets as w, workbench\nfrom workbench.views.widgets import Tuner\n"
    f"shaped = workbench.RewardConfig.from_file({str(SHAPED)!r})\n"
    "tuner = Tuner(workbench.sample_corpus(), shaped)\n"
    "echo = w.HTML('none')\n"
    "tuner.observe(lambda c: c['new'] and setattr(echo, 'value', c['new']), 'episode')",
    "w.VBox([echo, tuner])",
]
SECTION = ".workbench-certificate-section"


lab, browser = lab_fixtures("certificate.ipynb", CELLS)


def _open_section(browser, lab, width: int, height: int, file_browser: bool):
    base, token = lab
    page = open_notebook(
        browser, base, token, "certificate.ipynb", width=width, height=height, file_browser=file_browser
    )
    run_all(page, [1])
    view = output(page, 1)
    section = view.locator(SECTION)
    section.locator(".jupyter-widget-Collapse-header").click()
    panel = section.locator(".workbench-certificate")
    panel.locator(".bqplot rect.bar").first.wait_for(timeout=TIMEOUT_MS)
    page.wait_for_timeout(1000)
    panel.scroll_into_view_if_needed()
    return page, panel


def _shot(page, panel, name: str) -> None:
    folder = os.environ.get("WORKBENCH_LAB_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        panel.evaluate("(root) => root.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
        page.screenshot(path=str(Path(folder) / name))


@pytest.mark.parametrize("width, height, file_browser", [(1280, 800, True), (1920, 1080, False)])
def test_the_section_draws_and_a_cycle_click_reaches_the_tuner(browser, lab, width, height, file_browser):
    page, panel = _open_section(browser, lab, width, height, file_browser)
    _shot(page, panel, f"lab-certificate-{width}.png")
    # 12 bars (the sample has more components than that with a share), each named on the axis
    assert panel.locator(".bqplot rect.bar").count() == 12
    names = panel.locator(".bqplot .axis text").evaluate_all("(ts) => ts.map(t => t.textContent)")
    assert "stone (item)" in names and "collect_stone (count)" in names
    labels = panel.evaluate(LABELS_JS)
    assert labels["counted"] and labels["overlaps"] == [] and labels["cut"] == [], labels
    box = panel.locator(".bqplot").first.bounding_box()
    assert box["width"] >= 300 and box["x"] + box["width"] <= width
    table = panel.locator("select")
    assert table.locator("option").count() == 173  # every positive cycle of the sample (certify)
    assert "collect_stone / place_stone (+stone)" in panel.inner_text()
    first = table.locator("option").first.inner_text().replace("\xa0", " ")  # the widget keeps spaces as nbsp
    table.select_option(index=0)
    echo = output(page, 1).locator(".widget-html-content").first
    page.wait_for_function("(e) => e.textContent !== 'none'", arg=echo.element_handle(), timeout=TIMEOUT_MS)
    assert echo.inner_text() == first.split(" · ")[1]  # the Tuner's episode is the cycle's
    assert page.errors == []
    page.close()


def test_a_weight_move_redraws_both_sections(browser, lab):
    page, panel = _open_section(browser, lab, 1280, 800, True)
    tuner = output(page, 1)
    tuner.locator(".workbench-advantages-section .jupyter-widget-Collapse-header").click()
    advantages = tuner.locator(".workbench-advantages")
    advantages.locator(".bqplot .dot").first.wait_for(timeout=TIMEOUT_MS)
    summaries = [view.locator(".widget-html-content").first for view in (panel, advantages)]
    before = [summary.inner_text() for summary in summaries]
    tuner.locator(".jupyter-widget-Collapse-header", has_text="weights: collect").click()
    handle = tuner.locator(".widget-slider", has_text="collect_stone").locator(".noUi-handle").first
    handle.focus()
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    for summary, was in zip(summaries, before):
        page.wait_for_function(
            "([e, was]) => e.textContent !== was", arg=[summary.element_handle(), was], timeout=TIMEOUT_MS
        )
    assert "shaped return" in summaries[0].inner_text()
    assert "since the last config change" in summaries[1].inner_text()  # the advantages moved
    assert page.errors == []
    page.close()
