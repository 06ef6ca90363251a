"""Every decision records its maker: the paired device that made it (`by`), or None for the desk itself."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.domain.enums import FlagResolution, ReviewCommentState, ReviewDecision, TaskStatus, Triage
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.records import Task
from ralph_desk.services.container import Services
from ralph_desk.services.errors import InvalidValueError
from ralph_desk.services.reviews import CommentDraft, ReviewError
from tests.services.conftest import Desk
from tests.support.review_project import open_review_project, read_tip, task_in_review

PHONE = "Ana's phone (companion)"


def _draft(desk: Desk) -> Task:
    """A draft task made from an agent's new_task suggestion."""
    suggestion = desk.suggest(desk.task())
    return desk.inbox.create_suggested_task(suggestion.id)


def _failed(desk: Desk) -> Task:
    task = desk.task()
    desk.tasks.move(task.id, TaskStatus.FAILED.value, Mover.IMPORT)
    return task


def _review_of(desk: Desk, task: Task) -> tuple[ReviewDecision | None, str | None]:
    """The review decision of the suggestion `task` was drafted from, and who made it, as read back."""
    (suggestion,) = [s for s in desk.inbox.suggestions(pending_only=False) if s.created_task_id == task.id]
    return suggestion.review_decision, suggestion.decided_by


# --- the inbox ---------------------------------------------------------------------------------


def test_an_answer_records_the_device_that_gave_it_and_the_desk_s_records_none(desk: Desk) -> None:
    task = desk.task()
    from_phone, from_desk = desk.waiting_for_input(task, "Metres or feet?", "Which datum?")

    answered = desk.inbox.answer(from_phone.id, "Metres.", by=PHONE)
    desk.inbox.answer(from_desk.id, "Chart datum.")

    assert answered.decided_by == PHONE
    assert {ask.id: ask.decided_by for ask in desk.inbox.answered()} == {
        from_phone.id: PHONE,
        from_desk.id: None,
    }
    assert desk.signals.get(from_phone.id).decided_by == PHONE
    assert desk.tasks.get(task.id).status is TaskStatus.PENDING


def test_approving_a_suggested_task_by_id_or_by_its_suggestion_records_the_device(desk: Desk) -> None:
    by_id = _draft(desk)
    suggestion = desk.suggest(desk.task(), what="Add a scale bar")

    desk.inbox.approve(by_id.id, by=PHONE)
    by_signal = desk.inbox.approve(suggestion, by=PHONE)

    assert _review_of(desk, by_id) == (ReviewDecision.APPROVED, PHONE)
    assert _review_of(desk, by_signal) == (ReviewDecision.APPROVED, PHONE)


def test_edit_and_approve_records_the_device(desk: Desk) -> None:
    draft = _draft(desk)

    approved = desk.inbox.edit_and_approve(draft.id, title="Add a legend below the chart", by=PHONE)

    assert approved.title == "Add a legend below the chart" and approved.status is TaskStatus.PENDING
    assert _review_of(desk, draft) == (ReviewDecision.APPROVED, PHONE)


def test_a_rejection_records_the_device_and_its_reason_is_the_device_s_comment(desk: Desk) -> None:
    draft = _draft(desk)

    rejected = desk.inbox.reject(draft.id, "We have a legend already.", by=PHONE)

    assert _review_of(desk, draft) == (ReviewDecision.REJECTED, PHONE)
    assert [(c.author, c.body) for c in rejected.comments] == [(PHONE, "Rejected: We have a legend already.")]


def test_acknowledging_a_suggestion_records_the_device(desk: Desk) -> None:
    suggestion = desk.suggest(desk.task(), what="Split the chart module", kind="split")

    acknowledged = desk.inbox.acknowledge_suggestion(suggestion.id, by=PHONE)

    assert acknowledged.review_decision is ReviewDecision.ACKNOWLEDGED
    assert desk.signals.get(suggestion.id).decided_by == PHONE


def test_a_triage_records_its_maker_and_a_later_one_at_the_desk_replaces_it(desk: Desk) -> None:
    flag = desk.flag(desk.task(), "The legend overlaps the curve")

    desk.inbox.triage(flag.id, Triage.ACKNOWLEDGED, by=PHONE)
    assert desk.signals.get(flag.id).decided_by == PHONE

    desk.inbox.triage(flag.id, Triage.RESOLVED)
    resolved = desk.signals.get(flag.id)
    assert (resolved.resolution, resolved.decided_by) == (FlagResolution.RESOLVED, None)


def test_converting_a_flag_by_triage_or_with_the_person_s_fields_records_the_device(desk: Desk) -> None:
    task = desk.task()
    triaged, fielded = desk.flag(task, "Tides are off by an hour"), desk.flag(task, "No legend")

    desk.inbox.triage(triaged.id, Triage.CONVERT, by=PHONE)
    result = desk.inbox.convert_flag(
        fielded.id, feature="charts", discipline="frontend", title="Add a legend", by=PHONE
    )

    assert result.task is not None and result.task.title == "Add a legend"
    for flag in (triaged, fielded):
        converted = desk.signals.get(flag.id)
        assert (converted.resolution, converted.decided_by) == (FlagResolution.CONVERTED, PHONE)


