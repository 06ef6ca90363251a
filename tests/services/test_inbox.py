"""The human's inbox: answering questions, reviewing suggested tasks and triaging flags."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from ralph_desk.domain.enums import FlagResolution, Priority, ReviewDecision, TaskOrigin, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.records import Change, Task
from ralph_desk.services.errors import ConflictError, InvalidValueError, NotFoundError
from ralph_desk.services.inbox import TITLE_LENGTH, title_from
from tests.services.conftest import Desk, topics

NOON = datetime(2026, 3, 1, 12, 0)


def suggested_draft(desk: Desk, what: str = "Add a legend", **params: Any) -> Task:
    """A draft task created from an agent's new_task suggestion, as post-processing does."""
    task = desk.task()
    suggestion = desk.suggest(task, what=what, **params)
    return desk.inbox.create_suggested_task(suggestion.id)


# --- questions -------------------------------------------------------------------------------


def test_open_questions_are_the_unanswered_blocking_asks_of_tasks_waiting_for_input_oldest_first(
    desk: Desk,
) -> None:
    waiting, running = desk.task("Waiting"), desk.task("Running")
    first, second = desk.waiting_for_input(waiting, "Metres or feet?", "Which datum?")
    desk.ask(waiting, "Colour scheme?", blocking=False)
    desk.ask(running, "Blocking but still running?")
    desk.set_created(first, NOON + timedelta(seconds=5))
    desk.set_created(second, NOON)

    assert [ask.id for ask in desk.inbox.asks()] == [second.id, first.id]


def test_all_unanswered_questions_include_non_blocking_ones_and_those_of_other_tasks(desk: Desk) -> None:
    waiting, running = desk.task("Waiting"), desk.task("Running")
    (blocking,) = desk.waiting_for_input(waiting)
    casual = desk.ask(waiting, "Colour scheme?", blocking=False)
    early = desk.ask(running, "Asked while running?")
    answered = desk.ask(running, "Answered already?", blocking=False)
    desk.inbox.answer(answered.id, "Yes.")

    assert [ask.id for ask in desk.inbox.asks(open_only=False)] == [blocking.id, casual.id, early.id]


def test_answering_the_only_blocking_question_stores_it_and_returns_the_task_to_pending(
    desk: Desk, changes: list[Change]
) -> None:
    task = desk.task()
    (ask,) = desk.waiting_for_input(task)
    changes.clear()

    answered = desk.inbox.answer(ask.id, "Metres, always.")

    assert answered.answer == "Metres, always."
    assert answered.answered_at is not None
    assert desk.signals.get(ask.id).answer == "Metres, always."
    assert desk.tasks.get(task.id).status is TaskStatus.PENDING
    assert desk.inbox.asks() == []
    assert topics(changes) == {"signals", "tasks", "inbox"}


def test_the_task_keeps_waiting_until_its_last_blocking_question_is_answered(desk: Desk) -> None:
    task = desk.task()
    first, second = desk.waiting_for_input(task, "Metres or feet?", "Which datum?")

    desk.inbox.answer(first.id, "Metres.")
    assert desk.tasks.get(task.id).status is TaskStatus.NEEDS_INPUT
    assert [ask.id for ask in desk.inbox.asks()] == [second.id]

    desk.inbox.answer(second.id, "Chart datum.")
    assert desk.tasks.get(task.id).status is TaskStatus.PENDING


def test_a_non_blocking_question_left_open_does_not_hold_the_task(desk: Desk) -> None:
    task = desk.task()
    (blocking,) = desk.waiting_for_input(task)
    desk.ask(task, "Colour scheme?", blocking=False)

    desk.inbox.answer(blocking.id, "Metres.")

    assert desk.tasks.get(task.id).status is TaskStatus.PENDING


def test_a_blocking_question_made_moot_by_a_later_done_does_not_hold_the_task(desk: Desk) -> None:
    task = desk.task()
    desk.ask(task, "Old question the agent settled itself?")
    desk.signals.record(task.id, "s-0", "done", summary="Done anyway.")
    (current,) = desk.waiting_for_input(task, "New question?")

    assert [ask.id for ask in desk.inbox.asks()] == [current.id]
    desk.inbox.answer(current.id, "Yes.")
    assert desk.tasks.get(task.id).status is TaskStatus.PENDING


