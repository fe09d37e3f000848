"""The over-optimisation panel and the Timeline it marks, in a real JupyterLab (Debian's chromium,
Playwright), on a run where the farmer takes over: first too few episodes (how many more it
needs), then, appended in the kernel, the alarm in words, its figure and the Timeline's rule
named in the legend; labels that fit, the decline's button setting ``episode`` in the kernel,
at 1280x800 and 1920x1080, with no console error. Screenshots go to $WORKBENCH_APP_SCREENSHOTS
when set (else the test's temporary folder)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.browser_lab import LABELS_JS, REPO, TIMEOUT_MS, lab_server, launch, open_notebook, output, write_notebook

pytestmark = pytest.mark.browser

#: The scripted player's episodes by achievements unlocked (it gets better), then the farmer's
#: best-paid ones by shaped return (the farmer takes over: upstream_shaped pays more and more
#: for fewer achievements).
CELLS = [
    "import numpy as np, ipywidgets as w\nfrom workbench import RewardConfig\n"
    "from workbench.data.sample import search_corpus\nfrom workbench.scoring import score\n"
    "from workbench.scoring.incremental import LiveScores\n"
    "from workbench.views.widgets import OveroptimisationPanel, Timeline\n"
    "corpus = search_corpus()\n"
    f"configs = {{name: RewardConfig.from_file(f'{REPO / 'configs'}/{{name}}.yaml') for name in ('upstream_shaped', 'consistent')}}\n"
    "paid = score(corpus, configs['upstream_shaped']).reward_sum\n"
    "policy, gold = corpus.index['policy'].to_numpy(), corpus.index['n_unlocked'].to_numpy()\n"
    "farmer = np.flatnonzero((policy == 'farmer') & (paid > 26))\n"
    "order = [*sorted(np.flatnonzero(policy == 'scripted'), key=lambda i: gold[i]), *sorted(farmer, key=lambda i: paid[i])]\n"
    "run = corpus[np.array(order)]\n"
    "live = LiveScores(run[:8], configs)\n"
    "timeline = Timeline(live, window=10, reps=100)\n"
    "panel = OveroptimisationPanel(live)\n"
    "panel.observe(lambda change: timeline.mark_declines(change['new']), 'declines')\n"
    "echo = w.HTML('none')\n"
    "panel.observe(lambda c: setattr(echo, 'value', f'opened {panel.episode}'), 'episode')",
    "w.VBox([timeline, echo, panel])",
]


def _shots(page, view, width: int, height: int, folder: Path) -> None:
    page.set_viewport_size({"width": width, "height": height})
    for part, where in (("timeline", ".workbench-timeline"), ("panel", ".workbench-overoptimisation")):
        view.locator(where).first.scroll_into_view_if_needed()
        page.wait_for_timeout(600)
        page.screenshot(path=str(folder / f"overoptimisation-{part}-{width}.png"))


def test_the_watch_draws_alarms_marks_the_timeline_and_opens_the_decline(tmp_path):
    from playwright.sync_api import sync_playwright

    folder = Path(os.environ.get("WORKBENCH_APP_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    write_notebook(tmp_path / "watch.ipynb", CELLS)
    with lab_server(tmp_path) as (base, token), sync_playwright() as playwright:
        browser = launch(playwright)
        page = open_notebook(browser, base, token, "watch.ipynb", width=1280, height=800, file_browser=False)
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        view = output(page, 1)
        panel = view.locator(".workbench-overoptimisation")
        panel.wait_for(timeout=TIMEOUT_MS)
        page.wait_for_function(
            "(r) => r.innerText.includes('it needs at least 12 in arrival order (4 more)')",
            arg=panel.element_handle(),
            timeout=TIMEOUT_MS,
        )
        # the rest of the run arrives: the alarm, in words, on the panel and on the timeline
        page.evaluate("window.jupyterapp.commands.execute('notebook:insert-cell-below')")
        cell = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").last
        cell.locator(".cm-content").fill("live.append(run[8:])")
        page.keyboard.press("Shift+Enter")
        page.wait_for_function(
            "(r) => r.innerText.includes('1 of 2 config(s) alarmed')", arg=panel.element_handle(), timeout=TIMEOUT_MS
        )
        states = panel.locator(".wb-overopt-state").all_inner_texts()
        assert "alarm: proxy rising" in states[0] and "while gold falls" in states[0], states
        assert states[1].startswith("no alarm: proxy falling"), states
        # 39 episodes (24 scripted, the 15 farmer episodes paid more than 26), gold and proxy points, 2 figures
        assert panel.locator(".bqplot").count() == 2 and panel.locator(".bqplot .dot").count() == 4 * 39
        legend = view.locator(".workbench-timeline .wb-timeline-legend").inner_text()
        assert "over-optimisation (upstream_shaped): the decline began at episode" in legend, legend
        for width, height in ((1280, 800), (1920, 1080)):
            _shots(page, view, width, height, folder)
            labels = panel.evaluate(LABELS_JS)
            assert labels["counted"] and labels["overlaps"] == [] and labels["cut"] == [], (width, labels)
            box = panel.locator(".bqplot").first.bounding_box()
            assert box["width"] >= 300 and box["x"] + box["width"] <= width
        # the decline's button sets the panel's episode in the kernel
        began = panel.locator(".wb-overopt-began").first
        began.scroll_into_view_if_needed()
        began.click()
        echo = view.locator(".widget-html-content", has_text="opened")
        echo.wait_for(timeout=TIMEOUT_MS)
        assert echo.inner_text().removeprefix("opened ") in legend
        assert page.errors == [], page.errors
        browser.close()
