"""``learner_view``: what a GRPO-family learner sees of a config on a corpus, as tidy tables with flags."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from workbench.analysis.decision_kinds import PAY_PARTS, kind_rewards
from workbench.analysis.learner.credit import gae
from workbench.analysis.learner.estimators import EPS, dr_grpo, gdpo, group_moments, grpo, rloo
from workbench.analysis.learner.pairs import discordant_pairs
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.errors import AnalysisError
from workbench.scoring import Scores, prepare, score

__all__ = ["METHODS", "LearnerView", "group_labels", "learner_view"]

#: The group estimators, as the columns of ``LearnerView.episodes``.
METHODS = ("grpo", "dr_grpo", "rloo", "gdpo")
#: Index columns that, when a corpus has them, split a seed's rollouts by policy version.
VERSION_COLUMNS = ("policy_version",)
#: Below this, an advantage counts as 0 when signs are compared.
SIGN_TOLERANCE = 1e-9


def group_labels(index: pd.DataFrame, by: tuple[str, ...]) -> tuple[np.ndarray, pd.DataFrame]:
    """Group numbers for the rows of a corpus index, by the values of the ``by`` columns.

    A row with a missing value in a ``by`` column is a group of its own (it has no siblings).

    Args:
        index: a ``Corpus.index`` (E rows).
        by: the index columns whose values make a group (e.g. ``("seed",)``).

    Returns:
        ``(group, keys)``: (E,) int64 group numbers in order of first appearance, and a table of
        the G groups' ``by`` values.

    Raises:
        AnalysisError: a ``by`` column the index does not have.
    """
    missing = [c for c in by if c not in index.columns]
    if missing:
        raise AnalysisError(f"no index column {missing[0]!r} to group by; columns are {list(index.columns)}")
    keys = index[list(by)].astype(object).reset_index(drop=True)
    lonely = keys.isna().any(axis=1).to_numpy()
    text = np.array(["\x1f".join(map(str, row)) for row in keys.itertuples(index=False)], dtype=object)
    text[lonely] = [f"\x00{i}" for i in np.flatnonzero(lonely)]
    _, first, group = np.unique(text, return_index=True, return_inverse=True)
    renumber = np.empty(len(first), dtype=np.int64)
    renumber[np.argsort(first, kind="stable")] = np.arange(len(first))
    group = renumber[group.ravel()]
    return group, keys.iloc[np.sort(first)].reset_index(drop=True)


@dataclass(frozen=True, eq=False)
class LearnerView:
    """A config's returns as a group-based learner sees them (built by ``learner_view``);
    ``decisions`` (built on first access) gives per decision its reward and GAE credit.

    Attributes:
        episodes: Per rollout its ``group``, the ``by`` values, ``group_size``, ``return``
            (shaped, after lambda), one column per component kind (``credit``, ``inventory``,
            ``achievement_count``), ``achievements`` (unlocked), Crafter's ``env_return``, and
            the advantages ``grpo``, ``dr_grpo``, ``rloo``, ``gdpo``.
        groups: Per group its ``by`` values, ``size``, ``mean`` and ``std`` of the return,
            ``zero_variance``, and per progress measure (``achievements``, ``env_return``) the
            ``comparable`` and ``discordant`` pairs under GRPO's order (the same order as
            Dr.GRPO's and RLOO's) and ``discordant_gdpo`` under GDPO's.
        flags: ``section``, ``code``, ``subject``, ``why`` (zero-variance, contradicts-progress,
            gdpo-contradicts-progress, gdpo-flips-sign, no-group).
        scores: The scoring of the config on the corpus the tables come from.
        by: The index columns that made the groups.
        gamma: The discount of the GAE credit in ``decisions``.
        lam: The GAE lambda of that credit.
    """

    episodes: pd.DataFrame
    groups: pd.DataFrame
    flags: pd.DataFrame
    scores: Scores
    by: tuple[str, ...]
    gamma: float
    lam: float

    @cached_property
    def decisions(self) -> pd.DataFrame:
        """Per decision: ``episode``, ``decision``, ``reward`` and ``credit`` (GAE with no critic,
        ``gamma`` and ``lam``: the discounted reward to go), and ``reward_to_go`` (gamma = 1)."""
        p = self.scores.prepared
        reward = self.scores.reward
        credit, _ = gae(reward, p.lengths, gamma=self.gamma, lam=self.lam)
        to_go, _ = gae(reward, p.lengths, gamma=1.0, lam=1.0)
        return pd.DataFrame(
            {
                "episode": p.episode_column(p.episode_of),
                "decision": p.decision,
                "reward": reward,
                "credit": credit,
                "reward_to_go": to_go,
            }
        )

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by name (what ``--out`` writes).

        Returns:
            ``episodes``, ``groups``, ``flags`` and ``decisions`` (building it if not built yet).
        """
        return {"episodes": self.episodes, "groups": self.groups, "flags": self.flags, "decisions": self.decisions}


