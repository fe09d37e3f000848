"""``Scores``: one config's rewards over one corpus, as arrays and tidy tables."""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from workbench.core.components import KINDS
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.core.episode_reward import stepwise_summary
from workbench.core.reward import INDICATOR_COMPONENT_NAME
from workbench.core.reward_rule import RewardRule
from workbench.scoring.component_table import components_table, running_sums, totals_by
from workbench.scoring.pay import Payments, kind_pay, payments
from workbench.scoring.prepare import PreparedCorpus
from workbench.scoring.resource_part import ResourcePart


class Scores:
    """One config's rewards over one corpus, as tidy tables.

    - ``episodes``: a row per episode, the rollout's ``metrics.details["stepwise"]`` numbers
      (``indicator_sum``, ``reward_sum`` = the shaped return, ``resource_reward``,
      ``new_achievements_total``, ``unique_achievements_total``, ``unique_achievements``,
      ``final_achievements``) with ``decisions``, ``steps`` and Crafter's ``env_return``, and
      ``counts``: where the episode's achievement counts come from (``observed``, ``logged``,
      or ``estimated``: then its count shaping, inside ``reward_sum`` and ``resource_reward``,
      is a lower-bound estimate, not the task app's number).
      ``summary(episode)`` gives the exact summary dict, config echo included.
    - ``decisions``: a row per decision (built on first access).
    - ``components``: a row per reward component, in the task app's order (first access).
    - ``unlocks``: a row per unlock event, with whether this config credits it (first access).
    - ``contributions``: total reward per component (kind, name) over the corpus.
    Rewards before lambda are ``reward`` in components, ``base`` in decisions; after lambda
    ``scaled`` and ``reward``. Arrays (``reward``, ``base``, ``indicator``, ``resource``) are
    per decision, in corpus order; ``reward_sum`` per episode. ``rule`` is the config's reward
    rule (ask it what is paid); ``pay(kind)`` the pay of one component kind per decision after
    lambda, ``kind_pay`` all of them, ``payments`` every component paid as arrays.

    Args:
        prepared: The prepared corpus (``score`` builds a ``Scores``; users do not).
        config: The config scored.
        base: Reward before lambda, per active decision.
        part: The resource rewards and indicators of the config's strategy and resource weights.
        credited: Which unlock events the config credits.
    """

    def __init__(
        self, prepared: PreparedCorpus, config: RewardConfig, base: np.ndarray, part: ResourcePart, credited: np.ndarray
    ) -> None:
        # Per *active* decision (``prepared.active``): the others pay 0 and have indicator 0.
        self.prepared = prepared
        self.config = config
        self._base = base
        lam = config.effective_lambda
        self._reward = base if lam == 1.0 else lam * base  # 1.0 * x is x, bit for bit
        self._resource = part.resource
        self._indicator = part.indicator
        self._credited = credited
        self._gain = part.gain
        e = prepared.n_episodes
        # bincount adds each episode's values in decision order from 0.0, as the rollout sums
        # them; skipping inactive decisions skips only zeros.
        self.reward_sum = np.bincount(prepared.active_episode, weights=self._reward, minlength=e)
        constant = prepared.episode_columns
        self.episodes = pd.DataFrame(
            {
                "episode": constant["episode"],
                "decisions": constant["decisions"],
                "steps": constant["steps"],
                "env_return": constant["env_return"],
                "reward_sum": self.reward_sum,
                "indicator_sum": part.indicator_sum,
                "resource_reward": part.resource_reward,
                "new_achievements_total": constant["new_achievements_total"],
                "unique_achievements_total": constant["unique_achievements_total"],
                "unique_achievements": constant["unique_achievements"],
                "final_achievements": constant["final_achievements"],
                "counts": constant["counts"],
            }
        )

    # -- per-decision arrays (corpus order), scattered from the active decisions on first use --
    @cached_property
    def reward(self) -> np.ndarray:
        """Reward per decision, after lambda."""
        # A decision that paid nothing is lambda * 0.0 in the task app: -0.0 for a negative lambda.
        return self._per_decision(self._reward, fill=self.config.effective_lambda * 0.0)

    @cached_property
    def base(self) -> np.ndarray:
        """Base reward per decision, before lambda."""
        return self._per_decision(self._base)

    @cached_property
    def resource(self) -> np.ndarray:
        """Resource reward per decision (per_achievement; 0 under consistent)."""
        return self._per_decision(self._resource)

    @cached_property
    def indicator(self) -> np.ndarray:
        """Indicator per decision: 1 when it unlocked anything or its base is positive."""
        return self._per_decision(self._indicator)

    def _per_decision(self, active_values: np.ndarray, fill: float = 0) -> np.ndarray:
        values = np.full(self.prepared.n_decisions, fill, dtype=active_values.dtype)
        values[self.prepared.active] = active_values
        return values

    def __repr__(self) -> str:
        p = self.prepared
        return (
            f"<Scores: {self.config.rule.name}, {p.n_episodes} episodes, {p.n_decisions} decisions, "
            f"shaped return {self.reward_sum.sum():.4g}>"
        )

    @property
    def rule(self) -> RewardRule:
        """The config's reward rule (``core.reward_rule``): what it pays, how it reads lambda."""
        return self.config.rule

    # -- the pay per component kind --------------------------------------------------------------
    @cached_property
    def payments(self) -> Payments:
        """Every component paid, as arrays (``scoring.pay.Payments``: decision, kind, slot,
        value before lambda), built from what this score holds."""
        return payments(self.prepared, self.config, self._credited, self._gain)

    @cached_property
    def kind_pay(self) -> np.ndarray:
        """(N, len(KINDS)) the pay per decision (corpus order) and component kind
        (``core.components.KINDS``), after lambda; rows add up to ``reward`` to float rounding."""
        return kind_pay(self.prepared, self.config, self.payments)

    def pay(self, kind: str) -> np.ndarray:
        """One component kind's pay per decision (corpus order), after lambda.

        Args:
            kind: One of ``core.components.KINDS`` (zeros for a kind the rule does not pay).

        Returns:
            float (N,).

        Raises:
            ValueError: ``kind`` is not a component kind.
        """
        return self.kind_pay[:, KINDS.index(kind)]

    # -- the rollout's summary -----------------------------------------------------------------
    def summary(self, episode: str) -> dict[str, Any]:
        """``metrics.details["stepwise"]`` of one episode, keys and types as the rollout's.

        Args:
            episode: The episode's id.

        Returns:
            The summary dict, config echo included.

        Raises:
            ValueError: No episode of the corpus has that id.
        """
        row = self.episodes.iloc[self.prepared.ids.index(episode)]
        return stepwise_summary(
            self.config,
            indicator_sum=row["indicator_sum"],
            reward_sum=row["reward_sum"],
            resource_reward=row["resource_reward"],
            new_achievements_total=row["new_achievements_total"],
            unique_achievements=row["unique_achievements"],
            final_achievements=row["final_achievements"],
        )

    @property
    def estimated_episodes(self) -> list[str]:
        """Episodes whose achievement counts are estimates: under per_achievement their count
        shaping (part of their return) is approximate; empty when every count is exact."""
        return [i for i, source in zip(self.prepared.ids, self.prepared.counts_source) if source == "estimated"]

    def totals(self) -> dict[str, Any]:
        """Corpus totals of the episode table's numeric columns, plus episode count.

        Returns:
            ``{"episodes": n, column: sum, ...}``.
        """
        numeric = self.episodes.drop(columns=["episode", "unique_achievements", "final_achievements", "counts"])
        return {"episodes": len(self.episodes), **{k: numeric[k].sum().item() for k in numeric.columns}}

    # -- large tables, built on first access ---------------------------------------------------
    @cached_property
    def decisions(self) -> pd.DataFrame:
        """A row per decision: ``reward`` (after lambda), ``base``, ``indicator``,
        ``resource_reward``, ``new_achievements`` (names unlocked), ``credited`` (per-achievement
        credits), ``unique_new`` (unlocked for the first time this episode), Crafter's
        ``env_reward``, and running per-episode sums ``return`` (shaped) and ``env_return``."""
        p = self.prepared
        credited = np.bincount(p.unlock_decision[self._credited], minlength=p.n_decisions).astype(np.int32)
        # Small ints stay int32 (one block, half the memory traffic of int64 at a million rows).
        return pd.DataFrame(
            {
                "episode": p.episode_column(p.episode_of),
                "decision": p.decision,
                "reward": self.reward,
                "base": self.base,
                "indicator": self.indicator,
                "resource_reward": self.resource,
                "new_achievements": p.n_unlocked,
                "credited": credited,
                "unique_new": p.n_first,
                "env_reward": p.env_reward,
                "return": running_sums(self.reward, p.starts, p.lengths),
                "env_return": running_sums(p.env_reward, p.starts, p.lengths),
            }
        )

    @cached_property
    def unlocks(self) -> pd.DataFrame:
        """A row per unlock event: ``name``, ``ordinal`` (earlier unlocks of the name in the
        episode), ``first`` (new to the episode), ``credited`` and ``credit`` (before lambda)
        under this config; consistent credits no names (it pays the indicator instead)."""
        p = self.prepared
        credit = np.zeros(len(p.unlock_name))
        credit[self._credited] = self.rule.credit_weights(self.config.weights)[p.unlock_name[self._credited]]
        return pd.DataFrame(
            {
                "episode": p.episode_column(p.episode_of[p.unlock_decision]),
                "decision": p.decision[p.unlock_decision],
                "name": pd.Categorical.from_codes(p.unlock_name, categories=list(ACHIEVEMENTS)),
                "ordinal": p.unlock_ordinal.astype(np.int64),
                "first": p.unlock_first,
                "credited": self._credited,
                "credit": credit,
            }
        )

    @cached_property
    def components(self) -> pd.DataFrame:
        """A row per reward component, ordered as the task app lists them: by decision; within
        one, credits (unlock order), inventory items, achievement counts (Crafter order).

        ``kind``: indicator / achievement / inventory / achievement_count; ``delta`` the rise
        (1 for credits and the indicator); ``count_prior`` / ``count_limit`` as in the task
        app's component dicts (NA for resource components); ``reward`` before lambda (the
        weight for credits, weight * delta for resources), ``scaled`` after it.
        """
        return components_table(self.prepared, self.config, self._credited, self._gain)

    @cached_property
    def contributions(self) -> pd.DataFrame:
        """Corpus totals per component (kind, name): ``count`` of components, ``reward``
        (before lambda) and ``scaled`` (after); only components that occur."""
        paid = self.payments
        lam = paid.factor
        frames = []
        for kind in self.rule.kinds:
            mine = paid.of(kind)
            if kind == "indicator":
                # 1.0 per paid decision: the count, and lambda times it (not a sum of lambdas)
                count = int(mine.sum())
                frames.append(
                    pd.DataFrame(
                        {
                            "kind": [kind],
                            "name": [INDICATOR_COMPONENT_NAME],
                            "count": [count],
                            "reward": [float(count)],
                            "scaled": [lam * count],
                        }
                    )
                )
                continue
            names = INVENTORY_ITEMS if kind == "inventory" else ACHIEVEMENTS
            slot = paid.slot[mine] - (len(INVENTORY_ITEMS) if kind == "achievement_count" else 0)
            frames.append(totals_by(slot, paid.value[mine], lam, len(names), kind, names))
        table = pd.concat(frames, ignore_index=True)
        return table[table["count"] > 0].reset_index(drop=True)
