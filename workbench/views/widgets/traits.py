"""The traits every view shares (``config``, ``episode``, ``decision``, ``selection``, ``picked``): one definition, linked by name."""

from __future__ import annotations

from dataclasses import dataclass

import traitlets

from workbench.core.config import RewardConfig


@dataclass(frozen=True, eq=False)
class Pick:
    """An episode picked in a view: an event, immutable. Two picks are never equal (identity),
    so the same episode picked twice is heard twice by observers of ``picked``.

    Attributes:
        episode: The episode id picked.
        decision: The decision the pick names (1-based; 0 the reset frame), or None: none named.
        source: Who picked (``"tuner"``, ``"compare"``, ``"certificate"``, ``"link"`` ...).
    """

    episode: str
    decision: int | None = None
    source: str = ""

    @property
    def opens_at(self) -> int | str:
        """Where every view opens this pick: the decision it names, else ``"best"`` (the
        episode's highest-paying decision)."""
        return "best" if self.decision is None else self.decision


class ViewTraits(traitlets.HasTraits):
    """The state a view exposes to links (``traitlets.link``/``dlink``/``observe``); what each
    means in each view is in docs/widgets.md ("The views' traits").

    Attributes:
        config: The config the view scores with.
        episode: The id of the episode in view (the Replayer's shown, the others' picked), or None.
        decision: The decision in view, 1-based (the Replayer's shown; a certificate's picked
            loop's first), or 0 for none.
        selection: The ids of the episodes chosen or highlighted in the view.
        picked: The last pick announced in the view (an event, ``pick.announce``), or None.
    """

    config = traitlets.Instance(RewardConfig)
    episode = traitlets.Unicode(None, allow_none=True)
    decision = traitlets.Int(0)
    selection = traitlets.Tuple()
    picked = traitlets.Instance(Pick, allow_none=True)
