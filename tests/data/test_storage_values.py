"""Values are checked when written and when read: a violation names the episode, decision and column."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.episodes import make_episode, part_files

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.data.episodes import Corpus, Episode
from workbench.data.storage import load_corpus, save_corpus
from workbench.errors import CorpusFormatError, CorpusValueError, EpisodeValueError
from workbench.scoring import score

WOOD = INVENTORY_ITEMS.index("wood")
STONE = ACHIEVEMENTS.index("collect_stone")


def _fields(episode: Episode) -> dict:
    return {
        name: getattr(episode, name).copy()
        for name in ("inventory", "achievement_counts", "achievement_status", "player_pos", "env_reward", "done")
    }


def test_a_nan_inventory_is_refused_not_cast():
    fields = _fields(make_episode("ep"))
    inventory = fields["inventory"].astype(float)
    inventory[3, WOOD] = np.nan
    fields["inventory"] = inventory
    with pytest.raises(
        EpisodeValueError, match=r"episode 'ep': decision 3, inventory column 'wood': nan is not an integer"
    ):
        Episode(id="ep", actions=make_episode("ep").actions, **fields)
    inventory[3, WOOD] = 2.5
    with pytest.raises(EpisodeValueError, match=r"decision 3, inventory column 'wood': 2.5 is not an integer"):
        Episode(id="ep", actions=make_episode("ep").actions, **fields)
    inventory[3, WOOD] = 2.0  # a float holding an integer is fine
    assert Episode(id="ep", actions=make_episode("ep").actions, **fields).inventory[3, WOOD] == 2


def _with(column: str, row: int, index: int, value) -> Episode:
    episode = make_episode("ep", decisions=6)
    fields = _fields(episode)
    fields[column][row, index] = value
    if column == "achievement_counts":
        fields["achievement_status"] = fields["achievement_counts"] > 0
    return Episode(id="ep", actions=episode.actions, metadata=episode.metadata, **fields)


def _status_off(row: int) -> Episode:
    """Collect_stone counted twice by ``row`` while its status says not unlocked."""
    episode = make_episode("ep", decisions=6)
    fields = _fields(episode)
    fields["achievement_counts"][:, STONE] = [0, 1, 2, 2, 2, 3, 3]
    fields["achievement_status"] = fields["achievement_counts"] > 0
    fields["achievement_status"][row, STONE] = False
    return Episode(id="ep", actions=episode.actions, **fields)


@pytest.mark.parametrize(
    "build, words",
    [
        (lambda: _with("inventory", 4, WOOD, 10), r"decision 4, column 'inventory_wood': 10 is outside Crafter's 0..9"),
        (lambda: _with("inventory", 2, WOOD, -1), r"decision 2, column 'inventory_wood': -1 is outside Crafter's 0..9"),
        (lambda: _with("achievement_counts", 1, STONE, -3), r"decision 1, column 'count_collect_stone': -3 is outside"),
        (
            lambda: _with("achievement_counts", 5, STONE, 0) if _with("achievement_counts", 4, STONE, 7) else None,
            r"decision 5, column 'count_collect_stone'",
        ),
        (lambda: _status_off(3), r"decision 3, column 'status_collect_stone': False disagrees with the count 2"),
        (lambda: _with("player_pos", 2, 0, -5), r"decision 2, column 'pos_x': -5 is below -1"),
    ],
)
def test_out_of_range_values_are_refused_when_written(tmp_path, build, words):
    episode = build()
    with pytest.raises(EpisodeValueError, match=rf"episode 'ep': {words}"):
        save_corpus(Corpus([make_episode("fine"), episode]), tmp_path)
    assert not list(tmp_path.glob("*/part-*"))  # nothing written, not even the valid episode


def test_falling_counts_name_the_decision():
    episode = make_episode("ep", decisions=6)
    fields = _fields(episode)
    fields["achievement_counts"][:, STONE] = [0, 1, 2, 5, 4, 4, 4]
    fields["achievement_status"] = fields["achievement_counts"] > 0
    falling = Episode(id="ep", actions=episode.actions, **fields)
    with pytest.raises(
        EpisodeValueError,
        match=r"decision 4, column 'count_collect_stone': 4 is below the previous "
        r"decision's 5 \(counts never decrease within an episode\)",
    ):
        save_corpus(Corpus([falling]), "/nonexistent-never-created")


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_nan_or_infinite_rewards_and_metadata_are_refused(tmp_path, value):
    episode = make_episode("ep")
    episode.env_reward[2] = value
    with pytest.raises(
        EpisodeValueError, match=rf"episode 'ep': decision 3, column 'env_reward': {value!r} is not a finite"
    ):
        save_corpus(Corpus([episode]), tmp_path)
    episode = make_episode("ep")
    episode.metadata["note"] = {"nested": [1, value]}
    with pytest.raises(EpisodeValueError, match=rf"episode 'ep': metadata.note.nested\[1\] is {value!r}"):
        save_corpus(Corpus([episode]), tmp_path)
    assert not (tmp_path / "episodes").exists() or not list((tmp_path / "episodes").iterdir())


def test_values_are_checked_again_when_read(tmp_path):
    """A decisions table edited outside the workbench (inventory 12) is refused on opening,
    naming the file, episode, decision and column: never a silent cast."""
    save_corpus(Corpus([make_episode("a"), make_episode("b", seed=2)]), tmp_path)
    path = part_files(tmp_path, "decisions")[0]
    table = pq.read_table(path)
    wood = table.column("inventory_wood").to_numpy().copy()
    wood[7] = 12  # row 7 = episode b (rows 0..4 are a's), decision 2
    table = table.set_column(
        table.schema.get_field_index("inventory_wood"), "inventory_wood", pa.array(wood, pa.uint8())
    )
    pq.write_table(table, path)
    with pytest.raises(
        CorpusValueError, match=rf"{path}: episode 'b': decision 2, column 'inventory_wood': 12 is outside"
    ):
        load_corpus(tmp_path)


def test_a_stored_nan_reward_is_refused_when_read(tmp_path):
    save_corpus(Corpus([make_episode("a")]), tmp_path)
    path = part_files(tmp_path, "decisions")[0]
    table = pq.read_table(path)
    reward = table.column("env_reward").to_numpy().copy()
    reward[3] = np.nan
    pq.write_table(table.set_column(table.schema.get_field_index("env_reward"), "env_reward", pa.array(reward)), path)
    with pytest.raises(
        CorpusValueError, match=r"episode 'a': decision 3, column 'env_reward': nan is not a finite number"
    ):
        load_corpus(tmp_path)


def _edit_column(path, name: str, values) -> None:
    """Rewrite one column of a decisions table in place (as another tool might)."""
    table = pq.read_table(path)
    index = table.schema.get_field_index(name)
    pq.write_table(table.set_column(index, pa.field(name, values.type), values), path)


def test_a_status_that_disagrees_with_its_count_is_refused_when_the_states_are_read(tmp_path):
    """Opening never reads the status columns (scoring takes the status from the counts, so a
    wrong stored status cannot change a score); reading the state columns checks them."""
    memory = Corpus([make_episode("a"), make_episode("b", seed=2)])
    save_corpus(memory, tmp_path)
    path = part_files(tmp_path, "decisions")[0]
    status = pq.read_table(path).column("status_collect_stone").to_numpy().copy()
    status[6] = not status[6]  # row 6 = episode b, decision 1
    _edit_column(path, "status_collect_stone", pa.array(status))
    opened = load_corpus(tmp_path)
    config = RewardConfig(strategy="per_achievement")
    assert score(opened, config).reward.tolist() == score(Corpus(list(memory)), config).reward.tolist()
    refused = rf"{path}: episode 'b': decision 1, column 'status_collect_stone': "
    with pytest.raises(CorpusValueError, match=refused):
        opened.decision_arrays()
    with pytest.raises(CorpusValueError, match=refused):
        load_corpus(tmp_path)[1].achievement_status


@pytest.mark.parametrize("column", ["inventory_wood", "count_collect_stone", "env_reward", "actions"])
def test_a_missing_value_in_a_decisions_table_is_refused(tmp_path, column):
    """A table written by another tool may hold nulls: refused naming the column and row, never a number."""
    save_corpus(Corpus([make_episode("a", decisions=6)]), tmp_path)
    path = part_files(tmp_path, "decisions")[0]
    values = pq.read_table(path).column(column).to_pylist()
    values[4] = None
    kind = pq.read_table(path).schema.field(column).type
    _edit_column(path, column, pa.array(values, kind))
    with pytest.raises(CorpusFormatError, match=rf"{path}: row 4, column {column!r}: a missing value"):
        load_corpus(tmp_path)
