"""Signs of a paying loop that list no loop: pay at the cap, pay for what was spent and regained, progress-free pay.

Three per-episode statistics under one config, each from what makes a loop pay rather than
from the shape of a known loop (``loop_pay`` and ``progress_free``):

- ``count-at-cap``: the most gathering-count rises, in ``LOOP_WINDOW`` consecutive decisions,
  at progress-free decisions (``progress_free``) where their item sat at its cap (did not rise);
- ``spent-and-regained``: the most material units, in ``LOOP_WINDOW`` consecutive decisions,
  gathered back at progress-free decisions to a level the episode had already held (spent and
  regained, in any order and at any distance);
- ``progress-free-pay``: the most paid by ``WINDOW`` consecutive decisions with no new unlock
  (per 100 decisions), against honest play's rate under the same config.

An episode is flagged when a statistic passes its ``SignThresholds`` entry and the loop paid
something. ``sign_table`` gives the statistics with the decisions where each fired;
``sign_flags`` the flags, each with the ``loops.evidence`` fields (episode, what fired, units,
decisions, pay, replay link).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.analysis.diagnostics.flags import Flag
from workbench.analysis.diagnostics.loop_pay import MATERIALS, loop_pay
from workbench.analysis.diagnostics.progress_free import WINDOW, best_windows, progress_free_mask, progress_free_pay
from workbench.data.episodes import Corpus
from workbench.util.links import replay_query

__all__ = [
    "CAP_CODE",
    "LOOP_WINDOW",
    "PROGRESS_FREE_CODE",
    "REGAINED_CODE",
    "SIGN_CODES",
    "SignThresholds",
    "sign_flags",
    "sign_table",
]

CAP_CODE, REGAINED_CODE, PROGRESS_FREE_CODE = "count-at-cap", "spent-and-regained", "progress-free-pay"
#: The decisions the cap and regain peaks are counted over: a batched lap (gather 5, walk, spend
#: 5) fits several times; honest play's regains (wood for the next tool) are spread out.
LOOP_WINDOW = 50
#: The flag codes this module raises, in report order.
SIGN_CODES = (CAP_CODE, REGAINED_CODE, PROGRESS_FREE_CODE)


@dataclass(frozen=True)
class SignThresholds:
    """When each sign fires (statistic > threshold, and the loop paid something).

    Attributes:
        cap_units: Count rises at the cap an episode may have.
        regained_units: Material units an episode may regain.
        progress_free: How many times honest play's progress-free rate (``reference``) an
            episode's sustained progress-free pay may reach.
        reference: Honest play's progress-free pay per 100 decisions under the config (NaN:
            unknown, and ``progress-free-pay`` does not fire).
    """

    cap_units: float
    regained_units: float
    progress_free: float
    reference: float = float("nan")


def _span(mask: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per episode the first and last 1-based decision where ``mask`` holds (0, 0 where never)."""
    local = np.arange(1, len(mask) + 1) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    episode = np.repeat(np.arange(len(lengths)), lengths)
    hits = np.flatnonzero(mask)
    first = np.zeros(len(lengths), dtype=np.int64)
    last = np.zeros(len(lengths), dtype=np.int64)
    # hits are in corpus order: the last write per episode is its last hit, reversed its first
    last[episode[hits]] = local[hits]
    first[episode[hits[::-1]]] = local[hits[::-1]]
    return first, last


def _window_paid(pay: np.ndarray, at: np.ndarray, lengths: np.ndarray, window: int) -> np.ndarray:
    """Per episode, what ``pay`` (per decision) sums to over its window of ``window`` decisions
    starting at ``at`` (1-based; 0: no window, 0 paid)."""
    total = np.concatenate([[0.0], np.cumsum(pay)])
    starts = np.cumsum(lengths) - lengths
    first = starts + np.maximum(at, 1) - 1
    last = np.minimum(first + window, starts + lengths)
    return np.where(at > 0, total[last] - total[first], 0.0)


