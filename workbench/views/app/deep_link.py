"""The dashboard's deep links: ``?view=replayer&episode=ID&decision=N`` opens the Replayer there."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit, urlunsplit

from workbench.errors import WorkbenchError
from workbench.util.links import REPLAY_KEYS, replay_pairs

#: The views a link can open, by the name the query gives them.
VIEWS = ("replayer",)


@dataclass(frozen=True)
class DeepLink:
    """What a dashboard URL's query asks to open (``view`` None: nothing, the usual first page).

    Attributes:
        view: The view to open (one of ``VIEWS``), or None.
        episode: The episode id to show in it.
        decision: The 1-based decision to show (0 the reset frame), or None: the episode's
            highest-paying decision, where every pick opens (``Pick.opens_at``).
    """

    view: str | None = None
    episode: str | None = None
    decision: int | None = None


def parse_link(query: str | None) -> DeepLink:
    """Read a dashboard URL's query string (``token`` and other keys are ignored).

    Args:
        query: The part of the URL after ``?`` (None or '' when there is none).

    Returns:
        The view, episode and decision asked for; an empty ``DeepLink`` when no ``view`` is given.

    Raises:
        WorkbenchError: An unknown view, a replayer link without an episode, or a decision that
            is not a whole number >= 0.
    """
    fields = {key: values[-1] for key, values in parse_qs(query or "", keep_blank_values=True).items()}
    view = fields.get("view")
    if not view:
        return DeepLink()
    if view not in VIEWS:
        raise WorkbenchError(f"link: view={view!r} is not one the dashboard opens (it opens {', '.join(VIEWS)})")
    episode = fields.get("episode", "")
    if not episode:
        raise WorkbenchError("link: view=replayer needs episode=<episode id>")
    decision = fields.get("decision")
    if decision is None or decision == "":
        return DeepLink(view, episode)
    # ASCII digits only: ``str.isdigit`` also accepts "²" or "٣", which ``int`` refuses or reads
    # as another number.
    if not (decision.isascii() and decision.isdigit()):
        raise WorkbenchError(f"link: decision={decision!r} is not a decision number (1, 2, ...)")
    return DeepLink(view, episode, int(decision))


def replayer_link(url: str, episode: str, decision: int | None = None) -> str:
    """The dashboard URL ``url`` (as ``workbench app`` prints it, with its token) made to open
    the Replayer on ``episode`` at ``decision``.

    Args:
        url: The dashboard's address, e.g. ``http://127.0.0.1:8765/?token=...``.
        episode: The episode id.
        decision: The 1-based decision, or None for the episode's start.

    Returns:
        ``url`` with ``view=replayer&episode=...&decision=...`` added to its query (escaped).
    """
    scheme, netloc, path, query, fragment = urlsplit(url)
    pairs = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k not in REPLAY_KEYS]
    pairs += replay_pairs(episode, decision)
    return urlunsplit((scheme, netloc, path or "/", urlencode(pairs), fragment))
