"""Signs of a paying loop that list no loop: repeats per kind scanned at several scales, and progress-free pay.

Per episode under one config, from what makes a loop pay rather than from the shape of a known
loop (``loop_scan``, ``loop_pay`` and ``progress_free``):

- ``count-at-cap``: a gathering count rising while its item sits at its cap (``loop_scan``'s
  ``cap`` kinds: drink, saplings, food, tools; not the dug materials, ``loop_pay.DUG``);
- ``spent-and-regained``: a material gathered back to a level the episode already held, or a
  station or tool made again (``loop_scan``'s ``regained`` and ``again`` kinds);
- ``progress-free-pay``: the most paid by consecutive decisions with no new unlock (per 100
  decisions) against honest play's rate under the same config, scanned at the same scales
  (``progress_free.progress_free_scan``: windows of 25, 50, 100 and 200 progress-free
  decisions of one stretch, and the rate over all of them), each scale with its own threshold.

All three are multi-scale scans (``loop_scan.SCALES``: windows of 25, 50, 100 and 200
progress-free decisions and all of them): each (kind, scale) has its own threshold
(``SignThresholds.units``, set on honest play), so a burst shows at a short scale and a loop
spread out or begun late at a long one. A sign's statistic is the largest ratio of a peak to its
threshold over the kinds it covers that the config pays and the scales (for progress-free pay:
its peak over honest play's rate, over the scale's threshold): the episode is flagged when it is
above 1. ``sign_table`` gives the per-episode table and the scan; ``sign_flags`` the
flags, each naming the kind, the scale and the window that fired, with ``loops.evidence``'s
fields (episode, what fired, units, decisions, pay, replay link).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from workbench.analysis.diagnostics.flags import Flag
from workbench.analysis.diagnostics.loop_pay import loop_pay
from workbench.analysis.diagnostics.loop_scan import CAP, KINDS, SCALES, WHOLE, Scan, loop_units, scan, unit_pay
from workbench.analysis.diagnostics.progress_free import (
    WINDOW,
    PayScan,
    ProgressFree,
    progress_free_mask,
    progress_free_pay,
    progress_free_scan,
)
from workbench.data.episodes import Corpus
from workbench.util.links import replay_query

__all__ = [
    "CAP_CODE",
    "PROGRESS_FREE_CODE",
    "REGAINED_CODE",
    "SIGN_CODES",
    "UNIT_CODES",
    "SignTable",
    "SignThresholds",
    "kind_code",
    "scale_name",
    "sign_flags",
    "sign_statistics",
    "sign_table",
]

CAP_CODE, REGAINED_CODE, PROGRESS_FREE_CODE = "count-at-cap", "spent-and-regained", "progress-free-pay"
#: The flag codes this module raises, in report order.
SIGN_CODES = (CAP_CODE, REGAINED_CODE, PROGRESS_FREE_CODE)
#: The codes of the multi-scale unit scans.
UNIT_CODES = (CAP_CODE, REGAINED_CODE)


def kind_code(kind: int) -> str:
    """The sign code reporting ``KINDS[kind]``: ``count-at-cap`` for counts at the cap, else
    ``spent-and-regained`` (materials regained, stations and tools made again)."""
    return CAP_CODE if KINDS[kind].family == CAP else REGAINED_CODE


def scale_name(scale: int) -> str:
    """A scale as the flags and ``detector_accuracy.json`` name it: its length, or "whole"."""
    return "whole" if scale == WHOLE else str(scale)


@dataclass(frozen=True)
class SignThresholds:
    """When each sign fires.

    Attributes:
        units: (len(KINDS), len(SCALES)) the units each kind may reach at each scale (a peak
            above it fires; ``inf``: never).
        progress_free: How many times honest play's progress-free rate (``reference``) an
            episode's progress-free pay may reach at each scale of ``SCALES`` ((len(SCALES),),
            or one number for every scale).
        reference: Honest play's progress-free pay per 100 decisions under the config (NaN:
            unknown, and ``progress-free-pay`` does not fire).
    """

    units: np.ndarray
    progress_free: np.ndarray | float
    reference: float = float("nan")

    def pay_limits(self, scales: int) -> np.ndarray:
        """``progress_free`` as one threshold per scale.

        Args:
            scales: How many scales.

        Returns:
            (scales,) float.
        """
        return np.broadcast_to(np.asarray(self.progress_free, dtype=float), (scales,)).copy()


class SignTable(NamedTuple):
    """The signs' per-episode facts under one config.

    Attributes:
        episodes: One row per episode (corpus order): ``episode``, ``policy``, ``cap_paid``
            and ``regained_paid`` (what the config paid the episode's counts at the cap and
            materials regained, all decisions: ``loop_pay``), the progress-free pay columns
            (``progress_free_decisions``, ``progress_free_paid``, ``progress_free_rate``,
            ``progress_free_peak`` per 100 decisions, ``peak_first``) and ``return``.
        scan: The multi-scale scan of the episodes' loop units (``loop_scan.scan``).
        unit_pay: (len(KINDS),) what the config pays one unit of each kind.
        pay: The multi-scale scan of progress-free pay (``progress_free.progress_free_scan``).
    """

    episodes: pd.DataFrame
    scan: Scan
    unit_pay: np.ndarray
    pay: PayScan


def sign_table(
    corpus: Corpus,
    rewards: np.ndarray,
    new_unlocks: np.ndarray,
    pays: np.ndarray,
    returns: Sequence[float] | np.ndarray,
    window: int = WINDOW,
    scales: tuple[int, ...] = SCALES,
) -> SignTable:
    """Per episode the signs' facts (see ``SignTable``).

    Args:
        corpus: The episodes.
        rewards: (N,) reward per decision after lambda (``Scores.reward``).
        new_unlocks: (N,) first-time unlocks per decision (``PreparedCorpus.n_first``).
        pays: (38,) what one unit of each slot's rise pays (zeros when no resource shaping).
        returns: (E,) each episode's return.
        window: The decisions the progress-free pay peak is counted over.
        scales: The scan's window lengths (``loop_scan.SCALES``).

    Returns:
        The table, the scan, each kind's unit pay and the progress-free pay scan.
    """
    lengths = corpus.index["decisions"].to_numpy(dtype=np.int64)
    episode = np.repeat(np.arange(len(lengths)), lengths)
    found = loop_pay(corpus, pays)
    # units while the episode makes progress are how honest play restocks: only progress-free ones count
    quiet = progress_free_mask(new_unlocks, lengths)
    scanned = scan(loop_units(corpus), quiet, lengths, scales)
    pay_scan = progress_free_scan(rewards, new_unlocks, lengths, scales, mask=quiet)
    if window in scales:  # the scan has the peak already: no second pass over the decisions
        at = scales.index(window)
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = np.where(pay_scan.free_decisions > 0, 100.0 * pay_scan.free_paid / pay_scan.free_decisions, np.nan)
        free = ProgressFree(
            pay_scan.free_decisions, pay_scan.free_paid, rate, pay_scan.peak[:, at], pay_scan.first[:, at]
        )
    else:
        free = progress_free_pay(rewards, new_unlocks, lengths, window=window)
    policies = corpus.index["policy"].astype(str).to_numpy() if "policy" in corpus.index.columns else ""
    frame = pd.DataFrame(
        {
            "episode": list(corpus.ids),
            "policy": policies,
            "cap_paid": np.bincount(episode, weights=found.cap, minlength=len(lengths)),
            "regained_paid": np.bincount(episode, weights=found.regained, minlength=len(lengths)),
            "progress_free_decisions": free.decisions,
            "progress_free_paid": free.paid,
            "progress_free_rate": free.rate,
            "progress_free_peak": free.peak,
            "peak_first": free.peak_first,
            "return": np.asarray(returns, dtype=np.float64),
        }
    )
    return SignTable(frame, scanned, unit_pay(pays), pay_scan)


def _ratios(table: SignTable, units: np.ndarray) -> np.ndarray:
    """(E, K, S) each peak over its threshold; 0 where the kind is not paid or never fires."""
    paid = (table.unit_pay != 0)[None, :, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.isfinite(units) & (units > 0), table.scan.peak / units, 0.0)
    return np.where(paid, np.nan_to_num(ratio), 0.0)


def _pay_ratios(table: SignTable, thresholds: SignThresholds) -> np.ndarray:
    """(E, S) each scale's progress-free peak over honest play's rate, over the scale's threshold
    (0 when the rate is unknown or no window fits)."""
    peak, reference = table.pay.peak, thresholds.reference
    limits = thresholds.pay_limits(peak.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.isfinite(peak) & (reference > 0), peak / reference / limits[None, :], 0.0)
    return np.nan_to_num(ratio, nan=0.0, posinf=0.0)


def sign_statistics(table: SignTable, thresholds: SignThresholds) -> pd.DataFrame:
    """Per episode each sign's statistic: for the unit scans the largest peak-to-threshold ratio
    over their paid kinds and the scales, for ``progress-free-pay`` the largest ratio over the
    scales of progress-free pay over honest play's ``reference`` to the scale's threshold (0 when
    the rate is unknown or no window fits). Each is flagged above 1.

    Args:
        table: ``sign_table``'s result.
        thresholds: The unit thresholds (and honest play's reference rate).

    Returns:
        (episodes, 3) float, columns ``SIGN_CODES``, index the episode ids.
    """
    frame = table.episodes
    ratio = _ratios(table, thresholds.units).max(axis=2) if len(frame) else np.zeros((0, len(KINDS)))
    codes = np.array([kind_code(k) for k in range(len(KINDS))])
    out = {code: ratio[:, codes == code].max(axis=1, initial=0.0) for code in UNIT_CODES}
    out[PROGRESS_FREE_CODE] = _pay_ratios(table, thresholds).max(axis=1, initial=0.0)
    return pd.DataFrame(out, index=pd.Index(frame["episode"], name="episode"))


def _evidence(
    episode: str, what: str, units: int, allowed: float, first: int, last: int, paid: float, ret: float
) -> dict[str, Any]:
    """A flag's evidence in ``loops.evidence``'s fields: the window ``first``..``last`` it fired over."""
    return {
        "episode": episode,
        "loop": what,
        "laps": int(units),
        "allowed": int(allowed) if np.isfinite(allowed) else None,
        "decisions": [first, last],
        "paid": round(paid, 6),
        "share": round(paid / abs(ret), 4) if ret else None,
        "replay": {"episode": episode, "decision": first, "link": replay_query(episode, first)},
    }


def sign_flags(table: SignTable, thresholds: SignThresholds) -> list[Flag]:
    """The flags of ``table``: per episode and sign past its threshold, saying what fired (the
    kind and the scale of the largest peak-to-threshold ratio), on which decisions (that window),
    how many units and what they paid, with ``loops.evidence``'s fields; for progress-free pay the
    scale of the largest ratio, its window and what the window paid.

    Args:
        table: ``sign_table``'s result.
        thresholds: When each sign fires.

    Returns:
        Flags in episode order, ``SIGN_CODES`` order within an episode.
    """
    frame = table.episodes
    stats = sign_statistics(table, thresholds)
    values = stats.to_numpy()
    fired = values > 1.0
    ratios = _ratios(table, thresholds.units) if fired[:, :2].any() else None
    pay_ratios = _pay_ratios(table, thresholds) if fired[:, 2].any() else None
    pay_limits = thresholds.pay_limits(len(table.pay.peak[0]) if len(table.pay.peak) else 0)
    codes = np.array([kind_code(k) for k in range(len(KINDS))])
    # columns as arrays once: a row per flag through pandas costs more than the whole scan
    ids = frame["episode"].astype(str).to_numpy()
    returns = frame["return"].to_numpy(dtype=float)
    flags = []
    for i, j in zip(*np.nonzero(fired)):
        episode, code, ret = str(ids[i]), SIGN_CODES[j], float(returns[i])
        if code == PROGRESS_FREE_CODE:
            assert pay_ratios is not None
            at = int(np.argmax(pay_ratios[i]))
            scale, rate = table.scan.scales[at], float(table.pay.peak[i, at])
            start, end, held = int(table.pay.first[i, at]), int(table.pay.last[i, at]), int(table.pay.decisions[i, at])
            paid = rate * held / 100.0
            over = "all its progress-free decisions" if scale == WHOLE else f"{scale} progress-free decisions"
            seen = _evidence(episode, f"progress-free pay over {over}", held, np.nan, start, end, paid, ret)
            seen["scale"] = scale_name(scale)
            why = (
                f"paid {rate:.2f} per 100 decisions over {over} (decisions {start}..{end}) "
                f"without unlocking anything new: {rate / thresholds.reference:.1f}x honest play's "
                f"{thresholds.reference:.2f} under this config (allowed at this scale: {pay_limits[at]:.3g}x)"
            )
        else:
            assert ratios is not None
            mine = np.where((codes == code)[:, None], ratios[i], -1.0)
            k, s = np.unravel_index(int(np.argmax(mine)), mine.shape)
            units, allowed = int(table.scan.peak[i, k, s]), float(thresholds.units[k, s])
            first, last = int(table.scan.first[i, k, s]), int(table.scan.last[i, k, s])
            scale = table.scan.scales[s]
            over = "all its progress-free decisions" if scale == WHOLE else f"{scale} progress-free decisions"
            paid = units * float(table.unit_pay[k])
            seen = _evidence(episode, KINDS[k].name, units, allowed, first, last, paid, ret)
            seen["scale"] = scale_name(scale)
            why = (
                f"{KINDS[k].name}: {units} in {over} (decisions {first}..{last}; allowed at this scale: {allowed:g}), "
                f"paying {paid:.3f}"
            )
        flags.append(Flag("farming", code, episode, why, seen))
    return flags
