"""Keeping freed memory for reuse: on a virtual machine a fresh page can cost microseconds.

Re-scoring a corpus allocates a few arrays the size of its active decisions and frees the last
score's. glibc returns freed memory at the top of its heap to the system once more than a few
MB are free, so the next score faults every page in again; on this project's VM a 4 KiB page
fault costs ~3 us (a 2.4 MB array ~2 ms), which doubled the re-score of 1M decisions (11.9 ms
against 6.5 ms measured with the heap's top kept). ``retain_freed_memory`` asks glibc to keep up
to ``megabytes`` of freed heap (``M_TOP_PAD``): resident memory stays that much higher after a
large free; nothing else changes. ``workbench.scoring`` calls it on import; set
``WORKBENCH_RETAIN_FREED_MB=0`` to leave the allocator as it is. A no-op off glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

#: glibc's mallopt parameter for the heap top kept when trimming (malloc.h).
_M_TOP_PAD = -2
#: MB of freed heap kept by default: a few re-scores of a 10M-decision corpus.
DEFAULT_RETAINED_MB = 64


def retain_freed_memory(megabytes: int | None = None) -> bool:
    """Keep up to ``megabytes`` (default ``WORKBENCH_RETAIN_FREED_MB`` or 64) of freed memory
    at the top of glibc's heap for reuse. Returns whether the allocator took the setting
    (False off glibc, or for 0)."""
    if megabytes is None:
        megabytes = int(os.environ.get("WORKBENCH_RETAIN_FREED_MB", DEFAULT_RETAINED_MB))
    if megabytes <= 0:
        return False
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_TOP_PAD, min(megabytes, 2047) << 20))
