"""Episodes written by hand, decision by decision, for the diagnostics' tests."""

from __future__ import annotations

from workbench.core.crafter_facts import ACHIEVEMENTS, INITIAL_INVENTORY
from workbench.data.episodes import Episode


def hand_episode(episode_id: str, changes: list[dict[str, int]], *, policy: str, counts: bool = True) -> Episode:
    """An episode from a list of per-decision changes: inventory items and achievement counts
    (achievement names) set to new values; the status is true once a count is > 0. Without
    ``counts`` the states carry no counts, so the episode's counts are estimated from the status."""
    inventory, achieved = dict(INITIAL_INVENTORY), {name: 0 for name in ACHIEVEMENTS}
    states = []
    for change in [{}, *changes]:
        for key, value in change.items():
            (achieved if key in achieved else inventory)[key] = value
        state = {"inventory": dict(inventory), "achievements_status": {n: c > 0 for n, c in achieved.items()}}
        if counts:
            state["achievements_counts"] = dict(achieved)
        states.append(state)
    return Episode.from_states(episode_id, states, [["noop"]] * len(changes), metadata={"policy": policy})


#: Mine wood, mine / place stone twice, mine once more, drink once: hand-counted below.


HONEST = [
    {"wood": 1, "collect_wood": 1},
    {"stone": 1, "collect_stone": 1},
    {"stone": 0, "place_stone": 1},
    {"stone": 1, "collect_stone": 2},
    {"stone": 0, "place_stone": 2},
    {"stone": 1, "collect_stone": 3, "drink": 8},
    {"drink": 9, "collect_drink": 1},
]
