"""workbench.util.blas: one BLAS thread inside the context, the threads back after it, a no-op without threadpoolctl."""

import contextlib
import sys

import numpy as np
from threadpoolctl import threadpool_info

from workbench.util import blas


def _blas_threads() -> list[int]:
    np.ones((2, 2)) @ np.ones((2, 2))  # BLAS loaded
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_blas_runs_on_one_thread_inside_and_as_before_after():
    before = _blas_threads()
    assert before  # numpy's OpenBLAS is there to limit
    with blas.single_threaded():
        assert _blas_threads() == [1] * len(before)
    assert _blas_threads() == before


def test_without_threadpoolctl_the_context_changes_nothing(monkeypatch):
    monkeypatch.setattr(blas, "_CONTROLLER", [])
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # import fails, as on the lab extra alone
    context = blas.single_threaded()
    assert isinstance(context, contextlib.nullcontext)
    assert blas._CONTROLLER == []
