"""Each part's events table: written with the part, read instead of decoding the decisions
table when its digest matches, and never trusted over the decisions it came from."""

from __future__ import annotations

import logging
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.episodes import make_episode, open_from_decisions

from workbench.core.crafter_facts import ACHIEVEMENTS, INITIAL_INVENTORY
from workbench.data.episodes import Corpus, Episode
from workbench.data.episodes.events import DecisionEvents, decision_events
from workbench.data.sample import sample_corpus
from workbench.data.storage import add_events_tables, load_corpus, save_corpus, stream
from workbench.data.storage.events_table import DIGEST_KEY, file_digest
from workbench.data.storage.layout import MARKER, committed_parts, part_file
from workbench.errors import CorpusFormatError, CorpusValueError


def _hand_episode() -> Episode:
    """Three decisions: wood and its count rise (Crafter pays 1.0), then stone and its count,
    then drink falls 9 -> 8 (Crafter pays -0.1)."""
    inventory = dict(INITIAL_INVENTORY)
    counts = dict.fromkeys(ACHIEVEMENTS, 0)
    states = []
    for change in [{}, {"wood": 1, "collect_wood": 1}, {"stone": 1, "collect_stone": 1}, {"drink": 8}]:
        for key, value in change.items():
            (counts if key in counts else inventory)[key] = value
        states.append(
            {
                "inventory": dict(inventory),
                "achievements_counts": dict(counts),
                "achievements_status": {name: c > 0 for name, c in counts.items()},
            }
        )
    return Episode.from_states("hand", states, [["do"]] * 3, env_reward=[1.0, 0.0, -0.1])


def _events_path(root):
    (part,) = committed_parts(root)
    return part_file(root, "events", part)


def _same_events(got: DecisionEvents, want: DecisionEvents) -> None:
    assert isinstance(got, DecisionEvents) and isinstance(want, DecisionEvents)
    got_arrays = got.arrays()
    for key, value in want.arrays().items():
        assert got_arrays[key].dtype == value.dtype, key
        np.testing.assert_array_equal(got_arrays[key], value, err_msg=key)


def _counting_decision_reads(monkeypatch) -> list:
    """The calls of the decisions read (one per part read from its decisions table), as they happen."""
    reads: list = []
    original = stream.part_events
    monkeypatch.setattr(stream, "part_events", lambda *a: reads.append(a) or original(*a))
    return reads


def test_the_events_table_of_a_hand_made_episode_holds_its_events(tmp_path):
    """Worked by hand: slots are the 16 items then the 22 counts (wood 5, stone 6, collect_stone
    16 + 5 = 21, collect_wood 16 + 6 = 22); the drink falling is no gain; Crafter's 0.0 at
    decision 1 is no reward event."""
    save_corpus(Corpus([_hand_episode()]), tmp_path)
    row = pq.read_table(_events_path(tmp_path)).to_pylist()[0]
    names = [False] * 22
    names[5] = names[6] = True  # collect_stone, collect_wood
    assert row == {
        "episode": "hand",
        "decisions": 3,
        "steps": 3,
        "reset_status": [False] * 22,
        "final_status": names,
        "ever_status": names,
        "seen_status": names,
        "reward_decision": [0, 2],
        "reward_value": [1.0, -0.1],
        "unlock_decision": [0, 1],
        "unlock_name": [6, 5],
        "unlock_ordinal": [0, 0],
        "unlock_first": [True, True],
        "gain_decision": [0, 0, 1, 1],
        "gain_slot": [5, 22, 6, 21],
        "gain_delta": [1, 1, 1, 1],
    }
    table = pq.read_table(_events_path(tmp_path))
    decisions = part_file(tmp_path, "decisions", committed_parts(tmp_path)[0])
    assert table.schema.metadata[DIGEST_KEY].decode() == file_digest(decisions)
    assert (tmp_path / MARKER).read_text().count('"events"') == 0  # older workbenches read the folder as before


def _corpus() -> Corpus:
    """Random episodes of many lengths and the sample's real ones."""
    episodes = [make_episode(f"m{i}", decisions=1 + 7 * i, seed=i) for i in range(5)]
    return Corpus(episodes + list(sample_corpus())[:4])


@pytest.mark.parametrize("parts", [1, 3])
def test_opening_reads_the_events_the_decisions_read_computes(tmp_path, monkeypatch, parts):
    """Parts numbered across one another: the events table's events equal, array by array and
    dtype by dtype, those computed from the decisions table and from the episodes in memory."""
    corpus = _corpus()
    for chunk in np.array_split(np.arange(len(corpus)), parts):
        save_corpus(corpus[[int(i) for i in chunk]], tmp_path)
    decision_reads = _counting_decision_reads(monkeypatch)
    from_tables = load_corpus(tmp_path).stored_events()
    assert not decision_reads  # every part's events came from its events table
    with monkeypatch.context() as patch:
        open_from_decisions(patch)
        from_decisions = load_corpus(tmp_path).stored_events()
    assert len(decision_reads) == len(committed_parts(tmp_path))
    _same_events(from_tables[0], from_decisions[0])
    _same_events(from_tables[0], decision_events(corpus.decision_arrays()))


