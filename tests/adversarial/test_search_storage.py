"""A search's journal file (``workbench search --storage``): malformed, non-text or odd files are a one-line error."""

from __future__ import annotations

import json

import pytest
from helpers.hostile import cli, one_line_error

from workbench.analysis.search.journal import check_journal
from workbench.errors import SearchError

_GOOD_LINE = json.dumps({"op_code": 0, "worker_id": "w", "study_name": "s", "directions": [1]}) + "\n"


@pytest.mark.parametrize(
    "content, words",
    [
        (b"not json\n", "line 1"),
        (b'{"op_code": 99, "worker_id": "w"}\n', "line 1"),
        (b"[1, 2]\n", "line 1"),
        (b'{"op_code": 0, "worker_id": "x"}\n', "not a journal"),
        (b"\xff\xfe\x00\x01\n", "line 1"),
        (_GOOD_LINE.encode() + b'{"op_code": 4, "worker_id": "w", "study_id": 0', "incomplete"),
        (_GOOD_LINE.encode() + b"[" * 100_000 + b"\n", "line 2"),
    ],
    ids=["text", "op", "list", "fields", "binary", "truncated", "deep"],
)
def test_a_malformed_journal_is_a_named_error(tmp_path, capsys, content, words):
    journal = tmp_path / "study.log"
    journal.write_bytes(content)
    code, _, err = cli("search", "sample", "--trials", "1", "--quiet", "--storage", journal, capsys=capsys)
    assert code == 2
    one_line_error(err, journal, words)
    assert journal.read_bytes() == content  # never appended to


@pytest.mark.parametrize("odd", ["directory", "symlink", "fifo"])
def test_a_journal_that_is_not_a_regular_file_is_refused(tmp_path, odd):
    import os

    journal = tmp_path / "study.log"
    if odd == "directory":
        journal.mkdir()
    elif odd == "symlink":
        (tmp_path / "target.log").write_text("")
        journal.symlink_to(tmp_path / "target.log")
    else:
        os.mkfifo(journal)
    with pytest.raises(SearchError, match=str(journal)):
        check_journal(journal)


def test_a_journal_of_a_finished_search_resumes(tmp_path, capsys):
    journal = tmp_path / "study.log"
    assert cli("search", "sample", "--trials", "2", "--quiet", "--storage", journal, capsys=capsys)[0] == 0
    check_journal(journal)
    assert cli("search", "sample", "--trials", "1", "--quiet", "--storage", journal, capsys=capsys)[0] == 0
