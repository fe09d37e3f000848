"""A widget that tells the kernel when the browser has drawn a session's first page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
import traitlets


class FirstPaint(anywidget.AnyWidget):
    """Invisible: calls ``on_drawn()`` once the browser tab showing it has drawn an element
    matching ``selector`` (or ``timeout_ms`` after it was rendered, whichever comes first).
    Once per widget, however many times it is rendered (a second view of it says nothing)."""

    _esm = Path(__file__).with_name("first_paint.js")
    selector = traitlets.Unicode("").tag(sync=True)
    timeout_ms = traitlets.Int(10_000).tag(sync=True)

    def __init__(self, selector: str, on_drawn: Callable[[], None], timeout_ms: int = 10_000) -> None:
        super().__init__(selector=selector, timeout_ms=timeout_ms)
        self.drawn = False
        self._on_drawn = on_drawn
        self.on_msg(self._message)

    def _message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and "drawn" in content and not self.drawn:
            self.drawn = True
            self._on_drawn()
