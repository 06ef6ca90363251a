"""The GUI-thread collector: one collection per check, survivors of a full one frozen, cycles freed."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from ralph_desk.gui.collector import RESCAN_EVERY, GuiThreadCollector


class Node:
    """A cycle's member that a weak reference can watch."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def collector() -> Iterator[GuiThreadCollector]:
    gc.collect()
    gc.unfreeze()
    own = GuiThreadCollector(interval_ms=60_000)  # checked by hand below, not by its timer
    yield own
    own.stop()
    own.deleteLater()


def make_due(generation: int) -> None:
    """Push the counts past the thresholds of every generation up to `generation` (allocations last)."""
    _, threshold1, threshold2 = gc.get_threshold()
    if generation == 2:
        for _ in range(threshold2 + 1):
            gc.collect(1)  # each adds one to generation 2's count
    if generation >= 1:
        for _ in range(threshold1 + 1):
            gc.collect(0)  # each adds one to generation 1's count


def allocate() -> list[list[int]]:
    """Enough new tracked objects for generation 0 to be due."""
    return [[] for _ in range(gc.get_threshold()[0] + 1)]


def test_automatic_collection_is_off_and_back_on_after_stop(collector: GuiThreadCollector) -> None:
    assert not gc.isenabled()
    collector.stop()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_a_full_collection_frees_new_cycles_and_freezes_the_survivors(collector: GuiThreadCollector) -> None:
    make_due(2)
    cycle = Node()
    watch = weakref.ref(cycle)
    del cycle
    survivors = allocate()
    collector.collect_due()
    assert collector.full_collections == 1
    assert watch() is None
    assert gc.get_freeze_count() >= len(survivors)
    assert gc.get_count() == (0, 0, 0)


def test_every_rescan_thaws_the_heap_so_that_old_cycles_are_freed(collector: GuiThreadCollector) -> None:
    old = Node()
    watch = weakref.ref(old)
    make_due(2)
    kept = allocate()
    collector.collect_due()  # `old` survives this one and is frozen
    del old
    for _ in range(RESCAN_EVERY - 2):
        make_due(2)
        kept += allocate()  # kept alive: an object freed takes one off generation 0's count
        collector.collect_due()
    assert watch() is not None, "a frozen cycle is not scanned between two rescans"
    make_due(2)
    kept += allocate()
    collector.collect_due()
    assert kept
    assert collector.full_collections == RESCAN_EVERY
    assert watch() is None


def test_a_young_generation_due_is_collected_alone(collector: GuiThreadCollector) -> None:
    make_due(1)
    before = gc.get_count()
    kept = allocate()
    collector.collect_due()
    assert collector.full_collections == 0
    assert gc.get_freeze_count() == 0
    assert gc.get_count()[1:] == (0, before[2] + 1), "one collection of generation 1, none of 0 before it"
    assert kept
