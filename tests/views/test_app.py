"""The dashboard (``workbench app``) in Debian's chromium: a real server process on a free
loopback port, driven as a person would, with real names (36-character UUID policies, configs
under 60-character names): move a weight and see the returns change, filter, open an episode
from the returns view and Play it, compare three configs, save a config and find the file, a
bad path shows an error message; a second browser context at the same time and a reload work
as the first page does; no console error in any of them. Also: the page needs its token, a page
of another origin is refused (websocket and requests), the workspace's configs come back after a
restart and the baseline stays the ``--config`` given. Screenshots of every page at both sizes go
to $WORKBENCH_APP_SCREENSHOTS when set (docs/ has them)."""

from __future__ import annotations

import contextlib
import os
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from helpers.browser_app import FRONT_TAB, app_server, foreign_page, tab, upgrade_status, wait_text
from helpers.browser_lab import LABELS_JS, REPLAY_BOXES_JS, REPO, TIMEOUT_MS, collect_errors, launch
from helpers.long_names import long_name, long_name_configs, policy_uuid, uuid_policies
from helpers.polling import until

from workbench.data.sample import sample_corpus
from workbench.data.storage import load_corpus, save_corpus
from workbench.views.app.deep_link import replayer_link
from workbench.views.app.server import COOKIE

pytestmark = pytest.mark.browser

SOURCES = [REPO / "configs" / f"{name}.yaml" for name in ("upstream_shaped", "recommended", "consistent")]
BASELINE, SECOND, THIRD = (long_name(path.stem) for path in SOURCES)
#: What a page of another origin tries with the token cookie set: the kernel websocket.
FOREIGN_JS = """<!doctype html><title>another origin</title><script>
window.result = new Promise(done => { const seen = {opened: false};
  const ws = new WebSocket('ws://127.0.0.1:PORT/jupyter/api/kernels/foreign/channels?session_id=x');
  ws.onopen = () => { seen.opened = true; }; ws.onclose = () => done(seen); });
</script>"""


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


def _labels_fit(root) -> None:
    """No two labels of a figure under ``root`` overlap and none is cut off by its figure, once
    the figures settle: bqplot hides a scatter's point names (``display_names=False``) at the end
    of a transition, so for its length after a redraw they are drawn, one on another."""
    report: dict = {}

    def fits() -> bool:
        report.update(root.evaluate(LABELS_JS))
        return bool(report["counted"]) and report["overlaps"] == [] and report["cut"] == []

    with contextlib.suppress(AssertionError):  # the report below says what stayed wrong
        until(fits, "the figures' labels to fit", seconds=5.0, interval=0.2)
    assert fits(), report


def _open_page(context, url: str, width: int = 1280, height: int = 800):
    """A page of ``context`` on the dashboard, its Corpus page shown; returns (page, seconds to it)."""
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": height})
    collect_errors(page, context.errors)
    started = time.perf_counter()
    page.goto(url)
    page.locator(".wb-app-page-corpus input").first.wait_for(timeout=TIMEOUT_MS)
    return page, time.perf_counter() - started


def _move_weight(page, steps: int = 30) -> float:
    """Press Right ``steps`` times on collect_wood's slider; waits for the returns to change and
    returns the weight it started from."""
    tuner = tab(page, "Tune")
    tuner.locator(".workbench-tuner .bqplot").first.wait_for(timeout=TIMEOUT_MS)
    before = _returns_text(tuner)
    header = tuner.locator(".jupyter-widget-Collapse-header", has_text="weights: collect")
    if "mod-active" not in (header.locator("xpath=..").get_attribute("class") or ""):
        header.click()
    slider = tuner.locator(".widget-slider", has_text="collect_wood")
    weight = float(slider.locator(".widget-readout").inner_text())
    slider.locator(".noUi-handle").first.focus()
    for _ in range(steps):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "([r, b]) => !r.innerText.includes(b)",
        arg=[tuner.locator(".widget-html-content", has_text="top 5").first.element_handle(), before],
        timeout=TIMEOUT_MS,
    )
    assert float(slider.locator(".widget-readout").inner_text()) == pytest.approx(weight + steps / 100)
    return weight


