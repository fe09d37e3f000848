"""``verify``: do our numbers reproduce the shaped rewards an imported rollout logged?"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.data.episodes import Corpus, Episode
from workbench.data.importers.producers import producer_named, weights_ignored
from workbench.scoring.score import score
from workbench.scoring.scores import Scores

#: |logged - recomputed| above which ``verify`` reports a float field.
VERIFY_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Verification:
    """What ``verify`` found.

    ``mismatches``: one row per decision whose logged stepwise reward is not reproduced
    (``episode``, ``decision``, ``logged``, ``recomputed``, ``difference``, ``fields``,
    ``note``). ``episodes_checked`` / ``decisions_checked``: how much was compared.
    ``skipped``: episode -> why it was not checked (no log, no config in it). ``unchecked``:
    decisions not compared, as (episode, decision, reason): no ``info.stepwise`` logged, or
    the first decision of an episode whose predecessor is not in the corpus. ``carried_over``:
    episodes whose first decision was re-scored against the previous episode's end (quirk 7:
    the task app does not reset its snapshots when a rollout resets; importers name that
    episode in ``metadata["follows"]``).

    Attributes:
        mismatches: The decisions not reproduced (above).
        episodes_checked: Episodes compared.
        decisions_checked: Decisions compared.
        skipped: Episode -> why it was not checked.
        unchecked: Decisions not compared, as (episode, decision, reason).
        carried_over: Episodes re-scored from the previous episode's end.
        producers: Producer -> episodes checked against it.
        weights_ignored: Episodes whose config asks for per_achievement shaping their producer ignores.
    """

    mismatches: pd.DataFrame
    episodes_checked: int
    decisions_checked: int
    skipped: dict[str, str] = field(default_factory=dict)
    unchecked: list[tuple[str, int, str]] = field(default_factory=list)
    carried_over: list[str] = field(default_factory=list)
    #: Decisions checked per producer profile (``metadata["producer"]``).
    producers: dict[str, int] = field(default_factory=dict)
    #: Episodes whose run asked for per_achievement weights their producer did not pay.
    weights_ignored: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every checked decision reproduced (and something was checked)."""
        return self.mismatches.empty and self.decisions_checked > 0

    @property
    def nothing_checked(self) -> str | None:
        """Why no decision was checked, in one line, or None when some were."""
        if self.decisions_checked:
            return None
        if not self.skipped and not self.unchecked:
            return "the corpus holds no episode"
        reasons = sorted(set(self.skipped.values()) | {u[2] for u in self.unchecked})
        return "; ".join(reasons)


#: Fields of a logged ``info.stepwise`` that ``verify_logged`` checks, with their defaults.
VERIFIED_FIELDS = ("reward", "base_reward", "indicator", "resource_reward", "new_achievements", "credited_achievements")


def verify(corpus: Corpus, config: dict[str, Any] | None = None, config_source: str = "given") -> Verification:
    """Decisions whose logged shaped reward the workbench does not reproduce.

    Each episode is checked against the reward its producer computes (``metadata["producer"]``,
    ``workbench.data.importers.producers``): the indicator-only loop of synth-ai 0.2.16-0.2.24
    pays ``lambda * (1 if anything unlocked)`` (lambda omitted or 0 pays 0) and logs
    ``reward``, ``indicator`` and ``new_achievements``, which are compared. For the full
    stepwise loop (0.2.14, and episodes that name no producer), as follows. ``config`` (a
    step_rewards table, e.g. from ``--request`` or ``--config``; ``config_source`` says which)
    is used for episodes whose log holds none.

    For every episode with ``episode.logged`` (imported task-app rollouts), re-scores it under
    the config it ran with (``RewardConfig.from_dict(logged["config"])``) and compares each
    decision's logged ``info.stepwise`` with the re-computation: ``reward``, ``base_reward``,
    ``resource_reward`` (to ``VERIFY_TOLERANCE``), ``indicator``, and the names in
    ``new_achievements`` / ``credited_achievements``. ``decision_index`` is not compared (the
    task app counts it through the whole rollout).

    Args:
        corpus: The episodes to check (those without ``episode.logged`` are skipped).
        config: A step_rewards table for episodes whose log holds none.
        config_source: Where ``config`` came from, for the report (e.g. ``"--request"``).

    Returns:
        A ``Verification``; its ``mismatches`` has one row per decision where any of those differ: ``episode``, ``decision``,
    ``logged`` and ``recomputed`` reward, ``difference`` (recomputed - logged), ``fields``
    (the differing ones, comma-separated) and ``note`` (why a difference may come from the
    import rather than the reward: the first decision after a reset is scored against the
    previous episode's end, which a rollout with ``on_done = "reset"`` does not store, so the
    importer rebuilt it from logged rises and any loss in it is unknown; or the episode's
    achievement counts are estimates, ``metadata["counts"] == "estimated"``); empty when
    everything matches. The other fields say what was checked (see ``Verification``).
    """
    plan = _Plan(fallback=config, fallback_source=config_source)
    plan.group(corpus)
    for reward_config, episodes in plan.groups.values():
        scores = score(Corpus(episodes), reward_config)
        names = _unlock_names(scores)
        for position, episode in enumerate(episodes):
            plan.check(episode, scores, int(scores.prepared.starts[position]), names)
    for episode, table in plan.indicator:
        plan.check_indicator(episode, table)
    table = pd.DataFrame(
        plan.rows, columns=["episode", "decision", "logged", "recomputed", "difference", "fields", "note"]
    )
    table = table.astype(
        {"decision": np.int64, "logged": np.float64, "recomputed": np.float64, "difference": np.float64}
    )
    return Verification(
        mismatches=table,
        episodes_checked=sum(len(e) for _, e in plan.groups.values()) + len(plan.indicator),
        decisions_checked=plan.decisions_checked,
        skipped=plan.skipped,
        unchecked=plan.unchecked,
        carried_over=plan.carried_over,
        producers=plan.producers,
        weights_ignored=plan.weights_ignored,
    )


