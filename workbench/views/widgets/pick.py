"""Picks as events: one immutable ``Pick`` a view announces, and the one ``link`` that wires views (notebooks and the app).

An episode picked in a view (a click on its point, a certificate's loop, a decline) is an event,
not state: the view sets its ``episode`` trait (state: what is picked now) and then its ``picked``
trait to a new ``Pick`` (the event: every pick is heard, the same episode picked twice included,
with no pass through None). Whoever opens a pick opens it at the same decision
(``Pick.opens_at``): the one it names, else the episode's highest-paying one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from workbench.core.config import RewardConfig
from workbench.views.widgets.traits import Pick, ViewTraits

__all__ = ["Opener", "Pick", "Sender", "announce", "link"]


class _Opens(Protocol):
    def open_pick(self, pick: Pick, config: RewardConfig | None = None) -> None: ...


class _Adds(Protocol):
    def add(self, name: str, config: RewardConfig, *, show: bool = False) -> None: ...


#: What opens a pick: a Replayer (its ``open_pick``) or a function ``(pick, config)``.
Opener = _Opens | Callable[[Pick, RewardConfig], None]
#: What takes a config sent from a Tuner: a Compare (its ``add``) or a function ``(name, config)``.
Sender = _Adds | Callable[[str, RewardConfig], None]


def announce(view: ViewTraits, episode: str, decision: int | None = None, source: str = "") -> Pick:
    """Announce a pick in ``view``: its ``episode`` trait becomes ``episode`` (state), then its
    ``picked`` trait a new ``Pick`` (the event observers open).

    Args:
        view: The picking view.
        episode: The episode picked.
        decision: The decision the pick names (1-based; 0 the reset frame), or None.
        source: Who picked, for observers and logs (``"tuner"``, ``"certificate"`` ...).

    Returns:
        The pick announced.
    """
    pick = Pick(episode, decision, source or type(view).__name__.lower())
    view.episode = episode
    view.picked = pick
    return pick


@dataclass(frozen=True)
class _OpenPicks:
    """The observer ``link`` adds on a picking view's ``picked``: equal for the same opener (added once)."""

    open: Callable[[Pick, RewardConfig], None]

    def __call__(self, change: dict[str, Any]) -> None:
        if change["new"] is not None:
            self.open(change["new"], change["owner"].config)  # the config at the pick, not each drag's


@dataclass(frozen=True)
class _SendConfigs:
    """The observer ``link`` adds on a Tuner's ``sent``: equal for the same receiver (added once)."""

    send: Callable[[str, RewardConfig], None]

    def __call__(self, change: dict[str, Any]) -> None:
        if change["new"]:
            name, config = change["new"]
            self.send(name, config)


def _opener(replayer: Opener) -> Callable[[Pick, RewardConfig], None]:
    return replayer.open_pick if hasattr(replayer, "open_pick") else replayer


def _sender(compare: Sender) -> Callable[[str, RewardConfig], None]:
    add = getattr(compare, "add", None)
    if add is None:
        return compare  # type: ignore[return-value]
    return _ShowAdded(add)


@dataclass(frozen=True)
class _ShowAdded:
    add: Callable[..., None]

    def __call__(self, name: str, config: RewardConfig) -> None:
        self.add(name, config, show=True)  # a sent config is compared first


def link(
    tuner: ViewTraits | None = None,
    replayer: Opener | None = None,
    compare: Sender | None = None,
    *,
    pickers: tuple[ViewTraits, ...] = (),
) -> None:
    """Wire views together, the one way the notebooks and the app do: every pick of the Tuner,
    of Compare (when it is a view) and of ``pickers`` opens in ``replayer`` under the picking
    view's config at the pick, at ``Pick.opens_at``; the Tuner's "send to Compare" adds its
    config to ``compare``, first. Linking the same views twice links them once.

    The config goes with each pick rather than by ``traitlets.dlink``: a Tuner's ``config``
    changes on every drag, and re-scoring the replayed episode on each would slow the drag.

    Args:
        tuner: A Tuner, or None.
        replayer: A Replayer, or a function ``(pick, config)`` that opens a pick (the app's
            Replay page), or None.
        compare: A Compare, or a function ``(name, config)`` taking a sent config, or None.
        pickers: Other views whose picks open in ``replayer`` (a Timeline, a panel).
    """
    if replayer is not None:
        observer = _OpenPicks(_opener(replayer))
        for view in (tuner, compare, *pickers):
            if isinstance(view, ViewTraits):
                view.observe(observer, names="picked")  # equal observers are kept once
    if tuner is not None and compare is not None:
        tuner.observe(_SendConfigs(_sender(compare)), names="sent")
