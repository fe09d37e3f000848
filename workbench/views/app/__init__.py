"""The workbench as an app: a dashboard in the browser (Solara components hosting the notebook views).

``workbench app [CORPUS] [--config FILE ...]`` serves it on 127.0.0.1 with a token. Pages:
Corpus (open, import, record), Tune, Replay, Compare (the ``workbench.views.widgets`` views, unchanged),
Configs (the session's configs, kept in a workspace folder across restarts) and Live (a run
followed while it trains).

- ``server``: the token middleware, the host check and ``serve``; ``origin``: the Origin check;
  ``assets``: Solara's static files answered from memory, gzipped once.
- ``page``: the Solara components: ``Page`` (one ``AppSession`` per browser tab, its views built
  once the browser has drawn the first page, which ``first_paint`` says), ``Dashboard`` (title,
  status line, tabs; a page made when its tab is first shown, kept after); ``session``: one
  browser tab's views and what the pages show as reactive values; ``state``: its corpus and
  configs, one frozen ``AppState``, and the Live page's ``LiveState``; ``deep_link``: the URLs
  that open the Replayer on a pick.
- ``views_pages``: the Tune, Replay and Compare pages (``ViewSlot``: a view built by a
  ``solara.lab.task``; ``ViewPage``: its component); ``corpus_page``, ``configs_page``: Solara
  components drawn from the state; ``live_page``: the Live page, a component drawn from the
  tab's ``LiveState`` (``live_follow``: its work without a page); ``workspace``: the kept
  configs and each tab's draft.
"""

# ruff: noqa: E402
# (the imports below need the optional packages checked first)
from workbench.util.extras import require_extra

require_extra("app", "the dashboard (workbench app)", "solara", "ipywidgets", "anywidget", "bqplot", "matplotlib")

from workbench.views.app.options import AppOptions

__all__ = ["AppOptions"]
