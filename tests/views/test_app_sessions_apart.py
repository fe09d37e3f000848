"""Two people on one dashboard server: each browser session keeps its own Tuner weights and its
own Replayer episode while the other moves and picks (driven through tests/helpers/browser_app)."""

from __future__ import annotations

import pytest
from helpers.browser_app import app_server, open_dashboard, open_in_replayer, replay_controls, tuner_weight
from helpers.browser_lab import REPO, TIMEOUT_MS, collect_errors, launch

from workbench.data.sample import sample_path

pytestmark = pytest.mark.browser


def _press(page, times: int) -> float:
    """Press Right ``times`` on collect_wood's slider; returns the weight it started from, once
    the readout shows the moved weight."""
    _, handle, readout = tuner_weight(page, "collect_wood")
    start = float(readout.inner_text())
    handle.focus()
    for _ in range(times):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "([r, w]) => Math.abs(parseFloat(r.innerText) - w) < 1e-6",
        arg=[readout.element_handle(), start + times / 100],
        timeout=TIMEOUT_MS,
    )
    return start


def _weight(page) -> float:
    return float(tuner_weight(page, "collect_wood")[2].inner_text())


def test_two_sessions_never_show_each_others_state(tmp_path):
    from playwright.sync_api import sync_playwright

    arguments = [str(sample_path()), "--config", str(REPO / "configs" / "upstream_shaped.yaml")]
    arguments += ["--workspace", str(tmp_path / "ws")]
    with app_server(arguments, tmp_path / "server.log") as (url, _), sync_playwright() as playwright:
        browser = launch(playwright)
        errors: list[str] = []
        first, second = (open_dashboard(browser.new_context(), url) for _ in range(2))
        for page in (first, second):
            collect_errors(page, errors)
        mine = open_in_replayer(first, 0)["picker"].input_value()
        theirs = open_in_replayer(second, 1)["picker"].input_value()
        assert mine != theirs  # two different episodes, one in each session
        start = _press(first, 7)
        other_start = _press(second, 3)
        assert other_start == pytest.approx(start)  # both began from the same config
        first.wait_for_timeout(2000)  # time for any update the server might push to the wrong page
        assert _weight(first) == pytest.approx(start + 0.07)
        assert _weight(second) == pytest.approx(start + 0.03)
        assert replay_controls(first)["picker"].input_value() == mine
        assert replay_controls(second)["picker"].input_value() == theirs
        assert errors == []
        browser.close()
