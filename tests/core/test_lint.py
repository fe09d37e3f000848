"""Lint: what the task app would silently do with a config (workbench.core.lint)."""

from __future__ import annotations

import copy
import dataclasses
import math

import pytest
from helpers import REPO
from hypothesis import given
from hypothesis import strategies as st

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.core.lint import CODES, Finding, lint

CONFIGS = REPO / "configs"
ACTIVE = RewardConfig(enabled=True, mode="decision_stepwise", strategy="per_achievement", indicator_lambda=1.0)


def _by_key(findings: list[Finding]) -> dict[tuple[str, str], Finding]:
    return {(f.code, f.key): f for f in findings}


def test_upstream_shaped_collect_food_and_k_limits_above_one():
    findings = _by_key(lint(RewardConfig.from_file(CONFIGS / "upstream_shaped.yaml")))
    for table in ("weights", "k_limits"):
        food = findings[("unknown-achievement", f"{table}.collect_food")]
        assert food.level == "error"
        assert food.suggestion == "did you mean eat_cow or eat_plant?"
    for name in ("collect_sapling", "collect_wood", "collect_stone", "collect_iron", "collect_drink"):
        assert findings[("k-limit-above-one", f"k_limits.{name}")].level == "warning"
    # collect_food's k_limit is reported once, as an unknown name.
    assert ("k-limit-above-one", "k_limits.collect_food") not in findings
    assert findings[("uncapped-resource-shaping", "strategy")].level == "info"


def test_upstream_complex_craft_wood_pickaxe():
    findings = _by_key(lint(RewardConfig.from_file(CONFIGS / "upstream_complex.yaml")))
    pickaxe = findings[("unknown-achievement", "weights.craft_wood_pickaxe")]
    assert pickaxe.level == "error" and pickaxe.suggestion == "did you mean make_wood_pickaxe?"
    assert "ignores" in pickaxe.message
    assert ("unknown-achievement", "k_limits.craft_wood_pickaxe") in findings
    assert ("k-limit-above-one", "k_limits.collect_diamond") in findings
    assert ("k-limit-above-one", "k_limits.collect_sapling") not in findings  # 1 is the default


def test_recommended_lints_clean_and_the_default_has_nothing_to_say():
    recommended = lint(RewardConfig.from_file(CONFIGS / "recommended.yaml"))
    assert [f for f in recommended if f.level != "info"] == []
    assert lint(RewardConfig.from_file(CONFIGS / "consistent.yaml")) == []


def test_recommended_pays_every_achievement_and_harder_ones_more():
    config = RewardConfig.from_file(CONFIGS / "recommended.yaml")
    assert set(config.weights) == set(ACHIEVEMENTS)
    assert config.weights["collect_diamond"] > config.weights["make_iron_pickaxe"] > config.weights["collect_stone"]
    assert config.weights["collect_stone"] > config.weights["place_table"] > config.weights["collect_wood"]
    assert not config.k_limits


CASES = [
    (
        ACTIVE.with_changes(weights={"collect_wod": 1.0}),
        "unknown-achievement",
        "weights.collect_wod",
        "did you mean collect_wood?",
    ),
    (ACTIVE.with_changes(k_limits={"xyzzy": 1}), "unknown-achievement", "k_limits.xyzzy", None),
    (ACTIVE.with_changes(strategy="per_achievment"), "unknown-strategy", "strategy", "did you mean per_achievement?"),
    (ACTIVE.with_changes(strategy=None), "unknown-strategy", "strategy", "write consistent or per_achievement"),
    (ACTIVE.with_changes(strategy="complex"), "strategy-alias", "strategy", "write per_achievement to say what runs"),
    (ACTIVE.with_changes(weights={"collect_wood": math.nan}), "not-finite", "weights.collect_wood", None),
    (ACTIVE.with_changes(indicator_lambda=math.inf), "not-finite", "indicator_lambda", None),
    (
        ACTIVE.with_changes(resource_overrides={"inventory": {"wood": math.inf}}),
        "not-finite",
        "resource_weights.inventory.wood",
        None,
    ),
    (ACTIVE.with_changes(enabled=False), "shaping-disabled", "enabled", "set enabled: true to train with it"),
    (ACTIVE.with_changes(mode="decision-stepwise"), "shaping-mode-off", "mode", "did you mean decision_stepwise?"),
    (ACTIVE.with_changes(mode="off"), "shaping-mode-off", "mode", "set mode: decision_stepwise to train with it"),
    (
        ACTIVE.with_changes(strategy="consistent", weights={"collect_wood": 2.0}),
        "ignored-by-consistent",
        "weights",
        "set strategy: per_achievement to use them",
    ),
    (
        ACTIVE.with_changes(strategy="simple", k_limits={"collect_wood": 0}),
        "ignored-by-consistent",
        "k_limits",
        "set strategy: per_achievement to use them",
    ),
    (
        ACTIVE.with_changes(k_limits={"collect_wood": 2}),
        "k-limit-above-one",
        "k_limits.collect_wood",
        "remove it: 1 is the default",
    ),
    (
        ACTIVE.with_changes(k_limits={"place_table": 0}),
        "k-limit-unlimited",
        "k_limits.place_table",
        "to stop paying for place_table set its weight to 0; otherwise remove the limit",
    ),
    (ACTIVE.with_changes(k_limits={"place_table": -1}), "k-limit-unlimited", "k_limits.place_table", None),
    (ACTIVE.with_changes(indicator_lambda=0.0), "lambda-zero", "indicator_lambda", None),
    (ACTIVE.with_changes(indicator_lambda=-1.0), "negative-lambda", "indicator_lambda", None),
    (
        ACTIVE.with_changes(weights={"eat_cow": -0.5}),
        "negative-weight",
        "weights.eat_cow",
        "use 0 to stop paying for it",
    ),
    (
        ACTIVE.with_changes(resource_overrides={"inventory_default": 0.0}),
        "resource-overrides-not-exported",
        "resource_weights",
        None,
    ),
    (ACTIVE, "uncapped-resource-shaping", "strategy", None),
    (ACTIVE.with_changes(step_beta=0.1), "step-beta-unused", "step_beta", None),
]


