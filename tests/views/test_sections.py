"""The sections under the Tuner and Compare (advantages, shaping certificate): built on opening, following the view's config only while open."""

import asyncio
from time import monotonic as clock

import pytest
from helpers import REPO

import workbench
from workbench.views.widgets import Compare, Replayer, Tuner
from workbench.views.widgets.advantages import AdvantagesPanel
from workbench.views.widgets.certificate import CertificatePanel
from workbench.views.widgets.section import ADVANTAGES, CERTIFICATE, CERTIFICATE_GAP, ViewSection


def _section(view, title: str) -> ViewSection:
    found = [w for w in _walk(view) if isinstance(w, ViewSection) and w.titles == (title,)]
    assert len(found) == 1
    return found[0]


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


@pytest.mark.parametrize("title, panel_class", [(ADVANTAGES, AdvantagesPanel), (CERTIFICATE, CertificatePanel)])
def test_tuner_section_follows_the_config_while_open(title, panel_class):
    tuner = Tuner(workbench.sample_corpus())
    section = _section(tuner, title)
    assert section.panel is None and section.selected_index is None  # closed: nothing built
    first = tuner.config
    tuner.controls.weight_sliders["collect_stone"].value = 7.0
    assert section.panel is None  # moves while closed build nothing
    section.selected_index = 0
    assert isinstance(section.panel, panel_class) and section.panel.config is tuner.config
    tuner.controls.weight_sliders["collect_stone"].value = 3.0  # no event loop: followed at once
    assert tuner.config is not first and section.panel.config is tuner.config
    assert section.panel.config.weights["collect_stone"] == 3.0
    section.selected_index = None
    tuner.controls.weight_sliders["collect_stone"].value = 4.0
    assert section.panel.config.weights["collect_stone"] == 3.0  # closed: not recomputed
    section.selected_index = 0
    assert section.panel.config.weights["collect_stone"] == 4.0  # opened again: caught up


def test_the_certificate_follows_latest_wins_inside_an_event_loop():
    # Inside the kernel's loop a move is certified on the loop, after the Tuner's update: three
    # moves in a row fold into one recompute of the last; a move right after it waits CERTIFICATE_GAP.
    tuner = Tuner(workbench.sample_corpus())
    section = _section(tuner, CERTIFICATE)
    section.selected_index = 0
    certified = []
    section.panel.observe(lambda change: certified.append((change["new"].weights["collect_stone"], clock())), "config")

    async def until(count: int) -> None:
        while len(certified) < count:
            await asyncio.sleep(0.01)

    async def moves() -> float:
        for value in (2.0, 3.0, 5.0):
            tuner.controls.weight_sliders["collect_stone"].value = value
        assert certified == []  # scheduled, not run inside the Tuner's update
        await asyncio.wait_for(until(1), 10)
        moved = clock()
        tuner.controls.weight_sliders["collect_stone"].value = 6.0
        await asyncio.wait_for(until(2), 10)
        return moved

    moved = asyncio.run(moves())
    assert [value for value, _ in certified] == [5.0, 6.0] and section.panel.config is tuner.config
    assert certified[1][1] - moved >= CERTIFICATE_GAP - 0.01


def test_a_pick_in_a_panel_becomes_the_views_episode():
    corpus = workbench.sample_corpus()
    compare = Compare(corpus, {"a": workbench.RewardConfig.from_dict({}), "b": Tuner(corpus).config})
    section = _section(compare, ADVANTAGES)
    section.selected_index = 0
    assert section.panel is not None and section.panel.config is compare.config
    episode = corpus.ids[2]
    section.panel.episode = episode
    assert compare.episode == episode


def test_a_cycle_clicked_in_the_tuner_opens_in_a_following_replayer():
    corpus = workbench.sample_corpus()
    shaped = workbench.RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml")
    tuner = Tuner(corpus, shaped)
    replayer = Replayer(corpus, tuner.config)
    replayer.follow(tuner)
    section = _section(tuner, CERTIFICATE)
    section.selected_index = 0
    panel = section.panel
    first = panel.listed.iloc[0]
    panel.table.value = panel.table.options[0][1]
    assert tuner.episode == first["episode"] == replayer.episode
    # the pick's decision reaches the Replayer through the Tuner: the loop's first decision
    assert replayer.decision == int(first["from_decision"]) + 1
    assert tuner.decision == 0  # and the Tuner's own picks name none again
    panel.table.value = None  # the table's own clear: no pick
    tuner.open_episode(corpus.ids[0])
    panel.table.value = panel.table.options[0][1]  # the same cycle again, after the Tuner moved on
    assert tuner.episode == first["episode"] == replayer.episode
