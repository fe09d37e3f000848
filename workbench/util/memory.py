"""Keeping freed memory for reuse, opted into by a program: on a virtual machine a fresh page costs.

Re-scoring a corpus allocates a few arrays the size of its active decisions and frees the last
score's. glibc returns freed memory at the top of its heap to the system once more than a few
MB are free, so the next score faults every page in again; on this project's VM a 4 KiB page
fault costs ~3 us (a 2.4 MB array ~2 ms), which doubled the re-score of 1M decisions (11.9 ms
against 6.5 ms measured with the heap's top kept). ``retain_freed_memory`` asks glibc to keep up
to ``megabytes`` of freed heap (``M_TOP_PAD``): resident memory stays that much higher after a
large free; nothing else changes.

The setting is the whole process's, so importing the package never makes it: the programs that
own their process opt in (``workbench.cli.main``, the dashboard server, the Tuner widget), and
an application embedding the workbench decides for itself. Set ``WORKBENCH_RETAIN_FREED_MB=0``
to keep even those from touching the allocator. A no-op off glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading

#: glibc's mallopt parameter for the heap top kept when trimming (malloc.h).
_M_TOP_PAD = -2
#: MB of freed heap kept by default: a few re-scores of a 10M-decision corpus.
DEFAULT_RETAINED_MB = 64

_LOCK = threading.Lock()
#: None until the allocator was asked (once per process); then whether it took the setting.
_retained: bool | None = None


def _set_top_pad(megabytes: int) -> bool:
    """Ask glibc's ``mallopt`` to keep ``megabytes`` of freed heap top; whether it took it
    (False where there is no glibc ``mallopt``)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_TOP_PAD, min(megabytes, 2047) << 20))


def retain_freed_memory(megabytes: int | None = None) -> bool:
    """Keep up to ``megabytes`` (default ``WORKBENCH_RETAIN_FREED_MB`` or 64) of freed memory
    at the top of glibc's heap for reuse, for the rest of the process.

    Safe from any thread and idempotent: the first call that asks for more than 0 MB sets the
    allocator (under a lock), every later call returns that outcome without touching it again.
    Returns whether the allocator was set (by this call or an earlier one); False for 0 (the
    caller asks for nothing and nothing is done), off glibc, or when glibc refused."""
    global _retained
    if megabytes is None:
        megabytes = int(os.environ.get("WORKBENCH_RETAIN_FREED_MB", DEFAULT_RETAINED_MB))
    if megabytes <= 0:
        return False
    with _LOCK:
        if _retained is None:
            _retained = _set_top_pad(megabytes)
        return _retained


def freed_memory_retained() -> bool | None:
    """Whether ``retain_freed_memory`` set the allocator in this process (None: never asked)."""
    return _retained
