"""Tampered and malformed corpus folders: the storage layer's promises (named errors, nothing lost)."""

from __future__ import annotations

import json

import pytest
from helpers.hostile import (
    RECOMMENDED,
    SAMPLE_ROLLOUTS,
    cli,
    committed_parts,
    one_line_error,
    saved_ids,
    saved_sample,
    tree,
)

from workbench.errors import WorkbenchError


@pytest.mark.storage_contract
@pytest.mark.parametrize(
    "index",
    [
        b"\xff\xfe not utf-8",
        b'{"format": "crafter-reward-workbench-corpus", "schema_version": 1, "episodes": ["a string"]}',
        b'{"format": "crafter-reward-workbench-corpus", "schema_version": 1, "episodes": [{"file": "episodes/x.npz"}]}',
        b'{"format": "crafter-reward-workbench-corpus", "schema_version": 1, "episodes": {}}',
        b"[]",
    ],
)
def test_a_malformed_corpus_index_is_a_named_error(tmp_path, index):
    from workbench.data.storage import load_corpus

    sample = saved_sample(tmp_path)
    document = json.loads((sample / "corpus.json").read_text())
    text = index.replace(
        b'"crafter-reward-workbench-corpus", "schema_version": 1',
        f'"{document["format"]}", "schema_version": {document["schema_version"]}'.encode(),
    )
    (sample / "corpus.json").write_bytes(text)
    with pytest.raises(WorkbenchError, match="corpus.json"):
        corpus = load_corpus(sample)
        [episode.n_decisions for episode in corpus]


@pytest.mark.parametrize("index", [b"\xff\xfe not utf-8", b'{"episodes": ["a string"]}', b'{"episodes": [{}]}', None])
def test_the_cli_names_a_malformed_corpus_index(tmp_path, capsys, index):
    sample = saved_sample(tmp_path)
    document = json.loads((sample / "corpus.json").read_text())
    if index is None:
        (sample / "corpus.json").unlink()
        (sample / "corpus.json").mkdir()
    else:
        patched = {**document, **json.loads(index)} if index.startswith(b"{") else None
        (sample / "corpus.json").write_bytes(json.dumps(patched).encode() if patched else index)
    code, _, err = cli("score", "--config", RECOMMENDED, sample, capsys=capsys)
    assert code == 2
    one_line_error(err, sample / "corpus.json")
    before = tree(sample)
    for overwrite in ([], ["--overwrite"]):
        code, _, err = cli("import", "rollouts", SAMPLE_ROLLOUTS, "--out", sample, "--quiet", *overwrite, capsys=capsys)
        assert code == 2
        one_line_error(err, sample / "corpus.json")
        assert tree(sample) == before


def test_a_save_refused_for_its_marker_leaves_the_folder_as_it_was(tmp_path):
    # The library's writers, not only the CLI: the marker is read before the lock file is made.
    from workbench.data.sample import sample_corpus
    from workbench.data.storage import save_corpus, staged_save

    sample = saved_sample(tmp_path)
    (sample / "corpus.json").write_bytes(b"\xff\xfe not utf-8")
    before = tree(sample)
    with pytest.raises(WorkbenchError, match="corpus.json: not UTF-8"):
        save_corpus(sample_corpus(), sample, overwrite=True)
    with pytest.raises(WorkbenchError, match="corpus.json: not UTF-8"), staged_save(sample, overwrite=True):
        pass
    assert tree(sample) == before


@pytest.mark.parametrize("edit", [{"layout": "rows"}, {"tables": ["decisions"]}, {"episodes": []}, {"extra": 1}])
def test_a_columnar_marker_holding_anything_else_is_a_named_error(tmp_path, edit):
    from workbench.data.storage import load_corpus

    sample = saved_sample(tmp_path)
    document = json.loads((sample / "corpus.json").read_text())
    (sample / "corpus.json").write_text(json.dumps({**document, **edit}))
    with pytest.raises(WorkbenchError, match=f"corpus.json: .*{next(iter(edit))}"):
        load_corpus(sample)


@pytest.mark.storage_contract
def test_a_directory_named_corpus_json_is_a_named_error(tmp_path):
    from workbench.data.storage import load_corpus

    (tmp_path / "c" / "corpus.json").mkdir(parents=True)
    with pytest.raises(WorkbenchError, match="corpus.json"):
        load_corpus(tmp_path / "c")


@pytest.mark.storage_contract
def test_corpus_save_on_a_full_disk_leaves_nothing(full_disk):
    from workbench.data.sample import sample_corpus

    with pytest.raises(WorkbenchError, match="cannot save"):
        sample_corpus().save(full_disk / "c")
    assert saved_ids(full_disk / "c") == [] and committed_parts(full_disk / "c")
    assert not [p for p in (full_disk / "c").rglob("*") if p.is_file() and p.suffix in (".parquet", ".tmp")]


@pytest.mark.storage_contract
def test_a_killed_saves_temp_file_is_no_corpus(tmp_path):
    from workbench.data.storage import load_corpus

    sample = saved_sample(tmp_path)
    (sample / "episodes" / ".x.npz.0123456789abcdef.tmp").write_bytes(b"half")
    assert len(load_corpus(sample)) == 10
