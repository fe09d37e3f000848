"""workbench.analysis.diagnostics: farming against hand-counted episodes, dominance, dead entries on the
shipped configs, alignment's stratified bootstrap, and the sensitivity intervals against brute force."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from helpers import REPO
from helpers.hand_episodes import HONEST, hand_episode
from helpers.reference import episode_pay
from matplotlib.figure import Figure

from workbench.analysis.alignment import misranked_pairs
from workbench.analysis.diagnostics import TABLES, Diagnosis, diagnose
from workbench.analysis.diagnostics.rank_intervals import progress_measures
from workbench.analysis.rankstats import bootstrap_interval, kendall_tau, spearman_rho
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus
from workbench.errors import DiagnosisError, WorkbenchError
from workbench.scoring import crafter_score, score

SHAPED = RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml")
COMPLEX = RewardConfig.from_file(REPO / "configs" / "upstream_complex.yaml")
CONSISTENT = RewardConfig(enabled=True, mode="decision_stepwise", strategy="consistent")


@pytest.fixture(scope="module")
def sample() -> Corpus:
    return sample_corpus()


@pytest.fixture(scope="module")
def shaped(sample) -> Diagnosis:
    return diagnose(sample, SHAPED)


# -- hand-made episodes --------------------------------------------------------------------------
#: Ten laps of mine a stone, place it.
FARMER = [
    change for lap in range(1, 11) for change in ({"stone": 1, "collect_stone": lap}, {"stone": 0, "place_stone": lap})
]


@pytest.fixture(scope="module")
def hand() -> Diagnosis:
    corpus = Corpus(
        [
            hand_episode("honest", HONEST, policy="honest"),
            hand_episode("farmer", FARMER, policy="farmer"),
            hand_episode("text", HONEST, policy="honest", counts=False),
        ]
    )
    return diagnose(corpus, SHAPED, reps=200)


def test_farming_matches_hand_counted_episodes(hand):
    # upstream_shaped: lambda 0.5; credits collect_wood 0.8, collect_stone 1.0, collect_drink 0.4,
    # place_stone 1.0 (default); the task app's resource weights: stone 0.15, wood 0.10, drink 0.07,
    # collect_stone count 0.10, collect_wood 0.08, collect_drink 0.06, place_stone 0.05 (default).
    episodes = hand.farming_episodes.set_index("episode")
    honest = episodes.loc["honest"]
    assert honest["credits"] == pytest.approx(0.5 * (0.8 + 1.0 + 1.0 + 0.4))
    assert honest["resource"] == pytest.approx(0.5 * (0.10 + 0.08 + 3 * (0.15 + 0.10) + 2 * 0.05 + 0.07 + 0.06))
    assert honest["repeats"] == pytest.approx(0.5 * (2 * 0.15 + 2 * 0.10 + 1 * 0.05))
    assert honest["return"] == pytest.approx(2.18)
    assert honest["first_time"] == pytest.approx(honest["resource"] - honest["repeats"])
    assert honest["repeat_share"] == pytest.approx(0.275 / 2.18)
    assert not honest["flagged"]

    events = hand.farming[hand.farming["episode"] == "honest"].set_index(["kind", "name"])
    stone = events.loc[("inventory", "stone")]
    assert (stone["times_paid"], stone["units"]) == (3, 3)
    assert (stone["paid"], stone["first_paid"], stone["repeat_paid"]) == pytest.approx((0.225, 0.075, 0.15))
    assert events.loc[("achievement_count", "collect_stone"), "times_paid"] == 3
    assert events.loc[("achievement_count", "place_stone"), "repeat_paid"] == pytest.approx(0.025)
    assert events.loc[("inventory", "drink"), "times_paid"] == 1  # the fall to 8 pays nothing, the rise once
    assert list(events.index[:2]) == [
        ("inventory", "stone"),
        ("achievement_count", "collect_stone"),
    ]  # most repeated first

    farmer = episodes.loc["farmer"]
    assert farmer["credits"] == pytest.approx(0.5 * 2.0)
    assert farmer["repeats"] == pytest.approx(0.5 * 9 * (0.15 + 0.10 + 0.05))
    assert farmer["flagged"] and farmer["repeats"] > farmer["credits"]
    flag = hand.flags[hand.flags["subject"] == "farmer"].iloc[0]
    assert flag["code"] == "repeats-outweigh-credits"
    assert "stone rose 10 times (0.6" in flag["why"] and "the place_stone count rose 10 times" in flag["why"]
    assert "more than its achievement credits" in flag["why"]


def test_cycles_count_laps_and_their_pay(hand):
    cycles = hand.cycles.set_index(["episode", "cycle"])
    honest = cycles.loc[("honest", "stone: collect_stone / place_stone")]
    assert (honest["gathered"], honest["spent"], honest["laps"]) == (3, 2, 2)
    assert honest["pay_per_lap"] == pytest.approx(0.5 * (0.15 + 0.10 + 0.05))
    assert honest["lap_paid"] == pytest.approx(0.3)
    farmer = cycles.loc[("farmer", "stone: collect_stone / place_stone")]
    assert farmer["laps"] == 10 and farmer["share_of_return"] == pytest.approx(1.5 / 2.5)
    assert cycles.loc[("farmer", "sapling: collect_sapling / place_plant"), "laps"] == 0
    assert list(hand.cycles.columns[:3]) == ["episode", "policy", "cycle"]


def test_estimated_counts_are_labelled(hand):
    text = hand.farming[hand.farming["episode"] == "text"]
    assert (text["counts"] == "estimated").all()
    assert text["estimated"].tolist() == (text["kind"] == "achievement_count").tolist()
    assert not hand.farming.loc[hand.farming["episode"] != "text", "estimated"].any()
    # Counts derived from the status rise once: collect_stone's count shaping pays once, not 3 times.
    assert text.set_index(["kind", "name"]).loc[("achievement_count", "collect_stone"), "times_paid"] == 1
    assert hand.estimated_episodes == ["text"]
    assert hand.cycles.loc[hand.cycles["episode"] == "text", "estimated"].all()
    # The honest episode's 2.18 less the count shaping the text cannot show: collect_stone's count
    # pays once, not 3 times (2 x 0.10), place_stone's once, not twice (0.05); after lambda 0.5.
    assert hand.farming_episodes.set_index("episode").loc["text", "return"] == pytest.approx(
        2.18 - 0.5 * (2 * 0.10 + 0.05)
    )


def test_farming_parts_add_up_to_the_return(sample, shaped):
    table = shaped.farming_episodes
    assert np.allclose(table["credits"] + table["resource"], table["return"], atol=1e-9)
    assert np.allclose(table["first_time"] + table["repeats"], table["resource"], atol=1e-9)
    per_event = shaped.farming.groupby("episode", sort=False)["repeat_paid"].sum()
    assert np.allclose(table.set_index("episode")["repeats"], per_event.reindex(table["episode"]).to_numpy())
    # Flagged: the episodes whose loop pay outweighs their credits, by the task app's function
    # decision by decision (helpers.reference); the sample's farmers' loops are among them.
    pays = {episode.id: episode_pay(episode, SHAPED) for episode in sample}
    expected = sorted(e for e, pay in pays.items() if abs(pay.loops) > abs(pay.credits))
    assert sorted(table.loc[table["flagged"], "episode"]) == expected
    assert expected and all(e.startswith("farmer") for e in expected)
    assert np.allclose(table["loop_paid"], [pays[e].loops for e in table["episode"]], atol=1e-9)


def test_dominance_shares_per_policy(sample, shaped):
    components = score(sample, SHAPED).components
    policy = components["episode"].astype(str).map(sample.groups("policy"))
    magnitude = components["scaled"].abs().groupby([policy, components["kind"].astype(str)]).sum()
    expected = magnitude / magnitude.groupby(level=0).transform("sum")
    table = shaped.dominance_by_kind.set_index(["policy", "kind"])["share"]
    assert np.allclose(table.sort_index(), expected.sort_index())
    names = shaped.dominance.groupby("policy")["share"].sum()
    assert np.allclose(names, 1.0)
    flagged = shaped.dominance_by_kind[shaped.dominance_by_kind["flagged"]]
    assert set(flagged["policy"]) == {"farmer"} and set(flagged["kind"]) == {"inventory", "achievement_count"}
    flag = shaped.flags[shaped.flags["code"] == "resource-shaping-dominates"]
    assert flag["subject"].tolist() == ["policy farmer"] and "past the 50% threshold" in flag["why"].iloc[0]
    # A lower threshold also flags the scripted policy (its resource share is about 46%).
    lower = diagnose(sample, SHAPED, dominance_threshold=0.4, reps=50)
    assert set(lower.dominance_by_kind.loc[lower.dominance_by_kind["flagged"], "policy"]) == {"farmer", "scripted"}


# -- dead entries ---------------------------------------------------------------------------------
NEVER_PRODUCED = {f"resource_weights.inventory.{n}" for n in ("plant", "meat", "water", "furnace", "table", "bow")} | {
    "resource_weights.achievement_counts.collect_food",
    "resource_weights.achievement_counts.collect_plant",
}


def dead(diagnosis: Diagnosis) -> dict[str, str]:
    return dict(zip(diagnosis.dead_entries["key"], diagnosis.dead_entries["code"]))


def test_dead_entries_of_upstream_shaped(shaped):
    expected = {
        "weights.collect_food": "unknown-achievement",
        "k_limits.collect_food": "unknown-achievement",
        **{
            f"k_limits.{n}": "k-limit-above-one"
            for n in ("collect_sapling", "collect_wood", "collect_stone", "collect_iron", "collect_drink")
        },
        **{key: "never-produced" for key in NEVER_PRODUCED},
    }
    assert dead(shaped) == expected
    assert set(shaped.dead_entries["judged"]) == {"config"}
    why = shaped.dead_entries.set_index("key")["why"]
    assert "did you mean eat_cow or eat_plant?" in why["weights.collect_food"]
    assert "drinking water raises drink" in why["resource_weights.inventory.water"]
    assert "eat_cow or eat_plant count" in why["resource_weights.achievement_counts.collect_food"]
    assert (shaped.flags["section"] == "dead entries").sum() == len(expected)


def test_dead_entries_of_upstream_complex(sample):
    diagnosis = diagnose(sample, COMPLEX, reps=50)
    expected = {
        "weights.craft_wood_pickaxe": "unknown-achievement",
        "k_limits.craft_wood_pickaxe": "unknown-achievement",
        "k_limits.collect_diamond": "k-limit-above-one",
        "k_limits.collect_sapling": "k-limit-default",
        "weights.collect_diamond": "weight-not-unlocked",  # no sample episode finds a diamond
        **{key: "never-produced" for key in NEVER_PRODUCED},
    }
    assert dead(diagnosis) == expected
    judged = diagnosis.dead_entries.set_index("key")["judged"]
    assert judged["weights.collect_diamond"] == "cannot judge here"
    assert (
        "did you mean make_wood_pickaxe?"
        in diagnosis.dead_entries.set_index("key").loc["weights.craft_wood_pickaxe", "why"]
    )


@pytest.mark.parametrize("config", [SHAPED, COMPLEX], ids=["upstream_shaped", "upstream_complex"])
def test_dead_entries_really_change_no_return(sample, config):
    """Change each dead entry wildly: no episode's return moves."""
    before = score(sample, config).reward_sum
    for key in diagnose(sample, config, reps=20).dead_entries["key"]:
        table, _, name = key.partition(".")
        if table == "weights":
            changed = config.with_changes(weights={**config.weights, name: 100.0})
        elif table == "k_limits":
            changed = config.with_changes(k_limits={**config.k_limits, name: 0})
        else:
            resource_table, _, item = name.partition(".")
            changed = config.with_changes(resource_overrides={resource_table: {item: 10.0}})
        assert np.array_equal(score(sample, changed).reward_sum, before), key