@pytest.mark.parametrize("config,code,key,suggestion", CASES, ids=[f"{c}:{k}" for _, c, k, _ in CASES])
def test_each_finding(config, code, key, suggestion):
    found = _by_key(lint(config))[(code, key)]
    assert found.level == CODES[code]
    assert found.message
    if suggestion is not None:
        assert found.suggestion == suggestion


def test_every_code_is_tested_and_levels_are_as_documented():
    assert {code for _, code, _, _ in CASES} == set(CODES)
    assert {code for code, level in CODES.items() if level == "error"} == {
        "unknown-achievement",
        "unknown-strategy",
        "not-finite",
    }


def test_an_empty_table_is_off_with_lambda_zero():
    codes = {f.code for f in lint(RewardConfig.from_dict({}))}
    assert {"shaping-disabled", "shaping-mode-off", "lambda-zero"} <= codes


def test_lambda_zero_says_it_is_not_off():
    (finding,) = [f for f in lint(ACTIVE.with_changes(indicator_lambda=0)) if f.code == "lambda-zero"]
    assert "1.0" in finding.message and "not switch shaping off" in finding.message


def test_errors_come_first():
    findings = lint(RewardConfig.from_file(CONFIGS / "upstream_shaped.yaml"))
    levels = [f.level for f in findings]
    assert levels == sorted(levels, key=["error", "warning", "info"].index)


def test_finding_is_frozen_and_prints_one_line():
    finding = Finding("unknown-strategy", "error", "strategy", "bad", "did you mean per_achievement?")
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.level = "info"  # type: ignore[misc]
    assert str(finding) == "error unknown-strategy strategy: bad (did you mean per_achievement?)"
    assert str(Finding("lambda-zero", "warning", "indicator_lambda", "m")) == "warning lambda-zero indicator_lambda: m"


def _snapshot(config: RewardConfig) -> str:
    return repr(copy.deepcopy(dataclasses.asdict(config)))


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.yaml")), ids=lambda p: p.stem)
def test_lint_does_not_mutate_shipped_configs(path):
    config = RewardConfig.from_file(path)
    before, weights, limits = _snapshot(config), config.weights, config.k_limits
    lint(config)
    assert _snapshot(config) == before
    assert config.weights is weights and config.k_limits is limits


@given(
    st.dictionaries(st.sampled_from(ACHIEVEMENTS) | st.text(max_size=8), st.floats(), max_size=5),
    st.dictionaries(st.sampled_from(ACHIEVEMENTS) | st.text(max_size=8), st.integers(-3, 5), max_size=5),
    st.sampled_from(["consistent", "per_achievement", "complex", "per_achievment", "", "x"]),
    st.floats(),
    st.booleans(),
)
def test_lint_never_mutates_and_never_raises(weights, limits, strategy, lam, enabled):
    config = RewardConfig(enabled=enabled, strategy=strategy, weights=weights, k_limits=limits, indicator_lambda=lam)
    before = _snapshot(config)
    findings = lint(config)
    assert _snapshot(config) == before
    assert all(f.level == CODES[f.code] for f in findings)