def test_answering_a_question_of_a_task_not_waiting_leaves_its_status_alone(desk: Desk) -> None:
    task = desk.task()
    desk.tasks.move(task.id, TaskStatus.IN_PROGRESS.value, Mover.IMPORT)
    ask = desk.ask(task, blocking=False)

    desk.inbox.answer(ask.id, "Metres.")

    assert desk.tasks.get(task.id).status is TaskStatus.IN_PROGRESS
    assert [signal.answer for signal in desk.signals.latest_answers(task.id)] == ["Metres."]


def test_the_answer_stays_for_the_next_prompt(desk: Desk) -> None:
    task = desk.task()
    (ask,) = desk.waiting_for_input(task)
    desk.inbox.answer(ask.id, "Metres.")

    (carried,) = desk.signals.latest_answers(task.id)

    assert (carried.question, carried.answer) == ("Metres or feet?", "Metres.")


def test_answering_twice_is_refused_and_keeps_the_first_answer(desk: Desk) -> None:
    task = desk.task()
    (ask,) = desk.waiting_for_input(task)
    desk.inbox.answer(ask.id, "Metres.")

    with pytest.raises(ConflictError, match=rf"^ask {ask.id} was already answered \(at \d{{4}}-"):
        desk.inbox.answer(ask.id, "Feet.")
    assert desk.signals.get(ask.id).answer == "Metres."


def test_answering_an_unknown_id_or_a_signal_that_is_no_question_is_refused(desk: Desk) -> None:
    task = desk.task()
    flag = desk.flag(task, "Broken.")

    with pytest.raises(NotFoundError, match=r"^no ask 999$"):
        desk.inbox.answer(999, "Metres.")
    with pytest.raises(InvalidValueError) as caught:
        desk.inbox.answer(flag.id, "Metres.")
    assert str(caught.value) == (
        f"invalid ask_id: {flag.id}; allowed: "
        f"the id of a signal of verb 'ask' (signal {flag.id} has verb 'flag')"
    )
    assert desk.signals.get(flag.id).answer is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("  ", "invalid text: '  '; allowed: a non-empty text without NUL characters"),
        ("x" * 20_001, "invalid text: '<20001 characters>'; allowed: at most 20000 characters"),
        ("nul\x00", "invalid text: 'nul\\x00'; allowed: a non-empty text without NUL characters"),
    ],
)
def test_an_empty_huge_or_nul_answer_is_refused_and_the_question_stays_open(
    desk: Desk, text: str, message: str
) -> None:
    task = desk.task()
    (ask,) = desk.waiting_for_input(task)

    with pytest.raises(InvalidValueError) as caught:
        desk.inbox.answer(ask.id, text)

    assert str(caught.value) == message
    assert [open_ask.id for open_ask in desk.inbox.asks()] == [ask.id]


def test_an_answer_that_looks_like_sql_is_stored_as_written(desk: Desk) -> None:
    task = desk.task()
    (ask,) = desk.waiting_for_input(task)
    sneaky = "Metres'); UPDATE tasks SET status='done'; --"

    desk.inbox.answer(ask.id, sneaky)

    assert desk.signals.get(ask.id).answer == sneaky
    assert desk.tasks.get(task.id).status is TaskStatus.PENDING


# --- suggestions -----------------------------------------------------------------------------


def test_pending_suggestions_are_listed_oldest_first_and_reviewed_ones_only_in_the_full_list(
    desk: Desk,
) -> None:
    task = desk.task()
    refactor = desk.suggest(task, "Split the renderer", kind="refactor")
    new_task = desk.suggest(task, "Add a legend")
    desk.set_created(refactor, NOON + timedelta(seconds=1))
    desk.set_created(new_task, NOON)
    assert [signal.id for signal in desk.inbox.suggestions()] == [new_task.id, refactor.id]

    desk.inbox.acknowledge_suggestion(refactor.id)

    assert [signal.id for signal in desk.inbox.suggestions()] == [new_task.id]
    assert [signal.id for signal in desk.inbox.suggestions(pending_only=False)] == [new_task.id, refactor.id]


