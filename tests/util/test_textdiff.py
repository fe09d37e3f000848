"""changed_lines: the lines an export changed in a real training TOML."""

from __future__ import annotations

import shutil

from helpers import REPO

import workbench
from workbench.util.textdiff import changed_lines


def test_changed_lines_of_an_export_name_exactly_the_rewritten_keys(tmp_path):
    training = tmp_path / "trainer_shaped.toml"
    shutil.copy(REPO / "configs" / "examples" / "trainer_shaped.toml", training)
    before = training.read_text(encoding="utf-8")
    config = workbench.RewardConfig.from_file(training)
    config.with_changes(weights={**config.weights, "collect_diamond": 9.5}).export_into(training)
    diff = changed_lines(before, training)
    removed = [line for line in diff.splitlines() if line.startswith("-")]
    added = [line for line in diff.splitlines() if line.startswith("+")]
    assert diff.startswith("@@ ") and len(removed) == len(added) == 1
    assert "collect_diamond" in added[0] and "9.5" in added[0] and "9.5" not in removed[0]
    assert changed_lines(training, training) == ""


def test_changed_lines_counts_lines_and_keeps_context():
    before = "a\nb\nc\nd\n"
    after = "a\nB\nc\nd\ne\n"
    assert changed_lines(before, after) == "@@ -2 +2 @@\n-b\n+B\n@@ -4,0 +5 @@\n+e"
    assert changed_lines(before, after, context=1).splitlines()[1:] == [" a", "-b", "+B", " c", " d", "+e"]