def test_dead_resource_overrides_and_consistent(sample):
    overrides = SHAPED.with_changes(resource_overrides={"inventory": {"bow": 2.0, "diamond": 3.0, "stone": 0.2}})
    table = diagnose(sample, overrides, reps=20).dead_entries.set_index("key")
    assert table.loc["resource_weights.inventory.bow", "code"] == "never-produced"
    assert "this config's override pays 2" in table.loc["resource_weights.inventory.bow", "why"]
    assert table.loc["resource_weights.inventory.diamond", "code"] == "resource-not-raised"
    assert table.loc["resource_weights.inventory.diamond", "judged"] == "cannot judge here"
    assert "resource_weights.inventory.stone" not in table.index  # raised, and it pays
    consistent = CONSISTENT.with_changes(weights={"collect_wood": 2.0}, k_limits={"collect_wood": 1})
    table = diagnose(sample, consistent, reps=20).dead_entries.set_index("key")
    assert table.loc["weights", "code"] == table.loc["k_limits", "code"] == "ignored-by-consistent"


# -- alignment -----------------------------------------------------------------------------------
def test_alignment_intervals_are_the_stratified_bootstrap(sample, shaped):
    episodes = score(sample, SHAPED).episodes
    returns, achievements = episodes["reward_sum"].to_numpy(), episodes["unique_achievements_total"].to_numpy()
    policies = episodes["episode"].map(sample.groups("policy")).to_numpy()
    table = shaped.alignment.set_index(["progress", "statistic"])
    for statistic, function in (("kendall", kendall_tau), ("spearman", spearman_rho)):
        row = table.loc[("achievements", statistic)]
        expected = bootstrap_interval(function, [returns, achievements], policies, reps=1000, seed=0)
        assert (row["estimate"], row["low"], row["high"]) == expected
        # Not the plain bootstrap: resampling across policies gives another interval.
        assert (row["low"], row["high"]) != bootstrap_interval(
            function, [returns, achievements], None, reps=1000, seed=0
        )[1:]
    assert table.loc[("achievements", "spearman"), "estimate"] == pytest.approx(0.9725, abs=1e-4)
    assert table.loc[("achievements", "kendall"), "low"] <= table.loc[("achievements", "kendall"), "estimate"]
    assert set(shaped.alignment["strata"]) == {"policy"} and set(shaped.alignment["reps"]) == {1000}
    assert shaped.misranked.iloc[0][["paid_more", "policy_paid_more", "policy_progressed_more"]].tolist() == [
        "farmer-s2024-00001",
        "farmer",
        "scripted",
    ]


