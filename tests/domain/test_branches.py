"""The names of task branches and of discarded work kept as refs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ralph_desk.domain.branches import Discarded
from ralph_desk.domain.enums import TaskStatus


def test_a_discarded_ref_names_its_task_time_and_status_and_reads_back() -> None:
    at = datetime(2026, 11, 29, 0, 15, 30, 123456, tzinfo=UTC)

    kept = Discarded.named(12, at, TaskStatus.IN_REVIEW)

    assert kept.ref == "refs/ralph/discarded/12-20261129T001530.123456Z-in_review"
    assert Discarded.parse(kept.ref) == kept


@pytest.mark.parametrize(
    "ref",
    [
        "refs/ralph/discarded/12-20261129T001530.123456Z-merged",
        "refs/ralph/discarded/x-20261129T001530.123456Z-pending",
        "refs/heads/ralph/12-20261129T001530.123456Z-pending",
        "refs/ralph/discarded/12-20261129T001530Z-pending",
    ],
)
def test_a_ref_of_another_shape_is_not_discarded_work(ref: str) -> None:
    assert Discarded.parse(ref) is None
