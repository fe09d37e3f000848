"""Old corpora (schema_version 1, one .npz per episode) open as before and upgrade losslessly.

``tests/data/legacy_v1_corpus`` was written by the old writer: a real recorded episode cut to
12 decisions with its frames, one with logged task-app rewards, one with text views/messages.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from conftest import REPO
from test_episodes_storage import assert_same_episode

from workbench.cli import main
from workbench.storage import load_corpus, load_episode, schema_version, upgrade_corpus
from workbench.storage.legacy import load_legacy_corpus

LEGACY = REPO / "tests" / "data" / "legacy_v1_corpus"


def test_the_old_layout_opens_as_before():
    corpus = load_corpus(LEGACY)
    assert schema_version(LEGACY) == 1
    assert corpus.ids == ["random-s2024-00002-cut", "logged-1", "text/run:1"]
    recorded = corpus["random-s2024-00002-cut"]
    assert recorded.frames.images.shape == (13, 64, 64, 3) and recorded.metadata["crafter_version"] == "1.8.3"
    assert corpus["text/run:1"].views == ["view 0", "view 1", "view 2", "view 3"]
    assert corpus["logged-1"].logged["stepwise"][0]["reward"] == 0.1 + 0.2
    assert load_episode(LEGACY / "episodes" / "logged-1.npz").id == "logged-1"
    assert corpus.index["counts"].tolist() == ["observed", "observed", "estimated"]


def test_upgrade_keeps_every_value_and_frame(tmp_path):
    old = load_legacy_corpus(LEGACY)
    upgrade_corpus(LEGACY, tmp_path / "new")
    new = load_corpus(tmp_path / "new")
    assert schema_version(tmp_path / "new") == 2
    assert new.ids == old.ids and new.index.equals(old.index)
    for a, b in zip(old, new):
        assert_same_episode(b, a)
        if a.has_frames:
            np.testing.assert_array_equal(b.frames.images, a.frames.images)
            np.testing.assert_array_equal(b.frames.step_decision, a.frames.step_decision)
    assert json.loads((tmp_path / "new" / "corpus.json").read_text())["schema_version"] == 2


def test_cli_upgrade_refuses_a_folder_holding_a_corpus(tmp_path, capsys):
    assert main(["corpus", "upgrade", str(LEGACY), str(tmp_path / "new")]) == 0
    assert "upgraded" in capsys.readouterr().out
    assert main(["corpus", "upgrade", str(LEGACY), str(tmp_path / "new")]) == 2
    assert "already holds a corpus" in capsys.readouterr().err
    assert main(["corpus", "info", str(tmp_path / "new")]) == 0
    assert "schema_version 2, columnar" in capsys.readouterr().out
    shutil.copytree(LEGACY, tmp_path / "old")
    with pytest.raises(FileExistsError, match="is the corpus being upgraded"):
        upgrade_corpus(tmp_path / "old", tmp_path / "old")


def test_the_shipped_sample_is_columnar_and_upgrades_to_itself(tmp_path):
    from workbench.sample import sample_corpus, sample_path

    assert schema_version(sample_path()) == 2
    upgrade_corpus(sample_path(), tmp_path / "copy")  # columnar -> columnar: a compacted copy
    copy, sample = load_corpus(tmp_path / "copy"), sample_corpus()
    assert copy.index.equals(sample.index)
    assert_same_episode(copy[3], sample[3])
