"""The Tuner without a browser: set widget values, check the numbers, tables and files."""

from __future__ import annotations

import shutil
import statistics

import pytest

from conftest import REPO
from workbench.config import RewardConfig
from workbench.sample import sample_corpus
from workbench.scoring import score
from workbench.widgets import Tuner

SHAPED = RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml")


@pytest.fixture(scope="module")
def corpus():
    return sample_corpus()


def test_tuner_starts_from_a_config_and_matches_score(corpus):
    tuner = Tuner(corpus, SHAPED)
    assert tuner.config.effective_strategy == "per_achievement"
    assert tuner.config.indicator_lambda == SHAPED.indicator_lambda
    # Misspelled names survive the round trip through the controls, so lint still sees them.
    assert tuner.config.weights["collect_food"] == SHAPED.weights["collect_food"]
    expected = score(corpus, SHAPED).episodes["reward_sum"].to_numpy()
    assert list(tuner.scores.episodes["reward_sum"]) == pytest.approx(expected, abs=1e-12)
    assert "collect_food" in tuner.lint_view.value
    assert "1 episode pair(s) paid more for less progress, worst: farmer-s2024-00001" in tuner.progress_view.value
    assert tuner.figure.value[:4] == b"\x89PNG"


def test_moving_a_slider_rescores(corpus):
    tuner = Tuner(corpus, SHAPED)
    before = tuner.scores.episodes["reward_sum"].sum()
    tuner.weight_sliders["place_table"].value = 5.0
    config = tuner.config
    assert config.weights["place_table"] == 5.0
    after = tuner.scores.episodes["reward_sum"].sum()
    tables = corpus.index["unlocked"].map(lambda names: "place_table" in names).sum()
    assert after - before == pytest.approx(tables * (5.0 - 1.0) * SHAPED.effective_lambda)
    assert list(tuner.scores.episodes["reward_sum"]) == pytest.approx(
        list(score(corpus, config).episodes["reward_sum"]), abs=1e-12)


def test_strategy_lambda_and_resource_controls(corpus):
    tuner = Tuner(corpus, SHAPED)
    tuner.lam.value = 1.0
    tuner.resource_sliders["stone"].value = 0.0
    assert tuner.config.resource_overrides["inventory"] == {"stone": 0.0}
    stone = tuner.scores.components
    assert stone[(stone.kind == "inventory") & (stone.name == "stone")]["reward"].abs().sum() == 0.0
    assert "resource" in tuner.lint_view.value  # overrides the task app cannot express
    tuner.strategy.value = "consistent"
    assert tuner.scores.episodes["reward_sum"].max() <= 22


def test_save_and_export_write_the_current_config(corpus, tmp_path):
    tuner = Tuner(corpus, SHAPED)
    tuner.weight_sliders["make_iron_pickaxe"].value = 4.0
    tuner.path.value = str(tmp_path / "tuned.yaml")
    tuner.save_button.click()
    assert "wrote" in tuner.file_status.value
    assert RewardConfig.from_file(tmp_path / "tuned.yaml").weights["make_iron_pickaxe"] == 4.0
    tuner.save_button.click()  # never overwrites silently
    assert "overwrite" in tuner.file_status.value
    toml = tmp_path / "train.toml"
    shutil.copy(REPO / "configs" / "examples" / "trainer_shaped.toml", toml)
    tuner.toml_path.value = str(toml)
    tuner.export_button.click()
    assert str(toml) in tuner.file_status.value
    assert RewardConfig.from_file(toml).weights["make_iron_pickaxe"] == 4.0


def test_a_slider_move_is_fast_on_the_sample_corpus(corpus):
    tuner = Tuner(corpus, SHAPED)
    timings = []
    for value in (2.0, 3.0, 4.0, 5.0, 6.0):
        tuner.weight_sliders["collect_wood"].value = value
        timings.append(tuner.last_update_ms)
    # The README states the measured figure; this bound only catches a regression by a lot.
    assert statistics.median(timings) < 1000


def test_replayer_steps_through_frames_and_rewards(corpus):
    from workbench.widgets import Replayer

    replayer = Replayer(corpus, SHAPED, episode="scripted-s2024-00000")
    episode = corpus["scripted-s2024-00000"]
    assert replayer.step.max == episode.n_steps
    assert "reset frame" in replayer.components_view.value
    assert replayer.frame.value[:4] == b"\x89PNG"
    # The first decision that pays: its components appear, with the scores' numbers.
    decisions = score(corpus, SHAPED).decisions
    paying = decisions[(decisions.episode == episode.id) & (decisions.reward > 0)].iloc[0]
    replayer.step.value = int(paying.decision)  # one action per decision: step == decision
    assert f"decision {int(paying.decision)}</b>: {paying.reward:.3f}" in replayer.components_view.value
    assert f"after decision {int(paying.decision)}" in replayer.state_view.value
    replayer.episode_picker.value = "farmer-s2024-00000"
    assert replayer.step.value == 0
    assert replayer.step.max == corpus["farmer-s2024-00000"].n_steps


