"""``loop_table`` reads every episode of a batch at once: the same table as the definition, one
episode's ``Track`` and ``loop_laps`` at a time (the way it was computed before), on stored and
in-memory corpora with every loop kind, rises of two in one decision, several batches."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers.hand_episodes import HONEST, hand_episode

from workbench.analysis.audit import _top_paid_loops
from workbench.analysis.diagnostics.loop_table import LOOP_COLUMNS, loop_table
from workbench.analysis.diagnostics.loops import LOOPS, loop_laps, tracks
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.named_configs import load_config
from workbench.core.reward import PER_ACHIEVEMENT
from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus, search_corpus
from workbench.data.storage import load_corpus, save_corpus
from workbench.scoring import score, slot_weights

CONFIGS = {
    "shaped": load_config("configs/upstream_shaped.yaml"),
    "half": RewardConfig(strategy="per_achievement", weights={}, indicator_lambda=0.5),
    "consistent": RewardConfig(strategy="consistent"),
}


def reference_table(corpus: Corpus, config: RewardConfig, returns) -> pd.DataFrame:
    """The definition: per episode (its ``Track``) and loop, ``loop_laps``; the pay of the rises
    of the loop's slots over its decisions."""
    pays = np.zeros(len(INVENTORY_ITEMS) + len(ACHIEVEMENTS))
    if config.effective_strategy == PER_ACHIEVEMENT:
        pays = config.effective_lambda * slot_weights(config.resource_weights)
    policies = corpus.index["policy"].astype(str).tolist()
    rows = []
    for k, (episode, track) in enumerate(zip(corpus.ids, tracks(corpus))):
        gains = np.maximum(np.diff(np.hstack([track.inventory, track.counts]), axis=0), 0)
        for loop in LOOPS:
            laps = loop_laps(track, loop)
            if not len(laps):
                continue
            first, last = int(laps[:, 0].min()), int(laps[-1, 1])
            slots = np.array(
                [INVENTORY_ITEMS.index(i) for i in loop.items]
                + [len(INVENTORY_ITEMS) + ACHIEVEMENTS.index(c) for c in loop.counts]
            )
            paid = float((gains[first - 1 : last][:, slots] @ pays[slots]).sum())
            share = paid / abs(returns[k]) if returns[k] else np.nan
            flagged = len(laps) > loop.allowed and paid > 0
            rows.append((episode, policies[k], loop.name, loop.kind, len(laps), loop.allowed, first, last))
            rows[-1] += (paid, share, flagged)
    return pd.DataFrame(rows, columns=LOOP_COLUMNS)


def hand_loops():
    """Every loop kind by hand, with rises of two in one decision (two laps ending together)."""
    stones = [{"stone": 1, "collect_stone": n, "drink": 9 - n % 2} for n in range(1, 9)]
    stones += [{"stone": 0, "place_stone": 2, "collect_stone": 9}, {"place_stone": 4}, {"place_stone": 5}]
    saplings = [
        change
        for n in range(1, 7)
        for change in ({"sapling": 1, "collect_sapling": n}, {"sapling": 0, "place_plant": n})
    ]
    tables = [{"wood": 0, "place_table": n if n != 3 else 4} for n in range(1, 6)]
    tools = [{"make_wood_pickaxe": 1}, {"make_wood_pickaxe": 3}, {}, {"make_wood_pickaxe": 4}]
    return [
        hand_episode("stones", stones, policy="hacker"),
        hand_episode("saplings", saplings, policy="hacker"),
        hand_episode("tables", tables + tools, policy="builder"),
        hand_episode("honest", HONEST, policy="honest"),
    ]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_batched_table_is_the_definitions_on_stored_and_in_memory_corpora(tmp_path, name):
    config = CONFIGS[name]
    in_memory = Corpus.concat([Corpus(hand_loops()), sample_corpus()])
    save_corpus(in_memory, tmp_path / "c")
    for corpus in (in_memory, load_corpus(tmp_path / "c")):
        returns = score(corpus, config).reward_sum
        expected = reference_table(corpus, config, returns)
        assert set(expected["kind"]) == {"cycle", "remake", "refill"}  # every kind is exercised
        pd.testing.assert_frame_equal(loop_table(corpus, config, returns), expected, check_exact=True)


def test_the_batched_table_is_the_definitions_across_several_batches():
    corpus = search_corpus()  # ~52k decisions: two batches of decision_batches
    assert sum(1 for _ in corpus.decision_batches()) > 1
    returns = score(corpus, CONFIGS["shaped"]).reward_sum
    expected = reference_table(corpus, CONFIGS["shaped"], returns)
    pd.testing.assert_frame_equal(loop_table(corpus, CONFIGS["shaped"], returns), expected, check_exact=True)


def test_each_episodes_top_paid_loop_is_the_first_largest_excess_as_idxmax_finds_it():
    corpus = Corpus.concat([Corpus(hand_loops()), sample_corpus()])
    config = CONFIGS["shaped"]
    table = loop_table(corpus, config, score(corpus, config).reward_sum)
    top = _top_paid_loops(table)
    for episode in corpus.ids:
        mine = table[(table["episode"] == episode) & (table["paid"] > 0)]
        if mine.empty:
            assert episode not in top
            continue
        expected = mine.loc[(mine["laps"] - mine["allowed"]).idxmax()]
        assert top[episode].loop == expected["loop"] and top[episode].first == expected["first"]


def test_a_stored_episodes_track_reads_each_decisions_own_actions_as_track_of_does(tmp_path):
    # Row 0 of an episode is the state after reset (no actions); decision j's actions lead to
    # row j + 1. ``track_of`` reads them from ``episode.actions[j]``, an independent path: the
    # stored columns' ``played`` must say, decision by decision, what that list says.
    from workbench.analysis.diagnostics.loops import ASKED, track_of

    corpus = sample_corpus()
    save_corpus(corpus, tmp_path / "c")
    stored = load_corpus(tmp_path / "c")
    asked_any = 0
    for episode, track in zip(corpus, tracks(stored)):
        expected = track_of(episode)
        np.testing.assert_array_equal(track.steps, expected.steps)
        for name in ASKED:
            by_hand = np.array([name in actions for actions in episode.actions], dtype=bool)
            np.testing.assert_array_equal(track.played[name], by_hand)
            asked_any += int(by_hand.sum())
    assert asked_any > 0  # the sample's players do sleep: the check compared something