def _text_boxes_render(page) -> None:
    """Every text box of the Corpus and Configs pages is drawn (not "Click to show javascript error")."""
    for title in ("Configs", "Corpus"):
        root = tab(page, title)
        root.locator("input[type='text']").first.wait_for(timeout=TIMEOUT_MS)
        assert root.locator("input[type='text']").count() >= 3, title
        assert "javascript error" not in root.inner_text().lower(), title


@pytest.fixture(scope="module")
def long_names(tmp_path_factory):
    root = tmp_path_factory.mktemp("long-names")
    save_corpus(uuid_policies(sample_corpus()), root / "corpus")
    return root / "corpus", long_name_configs(root / "configs", SOURCES)


def _draft_reaches(workspace: Path, weight: float) -> None:
    """Wait until one of the tabs' Tuner drafts in ``workspace`` holds ``weight`` for collect_wood:
    a draft follows each re-score, so it lags the last key press; poll for it with a deadline."""
    deadline = time.monotonic() + 90
    kept: list[float] = []
    while not any(value == pytest.approx(weight) for value in kept):
        assert time.monotonic() < deadline, f"the drafts have collect_wood {kept}, not {weight}"
        time.sleep(0.1)
        kept = []
        for draft in (workspace / "drafts").glob("tuner-draft-*.yaml"):
            with contextlib.suppress(OSError):  # replaced or removed while read
                kept.append((yaml.safe_load(draft.read_text()) or {}).get("weights", {}).get("collect_wood"))


def _tune_checks(page, workspace: Path) -> float:
    tuner = tab(page, "Tune")
    tuner.locator(".workbench-tuner .bqplot").first.wait_for(timeout=TIMEOUT_MS)
    assert BASELINE in tuner.locator(".widget-html-content", has_text="Baseline (ghost").inner_text()
    _labels_fit(tuner)
    assert policy_uuid("scripted") in tuner.locator(".workbench-legend").inner_text()  # the whole name
    weight = _move_weight(page)
    # The draft of the Tuner is kept in the workspace after the move.
    _draft_reaches(workspace, weight + 0.30)
    # k-limit boxes inside the control column (none cut on the right)
    tuner.locator(".jupyter-widget-Collapse-header", has_text="k-limits").click()
    cut = tuner.locator(".workbench-controls").evaluate(
        "c => { const r = c.getBoundingClientRect(); return [...c.querySelectorAll('input')]"
        ".filter(e => e.offsetParent !== null && e.getBoundingClientRect().right > r.right + 1).length; }"
    )
    assert cut == 0
    # A filter that matches nothing draws a plain axis; back to all policies.
    tuner.locator("input[placeholder='episode id contains']").fill("no-such-episode")
    wait_text(page, tuner, "no episode matches the filter")
    ticks = tuner.locator(".bqplot .axis text").evaluate_all("es => es.map(e => e.textContent)")
    assert not any("e-" in t or "µ" in t or "m" == t[-1:] for t in ticks), ticks
    tuner.locator("input[placeholder='episode id contains']").fill("")
    tuner.locator("select").nth(1).select_option(policy_uuid("farmer"))
    wait_text(page, tuner, "of 10 episodes")
    tuner.locator("select").nth(1).select_option("all policies")
    wait_text(page, tuner, "all 10 episodes")
    return weight


