"""The project's services opened on first use: once, for every thread that asks, or the same error for all."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ralph_desk.project import ProjectPaths, init_project
from ralph_desk.services.opening import ServicesOnFirstUse


@pytest.fixture
def paths(tmp_path: Path) -> ProjectPaths:
    return init_project(tmp_path / "proj", title="Opening")


def test_threads_asking_at_once_share_one_opening(paths: ProjectPaths) -> None:
    services = ServicesOnFirstUse(paths)
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            opened = list(pool.map(lambda _: services(), range(8)))
        assert len({id(each) for each in opened}) == 1
        assert opened[0].project.get().title == "Opening"
    finally:
        services.close()


def test_a_failed_opening_gives_every_later_caller_the_same_error(paths: ProjectPaths) -> None:
    services = ServicesOnFirstUse(paths, "nosuchdriver://nowhere/db")
    with pytest.raises(Exception, match="nosuchdriver") as first:
        services()
    with pytest.raises(Exception, match="nosuchdriver") as second:
        services()
    assert second.value is first.value
    services.close()
