"""The views without a browser: set widget values in the kernel, check numbers, tables and files."""

from __future__ import annotations

import shutil
import statistics
import zlib

import numpy as np
import pytest
import traitlets
from helpers import REPO
from helpers.reference import episode_pay

from workbench.analysis.alignment import misranked_pairs, progress_summary
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus, Episode
from workbench.data.sample import sample_corpus
from workbench.errors import WorkbenchError
from workbench.scoring import compare, score
from workbench.views.widgets import Compare, Replayer, Tuner, link
from workbench.views.widgets.common import LatestWins
from workbench.views.widgets.map_view import CELL, parse_view, render_views, texture

SHAPED = RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml")
RECOMMENDED = RewardConfig.from_file(REPO / "configs" / "recommended.yaml")
DEFAULT = RewardConfig.from_file(REPO / "configs" / "consistent.yaml")


@pytest.fixture(scope="module")
def corpus():
    return sample_corpus()


def test_tuner_starts_from_a_config_and_matches_score(corpus):
    tuner = Tuner(corpus, SHAPED)
    assert tuner.config.effective_strategy == "per_achievement"
    assert tuner.config.weights["collect_food"] == SHAPED.weights["collect_food"]  # misspelt names survive
    expected = score(corpus, SHAPED).episodes["reward_sum"].to_numpy()
    assert list(tuner.scores.episodes["reward_sum"]) == pytest.approx(expected, abs=1e-12)
    assert "collect_food" in tuner.lint_view.value
    assert "1 episode pair(s) paid more for less progress, worst: farmer-s2024-00001" in tuner.progress_view.value
    # Ten episodes: one point each, hover names episode, policy, return and achievements.
    assert len(tuner.figure.points.y) == 10
    first = tuner.figure.points.names[0]
    episode = corpus["scripted-s2024-00000"]
    shaped_return = sum(episode_pay(episode, SHAPED).rewards)  # by plain loops, not the package's scoring
    assert f"scripted-s2024-00000 · scripted · return {shaped_return:.2f}" in first
    assert f"{len(episode.unlocked)} achievements" in first


def test_moving_a_slider_rescores_and_the_ghost_stays(corpus):
    tuner = Tuner(corpus, SHAPED)
    before = tuner.scores.episodes["reward_sum"].sum()
    ghost = tuner.figure.ghost.y.copy()
    tuner.controls.weight_sliders["place_table"].value = 5.01  # any 0.01
    assert tuner.config.weights["place_table"] == 5.01
    tables = corpus.index["unlocked"].map(lambda names: "place_table" in names).sum()
    after = tuner.scores.episodes["reward_sum"].sum()
    assert after - before == pytest.approx(tables * (5.01 - 1.0) * SHAPED.effective_lambda)
    np.testing.assert_array_equal(tuner.figure.ghost.y, ghost)  # the baseline does not move
    assert not np.array_equal(tuner.figure.live.y, ghost)


def test_strategy_disables_what_cannot_act_and_k_limits_say_quirk_1(corpus):
    tuner = Tuner(corpus, SHAPED)
    assert "no k-limit changes a reward here (quirk 1)" in tuner.controls.limits_note.value
    tuner.controls.limit_boxes["collect_wood"].value = 0
    assert list(tuner.scores.reward_sum) == pytest.approx(list(score(corpus, SHAPED).reward_sum), abs=1e-12)
    tuner.controls.strategy.value = "consistent"
    assert all(s.disabled for s in tuner.controls.weight_sliders.values())
    assert "weights and resource tables do not act" in tuner.controls.strategy_note.value
    assert tuner.scores.episodes["reward_sum"].max() <= 22
    tuner.controls.strategy.value = "per_achievement"
    assert not any(s.disabled for s in tuner.controls.weight_sliders.values())


def test_resource_controls_and_moving_back_drops_the_override(corpus):
    tuner = Tuner(corpus, SHAPED)
    tuner.controls.lam.value = 1.0
    tuner.controls.resource_sliders["stone"].value = 0.0
    assert tuner.config.resource_overrides["inventory"] == {"stone": 0.0}
    stone = tuner.scores.components
    assert stone[(stone.kind == "inventory") & (stone.name == "stone")]["reward"].abs().sum() == 0.0
    tuner.controls.resource_sliders["stone"].value = 0.15  # the task app's own weight
    assert tuner.config.resource_overrides == {}


