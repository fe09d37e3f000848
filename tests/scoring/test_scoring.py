"""``workbench.scoring`` against the reference loop (``episode_reward.score_episode``), and its other tools.

Parity is checked decision by decision and component by component on the task app's vector
episodes, on generated corpora (statuses that go true -> false -> true, negative weights, every
kind of k-limit and lambda, resource overrides) and on real recorded Crafter episodes.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from helpers import REPO, VECTORS, read_jsonl
from helpers.reference import progress_agreement
from helpers.rollouts import play_rollout, raw_variant, write_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from workbench.analysis.alignment import misranked_pairs
from workbench.cli import main
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, ACTIONS, INVENTORY_ITEMS
from workbench.core.episode_reward import score_episode
from workbench.core.reward import INDICATOR_COMPONENT_NAME
from workbench.data.episodes import Corpus, Episode
from workbench.data.importers import import_rollouts
from workbench.data.sample import sample_corpus
from workbench.data.storage import load_corpus
from workbench.errors import CorpusError
from workbench.scoring import (
    Scores,
    compare,
    crafter_score,
    prepare,
    score,
    success_rates,
    verify_logged,
)

VECTOR_EPISODES = read_jsonl(VECTORS / "episodes.jsonl")
VECTOR_CONFIGS = VECTOR_EPISODES[0]["configs"]
TOLERANCE = 1e-12
COMPONENT_COLUMNS = [
    "episode",
    "decision",
    "kind",
    "name",
    "delta",
    "weight",
    "count_prior",
    "count_limit",
    "reward",
    "scaled",
]


def vector_corpus() -> Corpus:
    return Corpus(
        Episode.from_states(case["case"], case["states"], [[ACTIONS[a] for a in d] for d in case["actions"]])
        for case in VECTOR_EPISODES
    )


# -- the reference, in the same tidy form -----------------------------------------------------
def reference(corpus: Corpus, config: RewardConfig) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, dict]]:
    """Decisions, components and summaries of ``episode_reward.score_episode`` on every episode."""
    lam = config.effective_lambda
    decisions, components, summaries = [], [], {}
    for episode in corpus:
        result = score_episode(episode.states(), config, episode.actions)
        summaries[episode.id] = result.summary
        for d in result.decisions:
            info, stats = d.stepwise_info, d.stats
            decisions.append(
                {
                    "episode": episode.id,
                    "decision": info["decision_index"],
                    "reward": stats["reward"],
                    "base": stats["base_reward"],
                    "indicator": info["indicator"],
                    "resource_reward": stats.get("resource_reward", 0.0),
                    "new_achievements": len(info["new_achievements"]),
                    "credited": len(info.get("credited_achievements", [])),
                    "unique_new": d.decision_rewards["unique_delta"],
                }
            )
            for c in info.get("components", []):
                components.append({"episode": episode.id, "decision": info["decision_index"], **_tidy(c, lam)})
    return pd.DataFrame(decisions), pd.DataFrame(components, columns=COMPONENT_COLUMNS), summaries


def _tidy(component: dict, lam: float) -> dict:
    """One task-app component dict as a row of ``Scores.components``."""
    if "achievement" in component:
        indicator = component["achievement"] == INDICATOR_COMPONENT_NAME
        reward = component["weight"]
        return {
            "kind": "indicator" if indicator else "achievement",
            "name": component["achievement"],
            "delta": 1,
            "weight": component["weight"],
            "count_prior": component["count_prior"],
            "count_limit": component["count_limit"],
            "reward": reward,
            "scaled": lam * reward,
        }
    name = component["item"] if component["type"] == "inventory" else component["name"]
    return {
        "kind": component["type"],
        "name": name,
        "delta": component["delta"],
        "weight": component["weight"],
        "count_prior": pd.NA,
        "count_limit": pd.NA,
        "reward": component["reward"],
        "scaled": lam * component["reward"],
    }


def assert_parity(corpus: Corpus, config: RewardConfig, scores: Scores | None = None) -> None:
    """Every decision, component and summary of ``score`` equals the reference's."""
    scores = scores or score(corpus, config)
    want_decisions, want_components, summaries = reference(corpus, config)
    got = scores.decisions
    assert got["episode"].astype(str).tolist() == want_decisions["episode"].tolist()
    for column in ("decision", "indicator", "new_achievements", "credited", "unique_new"):
        assert got[column].tolist() == want_decisions[column].tolist(), column
    for column in ("reward", "base", "resource_reward"):
        np.testing.assert_allclose(got[column], want_decisions[column], rtol=0, atol=TOLERANCE, err_msg=column)
    # Same zeros too: a decision that paid nothing under a negative lambda is -0.0 in the task app.
    np.testing.assert_array_equal(np.signbit(got["reward"]), np.signbit(want_decisions["reward"].to_numpy(float)))

    components = scores.components
    assert len(components) == len(want_components)
    for column in ("episode", "kind", "name"):
        assert components[column].astype(str).tolist() == want_components[column].astype(str).tolist(), column
    for column in ("decision", "delta", "count_prior", "count_limit"):
        assert components[column].astype(object).tolist() == want_components[column].astype(object).tolist(), column
    for column in ("weight", "reward", "scaled"):
        np.testing.assert_allclose(
            components[column].to_numpy(float),
            want_components[column].to_numpy(float),
            rtol=0,
            atol=TOLERANCE,
            err_msg=column,
        )

    for episode_id, want in summaries.items():
        mine = scores.summary(episode_id)
        assert list(mine) == list(want)
        for key, value in want.items():
            if isinstance(value, float):
                assert type(mine[key]) is float and abs(mine[key] - value) <= TOLERANCE, key
            else:
                assert mine[key] == value and type(mine[key]) is type(value), key
        row = scores.episodes.set_index("episode").loc[episode_id]
        assert row["reward_sum"] == pytest.approx(want["reward_sum"], abs=TOLERANCE)
    # Per-episode running return ends at the episode's reward_sum.
    last = got.groupby("episode", observed=True)["return"].last()
    np.testing.assert_allclose(
        last[list(summaries)].to_numpy(), [s["reward_sum"] for s in summaries.values()], rtol=0, atol=TOLERANCE
    )


