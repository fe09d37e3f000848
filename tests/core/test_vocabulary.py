"""The shared vocabulary: component kinds and their labels, and the named starting configs."""

from __future__ import annotations

import pytest
from helpers import REPO
from helpers.hand_episodes import hand_episode

from workbench.core.components import KIND_LABELS, KIND_SHORT_LABELS, KINDS, PAY_PARTS, RESOURCE_KINDS, component_label
from workbench.core.config import RewardConfig
from workbench.core.named_configs import (
    CONSISTENT_CONFIG,
    NAMED_CONFIGS,
    PER_ACHIEVEMENT_CONFIG,
    TASK_APP_DEFAULT,
    load_config,
)
from workbench.data.episodes import Corpus
from workbench.errors import ConfigError
from workbench.scoring import KIND_COLUMNS, score

#: Two decisions by hand: the first gets wood (collect_wood unlocks), the second stone (collect_stone).
TWO_UNLOCKS = [{"wood": 1, "collect_wood": 1}, {"stone": 1, "collect_stone": 1}]


def test_every_kind_has_one_label_and_the_resource_kinds_are_two_of_them():
    assert set(KIND_LABELS) == set(KINDS)
    assert len(set(KIND_LABELS.values())) == len(KINDS)
    assert set(RESOURCE_KINDS) == {"inventory", "achievement_count"}
    assert KIND_COLUMNS == {kind: f"reward_{kind}" for kind in KINDS}


def test_a_component_reads_as_its_name_and_its_kinds_label():
    assert component_label("inventory", "stone") == "stone (inventory shaping)"
    assert component_label("achievement", "collect_wood") == "collect_wood (achievement credits)"
    assert component_label("achievement_count", "place_stone") == "place_stone (achievement-count shaping)"
    # The indicator's name is internal: it reads as its kind alone.
    assert component_label("indicator", "__indicator__") == "indicator (consistent)"
    # the one-word labels (the certificate figure's bars) name every kind, distinctly
    assert set(KIND_SHORT_LABELS) == set(KINDS) and len(set(KIND_SHORT_LABELS.values())) == len(KINDS)
    assert component_label("inventory", "stone", short=True) == "stone (item)"
    assert component_label("achievement", "collect_wood", short=True) == "collect_wood (credit)"
    assert component_label("indicator", "__indicator__", short=True) == "indicator"
    # the learner's three parts: the credit part, then the resource kinds
    assert PAY_PARTS == ("credit", "inventory", "achievement_count")


def test_the_task_app_default_is_no_shaping_as_an_empty_table_reads():
    config = TASK_APP_DEFAULT.config
    assert config == RewardConfig.from_dict({})
    assert not config.active
    assert (config.enabled, config.effective_mode) == (False, "off")


def test_consistent_is_what_the_shipped_file_and_the_field_defaults_say():
    config = CONSISTENT_CONFIG.config
    assert config.active and config.effective_strategy == "consistent" and config.effective_lambda == 1.0
    assert config == RewardConfig() == RewardConfig.from_file(REPO / "configs" / "consistent.yaml")


def test_the_named_configs_pay_what_reward_md_says_on_a_hand_episode():
    corpus = Corpus([hand_episode("hand", TWO_UNLOCKS, policy="hand")])
    # consistent: 1.0 per decision that unlocks, so 1.0 and 1.0.
    assert score(corpus, CONSISTENT_CONFIG.config).decisions["reward"].tolist() == [1.0, 1.0]
    # per_achievement, weight 1: credit 1.0 + wood 0.10 + collect_wood count 0.08 = 1.18, then
    # credit 1.0 + stone 0.15 + collect_stone count 0.10 = 1.25.
    rewards = score(corpus, PER_ACHIEVEMENT_CONFIG.config).decisions["reward"].tolist()
    assert rewards == pytest.approx([1.18, 1.25], abs=1e-12)


def test_a_config_is_read_by_name_or_by_file():
    assert set(NAMED_CONFIGS) == {"task_app_default", "consistent", "per_achievement"}
    for name, named in NAMED_CONFIGS.items():
        assert load_config(name) is named.config
    shaped = REPO / "configs" / "upstream_shaped.yaml"
    assert load_config(shaped) == RewardConfig.from_file(shaped)
    with pytest.raises(ConfigError, match="neither a config file"):
        load_config("recommended")  # a file's stem is not a name