def test_reset_and_undo(corpus):
    tuner = Tuner(corpus, SHAPED)
    start = tuner.scores.reward_sum.copy()
    for step in range(25):  # 25 separate steps (different controls), each undoable
        name = list(tuner.controls.weight_sliders)[step % 22]
        tuner._last_change = ("", 0.0)
        tuner.controls.weight_sliders[name].value = 2.0 + step / 100
    assert tuner.controls.weight_sliders["collect_coal"].value == pytest.approx(2.0 + 22 / 100)
    tuner.undo()
    assert tuner.controls.weight_sliders[list(tuner.controls.weight_sliders)[24 % 22]].value == pytest.approx(
        2.0 + 2 / 100
    )
    for _ in range(24):
        tuner.undo()
    assert (
        tuner.config == SHAPED.with_changes(weights=tuner.config.weights)
        and tuner.config.weights == SHAPED.weights | {}
    )
    np.testing.assert_allclose(tuner.scores.reward_sum, start, atol=1e-12)
    tuner.controls.strategy.value = "consistent"
    tuner.reset()
    assert tuner.controls.strategy.value == "per_achievement"
    tuner.undo()  # the reset itself can be undone
    assert tuner.controls.strategy.value == "consistent"


def test_filters_show_a_subset_with_its_own_progress_numbers(corpus):
    tuner = Tuner(corpus, SHAPED)
    tuner.controls.policy_filter.value = "farmer"
    assert len(tuner.figure.points.y) == 3
    farmer = tuner.scores.episodes[tuner.scores.episodes.episode.str.startswith("farmer")]
    assert str(progress_summary(farmer)) in tuner.progress_view.value.replace("&#x27;", "'")
    assert "3 of 10 episodes" in tuner.header.value
    tuner.controls.policy_filter.value = "all policies"
    tuner.controls.episode_filter.value = "00002"
    assert len(tuner.figure.points.y) == 3 and "3 of 10" in tuner.header.value


