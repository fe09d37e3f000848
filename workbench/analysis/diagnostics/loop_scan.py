"""Multi-scale scan of loop units per kind: the most repeats of one kind in windows of several lengths of progress-free decisions.

A loop pays a count that rises while its item does not gain ground (``loop_pay``). This module
counts those rises as **units**, kind by kind, read off the episode's own inventory and counts
(config-free; ``unit_pay`` says what a config pays one unit of each kind):

- ``regained``: a material (wood, stone, coal, iron, diamond, sapling) rising back to a level the
  episode already held (spent, then gathered again, in any order and at any distance);
- ``at the cap``: a gathering count rising while its item does not (drink, sapling, food, tools
  at 9; ``loop_pay.CAP_PAIRS``). Not the dug materials (``loop_pay.DUG``): mining at the cap is
  also tunnelling, and honest players do it as much as a hacker collecting at the cap does, at
  every scale (docs/detector-accuracy.md: up to 27 in 100 and 42 in 200 progress-free decisions
  on fresh worlds, against 9-40 in 100 for the cap miner);
- ``again``: a station placed or a tool made once more (tools never wear out in Crafter).

Honest players regain wood and stone a lot (building, tunnelling) but saplings, tables and tools
rarely: each kind gets its own threshold. The units are scanned, per episode and kind, in windows
of ``SCALES`` consecutive *progress-free* decisions (``progress_free.progress_free_mask``: no new
unlock in a stretch of at least 50 decisions) and over all of them (``WHOLE``): a scan statistic
in the sense of Kulldorff (1997, "A spatial scan statistic", Comm. Statist. Theory Methods 26)
and Glaz, Naus & Wallenstein (2001, "Scan Statistics"): the largest count of events in any
window of a given length, taken over several lengths at once so that a short burst (short
windows), a loop spread out by walks or begun late (long windows, the whole episode) are each
seen at their own scale. Each (kind, scale) has its own threshold, set on honest play
(``family_holdout.scan_thresholds``), and the flag names the kind, the scale and the window.

The events are sparse (a few per hundred decisions), so the scan works on them alone: per
(episode, kind) group, sorted by progress-free position, each event starts a candidate window
and a binary search finds where it ends (the best window of a length always starts at an event).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from workbench.analysis.diagnostics.loop_pay import CAP_PAIRS, MATERIALS, _signed
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS, MAKE_RULES
from workbench.data.episodes import Corpus

__all__ = ["AGAIN", "KINDS", "SCALES", "WHOLE", "Kind", "Scan", "loop_units", "scan", "unit_pay"]

_SLOT = {item: i for i, item in enumerate(INVENTORY_ITEMS)}
_COUNT = {name: i for i, name in enumerate(ACHIEVEMENTS)}
#: The window lengths, in progress-free decisions, the units are scanned over; ``WHOLE`` (0)
#: stands for all of an episode's progress-free decisions.
WHOLE = 0
SCALES: tuple[int, ...] = (25, 50, 100, 200, WHOLE)
#: Stations and tools whose making again is a loop's lap (their count past 1).
AGAIN: tuple[str, ...] = ("place_table", "place_furnace", *(f"make_{tool}" for tool in MAKE_RULES))


class Kind(NamedTuple):
    """One kind of loop unit.

    Attributes:
        name: What the flag says (e.g. "stone regained", "collect_drink at the cap").
        family: ``regained``, ``cap`` or ``again`` (which sign code reports it).
        items: Inventory items one unit raises (what it is paid for).
        counts: Achievement counts one unit raises.
    """

    name: str
    family: str
    items: tuple[str, ...]
    counts: tuple[str, ...]


REGAINED, CAP, AGAIN_FAMILY = "regained", "cap", "again"
#: Every kind, in the column order of ``loop_units``: materials regained, counts at the cap
#: (``loop_pay.CAP_PAIRS``), stations and tools made again.
KINDS: tuple[Kind, ...] = (
    *(Kind(f"{m} regained", REGAINED, (m,), (f"collect_{m}",)) for m in MATERIALS),
    *(Kind(f"{count} at the cap", CAP, (), (count,)) for count, _ in CAP_PAIRS),
    *(Kind(f"{event} again", AGAIN_FAMILY, (event[5:],) if event[5:] in _SLOT else (), (event,)) for event in AGAIN),
)


def unit_pay(pays: np.ndarray) -> np.ndarray:
    """What one unit of each kind pays under a config.

    Args:
        pays: (38,) what one unit of each slot's rise pays (16 items, then 22 counts).

    Returns:
        (len(KINDS),) float: the sum of its items' and counts' pay (a unit at the cap raises
        only its count).
    """
    n_items = len(INVENTORY_ITEMS)
    return np.array(
        [
            sum(pays[_SLOT[i]] for i in kind.items) + sum(pays[n_items + _COUNT[c]] for c in kind.counts)
            for kind in KINDS
        ]
    )


class Units(NamedTuple):
    """The loop units of a corpus, one entry per (decision, kind) with any.

    Attributes:
        decision: Corpus-order decision index (0-based, all episodes stacked).
        kind: Index into ``KINDS``.
        units: How many units (> 0).
    """

    decision: np.ndarray
    kind: np.ndarray
    units: np.ndarray


def loop_units(corpus: Corpus) -> Units:
    """Every (decision, kind) with loop units, in corpus order (see the module).

    Args:
        corpus: The episodes.

    Returns:
        The sparse units.
    """
    material_cols = np.array([_SLOT[m] for m in MATERIALS])
    cap_counts = np.array([_COUNT[c] for c, _ in CAP_PAIRS])
    cap_items = np.array([_SLOT[i] for _, i in CAP_PAIRS])
    again_cols = np.array([_COUNT[e] for e in AGAIN])
    decisions, kinds, amounts = [], [], []
    done = 0
    for _, arrays in corpus.decision_batches():
        decision = np.ones(len(arrays.inventory) - 1, dtype=bool)
        decision[arrays.row_starts[1:] - 1] = False
        cnt, inv = arrays.achievement_counts, arrays.inventory
        level = inv[:, material_cols].astype(np.int32)
        offset = np.repeat(np.arange(len(arrays.lengths), dtype=np.int32) * 16, arrays.lengths + 1)[:, None]
        most = np.maximum.accumulate(level + offset, axis=0) - offset
        regained = np.clip(np.minimum(level[1:], most[:-1]) - level[:-1], 0, None)
        rose = np.diff(cnt[:, cap_counts].astype(_signed(cnt.dtype)), axis=0)
        item_rose = np.diff(inv[:, cap_items].astype(_signed(inv.dtype)), axis=0) > 0
        capped = np.where((rose > 0) & ~item_rose, rose, 0)
        made = cnt[:, again_cols].astype(np.int32)
        again = np.clip(made[1:] - np.maximum(made[:-1], 1), 0, None)
        stacked = np.hstack([regained, capped, again])
        stacked[~decision] = 0  # transitions into the next episode's reset row are not decisions
        # units are sparse: find the rows holding any first (nonzero over all of them is slow)
        hit = np.flatnonzero(stacked.any(axis=1))
        sub, col = np.nonzero(stacked[hit])
        row = hit[sub]
        # a transition's decision index: the decisions before it in the batch
        decisions.append(np.cumsum(decision)[row] - 1 + done)
        kinds.append(col.astype(np.int64))
        amounts.append(stacked[row, col].astype(np.int64))
        done += int(decision.sum())
    if not decisions:
        none = np.zeros(0, np.int64)
        return Units(none, none, none)
    return Units(*(np.concatenate(parts) for parts in (decisions, kinds, amounts)))


class Scan(NamedTuple):
    """Per episode, kind and scale, each an (E, len(KINDS), len(scales)) array.

    Attributes:
        peak: The most units of the kind in a window of that many progress-free decisions.
        first: The 1-based decision where that window's first progress-free decision is (0: none).
        last: The 1-based decision of its last progress-free decision (the episode's last
            progress-free decision when the window runs past it).
        scales: The window lengths of the last axis (``WHOLE``: all progress-free decisions).
    """

    peak: np.ndarray
    first: np.ndarray
    last: np.ndarray
    scales: tuple[int, ...] = SCALES


def scan(units: Units, quiet: np.ndarray, lengths: np.ndarray, scales: tuple[int, ...] = SCALES) -> Scan:
    """The multi-scale scan of ``units`` over progress-free decisions (see the module).

    Args:
        units: ``loop_units`` of the corpus.
        quiet: (N,) bool, which decisions are progress-free (``progress_free_mask``).
        lengths: (E,) decisions per episode.
        scales: Window lengths in progress-free decisions (``WHOLE``: all of them).

    Returns:
        The peaks and where they lie.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    n_eps, n_kinds = len(lengths), len(KINDS)
    shape = (n_eps, n_kinds, len(scales))
    peak = np.zeros(shape, np.int64)
    first = np.zeros(shape, np.int64)
    last = np.zeros(shape, np.int64)
    starts = np.cumsum(lengths) - lengths
    episode_of = np.repeat(np.arange(n_eps), lengths)
    # each progress-free decision's position among its episode's progress-free decisions
    rank = np.cumsum(quiet) - 1
    free_before = np.concatenate([[0], np.cumsum(quiet)])[starts] if n_eps else np.zeros(0, np.int64)
    free_count = np.bincount(episode_of, weights=quiet, minlength=n_eps).astype(np.int64)
    keep = quiet[units.decision]
    dec, kind, amount = units.decision[keep], units.kind[keep], units.units[keep]
    if not len(dec):
        return Scan(peak, first, last, tuple(scales))
    ep = episode_of[dec]
    pos = rank[dec] - free_before[ep]
    group = ep * n_kinds + kind
    order = np.lexsort((pos, group))
    dec, pos, group, amount, ep = dec[order], pos[order], group[order], amount[order], ep[order]
    big = np.int64(1) << 32  # positions stay far below it
    key = group * big + pos
    total = np.concatenate([[0], np.cumsum(amount)])
    runs = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    sizes = np.diff(np.r_[runs, len(group)])
    free_decisions = np.flatnonzero(quiet)
    for s, width in enumerate(scales):
        # a window ends within its own (episode, kind): the whole scale at the group's end
        bound = (group + 1) * big if width == WHOLE else key + width
        end = np.searchsorted(key, bound, side="left")
        sums = total[end] - total[np.arange(len(key))]
        best = np.maximum.reduceat(sums, runs)
        # the first window per group reaching its best
        hit = np.flatnonzero(sums == np.repeat(best, sizes))
        hit = hit[np.r_[True, group[hit][1:] != group[hit][:-1]]]
        g_ep, g_kind = group[hit] // n_kinds, group[hit] % n_kinds
        peak[g_ep, g_kind, s] = best
        first[g_ep, g_kind, s] = dec[hit] - starts[g_ep] + 1
        span = free_count[g_ep] - 1 if width == WHOLE else np.minimum(pos[hit] + width - 1, free_count[g_ep] - 1)
        if width == WHOLE:
            # the whole scale's window is all of the episode's progress-free decisions
            first[g_ep, g_kind, s] = free_decisions[free_before[g_ep]] - starts[g_ep] + 1
        last[g_ep, g_kind, s] = free_decisions[free_before[g_ep] + span] - starts[g_ep] + 1
    return Scan(peak, first, last, tuple(scales))
