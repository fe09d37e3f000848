"""A finding's filmstrip: the episode's frames around the first lap of the loop it flagged, as inline PNGs."""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np

from workbench.data.episodes import Corpus
from workbench.errors import WorkbenchError
from workbench.views.report.markup import text

#: Frames per filmstrip: enough to see a lap (mine, place, mine again) and its two ends.
FRAMES = 8


def strip_decisions(first: int, last: int, laps: int, shown: int = FRAMES) -> list[int]:
    """The decisions a filmstrip shows: from the one before the first lap to the one after it
    (a lap lasts ``(last - first) / laps`` decisions), at most ``shown`` of them, evenly spread.

    Args:
        first: The loop's first decision.
        last: Its last decision.
        laps: How many laps it ran (at least 1 is assumed).
        shown: At most this many decisions.

    Returns:
        Distinct decisions, ascending, none below 0.
    """
    lap = max(1, round((last - first) / max(laps, 1)))
    start, stop = max(0, first - 1), first + lap + 1
    picked = np.unique(np.round(np.linspace(start, stop, min(shown, stop - start + 1))).astype(int))
    return [int(d) for d in picked]


def _png(image: np.ndarray) -> str:
    from PIL import Image  # matplotlib's own PNG writer; a dependency of the views' extra

    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image)).save(buffer, format="PNG", optimize=True)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def filmstrip(corpus: Corpus, evidence: dict[str, Any]) -> str:
    """The HTML filmstrip of a finding's ``evidence`` (its episode, loop, laps and decisions),
    or a line saying why there is none (the episode has no frames, or is not in the corpus).

    Args:
        corpus: The corpus the audit read.
        evidence: The finding's evidence (``workbench.analysis.diagnostics.loops.evidence``).

    Returns:
        The HTML.
    """
    episode_id = str(evidence.get("episode", ""))
    if episode_id not in corpus.ids:
        return f'<p class="muted">No frames: episode {text(episode_id)} is not in this corpus.</p>'
    episode = corpus[episode_id]
    if not episode.has_frames:
        return '<p class="muted">No frames: this episode was recorded or imported without them.</p>'
    try:
        frames = episode.load_frames(keep=False)
    except WorkbenchError as error:
        return f'<p class="muted">No frames: {text(error)}</p>'
    first, last = (int(d) for d in evidence.get("decisions", (0, 0)))
    decisions = strip_decisions(first, last, int(evidence.get("laps") or 1))
    steps = np.asarray(frames.step_decision)
    cells = []
    for decision in decisions:
        # images[t] is the frame after step t; the last step of ``decision`` ends it
        at = min(int(np.searchsorted(steps, decision, side="right")), len(frames.images) - 1)
        label = "reset" if decision == 0 else f"after decision {decision}"
        cells.append(
            f'<figure><img alt="{text(episode_id)}, {label}" src="data:image/png;base64,{_png(frames.images[at])}">'
            f"<figcaption>{label}</figcaption></figure>"
        )
    loop = text(evidence.get("loop", "the loop"))
    return (
        f'<p class="muted">The first lap of {loop} (decisions {decisions[0]}..{decisions[-1]} of '
        f'{text(episode_id)}):</p><div class="strip">{"".join(cells)}</div>'
    )
