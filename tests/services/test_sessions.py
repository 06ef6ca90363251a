"""Agent sessions and loop runs: starting, finishing, listing, costs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from ralph_desk.domain.enums import Recipe, SessionOutcome
from ralph_desk.domain.records import Change, Task
from ralph_desk.services.errors import ConflictError, InvalidValueError, NotFoundError
from ralph_desk.services.sessions import SessionService
from ralph_desk.store.database import Database
from tests.services.conftest import Desk

NOON = datetime(2026, 3, 1, 12, 0)


@pytest.fixture
def sessions(db: Database) -> SessionService:
    return SessionService(db)


@pytest.fixture
def task(desk: Desk) -> Task:
    return desk.task()


def start(sessions: SessionService, id: str, task_id: int | None = None, **fields: Any) -> Any:
    return sessions.start_session(id, task_id, "task_execution", "claude", **fields)


# --- sessions --------------------------------------------------------------------------------


def test_a_started_session_is_running_with_everything_it_was_given(
    sessions: SessionService, task: Task, changes: list[Change]
) -> None:
    loop_run = sessions.start_loop_run("claude", max_iterations=5)
    changes.clear()

    session = sessions.start_session(
        "task-7-abc",
        task.id,
        Recipe.TASK_EXECUTION,
        "claude",
        model="claude-haiku",
        loop_run_id=loop_run.id,
        iteration=1,
        discipline="frontend",
        feature="charts",
        head_before="0123abcd",
    )

    assert session.outcome == SessionOutcome.RUNNING.value
    assert (session.id, session.task_id, session.recipe, session.agent) == (
        "task-7-abc",
        task.id,
        "task_execution",
        "claude",
    )
    assert (session.model, session.loop_run_id, session.iteration) == ("claude-haiku", loop_run.id, 1)
    assert (session.discipline, session.feature, session.head_before) == ("frontend", "charts", "0123abcd")
    assert session.ended_at is None
    assert (session.cost_usd, session.input_tokens, session.output_tokens, session.turns) == (0.0, 0, 0, 0)
    assert session.changed_files == ()
    assert sessions.get("task-7-abc") == session
    assert changes == [Change("sessions", ("task-7-abc",))]


def test_a_session_without_task_is_allowed_for_interactive_recipes(sessions: SessionService) -> None:
    session = sessions.start_session("braindump-1", None, "braindump", "claude")
    assert (session.task_id, session.recipe) == (None, "braindump")


def test_a_session_id_can_be_used_once(sessions: SessionService, task: Task) -> None:
    start(sessions, "s-1", task.id)
    with pytest.raises(
        ConflictError, match=r"^an agent session 's-1' already exists; every session needs a new id$"
    ):
        start(sessions, "s-1", task.id)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        ({"id": "s", "task_id": 404}, NotFoundError, "no task 404"),
        ({"id": "s", "loop_run_id": 404}, NotFoundError, "no loop run 404"),
        ({"id": "  "}, InvalidValueError, "invalid id: '  '; allowed: a non-empty text"),
        (
            {"id": "s" * 129},
            InvalidValueError,
            "invalid id: '<129 characters>'; allowed: at most 128 characters",
        ),
        (
            {"id": "s", "recipe": "freestyle"},
            InvalidValueError,
            "invalid recipe: 'freestyle'; allowed: one of braindump, yap, ramble, discuss, task_execution, "
            "opus_review, enrichment, ide, understand",
        ),
        ({"id": "s", "agent": ""}, InvalidValueError, "invalid agent: ''; allowed: a non-empty text"),
        (
            {"id": "s", "iteration": -1},
            InvalidValueError,
            "invalid iteration: -1; allowed: a whole number of 0 or more",
        ),
        (
            {"id": "s", "task_id": 0},
            InvalidValueError,
            "invalid task_id: 0; allowed: a whole number from 1 to",
        ),
    ],
)
def test_a_bad_start_is_refused_and_nothing_is_recorded(
    sessions: SessionService, desk: Desk, call: dict[str, Any], error: type[Exception], message: str
) -> None:
    arguments: dict[str, Any] = {"task_id": None, "recipe": "task_execution", "agent": "claude", **call}

    with pytest.raises(error) as caught:
        sessions.start_session(**arguments)

    assert str(caught.value).startswith(message)
    assert sessions.list() == []


def test_finishing_a_session_records_how_it_ended_and_stamps_the_end(
    sessions: SessionService, task: Task, changes: list[Change]
) -> None:
    start(sessions, "s-1", task.id)
    changes.clear()

    finished = sessions.finish_session(
        "s-1",
        exit_code=0,
        closing_verb="done",
        outcome="done",
        cost_usd=0.125,
        input_tokens=1200,
        output_tokens=340,
        turns=7,
        transcript_path=".ralph/logs/20260301-120000_task-1.log",
        changed_files=["src/chart.py", "tests/test_chart.py"],
        head_after="89abcdef",
        error=None,
    )

    assert finished.ended_at is not None
    assert (finished.exit_code, finished.closing_verb, finished.outcome) == (0, "done", "done")
    assert (finished.cost_usd, finished.input_tokens, finished.output_tokens, finished.turns) == (
        0.125,
        1200,
        340,
        7,
    )
    assert finished.transcript_path == ".ralph/logs/20260301-120000_task-1.log"
    assert finished.changed_files == ("src/chart.py", "tests/test_chart.py")
    assert finished.head_after == "89abcdef"
    assert sessions.get("s-1") == finished
    assert changes == [Change("sessions", ("s-1",))]


def test_an_aware_end_time_is_stored_as_utc(sessions: SessionService, task: Task) -> None:
    start(sessions, "s-1", task.id)
    two_hours_east = timezone(timedelta(hours=2))

    finished = sessions.finish_session("s-1", ended_at=datetime(2026, 3, 1, 14, 0, tzinfo=two_hours_east))

    assert finished.ended_at == NOON
    assert sessions.get("s-1").ended_at == NOON


def test_a_running_session_can_be_updated_without_ending_it(sessions: SessionService, task: Task) -> None:
    start(sessions, "s-1", task.id)
    updated = sessions.update_session("s-1", cost_usd=0.5, turns=3)
    assert (updated.cost_usd, updated.turns, updated.ended_at) == (0.5, 3, None)


def test_a_very_long_error_is_cut_rather_than_refused(sessions: SessionService, task: Task) -> None:
    start(sessions, "s-1", task.id)
    traceback = "Traceback (most recent call last):\n" + "  line\n" * 10_000

    finished = sessions.finish_session("s-1", error=traceback, outcome="stuck")

    assert finished.error is not None
    assert len(finished.error) == 20_000
    assert finished.error.startswith("Traceback (most recent call last):\n")
    assert finished.error.endswith("… (truncated)")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"closing_verb": "ask"}, "invalid closing_verb: 'ask'; allowed: one of done, partial, stuck"),
        ({"outcome": "great"}, "invalid outcome: 'great'; allowed: one of done, requeued, stuck, failed"),
        ({"cost_usd": -0.01}, "invalid cost_usd: -0.01; allowed: an amount in US dollars of 0 or more"),
        ({"cost_usd": float("nan")}, "invalid cost_usd: nan; allowed: an amount in US dollars of 0 or more"),
        ({"turns": True}, "invalid turns: True; allowed: a whole number of 0 or more"),
        ({"input_tokens": -5}, "invalid input_tokens: -5; allowed: a whole number of 0 or more"),
        ({"exit_code": "0"}, "invalid exit_code: '0'; allowed: a whole number (a process exit status)"),
        ({"ended_at": "yesterday"}, "invalid ended_at: 'yesterday'; allowed: a date and time"),
        (
            {"changed_files": "src/chart.py"},
            "invalid changed_files: 'src/chart.py'; allowed: a list of file paths",
        ),
        ({"changed_files": ["ok.py", ""]}, "invalid changed_files[1]: ''; allowed: a non-empty text"),
        ({"recipe": "yap"}, "invalid field: 'recipe'; allowed: one of ended_at, exit_code, closing_verb"),
    ],
)
def test_a_bad_finish_is_refused_naming_the_field(
    sessions: SessionService, task: Task, fields: dict[str, Any], message: str
) -> None:
    start(sessions, "s-1", task.id)

    with pytest.raises(InvalidValueError) as caught:
        sessions.finish_session("s-1", **fields)

    assert str(caught.value).startswith(message)
    assert sessions.get("s-1").ended_at is None


def test_a_negative_exit_code_from_a_signal_is_kept(sessions: SessionService, task: Task) -> None:
    start(sessions, "s-1", task.id)
    assert sessions.finish_session("s-1", exit_code=-9, outcome="stopped").exit_code == -9


def test_finishing_or_getting_an_unknown_session_says_so(sessions: SessionService) -> None:
    with pytest.raises(NotFoundError, match=r"^no agent session 'ghost'$"):
        sessions.finish_session("ghost", outcome="done")
    with pytest.raises(NotFoundError, match=r"^no agent session 'ghost'$"):
        sessions.get("ghost")


def test_sessions_are_listed_newest_first_and_filtered_by_task_and_loop_run(
    sessions: SessionService, desk: Desk
) -> None:
    task, other = desk.task(), desk.task("Other")
    run = sessions.start_loop_run("claude")
    for index, (session_id, task_id, loop_run_id) in enumerate(
        [("a", task.id, run.id), ("b", other.id, None), ("c", task.id, None), ("d", task.id, run.id)]
    ):
        when = NOON + timedelta(minutes=[3, 1, 4, 2][index])
        start(sessions, session_id, task_id, loop_run_id=loop_run_id, started_at=when)

    def ids(**filters: Any) -> list[str]:
        return [session.id for session in sessions.list(**filters)]

    assert ids() == ["c", "a", "d", "b"]
    assert ids(task_id=task.id) == ["c", "a", "d"]
    assert ids(loop_run_id=run.id) == ["a", "d"]
    assert ids(limit=2) == ["c", "a"]
    assert ids(limit=2, offset=2) == ["d", "b"]
    assert ids(task_id=other.id + 100) == []
    assert sessions.get("c").started_at == NOON + timedelta(minutes=4)


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"limit": 0}, "invalid limit: 0; allowed: a whole number from 1 to 1000"),
        ({"limit": 1001}, "invalid limit: 1001; allowed: a whole number from 1 to 1000"),
        ({"offset": -1}, "invalid offset: -1; allowed: a whole number of 0 or more"),
    ],
)
def test_a_bad_page_is_refused(sessions: SessionService, filters: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidValueError) as caught:
        sessions.list(**filters)
    assert str(caught.value) == message


def test_total_cost_adds_up_every_session_or_those_of_one_loop_run(
    sessions: SessionService, task: Task
) -> None:
    assert sessions.total_cost() == 0.0
    run = sessions.start_loop_run("claude")
    start(sessions, "a", task.id, loop_run_id=run.id)
    start(sessions, "b", task.id, loop_run_id=run.id)
    start(sessions, "c", task.id)
    sessions.finish_session("a", cost_usd=0.25)
    sessions.finish_session("b", cost_usd=0.5)
    sessions.finish_session("c", cost_usd=1)

    assert sessions.total_cost() == pytest.approx(1.75)
    assert sessions.total_cost(loop_run_id=run.id) == pytest.approx(0.75)


def test_a_session_outlives_its_deleted_task(sessions: SessionService, desk: Desk, task: Task) -> None:
    start(sessions, "s-1", task.id)
    desk.tasks.delete(task.id)
    assert sessions.get("s-1").task_id is None


# --- loop runs -------------------------------------------------------------------------------


def test_a_started_loop_run_is_running_with_its_limits_and_settings(
    sessions: SessionService, changes: list[Change]
) -> None:
    run = sessions.start_loop_run(
        "claude", max_iterations=10, max_cost_usd=5, allow_edits=True, settings={"review_every": 3}
    )

    assert (run.state, run.agent, run.max_iterations, run.max_cost_usd) == ("running", "claude", 10, 5.0)
    assert (run.allow_edits, run.settings, run.iterations, run.cost_usd) == (
        True,
        {"review_every": 3},
        0,
        0.0,
    )
    assert run.ended_at is None
    assert sessions.get_loop_run(run.id) == run
    assert changes == [Change("loop", (run.id,))]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"agent": ""}, "invalid agent: ''; allowed: a non-empty text"),
        ({"max_iterations": 0}, "invalid max_iterations: 0; allowed: a whole number from 1 to"),
        ({"max_cost_usd": -1}, "invalid max_cost_usd: -1; allowed: an amount in US dollars of 0 or more"),
        ({"allow_edits": "yes"}, "invalid allow_edits: 'yes'; allowed: true or false"),
        ({"settings": ["x"]}, "invalid settings: ['x']; allowed: a mapping of setting names to JSON values"),
        (
            {"settings": {"when": NOON}},
            "invalid settings: {'when': datetime.datetime(2026, 3, 1, 12, 0)}; allowed",
        ),
    ],
)
def test_a_bad_loop_run_start_is_refused(
    sessions: SessionService, arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidValueError) as caught:
        sessions.start_loop_run(**{"agent": "claude", **arguments})
    assert str(caught.value).startswith(message)
    assert sessions.latest_loop_run() is None


def test_updating_a_loop_run_changes_its_counters_and_a_final_state_stamps_the_end(
    sessions: SessionService, changes: list[Change]
) -> None:
    run = sessions.start_loop_run("claude")
    changes.clear()

    waiting = sessions.update_loop_run(run.id, state="waiting", iterations=2, cost_usd=0.3)
    assert (waiting.state, waiting.iterations, waiting.cost_usd, waiting.ended_at) == (
        "waiting",
        2,
        0.3,
        None,
    )

    stopped = sessions.update_loop_run(run.id, state="stopped", stop_reason="stop button")
    assert (stopped.state, stopped.stop_reason) == ("stopped", "stop button")
    assert stopped.ended_at is not None
    assert changes == [Change("loop", (run.id,)), Change("loop", (run.id,))]


def test_an_explicit_end_time_wins_over_the_stamp(sessions: SessionService) -> None:
    run = sessions.start_loop_run("claude")
    ended = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    assert sessions.update_loop_run(run.id, state="completed", ended_at=ended).ended_at == NOON


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"state": "sleeping"}, "invalid state: 'sleeping'; allowed: one of running, paused, waiting"),
        ({"iterations": -1}, "invalid iterations: -1; allowed: a whole number of 0 or more"),
        ({"agent": "codex"}, "invalid field: 'agent'; allowed: one of state, ended_at, iterations"),
    ],
)
def test_a_bad_loop_run_update_is_refused(
    sessions: SessionService, fields: dict[str, Any], message: str
) -> None:
    run = sessions.start_loop_run("claude")
    with pytest.raises(InvalidValueError) as caught:
        sessions.update_loop_run(run.id, **fields)
    assert str(caught.value).startswith(message)
    assert sessions.get_loop_run(run.id) == run


def test_an_unknown_loop_run_says_so(sessions: SessionService) -> None:
    with pytest.raises(NotFoundError, match=r"^no loop run 404$"):
        sessions.update_loop_run(404, state="stopped")
    with pytest.raises(NotFoundError, match=r"^no loop run 404$"):
        sessions.get_loop_run(404)


def test_the_latest_loop_run_is_the_one_started_last(sessions: SessionService) -> None:
    assert sessions.latest_loop_run() is None
    first = sessions.start_loop_run("claude")
    second = sessions.start_loop_run("codex")

    latest = sessions.latest_loop_run()

    assert latest is not None and latest.id == second.id
    assert [run.id for run in sessions.list_loop_runs(limit=5)] == [second.id, first.id]
    assert [run.id for run in sessions.list_loop_runs(limit=1)] == [second.id]