def test_crafter_score_progress_is_each_episodes_contribution(sample):
    measures = progress_measures(score(sample, SHAPED))
    whole = crafter_score(sample)
    for position, episode in enumerate(sample.ids[:4] + sample.ids[-2:]):
        without = Corpus([sample[e] for e in sample.ids if e != episode])
        assert measures["crafter_score"].iloc[position if position < 4 else position + 4] == pytest.approx(
            whole - crafter_score(without), abs=1e-9
        )
    assert math.isnan(progress_measures(score(Corpus([sample[0]]), SHAPED))["crafter_score"].iloc[0])


def test_misranked_flag_names_a_fix_that_works(sample, shaped):
    flag = shaped.flags[shaped.flags["code"] == "misranked-pairs"].iloc[0]
    assert flag["subject"] == "farmer-s2024-00001 / scripted-s2024-00000"
    # The scripted episode defeated a skeleton and the farmer did not, so each unit of that weight
    # pays the scripted one lambda more: the gap in returns (plain loops) over lambda closes it.
    farmer, scripted = sample["farmer-s2024-00001"], sample["scripted-s2024-00000"]
    assert "defeat_skeleton" in scripted.unlocked and "defeat_skeleton" not in farmer.unlocked
    gap = sum(episode_pay(farmer, SHAPED).rewards) - sum(episode_pay(scripted, SHAPED).rewards)
    change = gap / SHAPED.indicator_lambda
    assert f"raising weights.defeat_skeleton from 1 past {1 + change:.4g} ({change:+.4g})" in flag["why"]
    fixed = score(sample, SHAPED.with_changes(weights={**SHAPED.weights, "defeat_skeleton": 2.12}))
    assert misranked_pairs(fixed).empty


