"""What the app's pages share: the tabs, a status line, guarded callbacks, background work.

The tabs' titles, a status line for messages, guarded callbacks (an error becomes a message in
the page, its traceback goes to the server log), work in a background thread and page titles."""

from __future__ import annotations

import contextlib
import html
import logging
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as w
import solara
import solara.lab

from workbench.errors import WorkbenchError

log = logging.getLogger("workbench.views.app")


COLORS = {"error": "#B3261E", "warning": "#8A5A00", "ok": "#1B6E20", "info": "#0B4F8A"}
#: Errors a user causes (a bad path, a file that is not a config or corpus): shown as they are.
USER_ERRORS = (WorkbenchError, OSError)


class Status:
    """A one-message line under a page's controls (``widget``); ``show(text, level)`` replaces it."""

    def __init__(self) -> None:
        self.widget = w.HTML(layout=w.Layout(min_height="24px"))
        self.widget.add_class("wb-app-status")
        self.text, self.level = "", "info"

    def show(self, text: str, level: str = "info") -> None:
        """Show ``text`` (plain text, escaped) coloured for ``level`` (error, warning, ok, info).

        Args:
            text: The message.
            level: error, warning, ok or info.
        """
        self.text, self.level = text, level
        self.widget.value = status_html(text, level)

    def error(self, error: BaseException, doing: str) -> None:
        """Show what went wrong while ``doing``: a user's error as its message, anything else as
        an internal error whose traceback is logged.

        Args:
            error: What was raised.
            doing: What the page was doing, said first.
        """
        self.show(error_text(error, doing), "error")


def status_html(text: str, level: str = "info") -> str:
    """A status line's HTML: ``text`` (plain text, escaped) coloured for ``level``.

    Args:
        text: The message.
        level: error, warning, ok or info.

    Returns:
        The HTML.
    """
    lines = "<br>".join(html.escape(line) for line in text.splitlines())
    return (
        f"<div class='wb-app-msg wb-app-{level}' style='color:{COLORS.get(level, 'black')};"
        f"white-space:normal;word-break:break-word'>{lines}</div>"
    )


def error_text(error: BaseException, doing: str) -> str:
    """What went wrong while ``doing``, said to the user: a user's error as its message, anything
    else as an internal error whose traceback is logged.

    Args:
        error: What was raised.
        doing: What the page was doing, said first.

    Returns:
        The message.
    """
    if isinstance(error, USER_ERRORS):
        log.info("%s: %s", doing, error)
        return f"{doing}: {error}"
    log.error("%s failed", doing, exc_info=error)
    return f"{doing}: internal error ({type(error).__name__}: {error}); the server log has the details"


def guarded(status: Status, doing: str, action: Callable[[], Any]) -> Callable[..., None]:
    """A widget callback running ``action``; whatever it raises becomes a message on ``status``.

    Args:
        status: Where errors are shown.
        doing: What the callback does, for the message.
        action: The work.

    Returns:
        The callback (it takes and ignores any arguments).
    """

    def callback(*_: Any) -> None:
        try:
            action()
        except Exception as error:  # every failure reaches the page as a message, never a blank page
            status.error(error, doing)

    return callback


def kernel_context_of_session() -> Any:
    """Solara's virtual-kernel context of this session (widgets changed from another thread must
    be changed inside it), or a do-nothing context outside Solara.

    Returns:
        A context manager.
    """
    try:
        from solara.server import kernel_context

        if kernel_context.has_current_context():
            return kernel_context.get_current_context()
    except ImportError:
        pass
    return contextlib.nullcontext()


class Background:
    """Work started by ``in_background``: ``join(timeout)`` waits for its end (tests, scripts)."""

    def __init__(self, finished: threading.Event) -> None:
        self._finished = finished

    def join(self, timeout: float | None = None) -> bool:
        """Wait until the work (and its ``done``/``after``) has run.

        Args:
            timeout: Seconds to wait at most (None: until it ends).

        Returns:
            Whether it has ended.
        """
        return self._finished.wait(timeout)

    def is_alive(self) -> bool:
        """Whether the work is still running.

        Returns:
            True while it runs.
        """
        return not self._finished.is_set()


def in_background(
    status: Status,
    doing: str,
    work: Callable[[], Any],
    done: Callable[[Any], None],
    busy: list[w.Widget] | None = None,
    after: Callable[[], None] | None = None,
) -> Background:
    """Run ``work`` in the background (the page stays live), then ``done(result)``; ``busy``
    widgets are disabled meanwhile and ``after()`` runs at the end either way. An error becomes
    a message on ``status``. The app's one background path: a ``solara.lab.task`` (as the views'
    builds, ``views_pages.ViewSlot``), inside the session's kernel context.

    Args:
        status: Where an error is shown.
        doing: What the work is, for the message and the log.
        work: The work, run in the background.
        done: Called with ``work``'s result.
        busy: Widgets disabled while it runs.
        after: Called at the end either way.

    Returns:
        The work's handle (``join`` waits for it).
    """
    context = kernel_context_of_session()
    busy = busy or []
    for widget in busy:
        widget.disabled = True
    finished = threading.Event()

    def run() -> None:
        with context:
            try:
                done(work())
            except Exception as error:  # shown in the page, traceback in the server log
                status.error(error, doing)
            finally:
                for widget in busy:
                    widget.disabled = False
                if after is not None:
                    after()
                finished.set()

    solara.lab.task(run, check_for_render_context=False)()
    return Background(finished)


def heading(text: str, note: str = "") -> w.HTML:
    """A page's title line, with an optional note after it.

    Args:
        text: The title.
        note: A note after it ('' for none).

    Returns:
        The heading widget.
    """
    return w.HTML(heading_html(text, note))


def heading_html(text: str, note: str = "") -> str:
    """A page's title line as HTML, with an optional note after it.

    Args:
        text: The title.
        note: A note after it ('' for none).

    Returns:
        The HTML.
    """
    extra = f" <span style='color:#555;font-weight:normal'>{html.escape(note)}</span>" if note else ""
    return f"<h3 style='margin:4px 0 8px 0'>{html.escape(text)}{extra}</h3>"


TABS = ("Corpus", "Tune", "Replay", "Compare", "Configs", "Live")
CORPUS, TUNE, REPLAY, COMPARE, CONFIGS, LIVE = range(len(TABS))


def use_held(**initial: Any) -> tuple[dict[str, Any], Callable[[str, Callable[[Any], None]], Callable[[Any], None]]]:
    """What a component's controls hold now, for its buttons (a Solara hook: call it in a component).

    A click can arrive right behind the typing it follows, before the render that typing asked
    for: a button that used the values of the render it was made in would act on the old text.
    The held values are updated by the controls' handlers as each value arrives.

    Args:
        **initial: Each control's value at the first render, by a key of the caller's choosing.

    Returns:
        The held values (one dict for the component's life, updated in place) and
        ``holding(key, setter)``: a handler that records a value under ``key``, then passes it on.
    """
    now = solara.use_ref(dict(initial))

    def holding(key: str, setter: Callable[[Any], None]) -> Callable[[Any], None]:
        def on_value(value: Any) -> None:
            now.current[key] = value
            setter(value)

        return on_value

    return now.current, holding
