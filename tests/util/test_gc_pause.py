"""The collector's pause: off inside, back as it was after, nested and across threads."""

from __future__ import annotations

import gc
import threading

import pytest

from workbench.util.gc_pause import gc_paused


@pytest.fixture(autouse=True)
def _collector_restored():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_off_inside_and_on_after():
    gc.enable()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_on_after_an_error_inside():
    gc.enable()
    with pytest.raises(KeyError), gc_paused():
        raise KeyError("x")
    assert gc.isenabled()


def test_nested_pauses_switch_back_once_the_outer_ends():
    gc.enable()
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still runs
    assert gc.isenabled()


def test_left_off_when_it_was_off_before():
    gc.disable()
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_overlapping_pauses_in_two_threads():
    """Thread B's pause begins inside A's and ends after it: the collector stays off until B ends."""
    gc.enable()
    a_inside, b_inside, a_left = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def a() -> None:
        with gc_paused():
            a_inside.set()
            b_inside.wait(10)
        a_left.set()

    def b() -> None:
        a_inside.wait(10)
        with gc_paused():
            b_inside.set()
            a_left.wait(10)
            seen["after A left"] = gc.isenabled()

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert seen == {"after A left": False}
    assert gc.isenabled()


def test_reference_cycles_are_still_freed_by_an_explicit_collect():
    class Node:
        pass

    with gc_paused():
        node = Node()
        node.self = node  # a cycle: reference counting alone never frees it
        del node
        assert gc.collect() >= 1
