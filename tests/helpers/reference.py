"""Independent reference numbers for tests: plain Python loops over an episode's states with
``workbench.core.reward.compute_stepwise_reward`` (the task app's function), never the
vectorised scoring or the diagnostics they check."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from crafter import constants

from workbench.core.config import RewardConfig
from workbench.core.reward import compute_stepwise_reward
from workbench.data.episodes import Episode


@dataclass
class EpisodePay:
    """What one episode was paid, decision by decision, after lambda.

    ``rewards``: each decision's reward. ``credits``: the achievement credits' sum. ``loops``:
    what its loops paid (a gathering count rising while its item does not; a material rising
    back to a level it had held, with its gathering count; stone and saplings placed). ``events``:
    (kind, name) of each resource event (``inventory`` item or ``achievement_count`` name) ->
    the pay of each of its rises in order. ``components``: (kind, name) -> total pay, credits
    under kind ``achievement``."""

    rewards: list[float] = field(default_factory=list)
    credits: float = 0.0
    loops: float = 0.0
    events: dict[tuple[str, str], list[float]] = field(default_factory=lambda: defaultdict(list))
    components: dict[tuple[str, str], float] = field(default_factory=lambda: defaultdict(float))

    @property
    def repeats(self) -> float:
        """Resource pay beyond each event's first rise."""
        return sum(sum(pays[1:]) for pays in self.events.values())


def episode_pay(episode: Episode, config: RewardConfig) -> EpisodePay:
    """``episode`` scored under ``config`` with one ``compute_stepwise_reward`` call per
    decision, as the task app's rollout calls it (lambda 0 scales by 1.0: quirk 2)."""
    states = episode.states()
    lam = config.indicator_lambda if config.indicator_lambda else 1.0
    pay = EpisodePay()
    counts: dict[str, int] = {}
    most = dict(states[0]["inventory"])  # each item's highest level so far
    for index in range(1, len(states)):
        before, after = states[index - 1], states[index]
        info, _, _ = compute_stepwise_reward(
            before["achievements_status"],
            after["achievements_status"],
            index,
            [],
            config.indicator_lambda,
            strategy=config.strategy,
            weights=dict(config.weights),
            k_limits=dict(config.k_limits),
            episode_counts=counts,
            prev_inventory=before["inventory"],
            new_inventory=after["inventory"],
            prev_counts=before["achievements_counts"],
            new_counts=after["achievements_counts"],
        )
        pay.rewards.append(info["reward"])
        pay.loops += _loop_pay(info.get("components", []), before, after, most, lam)
        for item, level in after["inventory"].items():
            most[item] = max(most.get(item, 0), level)
        for component in info.get("components", []):
            if "type" in component:  # a resource rise
                key = (component["type"], component.get("item", component.get("name")))
                pay.events[key].append(lam * component["reward"])
                pay.components[key] += lam * component["reward"]
            else:  # an achievement credit (or consistent's indicator)
                pay.credits += lam * component["weight"]
                pay.components[("achievement", component["achievement"])] += lam * component["weight"]
    return pay


def average_ranks(values: list[float]) -> list[float]:
    """Ranks 1..n of ``values``, ties sharing the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def spearman(x: list[float], y: list[float]) -> float:
    """Spearman's rho: Pearson's correlation of the average ranks, by plain sums."""
    rx, ry = average_ranks(x), average_ranks(y)
    n = len(x)
    mx, my = sum(rx) / n, sum(ry) / n
    covariance = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    spread_x = sum((a - mx) ** 2 for a in rx) ** 0.5
    spread_y = sum((b - my) ** 2 for b in ry) ** 0.5
    return covariance / (spread_x * spread_y)


def progress_agreement(corpus, config: RewardConfig) -> float:
    """Spearman's rho of each episode's shaped return (``episode_pay``) against how many
    achievements it unlocked."""
    returns = [sum(episode_pay(episode, config).rewards) for episode in corpus]
    return spearman(returns, [float(len(episode.unlocked)) for episode in corpus])


#: Gathering counts and the item each gathers, from Crafter's own rules: those whose collecting
#: leaves the block in place (water, grass), eating and making (what is collected by removing a
#: block, a tree or a mineral, is also how a player clears its way: not a loop at the cap).
GATHERS = {
    **{
        f"collect_{item}": item
        for material, rule in constants.collect.items()
        if rule["leaves"] == material
        for item in rule["receive"]
    },
    "eat_cow": "food",
    "eat_plant": "food",
    **{f"make_{tool}": tool for tool in constants.make},
}
#: Items collected from the world (the materials a loop spends and gathers back, life counters aside).
COLLECTED = {item for rule in constants.collect.values() for item in rule["receive"]}
LIFE = ("health", "food", "drink", "energy")


def _loop_pay(components: list[dict], before: dict, after: dict, most: dict[str, int], lam: float) -> float:
    """One decision's loop pay from the task app's resource components (see ``EpisodePay``)."""
    paid = 0.0
    rises = {(c["type"], c.get("item", c.get("name"))): lam * c["reward"] for c in components if "type" in c}
    for (kind, name), reward in rises.items():
        item = GATHERS.get(name) if kind == "achievement_count" else None
        if item is not None and after["inventory"][item] <= before["inventory"][item]:
            paid += reward  # the count rose, its item did not: at the cap
        if kind == "achievement_count" and name in ("place_stone", "place_plant"):
            paid += reward  # handing the item back to the world
        if kind == "inventory" and name not in LIFE and name in COLLECTED:
            rise = after["inventory"][name] - before["inventory"][name]
            back = max(0, min(after["inventory"][name], most.get(name, 0)) - before["inventory"][name])
            count_rise = (
                after["achievements_counts"][f"collect_{name}"] - before["achievements_counts"][f"collect_{name}"]
            )
            count_pay = rises.get(("achievement_count", f"collect_{name}"), 0.0)
            paid += reward * back / rise + (count_pay / count_rise * back if count_rise else 0.0)
    return paid