# -- parity: the task app's vectors -----------------------------------------------------------
@pytest.mark.parametrize("config_name", list(VECTOR_CONFIGS))
def test_vector_episodes_match_the_task_apps_rewards_exactly(config_name):
    corpus = vector_corpus()
    config = RewardConfig.from_dict(VECTOR_CONFIGS[config_name])
    scores = score(corpus, config)
    for case in VECTOR_EPISODES:
        rows = scores.decisions[scores.decisions["episode"] == case["case"]]
        expected = case["expected"][config_name]
        assert rows["reward"].tolist() == [e["reward"] for e in expected]  # bit for bit
        assert rows["base"].tolist() == [e["base_reward"] for e in expected]
        assert rows["indicator"].tolist() == [e["indicator"] for e in expected]
    assert_parity(corpus, config, scores)


# -- parity: generated corpora ----------------------------------------------------------------
@st.composite
def episodes(draw, index: int) -> Episode:
    """An episode of random states: statuses need not be monotone (names re-unlock), counts and
    inventories rise and fall freely. A few names only, so unlocks are frequent."""
    n = draw(st.integers(1, 8))
    live = draw(st.integers(1, 6))
    status = np.zeros((n + 1, len(ACHIEVEMENTS)), dtype=bool)
    status[:, :live] = draw(hnp.arrays(bool, (n + 1, live)))
    counts = draw(hnp.arrays(np.int32, (n + 1, len(ACHIEVEMENTS)), elements=st.integers(0, 3)))
    inventory = draw(hnp.arrays(np.int32, (n + 1, len(INVENTORY_ITEMS)), elements=st.integers(0, 9)))
    return Episode(
        id=f"e{index}",
        inventory=inventory,
        achievement_counts=counts,
        achievement_status=status,
        actions=[["noop"]] * n,
        env_reward=np.zeros(n),
        done=np.zeros(n, bool),
    )


