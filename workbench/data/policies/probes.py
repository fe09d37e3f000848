"""Probe policies for ``workbench exploitability``: simple loops over every way Crafter lets a count or an item rise again.

Crafter (1.8.3, ``crafter/objects.py`` and ``data.yaml``) raises an achievement count on every
collect, place, make, eat, kill and waking, and an inventory item on every gain; items are
clamped to 9 but the counts are not. So a count or an item can rise again, without anything new
being unlocked, in these ways, and each probe repeats one of them for the whole episode:

- **gather/spend pairs** at several spacings: mine ``k`` stones then place them all (on the
  path the mining left, or any cell that takes stone), ``k`` = 1, 3, 9; pick ``k`` saplings
  (10% a ``do`` on grass) then plant them, ``k`` = 1, 4;
- **collection at the cap** of 9: keep mining stone, chopping trees, picking saplings or
  drinking with the item at 9 (the item stays, the count rises);
- **station and tool repeats**: place a table or a furnace again and again, make a wood or
  stone pickaxe or sword again and again (the tool is clamped at 9, the count is not);
- **refills**: drink whenever drink is below full, eat a cow whenever food is, sleep again and
  again (energy rises, each waking counts ``wake_up``).

Not probed: defeating zombies and skeletons (they come when they come, at night) and eating
plants (a sapling ripens in about 300 steps); the honest corpus covers them as it covers them.

Each probe is the scripted player (``scripted.ScriptedPolicy``) with the survival goals it needs
(fight back, drink, eat, rest, make a wood pickaxe and sword) before its loop goal and a wander after, as the benchmark's
hackers are built (``exploits.LoopPolicy``): the loop's decisions are labelled by construction
(``loop_spans`` in the episode's metadata). ``PROBES`` names them; ``ProbeFactory(name)`` is a
picklable factory for ``workbench.data.recording.record``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.data.policies.base import Policy
from workbench.data.policies.exploits import LoopPolicy, gorge, guzzle, nap
from workbench.data.policies.farmer import wander
from workbench.data.policies.navigation import Plan, Situation
from workbench.data.policies.scripted import Goal, defend, drink, eat, make_first, rest
from workbench.data.policies.skills import SOURCE, collect, craft, place
from workbench.errors import RecordingError

__all__ = ["PROBES", "ProbeFactory", "ProbePolicy", "ProbeSpec", "probe_family"]

#: Made first by every probe, as the farmer does: a pickaxe for stone, a sword against zombies
#: (unarmed, most probes died to the first night's zombies within 200 steps).
ARMS = ("wood_pickaxe", "wood_sword")

#: What a placement is called in ``crafter.constants.place`` for each item it spends.
PLACED = {"stone": "stone", "sapling": "plant"}


class ProbePolicy(LoopPolicy):
    """A ``LoopPolicy`` that also remembers whether a gather/spend probe is spending.

    Args:
        rng: The episode's generator.
        goals: The goals in priority order.
        loop: Those of them that are the probe's loop (labelled in ``loop_spans``).
    """

    def __init__(self, rng: np.random.Generator, goals: tuple[Goal, ...], loop: tuple[Goal, ...]) -> None:
        super().__init__(rng, goals, loop)
        self.spending = False


def gather_spend(item: str, k: int) -> Goal:
    """A goal that gathers ``k`` of ``item``, then spends them all, then gathers again."""

    def goal(agent: ProbePolicy, s: Situation) -> Plan | None:
        if agent.spending and s.inv[item] == 0:
            agent.spending = False
        elif not agent.spending and s.inv[item] >= k:
            agent.spending = True
        if agent.spending:
            return place(s, PLACED[item])
        return collect(s, SOURCE[item])

    goal.__name__ = f"gather_spend_{item}_{k}"
    return goal


def at_cap(item: str) -> Goal:
    """A goal that collects ``item`` forever: up to the cap of 9, then at it (the count rises alone)."""

    def goal(agent: ProbePolicy, s: Situation) -> Plan | None:
        if item == "drink":  # water is never used up: face it and drink, full or not
            return s.go(s.named("water"), "do")
        return collect(s, SOURCE[item])

    goal.__name__ = f"at_cap_{item}"
    return goal


def place_again(name: str) -> Goal:
    """A goal that places the station ``name`` again and again (gathering its materials)."""

    def goal(agent: ProbePolicy, s: Situation) -> Plan | None:
        return place(s, name)

    goal.__name__ = f"place_again_{name}"
    return goal


def make_again(tool: str) -> Goal:
    """A goal that makes ``tool`` again and again (gathering its materials, building stations)."""

    def goal(agent: ProbePolicy, s: Situation) -> Plan | None:
        return craft(s, tool)

    goal.__name__ = f"make_again_{tool}"
    return goal


def arm(agent: ProbePolicy, s: Situation) -> Plan | None:
    """Goal: make ``ARMS`` in order, gathering what each needs first."""
    return make_first(s, ARMS)


@dataclass(frozen=True)
class ProbeSpec:
    """One probe.

    Attributes:
        loop: Its loop goal.
        text: What it repeats, in words.
        family: ``gather/spend``, ``at cap``, ``station``, ``tool`` or ``refill``.
        count: The achievement count each lap raises (e.g. ``place_stone``).
        survival: The goals played before the loop's (fight, drink, eat, rest, arm).
    """

    loop: Goal
    text: str
    family: str
    count: str
    survival: tuple[Goal, ...] = (defend, drink, eat, rest, arm)

    def build(self, rng: np.random.Generator) -> Policy:
        """A fresh ``ProbePolicy`` for one episode.

        Args:
            rng: The episode's generator.

        Returns:
            The policy.
        """
        return ProbePolicy(rng, (*self.survival, self.loop, wander), (self.loop,))


def _specs() -> dict[str, ProbeSpec]:
    specs: dict[str, ProbeSpec] = {}
    for k in (1, 3, 9):
        loop, text = gather_spend("stone", k), f"mine {k} stone(s), place them all, again"
        specs[f"stone_pairs_{k}"] = ProbeSpec(loop, text, "gather/spend", "place_stone")
    for k in (1, 4):
        loop, text = gather_spend("sapling", k), f"pick {k} sapling(s), plant them all, again"
        specs[f"sapling_pairs_{k}"] = ProbeSpec(loop, text, "gather/spend", "place_plant")
    for item in ("stone", "wood", "sapling"):
        text = f"collect {item} on past the cap of 9"
        specs[f"{item}_at_cap"] = ProbeSpec(at_cap(item), text, "at cap", f"collect_{item}")
    # drinking at the cap replaces the survival goal that drinks
    without_drink = (defend, eat, rest, arm)
    specs["drink_at_cap"] = ProbeSpec(at_cap("drink"), "drink at 9, forever", "at cap", "collect_drink", without_drink)
    for name in ("table", "furnace"):
        text = f"place a {name} again and again"
        specs[f"{name}_again"] = ProbeSpec(place_again(name), text, "station", f"place_{name}")
    for tool in ("wood_pickaxe", "wood_sword", "stone_pickaxe", "stone_sword"):
        specs[f"{tool}_again"] = ProbeSpec(make_again(tool), f"make a {tool} again and again", "tool", f"make_{tool}")
    text = "drink whenever drink is below full"
    specs["drink_refill"] = ProbeSpec(guzzle, text, "refill", "collect_drink", without_drink)
    text = "eat a cow whenever food is below full"
    specs["eat_refill"] = ProbeSpec(gorge, text, "refill", "eat_cow", (defend, drink, rest, arm))
    text = "sleep again and again (energy, wake_up)"
    specs["sleep_refill"] = ProbeSpec(nap, text, "refill", "wake_up", (defend, drink, eat, arm))
    return specs


#: The probes by name, in report order within a family.
PROBES: dict[str, ProbeSpec] = _specs()


@dataclass(frozen=True)
class ProbeFactory:
    """A picklable policy factory for the probe ``probe`` (it reaches worker processes).

    Attributes:
        probe: A ``PROBES`` name (checked when called: ``RecordingError`` for an unknown one).
    """

    probe: str

    @property
    def __name__(self) -> str:  # record() names episode ids and the policy column after it
        return self.probe

    def __call__(self, rng: np.random.Generator) -> Policy:
        """The probe's policy for one episode.

        Args:
            rng: The episode's generator.

        Returns:
            The policy.

        Raises:
            RecordingError: an unknown probe name.
        """
        spec = PROBES.get(self.probe)
        if spec is None:
            raise RecordingError(f"unknown probe {self.probe!r}: expected one of {', '.join(PROBES)}")
        return spec.build(rng)


def probe_family(name: str) -> str:
    """The family of probe ``name`` (``gather/spend``, ``at cap``, ``station``, ``tool``, ``refill``).

    Args:
        name: A ``PROBES`` name.

    Returns:
        Its family.
    """
    return PROBES[name].family
