"""The app's Live page without a browser: the follow switch watches a folder into a target corpus,
scores each new episode under the session's configs, names a corrupt file and goes on, refuses a
missing source with a message, and stops."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import REPO
from helpers.polling import until

from workbench.data.storage import load_corpus
from workbench.views.app.live_page import LivePage
from workbench.views.app.options import AppOptions
from workbench.views.app.session import AppSession

TASKAPP = REPO / "workbench" / "data" / "shipped" / "sample_imports" / "taskapp"


def _write(folder: Path, run_id: str) -> None:
    document = json.loads((TASKAPP / "per_achievement_env_lambda_half.json").read_text())
    document["run_id"] = run_id
    (folder / f".{run_id}").write_text(json.dumps(document))
    (folder / f".{run_id}").rename(folder / f"{run_id}.json")


def test_follow_switch_watches_scores_and_reports(tmp_path):
    run, target = tmp_path / "run", tmp_path / "corpus"
    run.mkdir()
    session = AppSession(AppOptions(corpus=None, workspace=tmp_path / "ws"))
    page = LivePage(session)  # what the Live tab makes when first shown
    page.source.value, page.target.value, page.kind.value = str(run), str(target), "rollouts"
    page.follow.value = True
    try:
        assert page.follow.description == "Following" and page.live is not None
        _write(run, "first-run")
        until(lambda: page.live is not None and len(page.live) == 1, "the first episode")
        (run / "broken.json").write_text("{ not json")
        _write(run, "second-run")
        until(lambda: len(page.live) == 2 and page.problems, "the second episode and the problem")
        assert "broken.json" in page.problems[0] and "broken.json" in page.report.value
        table = page.live.episodes()
        assert set(table["config"]) == set(session.configs) and len(table) == 2 * len(session.configs)
        until(lambda: "second-run" in page.counter.value and page.timeline.redraws >= 2, "the redraw")
    finally:
        page.follow.value = False
    assert page.follow.description == "Follow"
    assert sorted(load_corpus(target).ids) == ["first-run", "second-run"]


def test_a_bad_source_is_a_message_and_nothing_follows(tmp_path):
    session = AppSession(AppOptions(corpus=None, workspace=tmp_path / "ws"))
    page = LivePage(session)  # what the Live tab makes when first shown
    (tmp_path / "no-such-run.txt").write_text("a file, not a run folder nor a trace database")
    page.source.value, page.target.value = str(tmp_path / "no-such-run.txt"), str(tmp_path / "corpus")
    page.follow.value = True
    assert page.follow.value is False and page.live is None
    assert "no-such-run.txt" in page.status.text
    page.source.value = ""
    page.follow.value = True
    assert "give a source folder" in page.status.text


def test_replay_page_goes_back_to_the_session_replayer(tmp_path):
    """A click in the Live timeline shows a Replayer of the followed corpus; a click in the Tuner
    afterwards brings the session's own Replayer back to the Replay page."""
    from workbench.data.sample import sample_corpus
    from workbench.views.widgets import Replayer

    session = AppSession(AppOptions(corpus=sample_corpus(), workspace=tmp_path / "ws"))
    corpus = session.corpus
    session.replayer_view.need()  # what the Replay page does when first shown
    until(lambda: session.replayer is not None, "the Replayer built")
    own = session.replayer
    followed = Replayer(corpus[:2], next(iter(session.configs.values())))
    session.replayer_view.show(followed)  # what LivePage._open does
    session.show_replay(corpus.ids[3])
    assert session.replayer_view.shown.value is own and own.episode == corpus.ids[3]


def test_the_over_optimisation_watch_is_on_the_page_and_marks_the_timeline(tmp_path):
    """The watch follows with the timeline (too few episodes: how many more it needs), its
    declines are ruled on the timeline, and an episode opened in it shows on the Replay page
    under the config it was opened for."""
    from workbench.views.app.common import REPLAY

    run, target = tmp_path / "run", tmp_path / "corpus"
    run.mkdir()
    session = AppSession(AppOptions(corpus=None, workspace=tmp_path / "ws"))
    page = LivePage(session)  # what the Live tab makes when first shown
    page.source.value, page.target.value, page.kind.value = str(run), str(target), "rollouts"
    page.follow.value = True
    try:
        watch, timeline = page.watch, page.timeline
        assert watch is not None and timeline is not None and list(page.body.children) == [timeline, watch]
        _write(run, "first-run")
        _write(run, "second-run")
        until(lambda: "2 episode(s) so far" in watch.summary.value, "the watch redrawn")
        assert "it needs at least 12 in arrival order (10 more)" in watch.summary.value
        last = list(session.configs)[-1]
        watch.declines = {last: "second-run"}  # what an alarm on the last config sets
        until(lambda: timeline.decline_lines.visible, "the rule on the timeline")
        assert "the decline began at episode <code>second-run</code>" in timeline.legend.value
        watch.buttons[last].click()  # its button opens the episode where the decline began
        until(lambda: session.page.value == REPLAY, "the Replay page")
        shown = session.replayer_view.shown.value
        assert shown.episode == "second-run" and shown.config is session.configs[last]
    finally:
        page.follow.value = False
