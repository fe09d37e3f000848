"""``workbench.util.memory``: glibc keeps freed memory for reuse, unless told not to."""

from __future__ import annotations

import platform

from workbench.util.memory import retain_freed_memory

GLIBC = platform.libc_ver()[0] == "glibc"  # elsewhere the call is a no-op returning False


def test_zero_leaves_the_allocator_alone():
    assert retain_freed_memory(0) is False


def test_the_allocator_takes_the_setting_and_the_environment_can_refuse_it(monkeypatch):
    assert retain_freed_memory(8) is GLIBC
    monkeypatch.setenv("WORKBENCH_RETAIN_FREED_MB", "0")
    assert retain_freed_memory() is False
    monkeypatch.setenv("WORKBENCH_RETAIN_FREED_MB", "64")
    assert retain_freed_memory() is GLIBC
