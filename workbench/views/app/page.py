"""The Solara page: one ``AppSession`` (all ipywidgets) per browser tab."""

from __future__ import annotations

import logging

import solara

from workbench.views.app import options
from workbench.views.app.session import AppSession

log = logging.getLogger("workbench.views.app")


def _new_session() -> AppSession:
    log.info("new page session")
    return AppSession(options.current)


@solara.component
def Page() -> None:
    """Render the workbench dashboard (built once per session, kept across re-renders)."""
    session = solara.use_memo(_new_session, [])
    search = solara.use_router().search  # a deep link's query (docs/dashboard.md, "Links")
    solara.use_effect(lambda: session.open_link(search), [])  # once per session, after the first render
    solara.Title("Crafter Reward Workbench")
    solara.display(session.widget)
