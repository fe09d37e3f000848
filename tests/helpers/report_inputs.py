"""Inputs the report tests share: the sample corpus, and the same episodes under hostile names."""

from __future__ import annotations

import dataclasses

from helpers import REPO
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus

SHAPED = REPO / "configs" / "upstream_shaped.yaml"
RECOMMENDED = REPO / "configs" / "recommended.yaml"
#: Names a page must show as text: a script, an attribute break-out, an image with a handler.
HOSTILE = ('<script>alert("id")</script>', '"onerror=alert(1) x="', "<img src=x onerror=alert(2)>")


def configs() -> dict[str, RewardConfig]:
    """The two shipped configs the report tests compare."""
    return {"upstream_shaped": RewardConfig.from_file(SHAPED), "recommended": RewardConfig.from_file(RECOMMENDED)}


def hostile_configs() -> dict[str, RewardConfig]:
    """The same configs under names with markup."""
    shaped, recommended = configs().values()
    return {f"{HOSTILE[0]} shaped": shaped, f"{HOSTILE[1]} recommended": recommended}


def hostile_corpus() -> Corpus:
    """The sample's episodes with markup in every episode id and policy name (frames kept)."""
    episodes = []
    for k, episode in enumerate(sample_corpus()):
        policy = f"{HOSTILE[k % 3]}{episode.metadata['policy']}"
        renamed = dataclasses.replace(
            episode, id=f"{HOSTILE[(k + 1) % 3]}-{k}", metadata={**episode.metadata, "policy": policy}
        )
        episodes.append(renamed)
    return Corpus(episodes)
