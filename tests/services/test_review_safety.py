"""A review desk that cannot lose work by accident: discarded work is kept and restored, a task in review is
not set done by hand, and unsent comments are not dropped by an approval."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ralph_desk.domain.branches import DISCARDED_REFS, Discarded
from ralph_desk.domain.enums import ReviewCommentState, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.services.container import Services
from ralph_desk.services.errors import ConflictError
from ralph_desk.services.reviews import ReviewError, UnsentCommentsError
from tests.support.git_repo import git
from tests.support.review_project import open_review_project, read_tip, task_in_review

START = {"app.py": "def greet():\n    return 'hello'\n"}
LOUD = {"app.py": "def greet():\n    return 'HELLO'\n"}


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Services]:
    services = open_review_project(tmp_path / "repo", START, "Safety")
    yield services
    services.close()


def kept_refs(desk: Services) -> list[str]:
    return git(desk.paths.root, "for-each-ref", "--format=%(refname)", DISCARDED_REFS).splitlines()


@pytest.mark.parametrize("skip", [False, True])
def test_discarded_work_is_kept_as_a_ref_and_restore_brings_the_task_back_in_review(
    desk: Services, skip: bool
) -> None:
    task = task_in_review(desk, "Greet loudly", LOUD, "Shouted.")
    tip = read_tip(desk, task.id)

    discarded = desk.reviews.discard(task.id, skip=skip)

    (kept,) = kept_refs(desk)
    assert kept.startswith(f"{DISCARDED_REFS}{task.id}-") and kept.endswith("-in_review")
    assert git(desk.paths.root, "rev-parse", kept) == tip
    assert kept in discarded.message and f"ralph-desk review restore {task.id}" in discarded.message
    assert desk.workspaces.existing(task.id) is None

    restored = desk.reviews.restore(task.id)

    assert restored.status == TaskStatus.IN_REVIEW.value
    assert desk.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    assert read_tip(desk, task.id) == tip
    assert "+    return 'HELLO'" in desk.reviews.diff(task.id).text
    assert kept_refs(desk) == []  # its work is on its branch again
    merged = desk.reviews.approve(task.id, tip)
    assert merged.status == TaskStatus.DONE.value
    assert git(desk.paths.root, "show", "main:app.py") == LOUD["app.py"].strip()


def test_restore_without_discarded_work_says_so_and_changes_nothing(desk: Services) -> None:
    task = task_in_review(desk, "Greet loudly", LOUD, "Shouted.")

    with pytest.raises(ReviewError, match=r"no discarded work to restore \(discarded work is kept 30 days\)"):
        desk.reviews.restore(task.id)
    assert desk.tasks.get(task.id).status is TaskStatus.IN_REVIEW


def test_restore_is_refused_while_the_task_works_on_a_new_branch(desk: Services) -> None:
    task = task_in_review(desk, "Greet loudly", LOUD, "Shouted.")
    desk.reviews.discard(task.id, skip=False)
    assert desk.workspaces.prepare(task.id, task.title) is not None  # its next session began from the base

    with pytest.raises(ReviewError, match="has a branch again"):
        desk.reviews.restore(task.id)
    assert len(kept_refs(desk)) == 1  # the discarded work stays kept


def test_a_discard_prunes_work_kept_longer_than_the_retention(desk: Services) -> None:
    task = task_in_review(desk, "Greet loudly", LOUD, "Shouted.")
    tip = read_tip(desk, task.id)
    assert tip is not None
    old = Discarded.named(task.id, datetime.now(UTC) - timedelta(days=31), TaskStatus.IN_REVIEW)
    recent = Discarded.named(task.id, datetime.now(UTC) - timedelta(days=29), TaskStatus.IN_REVIEW)
    for ref in (old.ref, recent.ref):
        git(desk.paths.root, "update-ref", ref, tip)

    desk.reviews.discard(task.id, skip=False)

    kept = kept_refs(desk)
    assert old.ref not in kept and recent.ref in kept and len(kept) == 2


def test_work_discarded_before_the_task_was_made_is_not_its(desk: Services) -> None:
    task = task_in_review(desk, "Greet loudly", LOUD, "Shouted.")
    tip = read_tip(desk, task.id)
    assert tip is not None
    earlier = Discarded.named(task.id, task.created_at.replace(tzinfo=UTC) - timedelta(hours=1), task.status)
    git(desk.paths.root, "update-ref", earlier.ref, tip)  # a deleted task that had the same id

    with pytest.raises(ReviewError, match="no discarded work"):
        desk.reviews.restore(task.id)


def test_a_task_in_review_is_not_set_done_by_hand_and_the_refusal_says_to_approve_it(desk: Services) -> None:
    task = task_in_review(desk, "Greet loudly", LOUD, "Shouted.")
    tip = read_tip(desk, task.id)
    base = git(desk.paths.root, "rev-parse", "main")

    with pytest.raises(ConflictError) as refused:
        desk.tasks.move(task.id, TaskStatus.DONE, Mover.PERSON)

    assert "approve it in Reviews" in str(refused.value)
    assert f"`ralph-desk review approve {task.id}`" in str(refused.value)
    assert desk.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    assert read_tip(desk, task.id) == tip and git(desk.paths.root, "rev-parse", "main") == base


def test_approve_with_unsent_comments_is_refused_unless_they_are_dropped(desk: Services) -> None:
    task = task_in_review(desk, "Greet loudly", LOUD, "Shouted.")
    tip = read_tip(desk, task.id)
    desk.reviews.add_comment(task.id, "Not so loud", file="app.py", line=2)
    base = git(desk.paths.root, "rev-parse", "main")

    with pytest.raises(UnsentCommentsError, match="has 1 unsent comment;") as refused:
        desk.reviews.approve(task.id, tip)

    assert refused.value.count == 1 and f"review approve {task.id} --drop-comments" in str(refused.value)
    assert desk.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    assert git(desk.paths.root, "rev-parse", "main") == base
    assert [c.state for c in desk.reviews.comments(task.id)] == [ReviewCommentState.OPEN]

    merged = desk.reviews.approve(task.id, tip, drop_comments=True)

    assert merged.status == TaskStatus.DONE.value
    assert [c.state for c in desk.reviews.comments(task.id)] == [ReviewCommentState.ADDRESSED]
