"""The widgets in a real JupyterLab, in Debian's chromium driven by Playwright.

``test_widgets.py`` drives the views from the kernel; this checks what only a browser can: the
layout at 1280x800 (file browser open) and 1920x1080 (every slider track >= 150 px, nothing
clipped, nothing moving when the lint text changes), that a small mouse drag changes a weight by
a small amount and the figure follows while dragging, that clicking an episode replays it, that
Play shows every step and pause pauses, the keyboard, a text rollout replayed without frames,
and Compare re-picking. Under real use: UUID policies and 60-character config names whose
labels never overlap or leave their figure, the Replayer's frame, controls and strip in the
1280x800 window together, a second browser context and a reload, and no console error (bqplot's
and the widget manager's included) in any page. Screenshots of every view go to
$WORKBENCH_LAB_SCREENSHOTS when set (docs/screenshots has them). ``make test`` installs chromium
(``apt-get``) and Playwright (the ``dev`` extra); Playwright never downloads a browser of its own.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from helpers.browser_lab import (
    LABELS_JS,
    LAYOUT_JS,
    REPLAY_BOXES_JS,
    REPO,
    TEXT_BOXES_JS,
    TIMEOUT_MS,
    lab_fixtures,
    open_notebook,
    output,
    run_all,
)

pytestmark = pytest.mark.browser

SHAPED = REPO / "configs" / "upstream_shaped.yaml"
RECOMMENDED = REPO / "configs" / "recommended.yaml"
DEFAULT = REPO / "configs" / "consistent.yaml"
#: A text rollout without frames: map views (material names) and the model's messages.
TEXT_EPISODE = """
import json
from workbench.data.episodes import Corpus, Episode
source = corpus["scripted-s2024-00000"]
n = 40
tiles = ["grass", "tree", "water", "stone", "sand"]
def view(i):
    rows = [[tiles[(i + r * 3 + c) % len(tiles)] for c in range(5)] for r in range(5)]
    rows[2][2] = "player"
    return "Local Map View (5x5):\\n" + "\\n".join(" ".join(row) for row in rows)
text = Episode.from_states("text-run-0", source.states()[: n + 1], source.actions[:n])
text.views = [view(i) for i in range(n + 1)]
text.messages = [f"I see a tree, going for wood ({i + 1}).\\ntool: interact_many {source.actions[i]}" for i in range(n)]
# Decision 2's calls as the model gave them hold a name that is no action (the task app skipped it).
loose = [list(a) + (["jump"] if i == 1 else []) for i, a in enumerate(source.actions[:n])]
text.calls = [json.dumps([{"tool_name": "interact_many", "arguments": {"actions": a}}]) for a in loose]
"""
CELLS = [
    "import workbench\nfrom workbench.views.widgets import Compare, Replayer, Tuner, link\n"
    f"corpus = workbench.sample_corpus()\nshaped = workbench.RewardConfig.from_file({str(SHAPED)!r})\n"
    f"recommended = workbench.RewardConfig.from_file({str(RECOMMENDED)!r})\n"
    f"default = workbench.RewardConfig.from_file({str(DEFAULT)!r})\n" + TEXT_EPISODE,
    "tuner = Tuner(corpus, shaped)\ntuner",
    "replayer = Replayer(corpus, shaped, episode='scripted-s2024-00000')\nreplayer",
    (
        "compare = Compare(corpus, {'shaped': shaped, 'recommended': recommended, 'default': default})\n"
        "link(tuner, replayer, compare)\ncompare"
    ),
    "text_replayer = Replayer(Corpus([text]), shaped)\ntext_replayer",
    # Real names at their longest: task-app policy ids (UUIDs) and 60-character config names.
    # the long names are test helpers (tests/helpers), not the package: the kernel is told where
    f"import sys\nsys.path.insert(0, {str(REPO / 'tests')!r})\n"
    "from helpers.long_names import long_name, uuid_policies\nlong = uuid_policies(corpus)\n"
    "long_tuner = Tuner(long, shaped)\nlong_tuner",
    "long_compare = Compare(long, {long_name(n): c for n, c in "
    "[('upstream_shaped', shaped), ('recommended', recommended), ('consistent', default)]})\nlong_compare",
]
WIDGET_CELLS = [1, 2, 3, 4, 5, 6]


lab, browser = lab_fixtures("widgets.ipynb", CELLS)


def _open(browser, lab, width: int, height: int, file_browser: bool):
    base, token = lab
    page = open_notebook(browser, base, token, "widgets.ipynb", width=width, height=height, file_browser=file_browser)
    run_all(page, WIDGET_CELLS)
    output(page, 2).locator(".wb-replay").wait_for(timeout=TIMEOUT_MS)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.wb-replay')].every(r => r.workbenchReplay.loaded)", timeout=TIMEOUT_MS
    )
    return page


@pytest.fixture(scope="module")
def page(browser, lab):
    """The notebook at 1920x1080, file browser closed, every cell run."""
    page = _open(browser, lab, 1920, 1080, False)
    yield page
    page.close()


#: What must hold still while the Replayer plays: the toolbar's height and the strip's top.
STILL_JS = (
    "(root) => [root.querySelector('.wb-toolbar').getBoundingClientRect().height,"
    " Math.round(root.querySelector('.wb-strip').getBoundingClientRect().top)]"
)


def _each_section(page, tuner) -> list[dict]:
    """The control column's layout with each accordion section open in turn (one at a time)."""
    layouts = [_layout(tuner)]
    for header in tuner.locator(".workbench-controls .jupyter-widget-Collapse-header").all():
        header.click()
        page.wait_for_timeout(150)
        layouts.append(_layout(tuner))
    return layouts


