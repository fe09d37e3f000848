"""The dashboard's link form for a replay: ``?view=replayer&episode=ID&decision=N``, built in one place."""

from __future__ import annotations

from urllib.parse import quote_plus

#: The query keys a replay link sets (the dashboard's ``deep_link.parse_link`` reads them).
REPLAY_KEYS = ("view", "episode", "decision")


def replay_pairs(episode: str, decision: int | None = None) -> list[tuple[str, str]]:
    """The query pairs that open the dashboard's Replayer on ``episode`` at ``decision``.

    Args:
        episode: The episode id.
        decision: The 1-based decision (0: the episode's start), or None for the start.

    Returns:
        ``[("view", "replayer"), ("episode", episode), ("decision", "N")]``, the last left out
        when ``decision`` is None.
    """
    pairs = [("view", "replayer"), ("episode", episode)]
    if decision is not None:
        pairs.append(("decision", str(int(decision))))
    return pairs


def replay_query(episode: str, decision: int | None = None) -> str:
    """The relative link (``?view=replayer&episode=...&decision=...``, escaped) to a replay.

    Args:
        episode: The episode id.
        decision: The 1-based decision, or None for the episode's start.

    Returns:
        The query string with its leading ``?``, to append to the dashboard's address.
    """
    # urlencode's own escaping of the pairs (quote_plus each value), without its general walk
    # over the pairs: an audit at 1M decisions builds thousands of these links
    query = f"?view=replayer&episode={quote_plus(str(episode))}"
    return query if decision is None else f"{query}&decision={int(decision)}"
