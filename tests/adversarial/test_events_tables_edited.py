"""An events table edited with its digest kept (issue 41's three edits: every gain x5, the unlock
lists cleared, unlocks and gains moved a decision later): opening never scores it, ``corpus
check`` names it, a forged one (digests recomputed) is caught by ``check --deep`` and replaced by
``corpus events --rebuild``; a table made by another ``decision_events`` version is not used."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import REPO

from workbench.cli import main
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.episodes.events import EVENTS_VERSION
from workbench.data.sample import sample_corpus
from workbench.data.storage import add_events_tables, check_corpus, load_corpus, save_corpus, stream
from workbench.data.storage.events_table import CONTENT_KEY, VERSION_KEY, content_digest
from workbench.data.storage.layout import committed_parts, part_file
from workbench.scoring import crafter_score, score

CONFIG = RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml")


def _lists(table: pa.Table, name: str) -> list[list]:
    return table.column(name).to_pylist()


def times_five(table: pa.Table) -> dict[str, list[list]]:
    """Every resource gain multiplied by 5 (the issue's first edit)."""
    return {"gain_delta": [[5 * d for d in row] for row in _lists(table, "gain_delta")]}


def unlocks_cleared(table: pa.Table) -> dict[str, list[list]]:
    """Every unlock list emptied (the second edit)."""
    names = ("unlock_decision", "unlock_name", "unlock_ordinal", "unlock_first")
    return {name: [[] for _ in range(table.num_rows)] for name in names}


def moved_later(table: pa.Table) -> dict[str, list[list]]:
    """Each unlock and gain one decision later, where the episode has room (the third edit:
    every sum kept, per-decision rewards moved)."""
    lengths = table.column("decisions").to_pylist()
    edited = {}
    for key in ("unlock_decision", "gain_decision"):
        rows = _lists(table, key)
        edited[key] = [[d + 1 for d in row] if row and row[-1] + 1 < n else row for row, n in zip(rows, lengths)]
    return edited


EDITS: dict[str, Callable[[pa.Table], dict[str, list[list]]]] = {
    "gains x5": times_five,
    "unlocks cleared": unlocks_cleared,
    "moved later": moved_later,
}


@pytest.fixture(scope="module")
def sample() -> Corpus:
    return sample_corpus().select(policy="scripted")


def saved(sample: Corpus, root: Path) -> Path:
    save_corpus(sample, root)
    return part_file(root, "events", committed_parts(root)[0])


def edit(path: Path, changes: dict[str, list[list]], *, forge: bool = False) -> None:
    """Rewrite the events table with ``changes``, its metadata kept (the decisions digest, the
    version, the content digest); ``forge`` recomputes the content digest too."""
    table = pq.read_table(path)
    for name, rows in changes.items():
        table = table.set_column(
            table.schema.get_field_index(name), name, pa.array(rows, table.schema.field(name).type)
        )
    metadata = dict(table.schema.metadata)
    if forge:
        metadata[CONTENT_KEY] = content_digest(table).encode()
    pq.write_table(table.replace_schema_metadata(metadata), path)


def same_scores(opened: Corpus, sample: Corpus) -> None:
    """The opened corpus pays what the in-memory one (no events table involved) pays."""
    np.testing.assert_array_equal(score(opened, CONFIG).reward, score(sample, CONFIG).reward)
    assert crafter_score(opened) == crafter_score(sample)


@pytest.mark.parametrize("name", list(EDITS))
def test_an_edited_events_table_is_never_scored(tmp_path: Path, sample: Corpus, caplog, name: str) -> None:
    path = saved(sample, tmp_path)
    edit(path, EDITS[name](pq.read_table(path)))
    with caplog.at_level(logging.WARNING, logger="workbench.data.storage.events_table"):
        opened = load_corpus(tmp_path)
    assert any(str(path) in r.getMessage() and "values changed" in r.getMessage() for r in caplog.records)
    same_scores(opened, sample)
    (check,) = check_corpus(tmp_path)
    assert check.events == "damaged" and str(path) in check.problems[0]
    # `corpus events` no longer keeps it as "already current": it is rewritten from the decisions
    assert add_events_tables(tmp_path) == ([committed_parts(tmp_path)[0]], 0)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="workbench.data.storage.events_table"):
        same_scores(load_corpus(tmp_path), sample)
    assert not caplog.records


@pytest.mark.parametrize("name", list(EDITS))
def test_a_forged_events_table_is_caught_by_the_deep_check_and_rebuilt(
    tmp_path: Path, sample: Corpus, capsys, name: str
) -> None:
    path = saved(sample, tmp_path)
    edit(path, EDITS[name](pq.read_table(path)), forge=True)
    assert main(["corpus", "check", str(tmp_path)]) == 0  # the quick check trusts what the digests say
    capsys.readouterr()
    assert main(["corpus", "check", "--deep", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    column = "gain_delta" if name == "gains x5" else "unlock_decision"
    assert f"{path}: column {column!r} differs from what its decisions give" in out, out
    assert main(["corpus", "events", "--rebuild", str(tmp_path)]) == 0
    assert capsys.readouterr().out == f"{tmp_path}: 1 events table(s) rebuilt from their decisions\n"
    assert main(["corpus", "check", "--deep", str(tmp_path)]) == 0
    assert "every derived table agrees with its source" in capsys.readouterr().out
    same_scores(load_corpus(tmp_path), sample)


def test_a_table_of_another_events_version_is_not_used_and_is_rewritten(
    tmp_path: Path, sample: Corpus, monkeypatch
) -> None:
    path = saved(sample, tmp_path)
    table = pq.read_table(path)
    older = {**table.schema.metadata, VERSION_KEY: str(EVENTS_VERSION - 1).encode()}
    pq.write_table(table.replace_schema_metadata(older), path)
    reads: list = []
    original = stream.part_events
    monkeypatch.setattr(stream, "part_events", lambda *a: reads.append(a) or original(*a))
    same_scores(load_corpus(tmp_path), sample)
    assert len(reads) == 1  # read from its decisions
    (check,) = check_corpus(tmp_path)
    assert check.events == "stale" and not check.problems and f"not {EVENTS_VERSION}" in str(check.note)
    assert add_events_tables(tmp_path) == ([committed_parts(tmp_path)[0]], 0)
    assert pq.read_schema(path).metadata[VERSION_KEY] == str(EVENTS_VERSION).encode()


def test_a_fifo_in_place_of_an_events_table_never_blocks(tmp_path: Path, sample: Corpus, capsys) -> None:
    path = saved(sample, tmp_path)
    path.unlink()
    os.mkfifo(path)
    same_scores(load_corpus(tmp_path), sample)  # a hang would time the test out
    assert main(["corpus", "check", str(tmp_path)]) == 1
    assert "not a regular file" in capsys.readouterr().out
    # never written through: the FIFO is the user's to remove (one line, exit 2)
    assert main(["corpus", "events", "--rebuild", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "not a regular file" in err
