"""Picks as events (issue 42): one immutable ``Pick``, one ``link``, and every view (the notebook
Replayer, the Timeline's own, the app's Replay page, the Live page's) opens a pick at the same decision."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers.polling import until

from workbench.core.config import RewardConfig
from workbench.data.sample import sample_corpus
from workbench.scoring import score
from workbench.scoring.incremental import LiveScores
from workbench.views.app.live_page import open_pick
from workbench.views.app.options import AppOptions
from workbench.views.app.session import AppSession
from workbench.views.widgets import Compare, Pick, Replayer, Timeline, Tuner, link

CONFIG = RewardConfig(strategy="per_achievement", weights={"collect_wood": 2.0})


def _best(corpus, config: RewardConfig, episode: str) -> int:
    """The episode's highest-paying decision under ``config``, from the scored decisions table
    (the first of equals, as numpy's argmax takes it), apart from any view."""
    rows = score(corpus, config).decisions
    rows = rows[rows["episode"] == episode]
    return int(rows["decision"].to_numpy()[int(np.argmax(rows["reward"].to_numpy()))])


def test_a_pick_is_an_immutable_event_heard_each_time_with_no_pass_through_none():
    corpus = sample_corpus()
    tuner = Tuner(corpus, CONFIG)
    picks: list[Pick] = []
    episodes: list[str | None] = []
    tuner.observe(lambda change: picks.append(change["new"]), "picked")
    tuner.observe(lambda change: episodes.append(change["new"]), "episode")
    tuner.open_episode(corpus.ids[2])
    tuner.open_episode(corpus.ids[2])  # the same episode again: heard again
    assert [(p.episode, p.decision, p.source) for p in picks] == [(corpus.ids[2], None, "tuner")] * 2
    assert picks[0] is not picks[1] and picks[0] != picks[1]  # two events, never equal
    assert episodes == [corpus.ids[2]]  # the state changed once, and never through None
    with pytest.raises(dataclasses.FrozenInstanceError):
        picks[0].decision = 3  # type: ignore[misc]
    assert Pick("x").opens_at == "best" and Pick("x", 0).opens_at == 0 and Pick("x", 7).opens_at == 7


def test_every_view_opens_a_pick_at_the_same_decision(tmp_path):
    corpus = sample_corpus()
    episode = corpus.ids[3]
    best = _best(corpus, CONFIG, episode)
    assert best > 1  # a decision other than the start, so "at the start" would differ
    # A notebook: the Tuner's pick, linked to a Replayer.
    tuner, replayer = Tuner(corpus, CONFIG), Replayer(corpus, RewardConfig(strategy="consistent"))
    link(tuner, replayer)
    tuner.open_episode(episode)
    assert replayer.config is tuner.config and replayer.decision_at(replayer.step) == best
    # Compare's pick, linked the same way (its first compared config is the one it scores under).
    compare, other = Compare(corpus, {"a": RewardConfig(strategy="consistent"), "b": CONFIG}), Replayer(corpus, CONFIG)
    link(replayer=other, compare=compare)
    compare._on_pick(compare._picked.index(corpus.ids.index(episode)))  # what a click on its point calls
    assert other.decision_at(other.step) == best
    # The Timeline's own Replayer.
    timeline = Timeline(LiveScores(corpus, {"wood": CONFIG}), reps=20)
    timeline.open_episode(episode)
    assert timeline.replayer is not None and timeline.replayer.decision_at(timeline.replayer.step) == best
    # The app: a pick of its Tuner, and the Live page's pick of its timeline.
    session = AppSession(AppOptions(corpus=corpus, workspace=tmp_path / "ws"))
    session.open_pick(Pick(episode, source="tuner"), CONFIG)
    until(lambda: session.replayer is not None and session.replayer.episode == episode, "the Replay page")
    until(lambda: session.replayer.decision_at(session.replayer.step) == best, "the pick's decision")
    open_pick(session, LiveScores(corpus, {"wood": CONFIG}), Pick(episode, source="timeline"), CONFIG)
    shown = session.replayer_view.shown.peek()
    assert shown is not session.replayer and shown.decision_at(shown.step) == best
    # A pick naming a decision opens there, everywhere (a certificate's loop, a deep link).
    replayer.open_pick(Pick(episode, 2, "certificate"))
    assert replayer.decision_at(replayer.step) == 2


def test_one_link_sends_a_tuned_config_once_to_a_compare_or_to_the_app():
    corpus = sample_corpus()
    tuner = Tuner(corpus, CONFIG)
    sent: list[tuple[str, RewardConfig]] = []
    link(tuner, compare=lambda name, config: sent.append((name, config)))
    link(tuner, compare=lambda name, config: sent.append((name, config)))  # another function: heard too
    tuner.send_to_compare()
    assert [name for name, _ in sent] == ["tuned", "tuned"]
    compare = Compare(corpus, {"a": RewardConfig(strategy="consistent")})
    link(tuner, compare=compare)
    link(tuner, compare=compare)  # the same Compare twice: linked once
    tuner.controls.compare_name.value = "wood"
    tuner.send_to_compare()
    assert list(compare.configs) == ["a", "wood"] and compare.others[0] == "wood"
