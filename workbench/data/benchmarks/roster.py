"""Who plays in the labelled benchmark: each policy with its label (exploit or honest) and split."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.data.benchmarks.labels import EXPLOIT, HELD_OUT, HONEST, TUNE
from workbench.data.policies import Policy, PolicyInput
from workbench.data.policies.blind import BLIND_HONEST, BLIND_LOOPS
from workbench.data.policies.blind2 import BLIND2_HONEST, BLIND2_LOOPS
from workbench.data.policies.busy import builder_policy, miner_policy, thirsty_policy
from workbench.data.policies.exploits import LOOPS, LoopSpec
from workbench.data.policies.explorers import Explorer
from workbench.data.policies.held_out import HELD_OUT_LOOPS
from workbench.data.policies.random_policy import random_policy
from workbench.data.policies.scripted import scripted_policy
from workbench.errors import RecordingError

__all__ = [
    "EXPLOIT",
    "HELD_OUT_OF_DESIGN",
    "HONEST",
    "HONEST_HELD_OUT",
    "ROSTER",
    "BenchmarkPolicy",
    "Entry",
    "entry",
    "split_of",
]


@dataclass(frozen=True)
class Entry:
    """One benchmark policy.

    Attributes:
        name: The policy's name (its episodes' ``policy``).
        label: ``exploit`` or ``honest``.
        loop: What its loop repeats, in words ("" if honest).
        factory: Builds the policy for one episode from its generator.
        held_out: Whether all its episodes are held out (a policy never tuned on).
    """

    name: str
    label: str
    loop: str
    factory: Callable[[np.random.Generator], Policy]
    held_out: bool = False


def _exploit(name: str, held_out: bool = False, loops: dict[str, LoopSpec] = LOOPS) -> Entry:
    spec = loops[name]
    return Entry(name, EXPLOIT, spec.loop_text, spec.build, held_out)


#: The benchmark's policies: 19 hackers (two of them held out of the first split) and 8 honest
#: players (one held out); from ``batch_looper`` on the second generation (issue 43), and last
#: the three families first written held out of the v1 detectors' design (``held_out``), now
#: designed on like the others.
ROSTER: tuple[Entry, ...] = (
    _exploit("stone_looper"),
    _exploit("farmer"),
    _exploit("sapling_looper"),
    _exploit("drinker"),
    _exploit("eater"),
    _exploit("sleeper"),
    _exploit("wood_hoarder"),
    _exploit("late_stone_looper"),
    _exploit("tool_crafter", held_out=True),
    _exploit("part_time_looper", held_out=True),
    Entry("random", HONEST, "", random_policy),
    Entry("scripted", HONEST, "", scripted_policy),
    Entry("explorer_10", HONEST, "", Explorer(0.1)),
    Entry("explorer_60", HONEST, "", Explorer(0.6)),
    Entry("explorer_30", HONEST, "", Explorer(0.3), held_out=True),
    # The second generation (issue 43): the leave-one-family-out benchmark holds each family out in turn.
    _exploit("batch_looper"),
    _exploit("cap_miner"),
    _exploit("cap_drinker"),
    _exploit("burst_looper"),
    _exploit("late_batch_looper"),
    _exploit("rotating_looper"),
    Entry("thirsty", HONEST, "", thirsty_policy),
    Entry("miner", HONEST, "", miner_policy),
    Entry("builder", HONEST, "", builder_policy),
    # First measured held out of design (v1); the v2 detectors were designed seeing them.
    *(_exploit(name, loops=HELD_OUT_LOOPS) for name in HELD_OUT_LOOPS),
)

#: Exploit families written blind to the detectors, by engineers who read no detector code: round 1
#: (``blind.BLIND_LOOPS``, 6 families) and round 2 (``blind2.BLIND2_LOOPS``, 5 families, written by
#: someone who saw neither the detectors nor round 1). The shipped detectors (v2) were frozen before
#: their designer saw either, so both are held out of their design as well as of tuning. Not in
#: ``ROSTER`` (``workbench benchmark make`` records them only when named with ``--policies``), and
#: ``benchmarks/bench_detectors_lofo.py`` leaves them out of its folds.
HELD_OUT_OF_DESIGN: tuple[Entry, ...] = (
    *(_exploit(name, held_out=True, loops=BLIND_LOOPS) for name in BLIND_LOOPS),
    *(_exploit(name, held_out=True, loops=BLIND2_LOOPS) for name in BLIND2_LOOPS),
)
#: Honest players written with those families (``blind.BLIND_HONEST``, ``blind2.BLIND2_HONEST``),
#: also held out of design; like ``HELD_OUT_OF_DESIGN``, recorded only when named with ``--policies``.
HONEST_HELD_OUT: tuple[Entry, ...] = tuple(
    Entry(name, HONEST, "", factory, held_out=True) for name, factory in (BLIND_HONEST | BLIND2_HONEST).items()
)


def entry(name: str) -> Entry:
    """The roster entry called ``name`` (``ROSTER``, ``HELD_OUT_OF_DESIGN`` or ``HONEST_HELD_OUT``);
    ``RecordingError`` naming the known ones otherwise."""
    for candidate in (*ROSTER, *HELD_OUT_OF_DESIGN, *HONEST_HELD_OUT):
        if candidate.name == name:
            return candidate
    known = ", ".join(e.name for e in (*ROSTER, *HELD_OUT_OF_DESIGN, *HONEST_HELD_OUT))
    raise RecordingError(f"no benchmark policy {name!r}; known: {known}")


def split_of(name: str, number: int) -> str:
    """The split of episode ``number`` of policy ``name``: held out when the policy is, else
    odd episode numbers (other worlds) are held out and even ones tuned on."""
    return HELD_OUT if entry(name).held_out or number % 2 else TUNE


class _Labelled:
    """A policy that answers as ``inner`` does and labels its episode for the recorder."""

    def __init__(self, inner: Policy, which: Entry) -> None:
        self.inner, self.which = inner, which

    def __call__(self, obs: PolicyInput) -> Sequence[str]:
        return self.inner(obs)

    def episode_metadata(self) -> dict[str, Any]:
        """The episode's labels: ``benchmark_label``, ``loop`` and ``loop_spans``."""
        own = getattr(self.inner, "episode_metadata", None)
        spans = own()["loop_spans"] if callable(own) else []
        return {"benchmark_label": self.which.label, "loop": self.which.loop, "loop_spans": spans}


@dataclass(frozen=True)
class BenchmarkPolicy:
    """A picklable policy factory (it reaches worker processes and cluster tasks) for the
    roster entry ``policy``; its episodes carry their labels in their metadata.

    Attributes:
        policy: The roster entry's name (checked when the factory is called: ``RecordingError``
            for an unknown one).
    """

    policy: str

    @property
    def __name__(self) -> str:  # record() names episode ids and the policy column after it
        return self.policy

    def __call__(self, rng: np.random.Generator) -> Policy:
        """The labelled policy for one episode."""
        which = entry(self.policy)
        return _Labelled(which.factory(rng), which)