def sign_table(
    corpus: Corpus,
    rewards: np.ndarray,
    new_unlocks: np.ndarray,
    pays: np.ndarray,
    returns: Sequence[float] | np.ndarray,
    window: int = WINDOW,
    loop_window: int = LOOP_WINDOW,
) -> pd.DataFrame:
    """Per episode (corpus order) the three statistics and where they fired.

    Args:
        corpus: The episodes.
        rewards: (N,) reward per decision after lambda (``Scores.reward``).
        new_unlocks: (N,) first-time unlocks per decision (``PreparedCorpus.n_first``).
        pays: (38,) what one unit of each slot's rise pays (zeros when no resource shaping).
        returns: (E,) each episode's return.
        window: The decisions the progress-free pay peak is counted over.
        loop_window: The decisions the cap and regain peaks are counted over.

    Returns:
        Columns ``episode``, ``policy``; ``cap_units`` and ``cap_paid`` (the episode's count
        rises at the cap and their pay), ``cap_peak`` (the most at progress-free decisions of
        ``loop_window`` consecutive ones, 0 when the episode is shorter), ``cap_at`` (where that window starts, 1-based; 0 if none),
        ``cap_window_paid`` (what those progress-free decisions paid for it),
        ``cap_first`` and ``cap_last`` (the first and last decision with such a rise); the
        same for ``regained_*``; ``item`` (the material regained most), ``progress_free_rate``,
        ``progress_free_peak`` (per 100 decisions), ``peak_first`` (where its window starts),
        ``return``.
    """
    lengths = corpus.index["decisions"].to_numpy(dtype=np.int64)
    episode = np.repeat(np.arange(len(lengths)), lengths)
    found = loop_pay(corpus, pays)
    free = progress_free_pay(rewards, new_unlocks, lengths, window=window)
    cap_first, cap_last = _span(found.cap > 0, lengths)
    regained_first, regained_last = _span(found.regained > 0, lengths)
    # rises while the episode makes progress are how honest play restocks: only progress-free ones count
    quiet = progress_free_mask(new_unlocks, lengths)
    cap_peak, cap_at = best_windows(np.where(quiet, found.cap_units, 0).astype(float), episode, lengths, loop_window)
    regained_peak, regained_at = best_windows(
        np.where(quiet, found.regained_units, 0).astype(float), episode, lengths, loop_window
    )
    top = np.argmax(found.by_item, axis=1) if len(lengths) else np.zeros(0, np.int64)
    policies = corpus.index["policy"].astype(str).to_numpy() if "policy" in corpus.index.columns else ""
    return pd.DataFrame(
        {
            "episode": list(corpus.ids),
            "policy": policies,
            "cap_units": np.bincount(episode, weights=found.cap_units, minlength=len(lengths)).astype(np.int64),
            "cap_paid": np.bincount(episode, weights=found.cap, minlength=len(lengths)),
            "cap_peak": np.nan_to_num(cap_peak),
            "cap_at": cap_at,
            "cap_window_paid": _window_paid(np.where(quiet, found.cap, 0.0), cap_at, lengths, loop_window),
            "cap_first": cap_first,
            "cap_last": cap_last,
            "regained_units": np.bincount(episode, weights=found.regained_units, minlength=len(lengths)).astype(
                np.int64
            ),
            "regained_paid": np.bincount(episode, weights=found.regained, minlength=len(lengths)),
            "regained_peak": np.nan_to_num(regained_peak),
            "regained_at": regained_at,
            "regained_window_paid": _window_paid(
                np.where(quiet, found.regained, 0.0), regained_at, lengths, loop_window
            ),
            "regained_first": regained_first,
            "regained_last": regained_last,
            "item": np.array(MATERIALS, dtype=object)[top],
            "progress_free_decisions": free.decisions,
            "progress_free_paid": free.paid,
            "progress_free_rate": free.rate,
            "progress_free_peak": free.peak,
            "peak_first": free.peak_first,
            "return": np.asarray(returns, dtype=np.float64),
        }
    )


