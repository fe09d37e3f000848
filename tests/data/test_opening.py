"""Opening the corpus a user names (workbench.data.opening): the CLI and the dashboard share it."""

from __future__ import annotations

import pytest

from workbench.data.opening import open_corpus
from workbench.data.sample import sample_corpus
from workbench.data.storage import save_corpus
from workbench.errors import CorpusFormatError


def test_sample_names_the_shipped_sample_and_blanks_around_a_name_are_ignored():
    assert open_corpus(" sample\n").ids == sample_corpus().ids


def test_a_folder_is_opened_with_home_expanded(tmp_path, monkeypatch):
    two = sample_corpus()[:2]
    save_corpus(two, tmp_path / "home" / "runs" / "two")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert open_corpus("~/runs/two").ids == two.ids


@pytest.mark.parametrize(("spec", "message"), [("", "no corpus folder given"), ("  ", "no corpus folder given")])
def test_nothing_named_is_refused(spec, message):
    with pytest.raises(CorpusFormatError, match=message):
        open_corpus(spec)


def test_a_missing_folder_and_an_unreadable_index_are_named(tmp_path):
    with pytest.raises(CorpusFormatError, match="no such corpus folder"):
        open_corpus(tmp_path / "missing")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "corpus.json").write_bytes(b"\xff\xfe not json")
    with pytest.raises(CorpusFormatError, match=f"{bad / 'corpus.json'}"):
        open_corpus(bad)