def test_a_new_task_suggestion_becomes_a_draft_agent_task_in_the_suggested_feature(
    desk: Desk, changes: list[Change]
) -> None:
    task = desk.task(feature="charts", discipline="backend")
    suggestion = desk.suggest(task, "Add a legend", why="Lines look alike.", feature="tides")
    changes.clear()

    draft = desk.inbox.create_suggested_task(suggestion.id)

    assert (draft.status, draft.origin) == (TaskStatus.DRAFT, TaskOrigin.AGENT)
    assert (draft.feature, draft.discipline) == ("tides", "backend")
    assert draft.title == "Add a legend"
    assert draft.description == "Add a legend\n\nWhy: Lines look alike."
    assert desk.signals.get(suggestion.id).created_task_id == draft.id
    assert topics(changes) == {"tasks", "signals", "inbox"}


def test_a_suggestion_without_feature_lands_in_the_suggesting_tasks_feature(desk: Desk) -> None:
    task = desk.task(feature="charts", discipline="frontend")
    draft = desk.inbox.create_suggested_task(desk.suggest(task).id)
    assert (draft.feature, draft.discipline) == ("charts", "frontend")


def test_creating_the_suggested_task_twice_gives_the_same_task(desk: Desk) -> None:
    task = desk.task()
    suggestion = desk.suggest(task)

    first = desk.inbox.create_suggested_task(suggestion.id)
    second = desk.inbox.create_suggested_task(suggestion.id)

    assert first.id == second.id
    assert len(desk.tasks.list(origin="agent")) == 1


def test_a_long_suggestion_gets_a_short_one_line_title_and_keeps_the_whole_text(desk: Desk) -> None:
    what = "Add an audit chain verification endpoint " * 10 + "\nthat streams the rows."
    draft = suggested_draft(desk, what)

    assert len(draft.title) <= TITLE_LENGTH
    assert draft.title.endswith("…")
    assert "\n" not in draft.title
    assert draft.description is not None and draft.description.startswith(what)


def test_only_new_task_suggestions_become_tasks(desk: Desk) -> None:
    task = desk.task()
    refactor = desk.suggest(task, kind="refactor")
    flag = desk.flag(task, "Broken.")

    with pytest.raises(ConflictError, match=r"is a 'refactor' suggestion; only new_task suggestions"):
        desk.inbox.create_suggested_task(refactor.id)
    with pytest.raises(
        InvalidValueError,
        match=r"allowed: the id of a signal of verb 'suggest' \(signal \d+ has verb 'flag'\)",
    ):
        desk.inbox.create_suggested_task(flag.id)
    with pytest.raises(NotFoundError, match=r"^no suggest 404$"):
        desk.inbox.create_suggested_task(404)
    assert desk.tasks.list(origin="agent") == []


def test_approving_a_suggested_draft_makes_it_pending_and_the_suggestion_approved(
    desk: Desk, changes: list[Change]
) -> None:
    draft = suggested_draft(desk)
    changes.clear()

    approved = desk.inbox.approve(draft.id)

    assert approved.id == draft.id
    assert approved.status is TaskStatus.PENDING
    (suggestion,) = desk.inbox.suggestions(pending_only=False)
    assert suggestion.review_decision is ReviewDecision.APPROVED
    assert desk.inbox.suggestions() == []
    assert topics(changes) == {"tasks", "signals", "inbox"}


def test_approving_a_suggestion_signal_creates_its_task_first(desk: Desk) -> None:
    task = desk.task()
    suggestion = desk.suggest(task, "Add a legend")

    approved = desk.inbox.approve(suggestion)

    assert approved.status is TaskStatus.PENDING
    assert approved.title == "Add a legend"
    assert desk.signals.get(suggestion.id).created_task_id == approved.id


def test_approving_twice_is_refused_saying_the_task_is_no_longer_a_draft(desk: Desk) -> None:
    draft = suggested_draft(desk)
    desk.inbox.approve(draft.id)

    with pytest.raises(ConflictError) as caught:
        desk.inbox.approve(draft.id)

    assert str(caught.value).startswith(f"task #{draft.id} is not a draft (its status is 'pending')")