def sign_statistics(table: pd.DataFrame, reference: float) -> pd.DataFrame:
    """Per episode each sign's statistic (flagged when above its threshold and paid):
    ``count-at-cap`` and ``spent-and-regained`` their peak units in a window (0 when unpaid),
    ``progress-free-pay`` the sustained progress-free pay over honest play's ``reference``
    (0 when unknown or no window fits).

    Args:
        table: ``sign_table`` rows.
        reference: Honest play's progress-free pay per 100 decisions under the same config.

    Returns:
        (episodes, 3) float, columns ``SIGN_CODES``, index the episode ids.
    """
    peak = table["progress_free_peak"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.isfinite(peak) & (reference > 0), peak / reference, 0.0)
    return pd.DataFrame(
        {
            CAP_CODE: np.where(table["cap_paid"] > 0, table["cap_peak"], 0.0),
            REGAINED_CODE: np.where(table["regained_paid"] > 0, table["regained_peak"], 0.0),
            PROGRESS_FREE_CODE: np.nan_to_num(ratio, nan=0.0),
        },
        index=pd.Index(table["episode"], name="episode"),
    )


def _evidence(
    episode: str, what: str, units: int, allowed: float, start: int, window: int, paid: float, row: Any
) -> dict[str, Any]:
    """A flag's evidence in ``loops.evidence``'s fields: the window ``start``.. it fired over."""
    ret = float(row["return"])
    return {
        "episode": episode,
        "loop": what,
        "laps": int(units),
        "allowed": int(allowed) if np.isfinite(allowed) else None,
        "decisions": [start, start + window - 1],
        "paid": round(paid, 6),
        "share": round(paid / abs(ret), 4) if ret else None,
        "replay": {"episode": episode, "decision": start, "link": replay_query(episode, start)},
    }


def sign_flags(
    table: pd.DataFrame, thresholds: SignThresholds, window: int = WINDOW, loop_window: int = LOOP_WINDOW
) -> list[Flag]:
    """The flags of ``table`` (``sign_table`` rows): per episode and sign past its threshold,
    saying what fired, on which decisions, paying what, with ``loops.evidence``'s fields (the
    decisions are the peak window; ``laps`` the units in it; ``paid`` what the window's
    progress-free decisions paid for that sign, or the window's pay for progress-free pay).

    Args:
        table: ``sign_table`` rows.
        thresholds: When each sign fires.
        window: The decisions the progress-free peak was counted over (``sign_table``'s).
        loop_window: The decisions the cap and regain peaks were counted over.

    Returns:
        Flags in episode order, ``SIGN_CODES`` order within an episode.
    """
    stats = sign_statistics(table, thresholds.reference)
    limits = {CAP_CODE: thresholds.cap_units, REGAINED_CODE: thresholds.regained_units}
    limits[PROGRESS_FREE_CODE] = thresholds.progress_free
    fired = stats.to_numpy() > np.array([limits[c] for c in SIGN_CODES])[None, :]
    flags = []
    for i, j in zip(*np.nonzero(fired)):
        row = table.iloc[i]
        episode, code = str(row["episode"]), SIGN_CODES[j]
        if code == PROGRESS_FREE_CODE:
            start = int(row["peak_first"])
            paid = float(row["progress_free_peak"]) * window / 100.0
            seen = _evidence(
                episode, f"progress-free pay over {window} decisions", window, np.nan, start, window, paid, row
            )
            why = (
                f"paid {row['progress_free_peak']:.2f} per 100 decisions over decisions {start}..{start + window - 1} "
                f"without unlocking anything new: {stats.iloc[i, j]:.1f}x honest play's "
                f"{thresholds.reference:.2f} under this config (allowed: {limits[code]:g}x)"
            )
        else:
            key, what = (
                ("cap", "counts rising at their item's cap")
                if code == CAP_CODE
                else ("regained", f"materials spent and regained (most: {row['item']})")
            )
            start, units = int(row[f"{key}_at"]), int(row[f"{key}_peak"])
            seen = _evidence(
                episode, what, units, limits[code], start, loop_window, float(row[f"{key}_window_paid"]), row
            )
            why = (
                f"{what}: {units} in decisions {start}..{start + loop_window - 1} without a new unlock "
                f"(allowed: {limits[code]:g} in {loop_window}), {int(row[f'{key}_units'])} over decisions {int(row[f'{key}_first'])}.."
                f"{int(row[f'{key}_last'])}, paid {float(row[f'{key}_paid']):.3f}"
            )
        flags.append(Flag("farming", code, episode, why, seen))
    return flags
