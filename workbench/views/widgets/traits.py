"""The traits every view shares (``config``, ``episode``, ``decision``, ``selection``): one definition, linked by name."""

from __future__ import annotations

import traitlets

from workbench.core.config import RewardConfig


class ViewTraits(traitlets.HasTraits):
    """The state a view exposes to links (``traitlets.link``/``dlink``/``observe``); what each
    means in each view is in docs/widgets.md ("The views' traits").

    Attributes:
        config: The config the view scores with.
        episode: The id of the episode in view (the Replayer's shown, the others' picked), or None.
        decision: The decision in view, 1-based (the Replayer's shown; a certificate's picked loop's
            first; a Tuner's or Compare's while a pick in one of their sections is announced), or
            0 for none: whoever opens the episode opens it at its highest-paying decision.
        selection: The ids of the episodes chosen or highlighted in the view.
    """

    config = traitlets.Instance(RewardConfig)
    episode = traitlets.Unicode(None, allow_none=True)
    decision = traitlets.Int(0)
    selection = traitlets.Tuple()