def _replay_checks(page) -> None:
    tuner = tab(page, "Tune")
    dots = tuner.locator(".bqplot .dot")
    page.wait_for_function(  # the filter was just set back to every policy: bqplot redraws after the text
        "(r) => r.querySelectorAll('.bqplot .dot').length === 10", arg=tuner.element_handle(), timeout=TIMEOUT_MS
    )
    dots.nth(0).click(force=True)
    replay = page.locator(".wb-app-page-replay")
    replay.locator(".wb-replay").wait_for(state="visible", timeout=TIMEOUT_MS)
    page.wait_for_function(
        "(r) => !r.querySelector('.wb-counter').innerText.startsWith('0 /')",
        arg=replay.element_handle(),
        timeout=TIMEOUT_MS,
    )
    # Frame, controls and reward strip in the 1280x800 window together; buttons with a border.
    for name, top, bottom in replay.locator(".wb-replay").evaluate(REPLAY_BOXES_JS):
        assert top >= 0 and bottom <= 800, (name, top, bottom)
    border = replay.locator(".wb-btn").first.evaluate("b => parseFloat(getComputedStyle(b).borderTopWidth)")
    assert border >= 1
    replay.locator(".wb-btn", has_text="start").click()
    replay.locator(".wb-btn", has_text="play").click()
    page.wait_for_timeout(1500)
    replay.locator(".wb-btn", has_text="pause").click()
    assert int(replay.locator(".wb-counter").inner_text().split(" /")[0]) > 5
    _screenshot(page, "replay", 1280)
    # Another episode starts at its start, not at the step the last one was at.
    picker = replay.locator("select").first
    other = [o for o in picker.locator("option").all_inner_texts() if o != picker.input_value()][0]
    picker.select_option(other)
    try:
        page.wait_for_function(
            "(r) => r.querySelector('.wb-counter').innerText.startsWith('0 /')",
            arg=replay.element_handle(),
            timeout=20_000,
        )
    except Exception:
        raise AssertionError(
            f"{other}: {replay.locator('.wb-counter').inner_text()} ({picker.input_value()})"
        ) from None


def _deep_link_checks(context, url: str, episode: str) -> None:
    """A link to the Replayer (docs/dashboard.md, "Links") opens a new page on the episode at the
    decision; a link to an episode the corpus lacks says so and leaves the Corpus page in front."""
    page = context.new_page()
    page.set_viewport_size({"width": 1280, "height": 800})
    collect_errors(page, context.errors)
    page.goto(replayer_link(url, episode, 33))  # no Corpus page first: the Replay page is in front
    replay = page.locator(".wb-app-page-replay")
    page.wait_for_function(  # one action per decision in this corpus: step 33 is decision 33
        "(r) => { const c = r.querySelector('.wb-counter'); return c && c.innerText.startsWith('33 /'); }",
        arg=replay.element_handle(),
        timeout=TIMEOUT_MS,
    )
    assert replay.locator("select").first.input_value() == episode
    assert "decision 33 of" in replay.locator(".wb-replay").inner_text()
    assert page.locator(FRONT_TAB).first.inner_text() == "Replay"
    page.close()
    page, _ = _open_page(context, replayer_link(url, "no-such-episode", 2))
    wait_text(page, page.locator(".wb-app"), "link: no episode 'no-such-episode'")
    assert page.locator(".wb-app-page-corpus").is_visible()
    page.close()


def _compare_checks(page, width: int) -> None:
    compare = tab(page, "Compare")
    wait_text(page, compare, f"{SECOND} (compared)")
    legend = compare.locator(".wb-legend").inner_text()
    assert all(name in legend for name in (BASELINE, SECOND, THIRD))  # every config whole, in its colour
    summary = compare.locator(".workbench-compare-summary")
    assert all(name in summary.inner_text() for name in (BASELINE, SECOND, THIRD))
    assert summary.evaluate("e => e.scrollHeight <= e.clientHeight + 1")  # nothing hidden behind a scroll
    _labels_fit(compare)
    compare.locator("button", has_text="ranks").click()
    wait_text(page, compare, "mean rank")
    _labels_fit(compare)  # the ranks title too, at this width
    compare.locator("button", has_text="raw").click()
    wait_text(page, compare, "mean shaped return per policy")


