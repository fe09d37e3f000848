"""The fast paths (a corpus opened from disk: events streamed in batches; a re-score of a prepared
corpus after a change) give what plain ``score`` gives on the same episodes in memory, bit for bit:
every array, the episodes table (columns in order), each summary (keys in order)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers.episodes import make_episode

from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus
from workbench.data.storage import load_corpus, save_corpus, stream
from workbench.scoring import prepare, score

REPO_CONFIGS = ["upstream_shaped.yaml", "recommended.yaml", "consistent.yaml"]


def same_bits(got, want) -> None:
    """Two score results equal bit for bit (NaN, -0.0 and dtypes included)."""
    for name in ("reward", "base", "resource", "indicator", "reward_sum"):
        a, b = np.asarray(getattr(got, name)), np.asarray(getattr(want, name))
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name
    pd.testing.assert_frame_equal(got.episodes, want.episodes, check_exact=True)
    for episode_id in want.episodes["episode"]:
        mine, theirs = got.summary(episode_id), want.summary(episode_id)
        assert list(mine) == list(theirs) and repr(mine) == repr(theirs)


def configs(repo) -> list[RewardConfig]:
    loaded = [RewardConfig.from_file(repo / "configs" / name) for name in REPO_CONFIGS]
    quirky = RewardConfig(  # negative lambda (-0.0 for decisions that pay nothing), limits, overrides
        strategy="per_achievement",
        weights={"collect_wood": -0.7, "place_table": 2.5, "collect_diamond": 1e-9},
        k_limits={"collect_wood": 0, "collect_sapling": 2, "eat_cow": -1},
        indicator_lambda=-0.5,
    )
    return [*loaded, quirky]


@pytest.mark.parametrize("batch", [5, 1 << 16])
@pytest.mark.parametrize("kind", ["random", "real"])
def test_opened_and_rescored_corpora_score_as_plain_score_bit_for_bit(tmp_path, monkeypatch, batch, kind):
    from helpers import REPO

    monkeypatch.setattr(stream, "STREAM_BATCH", batch)  # batches that cut episodes anywhere
    if kind == "random":
        memory = Corpus([make_episode(f"r{i}", decisions=40 + 37 * i, seed=100 + i) for i in range(8)])
    else:
        memory = Corpus(list(sample_corpus()))  # episodes in memory: events from whole columns
    save_corpus(memory, tmp_path / "corpus")
    opened = load_corpus(tmp_path / "corpus")
    prepared = prepare(opened)
    first, *others = configs(REPO)
    same_bits(score(opened, first), score(Corpus(list(memory)), first))
    for config in others:  # each a re-score of the prepared corpus: the slider's path
        same_bits(score(prepared, config), score(Corpus(list(memory)), config))
