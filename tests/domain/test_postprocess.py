"""Seed 002's post-processing: every verb combination, thresholds, stop, rate limit, stagnation."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralph_desk.domain.enums import CLOSING_VERBS, BlockerKind, SessionOutcome, TaskStatus, Verb
from ralph_desk.domain.postprocess import Blocker, Decision, decide, find_task_reference
from ralph_desk.domain.records import Signal

START = datetime(2026, 2, 11, 9, 0, 0)


def signal(signal_id: int, verb: Verb, **fields: object) -> Signal:
    """A signal of session s-1 on task 1, called `signal_id` seconds after the session started."""
    created = fields.pop("created", START + timedelta(seconds=signal_id))
    assert isinstance(created, datetime)
    return Signal(id=signal_id, task_id=1, session_id="s-1", verb=verb, created=created, **fields)  # type: ignore[arg-type]


def done(signal_id: int) -> Signal:
    return signal(signal_id, Verb.DONE, summary="Drew the tide chart; tests pass.")


def partial(signal_id: int) -> Signal:
    return signal(signal_id, Verb.PARTIAL, summary="Drew the axes.", remaining="Plot the curve.")


def stuck(signal_id: int) -> Signal:
    return signal(signal_id, Verb.STUCK, reason="No tide data source is reachable.")


CLOSINGS: dict[str, Callable[[int], Signal] | None] = {
    "done": done,
    "partial": partial,
    "stuck": stuck,
    "none": None,
}

EXTRAS: dict[str, Callable[[int], Signal] | None] = {
    "nothing": None,
    "ask blocking": lambda i: signal(i, Verb.ASK, question="Metres or feet?", blocking=True),
    "ask non-blocking": lambda i: signal(i, Verb.ASK, question="Blue or teal?", blocking=False),
    "blocked upstream": lambda i: signal(i, Verb.BLOCKED, kind="upstream_task", on="#3", detail="schema"),
    "blocked external": lambda i: signal(i, Verb.BLOCKED, kind="external", on="NOAA API key"),
    "suggest new_task": lambda i: signal(i, Verb.SUGGEST, kind="new_task", what="Add a legend", why="Clear"),
    "suggest other": lambda i: signal(i, Verb.SUGGEST, kind="refactor", what="Split chart.py", why="Size"),
    "learned": lambda i: signal(i, Verb.LEARNED, text="Heights are metres.", kind="discovery", scope="task"),
    "flag": lambda i: signal(i, Verb.FLAG, what="Off-by-one in tides", severity="warning", category="bug"),
}

# The task status each extra leads to when the session did not end with done (stuck count 0 → 1 < 3).
STATUS_WHEN_NOT_DONE = {
    "nothing": TaskStatus.PENDING,
    "ask blocking": TaskStatus.NEEDS_INPUT,
    "ask non-blocking": TaskStatus.PENDING,
    "blocked upstream": TaskStatus.BLOCKED,
    "blocked external": TaskStatus.BLOCKED,
    "suggest new_task": TaskStatus.PENDING,
    "suggest other": TaskStatus.PENDING,
    "learned": TaskStatus.PENDING,
    "flag": TaskStatus.PENDING,
}


def session(closing: str, extra: str, extra_first: bool) -> list[Signal]:
    """The signals of a session: the extra (id 1 or 3) around the closing verb (id 2)."""
    signals: list[Signal] = []
    make_closing, make_extra = CLOSINGS[closing], EXTRAS[extra]
    if make_closing is not None:
        signals.append(make_closing(2))
    if make_extra is not None:
        signals.append(make_extra(1 if extra_first else 3))
    return signals


def expected_outcome(closing: str, status: TaskStatus) -> SessionOutcome:
    if status is TaskStatus.DONE:
        return SessionOutcome.DONE
    if status is TaskStatus.NEEDS_INPUT:
        return SessionOutcome.NEEDS_INPUT
    if status is TaskStatus.BLOCKED:
        return SessionOutcome.BLOCKED
    return SessionOutcome.REQUEUED if closing == "partial" else SessionOutcome.STUCK


@pytest.mark.parametrize("extra_first", [True, False], ids=["extra-before", "extra-after"])
@pytest.mark.parametrize("extra", list(EXTRAS))
@pytest.mark.parametrize("closing", list(CLOSINGS))
def test_each_closing_verb_with_each_extra_signal_gives_seed_002s_status(
    closing: str, extra: str, extra_first: bool
) -> None:
    decision = decide(session(closing, extra, extra_first), stuck_count=0)

    status = TaskStatus.DONE if closing == "done" else STATUS_WHEN_NOT_DONE[extra]
    assert decision.status is status
    assert decision.outcome is expected_outcome(closing, status)
    assert decision.closing_verb == (None if closing == "none" else Verb(closing))
    assert decision.inferred is (closing == "none")
    assert decision.stuck_count == (1 if closing in ("stuck", "none") else 0)


@pytest.mark.parametrize("extra_first", [True, False], ids=["extra-before", "extra-after"])
@pytest.mark.parametrize("closing", list(CLOSINGS))
def test_blockers_and_blocking_questions_act_only_when_the_session_did_not_end_with_done(
    closing: str, extra_first: bool
) -> None:
    ask = EXTRAS["ask blocking"]
    upstream, external = EXTRAS["blocked upstream"], EXTRAS["blocked external"]
    assert ask is not None and upstream is not None and external is not None
    extras = [ask(10), upstream(11), external(12)] if extra_first else [ask(20), upstream(21), external(22)]
    make_closing = CLOSINGS[closing]
    signals = extras + ([make_closing(15)] if make_closing else [])

    decision = decide(signals, stuck_count=0)

    if closing == "done":
        assert decision.blocking_ask_ids == ()
        assert decision.upstream_blockers == decision.external_blockers == ()
        assert any("informational" in reason for reason in decision.reasons)
    else:
        first = 10 if extra_first else 20
        assert decision.blocking_ask_ids == (first,)
        assert decision.upstream_blockers == (Blocker(first + 1, BlockerKind.UPSTREAM_TASK, "#3", "schema"),)
        assert decision.external_blockers == (Blocker(first + 2, BlockerKind.EXTERNAL, "NOAA API key"),)
        assert decision.status is TaskStatus.NEEDS_INPUT


@pytest.mark.parametrize("closing", list(CLOSINGS))
def test_suggestions_learnings_and_flags_are_kept_whatever_the_closing_verb(closing: str) -> None:
    make_closing = CLOSINGS[closing]
    signals = [
        signal(1, Verb.SUGGEST, kind="new_task", what="Add a legend", why="Clarity"),
        signal(2, Verb.SUGGEST, kind="split", what="Split chart.py", why="Size"),
        signal(3, Verb.LEARNED, text="Heights are metres.", kind="discovery", scope="project"),
        signal(4, Verb.LEARNED, text="Charts use d3.", kind="convention", scope="feature"),
        signal(5, Verb.LEARNED, text="Tried canvas first.", kind="decision", scope="task"),
        signal(6, Verb.LEARNED, text="No scope given.", kind="discovery"),
        signal(7, Verb.FLAG, what="Stale fixture", severity="blocking", category="stale"),
        signal(8, Verb.FLAG, what="Slow query", severity="info", category="performance"),
    ] + ([make_closing(9)] if make_closing else [])

    decision = decide(signals, stuck_count=0)

    assert decision.suggestion_ids == (1,)
    assert decision.learning_ids.project == (3,)
    assert decision.learning_ids.feature == (4, 6)
    assert decision.learning_ids.task == (5,)
    assert decision.learning_ids.all == (3, 4, 5, 6)
    assert decision.flag_ids == (7, 8)
    assert "2 flags stored (1 blocking, 1 info)" in decision.reasons
    assert "1 other suggestion kept for review only" in decision.reasons


@pytest.mark.parametrize("order", list(itertools.permutations(["done", "partial", "stuck"])))
def test_the_last_closing_verb_wins(order: tuple[str, ...]) -> None:
    makers = {"done": done, "partial": partial, "stuck": stuck}
    signals = [makers[name](index + 1) for index, name in enumerate(order)]

    decision = decide(signals, stuck_count=0)

    assert decision.closing_verb is Verb(order[-1])
    assert decision.closing_signal_id == 3
    assert "the last closing verb wins" in decision.reasons[0]


def test_the_last_closing_verb_is_the_last_called_not_the_last_listed() -> None:
    late_partial = replace(partial(1), created=START + timedelta(minutes=5))
    early_done = done(2)

    decision = decide([late_partial, early_done], stuck_count=0)

    assert decision.closing_verb is Verb.PARTIAL
    assert decision.status is TaskStatus.PENDING


def test_closing_verbs_called_in_the_same_instant_are_ordered_by_id() -> None:
    same = START + timedelta(seconds=1)
    signals = [replace(stuck(8), created=same), replace(done(5), created=same)]

    assert decide(signals, stuck_count=0).closing_verb is Verb.STUCK


def test_a_session_without_closing_verb_is_inferred_stuck() -> None:
    decision = decide([signal(1, Verb.FLAG, what="x", severity="info", category="bug")], stuck_count=0)

    assert decision.closing_verb is None
    assert decision.closing_signal_id is None
    assert decision.inferred
    assert decision.effective_verb is Verb.STUCK
    assert decision.counts_as_stuck
    assert "session ended without closing signal" in decision.reasons[0]


def test_partial_carries_its_summary_and_remaining_as_continuation() -> None:
    decision = decide([partial(1)], stuck_count=0)

    assert decision.continuation == "Done so far: Drew the axes.\nRemaining: Plot the curve."
    assert decide([stuck(1)], stuck_count=0).continuation is None
    assert decide([partial(1), done(2)], stuck_count=0).continuation is None


@pytest.mark.parametrize(
    ("stuck_before", "status", "outcome"),
    [
        (0, TaskStatus.PENDING, SessionOutcome.STUCK),
        (1, TaskStatus.PENDING, SessionOutcome.STUCK),
        (2, TaskStatus.FAILED, SessionOutcome.FAILED),
        (5, TaskStatus.FAILED, SessionOutcome.FAILED),
    ],
)
def test_the_third_stuck_session_fails_the_task(
    stuck_before: int, status: TaskStatus, outcome: SessionOutcome
) -> None:
    decision = decide([stuck(1)], stuck_count=stuck_before)

    assert (decision.status, decision.outcome) == (status, outcome)
    assert decision.stuck_count == stuck_before + 1


def test_the_stuck_threshold_is_a_setting() -> None:
    assert decide([stuck(1)], stuck_count=0, stuck_threshold=1).status is TaskStatus.FAILED
    assert decide([stuck(1)], stuck_count=3, stuck_threshold=5).status is TaskStatus.PENDING
    assert decide([stuck(1)], stuck_count=4, stuck_threshold=5).status is TaskStatus.FAILED


def test_a_threshold_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="stuck_threshold"):
        decide([stuck(1)], stuck_count=0, stuck_threshold=0)


def test_partial_never_raises_the_stuck_count_of_a_session_that_changed_something() -> None:
    decision = decide([partial(1)], stuck_count=2)

    assert (decision.status, decision.stuck_count, decision.counts_as_stuck) == (TaskStatus.PENDING, 2, False)


def test_a_blocking_question_takes_precedence_over_blockers_and_failing() -> None:
    signals = [
        signal(1, Verb.ASK, question="Which datum?", blocking=True),
        signal(2, Verb.BLOCKED, kind="external", on="NOAA API key"),
        stuck(3),
    ]

    decision = decide(signals, stuck_count=2)

    assert decision.status is TaskStatus.NEEDS_INPUT
    assert decision.outcome is SessionOutcome.NEEDS_INPUT
    assert decision.stuck_count == 3
    assert "needs input takes precedence over failing" in decision.reasons


def test_a_blocker_takes_precedence_over_failing_while_the_stuck_count_still_rises() -> None:
    decision = decide([signal(1, Verb.BLOCKED, kind="upstream_task", on="#3"), stuck(2)], stuck_count=2)

    assert (decision.status, decision.stuck_count) == (TaskStatus.BLOCKED, 3)
    assert any("blocked takes precedence over failing" in reason for reason in decision.reasons)


def test_a_blocking_question_answered_during_the_session_blocks_nothing() -> None:
    answered = signal(1, Verb.ASK, question="Metres?", blocking=True, answer="Yes", answered_at=START)

    decision = decide([answered, partial(2)], stuck_count=0)

    assert decision.status is TaskStatus.PENDING
    assert decision.blocking_ask_ids == ()


def test_a_blocker_of_unknown_kind_is_left_to_the_human_like_an_external_one() -> None:
    decision = decide([signal(1, Verb.BLOCKED, kind="cosmic", on="rays"), partial(2)], stuck_count=0)

    assert decision.external_blockers == (Blocker(1, BlockerKind.EXTERNAL, "rays"),)
    assert decision.status is TaskStatus.BLOCKED


@pytest.mark.parametrize("closing", ["partial", "stuck", "none"])
def test_a_human_stop_requeues_the_task_without_counting_it(closing: str) -> None:
    make_closing = CLOSINGS[closing]
    signals = [
        signal(1, Verb.ASK, question="Metres?", blocking=True),
        signal(2, Verb.BLOCKED, kind="external", on="key"),
        signal(3, Verb.SUGGEST, kind="new_task", what="Legend", why="Clarity"),
    ] + ([make_closing(4)] if make_closing else [])

    decision = decide(signals, stuck_count=2, stopped_by_human=True, stagnant=True)

    assert (decision.status, decision.outcome) == (TaskStatus.PENDING, SessionOutcome.STOPPED)
    assert (decision.stuck_count, decision.counts_as_stuck, decision.inferred) == (2, False, False)
    assert (decision.blocking_ask_ids, decision.external_blockers) == ((), ())
    assert decision.suggestion_ids == (3,)
    assert any("stopped by the human" in reason for reason in decision.reasons)


def test_a_done_called_before_the_human_stopped_the_session_still_counts() -> None:
    decision = decide([done(1)], stuck_count=1, stopped_by_human=True)

    assert (decision.status, decision.outcome) == (TaskStatus.DONE, SessionOutcome.DONE)
    assert decision.stuck_count == 1


def test_a_rate_limit_before_any_closing_verb_requeues_without_counting_stuck() -> None:
    decision = decide([], stuck_count=2, rate_limited=True, stagnant=True)

    assert (decision.status, decision.outcome) == (TaskStatus.PENDING, SessionOutcome.RATE_LIMITED)
    assert (decision.stuck_count, decision.counts_as_stuck, decision.inferred) == (2, False, False)


def test_a_rate_limit_after_the_closing_verb_changes_nothing_about_it() -> None:
    assert decide([partial(1)], stuck_count=0, rate_limited=True).outcome is SessionOutcome.REQUEUED
    assert decide([stuck(1)], stuck_count=2, rate_limited=True).status is TaskStatus.FAILED


def test_a_partial_session_that_changed_nothing_counts_as_stuck() -> None:
    decision = decide([partial(1)], stuck_count=0, stagnant=True)

    assert decision.closing_verb is Verb.PARTIAL
    assert (decision.status, decision.outcome, decision.stuck_count) == (
        TaskStatus.PENDING,
        SessionOutcome.STUCK,
        1,
    )
    assert any("changed nothing" in reason for reason in decision.reasons)


def test_the_third_stagnant_partial_fails_the_task() -> None:
    assert decide([partial(1)], stuck_count=2, stagnant=True).status is TaskStatus.FAILED


def test_a_stagnant_stuck_session_is_counted_once() -> None:
    assert decide([stuck(1)], stuck_count=0, stagnant=True).stuck_count == 1


def test_a_done_session_is_done_even_when_it_changed_nothing() -> None:
    decision = decide([done(1)], stuck_count=1, stagnant=True)

    assert (decision.status, decision.stuck_count, decision.counts_as_stuck) == (TaskStatus.DONE, 1, False)
    assert not any("changed nothing" in reason for reason in decision.reasons)


@pytest.mark.parametrize(
    ("text", "task_id"),
    [
        ("#12", 12),
        ("task 12", 12),
        ("Task #12 (the schema)", 12),
        ("waiting on task#7", 7),
        ("T-12", 12),
        ("see t-4 first", 4),
        ("the migration in #3, then #4", 3),
        ("the schema task", None),
        ("version 2.0 of the API", None),
        ("at-12", None),
        ("tasks 12 and 13", None),
        ("#0", None),
        ("#12abc", None),
    ],
)
def test_a_task_reference_is_found_in_the_ways_agents_write_it(text: str, task_id: int | None) -> None:
    assert find_task_reference(text) == task_id


# --- properties ----------------------------------------------------------------------------------

VERB_FIELDS: dict[Verb, st.SearchStrategy[dict[str, object]]] = {
    Verb.DONE: st.just({"summary": "ok"}),
    Verb.PARTIAL: st.just({"summary": "half", "remaining": "rest"}),
    Verb.STUCK: st.just({"reason": "no way"}),
    Verb.ASK: st.fixed_dictionaries({"question": st.just("q?"), "blocking": st.booleans()}),
    Verb.FLAG: st.fixed_dictionaries(
        {"what": st.just("w"), "severity": st.sampled_from(["info", "warning", "blocking"])}
    ),
    Verb.LEARNED: st.fixed_dictionaries(
        {"text": st.just("t"), "scope": st.sampled_from(["project", "feature", "task", None])}
    ),
    Verb.SUGGEST: st.fixed_dictionaries(
        {"what": st.just("w"), "kind": st.sampled_from(["new_task", "split", "refactor"])}
    ),
    Verb.BLOCKED: st.fixed_dictionaries(
        {"on": st.just("#2"), "kind": st.sampled_from(["upstream_task", "external"])}
    ),
}


@st.composite
def sessions(draw: st.DrawFn) -> list[Signal]:
    """Random sessions: any verbs, called at few distinct instants (so ties happen), listed shuffled."""
    verbs = draw(st.lists(st.sampled_from(list(Verb)), max_size=12))
    signals = []
    for index, verb in enumerate(verbs):
        seconds = draw(st.integers(min_value=0, max_value=4))
        fields = draw(VERB_FIELDS[verb])
        signals.append(signal(index + 1, verb, created=START + timedelta(seconds=seconds), **fields))
    return draw(st.permutations(signals))


def last_closing(signals: list[Signal]) -> Signal | None:
    ordered = sorted(signals, key=lambda s: (s.created, s.id))
    closing = [s for s in ordered if s.verb in CLOSING_VERBS]
    return closing[-1] if closing else None


def decide_with(signals: list[Signal], knobs: tuple[int, int, bool, bool, bool]) -> Decision:
    stuck_count, threshold, stopped, rate_limited, stagnant = knobs
    return decide(
        signals,
        stuck_count=stuck_count,
        stuck_threshold=threshold,
        stopped_by_human=stopped,
        rate_limited=rate_limited,
        stagnant=stagnant,
    )


KNOBS = st.tuples(
    st.integers(min_value=0, max_value=10),
    st.integers(min_value=1, max_value=5),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)


@given(sessions(), KNOBS)
def test_the_decisions_closing_verb_is_the_last_closing_verb_called(
    signals: list[Signal], knobs: tuple[int, int, bool, bool, bool]
) -> None:
    closing = last_closing(signals)

    decision = decide_with(signals, knobs)

    assert decision.closing_verb == (closing.verb if closing else None)
    assert decision.closing_signal_id == (closing.id if closing else None)


@given(sessions(), KNOBS)
def test_done_as_the_last_closing_verb_always_makes_the_task_done(
    signals: list[Signal], knobs: tuple[int, int, bool, bool, bool]
) -> None:
    closing = last_closing(signals)

    decision = decide_with(signals, knobs)

    assert (decision.status is TaskStatus.DONE) == (closing is not None and closing.verb is Verb.DONE)


@given(sessions(), KNOBS)
def test_a_decision_never_leaves_the_task_in_progress_or_draft(
    signals: list[Signal], knobs: tuple[int, int, bool, bool, bool]
) -> None:
    status = decide_with(signals, knobs).status

    assert status in {
        TaskStatus.DONE,
        TaskStatus.PENDING,
        TaskStatus.BLOCKED,
        TaskStatus.NEEDS_INPUT,
        TaskStatus.FAILED,
    }


@given(sessions(), KNOBS)
def test_the_stuck_count_never_falls_and_rises_by_at_most_one(
    signals: list[Signal], knobs: tuple[int, int, bool, bool, bool]
) -> None:
    before = knobs[0]

    decision = decide_with(signals, knobs)

    assert decision.stuck_count - before in (0, 1)
    assert (decision.stuck_count == before + 1) == decision.counts_as_stuck
