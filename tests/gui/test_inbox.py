"""The Inbox pane, driven like a person would, over real services on the demo database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import FlagResolution, ReviewDecision, TaskOrigin, TaskStatus
from ralph_desk.domain.records import Change, Signal
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.flags import TASK_COLUMN, WHAT_COLUMN
from ralph_desk.gui.panes.inbox.pane import FLAGS, QUESTIONS, SUGGESTIONS
from ralph_desk.services.container import Services
from tests.gui.conftest import controller, settle
from tests.support.demo_rows import flag_about, suggestion_about, task_id

WAIT_MS = 3000
REPO = Path(__file__).resolve().parents[2]
MIN_WHAT_PX = 120


@pytest.fixture
def blocking_flag(services: Services) -> int:
    """The demo's blocking flag."""
    return flag_about(services, "The example settings keep the SMTP password").id


@pytest.fixture
def suggestion(services: Services) -> Signal:
    """A pending new-task suggestion of the demo, with its draft task."""
    return suggestion_about(services, "Add a regression test for the spring-equinox tides")


@pytest.fixture
def suggested_task(suggestion: Signal) -> int:
    """The draft task of that suggestion."""
    assert suggestion.created_task_id is not None
    return suggestion.created_task_id


def run_elsewhere(*args: str) -> None:
    """Run a Python command line in another process, as an agent's server or the CLI would."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, *args], check=True, timeout=60, cwd=REPO, env=env, capture_output=True)


def question_texts(window: MainWindow) -> list[str]:
    view = window.inbox.questions
    return [view.cards[key].item.ask.question or "" for key in view.order]


# --- questions -------------------------------------------------------------------------------


def test_the_questions_tab_shows_each_open_question_with_options_and_what_the_agent_was_doing(
    window: MainWindow, services: Services
) -> None:
    asks = services.inbox.asks(open_only=False)
    card = window.inbox.questions.card(asks[0].id)

    assert card is not None
    assert [button.property("option") for button in card.option_buttons] == list(asks[0].options)
    preferred = [button.text() for button in card.option_buttons if button.property("preferred")]
    assert preferred == [f"★ {asks[0].preferred}"]
    assert "What the agent was doing" in card.doing.text()
    assert window.inbox.tabs.tabText(QUESTIONS) == f"Questions ({len(asks)})"


def test_ctrl_enter_answers_returns_the_task_to_pending_and_the_next_question_gets_focus(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    first, second = services.inbox.asks(open_only=False)[:2]
    window.activateWindow()
    qtbot.waitActive(window)
    card = window.inbox.questions.card(first.id)
    assert card is not None
    card.focus_input()
    qtbot.keyClicks(card.answer, "Station local time, with the offset shown.")

    qtbot.keyClick(card.answer, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    commit_held(window)

    qtbot.waitUntil(lambda: window.inbox.questions.card(first.id) is None, timeout=WAIT_MS)
    assert services.signals.get(first.id).answer == "Station local time, with the offset shown."
    assert services.tasks.get(first.task_id).status is TaskStatus.PENDING
    following = window.inbox.questions.card(second.id)
    assert following is not None
    qtbot.waitUntil(lambda: QApplication.focusWidget() is following.answer, timeout=WAIT_MS)


def test_clicking_an_option_answers_with_it(qtbot: QtBot, window: MainWindow, services: Services) -> None:
    ask = services.inbox.asks(open_only=False)[1]
    card = window.inbox.questions.card(ask.id)
    assert card is not None

    qtbot.mouseClick(card.option_buttons[0], Qt.MouseButton.LeftButton)
    commit_held(window)

    qtbot.waitUntil(lambda: window.inbox.questions.card(ask.id) is None, timeout=WAIT_MS)
    assert services.signals.get(ask.id).answer == ask.options[0]
    assert services.tasks.get(ask.task_id).status is TaskStatus.PENDING


def test_answering_lowers_the_inbox_badge_and_the_tab_count(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    before = window.sidebar.badge("inbox")
    ask = services.inbox.asks()[0]

    controller(window).inbox.answer(ask.id, "Yes.")
    commit_held(window)

    qtbot.waitUntil(lambda: window.sidebar.badge("inbox") == before - 1, timeout=WAIT_MS)
    assert window.inbox.tabs.tabText(QUESTIONS) == "Questions (2)"
    assert "(11)" in window.windowTitle()  # 2 questions, the suggestions, flags and the failed task


def test_a_refused_answer_is_shown_in_the_message_bar(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    ask = services.inbox.asks()[0]
    services.inbox.answer(ask.id, "Answered elsewhere first.")

    controller(window).inbox.answer(ask.id, "Too late.")
    commit_held(window)
    settle(qtbot, window)

    assert window.message_bar.isVisible()
    assert window.message_bar.level == "error"
    assert "already answered" in window.message_bar.text


def commit_held(window: MainWindow) -> None:
    """Let the decision held for an Undo go through now, as its time running out would."""
    held = controller(window).pending
    assert held.held is not None and held.toast.isVisible()
    held.commit()


# --- suggestions -----------------------------------------------------------------------------


def test_a_suggestion_card_shows_the_robot_what_why_kind_feature_and_session(
    window: MainWindow, services: Services, suggestion: Signal
) -> None:
    suggestion = services.signals.get(suggestion.id)
    card = window.inbox.suggestions.card(suggestion.id)

    assert card is not None
    assert card.robot.pixmap() is not None and not card.robot.pixmap().isNull()
    assert card.what.text() == suggestion.what
    assert suggestion.why is not None and suggestion.why in card.why.text()
    assert card.kind.text() == "new task"
    assert card.feature.text() == suggestion.feature
    assert suggestion.session_id is not None and suggestion.session_id in card.source.text()
    assert card.approve.isVisibleTo(card) and not card.acknowledge.isVisibleTo(card)


def test_approving_a_suggestion_makes_its_task_pending(
    qtbot: QtBot, window: MainWindow, services: Services, suggestion: Signal, suggested_task: int
) -> None:
    window.inbox.show_tab(SUGGESTIONS)
    card = window.inbox.suggestions.card(suggestion.id)
    assert card is not None

    qtbot.mouseClick(card.approve, Qt.MouseButton.LeftButton)
    commit_held(window)

    qtbot.waitUntil(lambda: window.inbox.suggestions.card(suggestion.id) is None, timeout=WAIT_MS)
    assert services.tasks.get(suggested_task).status is TaskStatus.PENDING
    assert services.signals.get(suggestion.id).review_decision is ReviewDecision.APPROVED
    assert not window.message_bar.isVisible()  # the undo notice said it, over the page


def test_editing_then_approving_saves_the_changed_fields_and_makes_the_task_pending(
    qtbot: QtBot, window: MainWindow, services: Services, suggestion: Signal, suggested_task: int
) -> None:
    card = window.inbox.suggestions.card(suggestion.id)
    assert card is not None
    qtbot.mouseClick(card.edit, Qt.MouseButton.LeftButton)
    settle(qtbot, window)
    dialog = controller(window).inbox.edit_dialog
    assert dialog is not None and dialog.isVisible()
    dialog.title.setText("Regression test for the 2027 spring equinox tides")
    dialog.priority.setCurrentText("high")
    dialog.discipline.setCurrentText("testing")
    dialog.criteria.setPlainText("Heights match the almanac to 1 cm\nTimes match to the minute")

    qtbot.mouseClick(dialog.approve, Qt.MouseButton.LeftButton)
    commit_held(window)

    qtbot.waitUntil(lambda: window.inbox.suggestions.card(suggestion.id) is None, timeout=WAIT_MS)
    task = services.tasks.get(suggested_task)
    assert task.title == "Regression test for the 2027 spring equinox tides"
    assert task.priority.value == "high"
    assert task.discipline == "testing"
    assert task.acceptance_criteria == ("Heights match the almanac to 1 cm", "Times match to the minute")
    assert task.status is TaskStatus.PENDING


def test_rejecting_a_suggestion_skips_its_task_and_keeps_the_reason_as_a_comment(
    qtbot: QtBot, window: MainWindow, services: Services, suggestion: Signal, suggested_task: int
) -> None:
    card = window.inbox.suggestions.card(suggestion.id)
    assert card is not None
    qtbot.mouseClick(card.reject_button, Qt.MouseButton.LeftButton)
    dialog = card.reason_dialog
    assert dialog is not None and not dialog.ok.isEnabled()
    qtbot.keyClicks(dialog.reason, "The almanac test already covers it.")

    qtbot.mouseClick(dialog.ok, Qt.MouseButton.LeftButton)
    commit_held(window)

    qtbot.waitUntil(lambda: window.inbox.suggestions.card(suggestion.id) is None, timeout=WAIT_MS)
    task = services.tasks.get(suggested_task)
    assert task.status is TaskStatus.SKIPPED
    assert task.comments[-1].body == "Rejected: The almanac test already covers it."
    assert services.signals.get(suggestion.id).review_decision is ReviewDecision.REJECTED


def test_a_suggestion_that_is_not_a_task_is_acknowledged(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    refactor = services.signals.record(
        8, "s-refactor", "suggest", what="Split the chart module", kind="refactor", why="It is 900 lines"
    )
    qtbot.waitUntil(lambda: window.inbox.suggestions.card(refactor.id) is not None, timeout=WAIT_MS)
    card = window.inbox.suggestions.card(refactor.id)
    assert card is not None and card.acknowledge.isVisibleTo(card) and not card.approve.isVisibleTo(card)

    qtbot.mouseClick(card.acknowledge, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: window.inbox.suggestions.card(refactor.id) is None, timeout=WAIT_MS)
    assert services.signals.get(refactor.id).review_decision is ReviewDecision.ACKNOWLEDGED


# --- flags -----------------------------------------------------------------------------------


def test_flags_are_listed_blocking_first(window: MainWindow, services: Services) -> None:
    model = window.inbox.flags.model

    severities = [model.record(row).flag.severity for row in range(model.rowCount())]

    assert severities[0] == "blocking"
    assert severities == sorted(severities, key=lambda s: {"blocking": 0, "warning": 1, "info": 2}[s or ""])
    assert model.rowCount() == len(services.inbox.flags(resolution="open"))


def test_a_flag_arriving_with_session_changes_is_read_alone_not_with_the_whole_inbox(
    qtbot: QtBot, window: MainWindow, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    controller(window).feed.stop()  # the changes are handed over by hand below
    worker = controller(window).worker
    asked: list[str] = []
    submit = worker.submit
    monkeypatch.setattr(worker, "submit", lambda what, *rest: (asked.append(what), submit(what, *rest))[1])
    task = services.tasks.list()[0].id
    flag = services.signals.record(task, None, "flag", what="a new flag", severity="info", category="bug")
    # A running loop's changes arrive in the same poll as the flags other processes write.
    changes = [Change("sessions", ("s-other",)), Change("loop", (1,)), *services.db.changes_since(0)[1][-2:]]
    assert {change.topic for change in changes[2:]} == {"signals", "inbox"}

    controller(window).inbox.on_changes(changes)
    settle(qtbot, window)

    assert asked == ["read the changed signals"]
    assert window.inbox.flags.model.row_of(flag.id) is not None


@pytest.mark.parametrize("resolution", ["acknowledged", "resolved", "dismissed"])
def test_triaging_a_flag_sets_its_resolution_and_selects_the_next_one(
    qtbot: QtBot, window: MainWindow, services: Services, resolution: str, blocking_flag: int
) -> None:
    flags = window.inbox.flags
    window.inbox.show_tab(FLAGS)
    assert flags.select_flag(blocking_flag)
    following = flags.model.record(1).flag.id

    qtbot.mouseClick(flags.triage_buttons[resolution], Qt.MouseButton.LeftButton)
    commit_held(window)

    qtbot.waitUntil(lambda: flags.model.row_of(blocking_flag) is None, timeout=WAIT_MS)
    assert services.signals.get(blocking_flag).resolution is FlagResolution(resolution)
    selected = flags.selected()
    assert selected is not None and selected.flag.id == following


def test_converting_a_flag_makes_a_pending_high_priority_task_that_the_task_table_shows(
    qtbot: QtBot, window: MainWindow, services: Services, blocking_flag: int
) -> None:
    flags = window.inbox.flags
    assert flags.select_flag(blocking_flag)

    qtbot.mouseClick(flags.triage_buttons["convert"], Qt.MouseButton.LeftButton)
    dialog = controller(window).inbox.task_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.priority.currentText() == "high"  # the flag is blocking
    assert "SMTP password" in dialog.description.toPlainText()
    qtbot.keyClick(dialog.title, Qt.Key.Key_Return)  # Enter creates it, pending as offered
    commit_held(window)

    qtbot.waitUntil(lambda: flags.model.row_of(blocking_flag) is None, timeout=WAIT_MS)
    flag = services.signals.get(blocking_flag)
    assert flag.resolution is FlagResolution.CONVERTED and flag.created_task_id is not None
    task = services.tasks.get(flag.created_task_id)
    assert task.status is TaskStatus.PENDING and task.priority.value == "high"
    assert task.origin is TaskOrigin.HUMAN
    qtbot.waitUntil(lambda: window.tasks.model.row_of(task.id) is not None, timeout=WAIT_MS)


def test_a_flag_converted_through_the_dialog_can_become_a_draft_with_edited_fields(
    qtbot: QtBot, window: MainWindow, services: Services, blocking_flag: int
) -> None:
    flags = window.inbox.flags
    assert flags.select_flag(blocking_flag)
    qtbot.mouseClick(flags.triage_buttons["convert"], Qt.MouseButton.LeftButton)
    dialog = controller(window).inbox.task_dialog
    assert dialog is not None

    dialog.title.setText("Move the SMTP password out of the example settings")
    dialog.status.setCurrentIndex(dialog.status.findData(TaskStatus.DRAFT.value))
    dialog.create_button.click()
    commit_held(window)

    qtbot.waitUntil(lambda: services.signals.get(blocking_flag).created_task_id is not None, timeout=WAIT_MS)
    task = services.tasks.get(services.signals.get(blocking_flag).created_task_id or 0)
    assert task.title == "Move the SMTP password out of the example settings"
    assert task.status is TaskStatus.DRAFT


def test_cancelling_the_convert_dialog_leaves_the_flag_open(
    window: MainWindow, services: Services, blocking_flag: int
) -> None:
    flags = window.inbox.flags
    assert flags.select_flag(blocking_flag)
    flags.triage_buttons["convert"].click()
    dialog = controller(window).inbox.task_dialog
    assert dialog is not None

    dialog.reject()

    assert services.signals.get(blocking_flag).resolution is FlagResolution.OPEN


def test_what_was_flagged_keeps_room_in_a_small_window(qtbot: QtBot, window: MainWindow) -> None:
    window.resize(1024, 640)
    window.inbox.show_tab(FLAGS)
    settle(qtbot, window)
    table = window.inbox.flags.table

    assert table.columnWidth(WHAT_COLUMN) >= MIN_WHAT_PX
    assert abs(table.columnWidth(WHAT_COLUMN) - table.columnWidth(TASK_COLUMN)) <= 1  # they share the room


def test_flag_filters_narrow_the_table_and_an_empty_result_says_so(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    flags = window.inbox.flags

    flags.set_filter(flags.severity, "warning")
    settle(qtbot, window)

    assert {flags.model.record(row).flag.severity for row in range(flags.model.rowCount())} == {"warning"}
    flags.set_filter(flags.category, "security")
    settle(qtbot, window)
    assert flags.model.rowCount() == 0
    assert flags.stack.currentWidget() is flags.empty
    assert flags.empty.title.text() == "No flag matches these filters"
    flags.show_all()
    settle(qtbot, window)
    assert flags.model.rowCount() == len(services.inbox.flags())


def test_the_feature_filter_shows_the_flags_raised_on_that_features_tasks(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    flags = window.inbox.flags

    flags.set_filter(flags.feature, "tide-charts")
    settle(qtbot, window)

    shown = {flags.model.record(row).flag.id for row in range(flags.model.rowCount())}
    assert shown == {flag.id for flag in services.inbox.flags(resolution="open", feature="tide-charts")}
    assert shown


# --- live ------------------------------------------------------------------------------------


def test_a_question_asked_in_another_process_appears_in_the_open_inbox_without_losing_the_selection(
    qtbot: QtBot, window: MainWindow, project: Path, services: Services
) -> None:
    window.inbox.show_tab(FLAGS)
    flags = window.inbox.flags
    same_id = flag_about(services, "Two stations share the id 'DOV'").id
    chart = task_id(services, "Mark high and low water on the chart")
    assert flags.select_flag(same_id)
    script = (
        "import sys; from ralph_desk.project import ProjectPaths; "
        "from ralph_desk.services.container import Services; "
        "s = Services.open(ProjectPaths.at(sys.argv[1])); "
        "chart = int(sys.argv[2]); "
        "s.signals.record(chart, 'elsewhere-1', 'ask', question='Label heights in metres or feet?', "
        "options=['metres', 'feet'], preferred='metres', blocking=True); "
        "s.tasks.move(chart, 'needs_input', 'import'); s.close()"
    )

    run_elsewhere("-c", script, str(project), str(chart))

    qtbot.waitUntil(lambda: "Label heights in metres or feet?" in question_texts(window), timeout=WAIT_MS)
    selected = flags.selected()
    assert selected is not None and selected.flag.id == same_id
    assert window.inbox.tabs.currentIndex() == FLAGS
    notifications = controller(window).notifier.sent
    assert notifications == [(f"Task #{chart} needs your answer", "Label heights in metres or feet?")]


def test_an_answer_given_with_the_cli_removes_the_question_from_the_open_inbox(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path
) -> None:
    ask = services.inbox.asks()[0]

    run_elsewhere("-m", "ralph_desk", "answer", str(ask.id), "Metres.", "--root", str(project))

    qtbot.waitUntil(lambda: window.inbox.questions.card(ask.id) is None, timeout=WAIT_MS)
    assert window.inbox.tabs.tabText(QUESTIONS) == "Questions (2)"