def test_a_human_task_cannot_be_approved_or_rejected_as_a_suggestion(desk: Desk) -> None:
    task = desk.tasks.create("charts", "frontend", "Human idea", status="draft")

    with pytest.raises(ConflictError, match=r"was not suggested by an agent \(its origin is 'human'\)"):
        desk.inbox.approve(task.id)
    with pytest.raises(ConflictError, match=r"was not suggested by an agent"):
        desk.inbox.reject(task.id, "No.")
    assert desk.tasks.get(task.id).status is TaskStatus.DRAFT


def test_approving_an_unknown_task_says_so(desk: Desk) -> None:
    with pytest.raises(NotFoundError, match=r"^no task 404$"):
        desk.inbox.approve(404)


def test_an_agent_draft_without_a_suggestion_can_still_be_approved(desk: Desk) -> None:
    task = desk.tasks.create("charts", "frontend", "Opus follow-up", status="draft", origin="agent")
    assert desk.inbox.approve(task.id).status is TaskStatus.PENDING


def test_approving_a_signal_that_is_no_suggestion_is_refused(desk: Desk) -> None:
    task = desk.task()
    flag = desk.flag(task, "Broken.")
    with pytest.raises(
        InvalidValueError, match=rf"allowed: a signal of verb 'suggest' \(signal {flag.id} has verb 'flag'\)"
    ):
        desk.inbox.approve(flag)


def test_edit_and_approve_changes_the_given_fields_then_approves(desk: Desk) -> None:
    draft = suggested_draft(desk)

    approved = desk.inbox.edit_and_approve(
        draft.id,
        title="Add a colour legend",
        feature="tides",
        discipline="backend",
        priority="high",
        acceptance_criteria=["Legend lists every series"],
    )

    assert approved.status is TaskStatus.PENDING
    assert (approved.title, approved.feature, approved.discipline) == (
        "Add a colour legend",
        "tides",
        "backend",
    )
    assert approved.priority is Priority.HIGH
    assert approved.acceptance_criteria == ("Legend lists every series",)
    assert approved.description == draft.description
    assert desk.inbox.suggestions(pending_only=False)[0].review_decision is ReviewDecision.APPROVED


def test_a_bad_edit_leaves_the_draft_unapproved(desk: Desk) -> None:
    draft = suggested_draft(desk)

    with pytest.raises(NotFoundError, match=r"^no feature 'weather'; known: charts, tides$"):
        desk.inbox.edit_and_approve(draft.id, feature="weather")

    assert desk.tasks.get(draft.id).status is TaskStatus.DRAFT
    assert desk.inbox.suggestions()[0].review_decision is ReviewDecision.PENDING


def test_edit_and_approve_of_a_reviewed_task_changes_nothing(desk: Desk) -> None:
    draft = suggested_draft(desk)
    desk.inbox.reject(draft.id, "Out of scope.")

    with pytest.raises(ConflictError, match=r"is not a draft \(its status is 'skipped'\)"):
        desk.inbox.edit_and_approve(draft.id, title="Sneaky rename")

    assert desk.tasks.get(draft.id).title == draft.title


def test_rejecting_skips_the_task_records_the_reason_and_keeps_it_as_a_human_comment(
    desk: Desk, changes: list[Change]
) -> None:
    draft = suggested_draft(desk)
    changes.clear()

    rejected = desk.inbox.reject(draft.id, "The legend is already planned in #3.")

    assert rejected.status is TaskStatus.SKIPPED
    (comment,) = rejected.comments
    assert (comment.author, comment.body) == ("human", "Rejected: The legend is already planned in #3.")
    (suggestion,) = desk.inbox.suggestions(pending_only=False)
    assert suggestion.review_decision is ReviewDecision.REJECTED
    assert suggestion.review_reason == "The legend is already planned in #3."
    assert {"tasks", "signals", "inbox", "comments"} <= topics(changes)


def test_rejecting_needs_a_reason(desk: Desk) -> None:
    draft = suggested_draft(desk)
    with pytest.raises(InvalidValueError, match=r"^invalid reason: ''; allowed: a non-empty text$"):
        desk.inbox.reject(draft.id, "")
    assert desk.tasks.get(draft.id).status is TaskStatus.DRAFT


