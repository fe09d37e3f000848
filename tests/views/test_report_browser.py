"""The report in Debian's chromium (Playwright) with the network cut: nothing requested but the file,
no console error, every figure drawn with hover values, every in-page link resolving, tables that
sort, hostile names inert, and a print to PDF. Screenshots (1280x800, 1920x1080 and the print
layout) go to $WORKBENCH_REPORT_SCREENSHOTS when it is set (docs/screenshots holds them)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from helpers.browser_lab import launch
from helpers.report_inputs import HOSTILE, configs, hostile_configs, hostile_corpus

from workbench.data.sample import sample_corpus
from workbench.views.report import build_report, write_report

pytestmark = pytest.mark.browser

#: Per in-page anchor, whether an element has that id (the table of contents, any other #link).
LINKS_JS = """() => Array.from(document.querySelectorAll('a[href]')).map(a => {
  const href = a.getAttribute('href');
  return [href, href.startsWith('#') && document.getElementById(href.slice(1)) !== null];
})"""
#: Per figure: its drawn width and height, how many shapes and how many hover titles it holds.
FIGURES_JS = """() => Array.from(document.querySelectorAll('svg.figure')).map(svg => {
  const box = svg.getBoundingClientRect();
  return {width: box.width, height: box.height, shapes: svg.querySelectorAll('path, use').length,
          titles: svg.querySelectorAll('title').length};
})"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("reports")
    sample = build_report(sample_corpus(), configs(), corpus_name="sample", command="workbench report sample")
    hostile = build_report(hostile_corpus(), hostile_configs(), corpus_name=HOSTILE[0], command="test")
    return {
        "sample": write_report(folder / "report.html", sample),
        "hostile": write_report(folder / "hostile.html", hostile),
    }


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


def _open(browser, path: Path, width: int, height: int):
    """The page offline: any request but the file itself is recorded and refused."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    seen: dict[str, list] = {"outside": [], "errors": [], "dialogs": []}
    url = path.as_uri()

    def route(request_route):
        if request_route.request.url == url:
            request_route.continue_()
        else:
            seen["outside"].append(request_route.request.url)
            request_route.abort()

    page.route("**/*", route)
    page.on("console", lambda message: message.type == "error" and seen["errors"].append(message.text))
    page.on("pageerror", lambda error: seen["errors"].append(str(error)))
    page.on("dialog", lambda dialog: (seen["dialogs"].append(dialog.message), dialog.dismiss()))
    page.goto(url)
    page.wait_for_load_state("load")
    return context, page, seen


def _shot(page, name: str, selector: str | None = None, full: bool = False) -> None:
    folder = os.environ.get("WORKBENCH_REPORT_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        if selector:
            page.locator(selector).scroll_into_view_if_needed()
            page.evaluate(f"document.querySelector({selector!r}).scrollIntoView({{block: 'start'}})")
        page.screenshot(path=str(Path(folder) / name), full_page=full)


@pytest.mark.parametrize("width, height", [(1280, 800), (1920, 1080)])
def test_the_report_opens_offline_with_every_figure_drawn(browser, pages, width: int, height: int) -> None:
    context, page, seen = _open(browser, pages["sample"], width, height)
    figures = page.evaluate(FIGURES_JS)
    # group returns, rank changes, one comparison, and per config a component share, advantages and
    # the probes' exploitability: 3 + 3 * 2
    assert len(figures) == 9, figures
    for figure in figures:
        assert 300 <= figure["width"] <= width and figure["height"] > 100, figure
        assert figure["shapes"] > 10 and figure["titles"] > 1, figure
    links = page.evaluate(LINKS_JS)
    assert links and all(ok for _, ok in links), links
    frames = page.locator(".strip img")
    assert frames.count() >= 6 and frames.first.evaluate("(img) => img.complete && img.naturalWidth === 64")
    # no horizontal scrolling: the page fits the window
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    _shot(page, f"report-top-{width}.png")
    if width == 1280:
        _shot(page, "report-returns-1280.png", "#returns")
        _shot(page, "report-audit-1280.png", "#audit")
        _shot(page, "report-shaping-1280.png", "#shaping")
        _shot(page, "report-exploitability-1280.png", "#exploitability")
    page.reload()
    page.wait_for_load_state("load")
    second = context.new_page()  # a second tab of the same file
    second.goto(pages["sample"].as_uri())
    assert second.locator("svg.figure").count() == len(figures)
    assert seen["outside"] == [] and seen["errors"] == [] and seen["dialogs"] == []
    context.close()


def test_a_table_sorts_by_the_clicked_column(browser, pages) -> None:
    context, page, seen = _open(browser, pages["sample"], 1280, 800)
    table = page.locator("#returns table.sortable").first  # config, policy, episodes, mean, low, high
    means = lambda: [float(v) for v in table.locator("tbody tr td:nth-child(4)").all_inner_texts()]  # noqa: E731
    table.locator("th", has_text="mean").click()
    assert means() == sorted(means())
    table.locator("th", has_text="mean").click()
    assert means() == sorted(means(), reverse=True)
    assert seen["errors"] == []
    context.close()


def test_hostile_names_stay_text_in_the_browser(browser, pages) -> None:
    context, page, seen = _open(browser, pages["hostile"], 1280, 800)
    body = page.locator("body").inner_text()
    assert HOSTILE[0] in body and HOSTILE[2] in body
    assert page.locator("img:not([src^='data:image/png'])").count() == 0
    assert page.evaluate("document.scripts.length") == 1
    assert seen["outside"] == [] and seen["errors"] == [] and seen["dialogs"] == []
    context.close()


def test_the_report_prints_to_pdf(browser, pages, tmp_path: Path) -> None:
    context, page, seen = _open(browser, pages["sample"], 1280, 800)
    page.emulate_media(media="print")
    assert page.locator("nav.toc").is_hidden()  # the contents are for the screen
    _shot(page, "report-print-1280.png", "#audit")
    _shot(page, "report-print-exploitability-1280.png", "#exploitability")
    pdf = tmp_path / "report.pdf"
    page.pdf(path=str(pdf), format="A4", print_background=True)
    data = pdf.read_bytes()
    pages_printed = len(re.findall(rb"/Type\s*/Page[^s]", data))  # each page object, not the /Pages tree
    assert data.startswith(b"%PDF") and pages_printed >= 5, pages_printed
    assert len(data) > 50_000  # text, vector figures and frames, not an empty page
    assert seen["outside"] == [] and seen["errors"] == []
    context.close()
