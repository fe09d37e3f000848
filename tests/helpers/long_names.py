"""Real names at their longest for the browser tests: UUID policy ids and 60-character config names.

The sample corpus with task-app style policy ids (36-character UUIDs) and configs copied under
60-character names."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Sequence
from pathlib import Path

from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus

#: Length of the config names ``long_name_configs`` writes.
CONFIG_NAME_CHARS = 60


def policy_uuid(policy: str) -> str:
    """The UUID that stands for ``policy`` (the same every run: uuid5 of its name)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"workbench-policy:{policy}"))


def uuid_policies(corpus: Corpus) -> Corpus:
    """``corpus`` with each episode's policy replaced by ``policy_uuid`` of it (episodes copied, not changed)."""
    episodes = []
    for episode_id in corpus.ids:
        episode = copy.copy(corpus[episode_id])
        episode.metadata = {**episode.metadata, "policy": policy_uuid(str(episode.metadata.get("policy")))}
        episodes.append(episode)
    return Corpus(episodes)


def long_name(stem: str, chars: int = CONFIG_NAME_CHARS) -> str:
    """``stem`` padded to exactly ``chars`` characters with a tail that keeps names apart."""
    tail = "-reward-design-for-the-crafter-task-app-long-name-"
    return (stem + tail + "x" * chars)[: chars - 3] + f"{len(stem):03d}"


def long_name_configs(folder: Path, sources: Sequence[Path]) -> list[Path]:
    """Each config of ``sources`` copied into ``folder`` as ``long_name(stem).yaml``; returns the copies."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for source in sources:
        target = folder / f"{long_name(source.stem)}.yaml"
        RewardConfig.from_file(source).to_file(target, overwrite=True)
        written.append(target)
    return written