# -- sensitivity against brute force ---------------------------------------------------------------
def order(returns: np.ndarray) -> np.ndarray:
    """The ranking of episodes as pairwise signs (ties within float noise count as ties)."""
    difference = returns[:, None] - returns[None, :]
    return np.where(np.abs(difference) < 1e-10, 0, np.sign(difference))


def rescored(corpus: Corpus, config: RewardConfig, name: str, weight: float) -> np.ndarray:
    return score(corpus, config.with_changes(weights={**config.weights, name: weight})).reward_sum


def check_intervals(corpus: Corpus, config: RewardConfig) -> int:
    """Re-score inside, at and outside every bound; returns how many finite bounds were checked."""
    table = diagnose(corpus, config, reps=20).sensitivity
    ids = list(score(corpus, config).episodes["episode"])
    now = order(score(corpus, config).reward_sum)
    checked = 0
    for row in table.itertuples(index=False):
        for bound, pair, side in ((row.low, row.low_pair, -1), (row.high, row.high_pair, +1)):
            if math.isinf(bound):
                assert np.array_equal(order(rescored(corpus, config, row.achievement, row.weight + side * 1e3)), now)
                continue
            step = 1e-6 * max(1.0, abs(bound))
            if bound != row.weight:  # inside, near the bound and half way
                for inside in (bound - side * step, (bound + row.weight) / 2):
                    assert np.array_equal(order(rescored(corpus, config, row.achievement, inside)), now), (row, inside)
            assert not np.array_equal(order(rescored(corpus, config, row.achievement, bound + side * step)), now)
            a, b = (ids.index(e) for e in pair.split(" / "))
            at = rescored(corpus, config, row.achievement, bound)
            assert at[a] == pytest.approx(at[b], abs=1e-9), (row.achievement, pair)  # the named pair ties at the bound
            checked += 1
    return checked