def test_acknowledging_marks_a_suggestion_seen_once(desk: Desk) -> None:
    task = desk.task()
    refactor = desk.suggest(task, "Split the renderer", kind="refactor")

    first = desk.inbox.acknowledge_suggestion(refactor.id)
    again = desk.inbox.acknowledge_suggestion(refactor.id)

    assert first.review_decision is ReviewDecision.ACKNOWLEDGED
    assert again == first


def test_a_new_task_suggestion_is_approved_or_rejected_not_acknowledged(desk: Desk) -> None:
    task = desk.task()
    suggestion = desk.suggest(task)
    flag = desk.flag(task, "Broken.")

    with pytest.raises(ConflictError, match=r"proposes a new task; approve or reject its draft task"):
        desk.inbox.acknowledge_suggestion(suggestion.id)
    with pytest.raises(InvalidValueError, match=r"^invalid signal_id: "):
        desk.inbox.acknowledge_suggestion(flag.id)
    assert desk.signals.get(suggestion.id).review_decision is ReviewDecision.PENDING


# --- flags -----------------------------------------------------------------------------------


def test_flags_come_blocking_first_then_warning_then_info_newest_first_within(desk: Desk) -> None:
    task = desk.task()
    old_info = desk.flag(task, "Old FYI.", severity="info")
    old_blocking = desk.flag(task, "Old blocker.", severity="blocking")
    warning = desk.flag(task, "Slow.", severity="warning")
    new_blocking = desk.flag(task, "New blocker.", severity="blocking")
    new_info = desk.flag(task, "New FYI.", severity="info")
    for minutes, flag in enumerate([old_info, old_blocking, warning, new_blocking, new_info]):
        desk.set_created(flag, NOON + timedelta(minutes=minutes))

    assert [flag.id for flag in desk.inbox.flags()] == [
        new_blocking.id,
        old_blocking.id,
        warning.id,
        new_info.id,
        old_info.id,
    ]


def test_flags_filter_by_resolution_severity_category_and_feature(desk: Desk) -> None:
    chart_task, tide_task = desk.task(feature="charts"), desk.task(feature="tides")
    bug = desk.flag(chart_task, "Bug.", severity="warning", category="bug")
    stale = desk.flag(tide_task, "Stale.", severity="info", category="stale")
    security = desk.flag(chart_task, "Leak.", severity="blocking", category="security")
    desk.inbox.triage(stale.id, "resolved")

    def ids(**filters: Any) -> list[int]:
        return [flag.id for flag in desk.inbox.flags(**filters)]

    assert ids(resolution="open") == [security.id, bug.id]
    assert ids(resolution=["open", "resolved"]) == [security.id, bug.id, stale.id]
    assert ids(severity="info") == [stale.id]
    assert ids(category=["bug", "stale"]) == [bug.id, stale.id]
    assert ids(feature="charts") == [security.id, bug.id]
    assert ids(feature="tides", resolution="open") == []


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        (
            {"resolution": "closed"},
            "invalid resolution: 'closed'; allowed: one of open, acknowledged, resolved, dismissed, "
            "converted",
        ),
        (
            {"severity": ["info", "fatal"]},
            "invalid severity[1]: 'fatal'; allowed: one of info, warning, blocking",
        ),
        (
            {"category": "typo"},
            "invalid category: 'typo'; allowed: one of bug, stale, contradiction, ambiguity",
        ),
    ],
)
def test_a_bad_flag_filter_is_refused_listing_the_allowed_values(
    desk: Desk, filters: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidValueError) as caught:
        desk.inbox.flags(**filters)
    assert str(caught.value).startswith(message)


def test_flags_of_an_unknown_feature_are_refused(desk: Desk) -> None:
    with pytest.raises(NotFoundError, match=r"^no feature 'weather'; known: charts, tides$"):
        desk.inbox.flags(feature="weather")


@pytest.mark.parametrize("resolution", ["acknowledged", "resolved", "dismissed"])
def test_triaging_a_flag_sets_its_resolution_and_time(
    desk: Desk, changes: list[Change], resolution: str
) -> None:
    task = desk.task()
    flag = desk.flag(task, "Slow.")
    changes.clear()

    result = desk.inbox.triage(flag.id, resolution)

    assert result.flag.resolution is FlagResolution(resolution)
    assert result.flag.resolved_at is not None
    assert result.task is None
    assert desk.signals.get(flag.id).resolution is FlagResolution(resolution)
    assert desk.signals.open_flags() == []
    assert topics(changes) == {"signals", "inbox"}