@dataclass
class _Plan:
    """What ``verify`` collects: the logged episodes grouped by the config they ran with, the
    ones skipped or carried over, and, as decisions are checked, the mismatches and the
    decisions left unchecked."""

    groups: dict[str, tuple[RewardConfig, list[Episode]]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    unchecked: list[tuple[str, int, str]] = field(default_factory=list)
    carried_over: list[str] = field(default_factory=list)
    predecessor_missing: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)  # episode -> why its first decision may not reproduce
    rows: list[dict[str, Any]] = field(default_factory=list)
    decisions_checked: int = 0
    fallback: dict[str, Any] | None = None
    fallback_source: str = "given"
    indicator: list[tuple[Episode, dict[str, Any]]] = field(default_factory=list)
    producers: dict[str, int] = field(default_factory=dict)
    weights_ignored: list[str] = field(default_factory=list)

    def group(self, corpus: Corpus) -> None:
        """Sort ``corpus``'s episodes: skipped (no log, no config in it) or grouped by config,
        an episode that follows another in the corpus joined to it (quirk 7)."""
        ids = set(corpus.ids)
        has_log = corpus.index["has_logged"].to_numpy(dtype=bool)
        self.skipped.update({episode_id: "no task-app log" for episode_id in corpus.index["episode"][~has_log]})
        for episode in corpus[has_log]:  # only the logged episodes are read
            logged = episode.logged
            if not logged:
                self.skipped[episode.id] = "no task-app log"
                continue
            table = logged.get("config") if isinstance(logged.get("config"), dict) else self.fallback
            if table is None:
                self.skipped[episode.id] = (
                    "the log holds no step_rewards config (give the run's with --request or --config)"
                )
                continue
            producer = producer_named(episode.metadata.get("producer"))
            if weights_ignored(producer, table):
                self.weights_ignored.append(episode.id)
            follows = episode.metadata.get("follows")
            if follows in ids:
                previous = corpus[follows]
                assert isinstance(previous, Episode)  # an id indexes one episode
                episode = episode.following(previous)
                self.carried_over.append(episode.id)
                rebuilt = previous.metadata.get("terminal_state")
                if rebuilt:
                    self.notes[episode.id] = (
                        f"scored against the end of {follows!r}, not stored by the rollout: {rebuilt}"
                    )
            elif follows is not None:
                self.predecessor_missing[episode.id] = follows
            if producer.rule is not None:  # a loop with a rule of its own: the table's strategy is unread
                self.indicator.append((episode, table))
                continue
            config = RewardConfig.from_dict(table)
            key = json.dumps(config.to_dict(), sort_keys=True, default=str)
            self.groups.setdefault(key, (config, []))[1].append(episode)

    def check(self, episode: Episode, scores: Scores, start: int, names: dict[int, dict[str, list[str]]]) -> None:
        """Compare each decision ``episode`` logged with ``scores`` (its decisions from row
        ``start``; ``names``: the unlocks per row), recording mismatches and unchecked decisions."""
        stepwise_log = list((episode.logged or {}).get("stepwise") or [])
        for i in range(episode.n_decisions):
            stepwise = self._checkable(episode, i, stepwise_log)
            if stepwise is None:
                continue
            mine: dict[str, Any] = {
                "reward": float(scores.reward[start + i]),
                "base_reward": float(scores.base[start + i]),
                "indicator": int(scores.indicator[start + i]),
                "resource_reward": float(scores.resource[start + i]),
                **names.get(start + i, {"new_achievements": [], "credited_achievements": []}),
            }
            self._compare(episode, i, stepwise, mine, VERIFIED_FIELDS, _note(episode, i, self.notes))

    def _compare(
        self,
        episode: Episode,
        i: int,
        stepwise: dict[str, Any],
        mine: dict[str, Any],
        fields: tuple[str, ...],
        note: str,
    ) -> None:
        """Record decision ``i`` as a mismatch when any of ``fields`` differs between what it
        logged (``stepwise``; a missing key reads as the task app's default) and ``mine``."""
        differing = [f for f in fields if not _same(stepwise.get(f, _LOGGED_DEFAULTS.get(f)), mine[f])]
        if not differing:
            return
        logged_reward = _number(stepwise.get("reward"))
        self.rows.append(
            {
                "episode": episode.id,
                "decision": i + 1,
                "logged": logged_reward,
                "recomputed": mine["reward"],
                "difference": mine["reward"] - logged_reward,
                "fields": ", ".join(differing),
                "note": note,
            }
        )

    def _checkable(self, episode: Episode, i: int, stepwise_log: list[Any]) -> dict[str, Any] | None:
        """Decision ``i``'s logged stepwise info when it can be checked (counted as checked), else
        None with the reason recorded in ``unchecked``."""
        stepwise = stepwise_log[i] if i < len(stepwise_log) else None
        if not isinstance(stepwise, dict):
            self.unchecked.append((episode.id, i + 1, "no info.stepwise logged"))
            return None
        if i == 0 and episode.id in self.predecessor_missing:
            follows = self.predecessor_missing[episode.id]
            reason = f"scored by the task app against the end of {follows!r}, not in this corpus"
            self.unchecked.append((episode.id, 1, reason))
            return None
        self._count(episode)
        return stepwise

    def _count(self, episode: Episode) -> None:
        """One more decision checked, of ``episode``'s producer."""
        self.decisions_checked += 1
        name = producer_named(episode.metadata.get("producer")).name
        self.producers[name] = self.producers.get(name, 0) + 1

    def check_indicator(self, episode: Episode, table: dict[str, Any]) -> None:
        """Compare each decision ``episode`` logged with the indicator-only loop's reward under
        ``table``: ``reward = lambda * indicator`` (lambda omitted or 0 pays 0), ``indicator`` 1
        when anything unlocked, ``new_achievements`` the names unlocked."""
        stepwise_log = list((episode.logged or {}).get("stepwise") or [])
        # the producer's own rule (indicator-only): its lambda reading, 0 or omitted paying 0
        factor = producer_named(episode.metadata.get("producer")).rule_for(table).factor(table.get("indicator_lambda"))
        status = np.asarray(episode.achievement_status, dtype=bool)
        for i in range(episode.n_decisions):
            stepwise = self._checkable(episode, i, stepwise_log)
            if stepwise is None:
                continue
            unlocked = [ACHIEVEMENTS[k] for k in np.flatnonzero(status[i + 1] & ~status[i])]
            indicator = 1 if unlocked else 0
            mine: dict[str, Any] = {"reward": factor * indicator, "indicator": indicator, "new_achievements": unlocked}
            self._compare(episode, i, stepwise, mine, tuple(mine), self.notes.get(episode.id, "") if i == 0 else "")