def _configs_checks(page, tmp_path: Path, workspace: Path, weight: float) -> None:
    tuner = tab(page, "Tune")
    tuner.locator("button", has_text="send to Compare").click()
    wait_text(page, page.locator(".wb-app-page-compare"), "tuned (compared)")
    page.locator(FRONT_TAB, has_text="Compare").wait_for(timeout=TIMEOUT_MS)
    _screenshot(page, "compare", 1280)
    configs = tab(page, "Configs")
    configs.locator("select").first.select_option("tuned")
    configs.locator("input[placeholder='name']").fill("../wood heavy")
    configs.locator("button", has_text="Save in workspace").click()
    wait_text(page, configs, "saved")
    saved = workspace / "wood_heavy.yaml"
    assert saved.is_file()
    assert yaml.safe_load(saved.read_text())["weights"]["collect_wood"] == pytest.approx(weight + 0.30)
    assert not (tmp_path / "wood heavy.yaml").exists()
    configs.locator("button", has_text="Save in workspace").click()
    wait_text(page, configs, "tick 'replace if it exists'")
    configs.locator("input[placeholder='a config YAML or a synth-ai training TOML']").fill(str(tmp_path / "nope.yaml"))
    configs.locator("button", has_text="Open").first.click()
    wait_text(page, configs, "nope.yaml")
    assert "error" in configs.locator(".wb-app-status").first.inner_html()
    configs.locator("select").first.select_option(BASELINE)
    _screenshot(page, "configs", 1280)


def _origin_checks(browser, url: str, token: str) -> None:
    """A page of another loopback port with the token cookie set cannot open the kernel
    websocket; a forged Origin gets no 101 and no page; the page's own origin passes."""
    base = url.split("?")[0].rstrip("/")
    port = int(base.rsplit(":", 1)[1])
    cookie = f"{COOKIE}={token}"
    with foreign_page(FOREIGN_JS.replace("PORT", str(port))) as foreign:
        context = browser.new_context()
        context.add_cookies([{"name": COOKIE, "value": token, "url": base + "/"}])
        page = context.new_page()
        page.goto(foreign)
        assert page.evaluate("() => window.result") == {"opened": False}
        context.close()
    path = "/jupyter/api/kernels/foreign/channels?session_id=x"
    for origin in ("http://evil.example", f"http://127.0.0.1:{port + 1}", "null"):
        status = upgrade_status(port, path, {"Origin": origin, "Cookie": cookie})
        assert " 101 " not in status and " 403 " in status, (origin, status)
        request = urllib.request.Request(base + "/", headers={"Origin": origin, "Cookie": cookie})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 403
    own = urllib.request.Request(base + "/", headers={"Origin": f"http://127.0.0.1:{port}", "Cookie": cookie})
    assert urllib.request.urlopen(own, timeout=30).status == 200


def _asset_checks(url: str, token: str) -> None:
    """Solara's Vuetify bundle comes gzipped from the server's memory (``AssetCache``), the same
    bytes as the file solara-assets installed, cached by the browser for good (its path names
    its version)."""
    import gzip
    import re
    import sys

    cookie = f"{COOKIE}={token}"
    page = urllib.request.urlopen(urllib.request.Request(url, headers={"Cookie": cookie}), timeout=30).read()
    path = re.search(rb'src="(/_solara/cdn/[^"]*solara-vuetify[^"]*\.min\.js)"', page).group(1).decode()
    on_disk = (Path(sys.prefix) / "share" / "solara" / "cdn" / path.removeprefix("/_solara/cdn/")).read_bytes()
    base = url.split("?")[0].rstrip("/")
    for _ in range(2):
        request = urllib.request.Request(base + path, headers={"Cookie": cookie, "Accept-Encoding": "gzip"})
        answer = urllib.request.urlopen(request, timeout=30)
        assert answer.headers["Content-Encoding"] == "gzip" and "immutable" in answer.headers["Cache-Control"]
        assert gzip.decompress(answer.read()) == on_disk


