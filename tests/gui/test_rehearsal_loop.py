"""The demo's rehearsal loop, started from the window: the whole loop works in the first minute, for free."""

from __future__ import annotations

from pathlib import Path

import pytest
import qasync
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import SessionOutcome, TaskStatus
from ralph_desk.domain.records import AgentSession
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.loop.state import Phase
from ralph_desk.services.container import Services
from tests.gui.test_loop_pane import embedded, finish, loop_window, qt_loop, wiring

__all__ = ["embedded", "loop_window", "qt_loop"]

REHEARSAL_MS = 60_000


@pytest.fixture
def no_agent_programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH on which no agent program (claude, codex, node…) can be found."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("RALPH_CLAUDE_BIN", raising=False)


@pytest.mark.slow
def test_the_demos_rehearsal_brings_a_question_to_the_inbox_and_finishes_a_task_within_a_minute(
    qtbot: QtBot,
    no_agent_programs: None,
    qt_loop: qasync.QEventLoop,
    loop_window: MainWindow,
    services: Services,
) -> None:
    pane = loop_window.loop
    assert pane.settings.agent.currentData() == "rehearsal"
    questions_before = loop_window.inbox.counts[0]
    done_before = {task.id for task in services.tasks.list(status=TaskStatus.DONE.value)}

    pane.start.click()

    def finished() -> list[AgentSession]:
        return [s for s in services.sessions.list(limit=5) if s.outcome == SessionOutcome.DONE.value]

    qtbot.waitUntil(lambda: bool(finished()), timeout=REHEARSAL_MS)
    qtbot.waitUntil(lambda: loop_window.inbox.counts[0] > questions_before, timeout=REHEARSAL_MS)
    assert all(s.agent == "rehearsal" and s.cost_usd == 0 for s in finished())
    assert {task.id for task in services.tasks.list(status=TaskStatus.DONE.value)} - done_before
    assert pane.phase is not Phase.FAILED
    assert not loop_window.message_bar.isVisible() or loop_window.message_bar.level != "error"
    finish(qtbot, qt_loop, wiring(loop_window).shutdown(), timeout=REHEARSAL_MS)