def verify_logged(corpus: Corpus) -> pd.DataFrame:
    """``verify(corpus).mismatches``, with the other fields of the ``Verification`` also in
    ``attrs`` (the form earlier versions returned; new code should call ``verify``).

    Args:
        corpus: The episodes to check.

    Returns:
        The mismatches table, one row per decision that differs.
    """
    result = verify(corpus)
    table = result.mismatches
    table.attrs.update(
        episodes_checked=result.episodes_checked,
        decisions_checked=result.decisions_checked,
        skipped=result.skipped,
        unchecked=result.unchecked,
        carried_over=result.carried_over,
    )
    return table


def _note(episode: Episode, i: int, notes: dict[str, str]) -> str:
    """Why decision ``i`` (0-based) of ``episode`` may differ for a reason the import explains."""
    parts = [notes[episode.id]] if i == 0 and episode.id in notes else []
    if episode.metadata.get("counts") == "estimated":
        parts.append(
            "achievement counts are estimated (the rollout stored no counts and logged no rises): "
            "count shaping here is a lower bound"
        )
    return "; ".join(parts)


#: What a logged ``info.stepwise`` means by a missing optional key (the task app's keys appear only
#: when non-empty / non-zero).
_LOGGED_DEFAULTS: dict[str, Any] = {"resource_reward": 0.0, "new_achievements": [], "credited_achievements": []}


def _unlock_names(scores: Scores) -> dict[int, dict[str, list[str]]]:
    """Per decision with unlocks: the names unlocked and the names credited (sorted)."""
    p = scores.prepared
    names: dict[int, dict[str, list[str]]] = {}
    for decision, name, credited in zip(p.unlock_decision.tolist(), p.unlock_name.tolist(), scores._credited.tolist()):
        entry = names.setdefault(decision, {"new_achievements": [], "credited_achievements": []})
        entry["new_achievements"].append(ACHIEVEMENTS[name])
        if credited:
            entry["credited_achievements"].append(ACHIEVEMENTS[name])
    return names


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _same(logged: Any, mine: Any) -> bool:
    """Whether a logged field equals the re-computed one (floats to ``VERIFY_TOLERANCE``,
    name lists as sets of names: the order is the logged observation's map order)."""
    if isinstance(mine, list):
        return isinstance(logged, list) and sorted(map(str, logged)) == sorted(mine)
    if isinstance(mine, int):
        return logged == mine
    value = _number(logged)
    return bool(abs(value - mine) <= VERIFY_TOLERANCE)
