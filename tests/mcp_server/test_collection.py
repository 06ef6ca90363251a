"""The collector pauses while `ralph-desk mcp` starts and resumes, with start-up frozen, when it serves."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from ralph_desk.mcp_server import collection


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    """Each test leaves the collector as it found it, with nothing of this process frozen."""
    was_enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


def test_the_collector_is_off_while_starting_and_on_with_start_up_frozen_once_serving() -> None:
    gc.enable()
    with collection.paused_while_starting():
        assert not gc.isenabled()
        made_at_start_up = [object()]
        collection.resume()
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0
        assert gc.is_tracked(made_at_start_up)
        collection.resume()  # a second resume changes nothing
        assert gc.isenabled()
    assert gc.isenabled()


def test_a_start_that_fails_before_serving_turns_the_collector_back_on_freezing_nothing() -> None:
    gc.enable()
    frozen_before = gc.get_freeze_count()
    with pytest.raises(RuntimeError), collection.paused_while_starting():
        assert not gc.isenabled()
        raise RuntimeError("refusing to start")
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen_before


def test_a_collector_someone_else_turned_off_stays_off() -> None:
    gc.disable()
    frozen_before = gc.get_freeze_count()
    with collection.paused_while_starting():
        collection.resume()
        assert not gc.isenabled()
    assert not gc.isenabled()
    assert gc.get_freeze_count() == frozen_before