def _layout(tuner):
    return tuner.locator(".workbench-tuner").evaluate(LAYOUT_JS)


def _timing(tuner) -> str:
    return tuner.locator(".widget-html-content", has_text="re-scored").inner_text()


def _check_layout(page, tuner) -> None:
    layouts = _each_section(page, tuner)
    tracks = [width for layout in layouts[1:] for width in layout["tracks"][1:]]  # [0] is lambda
    assert len(tracks) >= 22 + len(layouts) - 2  # every weight slider (and the resource ones) was shown
    assert min(tracks) >= 150 and min(layouts[0]["tracks"]) >= 150, tracks
    assert [layout["clipped"] for layout in layouts] == [[]] * len(layouts)
    layout = layouts[-1]
    # The lint text changes length with the strategy; the controls do not move.
    tuner.locator("select").first.select_option("consistent")
    page.wait_for_function(
        "(root) => root.innerText.includes('consistent pays 1.0 for every decision')",
        arg=tuner.element_handle(),
        timeout=TIMEOUT_MS,
    )
    after = _layout(tuner)
    assert (after["left"], after["width"]) == (layout["left"], layout["width"])
    assert (
        tuner.locator(".widget-slider", has_text="collect_wood")
        .locator(".slider-container")
        .evaluate(
            "e => e.closest('.widget-slider').classList.contains('mod-disabled')"
            " || !!e.closest('.widget-slider').querySelector('[disabled]')"
        )
    )
    tuner.locator("select").first.select_option("per_achievement")
    page.wait_for_function(
        "(root) => !root.innerText.includes('consistent pays 1.0 for every decision')",
        arg=tuner.element_handle(),
        timeout=TIMEOUT_MS,
    )
    _check_text_boxes(tuner)
    assert page.errors == []


def _check_text_boxes(tuner) -> None:
    """The progress, returns and lint boxes are whole lines high (they scroll a line at a time,
    never cutting one) and the returns table (top 5 and bottom 5) fits without scrolling."""
    boxes = tuner.locator(".workbench-tuner").evaluate(TEXT_BOXES_JS)
    assert len(boxes) == 3, boxes
    for box in boxes:
        assert box["line"] == 18 and box["height"] % 18 == 0, box
    table = next(box for box in boxes if box["table"] is not None)
    assert table["table"] <= table["height"] and table["content"] <= table["height"] + 1, table


