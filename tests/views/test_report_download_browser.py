"""The dashboard's "Download report" on the Compare and Live pages, in Debian's chromium: the
Compare page's report downloads as the page `workbench report` writes; the Live page's says why
there is none before a run is followed; no console error. A screenshot goes to
$WORKBENCH_REPORT_SCREENSHOTS when it is set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.browser_app import app_server, tab, wait_text
from helpers.browser_lab import launch
from helpers.report_inputs import RECOMMENDED, SHAPED

pytestmark = pytest.mark.browser

TIMEOUT_MS = 120_000


def test_compare_and_live_offer_the_report(tmp_path) -> None:
    from playwright.sync_api import sync_playwright

    arguments = ["sample", "--config", str(SHAPED), "--config", str(RECOMMENDED), "--workspace", str(tmp_path / "ws")]
    with app_server(arguments, tmp_path / "server.log") as (url, _token), sync_playwright() as playwright:
        browser = launch(playwright)
        context = browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.goto(url)
        wait_text(page, page.locator(".wb-app-page-corpus"), "open: ")
        tab(page, "Compare")
        control = page.locator(".wb-report-download:visible")
        control.get_by_role("button", name="Make report").click()
        download_button = control.get_by_role("link", name="Download report")
        download_button.wait_for(timeout=TIMEOUT_MS)
        with page.expect_download(timeout=TIMEOUT_MS) as started:
            download_button.click()
        saved = tmp_path / "downloaded.html"
        started.value.save_as(saved)
        folder = os.environ.get("WORKBENCH_REPORT_SCREENSHOTS")
        if folder:
            control.scroll_into_view_if_needed()
            page.screenshot(path=str(Path(folder) / "app-report-download-1280.png"))
        assert started.value.suggested_filename == "workbench-report.html"
        document = saved.read_text(encoding="utf-8")
        assert document.startswith("<!DOCTYPE html>") and "dashboard: Compare page" in document
        assert '<section id="audit">' in document and "upstream_shaped" in document and "recommended" in document

        tab(page, "Live").wait_for(timeout=TIMEOUT_MS)
        page.wait_for_timeout(1000)  # the tab's switch settles
        control = page.locator(".wb-report-download:visible")
        control.get_by_role("button", name="Make report").click()
        wait_text(page, control, "follow a source first")
        assert errors == []
        browser.close()