def test_enlarged_frames_keep_crisp_pixels():
    import numpy as np
    from matplotlib.image import imread
    import io
    from workbench.widgets import enlarged_png

    frame = np.zeros((64, 64, 3), np.uint8)
    frame[0, 0] = 255
    image = imread(io.BytesIO(enlarged_png(frame, scale=5)))
    assert image.shape[:2] == (320, 320)
    assert image[:5, :5, 0].min() == 1.0 and image[5, 5, 0] == 0.0


def test_a_resource_slider_moved_back_to_the_task_app_weight_drops_its_override(corpus):
    start = SHAPED.with_changes(resource_overrides={"inventory": {"stone": 0.0}})
    tuner = Tuner(corpus, start)
    assert tuner.resource_sliders["stone"].value == 0.0
    tuner.resource_sliders["stone"].value = 0.15  # the task app's own weight
    assert tuner.config.resource_overrides == {}


def test_compare_shows_two_configs_side_by_side(corpus):
    from workbench.alignment import misranked_pairs
    from workbench.scoring import compare
    from workbench.widgets import Compare

    recommended = RewardConfig.from_file(REPO / "configs" / "recommended.yaml")
    view = Compare(corpus, {"shaped": SHAPED, "recommended": recommended})
    assert (view.picker_a.value, view.picker_b.value) == ("shaped", "recommended")
    expected = compare(corpus, SHAPED, recommended).episodes
    assert list(view.comparison.episodes["difference"]) == pytest.approx(list(expected["difference"]), abs=1e-12)
    worst = misranked_pairs(view.comparison.a).iloc[0]
    assert f"worst: {worst.paid_more} ({worst.achievements_paid_more} achievements" in view.summary.value
    assert f"over {worst.progressed_more} ({worst.achievements_progressed_more}," in view.summary.value
    assert "0 episode pair(s)" in view.summary.value  # recommended ranks no pair against progress
    assert view.figure.value[:4] == b"\x89PNG"
    assert "farmer-s2024-00001" in view.episodes_view.value and "rank_b" in view.episodes_view.value
    assert "return_per_achievement_b" not in view.summary.value  # shown, not as raw column names
    assert "<td>farmer</td>" in view.summary.value

    view.swap()
    assert (view.picker_a.value, view.picker_b.value) == ("recommended", "shaped")
    assert list(view.comparison.episodes["difference"]) == pytest.approx(list(-expected["difference"]), abs=1e-12)


def test_compare_takes_a_tuned_config_and_names_bad_choices(corpus):
    from workbench.widgets import Compare

    view = Compare(corpus, {"shaped": SHAPED})
    assert view.comparison.episodes["difference"].abs().max() == 0.0  # A == B until told otherwise
    tuner = Tuner(corpus, SHAPED)
    tuner.weight_sliders["collect_diamond"].value = 7.5
    view.add("tuned", tuner.config, side="b")
    assert view.picker_b.value == "tuned" and view.picker_a.value == "shaped"
    assert list(view.picker_a.options) == ["shaped", "tuned"]
    assert list(view.comparison.b.episodes["reward_sum"]) == pytest.approx(list(tuner.scores.episodes["reward_sum"]), abs=1e-12)
    with pytest.raises(KeyError, match="b='missing' is not one of the configs"):
        Compare(corpus, {"shaped": SHAPED}, b="missing")
    with pytest.raises(ValueError, match="at least one named config"):
        Compare(corpus, {})
    with pytest.raises(ValueError, match="side must be"):
        view.add("x", SHAPED, side="c")


def test_the_tuner_redraws_its_figure_in_place_like_a_fresh_one(corpus):
    from workbench.widgets import figure_png, returns_figure

    tuner = Tuner(corpus, SHAPED)
    figure = tuner._plot
    tuner.strategy.value = "consistent"
    tuner.lam.value = -1.0
    assert tuner._plot is figure  # redrawn, not rebuilt
    fresh = returns_figure(tuner.scores, corpus)
    figure_png(fresh)
    ax, want = figure.axes[0], fresh.axes[0]
    assert [bar.get_height() for bar in ax.containers[0]] == list(tuner.scores.episodes["reward_sum"])
    assert ax.get_ylim() == pytest.approx(want.get_ylim()) and ax.get_title() == want.get_title()


def test_the_replayer_moves_its_cursor(corpus):
    from workbench.widgets import Replayer

    replayer = Replayer(corpus, SHAPED, episode="scripted-s2024-00000")
    figure = replayer._plot
    replayer.step.value = 40  # one action per decision: decision 40
    assert replayer._plot is figure and list(replayer._cursor.get_xdata()) == [40, 40]
    replayer.episode_picker.value = "farmer-s2024-00000"
    assert replayer._plot is not figure  # a new episode, a new figure