def _check_replayer_holds_still(page, replayer) -> None:
    """Nothing moves while the Replayer plays: not the toolbar (the play button's label changes)
    nor the strip (the components list below the picture changes length every decision)."""
    replayer.locator(".wb-btn", has_text="start").click()
    before = replayer.locator(".wb-replay").evaluate(STILL_JS)
    replayer.locator(".wb-btn", has_text="play").click()
    seen = set()
    for _ in range(12):
        page.wait_for_timeout(100)
        seen.add(tuple(replayer.locator(".wb-replay").evaluate(STILL_JS)))
    replayer.locator(".wb-btn", has_text="pause").click()
    assert seen == {tuple(before)}, (before, seen)


def _labels_fit(view) -> None:
    """No two labels of a figure in ``view`` overlap; none is cut off by its figure."""
    labels = view.evaluate(LABELS_JS)
    assert labels["counted"] and labels["overlaps"] == [] and labels["cut"] == [], labels


def _screenshots(page, width: int) -> None:
    """Each view's cell as a PNG in $WORKBENCH_LAB_SCREENSHOTS (when set), at this window size."""
    folder = os.environ.get("WORKBENCH_LAB_SCREENSHOTS")
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    for cell, name in (
        (1, "tuner"),
        (2, "replayer"),
        (3, "compare"),
        (4, "replayer-text"),
        (5, "tuner-uuid"),
        (6, "compare-long-names"),
    ):
        view = output(page, cell)
        view.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(400)
        page.screenshot(path=str(Path(folder) / f"lab-{name}-{width}.png"))


def test_the_tuner_layout_holds_at_1280x800_with_the_file_browser_open(browser, lab):
    page = _open(browser, lab, 1280, 800, True)
    # Real names: the UUID policies' and the 60-character configs' labels never overlap or cut.
    for cell in (1, 3, 5, 6):
        output(page, cell).evaluate("e => e.scrollIntoView({block: 'start'})")
        _labels_fit(output(page, cell))
    # The Replayer's frame, controls and reward strip are in the window together.
    replayer = output(page, 2).locator(".wb-replay")
    for name, top, bottom in replayer.evaluate(REPLAY_BOXES_JS):
        assert top >= 0 and bottom <= 800, (name, top, bottom)
    _screenshots(page, 1280)
    _check_layout(page, output(page, 1))
    for cell in (2, 4):  # the Replayer with frames, and the text rollout's
        _check_replayer_holds_still(page, output(page, cell))
    # Compare's pickers fit (the returns toggles wrap below rather than squeeze them).
    compare = output(page, 3)
    widget = compare.locator(".workbench-compare").bounding_box()
    for select in compare.locator("select").all():
        box = select.bounding_box()
        assert box["x"] + box["width"] <= widget["x"] + widget["width"] + 1
        assert select.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
    assert page.errors == []
    page.close()


def test_the_tuner_layout_holds_at_1920x1080(page):
    _check_layout(page, output(page, 1))
    for cell in (1, 3, 5, 6):
        output(page, cell).evaluate("e => e.scrollIntoView({block: 'start'})")
        _labels_fit(output(page, cell))
    _screenshots(page, 1920)


