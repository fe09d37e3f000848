"""The Tuner's ``config`` is its state (issue 42): a control's move edits one entry of it (not a
rebuild from every control), the controls follow it, and Undo steps back over configs."""

from __future__ import annotations

import ipywidgets as w
import numpy as np
import pytest

from workbench.core.config import RewardConfig
from workbench.data.sample import sample_corpus
from workbench.views.widgets import Tuner
from workbench.views.widgets.tuner_controls import TunerControls

START = RewardConfig(
    strategy="per_achievement",
    weights={"collect_wood": 2.0, "colect_stone": 3.0},  # a misspelled name the controls do not cover
    k_limits={"place_table": 2},
    resource_overrides={"inventory": {"wood": 0.5, "unknown_item": 0.2}},
)


def _moves(tuner: Tuner, rng: np.random.Generator, n: int):
    named = tuner.controls.named()
    for name in rng.choice(list(named), size=n):
        control = named[name]
        if isinstance(control, w.Dropdown):
            value = rng.choice(list(control.options))
        elif isinstance(control, w.IntText):
            value = int(rng.integers(0, 4))
        elif rng.random() < 0.3:  # back to where it started (a default drops out of the config)
            value = TunerControls.values_of(RewardConfig(strategy="per_achievement"))[list(named).index(name)]
        else:
            value = round(float(rng.uniform(control.min, control.max)), 2)
        control.value = value
        yield name


def test_each_move_edits_the_config_as_reading_every_control_would(monkeypatch):
    tuner = Tuner(sample_corpus(), START)
    reads = []
    whole = TunerControls.config
    monkeypatch.setattr(TunerControls, "config", lambda self, *a: reads.append(1) or whole(self, *a))
    rng = np.random.default_rng(42)
    for _ in _moves(tuner, rng, 80):
        # The independent computation: the whole config read from every control, as before.
        rebuilt = whole(tuner.controls, tuner.initial, tuner._extra_weights, tuner._extra_limits)
        config = tuner.config
        assert config == rebuilt
        assert list(config.weights) == list(rebuilt.weights) and list(config.k_limits) == list(rebuilt.k_limits)
        assert config.resource_overrides == rebuilt.resource_overrides
        assert config.to_text("x.yaml") == rebuilt.to_text("x.yaml")  # the file saved, byte for byte
    assert reads == []  # no move read every control
    assert tuner.config.weights["colect_stone"] == 3.0  # what the controls do not cover is kept


def test_undo_steps_back_over_configs_and_the_controls_follow():
    tuner = Tuner(sample_corpus(), START)
    first = tuner.config
    sliders = tuner.controls.weight_sliders
    sliders["collect_wood"].value = 4.0
    tuner._last_change = ("", 0.0)  # the next move is a step of its own (not within MERGE_SECONDS)
    tuner.controls.lam.value = 0.5
    second = tuner.config
    assert tuner.history == [first, first.with_changes(weights={**first.weights, "collect_wood": 4.0}), second]
    tuner.undo()
    assert tuner.config == tuner.history[-1] and tuner.config.indicator_lambda == first.indicator_lambda
    assert tuner.controls.lam.value == pytest.approx(first.indicator_lambda) and sliders["collect_wood"].value == 4.0
    tuner.undo()
    assert tuner.config == first and sliders["collect_wood"].value == 2.0
    # Setting config from outside moves the controls there, as one more undo step.
    elsewhere = RewardConfig(strategy="per_achievement", weights={"collect_wood": 6.5})
    tuner.config = elsewhere
    assert sliders["collect_wood"].value == 6.5 and tuner.config.weights == {"collect_wood": 6.5}
    assert tuner.scores.config == tuner.config
    tuner.undo()
    assert tuner.config == first and sliders["collect_wood"].value == 2.0
