"""'Did you mean ...?': the one place that guesses which known name an unknown one meant."""

from __future__ import annotations

import difflib
from collections.abc import Sequence


def close_match(word: str, choices: Sequence[str]) -> str | None:
    """The choice spelled most like ``word`` (difflib's ratio, cutoff 0.6).

    Args:
        word: What was typed.
        choices: The valid spellings.

    Returns:
        The closest choice, or None.
    """
    matches = difflib.get_close_matches(word, list(choices), n=1)
    return matches[0] if matches else None


def key_suggestion(word: str, choices: Sequence[str], *, prefix: str = "") -> str | None:
    """The key an unknown ``word`` probably meant: first a choice containing it or contained
    in it once ``prefix`` is dropped from both (``lambda`` -> ``indicator_lambda``), else the
    closest spelling.

    Args:
        word: The unknown key.
        choices: The valid keys.
        prefix: A prefix ignored when comparing.

    Returns:
        The key, or None when nothing is close.
    """
    core = word.removeprefix(prefix)
    containing = [c for c in choices if core and (core in c.removeprefix(prefix) or c.removeprefix(prefix) in core)]
    return containing[0] if containing else close_match(word, choices)
