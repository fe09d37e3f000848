"""``watch --config`` printing returns for episodes whose metadata numbers are out of every range."""

from __future__ import annotations

import pytest
from helpers.episodes import make_episode
from helpers.hostile import RECOMMENDED, cli, saved_ids

from workbench.data.episodes import Corpus
from workbench.data.storage import save_corpus


@pytest.mark.parametrize(
    "metadata",
    [{"training_step": 2**70}, {"training_step": -(2**63) - 1}, {"wall_time": 10**400}, {"created": 10**400}],
)
def test_metadata_numbers_past_int64_or_float_are_no_traceback(tmp_path, capsys, metadata):
    episode = make_episode("big", seed=1)
    episode.metadata = {**episode.metadata, **metadata}
    save_corpus(Corpus([episode]), tmp_path / "run")
    code, out, _ = cli(
        "watch", tmp_path / "run", "--into", tmp_path / "c", "--once", "--config", RECOMMENDED, capsys=capsys
    )
    assert code == 0 and "appended 1 episode(s)" in out
    assert any(line.startswith("+ big ") and "recommended=" in line for line in out.splitlines())
    assert saved_ids(tmp_path / "c") == ["big"]
