"""Process control for long runs: time limits, SIGTERM as Ctrl-C, workers that follow.

A time limit on a call, SIGTERM stopping a run as Ctrl-C does (never in the middle of a save),
and worker processes that exit when their parent dies."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = [
    "TimeLimitExceeded",
    "die_with_parent",
    "saving",
    "signals_set",
    "stop_requested",
    "stop_signals",
    "time_limit",
]


class TimeLimitExceeded(BaseException):
    """Raised inside a call that outlived ``time_limit``. A ``BaseException`` so a policy's own
    ``except Exception`` cannot swallow it."""


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise ``TimeLimitExceeded`` in the body if it runs longer than ``seconds`` (None or 0: no limit).

    Uses SIGALRM, so it works in a process's main thread (a worker's, or the parent's when it
    records itself) and is a no-op elsewhere. The alarm repeats every second after the limit,
    so a body that catches the first one is interrupted again. Code stuck in C without
    returning to the interpreter is interrupted only when it returns.
    """
    if not seconds or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise TimeLimitExceeded

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield
    finally:
        while True:  # an alarm landing here raises again: disarm until it sticks
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
                break
            except TimeLimitExceeded:
                continue
        signal.signal(signal.SIGALRM, previous)


class _StopState:
    """Whether a stop was asked (Ctrl-C or SIGTERM) and whether a save is under way."""

    def __init__(self) -> None:
        self.installed = False
        self.requested = False
        self.saving = 0
        self.pending = False


_STATE = _StopState()


def stop_requested() -> bool:
    """True once Ctrl-C or SIGTERM asked the run to stop (inside ``stop_signals``). A
    ``KeyboardInterrupt`` seen while this is False came from user code (a policy), not a user."""
    return _STATE.requested


@contextmanager
def stop_signals() -> Iterator[None]:
    """Within the body, SIGINT and SIGTERM raise ``KeyboardInterrupt`` (so SIGTERM stops a run
    exactly as Ctrl-C does) and set ``stop_requested``; inside ``saving()`` the interrupt waits
    until the save is done. A no-op outside the main thread (signals go to the main thread)."""
    if threading.current_thread() is not threading.main_thread() or _STATE.installed:
        yield
        return

    def on_stop(signum: int, frame: FrameType | None) -> None:
        _STATE.requested = True
        if _STATE.saving:
            _STATE.pending = True
            return
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, on_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    _STATE.installed, _STATE.requested, _STATE.pending, _STATE.saving = True, False, False, 0
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _STATE.installed = False


@contextmanager
def signals_set(stop: threading.Event) -> Iterator[None]:
    """Within the body, the first SIGINT or SIGTERM sets ``stop`` (a loop watching it ends at its
    next check, having finished the step it was in: nothing half-saved) and a second one raises
    ``KeyboardInterrupt`` (a user who insists). A no-op outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_stop(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = {sig: signal.signal(sig, on_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def saving() -> Iterator[None]:
    """A stretch (an episode file and the index naming it) a stop signal must not cut in two."""
    _STATE.saving += 1
    try:
        yield
    finally:
        _STATE.saving -= 1
    if not _STATE.saving and _STATE.pending:
        _STATE.pending = False
        raise KeyboardInterrupt


def die_with_parent(parent_pid: int) -> None:
    """Make this (worker) process exit when ``parent_pid`` dies, however it dies (SIGKILL too).

    On Linux the kernel sends SIGKILL at the parent's death (prctl PR_SET_PDEATHSIG); on every
    system a daemon thread also polls the parent id once a second. Call it first in a worker.
    """
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):
            pass  # the watchdog below still covers it
    if os.getppid() != parent_pid:  # the parent died before the line above took effect
        os._exit(1)

    def watch() -> None:
        while True:
            threading.Event().wait(1.0)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="die-with-parent", daemon=True).start()