def test_a_small_drag_changes_a_weight_a_little_and_the_figure_follows_while_dragging(page):
    tuner = output(page, 1)
    tuner.locator(".workbench-controls .jupyter-widget-Collapse-header", has_text="weights: collect").click()
    slider = tuner.locator(".widget-slider", has_text="collect_wood")
    readout = slider.locator(".widget-readout")
    before = float(readout.inner_text())
    handle = slider.locator(".noUi-handle").first
    box = handle.bounding_box()
    timing = _timing(tuner)
    # The kernel's answer shows as a new timing line, or, when the redraw took as many whole ms as
    # the last one (the same text: no change to see), as the figure's marks moving.
    tuner.evaluate(
        "root => { root.dataset.redrawn = ''; new MutationObserver(() => { root.dataset.redrawn = 'yes'; })"
        ".observe(root.querySelector('.bqplot'), {subtree: true, attributes: true, childList: true}); }"
    )
    page.wait_for_timeout(300)  # what the section's opening moved in the figure settles first
    tuner.evaluate("root => { root.dataset.redrawn = ''; }")
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    for dx in (4, 8, 12):
        page.mouse.move(box["x"] + box["width"] / 2 + dx, box["y"] + box["height"] / 2)
        page.wait_for_timeout(250)
    # Still dragging: the kernel has re-scored and the page shows it.
    page.wait_for_function(
        "([root, before]) => root.dataset.redrawn === 'yes' || !root.innerText.includes(before)",
        arg=[tuner.element_handle(), timing],
        timeout=TIMEOUT_MS,
    )
    page.mouse.up()
    after = float(readout.inner_text())
    assert 0 < after - before < 1.5  # 12 px of a >= 150 px track spanning 12 units
    # Fine resolution: arrow keys move the focused handle by 0.01.
    handle.focus()
    page.keyboard.press("ArrowRight")
    assert float(readout.inner_text()) == pytest.approx(after + 0.01)


def test_clicking_an_episode_replays_it_at_its_best_decision(page):
    tuner, replayer = output(page, 1), output(page, 2)
    dots = tuner.locator(".bqplot .dot")
    assert dots.count() == 10  # one point per episode of the sample corpus
    dots.nth(0).click(force=True)
    page.wait_for_function(
        "(root) => !root.querySelector('.wb-counter').innerText.startsWith('0 /')",
        arg=replayer.element_handle(),
        timeout=TIMEOUT_MS,
    )
    assert "decision" in replayer.locator(".wb-components").inner_text()
    assert replayer.locator(".wb-components td").count() >= 2  # the best decision pays components


def test_hover_names_the_episode_and_a_click_on_the_strip_moves_the_replayer(page):
    tuner, replayer = output(page, 1), output(page, 2)
    tuner.locator(".bqplot .dot").nth(3).hover(force=True)
    tooltip = page.locator(".bqplot-tooltip, .bqplot.tooltip, [class*='tooltip']", has_text="achievements").first
    tooltip.wait_for(timeout=TIMEOUT_MS)
    text = tooltip.inner_text()
    assert re.search(r"s2024-0000\d · (scripted|farmer|random) · return -?\d+\.\d\d .* \d+ achievements", text), text
    strip = replayer.locator(".wb-strip")
    box = strip.bounding_box()
    strip.click(position={"x": box["width"] * 0.5, "y": box["height"] / 2})
    counter = replayer.locator(".wb-counter").inner_text()
    step, total = (int(part) for part in counter.split(" / "))
    assert abs(step - total * 0.5) <= total * 0.02  # the middle of the strip is the middle decision
    assert f"decision {step}" in replayer.locator(".wb-state").inner_text()


def test_play_shows_every_step_and_pause_pauses(page):
    replayer = output(page, 2)
    replayer.locator(".wb-speed").select_option("24")
    replayer.locator(".wb-btn", has_text="start").click()
    replayer.locator(".wb-btn", has_text="play").click()
    page.wait_for_timeout(2500)
    replayer.locator(".wb-btn", has_text="pause").click()
    log = replayer.locator(".wb-replay").evaluate("r => r.workbenchReplay.log")
    steps = [step for _, step in log]
    assert len(steps) >= 40
    assert steps == list(range(steps[0], steps[0] + len(steps)))  # no step skipped
    seconds = (log[-1][0] - log[0][0]) / 1000
    assert len(steps) / seconds > 20  # 24 steps/s asked
    paused = replayer.locator(".wb-counter").inner_text()
    page.wait_for_timeout(400)
    assert replayer.locator(".wb-counter").inner_text() == paused
    # The keyboard: Right is one step on, Space plays, Space again pauses.
    replayer.locator(".wb-replay").focus()
    page.keyboard.press("ArrowRight")
    step = int(paused.split(" /")[0]) + 1
    assert replayer.locator(".wb-counter").inner_text().startswith(f"{step} /")
    page.keyboard.press("Shift+ArrowRight")  # the next paying decision
    assert int(replayer.locator(".wb-counter").inner_text().split(" /")[0]) > step


