"""Recording the eight verbs: their parameters, their checks, and the queries the loop and prompt use."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from ralph_desk.domain.enums import FlagResolution, ReviewDecision, Verb
from ralph_desk.domain.records import Change
from ralph_desk.services.errors import InvalidValueError, NotFoundError
from tests.services.conftest import Desk, topics

NOON = datetime(2026, 3, 1, 12, 0)

VERB_CALLS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("done", {"summary": "Chart drawn, tests pass."}, {"summary": "Chart drawn, tests pass."}),
    (
        "partial",
        {"summary": "Axes drawn.", "remaining": "Legend and units."},
        {"summary": "Axes drawn.", "remaining": "Legend and units."},
    ),
    ("stuck", {"reason": "No tide data in the fixtures."}, {"reason": "No tide data in the fixtures."}),
    (
        "ask",
        {
            "question": "Metres or feet?",
            "options": ["metres", "feet"],
            "preferred": "metres",
            "blocking": True,
        },
        {
            "question": "Metres or feet?",
            "options": ("metres", "feet"),
            "preferred": "metres",
            "blocking": True,
        },
    ),
    (
        "flag",
        {"what": "Heights are off by one hour.", "severity": "blocking", "category": "bug"},
        {"what": "Heights are off by one hour.", "severity": "blocking", "category": "bug"},
    ),
    (
        "learned",
        {
            "text": "Heights are in metres.",
            "kind": "decision",
            "rationale": "Chart datum.",
            "scope": "project",
        },
        {
            "text": "Heights are in metres.",
            "kind": "decision",
            "rationale": "Chart datum.",
            "scope": "project",
        },
    ),
    (
        "suggest",
        {"what": "Add a legend.", "kind": "new_task", "why": "Lines look alike.", "feature": "tides"},
        {"what": "Add a legend.", "kind": "new_task", "why": "Lines look alike.", "feature": "tides"},
    ),
    (
        "blocked",
        {"on": "The tide API key is missing.", "kind": "external", "detail": "No key in .env.example."},
        {"on": "The tide API key is missing.", "kind": "external", "detail": "No key in .env.example."},
    ),
]


@pytest.mark.parametrize(("verb", "params", "expected"), VERB_CALLS, ids=[call[0] for call in VERB_CALLS])
def test_each_verb_is_stored_with_its_parameters_task_session_and_discipline(
    desk: Desk, verb: str, params: dict[str, Any], expected: dict[str, Any]
) -> None:
    task = desk.task(discipline="backend")

    signal = desk.signals.record(task.id, "session-7", verb, **params)

    assert signal.verb is Verb(verb)
    assert (signal.task_id, signal.session_id, signal.discipline) == (task.id, "session-7", "backend")
    assert {key: getattr(signal, key) for key in expected} == expected
    assert desk.signals.get(signal.id) == signal


def test_every_verb_of_seed_002_has_an_input_model() -> None:
    from ralph_desk.domain.tools import VERB_INPUTS, VERB_OF

    assert set(VERB_INPUTS) == set(Verb)
    assert {VERB_OF[model] for model in VERB_INPUTS.values()} == set(Verb)
    assert {call[0] for call in VERB_CALLS} == {verb.value for verb in Verb}


def test_a_verb_may_be_given_as_the_enum_member(desk: Desk) -> None:
    task = desk.task()
    assert desk.signals.record(task.id, None, Verb.STUCK, reason="No data.").verb is Verb.STUCK


def test_a_signal_without_session_is_stored_with_none(desk: Desk) -> None:
    task = desk.task()
    assert desk.signals.record(task.id, None, "done", summary="Done.").session_id is None


def test_a_new_flag_is_open_and_a_new_suggestion_is_pending_review(desk: Desk) -> None:
    task = desk.task()

    flag = desk.flag(task, "Stale fixture.")
    suggestion = desk.suggest(task)
    done = desk.signals.record(task.id, "s-1", "done", summary="Done.")

    assert flag.resolution is FlagResolution.OPEN
    assert suggestion.review_decision is ReviewDecision.PENDING
    assert (done.resolution, done.review_decision) == (None, None)


def test_a_learning_without_scope_is_scoped_to_the_feature(desk: Desk) -> None:
    task = desk.task()
    learned = desk.signals.record(task.id, "s-1", "learned", text="Use metres.", kind="convention")
    assert learned.scope == "feature"
    assert learned.rationale is None


def test_a_question_without_options_has_none(desk: Desk) -> None:
    task = desk.task()
    assert desk.ask(task, blocking=False).options == ()
    assert desk.ask(task, options=[]).options == ()


def test_options_are_read_back_in_order_even_with_quotes_and_commas(desk: Desk) -> None:
    task = desk.task()
    options = ["keep 'sync', add retry", 'revert to "async"', "  padded  "]
    assert desk.ask(task, options=options).options == tuple(options)


def test_two_hundred_options_are_accepted_and_two_hundred_and_one_refused(desk: Desk) -> None:
    task = desk.task()
    assert len(desk.ask(task, options=[f"option {n}" for n in range(200)]).options) == 200

    with pytest.raises(
        InvalidValueError, match=r"invalid options: '<201 items>'; allowed: at most 200 items"
    ):
        desk.ask(task, options=[f"option {n}" for n in range(201)])


@pytest.mark.parametrize("option", ["two\nlines", "carriage\rreturn"])
def test_an_option_with_a_line_break_is_refused_because_options_are_stored_one_per_line(
    desk: Desk, option: str
) -> None:
    task = desk.task()
    with pytest.raises(InvalidValueError) as caught:
        desk.ask(task, options=["metres", option])
    assert str(caught.value).startswith("invalid options[1]: ")
    assert str(caught.value).endswith(
        "allowed: a single non-blank line without NUL characters (options are stored one per line)"
    )
    assert desk.signals.for_task(task.id) == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("metres", "invalid options: 'metres'; allowed: a list of texts"),
        (["metres", ""], "invalid options[1]: ''; allowed: a non-empty text"),
        (["metres", 3], "invalid options[1]: 3; allowed: a text"),
    ],
)
def test_options_must_be_a_list_of_non_empty_texts(desk: Desk, options: Any, message: str) -> None:
    task = desk.task()
    with pytest.raises(InvalidValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        desk.ask(task, options=options)


@pytest.mark.parametrize(
    ("verb", "params", "message"),
    [
        ("done", {}, "invalid summary: None; allowed: a non-empty text (required by done)"),
        (
            "partial",
            {"summary": "Axes."},
            "invalid remaining: None; allowed: a non-empty text (required by partial)",
        ),
        (
            "stuck",
            {"reason": "   "},
            "invalid reason: '   '; allowed: a non-empty text without NUL characters",
        ),
        ("ask", {"blocking": True}, "invalid question: None; allowed: a non-empty text (required by ask)"),
        ("ask", {"question": "Units?"}, "invalid blocking: None; allowed: true or false (required by ask)"),
        ("ask", {"question": "Units?", "blocking": "yes"}, "invalid blocking: 'yes'; allowed: true or false"),
        ("ask", {"question": "Units?", "blocking": 1}, "invalid blocking: 1; allowed: true or false"),
        (
            "flag",
            {"what": "Off by one.", "category": "bug"},
            "invalid severity: None; allowed: one of info, warning, blocking (required by flag)",
        ),
        (
            "flag",
            {"what": "Off by one.", "severity": "fatal", "category": "bug"},
            "invalid severity: 'fatal'; allowed: one of info, warning, blocking",
        ),
        (
            "flag",
            {"what": "Off by one.", "severity": "info", "category": "typo"},
            "invalid category: 'typo'; allowed: one of bug, stale, contradiction, ambiguity, overlap, "
            "performance, security, incomplete_prior",
        ),
        (
            "learned",
            {"text": "Metres.", "kind": "rumour"},
            "invalid kind: 'rumour'; allowed: one of discovery, decision, convention",
        ),
        (
            "learned",
            {"text": "Metres.", "kind": "discovery", "scope": "galaxy"},
            "invalid scope: 'galaxy'; allowed: one of project, feature, task",
        ),
        (
            "suggest",
            {"what": "Legend.", "why": "Clarity."},
            "invalid kind: None; allowed: one of new_task, split, refactor, alternative, deprecate "
            "(required by suggest)",
        ),
        (
            "suggest",
            {"what": "Legend.", "kind": "split"},
            "invalid why: None; allowed: a non-empty text (required by suggest)",
        ),
        (
            "blocked",
            {"on": "API key.", "kind": "divine"},
            "invalid kind: 'divine'; allowed: one of upstream_task, external",
        ),
        (
            "done",
            {"summary": "Done.", "task_id": 3},
            "invalid parameter: 'task_id'; allowed: the parameters of done: summary",
        ),
        (
            "ask",
            {"question": "Units?", "blocking": True, "severity": "info"},
            "invalid parameter: 'severity'; allowed: the parameters of ask: "
            "question, options, preferred, blocking",
        ),
        ("done", {"summary": 42}, "invalid summary: 42; allowed: a text"),
    ],
)
def test_bad_parameters_are_refused_naming_the_field_the_value_and_what_is_allowed(
    desk: Desk, verb: str, params: dict[str, Any], message: str
) -> None:
    task = desk.task()

    with pytest.raises(InvalidValueError) as caught:
        desk.signals.record(task.id, "s-1", verb, **params)

    assert str(caught.value) == message
    assert desk.signals.for_task(task.id) == []


def test_an_unknown_verb_is_refused_listing_the_eight(desk: Desk) -> None:
    task = desk.task()
    with pytest.raises(InvalidValueError) as caught:
        desk.signals.record(task.id, "s-1", "finish", summary="Done.")
    assert str(caught.value) == (
        "invalid verb: 'finish'; allowed: one of done, partial, stuck, ask, flag, learned, suggest, blocked"
    )


def test_a_text_of_twenty_thousand_characters_is_kept_and_one_more_is_refused(desk: Desk) -> None:
    task = desk.task()
    longest = "x" * 20_000

    assert desk.signals.record(task.id, "s-1", "done", summary=longest).summary == longest
    with pytest.raises(
        InvalidValueError, match=r"invalid summary: '<20001 characters>'; allowed: at most 20000"
    ):
        desk.signals.record(task.id, "s-1", "done", summary=longest + "x")


def test_a_text_with_a_nul_character_is_refused(desk: Desk) -> None:
    task = desk.task()
    with pytest.raises(InvalidValueError, match="allowed: a non-empty text without NUL characters"):
        desk.signals.record(task.id, "s-1", "stuck", reason="before\x00after")


def test_sql_in_a_text_is_stored_verbatim_as_data(desk: Desk) -> None:
    task = desk.task()
    sneaky = "'); DROP TABLE task_signals; -- \" OR 1=1; SELECT * FROM tasks WHERE '1'='1"

    signal = desk.signals.record(task.id, "x'; DELETE FROM tasks; --", "done", summary=sneaky)

    assert desk.signals.get(signal.id).summary == sneaky
    assert desk.signals.for_session("x'; DELETE FROM tasks; --") == [signal]
    assert desk.tasks.get(task.id).title == task.title


def test_a_suggestion_names_its_feature_and_an_unknown_feature_is_refused_listing_known_ones(
    desk: Desk,
) -> None:
    task = desk.task(feature="charts")

    assert desk.suggest(task, feature="tides").feature == "tides"
    assert desk.suggest(task).feature is None
    with pytest.raises(NotFoundError) as caught:
        desk.suggest(task, feature="weather")
    assert str(caught.value) == "no feature 'weather'; known: charts, tides"


def test_a_signal_for_an_unknown_task_is_refused(desk: Desk) -> None:
    with pytest.raises(NotFoundError, match=r"^no task 999$"):
        desk.signals.record(999, "s-1", "done", summary="Done.")


@pytest.mark.parametrize("task_id", [0, -1, "1", True, None])
def test_a_task_id_must_be_a_positive_whole_number(desk: Desk, task_id: Any) -> None:
    with pytest.raises(InvalidValueError, match=r"^invalid task_id: .*; allowed: a whole number from 1 to"):
        desk.signals.record(task_id, "s-1", "done", summary="Done.")


@pytest.mark.parametrize(
    ("session_id", "message"),
    [
        ("", "invalid session_id: ''; allowed: a non-empty text"),
        ("s" * 129, "invalid session_id: '<129 characters>'; allowed: at most 128 characters"),
    ],
)
def test_a_session_id_must_be_a_short_non_empty_text(desk: Desk, session_id: str, message: str) -> None:
    task = desk.task()
    with pytest.raises(InvalidValueError) as caught:
        desk.signals.record(task.id, session_id, "done", summary="Done.")
    assert str(caught.value) == message


def test_a_signal_is_recorded_now_unless_a_time_is_given(desk: Desk) -> None:
    task = desk.task()
    before = datetime.now(UTC).replace(tzinfo=None)
    now = desk.signals.record(task.id, "s-1", "flag", what="Flaky", severity="info", category="bug")
    earlier = datetime(2026, 11, 18, 10, 30, tzinfo=timezone(timedelta(hours=2)))
    replayed = desk.signals.record(
        task.id, "s-1", "done", recorded_at=earlier, summary="Replayed from an import."
    )

    assert now.created >= before - timedelta(seconds=1)
    assert replayed.created == datetime(2026, 11, 18, 8, 30)
    assert desk.signals.get(replayed.id).created == datetime(2026, 11, 18, 8, 30)


def test_a_recording_time_that_is_not_a_time_is_refused(desk: Desk) -> None:
    task = desk.task()
    with pytest.raises(InvalidValueError, match=r"recorded_at.*a date and time"):
        desk.signals.record(task.id, "s-1", "done", recorded_at="yesterday", summary="Done.")  # type: ignore[arg-type]
    assert desk.signals.for_task(task.id) == []


def test_recording_notifies_signals_and_for_inbox_verbs_the_inbox(desk: Desk, changes: list[Change]) -> None:
    task = desk.task()
    changes.clear()

    done = desk.signals.record(task.id, "s-1", "done", summary="Done.")
    assert changes == [Change("signals", (done.id,))]

    changes.clear()
    ask = desk.ask(task)
    assert topics(changes) == {"signals", "inbox"}
    assert all(change.ids == (ask.id,) for change in changes)


def test_a_sessions_signals_come_in_call_order_by_time_then_id(desk: Desk) -> None:
    task = desk.task()
    first = desk.signals.record(task.id, "s-1", "learned", text="Metres.", kind="discovery")
    second = desk.signals.record(task.id, "s-1", "flag", what="Stale.", severity="info", category="stale")
    third = desk.signals.record(task.id, "s-1", "done", summary="Done.")
    desk.signals.record(task.id, "s-2", "done", summary="Other session.")
    desk.set_created(first, NOON + timedelta(seconds=1))
    desk.set_created(second, NOON)
    desk.set_created(third, NOON)

    assert [signal.id for signal in desk.signals.for_session("s-1")] == [second.id, third.id, first.id]
    assert desk.signals.for_session("nobody") == []


def test_a_tasks_signals_are_all_of_its_sessions_and_only_its_own(desk: Desk) -> None:
    task, other = desk.task(), desk.task("Other")
    partial = desk.signals.record(task.id, "s-1", "partial", summary="Axes.", remaining="Legend.")
    done = desk.signals.record(task.id, "s-2", "done", summary="Legend.")
    desk.signals.record(other.id, "s-3", "done", summary="Other.")

    assert desk.signals.for_task(task.id) == [partial, done]


def test_reading_signals_of_an_unknown_task_or_signal_says_so(desk: Desk) -> None:
    with pytest.raises(NotFoundError, match=r"^no task 404$"):
        desk.signals.for_task(404)
    with pytest.raises(NotFoundError, match=r"^no signal 404$"):
        desk.signals.get(404)


def test_learnings_filter_by_the_tasks_feature_scope_and_task(desk: Desk) -> None:
    chart_task = desk.task(feature="charts")
    tide_task = desk.task(feature="tides")

    def learn(task_id: int, text: str, scope: str) -> int:
        return desk.signals.record(task_id, "s", "learned", text=text, kind="discovery", scope=scope).id

    project_wide = learn(chart_task.id, "Heights in metres.", "project")
    chart_only = learn(chart_task.id, "Charts use SVG.", "feature")
    tide_only = learn(tide_task.id, "Tides come from NOAA.", "feature")
    retry_only = learn(tide_task.id, "The stub returns 503 first.", "task")
    desk.flag(chart_task, "Not a learning.")

    def ids(**filters: Any) -> list[int]:
        return [signal.id for signal in desk.signals.learnings(**filters)]

    assert ids() == [project_wide, chart_only, tide_only, retry_only]
    assert ids(feature="charts") == [project_wide, chart_only]
    assert ids(scope="project") == [project_wide]
    assert ids(feature="tides", scope="feature") == [tide_only]
    assert ids(task_id=tide_task.id, scope="task") == [retry_only]


def test_learnings_refuse_an_unknown_feature_task_or_scope(desk: Desk) -> None:
    with pytest.raises(NotFoundError, match=r"^no feature 'weather'; known: charts, tides$"):
        desk.signals.learnings(feature="weather")
    with pytest.raises(NotFoundError, match=r"^no task 77$"):
        desk.signals.learnings(task_id=77)
    with pytest.raises(InvalidValueError, match=r"^invalid scope: 'everywhere'; allowed: one of project"):
        desk.signals.learnings(scope="everywhere")


def test_open_flags_leave_out_triaged_ones_and_put_blocking_first(desk: Desk) -> None:
    chart_task, tide_task = desk.task(feature="charts"), desk.task(feature="tides")
    info = desk.flag(chart_task, "FYI.", severity="info")
    blocking = desk.flag(chart_task, "Broken.", severity="blocking")
    warning = desk.flag(tide_task, "Slow.", severity="warning")
    dismissed = desk.flag(chart_task, "Noise.", severity="blocking")
    desk.inbox.triage(dismissed.id, "dismissed")

    assert [flag.id for flag in desk.signals.open_flags()] == [blocking.id, warning.id, info.id]
    assert [flag.id for flag in desk.signals.open_flags(feature="tides")] == [warning.id]
    assert [flag.id for flag in desk.signals.open_flags(task_id=chart_task.id)] == [blocking.id, info.id]


def test_latest_answers_are_the_answered_questions_since_the_tasks_last_done(desk: Desk) -> None:
    task = desk.task()
    before = desk.ask(task, "Old question?")
    desk.inbox.answer(before.id, "Old answer.")
    desk.signals.record(task.id, "s-1", "done", summary="Done once.")
    answered = desk.ask(task, "Metres?")
    unanswered = desk.ask(task, "Feet?")
    desk.inbox.answer(answered.id, "Metres.")

    answers = desk.signals.latest_answers(task.id)

    assert [signal.id for signal in answers] == [answered.id]
    assert answers[0].answer == "Metres."
    assert unanswered.id not in [signal.id for signal in answers]


def test_the_continuation_is_the_last_partial_unless_the_task_was_done_after_it(desk: Desk) -> None:
    task = desk.task()
    assert desk.signals.latest_continuation(task.id) is None

    desk.signals.record(task.id, "s-1", "partial", summary="Axes.", remaining="Legend.")
    last = desk.signals.record(task.id, "s-2", "partial", summary="Legend.", remaining="Units.")
    desk.signals.record(task.id, "s-2", "learned", text="Metres.", kind="discovery")
    assert desk.signals.latest_continuation(task.id) == last

    desk.signals.record(task.id, "s-3", "done", summary="All done.")
    assert desk.signals.latest_continuation(task.id) is None