names = st.sampled_from(ACHIEVEMENTS[:6] + ("craft_wood_pickaxe",))
resource_overrides = st.fixed_dictionaries(
    {},
    optional={
        "inventory": st.dictionaries(st.sampled_from(INVENTORY_ITEMS), st.floats(-1, 1), max_size=4),
        "inventory_default": st.floats(-1, 1),
        "achievement_counts": st.dictionaries(st.sampled_from(ACHIEVEMENTS[:6]), st.floats(-1, 1), max_size=4),
        "achievement_count_default": st.floats(-1, 1),
    },
)
configs = st.builds(
    lambda strategy, weights, limits, lam, overrides: RewardConfig.from_dict(
        {
            "enabled": True,
            "mode": "decision_stepwise",
            "strategy": strategy,
            "weights": weights,
            "k_limits": limits,
            "indicator_lambda": lam,
            "resource_weights": overrides,
        }
    ),
    st.sampled_from(["consistent", "per_achievement", "complex", "bogus"]),
    st.dictionaries(names, st.floats(-3, 3), max_size=5),
    st.dictionaries(names, st.sampled_from([-1, 0, 1, 2, 3]), max_size=5),
    st.sampled_from([None, 0, 1, -1, 0.5, 2.5]),
    resource_overrides,
)


@st.composite
def corpora(draw) -> Corpus:
    return Corpus([draw(episodes(i)) for i in range(draw(st.integers(1, 4)))])


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(corpora(), configs)
def test_generated_corpora_match_the_reference(corpus, config):
    assert_parity(corpus, config)


# -- parity: real Crafter episodes ------------------------------------------------------------
@pytest.fixture(scope="module")
def sample() -> Corpus:
    return sample_corpus()


@pytest.mark.parametrize("config_name", list(VECTOR_CONFIGS))
def test_recorded_crafter_episodes_match_the_reference(sample, config_name):
    assert_parity(sample, RewardConfig.from_dict(VECTOR_CONFIGS[config_name]))


def test_recorded_episodes_with_unlimited_credits_and_resource_overrides(sample):
    config = RewardConfig(
        strategy="per_achievement",
        weights={"collect_wood": -0.5, "place_stone": 2.0},
        k_limits={"collect_wood": 0, "place_stone": 3},
        indicator_lambda=-1.0,
        resource_overrides={"inventory": {"wood": 1.0, "health": -0.2}, "achievement_count_default": 0.0},
    )
    assert_parity(sample, config)


# -- semantics the parity tests rely on, shown directly -----------------------------------------
def _flicker_episode() -> Episode:
    """collect_wood turns true at decisions 1, 3 and 5 (false in between); nothing else moves."""
    status = np.zeros((6, len(ACHIEVEMENTS)), dtype=bool)
    status[[1, 3, 5], ACHIEVEMENTS.index("collect_wood")] = True
    return Episode(
        id="flicker",
        inventory=np.zeros((6, 16)),
        achievement_counts=status.astype(int),
        achievement_status=status,
        actions=[["do"]] * 5,
        env_reward=np.zeros(5),
        done=np.zeros(5, bool),
    )


@pytest.mark.parametrize(
    "limit,credited,priors", [(1, [1], [0]), (2, [1, 3], [0, 1]), (0, [1, 3, 5], [0, 1, 2]), (-1, [1, 3, 5], [0, 1, 2])]
)
def test_k_limits_count_credits_per_name_within_an_episode(limit, credited, priors):
    config = RewardConfig(
        strategy="per_achievement",
        weights={"collect_wood": 0.25},
        k_limits={"collect_wood": limit},
        resource_overrides={"achievement_count_default": 0.0},
    )
    scores = score(Corpus([_flicker_episode()]), config)
    credits = scores.components[scores.components["kind"] == "achievement"]
    assert credits["decision"].tolist() == credited
    assert credits["count_prior"].tolist() == priors
    assert (credits["count_limit"] == limit).all()
    assert scores.unlocks["ordinal"].tolist() == [0, 1, 2]
    assert scores.unlocks["first"].tolist() == [True, False, False]
    assert scores.decisions["new_achievements"].tolist() == [1, 0, 1, 0, 1]


def test_resource_overrides_are_honoured():
    inventory = np.zeros((2, 16), dtype=int)
    inventory[1, INVENTORY_ITEMS.index("wood")] = 3
    episode = Episode(
        id="wood",
        inventory=inventory,
        achievement_counts=np.zeros((2, 22)),
        actions=[["do"]],
        env_reward=[0.0],
        done=[False],
    )
    config = RewardConfig(strategy="per_achievement", resource_overrides={"inventory": {"wood": 0.5}})
    scores = score(Corpus([episode]), config)
    assert scores.components[["kind", "name", "delta", "weight", "reward"]].astype(object).values.tolist() == [
        ["inventory", "wood", 3, 0.5, 1.5]
    ]
    assert scores.reward.tolist() == [1.5]