@pytest.mark.parametrize(
    ("severity", "priority"), [("blocking", Priority.HIGH), ("warning", Priority.MEDIUM)]
)
def test_converting_a_flag_creates_a_pending_task_in_the_flagged_tasks_feature(
    desk: Desk, changes: list[Change], severity: str, priority: Priority
) -> None:
    task = desk.task("Draw the tide chart", feature="tides", discipline="backend")
    flag = desk.flag(task, "Heights are off by one hour.", severity=severity, category="bug")
    changes.clear()

    result = desk.inbox.triage(flag.id, "convert")

    created = result.task
    assert created is not None
    assert (created.status, created.priority, created.origin) == (
        TaskStatus.PENDING,
        priority,
        TaskOrigin.HUMAN,
    )
    assert (created.feature, created.discipline) == ("tides", "backend")
    assert created.title == "Heights are off by one hour."
    assert created.description == (
        f"Heights are off by one hour.\n\nFlagged on task #{task.id} (Draw the tide chart) — "
        f"severity: {severity}, category: bug."
    )
    assert result.flag.resolution is FlagResolution.CONVERTED
    assert result.flag.created_task_id == created.id
    assert desk.tasks.get(created.id) == created
    assert topics(changes) == {"signals", "tasks", "inbox"}


def test_a_converted_flag_cannot_be_triaged_again(desk: Desk) -> None:
    task = desk.task()
    flag = desk.flag(task, "Broken.")
    created = desk.inbox.triage(flag.id, "convert").task
    assert created is not None

    for resolution in ("convert", "dismissed"):
        with pytest.raises(ConflictError, match=rf"already converted into task #{created.id}"):
            desk.inbox.triage(flag.id, resolution)
    assert len(desk.tasks.list()) == 2


def test_an_acknowledged_flag_can_still_be_resolved(desk: Desk) -> None:
    task = desk.task()
    flag = desk.flag(task, "Slow.")
    desk.inbox.triage(flag.id, "acknowledged")
    assert desk.inbox.triage(flag.id, "resolved").flag.resolution is FlagResolution.RESOLVED


def test_triage_refuses_an_unknown_resolution_an_unknown_flag_and_a_non_flag(desk: Desk) -> None:
    task = desk.task()
    ask = desk.ask(task)

    with pytest.raises(InvalidValueError) as caught:
        desk.inbox.triage(1, "fixed")
    assert (
        str(caught.value)
        == "invalid resolution: 'fixed'; allowed: one of acknowledged, resolved, dismissed, convert"
    )
    with pytest.raises(NotFoundError, match=r"^no flag 404$"):
        desk.inbox.triage(404, "resolved")
    with pytest.raises(
        InvalidValueError,
        match=rf"^invalid flag_id: {ask.id}; allowed: the id of a signal of verb 'flag' "
        rf"\(signal {ask.id} has verb 'ask'\)$",
    ):
        desk.inbox.triage(ask.id, "resolved")


# --- counts ----------------------------------------------------------------------------------


def test_counts_are_unanswered_questions_pending_suggestions_and_open_flags(desk: Desk) -> None:
    task, other = desk.task(), desk.task("Other")
    assert desk.inbox.counts() == {"asks": 0, "suggestions": 0, "flags": 0}

    first, _second = desk.waiting_for_input(task, "Metres?", "Datum?")
    casual = desk.ask(other, "Not blocking, still waiting for an answer?", blocking=False)
    desk.suggest(other)
    refactor = desk.suggest(other, kind="refactor")
    flag = desk.flag(other, "Slow.")
    desk.flag(other, "Broken.", severity="blocking")

    assert desk.inbox.counts() == {"asks": 3, "suggestions": 2, "flags": 2}
    assert desk.inbox.counts()["asks"] == len(desk.inbox.asks(open_only=False))

    desk.inbox.answer(first.id, "Metres.")
    desk.inbox.answer(casual.id, "Yes.")
    desk.inbox.acknowledge_suggestion(refactor.id)
    desk.inbox.triage(flag.id, "dismissed")

    assert desk.inbox.counts() == {"asks": 1, "suggestions": 1, "flags": 1}


