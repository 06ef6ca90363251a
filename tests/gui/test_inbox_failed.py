"""Failed tasks in the Inbox: the reason, and retry with a note, edit and skip, over the demo database."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.pane import FAILED
from ralph_desk.services.container import Services
from tests.gui.conftest import settle
from tests.gui.test_inbox import run_elsewhere
from tests.support.demo_rows import task_id

WAIT_MS = 3000
KEYBOARD_TASK = "Keyboard navigation along the tide curve"


def failed_ids(window: MainWindow) -> list[int]:
    return [int(str(key)) for key in window.inbox.failed.order]


def test_a_failed_task_is_in_the_inbox_with_why_it_failed_and_counts_as_waiting(
    window: MainWindow, services: Services
) -> None:
    failed = task_id(services, KEYBOARD_TASK)

    card = window.inbox.failed.card(failed)

    assert card is not None
    assert "stuck 3 times" in card.reason.text()
    assert "last session ended with stuck" in card.reason.text()
    assert "no accessible cursor in the chart library" in card.reason.text()
    assert window.inbox.tabs.tabText(FAILED) == "Failed (1)"
    assert "1 failed task" in window.inbox.summary.text()
    waiting = sum(window.inbox.counts)
    assert window.windowTitle().startswith(f"{window.project_title} ({waiting})")


def test_retry_with_a_note_queues_the_task_again_with_the_note_for_its_agent(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    failed = task_id(services, KEYBOARD_TASK)
    window.show_pane("inbox")
    window.inbox.show_tab(FAILED)
    card = window.inbox.failed.card(failed)
    assert card is not None

    qtbot.keyClicks(card.note, "Use the SVG layer for the cursor instead.")
    settle(qtbot, window)
    qtbot.mouseClick(card.retry, Qt.MouseButton.LeftButton)
    settle(qtbot, window)

    qtbot.waitUntil(lambda: failed not in failed_ids(window), timeout=WAIT_MS)
    task = services.tasks.get(failed)
    assert task.status is TaskStatus.PENDING
    assert task.stuck_count == 0
    assert task.comments[-1].body == "Retry: Use the SVG layer for the cursor instead."
    assert window.inbox.tabs.tabText(FAILED) == "Failed"


def test_skip_gives_up_on_the_failed_task_and_edit_opens_it_in_the_tasks_pane(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    failed = task_id(services, KEYBOARD_TASK)
    card = window.inbox.failed.card(failed)
    assert card is not None

    qtbot.mouseClick(card.edit, Qt.MouseButton.LeftButton)
    settle(qtbot, window)
    assert window.current_pane == "tasks"
    assert window.tasks.selected_id() == failed

    window.show_pane("inbox")
    qtbot.mouseClick(card.skip, Qt.MouseButton.LeftButton)
    settle(qtbot, window)

    qtbot.waitUntil(lambda: failed not in failed_ids(window), timeout=WAIT_MS)
    assert services.tasks.get(failed).status is TaskStatus.SKIPPED


def test_a_task_that_fails_in_another_process_arrives_in_the_inbox_and_is_notified(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path
) -> None:
    pending = task_id(services, "Alert settings page")
    script = (
        "import sys; from ralph_desk.project import ProjectPaths; "
        "from ralph_desk.services.container import Services; "
        "s = Services.open(ProjectPaths.at(sys.argv[1])); t = int(sys.argv[2]); "
        "s.signals.record(t, None, 'stuck', reason='The alert API needs a key nobody gave me.'"
        "); "
        "s.tasks.move(t, 'failed', 'import'); s.close()"
    )

    run_elsewhere("-c", script, str(project), str(pending))

    qtbot.waitUntil(lambda: pending in failed_ids(window), timeout=WAIT_MS)
    card = window.inbox.failed.card(pending)
    assert card is not None and "The alert API needs a key nobody gave me." in card.reason.text()
    settle(qtbot, window)
    notifier = window.controller.notifier if window.controller else None
    assert notifier is not None
    ((title, why),) = notifier.sent
    assert title == f"Task #{pending} failed: Alert settings page"
    assert "The alert API needs a key nobody gave me." in why


def test_the_failed_tasks_last_session_opens_in_the_windows_transcript_view(
    qtbot: QtBot, window: MainWindow, services: Services, opened_files: list[str]
) -> None:
    failed = task_id(services, KEYBOARD_TASK)
    card = window.inbox.failed.card(failed)
    assert card is not None and card.item.session is not None
    recorded = card.item.session.transcript_path
    assert recorded is not None

    card.task.linkActivated.emit(f"transcript:{recorded}")
    settle(qtbot, window)

    assert window.current_pane == "loop"
    assert window.loop.stream.title.text().startswith(f"Past session — #{failed} ")
    assert window.loop.stream.model.lines
    assert opened_files == []
