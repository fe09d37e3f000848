"""The dashboard (``workbench app``) in Debian's chromium: a real server process on a free
loopback port, driven as a person would: open the sample, move a weight and see the returns
change, open an episode from the returns view and Play it, compare two configs, save a config
and find the file (a second save is refused until asked), a bad path shows an error message.
Also: the page needs its token, and the workspace's configs come back after a restart.
Screenshots of every page go to $WORKBENCH_APP_SCREENSHOTS when set (the README's, in docs/)."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

from workbench.testing.browser_app import app_server, tab, wait_text
from workbench.testing.browser_lab import REPO, TIMEOUT_MS, launch

pytestmark = pytest.mark.browser

CONFIGS = [
    "--config",
    str(REPO / "configs" / "upstream_shaped.yaml"),
    "--config",
    str(REPO / "configs" / "recommended.yaml"),
]
SIZES = [(1280, 800), (1920, 1080)]


def _screenshot(page, name: str, width: int) -> None:
    folder = os.environ.get("WORKBENCH_APP_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.evaluate(
            "() => { window.scrollTo(0, 0); document.querySelectorAll('*').forEach(e => { e.scrollTop = 0; }); }"
        )
        page.wait_for_timeout(300)
        page.screenshot(path=str(Path(folder) / f"app-{name}-{width}.png"))


def _returns_text(tuner) -> str:
    return tuner.locator(".widget-html-content", has_text="top 5").first.inner_text()


def test_the_dashboard_end_to_end(tmp_path):
    from playwright.sync_api import sync_playwright

    workspace = tmp_path / "workspace"
    with (
        app_server([*CONFIGS, "--workspace", str(workspace)], tmp_path / "server.log") as (url, token),
        sync_playwright() as playwright,
    ):
        base = url.split("?")[0]
        with pytest.raises(urllib.error.HTTPError) as refused:  # no token, no page
            urllib.request.urlopen(base, timeout=10)
        assert refused.value.code == 403
        browser = launch(playwright)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(url)
        corpus = page.locator(".wb-app-page-corpus")
        corpus.wait_for(timeout=TIMEOUT_MS)

        # A bad path is a message in the page, not a blank page.
        corpus.locator("input[placeholder='/path/to/corpus-folder']").fill(str(tmp_path / "no-such-corpus"))
        corpus.locator("button", has_text="Open folder").click()
        wait_text(page, corpus, "no such corpus folder")
        # The sample opens; every view is built on it.
        corpus.locator("button", has_text="Open the sample").click()
        wait_text(page, corpus, "open: the sample corpus: 10 episodes")
        _screenshot(page, "corpus", 1280)

        # Tune: move the collect_wood weight; the returns change.
        tuner = tab(page, "Tune")
        tuner.locator(".workbench-tuner").wait_for(timeout=TIMEOUT_MS)
        before = _returns_text(tuner)
        tuner.locator(".jupyter-widget-Collapse-header", has_text="weights: collect").click()
        slider = tuner.locator(".widget-slider", has_text="collect_wood")
        readout = slider.locator(".widget-readout")
        weight = float(readout.inner_text())
        handle = slider.locator(".noUi-handle").first
        handle.focus()
        for _ in range(30):
            page.keyboard.press("ArrowRight")
        page.wait_for_function(
            "([r, b]) => !r.innerText.includes(b)",
            arg=[tuner.locator(".widget-html-content", has_text="top 5").first.element_handle(), before],
            timeout=TIMEOUT_MS,
        )
        assert float(readout.inner_text()) == pytest.approx(weight + 0.30)
        assert _returns_text(tuner) != before
        _screenshot(page, "tune", 1280)
        # The draft of the Tuner is kept in the workspace after the move.
        draft = workspace / "drafts" / "tuner-draft.yaml"
        page.wait_for_timeout(500)
        assert yaml.safe_load(draft.read_text())["weights"]["collect_wood"] == pytest.approx(weight + 0.30)

        # An episode clicked in the returns view opens in Replay; Play plays it.
        dots = tuner.locator(".bqplot .dot")
        assert dots.count() == 10
        dots.nth(0).click(force=True)
        replay = page.locator(".wb-app-page-replay")
        replay.locator(".wb-replay").wait_for(state="visible", timeout=TIMEOUT_MS)
        page.wait_for_function(
            "(r) => !r.querySelector('.wb-counter').innerText.startsWith('0 /')",
            arg=replay.element_handle(),
            timeout=TIMEOUT_MS,
        )
        replay.locator(".wb-btn", has_text="start").click()
        replay.locator(".wb-btn", has_text="play").click()
        page.wait_for_timeout(1500)
        replay.locator(".wb-btn", has_text="pause").click()
        assert int(replay.locator(".wb-counter").inner_text().split(" /")[0]) > 5
        _screenshot(page, "replay", 1280)

        # Compare the two configs, then the Tuner's, sent from the Tune page.
        compare = tab(page, "Compare")
        wait_text(page, compare, "recommended (compared)")
        compare.locator("select").first.select_option("recommended")
        wait_text(page, compare, "recommended (reference)")
        tuner = tab(page, "Tune")
        tuner.locator("button", has_text="send to Compare").click()
        wait_text(page, page.locator(".wb-app-page-compare"), "tuned (compared)")
        page.locator(".lm-TabBar-tab.lm-mod-current", has_text="Compare").wait_for(timeout=TIMEOUT_MS)
        _screenshot(page, "compare", 1280)

        # Configs: save the Tuner's config in the workspace and find the file; a second save is
        # refused until "replace" is ticked; a bad file is a message.
        configs = tab(page, "Configs")
        configs.locator("select").first.select_option("tuned")
        name_box = configs.locator("input[placeholder='name']")
        name_box.fill("../wood heavy")
        configs.locator("button", has_text="Save in workspace").click()
        wait_text(page, configs, "saved")
        saved = workspace / "wood_heavy.yaml"
        assert saved.is_file()
        assert yaml.safe_load(saved.read_text())["weights"]["collect_wood"] == pytest.approx(weight + 0.30)
        assert not (tmp_path / "wood heavy.yaml").exists()
        configs.locator("button", has_text="Save in workspace").click()
        wait_text(page, configs, "tick 'replace if it exists'")
        configs.locator("input[placeholder='a config YAML or a synth-ai training TOML']").fill(
            str(tmp_path / "nope.yaml")
        )
        configs.locator("button", has_text="Open").first.click()
        wait_text(page, configs, "nope.yaml")
        assert "error" in configs.locator(".wb-app-status").first.inner_html()
        assert "../wood heavy" not in configs.locator("select").first.inner_text()
        configs.locator("select").first.select_option("upstream_shaped")
        _screenshot(page, "configs", 1280)

        # The wide window: every page once more, for the eye (and the README's shots).
        page.set_viewport_size({"width": 1920, "height": 1080})
        for title in ("Corpus", "Tune", "Replay", "Compare", "Configs"):
            tab(page, title)
            page.wait_for_timeout(600)
            _screenshot(page, title.lower(), 1920)
        assert errors == []
        browser.close()

    # A restart: the configs saved in the workspace and the Tuner's draft come back.
    with (
        app_server(["sample", *CONFIGS, "--workspace", str(workspace)], tmp_path / "server2.log") as (url, _),
        sync_playwright() as playwright,
    ):
        browser = launch(playwright)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(url)
        wait_text(page, page.locator(".wb-app-page-corpus"), "open: the sample corpus")
        configs = tab(page, "Configs")
        assert "wood_heavy" in configs.locator("select").first.inner_text()
        tuner = tab(page, "Tune")
        tuner.locator(".jupyter-widget-Collapse-header", has_text="weights: collect").click()
        readout = tuner.locator(".widget-slider", has_text="collect_wood").locator(".widget-readout")
        assert float(readout.inner_text()) == pytest.approx(weight + 0.30)
        browser.close()
    log = (tmp_path / "server.log").read_text()
    assert "Traceback" not in log, log[-3000:]
