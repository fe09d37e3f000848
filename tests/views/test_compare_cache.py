"""Compare's text panels are made once per pick of configs: picking back a pick seen before shows
the text made then, the same as made anew, without making it again."""

from __future__ import annotations

from workbench.core.config import RewardConfig
from workbench.data.sample import sample_corpus
from workbench.views.widgets import Compare
from workbench.views.widgets import compare as compare_module

CONFIGS = {
    "wood": RewardConfig(strategy="per_achievement", weights={"collect_wood": 3.0}),
    "plain": RewardConfig(strategy="per_achievement"),
    "consistent": RewardConfig(strategy="consistent"),
}


def test_picking_back_a_config_reuses_its_text_the_same_as_made_anew(monkeypatch):
    corpus = sample_corpus()
    view = Compare(corpus, CONFIGS)
    made = []
    real = compare_module.groups_html
    monkeypatch.setattr(compare_module, "groups_html", lambda *a, **k: made.append(1) or real(*a, **k))
    view.picker_a.value = "plain"
    view.picker_a.value = "wood"
    assert len(made) == 1  # "wood" as reference was made when the view was built; "plain" once now
    names = ["wood"] + [n for n in view.others if n != "wood"]
    made.clear()
    expected = compare_module.groups_html({n: view._by_group(n) for n in names}, view.by, view._groups)
    components = compare_module.components_html("wood", view.comparisons, view.top)
    assert (view.groups_view.value, view.components_view.value) == (expected, components)  # made anew: the same
    view.picker_a.value = "plain"
    view.picker_a.value = "wood"
    assert len(made) == 1  # only the one made just above: nothing made again for either pick
