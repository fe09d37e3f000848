"""``certify``: a config's shaping certificate on a corpus (potential fit per component, positive cycles, the potential-based counterpart)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from workbench.analysis.decision_kinds import kind_rewards
from workbench.analysis.shaping.cycles import packed_words, paid_once, positive_cycles, row_groups, segment_or
from workbench.analysis.shaping.fit import Moments, PotentialFit, shaping_design, solve
from workbench.core.components import RESOURCE_KINDS
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.data.episodes import Corpus, DecisionArrays
from workbench.errors import AnalysisError
from workbench.scoring import PreparedCorpus, payments, prepare, score
from workbench.scoring.potential import FEATURE_NAMES, decision_rows, shaping_payments, terminal_decisions
from workbench.util.blas import single_threaded

__all__ = ["Certificate", "certify", "component_events", "transition_moments"]

#: Component kinds that are shaping: the resource kinds (the rest, credits and the indicator, are
#: the task's reward: they are meant to change what is optimal, so a potential need not explain them).
SHAPING_KINDS = RESOURCE_KINDS
#: Columns of ``Certificate.loops``.
LOOP_COLUMNS = ["loop", "cycles", "episodes", "paid", "paid_per_cycle", "share_of_return", "example"]
#: Names of the resource slots' columns: inventory items, then achievement counts.
SLOT_NAMES = (*(f"inventory:{i}" for i in INVENTORY_ITEMS), *(f"achievement_count:{a}" for a in ACHIEVEMENTS))
#: The names of each kind's component columns (the indicator's is internal, shown as "").
_COLUMN_NAMES = {
    "indicator": ("",),
    "achievement": ACHIEVEMENTS,
    "inventory": INVENTORY_ITEMS,
    "achievement_count": ACHIEVEMENTS,
}


@dataclass(frozen=True, eq=False)
class Certificate:
    """How far a config's shaping is from potential-based, on a corpus (``certify``).

    Attributes:
        components: Per component (``kind``, ``name``, ``role``: shaping for resource
            components, task reward for credits and the indicator) ``paid`` (corpus total, after
            lambda), ``explained`` (by the best potential), ``unexplained`` (paid - explained),
            ``unexplained_share`` (of the shaped return), ``unexplained_signal`` (|e| / |r|),
            ``potential`` (the fitted Phi's largest terms).
        cycles: Every positive-return cycle (``episode``, ``from_decision`` = the decision
            after which the state was first seen, 0 = reset, ``to_decision`` = when it was seen
            again, ``decisions``, ``paid``, ``loop`` = the resource events paid inside it). Cycles
            overlap (a loop through A and B closes one at every A and one at every B), so their
            ``paid`` do not add up to what was paid: ``cycle_paid`` does that.
        loops: Cycles by ``loop``: ``cycles``, ``episodes``, ``paid`` (each decision inside the
            loop's cycles counted once), ``paid_per_cycle`` (the mean of its cycles' own pay:
            what one lap pays), ``share_of_return`` (of ``paid``) and an
            ``example`` (episode and decisions, for the replayer). A decision inside cycles of
            two loops counts in both rows.
        counterpart: Per episode the task app's ``return``, the potential-based counterpart's
            ``potential_return`` (credits + gamma Phi(s') - Phi(s)), ``achievements``, the ``by``
            group.
        config: The config certified.
        gamma: The discount of the potentials.
        by: The ``corpus.index`` column of ``counterpart``'s groups.
        cycle_paid: What the decisions inside at least one positive cycle paid, each decision
            once (``cycles.paid_once``).
    """

    components: pd.DataFrame
    cycles: pd.DataFrame
    loops: pd.DataFrame
    counterpart: pd.DataFrame
    config: RewardConfig
    gamma: float
    by: str
    cycle_paid: float

    def credit_note(self) -> str:
        """At gamma = 1, why credits look potential-based and why that does not make them harmless.

        An achievement unlocks once and stays unlocked, so a one-off unlock credit ``w_a`` is
        exactly ``Phi(s') - Phi(s)`` with ``Phi(s)`` the credits of the achievements unlocked in
        ``s``: at gamma = 1 a potential explains every credit. Ng, Harada and Russell's invariance
        needs ``Phi`` the same at every episode end; here an episode's credits telescope to
        ``Phi(last state)``, the credits of what it unlocked: the task's reward itself.

        Returns:
            The note, or "" (gamma < 1, or a config without per-achievement credits).
        """
        if self.gamma != 1.0 or not (self.components["kind"] == "achievement").any():
            return ""
        return (
            "at gamma 1 every one-off unlock credit is exactly a potential difference (Phi(s) = the credits of "
            "the achievements unlocked in s, which never re-lock), so a potential explains the credits; that does "
            "not make them harmless or policy-invariant: an episode's credits add up to Phi(last state), the "
            "credits of what it unlocked, i.e. they are the objective (potential shaping leaves the optimum alone "
            "only when Phi is the same at every episode end)"
        )

    def counterpart_by_group(self) -> pd.DataFrame:
        """Means per ``by`` group of ``return``, ``potential_return`` and ``achievements``.

        Returns:
            One row per group, in first-seen order: ``by`` and the three means.
        """
        columns = ["return", "potential_return", "achievements"]
        return self.counterpart.groupby(self.by, sort=False)[columns].mean().reset_index()

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by name (what ``--out`` writes).

        Returns:
            ``components``, ``cycles``, ``loops`` and ``counterpart``.
        """
        return {
            "components": self.components,
            "cycles": self.cycles,
            "loops": self.loops,
            "counterpart": self.counterpart,
        }


def component_events(prepared: PreparedCorpus, config: RewardConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """Every payment of ``config`` as (decision, component column, value after lambda).

    Columns: per_achievement: 0..21 credits by achievement, 22..37 inventory items, 38..59
    achievement counts; consistent: 0 the indicator.

    Args:
        prepared: the corpus's weight-independent arrays.
        config: the reward config.

    Returns:
        ``(decision, column, value, names)``: (M,) arrays sorted by decision, and the
        ``(kind, name)`` of each column.
    """
    paid = payments(prepared, config)
    labels: list = []
    column = np.empty(len(paid.decision), dtype=np.int64)
    for kind in config.rule.kinds:  # each kind's columns after the previous kind's
        mine = paid.of(kind)
        names = _COLUMN_NAMES[kind]
        # resource slots count the 16 items before the 22 achievement counts
        column[mine] = len(labels) + paid.slot[mine] - (len(INVENTORY_ITEMS) if kind == "achievement_count" else 0)
        labels += [(kind, name) for name in names]
    order = np.argsort(paid.decision, kind="stable")
    return paid.decision[order], column[order], paid.factor * paid.value[order], labels


def certify(corpus: Corpus, config: RewardConfig, *, gamma: float = 1.0, by: str = "policy") -> Certificate:
    """The shaping certificate of ``config`` on ``corpus`` (see ``Certificate``).

    Args:
        corpus: the episodes (transitions are their decisions).
        config: the reward config.
        gamma: the learner's discount, in [0, 1] (1: undiscounted returns, as GRPO sums them).
        by: index column grouping episodes in ``counterpart_by_group``.

    Returns:
        The ``Certificate``.

    Raises:
        AnalysisError: gamma outside [0, 1] or an unknown ``by`` column.
    """
    if not 0.0 <= gamma <= 1.0:
        raise AnalysisError(f"gamma must be within [0, 1], got {gamma}")
    if by not in corpus.index.columns:
        raise AnalysisError(f"no index column {by!r}; columns are {list(corpus.index.columns)}")
    prepared = prepare(corpus)
    arrays = corpus.decision_arrays()
    events = component_events(prepared, config)
    with single_threaded():  # a small fit: BLAS's threads only wait for cores (util.blas)
        fit, used = _fit(arrays, events, gamma)
    scores = score(prepared, config)
    reward = scores.reward
    total = float(reward.sum())
    components = _components_table(fit, [events[3][c] for c in used], total)
    cycles, loops, cycle_paid = _cycles(arrays, prepared, reward, corpus.ids, total)
    credit = kind_rewards(prepared, config)[:, 0]
    potential = credit + shaping_payments(arrays, config, gamma)
    counterpart = pd.DataFrame(
        {
            "episode": list(prepared.ids),
            by: corpus.index[by].to_numpy(),
            "return": scores.reward_sum,
            "potential_return": np.bincount(prepared.episode_of, weights=potential, minlength=prepared.n_episodes),
            "achievements": prepared.seen_status.sum(axis=1),
        }
    )
    return Certificate(components, cycles, loops, counterpart, config, float(gamma), by, cycle_paid)


def _fit(arrays: DecisionArrays, events, gamma: float) -> tuple[PotentialFit, np.ndarray]:
    """The least-squares potential of every component that paid (see ``transition_moments``)."""
    total, used = transition_moments(arrays, events, gamma)
    # residuals from the moments (|r|^2 - theta' D'r, clipped at 0): exact to float rounding
    return solve(total), used


def transition_moments(arrays: DecisionArrays, events, gamma: float) -> tuple[Moments, np.ndarray]:
    """The ``Moments`` of every decision's design row and component rewards, from sufficient
    statistics: equal to summing ``d_t d_t'``, ``d_t r_t'``, ... over the decisions one by one.

    A decision that paid nothing and left the state as it was has the design row
    ``(gamma - 1) x(s)``: 0 at gamma = 1 (dropped), and equal along a run of such decisions in
    one state (kept once, weighted by the run's length). The kept rows that have one design row
    (the same features before and after, the same terminal flag) are summed into one, weighted
    by their count, so the matrix products run over the distinct transitions only (a few
    thousand on the sample repeated to 1M decisions) instead of every decision.

    Args:
        arrays: the corpus's state columns.
        events: ``component_events`` of the config.
        gamma: the discount.

    Returns:
        ``(moments, used)``: the moments over the component columns ``used`` (those that paid).
    """
    decision, column, value, _ = events
    used = np.unique(column)
    slot = np.searchsorted(used, column)
    before, after = decision_rows(arrays)
    terminal = terminal_decisions(arrays)
    rows, weight = _kept_rows(arrays, decision, terminal, gamma)
    before, after, terminal = before[rows], after[rows], terminal[rows]
    # one group per distinct (x(s), x(s'), terminal): the design row is a function of these
    inventory = arrays.inventory
    unlocked = arrays.achievement_counts > 0
    columns = [*inventory[before].T, *unlocked[before].T, *inventory[after].T, *unlocked[after].T, terminal]
    first, group = row_groups(packed_words(columns))
    count = np.bincount(group, weights=weight, minlength=len(first))
    design = shaping_design(_features(arrays, before[first]), _features(arrays, after[first]), gamma, terminal[first])
    # a component's reward per kept row: its events summed (a decision may pay one twice)
    event_row = np.searchsorted(rows, decision)  # every paying decision is a row of its own
    cells, at = np.unique(event_row * len(used) + slot, return_inverse=True)
    cell_value = np.bincount(at.ravel(), weights=value, minlength=len(cells))
    cell_row, cell_slot = np.divmod(cells, len(used))
    paid_value = weight[cell_row] * cell_value
    rewards = np.zeros((len(first), len(used)))
    np.add.at(rewards, (group[cell_row], cell_slot), paid_value)
    return (
        Moments(
            (design * count[:, None]).T @ design,
            design.T @ rewards,
            count @ design,
            np.bincount(cell_slot, weights=paid_value, minlength=len(used)),
            np.bincount(cell_slot, weights=paid_value * cell_value, minlength=len(used)),
        ),
        used,
    )


def _kept_rows(
    arrays: DecisionArrays, decision: np.ndarray, terminal: np.ndarray, gamma: float
) -> tuple[np.ndarray, np.ndarray]:
    """The decisions whose design rows enter the fit and how many decisions each stands for."""
    _, after = decision_rows(arrays)
    own = terminal.copy()
    own[decision] = True
    own |= _changed_rows(arrays)[after]
    weight = np.ones(len(after))
    if gamma < 1.0:
        # runs of still decisions: broken by a decision of its own or an episode's start
        episode_start = np.zeros(len(after), dtype=bool)
        episode_start[np.cumsum(arrays.lengths)[:-1]] = True
        run = np.cumsum(own | episode_start)
        first = ~own & np.r_[True, (run[1:] != run[:-1]) | own[:-1]]
        keep = own | first
        lengths = np.bincount(run[~own], minlength=int(run[-1]) + 1 if len(run) else 0)
        weight = np.where(first, lengths[run], 1.0)
    else:
        keep = own
    rows = np.flatnonzero(keep)
    return rows, weight[rows]


def _changed_rows(arrays: DecisionArrays) -> np.ndarray:
    """(R,) bool: rows whose state (inventory, unlocked achievements) differs from the row before
    (column by column over the contiguous columns: no (R, 38) temporary)."""
    changed = np.zeros(arrays.n_rows, dtype=bool)
    for c in range(arrays.inventory.shape[1]):
        column = arrays.inventory[:, c]
        changed[1:] |= column[1:] != column[:-1]
    for c in range(arrays.achievement_counts.shape[1]):
        unlocked = arrays.achievement_counts[:, c] > 0
        changed[1:] |= unlocked[1:] != unlocked[:-1]
    return changed


def _features(arrays: DecisionArrays, rows: np.ndarray) -> np.ndarray:
    out = np.empty((len(rows), len(FEATURE_NAMES)))
    out[:, : len(INVENTORY_ITEMS)] = arrays.inventory[rows]
    out[:, len(INVENTORY_ITEMS) :] = arrays.achievement_counts[rows] > 0
    return out


def _components_table(fit: PotentialFit, labels: list, total: float) -> pd.DataFrame:
    def potential_text(theta: np.ndarray) -> str:
        # rounded first: collinear features share a weight equally, and the last bits of the
        # solve must not decide which of them is named first
        top = np.argsort(-np.round(np.abs(theta), 9), kind="stable")[:3]
        return " + ".join(f"{theta[f]:.3f}*{FEATURE_NAMES[f]}" for f in top if abs(theta[f]) > 1e-9) or "0"

    kinds = [k for k, _ in labels]
    table = pd.DataFrame(
        {
            "kind": kinds,
            "name": [n for _, n in labels],
            "role": ["shaping" if k in SHAPING_KINDS else "task reward" for k in kinds],
            "paid": fit.paid,
            "explained": fit.explained,
            "unexplained": fit.unexplained,
            "unexplained_share": fit.unexplained / total if total else np.zeros(len(labels)),
            "unexplained_signal": fit.unexplained_signal,
            "potential": [potential_text(fit.theta[:, c]) for c in range(len(labels))],
        }
    )
    table = table.sort_values("unexplained", ascending=False, key=np.abs, kind="stable")
    return table.sort_values("role", kind="stable").reset_index(drop=True)  # shaping first


def _cycles(
    arrays: DecisionArrays, prepared: PreparedCorpus, reward: np.ndarray, ids: list[str], total: float
) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """The positive cycles, their summary by loop (the resource events paid inside) and what
    the decisions inside them paid (each once)."""
    _, after = decision_rows(arrays)
    row_reward = np.zeros(arrays.n_rows)
    row_reward[after] = reward
    episode = np.repeat(np.arange(arrays.n_episodes), arrays.lengths + 1)
    states = np.concatenate([arrays.inventory, arrays.achievement_counts > 0], axis=1)
    start, stop, paid = positive_cycles(states, episode, row_reward)
    # Which resource slots rose inside each cycle: a bit per slot per row, OR-ed over the cycle.
    bits = np.zeros(arrays.n_rows, dtype=np.uint64)
    np.bitwise_or.at(bits, after[prepared.gain_decision], np.uint64(1) << prepared.gain_slot.astype(np.uint64))
    signature = segment_or(bits, start + 1, stop + 1)
    row_starts = arrays.row_starts
    distinct, inverse = np.unique(signature, return_inverse=True)
    loop = np.array([_loop_name(int(s)) for s in distinct], dtype=object)[inverse.ravel()]
    cycles = pd.DataFrame(
        {
            "episode": np.array(ids, dtype=object)[episode[stop]],
            "from_decision": start - row_starts[episode[start]],
            "to_decision": stop - row_starts[episode[stop]],
            "decisions": stop - start,
            "paid": paid,
            "loop": loop,
        }
    )
    if cycles.empty:
        return cycles, pd.DataFrame(columns=LOOP_COLUMNS), 0.0
    grouped = cycles.groupby("loop", sort=False)
    loops = grouped.agg(
        cycles=("paid", "size"), episodes=("episode", "nunique"), paid_per_cycle=("paid", "mean")
    ).reset_index()
    members = grouped.indices  # loop -> positions of its cycles
    loops["paid"] = [paid_once(row_reward, start[members[name]], stop[members[name]]) for name in loops["loop"]]
    loops["share_of_return"] = loops["paid"] / total if total else 0.0
    first = grouped.head(1).set_index("loop")
    loops["example"] = [
        f"{first.at[name, 'episode']} decisions {first.at[name, 'from_decision'] + 1}..{first.at[name, 'to_decision']}"
        for name in loops["loop"]
    ]
    loops = loops[LOOP_COLUMNS].sort_values("paid", ascending=False, kind="stable").reset_index(drop=True)
    return cycles, loops, paid_once(row_reward, start, stop)


def _loop_name(signature: int) -> str:
    """The resource slots of a signature, counts first (what was done), then items."""
    slots = [s for s in range(len(SLOT_NAMES)) if signature >> s & 1]
    counts = [SLOT_NAMES[s].split(":")[1] for s in slots if s >= len(INVENTORY_ITEMS)]
    items = [SLOT_NAMES[s].split(":")[1] for s in slots if s < len(INVENTORY_ITEMS)]
    return " / ".join(counts) + (f" (+{', '.join(items)})" if items else "") if counts else "+" + ", ".join(items)
