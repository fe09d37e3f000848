"""One BLAS thread for small matrix work: on a busy machine BLAS's threads wait for cores and make a small fit many times slower.

The search's weight fits (7x, docs/benchmarks.md) and the shaping certificate's potential fit
(a 38-feature least squares: 48 ms on one thread against 480 ms with OpenBLAS's threads on the
sample at load 7, measured for the Tuner's certificate section) are small enough that threads
only cost. ``threadpoolctl`` (the search extra) sets the limit; without it the context changes
nothing.
"""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["single_threaded"]

_CONTROLLER: list[Any] = []


def single_threaded() -> Any:
    """A context in which BLAS runs on one thread (a reused controller: building one costs ms).

    Returns:
        The context manager (a no-op one when threadpoolctl is not installed).
    """
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # the lab extra alone: BLAS keeps its threads
            return contextlib.nullcontext()
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1)