def test_preparation_is_cached_per_corpus_and_reused(sample):
    prepared = prepare(sample)
    assert prepare(sample) is prepared
    assert score(sample, RewardConfig()).prepared is prepared
    assert not prepared.gain_delta.flags.writeable  # shared between scores: read-only
    a = score(prepared, RewardConfig(strategy="per_achievement"))
    b = score(prepared, RewardConfig(strategy="per_achievement", indicator_lambda=2.0))
    np.testing.assert_array_equal(b.reward, 2.0 * a.reward)


def test_empty_corpus_is_an_error_not_a_zero():
    with pytest.raises(CorpusError, match="empty corpus"):
        score(Corpus([]), RewardConfig())
    with pytest.raises(CorpusError, match="empty corpus"):
        crafter_score(Corpus([]))


def test_tables_are_tidy(sample):
    scores = score(sample, RewardConfig(strategy="per_achievement"))
    assert list(scores.components.columns) == COMPONENT_COLUMNS
    assert set(scores.components["kind"].unique()) <= {"indicator", "achievement", "inventory", "achievement_count"}
    assert len(scores.decisions) == sample.n_decisions and len(scores.episodes) == len(sample)
    episodes = scores.episodes.set_index("episode")
    assert episodes["decisions"].tolist() == sample.index["decisions"].tolist()
    np.testing.assert_allclose(episodes["env_return"], sample.index["env_return"])
    assert episodes["final_achievements"].tolist() == sample.index["unlocked"].tolist()
    assert scores.totals()["decisions"] == sample.n_decisions
    by_episode = scores.components.groupby("episode", observed=True)["scaled"].sum()
    np.testing.assert_allclose(by_episode[episodes.index].to_numpy(), episodes["reward_sum"].to_numpy(), atol=1e-9)


# -- compare ----------------------------------------------------------------------------------
def test_compare_lines_up_two_configs(sample):
    a = RewardConfig()
    b = RewardConfig(strategy="per_achievement", weights={"collect_wood": 0.2}, indicator_lambda=0.5)
    comparison = compare(sample, a, b)
    episodes = comparison.episodes
    np.testing.assert_array_equal(episodes["return_a"], score(sample, a).reward_sum)
    np.testing.assert_array_equal(episodes["return_b"], score(sample, b).reward_sum)
    np.testing.assert_allclose(episodes["difference"], episodes["return_b"] - episodes["return_a"])
    best = episodes.loc[episodes["return_b"].idxmax()]
    assert best["rank_b"] == 1
    assert (episodes["rank_change"] == episodes["rank_b"] - episodes["rank_a"]).all()
    totals = comparison.components.set_index(["kind", "name"])
    want_b = comparison.b.components.groupby(["kind", "name"], observed=True)["scaled"].sum()
    np.testing.assert_allclose(totals.loc[want_b.index, "total_b"], want_b, atol=1e-9)
    assert totals.loc[("indicator", INDICATOR_COMPONENT_NAME), "total_b"] == 0.0  # only under a
    assert totals.loc[("achievement", "collect_wood"), "component"] == "achievement: collect_wood"
    np.testing.assert_allclose(totals["difference"], totals["total_b"] - totals["total_a"])
    largest = comparison.largest_changes(3)
    assert len(largest) == 3
    magnitudes = comparison.components["difference"].abs()
    assert list(largest["difference"].abs()) == sorted(magnitudes, reverse=True)[:3]


# -- Crafter's score --------------------------------------------------------------------------
def _unlocking(episode_id: str, names: list[str]) -> Episode:
    status = np.zeros((2, len(ACHIEVEMENTS)), dtype=bool)
    status[1, [ACHIEVEMENTS.index(n) for n in names]] = True
    return Episode(
        id=episode_id,
        inventory=np.zeros((2, 16)),
        achievement_counts=status.astype(int),
        achievement_status=status,
        actions=[["noop"]],
        env_reward=[0.0],
        done=[False],
    )


