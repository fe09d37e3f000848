"""Where the environment's finished episodes go: kept in memory and/or saved into a corpus folder.

The env records what it plays with ``workbench.data.recording.EpisodeTrace`` (the one way played
decisions become an ``Episode``, shared with ``record``). An ``EpisodeSink`` keeps finished
episodes in memory (``record=True``) and/or appends each one to a corpus folder as it ends
(``record_to``), through ``Corpus.save`` (atomic writes, index updated).
"""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path
from typing import Any

from workbench.data.episodes import Corpus, Episode, now_iso
from workbench.data.storage import holds_episodes, load_corpus
from workbench.errors import EnvError, TargetExistsError

#: How an episode ended: Crafter's death, Crafter's length limit, or reset/close before either.
ENDINGS = ("terminated", "truncated", "abandoned")


class EpisodeSink:
    """Where finished episodes go: a list in memory (``keep``) and/or a corpus folder (``out``).

    ``out`` must not already hold episodes (recording never overwrites or mixes runs): the
    constructor raises ``TargetExistsError`` naming the folder otherwise.
    """

    def __init__(self, keep: bool, out: str | Path | None, policy_name: str | None) -> None:
        self.keep = bool(keep)
        self.out = None if out is None else Path(out)
        self.name_policy(policy_name)
        self.episodes: list[Episode] = []
        self.saved: list[str] = []
        self.number = 0
        if self.out is not None:
            _check_empty(self.out)

    def name_policy(self, policy_name: str | None) -> None:
        """Record later episodes under ``policy_name`` (their ``policy`` and id prefix)."""
        self.policy_name = policy_name
        self.label = re.sub(r"[^A-Za-z0-9._-]+", "_", policy_name) if policy_name else "env"

    @property
    def active(self) -> bool:
        """Whether episodes are recorded at all."""
        return self.keep or self.out is not None

    def next_id(self, seed: int) -> str:
        """The id of the next episode: ``<policy or env>-s<world seed>-<NNNNN>`` (unique per env)."""
        return f"{self.label}-s{seed}-{self.number:05d}"

    def put(self, episode: Episode) -> None:
        """Keep and/or save ``episode`` (saved at once, so a crash loses only the episode being played)."""
        self.number += 1
        if self.keep:
            self.episodes.append(episode)
        if self.out is not None:
            Corpus([episode]).save(self.out)
            self.saved.append(episode.id)

    def corpus(self) -> Corpus:
        """The recorded episodes: those kept in memory, else the folder's (read lazily).

        Raises ``EnvError`` when the environment does not record, or has recorded nothing yet.
        """
        if self.keep:
            if not self.episodes:
                raise EnvError("no episode recorded yet: an episode is recorded when it ends (or at reset/close)")
            return Corpus(self.episodes)
        if self.out is not None:
            if not self.saved:
                raise EnvError(f"no episode recorded into {self.out} yet: an episode is recorded when it ends")
            return load_corpus(self.out)
        raise EnvError("this environment does not record: pass record=True and/or record_to=FOLDER")


def episode_metadata(
    *,
    seed: int,
    crafter_episode: int,
    number: int,
    policy: str | None,
    actions_per_decision: int,
    length: int | None,
    config: dict[str, Any],
    end: str,
) -> dict[str, Any]:
    """An env-recorded episode's metadata (``source`` "env"; ``seed`` the ``crafter.Env`` seed).

    The world is the ``crafter_episode``-th reset of ``crafter.Env(seed=seed)`` (Crafter seeds its
    world with ``hash((seed, episode))``); 1 for the first episode after ``reset(seed=...)``.
    """
    return {
        "source": "env",
        "seed": int(seed),
        "crafter_episode": int(crafter_episode),
        "episode_number": int(number),
        "policy": policy,
        "actions_per_decision": int(actions_per_decision),
        "max_steps": length,
        "end": end,
        "reward_config": config,
        "crafter_version": importlib.metadata.version("crafter"),
        "created": now_iso(),
    }


def _check_empty(out: Path) -> None:
    if holds_episodes(out):
        raise TargetExistsError(
            f"{out} already holds episodes ({len(load_corpus(out))}); record_to needs a new or empty folder "
            "(recording never overwrites; give each environment of a vector env its own folder)"
        )
