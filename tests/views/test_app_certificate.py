"""The shaping certificate on the dashboard (``workbench app``, Debian's chromium): the Tune page's
certificate section opens with its bars and cycles, a weight move recomputes it, and a cycle
clicked opens its episode on the Replay page; at 1280x800 and 1920x1080, no console error.
Screenshots go to $WORKBENCH_APP_SCREENSHOTS when set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.browser_app import app_server, open_dashboard, replay_controls, tab, tuner_weight
from helpers.browser_lab import LABELS_JS, REPO, TIMEOUT_MS, collect_errors, launch

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    folder = tmp_path_factory.mktemp("app")
    # a workspace of its own: the Tuner's draft is kept there, never in the user's
    arguments = ["sample", "--config", str(REPO / "configs" / "upstream_shaped.yaml"), "--workspace", str(folder)]
    log = folder / "server.log"
    with app_server(arguments, log) as (url, _token):
        yield url


@pytest.mark.parametrize("width, height", [(1280, 800), (1920, 1080)])
def test_the_tune_pages_certificate_recomputes_and_opens_a_cycle_in_the_replayer(dashboard, width, height):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        context = browser.new_context()
        errors: list[str] = []
        page = open_dashboard(context, dashboard, width, height)
        collect_errors(page, errors)
        figure, handle, _ = tuner_weight(page, "collect_stone")
        tuner = tab(page, "Tune")
        section = tuner.locator(".workbench-certificate-section")
        section.locator(".jupyter-widget-Collapse-header").click()
        panel = section.locator(".workbench-certificate")
        panel.locator(".bqplot rect.bar").first.wait_for(timeout=TIMEOUT_MS)
        page.wait_for_timeout(1000)
        assert panel.locator(".bqplot rect.bar").count() == 12
        labels = panel.evaluate(LABELS_JS)
        assert labels["counted"] and labels["overlaps"] == [] and labels["cut"] == [], labels
        box = panel.locator(".bqplot").first.bounding_box()
        assert box["width"] >= 300 and box["x"] + box["width"] <= width
        folder = os.environ.get("WORKBENCH_APP_SCREENSHOTS")
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            panel.evaluate("(root) => root.scrollIntoView({block: 'start'})")
            page.wait_for_timeout(300)
            page.screenshot(path=str(Path(folder) / f"app-certificate-{width}.png"))
        summary = panel.locator(".widget-html-content").first
        before = summary.inner_text()
        handle.focus()
        for _ in range(20):  # +0.20 on collect_stone's weight: the shaped return moves
            page.keyboard.press("ArrowRight")
        page.wait_for_function(
            "([e, was]) => e.textContent !== was", arg=[summary.element_handle(), before], timeout=TIMEOUT_MS
        )
        table = panel.locator("select")
        # the widget keeps a row's spaces as nbsp; a row reads "paid P · EPISODE · decisions A..B · LOOP"
        row = table.locator("option").nth(1).inner_text().replace("\xa0", " ").split(" · ")
        episode, first = row[1], row[2].removeprefix("decisions ").split("..")[0]
        table.select_option(index=1)
        replay = replay_controls(page)
        page.wait_for_function(
            "([select, id]) => select.value === id",
            arg=[replay["picker"].element_handle(timeout=TIMEOUT_MS), episode],
            timeout=TIMEOUT_MS,
        )
        assert replay["root"].is_visible()  # the dashboard went to the Replay page
        # ... at the loop's first decision (the pick names it), not the episode's best
        replay["root"].get_by_text(f"decision {first} of", exact=False).first.wait_for(timeout=TIMEOUT_MS)
        assert errors == []
        browser.close()
