"""The task lifecycle's rules: who may make which move."""

from __future__ import annotations

import pytest

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Move, Mover, asks_about_branch, refusal

S = TaskStatus
HANDS = (Mover.PERSON, Mover.AGENT)


@pytest.mark.parametrize("mover", HANDS)
@pytest.mark.parametrize("target", [S.DONE, S.PENDING, S.SKIPPED, S.FAILED])
def test_work_in_review_is_not_moved_by_hand(mover: Mover, target: TaskStatus) -> None:
    problem = refusal(Move(7, S.IN_REVIEW, target, mover))
    assert problem is not None
    assert "task #7 is in review" in problem and "ralph-desk review approve|changes|discard 7" in problem


@pytest.mark.parametrize("mover", [*HANDS, Mover.INBOX])
def test_only_the_loop_puts_a_task_in_review(mover: Mover) -> None:
    assert refusal(Move(3, S.PENDING, S.IN_REVIEW, mover)) is not None
    assert refusal(Move(3, S.IN_PROGRESS, S.IN_REVIEW, Mover.LOOP)) is None


@pytest.mark.parametrize("mover", HANDS)
def test_unmerged_work_is_not_declared_done(mover: Mover) -> None:
    assert asks_about_branch(S.DONE, mover)
    problem = refusal(Move(4, S.PENDING, S.DONE, mover, unmerged_work=True))
    assert problem is not None and "not merged" in problem
    assert refusal(Move(4, S.PENDING, S.DONE, mover, unmerged_work=False)) is None


def test_only_hands_moving_to_done_ask_about_a_branch() -> None:
    assert not asks_about_branch(S.PENDING, Mover.PERSON)
    assert not asks_about_branch(S.DONE, Mover.REVIEW)
    assert not asks_about_branch(S.DONE, Mover.LOOP)


@pytest.mark.parametrize("target", [S.DONE, S.PENDING, S.SKIPPED])
def test_a_review_decides_work_in_review(target: TaskStatus) -> None:
    assert refusal(Move(1, S.IN_REVIEW, target, Mover.REVIEW)) is None


@pytest.mark.parametrize("current", [S.IN_PROGRESS, S.DONE])
def test_a_review_leaves_running_and_merged_tasks_alone(current: TaskStatus) -> None:
    problem = refusal(Move(2, current, S.PENDING, Mover.REVIEW))
    assert problem is not None and current.value in problem


def test_a_review_does_not_fail_or_block_a_task() -> None:
    assert refusal(Move(2, S.IN_REVIEW, S.FAILED, Mover.REVIEW)) is not None


def test_the_inbox_requeues_or_skips_and_leaves_review_alone() -> None:
    assert refusal(Move(5, S.NEEDS_INPUT, S.PENDING, Mover.INBOX)) is None
    assert refusal(Move(5, S.FAILED, S.SKIPPED, Mover.INBOX)) is None
    assert refusal(Move(5, S.FAILED, S.DONE, Mover.INBOX)) is not None
    assert refusal(Move(5, S.IN_REVIEW, S.PENDING, Mover.INBOX)) is not None


def test_the_loop_only_requeues_work_in_review() -> None:
    assert refusal(Move(6, S.IN_REVIEW, S.DONE, Mover.LOOP)) is not None
    assert refusal(Move(6, S.IN_REVIEW, S.FAILED, Mover.LOOP)) is not None
    assert refusal(Move(6, S.IN_REVIEW, S.PENDING, Mover.LOOP)) is None  # its own rejected session
    assert refusal(Move(6, S.IN_PROGRESS, S.PENDING, Mover.LOOP)) is None
    assert refusal(Move(6, S.IN_PROGRESS, S.FAILED, Mover.LOOP)) is None


@pytest.mark.parametrize("mover", list(Mover))
def test_staying_put_is_always_allowed(mover: Mover) -> None:
    assert refusal(Move(8, S.IN_REVIEW, S.IN_REVIEW, mover)) is None


def test_an_import_copies_any_state() -> None:
    for current in S:
        for target in S:
            assert refusal(Move(9, current, target, Mover.IMPORT)) is None


def test_every_mover_has_a_rule() -> None:
    for mover in Mover:
        refusal(Move(1, S.PENDING, S.DONE, mover))  # a mover without a rule raises KeyError


@pytest.mark.parametrize("current", [S.PENDING, S.SKIPPED])
def test_a_review_puts_discarded_work_back_in_review(current: TaskStatus) -> None:
    assert refusal(Move(6, current, S.IN_REVIEW, Mover.REVIEW)) is None


@pytest.mark.parametrize("current", [S.IN_PROGRESS, S.DONE, S.FAILED])
def test_a_review_does_not_put_running_merged_or_failed_work_back_in_review(current: TaskStatus) -> None:
    problem = refusal(Move(6, current, S.IN_REVIEW, Mover.REVIEW))
    assert problem is not None and "only a pending or skipped task" in problem


@pytest.mark.parametrize("mover", HANDS)
def test_done_by_hand_on_work_in_review_says_to_approve_it(mover: Mover) -> None:
    problem = refusal(Move(8, S.IN_REVIEW, S.DONE, mover))
    assert problem is not None
    assert "approve it in Reviews" in problem and "`ralph-desk review approve 8`" in problem