def test_parts_written_before_events_tables_open_from_their_decisions(tmp_path):
    """A folder of old parts (no events folder) and a new one: each opens its own way."""
    save_corpus(_corpus()[:3], tmp_path)
    shutil.rmtree(tmp_path / "events")  # as an older workbench left it
    save_corpus(_corpus()[3:], tmp_path)
    assert len(list((tmp_path / "events").iterdir())) == 1
    opened = load_corpus(tmp_path)
    _same_events(opened.stored_events()[0], decision_events(_corpus().decision_arrays()))


def _rewrite(path, change) -> None:
    """Write ``path``'s table again through ``change`` (a table to a table), keeping its digest."""
    table = pq.read_table(path)
    changed = change(table)
    pq.write_table(changed.replace_schema_metadata(table.schema.metadata), path)


def _set_list(table: pa.Table, name: str, row: int, values: list) -> pa.Table:
    rows = table.column(name).to_pylist()
    rows[row] = values
    return table.set_column(table.schema.get_field_index(name), name, pa.array(rows, table.schema.field(name).type))


DAMAGE = {
    "not Parquet": None,
    "a column missing": lambda t: t.drop_columns(["gain_delta"]),
    "an episode missing": lambda t: t.slice(0, t.num_rows - 1),
    "episodes swapped": lambda t: t.take([1, 0, *range(2, t.num_rows)]),
    "steps edited": lambda t: t.set_column(2, "steps", pa.array([s + 1 for s in t.column("steps").to_pylist()])),
    "paired lists of other lengths": lambda t: _set_list(t, "gain_slot", 1, [5]),
    "a decision past the episode": lambda t: _set_list(t, "reward_decision", 0, [0, 1, 2, 4]),  # of 4 decisions
    "events out of order": lambda t: _set_list(
        t, "gain_decision", 2, list(reversed(t.column("gain_decision")[2].as_py()))
    ),
    "a slot outside 0..37": lambda t: _set_list(t, "gain_slot", 2, [38] * len(t.column("gain_slot")[2].as_py())),
    "a gain of 0": lambda t: _set_list(t, "gain_delta", 2, [0] * len(t.column("gain_delta")[2].as_py())),
    "a +0.0 reward": lambda t: _set_list(t, "reward_value", 3, [0.0] * len(t.column("reward_value")[3].as_py())),
    "rewards not summing to env_return": lambda t: _set_list(
        t, "reward_value", 3, [v * 2 for v in t.column("reward_value")[3].as_py()]
    ),
    "a status of 21 names": lambda t: _set_list(t, "final_status", 0, [True] * 21),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_events_table_is_named_and_the_decisions_read_instead(tmp_path, caplog, damage):
    corpus = Corpus([make_episode(f"d{i}", decisions=4 + i, seed=i) for i in range(5)])
    save_corpus(corpus, tmp_path)
    path = _events_path(tmp_path)
    if DAMAGE[damage] is None:
        path.write_bytes(b"not a table")
    else:
        _rewrite(path, DAMAGE[damage])
    with caplog.at_level(logging.WARNING, logger="workbench.data.storage.events_table"):
        opened = load_corpus(tmp_path)
    (record,) = caplog.records
    assert (
        record.getMessage().startswith(str(path))
        and "reading the part's decisions table instead" in record.getMessage()
    )
    _same_events(opened.stored_events()[0], decision_events(corpus.decision_arrays()))


def test_an_events_table_of_other_decisions_is_not_used(tmp_path, monkeypatch, caplog):
    """The decisions table rewritten (same values, other bytes): its digest differs, so its
    events are computed from it again, silently; a value changed in it is found by that read."""
    corpus = Corpus([make_episode(f"d{i}", decisions=4 + i, seed=i) for i in range(3)])
    save_corpus(corpus, tmp_path)
    decisions = part_file(tmp_path, "decisions", committed_parts(tmp_path)[0])
    pq.write_table(pq.read_table(decisions), decisions, compression="gzip")
    decision_reads = _counting_decision_reads(monkeypatch)
    with caplog.at_level(logging.WARNING):
        opened = load_corpus(tmp_path)
    assert len(decision_reads) == 1 and not caplog.records
    _same_events(opened.stored_events()[0], decision_events(corpus.decision_arrays()))


def test_a_failed_write_leaves_no_events_table(tmp_path, monkeypatch):
    """The events table is written before the commit record: a write failing after it removes it."""
    from workbench.data.storage import columnar

    save_corpus(Corpus([make_episode("a")]), tmp_path)

    def broken(rows):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(columnar, "episodes_table", broken)
    with pytest.raises(Exception, match="No space left on device"):
        save_corpus(Corpus([make_episode("b")]), tmp_path)
    assert len(list((tmp_path / "events").iterdir())) == 1  # the first part's only


def test_damaged_bytes_anywhere_in_an_events_table_never_change_what_opens(tmp_path, caplog):
    """64 zero bytes at 40 places of the events table (pages carry checksums, the digest is in
    the footer): each open reads the events from it intact, or reads the decisions instead;
    never other events, never an error."""
    corpus = Corpus([make_episode(f"d{i}", decisions=30 + i, seed=i) for i in range(4)])
    save_corpus(corpus, tmp_path)
    path = _events_path(tmp_path)
    blob = path.read_bytes()
    expected = decision_events(corpus.decision_arrays())
    fell_back = 0
    for position in range(0, len(blob) - 64, max(1, len(blob) // 40)):
        damaged = bytearray(blob)
        damaged[position : position + 64] = bytes(64)
        path.write_bytes(bytes(damaged))
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="workbench.data.storage.events_table"):
            _same_events(load_corpus(tmp_path).stored_events()[0], expected)
        fell_back += bool(caplog.records)
    assert fell_back > 20


def test_older_parts_are_given_events_tables_once(tmp_path, monkeypatch, capsys):
    """Two parts written before events tables and one after, then a part whose decisions table
    changed: ``workbench corpus events`` writes exactly the missing and stale ones, after which
    every part opens from its events table, with the events the decisions give."""
    from workbench.cli import main

    corpus = _corpus()
    save_corpus(corpus[:3], tmp_path)
    save_corpus(corpus[3:6], tmp_path)
    shutil.rmtree(tmp_path / "events")  # as an older workbench left them
    save_corpus(corpus[6:], tmp_path)
    first, second, third = committed_parts(tmp_path)
    assert main(["corpus", "events", str(tmp_path)]) == 0
    assert capsys.readouterr().out == f"{tmp_path}: 2 part(s) given an events table, 1 already had a current one\n"
    decisions = part_file(tmp_path, "decisions", third)
    pq.write_table(pq.read_table(decisions), decisions, compression="gzip")  # same values, other bytes
    assert add_events_tables(tmp_path) == ([third], 2)
    assert add_events_tables(tmp_path) == ([], 3)
    reads = _counting_decision_reads(monkeypatch)
    _same_events(load_corpus(tmp_path).stored_events()[0], decision_events(corpus.decision_arrays()))
    assert not reads


def test_events_tables_are_never_made_from_bad_decisions_or_outside_a_corpus(tmp_path):
    save_corpus(Corpus([make_episode("a", decisions=5)]), tmp_path / "corpus")
    shutil.rmtree(tmp_path / "corpus" / "events")
    (part,) = committed_parts(tmp_path / "corpus")
    decisions = part_file(tmp_path / "corpus", "decisions", part)
    table = pq.read_table(decisions)
    wood = table.schema.get_field_index("inventory_wood")
    pq.write_table(table.set_column(wood, "inventory_wood", pa.array([12] * table.num_rows, pa.uint8())), decisions)
    with pytest.raises(CorpusValueError, match=rf"{decisions}: episode 'a': decision 0, column 'inventory_wood': 12"):
        add_events_tables(tmp_path / "corpus")
    assert not list((tmp_path / "corpus" / "events").iterdir())
    (tmp_path / "plain").mkdir()
    with pytest.raises(CorpusFormatError, match=r"corpus.json: not found"):
        add_events_tables(tmp_path / "plain")
    assert not list((tmp_path / "plain").iterdir())


def test_the_events_are_one_typed_record_whose_fields_the_table_stores():
    """The table stores every field of ``DecisionEvents`` but the three the episodes table
    gives (``starts`` from the lengths, ``lengths`` as ``decisions``, ``env_return``)."""
    from workbench.data.episodes.events import EVENT_FIELDS
    from workbench.data.storage.events_table import EVENT_GROUPS, STATUS_KEYS

    stored = set(STATUS_KEYS) | {name for group in EVENT_GROUPS.values() for name, _ in group}
    assert set(EVENT_FIELDS) == stored | {"starts", "lengths", "env_return"}
    events = decision_events(_corpus().decision_arrays())
    halves = [decision_events(c.decision_arrays(), first) for c, first in _halves(_corpus())]
    _same_events(DecisionEvents.join(halves), events)


def _halves(corpus: Corpus) -> list[tuple[Corpus, int]]:
    """The corpus in two, each with the number of its first decision."""
    first, second = corpus[:4], corpus[4:]
    return [(first, 0), (second, first.n_decisions)]
