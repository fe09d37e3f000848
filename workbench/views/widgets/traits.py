"""The traits every view shares (``config``, ``episode``, ``selection``): one definition, linked by name."""

from __future__ import annotations

import traitlets

from workbench.core.config import RewardConfig


class ViewTraits(traitlets.HasTraits):
    """The state a view exposes to links (``traitlets.link``/``dlink``/``observe``); what each
    means in each view is in docs/widgets.md ("The views' traits").

    Attributes:
        config: The config the view scores with.
        episode: The id of the episode in view (the Replayer's shown, the others' picked), or None.
        selection: The ids of the episodes chosen or highlighted in the view.
    """

    config = traitlets.Instance(RewardConfig)
    episode = traitlets.Unicode(None, allow_none=True)
    selection = traitlets.Tuple()
