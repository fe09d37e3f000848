"""The advantages section under the Tuner and Compare: built on opening, following the view's config only while open."""

import workbench
from workbench.views.widgets import Compare, Tuner
from workbench.views.widgets.advantages_section import AdvantagesSection


def _section(view) -> AdvantagesSection:
    found = [w for w in _walk(view) if isinstance(w, AdvantagesSection)]
    assert len(found) == 1
    return found[0]


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def test_tuner_section_follows_the_config_while_open():
    tuner = Tuner(workbench.sample_corpus())
    section = _section(tuner)
    assert section.panel is None and section.selected_index is None  # closed: nothing built
    first = tuner.config
    tuner.controls.weight_sliders["collect_stone"].value = 7.0
    assert section.panel is None  # moves while closed build nothing
    section.selected_index = 0
    assert section.panel is not None and section.panel.config is tuner.config
    tuner.controls.weight_sliders["collect_stone"].value = 3.0
    assert tuner.config is not first and section.panel.config is tuner.config
    assert section.panel.config.weights["collect_stone"] == 3.0
    section.selected_index = None
    tuner.controls.weight_sliders["collect_stone"].value = 4.0
    assert section.panel.config.weights["collect_stone"] == 3.0  # closed: not recomputed
    section.selected_index = 0
    assert section.panel.config.weights["collect_stone"] == 4.0  # opened again: caught up


def test_a_rollout_clicked_in_the_panel_becomes_the_views_episode():
    corpus = workbench.sample_corpus()
    compare = Compare(corpus, {"a": workbench.RewardConfig.from_dict({}), "b": Tuner(corpus).config})
    section = _section(compare)
    section.selected_index = 0
    assert section.panel is not None and section.panel.config is compare.config
    episode = corpus.ids[2]
    section.panel.episode = episode
    assert compare.episode == episode
