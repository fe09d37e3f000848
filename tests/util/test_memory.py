"""``workbench.util.memory``: glibc keeps freed memory for reuse when a program opts in, once,
from any thread; importing the package never touches the allocator."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import threading

import pytest
from helpers import REPO

import workbench.util.memory as memory
from workbench.cli import main
from workbench.util.memory import freed_memory_retained, retain_freed_memory

GLIBC = platform.libc_ver()[0] == "glibc"  # elsewhere the call is a no-op returning False


@pytest.fixture
def fresh_allocator(monkeypatch):
    """A process that has not asked the allocator yet, with ``mallopt`` replaced by a recorder
    (returns the list of the megabytes each call asked for)."""
    calls: list[int] = []

    def fake_set_top_pad(megabytes: int) -> bool:
        calls.append(megabytes)
        return True

    monkeypatch.setattr(memory, "_retained", None)
    monkeypatch.setattr(memory, "_set_top_pad", fake_set_top_pad)
    return calls


def test_zero_leaves_the_allocator_alone(fresh_allocator, monkeypatch):
    assert retain_freed_memory(0) is False
    monkeypatch.setenv("WORKBENCH_RETAIN_FREED_MB", "0")
    assert retain_freed_memory() is False
    assert fresh_allocator == []
    assert freed_memory_retained() is None


def test_the_allocator_is_asked_once_however_many_threads_opt_in(fresh_allocator):
    start = threading.Barrier(8)
    results: list[bool] = []

    def opt_in() -> None:
        start.wait(timeout=30)  # all eight call at once
        results.append(retain_freed_memory(16))

    threads = [threading.Thread(target=opt_in) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert results == [True] * 8
    assert fresh_allocator == [16]  # one mallopt, with the first caller's size
    assert retain_freed_memory(32) is True and fresh_allocator == [16]
    assert freed_memory_retained() is True


def test_the_environment_sets_the_size(fresh_allocator, monkeypatch):
    monkeypatch.setenv("WORKBENCH_RETAIN_FREED_MB", "24")
    assert retain_freed_memory() is True
    assert fresh_allocator == [24]


def test_the_command_line_opts_in(fresh_allocator):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert fresh_allocator == [memory.DEFAULT_RETAINED_MB]


def test_the_real_allocator_takes_the_setting(monkeypatch):
    monkeypatch.setattr(memory, "_retained", None)
    assert retain_freed_memory(8) is GLIBC
    assert memory._set_top_pad(8) is GLIBC


#: Run in a fresh interpreter: ``mallopt`` looked up through ctypes is recorded, the package's
#: layers are imported, then the spy is shown to see an opt-in.
SPY = """
import ctypes, json
seen = []
class Spy(ctypes.CDLL):
    def __getattr__(self, name):
        seen.append(name)
        return super().__getattr__(name)
ctypes.CDLL = Spy
import pyarrow as pa
pool = pa.default_memory_pool().backend_name
import workbench.scoring, workbench.analysis, workbench.data.storage, workbench.env, workbench.cli
import workbench.util.memory as memory
report = {"on_import": list(seen), "retained": memory.freed_memory_retained(),
          "pool_kept": pa.default_memory_pool().backend_name == pool}
memory.retain_freed_memory(8)
report["after_opt_in"] = list(seen)
print(json.dumps(report))
"""


def test_importing_the_package_leaves_the_allocator_alone():
    run = subprocess.run([sys.executable, "-c", SPY], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout.splitlines()[-1])
    assert "mallopt" not in report["on_import"]
    assert report["retained"] is None
    assert report["pool_kept"] is True
    if GLIBC:  # the spy does see a call: the check above is not vacuous
        assert "mallopt" in report["after_opt_in"]