def test_sensitivity_intervals_against_brute_force(sample):
    assert check_intervals(sample, SHAPED) >= 20
    assert check_intervals(sample, COMPLEX.with_changes(indicator_lambda=-0.5)) >= 20  # slopes change sign


def test_sensitivity_fix_against_brute_force(sample, shaped):
    table = shaped.sensitivity.dropna(subset=["fix_change"])
    assert len(table) >= 5
    ids = list(shaped.scores.episodes["episode"])
    paid, progressed = (ids.index(e) for e in shaped.sensitivity.attrs["worst_pair"])
    for row in table.itertuples(index=False):
        side = np.sign(row.fix_change)
        past = rescored(sample, SHAPED, row.achievement, row.fix_weight + side * 1e-6)
        before = rescored(sample, SHAPED, row.achievement, row.fix_weight - side * 1e-6)
        assert past[progressed] > past[paid] and before[progressed] < before[paid]
        assert row.misranked_after_fix == len(
            misranked_pairs(
                score(
                    sample,
                    SHAPED.with_changes(weights={**SHAPED.weights, row.achievement: row.fix_weight + side * 1e-6}),
                )
            )
        )


def test_sensitivity_of_a_tie_and_of_consistent():
    # Two episodes tie exactly (0.5 credit + 0.25 resource each) but on different achievements:
    # any move of either weight breaks the tie, so the interval is the weight itself.
    config = RewardConfig(
        strategy="per_achievement",
        weights={"collect_wood": 0.5, "collect_sapling": 0.5},
        resource_overrides={
            "inventory": {"wood": 0.25, "sapling": 0.25},
            "achievement_count_default": 0.0,
            "achievement_counts": {"collect_wood": 0.0, "collect_sapling": 0.0},
        },
    )
    corpus = Corpus(
        [
            hand_episode("wood", [{"wood": 1, "collect_wood": 1}], policy="a"),
            hand_episode("sapling", [{"sapling": 1, "collect_sapling": 1}], policy="b"),
        ]
    )
    table = diagnose(corpus, config, reps=20).sensitivity.set_index("achievement")
    assert score(corpus, config).reward_sum.tolist() == [0.75, 0.75]
    assert table.loc["collect_wood", "low"] == table.loc["collect_wood", "high"] == 0.5
    assert table.loc["collect_wood", "high_pair"] == "wood / sapling"
    assert math.isinf(table.loc["eat_cow", "low"]) and math.isinf(table.loc["eat_cow", "high"])
    consistent = diagnose(sample_corpus(), CONSISTENT, reps=20)
    assert consistent.sensitivity[["low", "high"]].abs().eq(np.inf).all().all()
    assert consistent.sensitivity["fix_change"].isna().all()
    assert "consistent pays no per-achievement credits" in consistent.sensitivity.attrs["note"]
    assert consistent.farming.empty and (consistent.cycles["pay_per_lap"] == 0).all()


