"""The diagnostics' hacking flags of each block of a run's episodes (farming, dominance)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from workbench.analysis.diagnostics import diagnose
from workbench.analysis.timeline.frames import TimelineError
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus

#: The diagnostics' sections ``window_flags`` keeps by default.
WINDOW_SECTIONS = ("farming", "dominance")


def window_flags(
    corpus: Corpus,
    configs: Mapping[str, RewardConfig],
    window: int = 20,
    *,
    since_window: int = 0,
    reps: int = 200,
    sections: Sequence[str] = WINDOW_SECTIONS,
) -> pd.DataFrame:
    """The diagnostics' flags of each complete block of ``window`` episodes of ``corpus``, in
    arrival order (episodes 0..window-1, then window..2 window-1, ...), under each config.

    The default ``sections`` keep the signs of hacking that can change over a run (farming and
    dominance); dead entries are facts of the config, the same in every block.

    Args:
        corpus: The run's episodes, in arrival order.
        configs: Name -> reward config.
        window: Episodes per block (at least 2).
        since_window: The first block diagnosed (a live view diagnoses only new blocks).
        reps: The diagnosis's bootstrap resamples.
        sections: The diagnostics' sections kept.

    Returns:
        Columns config, window (the block), first, last (arrivals), section, code, subject,
        why; one row per flag kept (a clean block has none).

    Raises:
        TimelineError: ``window`` below 2.
    """
    if window < 2:
        raise TimelineError(f"window must be at least 2 episodes to diagnose, not {window}")
    rows = []
    for block in range(since_window, len(corpus) // window):
        first, last = block * window, (block + 1) * window - 1
        part = corpus[first : last + 1]
        for name, config in configs.items():
            flags = diagnose(part, config, reps=reps, progress=("achievements",)).flags
            for flag in flags[flags["section"].isin(list(sections))].itertuples(index=False):
                rows.append((name, block, first, last, flag.section, flag.code, flag.subject, flag.why))
    return pd.DataFrame(rows, columns=["config", "window", "first", "last", "section", "code", "subject", "why"])