def test_the_dashboard_in_two_contexts_and_after_a_reload(tmp_path, long_names):
    from playwright.sync_api import sync_playwright

    corpus, configs = long_names
    workspace = tmp_path / "workspace"
    arguments = [str(corpus), *[a for c in configs for a in ("--config", str(c))], "--workspace", str(workspace)]
    with app_server(arguments, tmp_path / "server.log") as (url, token), sync_playwright() as playwright:
        with pytest.raises(urllib.error.HTTPError) as refused:  # no token, no page
            urllib.request.urlopen(url.split("?")[0], timeout=10)
        assert refused.value.code == 403
        _asset_checks(url, token)
        browser = launch(playwright)
        first = browser.new_context()
        first.errors = []
        page, _ = _open_page(first, url)
        corpus_page = page.locator(".wb-app-page-corpus")
        wait_text(page, corpus_page, "open: ")
        assert BASELINE in page.locator(".wb-app-baseline").inner_text()
        # Once the first page is rendered, the views are built behind it (the server log says
        # so), and none of their pages is sent before its tab is shown.
        until(lambda: "built the Compare" in (tmp_path / "server.log").read_text(), "the views built", seconds=90)
        assert page.locator(FRONT_TAB).first.inner_text() == "Corpus"
        assert page.locator(".wb-app-page-tune, .wb-app-page-replay, .wb-app-page-compare").count() == 0
        # A bad path is a message in the page, not a blank page.
        corpus_page.locator("input[placeholder='/path/to/corpus-folder']").fill(str(tmp_path / "no-such-corpus"))
        corpus_page.locator("button", has_text="Open folder").click()
        wait_text(page, corpus_page, "no such corpus folder")
        _screenshot(page, "corpus", 1280)
        weight = _tune_checks(page, workspace)
        _screenshot(page, "tune", 1280)
        _replay_checks(page)
        _compare_checks(page, 1280)
        _configs_checks(page, tmp_path, workspace, weight)

        # A second browser context while the first is open: its own session, every box drawn.
        second = browser.new_context()
        second.errors = []
        other, _ = _open_page(second, url)
        wait_text(page=other, root=other.locator(".wb-app-page-corpus"), text="open: ")
        _text_boxes_render(other)
        _move_weight(other, 5)
        _draft_reaches(workspace, weight + 0.35)  # the reload starts from this draft
        # A reload of the first: a new session that works as the first did.
        page.reload()
        page.locator(".wb-app-page-corpus input").first.wait_for(timeout=TIMEOUT_MS)
        wait_text(page, page.locator(".wb-app-page-corpus"), "open: ")
        _text_boxes_render(page)
        _move_weight(page, 5)
        _draft_reaches(workspace, weight + 0.40)  # what the restart below must bring back

        # The wide window: every page once more (the ranks title fits there too).
        page.set_viewport_size({"width": 1920, "height": 1080})
        _compare_checks(page, 1920)
        for title in ("Corpus", "Tune", "Replay", "Compare", "Configs"):
            tab(page, title)
            page.wait_for_timeout(600)
            if title == "Tune":
                _labels_fit(page.locator(".wb-app-page-tune"))
            _screenshot(page, title.lower(), 1920)
        _deep_link_checks(first, url, load_corpus(corpus).ids[1])
        _origin_checks(browser, url, token)
        assert first.errors == [] and second.errors == [], (first.errors, second.errors)
        browser.close()

    # A restart: the configs saved in the workspace and the Tuner's draft come back; the
    # baseline is still the --config given, and Reset goes there.
    with (
        app_server(arguments, tmp_path / "server2.log") as (url, _),
        sync_playwright() as playwright,
    ):
        browser = launch(playwright)
        context = browser.new_context()
        context.errors = []
        page, _ = _open_page(context, url)
        wait_text(page, page.locator(".wb-app-page-corpus"), "open: ")
        assert "wood_heavy" in tab(page, "Configs").locator("select").first.inner_text()
        tuner = tab(page, "Tune")
        tuner.locator(".jupyter-widget-Collapse-header", has_text="weights: collect").click()
        readout = tuner.locator(".widget-slider", has_text="collect_wood").locator(".widget-readout")
        assert float(readout.inner_text()) == pytest.approx(
            weight + 0.40
        )  # the draft: +0.30, then +0.05 in each later session
        assert BASELINE in tuner.locator(".widget-html-content", has_text="Baseline (ghost").inner_text()
        tuner.locator("button", has_text="Reset").click()
        page.wait_for_function(
            "([e, w]) => Math.abs(parseFloat(e.innerText) - w) < 1e-9", arg=[readout.element_handle(), weight]
        )
        assert context.errors == [], context.errors
        browser.close()
    log = (tmp_path / "server.log").read_text()
    assert "Traceback" not in log, log[-3000:]
