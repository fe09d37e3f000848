"""The labelled benchmark: its roster and labels, the shipped corpus's spans, and that a seed remakes it."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.episodes import assert_same_episode, make_episode

from workbench.cli import main
from workbench.data.benchmarks import (
    EXPLOIT,
    HELD_OUT,
    HONEST,
    ROSTER,
    TUNE,
    honest_episodes,
    load_benchmark,
    make_benchmark,
)
from workbench.data.benchmarks.roster import split_of
from workbench.data.episodes import Corpus
from workbench.data.policies.exploits import LOOPS, loop_spans
from workbench.data.policies.held_out import HELD_OUT_LOOPS
from workbench.data.storage import save_corpus
from workbench.errors import CorpusError, RecordingError

#: An action each hacker's loop cannot run without (read off its goals in exploits.py and
#: loop_goals.py; a tuple: one of them).
LOOP_ACTIONS: dict[str, str | tuple[str, ...]] = {
    "stone_looper": "place_stone",
    "farmer": "place_stone",
    "late_stone_looper": "place_stone",
    "sapling_looper": "place_plant",
    "part_time_looper": "do",
    "drinker": "do",
    "eater": "do",
    "sleeper": "sleep",
    "wood_hoarder": "do",
    "tool_crafter": "do",
    "batch_looper": "place_stone",
    "cap_miner": "do",
    "cap_drinker": "do",
    "burst_looper": "do",
    # its loop starts at decision 250: a 400-step episode may end while it still walks to grass
    "late_batch_looper": ("do", "place_plant", "place_stone", "move_left", "move_right", "move_up", "move_down"),
    "rotating_looper": "do",
    "spread_sapling_looper": "place_plant",
    "table_rebuilder": "place_table",
    "night_drinker": "do",
}


@pytest.fixture(scope="module")
def shipped():
    return load_benchmark()


def test_loop_spans_join_consecutive_loop_decisions():
    assert loop_spans([]) == []
    assert loop_spans([False, True, True, False, True]) == [[1, 3], [4, 5]]
    assert loop_spans([True, True, True]) == [[0, 3]]


def test_the_roster_has_eight_or_more_hackers_and_honest_players_of_several_kinds():
    hackers = {e.name for e in ROSTER if e.label == EXPLOIT}
    honest = {e.name for e in ROSTER if e.label == HONEST}
    assert len(hackers) >= 8 and hackers == set(LOOPS) | set(HELD_OUT_LOOPS) == set(LOOP_ACTIONS)
    assert {"random", "scripted"} <= honest and sum(name.startswith("explorer") for name in honest) >= 3
    assert all(e.loop for e in ROSTER if e.label == EXPLOIT) and not any(e.loop for e in ROSTER if e.label == HONEST)


def test_splits_hold_out_whole_policies_and_odd_worlds():
    assert split_of("scripted", 0) == TUNE and split_of("scripted", 3) == HELD_OUT
    assert split_of("tool_crafter", 0) == HELD_OUT
    with pytest.raises(RecordingError, match="no benchmark policy 'nobody'"):
        split_of("nobody", 0)


def test_the_shipped_benchmark_is_labelled_by_policy(shipped):
    labels = shipped.labels
    assert list(labels["episode"]) == shipped.corpus.ids
    by_policy = labels.groupby("policy")["label"].agg(set)
    for e in ROSTER:
        assert by_policy[e.name] == {e.label}
    assert by_policy["taskapp_rollout"] == {HONEST}
    assert (labels.loc[labels["label"] == HONEST, "loop_decisions"] == 0).all()
    assert (labels.loc[labels["label"] == EXPLOIT, "loop_decisions"] > 0).all()
    assert set(labels["split"]) == {TUNE, HELD_OUT}
    assert set(shipped.split(HELD_OUT).labels["split"]) == {HELD_OUT}


def test_honest_episodes_are_the_benchmarks_honest_episodes_as_stored(tmp_path):
    # the audit's honest reference reads them without the roster (its players import Crafter)
    honest = honest_episodes()
    recorded = load_benchmark(rollouts=False)
    expected = recorded.corpus[(recorded.labels["label"] == HONEST).to_numpy()]
    assert honest.ids == expected.ids and len(honest) >= 8
    for mine, theirs in zip(honest, expected):
        assert_same_episode(mine, theirs)
    unlabelled = make_episode("stray")
    save_corpus(Corpus([unlabelled]), tmp_path / "stray")
    with pytest.raises(CorpusError, match="'stray' carries no benchmark labels"):
        honest_episodes(tmp_path / "stray")
    with pytest.raises(CorpusError, match="holds no benchmark episodes"):
        honest_episodes(tmp_path / "nothing")


def test_spans_lie_in_the_episode_and_hold_the_loops_actions(shipped):
    for episode, row in zip(shipped.corpus, shipped.labels.itertuples()):
        for start, stop in row.spans:
            assert 0 <= start < stop <= episode.n_decisions
        if row.label == EXPLOIT:
            inside = {a for start, stop in row.spans for d in range(start, stop) for a in episode.actions[d]}
            wanted = LOOP_ACTIONS[row.policy]
            assert {wanted} & inside if isinstance(wanted, str) else set(wanted) & inside, row.episode


def test_delayed_and_part_time_hackers_loop_only_when_built_to(shipped):
    labels = shipped.labels
    late = LOOPS["late_stone_looper"].start
    period = LOOPS["part_time_looper"].period
    for spans in labels.loc[labels["policy"] == "late_stone_looper", "spans"]:
        assert spans and all(start >= late for start, _ in spans)
    for spans in labels.loc[labels["policy"] == "part_time_looper", "spans"]:
        assert spans and all(d // period % 2 == 0 for start, stop in spans for d in range(start, stop))
    burst = LOOPS["burst_looper"]  # from decision 100, 30 looping decisions in every 100
    for spans in labels.loc[labels["policy"] == "burst_looper", "spans"]:
        assert spans and all(d >= burst.start and (d - burst.start) % 100 < 30 for a, b in spans for d in range(a, b))
    for spans in labels.loc[labels["policy"] == "late_batch_looper", "spans"]:
        assert spans and all(start >= LOOPS["late_batch_looper"].start for start, _ in spans)


def test_loading_a_folder_without_episodes_names_it(tmp_path):
    with pytest.raises(CorpusError, match="holds no benchmark episodes"):
        load_benchmark(tmp_path)


@pytest.mark.crafter
def test_the_same_seed_makes_the_same_episodes(tmp_path):
    args = dict(episodes=1, max_steps=30, policies=["random", "stone_looper"], frames=True, progress=False)
    make_benchmark(tmp_path / "a", **args)
    make_benchmark(tmp_path / "b", **args)
    a, b = load_benchmark(tmp_path / "a", rollouts=False), load_benchmark(tmp_path / "b", rollouts=False)
    assert a.corpus.ids == b.corpus.ids == ["random-s0-00000", "stone_looper-s0-00000"]
    for x, y in zip(a.corpus, b.corpus):
        assert x.metadata["seed"] == y.metadata["seed"]
        np.testing.assert_array_equal(x.frames.images[0], y.frames.images[0])
    # The random player's actions come from its seeded generator alone.
    assert a.corpus["random-s0-00000"].actions == b.corpus["random-s0-00000"].actions
    assert list(a.labels["label"]) == [HONEST, EXPLOIT]


def test_benchmark_make_help_counts_the_roster(capsys):
    with pytest.raises(SystemExit):
        main(["benchmark", "make", "--help"])
    hackers = sum(e.label == EXPLOIT for e in ROSTER)
    honest = sum(e.label == HONEST for e in ROSTER)
    assert f"({hackers} reward hackers, {honest} honest players)" in " ".join(capsys.readouterr().out.split())


@pytest.mark.crafter
def test_cli_benchmark_make(tmp_path, capsys):
    out = tmp_path / "bench"
    assert (
        main(
            [
                "benchmark",
                "make",
                "--out",
                str(out),
                "--policies",
                "sleeper",
                "--episodes",
                "1",
                "--max-steps",
                "20",
                "--quiet",
            ]
        )
        == 0
    )
    assert "recorded 1 episode(s)" in capsys.readouterr().out
    labels = load_benchmark(out, rollouts=False).labels
    assert list(labels["policy"]) == ["sleeper"] and list(labels["label"]) == [EXPLOIT]
    assert main(["benchmark", "make", "--out", str(tmp_path / "x"), "--policies", "nobody", "--quiet"]) == 2
    assert "no benchmark policy 'nobody'" in capsys.readouterr().err