def learner_view(
    corpus: Corpus,
    config: RewardConfig,
    *,
    by: tuple[str, ...] | None = None,
    eps: float = EPS,
    ddof: int = 1,
    gamma: float = 0.99,
    lam: float = 0.95,
) -> LearnerView:
    """Advantages of ``config``'s returns on ``corpus`` under GRPO, Dr.GRPO, RLOO and GDPO, with flags.

    Args:
        corpus: the episodes (rollouts).
        config: the reward config whose shaped return is the rollout's reward.
        by: index columns whose values make a group; default ``seed``, plus ``policy_version``
            when the corpus index has it.
        eps: epsilon added to standard deviations (GRPO, GDPO).
        ddof: 1 sample, 0 population standard deviation.
        gamma: discount of the per-decision credit (``decisions``).
        lam: GAE lambda of the per-decision credit.

    Returns:
        The ``LearnerView``.

    Raises:
        AnalysisError: an unknown ``by`` column, or gamma / lambda outside [0, 1].
    """
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise AnalysisError(f"gamma and lambda must be within [0, 1], got gamma={gamma}, lambda={lam}")
    if by is None:
        by = ("seed", *(c for c in VERSION_COLUMNS if c in corpus.index.columns))
    group, keys = group_labels(corpus.index, tuple(by))
    prepared = prepare(corpus)
    scores = score(prepared, config)
    parts = kind_rewards(prepared, config)
    per_episode = np.stack(
        [np.bincount(prepared.episode_of, weights=parts[:, k], minlength=prepared.n_episodes) for k in range(3)],
        axis=1,
    )
    returns = scores.reward_sum
    advantage_gdpo, terms = gdpo(per_episode, group, eps=eps, ddof=ddof)
    advantages = {
        "grpo": grpo(returns, group, eps=eps, ddof=ddof),
        "dr_grpo": dr_grpo(returns, group),
        "rloo": rloo(returns, group),
        "gdpo": advantage_gdpo,
    }
    size, mean, std = group_moments(returns, group, ddof)
    episodes = pd.DataFrame({"episode": list(prepared.ids), "group": group})
    for column in by:
        episodes[column] = corpus.index[column].to_numpy()
    episodes["group_size"] = size[group]
    episodes["return"] = returns
    for k, name in enumerate(PAY_PARTS):
        episodes[name] = per_episode[:, k]
    episodes["achievements"] = scores.episodes["unique_achievements_total"].to_numpy()
    episodes["env_return"] = prepared.env_return
    for name, values in advantages.items():
        episodes[name] = values
    groups, flags = _groups_and_flags(episodes, keys, size, mean, std, terms)
    return LearnerView(episodes, groups, flags, scores, tuple(by), float(gamma), float(lam))


def _groups_and_flags(
    episodes: pd.DataFrame, keys: pd.DataFrame, size: np.ndarray, mean: np.ndarray, std: np.ndarray, terms: np.ndarray
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-group table and the flags (see ``LearnerView``)."""
    group = episodes["group"].to_numpy()
    n_groups = len(size)
    returns = episodes["return"].to_numpy()
    low = np.full(n_groups, np.inf)
    high = np.full(n_groups, -np.inf)
    np.minimum.at(low, group, returns)
    np.maximum.at(high, group, returns)
    table = keys.copy()
    table.insert(0, "group", np.arange(n_groups))
    table["size"] = size
    table["mean"] = mean
    table["std"] = std
    table["zero_variance"] = (size > 1) & (high == low)
    ids = episodes["episode"].to_numpy()
    flags: list[tuple[str, str, str, str]] = []
    for measure in ("achievements", "env_return"):
        progress = episodes[measure].to_numpy(dtype=np.float64)
        for method, column in (("grpo", f"discordant_{measure}"), ("gdpo", f"discordant_gdpo_{measure}")):
            bad, comparable, example = discordant_pairs(episodes[method].to_numpy(), progress, group, n_groups)
            table[f"comparable_{measure}"] = comparable
            table[column] = bad
            for g in np.flatnonzero(bad):
                i, j = divmod(int(example[g]), len(ids))
                flags.append(
                    (
                        "advantages",
                        "contradicts-progress" if method == "grpo" else "gdpo-contradicts-progress",
                        f"group {g} ({_key_text(keys, g)})",
                        f"{bad[g]} of {comparable[g]} pairs ranked against {measure} by {method}: e.g. {ids[i]} "
                        f"({measure} {progress[i]:g}, return {returns[i]:.3f}) gets a higher advantage than "
                        f"{ids[j]} ({measure} {progress[j]:g}, return {returns[j]:.3f})",
                    )
                )
    for g in np.flatnonzero(table["zero_variance"].to_numpy()):
        flags.append(
            (
                "advantages",
                "zero-variance",
                f"group {g} ({_key_text(keys, g)})",
                f"all {size[g]} rollouts return {mean[g]:.4f}: every advantage is 0, the group gives no gradient",
            )
        )
    for g in np.flatnonzero(size == 1):
        flags.append(("advantages", "no-group", f"group {g} ({_key_text(keys, g)})", "a single rollout: no baseline"))
    flags += _sign_flips(episodes, terms)
    return table, pd.DataFrame(flags, columns=["section", "code", "subject", "why"])


def _sign_flips(episodes: pd.DataFrame, terms: np.ndarray) -> list[tuple[str, str, str, str]]:
    """Rollouts whose GDPO advantage has the opposite sign of their GRPO one, naming the component
    whose per-component normalisation pushed them over."""
    summed, decoupled = episodes["grpo"].to_numpy(), episodes["gdpo"].to_numpy()
    flipped = np.flatnonzero(
        (np.abs(summed) > SIGN_TOLERANCE)
        & (np.abs(decoupled) > SIGN_TOLERANCE)
        & (np.sign(summed) != np.sign(decoupled))
    )
    flags = []
    for i in flipped:
        c = int(np.argmax(terms[i] * np.sign(decoupled[i])))
        flags.append(
            (
                "advantages",
                "gdpo-flips-sign",
                str(episodes["episode"].iat[i]),
                f"GRPO advantage {summed[i]:+.3f} but GDPO {decoupled[i]:+.3f}: normalised on its own, "
                f"{PAY_PARTS[c]} (term {terms[i, c]:+.3f}) outweighs the rest",
            )
        )
    return flags


def _key_text(keys: pd.DataFrame, g: int | np.integer) -> str:
    return ", ".join(f"{c}={keys[c].iat[g]}" for c in keys.columns)