def test_success_rates_and_crafter_score():
    corpus = Corpus(
        [
            _unlocking("a", ["collect_wood", "place_table"]),
            _unlocking("b", ["collect_wood"]),
            _unlocking("c", []),
            _unlocking("d", ["collect_wood", "wake_up"]),
        ]
    )
    rates = success_rates(corpus).set_index("achievement")
    assert rates.loc["collect_wood", "success_rate"] == 75.0 and rates.loc["collect_wood", "episodes"] == 3
    assert rates.loc["place_table", "success_rate"] == 25.0
    assert rates.loc["collect_diamond", "success_rate"] == 0.0
    percent = [75.0, 25.0, 25.0] + [0.0] * 19
    expected = math.exp(sum(math.log(1 + s) for s in percent) / 22) - 1
    assert crafter_score(corpus) == pytest.approx(expected, rel=1e-12)


def test_crafter_score_bounds(sample):
    assert 0.0 < crafter_score(sample) < 100.0
    assert crafter_score(Corpus([_unlocking("all", list(ACHIEVEMENTS))])) == pytest.approx(100.0)


# -- verify_logged ----------------------------------------------------------------------------
def _logged(episode: Episode, table: dict) -> Episode:
    """``episode`` with what a rollout under ``table`` would have logged."""
    result = score_episode(episode.states(), RewardConfig.from_dict(table), episode.actions)
    episode.logged = {"config": table, "stepwise": [json.loads(json.dumps(d.stepwise_info)) for d in result.decisions]}
    return episode


def _logged_vectors() -> Corpus:
    table = VECTOR_CONFIGS["shaped"]
    episodes = list(vector_corpus())
    return Corpus([_logged(episodes[0], table), _logged(episodes[1], VECTOR_CONFIGS["consistent"]), episodes[2]])


def test_verify_logged_finds_nothing_when_everything_reproduces():
    mismatches = verify_logged(_logged_vectors())
    assert mismatches.empty
    assert list(mismatches.columns) == ["episode", "decision", "logged", "recomputed", "difference", "fields", "note"]
    assert mismatches.attrs["episodes_checked"] == 2
    assert mismatches.attrs["decisions_checked"] == sum(len(e["actions"]) for e in VECTOR_EPISODES[:2])
    assert mismatches.attrs["skipped"] == {VECTOR_EPISODES[2]["case"]: "no task-app log"}


def test_verify_logged_names_a_perturbed_decision():
    corpus = _logged_vectors()
    episode = corpus[0]
    stepwise = episode.logged["stepwise"]
    index = next(i for i, s in enumerate(stepwise) if s["reward"] > 0)
    stepwise[index]["reward"] += 0.25
    stepwise[index + 1]["new_achievements"] = ["collect_diamond"]
    stepwise[index + 2] = None
    mismatches = verify_logged(corpus)
    assert mismatches[["episode", "decision", "fields"]].values.tolist() == [
        [episode.id, index + 1, "reward"],
        [episode.id, index + 2, "new_achievements"],
    ]
    row = mismatches.iloc[0]
    assert row["logged"] - row["recomputed"] == pytest.approx(0.25) and row["difference"] == pytest.approx(-0.25)
    assert mismatches.attrs["unchecked"] == [(episode.id, index + 3, "no info.stepwise logged")]


@pytest.fixture(scope="module")
def reset_rollout_corpus(tmp_path_factory) -> Corpus:
    """Two episodes of one task-app rollout (on_done = reset), imported with their logs."""
    response = play_rollout(seed=7, decisions=12, actions_per_decision=3, episode_length=20, run_id="reset-run")
    path = write_json(tmp_path_factory.mktemp("rollouts") / "r.json", raw_variant(response))
    return import_rollouts(path, progress=False).corpus


def test_verify_logged_reproduces_an_imported_rollout_including_quirk_7(reset_rollout_corpus):
    mismatches = verify_logged(reset_rollout_corpus)
    assert mismatches.empty, mismatches.to_string()
    first, second = reset_rollout_corpus
    assert mismatches.attrs["carried_over"] == [second.id]
    assert mismatches.attrs["decisions_checked"] == first.n_decisions + second.n_decisions
    # Without its predecessor, the second episode's first decision cannot be checked.
    alone = verify_logged(reset_rollout_corpus[1:])
    assert alone.empty and alone.attrs["carried_over"] == []
    assert [u[:2] for u in alone.attrs["unchecked"]] == [(second.id, 1)]
    assert alone.attrs["decisions_checked"] == second.n_decisions - 1


# -- command line -----------------------------------------------------------------------------
CONFIG_FILE = str(REPO / "configs" / "upstream_complex.yaml")