# -- the whole diagnosis ---------------------------------------------------------------------------
def test_diagnosis_tables_flags_and_figure(shaped):
    tables = shaped.tables()
    assert list(tables) == list(TABLES)
    assert all(isinstance(t, pd.DataFrame) for t in tables.values())
    assert list(shaped.flags.columns) == ["section", "code", "subject", "why"]
    assert shaped.flags["why"].str.len().min() > 40  # every flag says why
    assert list(shaped.flags["section"].drop_duplicates()) == ["farming", "dominance", "alignment", "dead entries"]
    from workbench.views.plots.diagnostics import diagnosis_figure

    fig = diagnosis_figure(shaped)
    assert isinstance(fig, Figure) and len(fig.axes) == 6
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0].startswith("Farming") and titles[-1].startswith(
        "Flags (19"
    )  # 1 farming, 2 dominance, 1 alignment, 15 dead


def test_diagnose_errors(sample):
    with pytest.raises(DiagnosisError, match="no corpus index column 'team'"):
        diagnose(sample, SHAPED, by="team")
    with pytest.raises(DiagnosisError, match="empty corpus"):
        diagnose(Corpus([]), SHAPED)
    # The range is 1 .. MAX_REPS (10**6, one float per replicate): both ends are named.
    with pytest.raises(DiagnosisError, match=r"reps must be from 1 to 1000000, not 0$"):
        diagnose(sample, SHAPED, reps=0)
    with pytest.raises(DiagnosisError, match=r"reps must be from 1 to 1000000, not 1000001$"):
        diagnose(sample, SHAPED, reps=10**6 + 1)
    with pytest.raises(DiagnosisError, match="confidence must be between 0 and 1"):
        diagnose(sample, SHAPED, confidence=1.5)
    with pytest.raises(DiagnosisError, match="choose from"):
        diagnose(sample, SHAPED, progress=("depth",))
    with pytest.raises(DiagnosisError, match="scores: pass score"):
        diagnose(sample, SHAPED, scores=score(sample, COMPLEX))
    assert diagnose(sample, SHAPED, scores=score(sample, SHAPED), reps=20).scores.config == SHAPED
    assert issubclass(DiagnosisError, WorkbenchError)
    only = diagnose(sample, SHAPED, progress=("achievements",), reps=30)
    assert set(only.alignment["progress"]) == {"achievements"}
