"""Tampered tables of a corpus folder: every value read is checked, and a bad one is a one-line error naming the file, row and column."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.episodes import make_episode, part_files
from helpers.hostile import RECOMMENDED, cli, one_line_error

from workbench.data.episodes import Corpus
from workbench.data.storage import load_corpus, save_corpus
from workbench.errors import CorpusFormatError, CorpusValueError


def _saved(tmp_path: Path, *ids: str, frames: bool = False) -> Path:
    root = tmp_path / "corpus"
    save_corpus(Corpus([make_episode(i, seed=k, frames=frames) for k, i in enumerate(ids or ("a", "b"))]), root)
    return root


def edit_episodes(root: Path, column: str, value: object, row: int = 0) -> Path:
    """Rewrite ``column`` of row ``row`` of the (only) episodes table, keeping its schema."""
    path = part_files(root, "episodes")[0]
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[row][column] = value
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    return path


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    "column, value, words",
    [
        ("env_return", float("nan"), "is not a finite number"),
        ("env_return", float("inf"), "is not a finite number"),
        ("steps", -4, "is outside"),
        ("decisions", 0, "is outside"),
        ("n_unlocked", 30, "is outside"),
        ("frames_group", -7, "is outside"),
        ("counts", "guessed", "is not one of"),
        ("source", None, "is missing (null)"),
        ("has_frames", None, "is missing (null)"),
        ("unlocked", ["collect_wood", "fly"], "not a Crafter achievement"),
        ("unlocked", ["collect_wood", None], "not a Crafter achievement"),
        ("has_logged", True, "disagrees with logged"),
        ("metadata", None, "is missing (null)"),
        ("metadata", "null", "a JSON NoneType, expected an object"),
        ("metadata", "[1, 2]", "a JSON list, expected an object"),
        ("metadata", "{not json", "not valid JSON"),
        ("metadata", '{"seed": NaN}', "NaN and infinity"),
        ("metadata", '{"policy": "\\ud800"}', "not valid UTF-8"),
        ("metadata", DEEP, "nested more than 32 deep"),
        ("metadata", '{"a":' * 40 + "1" + "}" * 40, "nested more than 32 deep"),
    ],
    ids=lambda v: str(v)[:24],
)
def test_a_tampered_episodes_value_is_refused_naming_file_row_and_column(tmp_path, capsys, column, value, words):
    root = _saved(tmp_path)
    path = edit_episodes(root, column, value)
    with pytest.raises(CorpusFormatError) as caught:
        corpus = load_corpus(root)
        [corpus.episode_extras(i) for i in range(len(corpus))]  # metadata is parsed when read
    with pytest.raises(CorpusFormatError) as alone:
        load_corpus(root).episode_metadata()  # and when it is read alone
    assert str(alone.value) == str(caught.value)
    message = str(caught.value)
    assert str(path) in message and "row 0" in message and repr(column) in message and words in message, message
    for argv in (("corpus", "info", root), ("score", "--config", RECOMMENDED, root, "--quiet")):
        code, _, err = cli(*argv, capsys=capsys)
        assert code == 2
        one_line_error(err, path, "row 0", repr(column))


def test_a_nan_env_return_is_never_scored(tmp_path):
    root = _saved(tmp_path)
    edit_episodes(root, "env_return", float("nan"), row=1)
    with pytest.raises(CorpusValueError, match=r"row 1, column 'env_return': nan is not a finite number"):
        load_corpus(root)


@pytest.mark.parametrize(
    "value, words", [("[]", "a JSON list, expected an object"), (DEEP, "JSON nested more than 32 deep")]
)
def test_a_tampered_logged_document_is_refused(tmp_path, value, words):
    root = _saved(tmp_path)
    edit_episodes(root, "has_logged", True)
    path = edit_episodes(root, "logged", value)
    corpus = load_corpus(root)
    with pytest.raises(CorpusValueError, match=rf"{path}: row 0, column 'logged': {words}"):
        corpus.episode_extras(0)


def test_an_id_twice_in_one_part_is_refused(tmp_path):
    root = _saved(tmp_path)
    path = edit_episodes(root, "episode", "a", row=1)
    with pytest.raises(CorpusValueError, match=rf"{path}: row 1, column 'episode': 'a' is in this part twice"):
        load_corpus(root)


def test_a_part_copied_in_by_hand_is_refused_naming_both_parts(tmp_path):
    root = _saved(tmp_path, "a")
    (first,) = part_files(root, "episodes")
    copy = first.stem[:-8] + "ffffffff"
    for table in ("episodes", "decisions"):
        shutil.copy(root / table / first.name, root / table / f"{copy}.parquet")
    with pytest.raises(CorpusFormatError, match=rf"'a' is in parts {first.stem} and {copy}"):
        load_corpus(root)


def test_a_decisions_table_with_extra_columns_reads_as_before(tmp_path):
    root = _saved(tmp_path)
    expected = [load_corpus(root)[i].inventory.tolist() for i in ("a", "b")]
    (path,) = part_files(root, "decisions")
    table = pq.read_table(path)
    pq.write_table(table.append_column("extra", pa.array(["x"] * table.num_rows)), path)
    assert [load_corpus(root)[i].inventory.tolist() for i in ("a", "b")] == expected


@pytest.mark.parametrize("table", ["decisions", "episodes", "frames"])
def test_a_part_file_replaced_by_a_directory_is_a_named_error(tmp_path, table):
    root = _saved(tmp_path, frames=True)
    (path,) = part_files(root, table)
    path.unlink()
    path.mkdir()
    with pytest.raises(CorpusFormatError, match=str(path.parent)):
        corpus = load_corpus(root)
        corpus["a"].frames


def test_a_symlinked_part_file_is_refused(tmp_path):
    root = _saved(tmp_path)
    (path,) = part_files(root, "decisions")
    moved = tmp_path / "elsewhere.parquet"
    shutil.move(path, moved)
    path.symlink_to(moved)
    with pytest.raises(CorpusFormatError, match="symlink"):
        load_corpus(root)


def test_a_huge_string_in_the_episodes_table_is_refused_or_read_whole(tmp_path):
    root = _saved(tmp_path)
    edit_episodes(root, "policy", "p" * 5_000_000)
    corpus = load_corpus(root)
    assert corpus.index.set_index("episode").loc["a", "policy"] == "p" * 5_000_000


def test_a_frames_row_of_another_episode_is_refused(tmp_path):
    root = _saved(tmp_path, frames=True)
    (path,) = part_files(root, "frames")
    reader = pq.ParquetFile(path)
    groups = [reader.read_row_group(g) for g in range(reader.num_row_groups)]
    writer = pq.ParquetWriter(path, groups[0].schema)
    for group in reversed(groups):  # a's entry now holds b's frames and the other way round
        writer.write_table(group)
    writer.close()
    with pytest.raises(CorpusFormatError, match="frames entry 0 holds episode 'b', not 'a'"):
        load_corpus(root)["a"].frames


def test_json_metadata_the_workbench_wrote_reads_back(tmp_path):
    episode = make_episode("a")
    episode.metadata["nested"] = {"list": [1, 2.5, None, True, "é\u2028"], "deep": json.loads("[" * 20 + "]" * 20)}
    root = tmp_path / "c"
    save_corpus(Corpus([episode]), root)
    assert load_corpus(root)["a"].metadata["nested"] == episode.metadata["nested"]


@pytest.mark.parametrize("count", [0, 2**31 - 1, -3])
def test_a_tampered_frame_count_is_refused_before_decoding(tmp_path, count):
    root = _saved(tmp_path, frames=True)
    (path,) = part_files(root, "frames")
    reader = pq.ParquetFile(path)
    groups = [reader.read_row_group(g).to_pylist() for g in range(reader.num_row_groups)]
    groups[0][0]["frames"] = count
    writer = pq.ParquetWriter(path, reader.schema_arrow)
    for rows in groups:
        writer.write_table(pa.Table.from_pylist(rows, schema=reader.schema_arrow))
    writer.close()
    with pytest.raises(CorpusFormatError, match=rf"frames entry 0 \(episode 'a'\): column 'frames' is {count}"):
        load_corpus(root)["a"].frames


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"schema_version": ' + "9" * 5000 + "}"])
def test_a_marker_nested_deep_or_with_a_huge_number_is_a_named_error(tmp_path, capsys, text):
    root = _saved(tmp_path)
    (root / "corpus.json").write_text(text)
    with pytest.raises(CorpusFormatError, match="corpus.json"):
        load_corpus(root)
    code, _, err = cli("corpus", "info", root, capsys=capsys)
    assert code == 2
    one_line_error(err, root / "corpus.json")


def test_invalid_utf8_in_a_view_is_a_named_error(tmp_path):
    episode = make_episode("a")
    episode.views = ["ok"] * (episode.n_decisions + 1)
    root = tmp_path / "c"
    save_corpus(Corpus([episode]), root)
    (path,) = part_files(root, "decisions")
    data = path.read_bytes()
    table = pq.read_table(path)  # the views become bytes that are not UTF-8, still typed as strings
    views = pa.array([b"o\xff"] * table.num_rows, pa.binary()).view(pa.string())
    table = table.set_column(table.schema.get_field_index("view"), pa.field("view", pa.string()), views)
    pq.write_table(table, path)
    assert path.read_bytes() != data
    corpus = load_corpus(root)
    with pytest.raises(CorpusFormatError, match=str(path)):
        corpus["a"].views


@pytest.mark.parametrize("column, value, words", [("steps", 5, "took 6 actions"), ("env_return", 7.5, "sum to")])
def test_totals_that_disagree_with_the_decisions_are_refused(tmp_path, column, value, words):
    root = _saved(tmp_path)
    path = edit_episodes(root, column, value, row=1)
    with pytest.raises(CorpusValueError, match=rf"{path}: row 1, column '{column}': .*{words}"):
        load_corpus(root)


def test_texts_the_decisions_table_does_not_hold_are_a_named_error(tmp_path):
    root = _saved(tmp_path)  # no episode has views: the decisions table has no view column
    path = edit_episodes(root, "has_views", True)
    corpus = load_corpus(root)
    with pytest.raises(CorpusFormatError, match=rf"has no 'view' column, but {path} row 0 says episode 'a'"):
        corpus["a"].views