def test_save_export_and_overwrite(corpus, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tuner = Tuner(corpus, SHAPED)
    tuner.controls.weight_sliders["make_iron_pickaxe"].value = 4.0
    tuner.controls.path.value = "tuned.yaml"
    tuner.controls.save_button.click()
    assert f"wrote {tmp_path / 'tuned.yaml'}" in tuner.controls.file_status.value  # the full path
    assert RewardConfig.from_file(tmp_path / "tuned.yaml").weights["make_iron_pickaxe"] == 4.0
    tuner.controls.weight_sliders["make_iron_pickaxe"].value = 5.0
    tuner.controls.save_button.click()  # never overwrites silently...
    assert "tick &#x27;overwrite&#x27;" in tuner.controls.file_status.value
    tuner.controls.overwrite.value = True
    tuner.controls.save_button.click()  # ...but can, from the page
    assert RewardConfig.from_file(tmp_path / "tuned.yaml").weights["make_iron_pickaxe"] == 5.0
    toml = tmp_path / "train.toml"
    shutil.copy(REPO / "configs" / "examples" / "trainer_shaped.toml", toml)
    tuner.controls.toml_path.value = str(toml)
    tuner.controls.export_button.click()
    assert str(toml) in tuner.controls.file_status.value
    assert RewardConfig.from_file(toml).weights["make_iron_pickaxe"] == 5.0


def test_a_move_is_fast_on_the_sample_corpus(corpus):
    tuner = Tuner(corpus, SHAPED)
    timings = []
    for value in np.linspace(2.0, 6.0, 11):
        tuner.controls.weight_sliders["collect_wood"].value = float(value)
        timings.append(tuner.last_update_ms)
    # The README states the measured figure (benchmarks/bench_browser.py); this only catches a
    # regression by a lot on a loaded machine.
    assert statistics.median(timings) < 200


def test_a_large_corpus_shows_distributions_and_extremes():
    base = sample_corpus()
    large = Corpus.concat([base] * 30)  # 300 episodes
    tuner = Tuner(large, SHAPED)
    assert len(tuner.figure.points.y) == 20  # the top and bottom ten, not one point per episode
    returns = tuner.scores.reward_sum
    assert max(tuner.figure.points.y) == returns.max() and min(tuner.figure.points.y) == returns.min()
    assert "all 300 episodes" in tuner.header.value


def test_latest_wins_runs_code_changes_at_once():
    calls = []
    updates = LatestWins(lambda: calls.append(1))
    updates.request(None)
    updates.request({"owner": object(), "name": "value"})  # not from the page: at once too
    assert calls == [1, 1]


def test_replayer_sends_frames_once_and_the_episode_data(corpus):
    replayer = Replayer(corpus, SHAPED, episode="scripted-s2024-00000")
    episode = corpus["scripted-s2024-00000"]
    n, h, w = replayer.view.frame_shape
    assert (n, h, w) == (episode.n_steps + 1, 64, 64)
    frames = np.frombuffer(zlib.decompress(replayer.view.frames), np.uint8).reshape(n, h, w, 3)
    np.testing.assert_array_equal(frames, episode.frames.images)
    decisions = score(corpus, SHAPED).decisions
    mine = decisions[decisions.episode == episode.id]
    assert replayer.data["reward"] == pytest.approx(mine["reward"].tolist(), abs=1e-12)
    paying = mine[mine.reward != 0]["decision"].tolist()
    assert replayer.data["paying"] == paying
    assert set(replayer.data["spikes"]) <= set(paying) and replayer.data["spikes"]
    first = paying[0]
    state = replayer.state_at(first)  # one action per decision: step == decision
    assert state["decision"] == first and state["reward"] == pytest.approx(mine.set_index("decision").reward[first])
    assert state["actions"] == episode.actions[first - 1]
    assert sum(v for _, v in state["components"]) == pytest.approx(state["reward"])
    assert "__indicator__" not in str(replayer.data["components"])


def test_replayer_switching_episode_starts_it_at_its_start_and_follows_a_config(corpus):
    replayer = Replayer(corpus, SHAPED, episode="scripted-s2024-00000")
    replayer.step = 40
    replayer.episode_picker.value = "farmer-s2024-00000"
    assert replayer.step == 0  # step 40 of one episode says nothing of another
    replayer.step = 30
    replayer.open_episode("farmer-s2024-00000")  # the episode shown: it stays where it is
    assert replayer.step == 30 and replayer.decision == 30  # one action per decision in the sample
    replayer.open_episode("random-s2024-00000")
    assert replayer.step == 0 and replayer.episode == "random-s2024-00000" and replayer.decision == 0
    replayer.open_episode("random-s2024-00000", decision=3)
    assert replayer.decision_at(replayer.step) == 3 == replayer.decision
    replayer.open_episode("scripted-s2024-00001", decision="best")
    rewards = np.array(replayer.data["reward"])
    assert replayer.decision_at(replayer.step) == int(np.argmax(rewards)) + 1
    replayer.config = DEFAULT
    assert max(replayer.data["reward"]) == 1.0
    assert all(label == "indicator (consistent)" for rows in replayer.data["components"].values() for label, _ in rows)
    with pytest.raises(WorkbenchError, match="no episode 'missing'"):
        replayer.open_episode("missing")


def test_replayer_traits_open_seek_and_narrow_the_picker(corpus):
    replayer = Replayer(corpus, SHAPED)
    replayer.episode = "farmer-s2024-00001"  # as a link sets it
    assert replayer.episode_picker.value == "farmer-s2024-00001" and replayer.current.id == "farmer-s2024-00001"
    replayer.decision = 12
    assert replayer.step == 12 and replayer.state_at(replayer.step)["decision"] == 12
    replayer.view.set_state({"step": 20, "step_episode": "farmer-s2024-00001"})  # the page seeks
    assert replayer.decision == 20
    with pytest.raises(WorkbenchError, match="has decisions 1 to"):
        replayer.decision = replayer.current.n_decisions + 1
    replayer.episode_picker.value = "random-s2024-00000"  # the picker is the trait
    assert replayer.episode == "random-s2024-00000"
    replayer.selection = ("scripted-s2024-00000", "farmer-s2024-00002")
    assert replayer.episode_picker.options == ("scripted-s2024-00000", "farmer-s2024-00002")
    assert replayer.episode == "scripted-s2024-00000"  # the one shown was not offered any more
    replayer.selection = ()
    assert len(replayer.episode_picker.options) == len(corpus)


def _text_episode(corpus, n=12):
    source = corpus["scripted-s2024-00000"]
    states = [{k: v for k, v in s.items() if k != "achievements_counts"} for s in source.states()[: n + 1]]
    episode = Episode.from_states("text-0", states, source.actions[:n])
    episode.views = [
        "Local Map View (5x5):\n"
        + "\n".join(" ".join(["2", "6", "1", "3", "player" if r == 2 else "14"]) for r in range(5))
        for _ in range(n + 1)
    ]
    episode.messages = [f"message {i}\ntool: interact_many" for i in range(1, n + 1)]
    return episode


def test_a_text_rollout_replays_its_map_views_with_crafters_textures(corpus):
    episode = _text_episode(corpus)
    replayer = Replayer(Corpus([episode]), SHAPED)
    n, h, w = replayer.view.frame_shape
    assert (n, h, w) == (13, 5 * CELL, 5 * CELL)
    frames = np.frombuffer(zlib.decompress(replayer.view.frames), np.uint8).reshape(n, h, w, 3)
    np.testing.assert_array_equal(frames[0, :CELL, CELL : 2 * CELL], texture("tree"))  # "6" is a tree
    assert replayer.data["messages"][0].startswith("message 1")
    assert replayer.data["n_steps"] == 12 and replayer.data["decision_end"] == list(range(1, 13))
    assert replayer.data["step_per_decision"]  # a step is a whole decision: the page marks all its actions
    assert set(replayer.state_at(0)["inventory"]) >= {"health", "food", "drink", "energy"}
    assert "estimated achievement counts" in replayer.note.value  # from_states without counts


def test_map_views_parse_names_and_ids():
    assert parse_view("Local Map View (3x2):\ngrass tree water\nplayer cow void\n\nChoose.") == [
        ["grass", "tree", "water"],
        ["player", "cow", "void"],
    ]
    names = render_views(["grass tree\nwater player", None])
    ids = render_views(["2 6\n1 13", None])
    np.testing.assert_array_equal(names, ids)
    assert names[1].max() == 0  # a missing view is black


def test_compare_three_configs_raw_and_normalised(corpus):
    view = Compare(corpus, {"shaped": SHAPED, "recommended": RECOMMENDED, "default": DEFAULT})
    assert view.picker_a.value == "shaped" and view.others == ["recommended", "default"]
    expected = compare(corpus, SHAPED, RECOMMENDED).episodes
    assert list(view.comparison.episodes["difference"]) == pytest.approx(list(expected["difference"]), abs=1e-12)
    worst = misranked_pairs(view.comparison.a).iloc[0]
    assert f"worst: {worst.paid_more} ({worst.achievements_paid_more} achievements" in view.summary.value
    assert view.summary.value.count("0 episode pair(s)") >= 1
    assert view.bars.y.shape == (3, 3)  # three configs by three policies
    view.scale.value = "share of max"
    assert np.abs(view.bars.y).max(axis=1) == pytest.approx([1.0, 1.0, 1.0])
    view.scale.value = "ranks"
    assert view.bars.y.min() >= 1 and view.bars.y.max() <= 10
    assert "__indicator__" not in view.components_view.value
    assert "indicator (consistent)" in view.components_view.value
    view.swap()
    assert view.picker_a.value == "recommended" and view.others[0] == "shaped"
    # Each config keeps the colour it got on first appearance, whatever is swapped or added.
    colours = {name: view.color(name) for name in ("shaped", "recommended", "default")}
    assert len(set(colours.values())) == 3
    view.add("tuned", SHAPED.with_changes(indicator_lambda=2.0), side="b")
    assert {name: view.color(name) for name in colours} == colours
    assert view.color("tuned") not in colours.values()
    assert f"color:{colours['recommended']}'>recommended" in view.summary.value
    assert list(view.bars.colors) == [view.color(name) for name in ["recommended", "tuned", "shaped", "default"]]
    # The per-episode axes are equal and fitted to the returns shown (a 5% margin).
    view.scale.value = "raw"
    ex, ey = view.figures._episode_scales
    shown = np.concatenate([view.points.x, view.points.y])
    assert (ex.min, ex.max) == (ey.min, ey.max)
    assert ex.min < shown.min() and ex.max > shown.max()
    assert ex.max - ex.min == pytest.approx((shown.max() - shown.min()) * 1.1)


def test_compare_says_no_differences_and_takes_a_tuned_config(corpus):
    view = Compare(corpus, {"shaped": SHAPED})
    assert "no differences" in view.components_view.value
    tuner = Tuner(corpus, SHAPED)
    link(tuner, None, view)
    link(tuner, None, view)  # linking twice adds each sent config once
    tuner.controls.weight_sliders["collect_diamond"].value = 7.5
    tuner.controls.compare_button.click()
    assert "sent to Compare as &#x27;tuned&#x27;" in tuner.controls.file_status.value
    assert view.others[0] == "tuned" and tuner.sent == ("tuned", tuner.config)
    assert view.config is view.configs["tuned"]  # the first compared config
    assert list(view.comparison.b.episodes["reward_sum"]) == pytest.approx(list(tuner.scores.episodes["reward_sum"]))
    with pytest.raises(KeyError, match="b='missing' is not one of the configs"):
        Compare(corpus, {"shaped": SHAPED}, b="missing")
    with pytest.raises(WorkbenchError, match="at least one named config"):
        Compare(corpus, {})


def test_clicking_an_episode_in_the_tuner_opens_it_in_the_replayer(corpus):
    tuner = Tuner(corpus, SHAPED)
    with pytest.raises(WorkbenchError, match="no episode 'missing'"):
        tuner.open_episode("missing")
    replayer = Replayer(corpus, SHAPED)
    tuner.open_episode("farmer-s2024-00001")  # not linked yet: only the Tuner's trait says it
    assert tuner.episode == "farmer-s2024-00001" and replayer.episode == corpus.ids[0]
    link(tuner, replayer)
    tuner.controls.weight_sliders["collect_wood"].value = 9.0
    assert replayer.config == SHAPED  # the config goes with a pick, not with every drag
    position = list(tuner._shown).index(corpus.ids.index("farmer-s2024-00002"))
    tuner._on_pick(position)  # what a click on that point calls
    assert replayer.episode == "farmer-s2024-00002" == tuner.episode
    assert replayer.config.weights["collect_wood"] == 9.0
    assert replayer.state_at(replayer.step)["reward"] == max(replayer.data["reward"])
    replayer.step = 0
    tuner._on_pick(position)  # the same episode picked again opens it again
    assert replayer.state_at(replayer.step)["reward"] == max(replayer.data["reward"])


def test_compare_picks_set_its_traits_and_replay_under_the_first_compared_config(corpus):
    replayer = Replayer(corpus, SHAPED)
    view = Compare(corpus, {"shaped": SHAPED, "default": DEFAULT}, replayer=replayer)
    assert view.config is DEFAULT
    position = view._picked.index(corpus.ids.index("farmer-s2024-00001"))
    view._on_pick(position)  # what a click on that point calls
    assert view.episode == "farmer-s2024-00001" and view.selection == ("farmer-s2024-00001",)
    assert list(view.points.selected) == [position]  # one other config: one point per episode
    assert replayer.episode == "farmer-s2024-00001" and replayer.config is DEFAULT
    view.selection = ("farmer-s2024-00000", "random-s2024-00000")
    assert len(view.points.selected) == 2


def test_estimated_counts_are_said_in_the_tuner_and_compare_headers(corpus):
    source = corpus["farmer-s2024-00000"]
    states = [{k: v for k, v in s.items() if k != "achievements_counts"} for s in source.states()]
    estimated = Episode.from_states("text-1", states, source.actions)
    mixed = Corpus([corpus["scripted-s2024-00000"], estimated])
    assert "1 of 2 episodes have estimated achievement counts" in Tuner(mixed, SHAPED).header.value
    assert "estimate" in Compare(mixed, {"shaped": SHAPED, "recommended": RECOMMENDED}).children[1].value
    assert "estimate" not in Tuner(corpus, SHAPED).header.value


def test_an_episode_with_neither_frames_nor_views_still_replays_its_rewards(corpus):
    source = corpus["random-s2024-00000"]
    bare = Episode.from_states("bare-0", source.states(), source.actions)
    replayer = Replayer(Corpus([bare]), SHAPED)
    assert replayer.view.frame_shape == [0, 0, 0] and replayer.view.frames == b""
    assert replayer.n_steps == bare.n_decisions
    expected = score(Corpus([bare]), SHAPED).reward
    assert replayer.data["reward"] == pytest.approx(expected.tolist(), abs=1e-12)


def test_a_step_the_page_reports_for_the_episode_shown_before_is_not_taken(corpus):
    replayer = Replayer(corpus, SHAPED, episode="scripted-s2024-00000")
    replayer.view.set_state({"step": 15, "step_episode": "scripted-s2024-00000"})  # as the page reports it
    assert replayer.step == 15
    replayer.open_episode("farmer-s2024-00000")
    # the page's report of step 15 for the first episode arrives after the switch
    replayer.view.set_state({"step": 15, "step_episode": "scripted-s2024-00000"})
    assert replayer.step == 0
    replayer.view.set_state({"step": 7, "step_episode": "farmer-s2024-00000"})
    assert replayer.step == 7


def test_reset_goes_to_the_baseline_not_to_where_the_tuner_started(corpus):
    draft = SHAPED.with_changes(weights={"collect_wood": 2.0})  # drops SHAPED's other weights
    tuner = Tuner(corpus, draft, baseline=SHAPED, baseline_name="shaped")
    assert tuner.config.weights == {"collect_wood": 2.0}
    assert "shaped" in tuner.header.value
    np.testing.assert_array_equal(tuner.baseline_scores.reward_sum, score(corpus, SHAPED).reward_sum)
    tuner.reset()
    # every weight as the baseline has it, the one no slider covers (a misspelling) included
    assert tuner.config.weights == SHAPED.weights
    np.testing.assert_array_equal(tuner.scores.reward_sum, score(corpus, SHAPED).reward_sum)
    tuner.undo()
    assert tuner.controls.weight_sliders["collect_wood"].value == 2.0


def test_config_is_set_after_every_rescore_with_what_was_scored(corpus):
    """The app keeps the Tuner's draft by observing ``config``: once per re-score that changes it,
    two re-scores as fast as each other included (their timing lines are the same text)."""
    tuner = Tuner(corpus, SHAPED)
    seen: list[tuple[float, float]] = []
    tuner.observe(
        lambda change: seen.append((change["new"].weights["collect_wood"], float(tuner.scores.reward_sum.sum()))),
        names="config",
    )
    for weight in (2.0, 3.0, 3.0 + 0.01):
        tuner.controls.weight_sliders["collect_wood"].value = weight
    assert [w for w, _ in seen] == [2.0, 3.0, 3.01]
    # each call sees what was just scored: the corpus's return under that weight
    for weight, total in seen:
        expected = score(
            corpus, SHAPED.with_changes(weights={**SHAPED.weights, "collect_wood": weight})
        ).reward_sum.sum()
        assert total == pytest.approx(float(expected))


def test_tuner_config_trait_goes_both_ways_and_selection_follows_the_filters(corpus):
    tuner = Tuner(corpus, SHAPED)
    assert tuner.selection == tuple(corpus.ids) and tuner.episode is None
    tuner.controls.policy_filter.value = "farmer"
    assert tuner.selection == tuple(e for e in corpus.ids if corpus.groups("policy")[e] == "farmer")
    follower = Replayer(corpus, SHAPED)
    traitlets.dlink((tuner, "config"), (follower, "config"))  # any trait link works on the views
    tuner.controls.weight_sliders["collect_wood"].value = 6.0
    assert follower.config.weights["collect_wood"] == 6.0
    tuner.config = RECOMMENDED  # set from outside: the controls go there, as one undoable step
    assert tuner.controls.strategy.value == RECOMMENDED.effective_strategy
    assert tuner.config.weights == RECOMMENDED.weights and follower.config == tuner.config
    np.testing.assert_array_equal(tuner.scores.reward_sum, score(corpus, RECOMMENDED).reward_sum)
    tuner.undo()
    assert tuner.config.weights["collect_wood"] == 6.0