# --- titles ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Add a legend", "Add a legend"),
        ("  Add   a\tlegend  ", "Add a legend"),
        ("\n\nFirst line\nsecond line", "First line"),
        ("word " * 40, ("word " * 24).strip() + "…"),
        ("abcdefghij " * 20, ("abcdefghij " * 10).strip() + "…"),
        ("x" * 300, "x" * (TITLE_LENGTH - 1) + "…"),
    ],
)
def test_a_title_is_the_first_line_of_a_text_cut_at_a_word(text: str, title: str) -> None:
    assert title_from(text) == title
    assert len(title_from(text)) <= TITLE_LENGTH


# --- failed tasks ----------------------------------------------------------------------------


def test_a_failed_task_is_listed_with_its_stuck_count_and_the_agents_last_stuck_reason(desk: Desk) -> None:
    task = desk.task()
    desk.signals.record(task.id, "s-1", "stuck", reason="The chart library has no cursor.")
    for _ in range(3):
        desk.tasks.increment_stuck(task.id)
    desk.tasks.move(task.id, TaskStatus.FAILED.value, Mover.IMPORT)

    (failed,) = desk.inbox.failed()

    assert failed.task.id == task.id
    assert failed.reason == "stuck 3 times; the agent said: The chart library has no cursor."


def test_retry_queues_a_failed_task_again_with_the_note_as_a_comment(desk: Desk) -> None:
    task = desk.task()
    desk.tasks.increment_stuck(task.id)
    desk.tasks.move(task.id, TaskStatus.FAILED.value, Mover.IMPORT)

    retried = desk.inbox.retry(task.id, "Use the SVG layer.")

    assert (retried.status, retried.stuck_count) == (TaskStatus.PENDING, 0)
    assert [comment.body for comment in retried.comments] == ["Retry: Use the SVG layer."]
    assert desk.inbox.failed() == []


def test_retry_and_skip_refuse_a_task_that_did_not_fail(desk: Desk) -> None:
    task = desk.task()

    with pytest.raises(ConflictError, match=rf"task #{task.id} is pending, not failed"):
        desk.inbox.retry(task.id)
    with pytest.raises(ConflictError, match="not failed"):
        desk.inbox.skip(task.id)


def test_a_flag_converted_with_the_persons_fields_becomes_a_draft_and_the_flag_is_converted(
    desk: Desk,
) -> None:
    flag = desk.flag(desk.task(), "The legend overlaps the curve")

    result = desk.inbox.convert_flag(
        flag.id, feature="charts", discipline="frontend", title="Move the legend", status="draft"
    )

    assert result.task is not None and result.task.status is TaskStatus.DRAFT
    assert result.task.title == "Move the legend" and result.task.origin is TaskOrigin.HUMAN
    assert result.flag.resolution is FlagResolution.CONVERTED
    assert result.flag.created_task_id == result.task.id


def test_a_flag_converts_only_to_a_pending_or_draft_task(desk: Desk) -> None:
    flag = desk.flag(desk.task(), "The legend overlaps the curve")
    before = len(desk.tasks.list())

    with pytest.raises(InvalidValueError, match="pending or draft"):
        desk.inbox.convert_flag(flag.id, feature="charts", discipline="frontend", title="X", status="done")

    assert len(desk.tasks.list()) == before
    assert desk.signals.get(flag.id).resolution is FlagResolution.OPEN


def test_a_refused_triage_leaves_the_flag_open_and_makes_no_task(desk: Desk) -> None:
    task = desk.task()
    flag = desk.flag(task, "Broken.")

    with pytest.raises(InvalidValueError, match=r"^invalid resolution: 'converted'; allowed: one of "):
        desk.inbox.triage(flag.id, "converted")

    assert desk.signals.get(flag.id) == flag
    assert [listed.id for listed in desk.tasks.list()] == [task.id]


def test_a_single_bad_flag_filter_is_named_without_an_index(desk: Desk) -> None:
    with pytest.raises(InvalidValueError) as caught:
        desk.inbox.flags(severity="fatal")
    assert str(caught.value) == "invalid severity: 'fatal'; allowed: one of info, warning, blocking"