def test_a_text_rollout_replays_its_map_views_and_messages(page):
    view = output(page, 4)
    view.locator(".wb-replay").focus()
    page.keyboard.press("Home")
    # At the start there is no earlier paying decision: the button says so by being disabled.
    assert view.locator(".wb-btn", has_text="◀ paying").is_disabled()
    assert view.locator(".wb-btn", has_text="paying ▶").is_enabled()
    assert "health 9" in view.locator(".wb-state").inner_text()
    page.keyboard.press("ArrowRight")
    assert "going for wood (1)" in view.locator(".wb-message").inner_text()
    assert "calls as given" not in view.locator(".wb-message").inner_text()  # played as written
    page.keyboard.press("ArrowRight")
    message = view.locator(".wb-message").inner_text()
    assert "going for wood (2)" in message and "calls as given: " in message and '"jump"' in message
    assert "\nplayed: " in message
    page.keyboard.press("ArrowLeft")
    # A step is a whole decision here: all of its actions are marked as now, not the first one.
    now = view.locator(".wb-state .wb-now")
    actions = re.search(r"actions: (.*)", view.locator(".wb-state").inner_text()).group(1)
    assert now.count() == 1 and now.inner_text() == actions
    colours = view.locator(".wb-picture").evaluate(
        "c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; const s = new Set();"
        " for (let i = 0; i < d.length; i += 4 * 7) s.add(d[i] + ',' + d[i + 1] + ',' + d[i + 2]); return s.size; }"
    )
    assert colours > 20  # Crafter's textures, not a blank canvas
    assert view.locator(".wb-picture").evaluate("c => getComputedStyle(c).imageRendering") == "pixelated"


def test_compare_repicks_the_reference(page):
    compare = output(page, 3)
    summary = compare.locator(".widget-html-content", has_text="rank agreement")
    assert "shaped (reference)" in summary.inner_text()
    compare.locator("select").first.select_option("recommended")
    page.wait_for_function(
        "(summary) => summary.innerText.includes('recommended (reference)')",
        arg=summary.element_handle(),
        timeout=TIMEOUT_MS,
    )
    assert re.search(r"recommended \(reference\).*0 episode pair\(s\)", summary.inner_text())
    assert page.errors == []


def test_a_second_browser_context_and_a_reload_show_working_views(browser, lab, page):
    """While the first page is open: the notebook in a second browser context (its views built
    again in the same kernel) and after a reload of that page; each Tuner follows a weight."""
    base, token = lab
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    other = open_notebook(context, base, token, "widgets.ipynb", width=1280, height=800, file_browser=True)
    for attempt in ("second context", "reload"):
        if attempt == "reload":
            other.reload()
            other.wait_for_function(
                "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
                " return w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel"
                " && w.sessionContext.session.kernel.status === 'idle'; }",
                timeout=TIMEOUT_MS,
            )
        run_all(other, WIDGET_CELLS)
        tuner = output(other, 1)
        tuner.locator(".workbench-tuner .bqplot").first.wait_for(timeout=TIMEOUT_MS)
        returns = tuner.locator(".widget-html-content", has_text="top 5").first
        before = returns.inner_text()
        tuner.locator(".workbench-controls .jupyter-widget-Collapse-header", has_text="weights: collect").click()
        tuner.locator(".widget-slider", has_text="collect_wood").locator(".noUi-handle").first.focus()
        for _ in range(10):
            other.keyboard.press("ArrowRight")
        other.wait_for_function(
            "([root, before]) => root.innerText !== before", arg=[returns.element_handle(), before], timeout=TIMEOUT_MS
        )
        assert "javascript error" not in tuner.inner_text().lower(), attempt
    assert other.errors == [] and page.errors == [], (other.errors, page.errors)
    context.close()
