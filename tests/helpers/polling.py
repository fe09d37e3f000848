"""Waiting for something another thread or process does: poll a condition until a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable


def until(
    condition: Callable[[], object], what: str = "the condition", *, seconds: float = 120.0, interval: float = 0.02
) -> None:
    """Poll ``condition`` every ``interval`` seconds until it is true.

    Args:
        condition: what to wait for (called until it returns something true).
        what: named in the failure message.
        seconds: the deadline; generous, since it only matters when the test fails.
        interval: the pause between two polls.

    Raises:
        AssertionError: ``condition`` still false after ``seconds``.
    """
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {seconds:g} s waiting for {what}"
        time.sleep(interval)