def test_cli_score_prints_episodes_and_totals_and_writes_tables(sample, tmp_path, capsys):
    out = tmp_path / "res" / "shaped.parquet"
    assert main(["score", "--config", CONFIG_FILE, "sample", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert sample.ids[0] in text and "total: 10 episode(s)" in text and "Crafter score" in text
    pairs = misranked_pairs(score(sample, RewardConfig.from_file(CONFIG_FILE)))
    assert f"{len(pairs)} episode pair(s) paid more for less progress" in text
    assert f"worst: {pairs.paid_more.iloc[0]} ({pairs.achievements_paid_more.iloc[0]} achievements" in text
    scores = score(sample, RewardConfig.from_file(CONFIG_FILE))
    for table in ("episodes", "decisions", "components"):
        written = pd.read_parquet(tmp_path / "res" / f"shaped.{table}.parquet")
        mine = getattr(scores, table)
        assert len(written) == len(mine) and list(written.columns) == list(mine.columns)
        np.testing.assert_array_equal(
            written["reward_sum" if table == "episodes" else "reward"],
            mine["reward_sum" if table == "episodes" else "reward"],
        )
    assert main(["score", "--config", CONFIG_FILE, "sample", "--out", str(out)]) == 2
    assert "already exist" in capsys.readouterr().err
    assert main(["score", "--config", CONFIG_FILE, "sample", "--out", str(out), "--overwrite"]) == 0


def test_cli_score_csv_and_usage_errors(tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(["score", "--config", CONFIG_FILE, "sample", "--out", str(out)]) == 0
    episodes = pd.read_csv(tmp_path / "s.episodes.csv")
    assert episodes["unique_achievements"].str.contains(" ").any()  # lists space-separated
    assert main(["score", "--config", CONFIG_FILE, "sample", "--out", str(tmp_path / "s.xlsx")]) == 2
    assert main(["score", "--config", CONFIG_FILE, str(tmp_path / "nowhere")]) == 2
    assert main(["score", "--config", str(tmp_path / "missing.yaml"), "sample"]) == 2
    assert "no such corpus folder" in capsys.readouterr().err


def test_cli_verify_exit_status(tmp_path, capsys):
    corpus = _logged_vectors()
    corpus.save(tmp_path / "ok")
    assert main(["verify", str(tmp_path / "ok")]) == 0
    assert "every logged decision reproduced" in capsys.readouterr().out
    bad = corpus[0]
    bad.logged["stepwise"][0]["reward"] = 5.0
    Corpus([bad]).save(tmp_path / "bad")
    assert main(["verify", str(tmp_path / "bad")]) == 1
    out = capsys.readouterr().out
    assert "1 decision(s) differ" in out and bad.id in out
    assert len(load_corpus(tmp_path / "bad")) == 1


def test_cli_compare_prints_both_configs_side_by_side(sample, capsys):
    recommended = str(REPO / "configs" / "recommended.yaml")
    shaped = str(REPO / "configs" / "upstream_shaped.yaml")
    assert main(["compare", shaped, recommended, "sample", "--top", "3"]) == 0
    text = capsys.readouterr().out
    comparison = compare(sample, RewardConfig.from_file(shaped), RewardConfig.from_file(recommended))
    first = comparison.episodes.iloc[0]
    assert f"{first.episode} scripted     {first.env_return:.4f}   {first.return_a:.4f}   {first.return_b:.4f}" in text
    assert "per policy:" in text and "return_per_achievement_b" in text
    for label, path in (("A", shaped), ("B", recommended)):
        rho = progress_agreement(sample, RewardConfig.from_file(path))  # by plain loops, not the package's
        assert f"{label}: rank agreement with progress {rho:.3f}" in text
    assert "top 3" in text
    for component in comparison.largest_changes(3)["component"]:
        assert component in text


def test_cli_compare_usage_errors(capsys):
    shaped = str(REPO / "configs" / "upstream_shaped.yaml")
    assert main(["compare", shaped, shaped, "sample", "--by", "colour"]) == 2
    assert "--by: no index column 'colour'" in capsys.readouterr().err
    assert main(["compare", shaped, shaped, "sample", "--top", "0"]) == 2
    assert "--top must be at least 1" in capsys.readouterr().err
    assert main(["compare", shaped, "missing.yaml", "sample"]) == 2
    assert "missing.yaml" in capsys.readouterr().err