def test_a_device_s_retry_and_skip_of_failed_tasks_are_comments_it_wrote(desk: Desk) -> None:
    with_note, without_note, skipped = _failed(desk), _failed(desk), _failed(desk)

    desk.inbox.retry(with_note.id, "Use the SVG layer.", by=PHONE)
    desk.inbox.retry(without_note.id, by=PHONE)
    desk.inbox.skip(skipped.id, by=PHONE)

    said = {
        task.id: [(c.author, c.body) for c in desk.tasks.get(task.id).comments]
        for task in (with_note, without_note, skipped)
    }
    assert said == {
        with_note.id: [(PHONE, "Retry: Use the SVG layer.")],
        without_note.id: [(PHONE, "Retry.")],
        skipped.id: [(PHONE, "Skipped.")],
    }
    assert desk.tasks.get(skipped.id).status is TaskStatus.SKIPPED


def test_the_desk_s_retry_and_skip_without_a_note_write_no_comment(desk: Desk) -> None:
    retried, skipped = _failed(desk), _failed(desk)

    desk.inbox.retry(retried.id)
    desk.inbox.skip(skipped.id)

    assert desk.tasks.get(retried.id).comments == desk.tasks.get(skipped.id).comments == ()


@pytest.mark.parametrize("by", ["", "   ", "Ana\x00", "x" * 201])
def test_a_maker_that_is_no_name_is_refused_and_nothing_is_decided(desk: Desk, by: str) -> None:
    task = desk.task()
    (ask,) = desk.waiting_for_input(task)
    flag = desk.flag(task, "Broken.")

    with pytest.raises(InvalidValueError, match=r"^invalid by: .*; allowed: "):
        desk.inbox.answer(ask.id, "Metres.", by=by)
    with pytest.raises(InvalidValueError, match=r"^invalid by: "):
        desk.inbox.triage(flag.id, Triage.DISMISSED, by=by)

    assert desk.signals.get(ask.id).answer is None
    assert desk.signals.get(flag.id).resolution is FlagResolution.OPEN


# --- reviews -----------------------------------------------------------------------------------


@pytest.fixture
def reviews(tmp_path: Path) -> Iterator[Services]:
    services = open_review_project(tmp_path / "repo", {"app.py": "def greet():\n    return 'hi'\n"}, "Makers")
    yield services
    services.close()


def test_an_approval_keeps_the_device_that_made_it_while_it_waits_to_merge(reviews: Services) -> None:
    task = task_in_review(reviews, "Greet loudly", {"app.py": "loud\n"}, "Shouted.")
    (reviews.paths.root / "app.py").write_text("the person's own draft\n")  # keeps the approval queued

    with pytest.raises(ReviewError, match="uncommitted changes"):
        reviews.reviews.approve(task.id, read_tip(reviews, task.id), by=PHONE)

    queued = reviews.reviews.queued(task.id)
    assert queued is not None and queued.approved_by == PHONE
    (item,) = reviews.reviews.list()
    assert item.merge is not None and item.merge.startswith(f"approved by {PHONE}, not merged: ")


def test_an_approval_at_the_desk_names_no_device(reviews: Services) -> None:
    task = task_in_review(reviews, "Greet loudly", {"app.py": "loud\n"}, "Shouted.")
    (reviews.paths.root / "app.py").write_text("the person's own draft\n")

    with pytest.raises(ReviewError, match="uncommitted changes"):
        reviews.reviews.approve(task.id, read_tip(reviews, task.id))

    queued = reviews.reviews.queued(task.id)
    assert queued is not None and queued.approved_by is None
    assert reviews.reviews.merge_state(task.id) == ("approved, not merged: " + (queued.refused or ""))


def test_changes_requested_from_a_device_are_its_comments_beside_the_desk_s(reviews: Services) -> None:
    task = task_in_review(reviews, "Greet loudly", {"app.py": "loud\n"}, "Shouted.")
    reviews.reviews.add_comment(task.id, "Keep the name greet", file="app.py", line=1)

    reviews.reviews.request_changes(task.id, [CommentDraft("Say why", "app.py", 1), "And test it"], by=PHONE)

    sent = reviews.reviews.requested(task.id)
    assert [(c.author, c.body) for c in sent] == [
        ("human", "Keep the name greet"),
        (PHONE, "Say why"),
        (PHONE, "And test it"),
    ]
    assert {c.state for c in sent} == {ReviewCommentState.REQUESTED}


def test_who_approved_outlives_the_merge_as_a_task_comment(reviews: Services) -> None:
    task = task_in_review(reviews, "Greet loudly", {"app.py": "loud\n"}, "Shouted.")
    tip = read_tip(reviews, task.id)

    reviews.reviews.approve(task.id, tip, by=PHONE)

    assert reviews.reviews.queued(task.id) is None  # merged: the queue entry is gone
    (note,) = [comment for comment in reviews.tasks.get(task.id).comments if comment.author == PHONE]
    assert note.body == f"Approved {tip[:12]} for merge."
