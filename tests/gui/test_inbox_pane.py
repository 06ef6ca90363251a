"""The Inbox pane alone, with its own data: what the human does there is asked for through its signals."""

from __future__ import annotations

from datetime import datetime

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import FlagResolution, TaskStatus, Verb
from ralph_desk.domain.records import Signal
from ralph_desk.gui.models.signals import FlagItem
from ralph_desk.gui.panes.inbox.pane import FLAGS, InboxPane
from ralph_desk.gui.panes.inbox.questions import QuestionItem

ASKED = datetime(2026, 11, 20, 9, 30)


@pytest.fixture
def pane(qtbot: QtBot) -> InboxPane:
    """The pane, on its own."""
    shown = InboxPane()
    qtbot.addWidget(shown)
    return shown


def ask(signal_id: int, task_id: int, question: str, *options: str) -> Signal:
    """An open `ask` of an agent."""
    return Signal(
        signal_id,
        task_id,
        "s-1",
        Verb.ASK,
        ASKED,
        question=question,
        options=options,
        preferred=options[0] if options else None,
        blocking=True,
    )


def flag(
    signal_id: int, task_id: int, what: str, severity: str, resolution: FlagResolution = FlagResolution.OPEN
) -> FlagItem:
    """A flag on a task titled after its id."""
    raised = Signal(
        signal_id,
        task_id,
        "s-2",
        Verb.FLAG,
        ASKED,
        what=what,
        severity=severity,
        category="bug",
        resolution=resolution,
    )
    return FlagItem(raised, f"Task {task_id}", "charts")


def test_an_option_clicked_asks_to_answer_that_question_with_it(qtbot: QtBot, pane: InboxPane) -> None:
    units = ask(41, 7, "Metres or feet?", "metres", "feet")
    pane.questions.show_items([QuestionItem(units, "Units of height", TaskStatus.NEEDS_INPUT)])
    card = pane.questions.card(41)
    assert card is not None
    (feet,) = [b for b in card.option_buttons if b.property("option") == "feet"]

    with qtbot.waitSignal(pane.sig_answer_requested, timeout=1000) as answered:
        qtbot.mouseClick(feet, Qt.MouseButton.LeftButton)

    assert answered.args == [41, "feet"]


def test_an_option_clicked_keeps_the_note_typed_in_the_answer_box(qtbot: QtBot, pane: InboxPane) -> None:
    pane.questions.show_items([QuestionItem(ask(42, 7, "Metres or feet?", "metres", "feet"), "Units", None)])
    card = pane.questions.card(42)
    assert card is not None
    qtbot.keyClicks(card.answer, "Show one decimal too")
    (metres,) = [b for b in card.option_buttons if b.property("option") == "metres"]

    with qtbot.waitSignal(pane.sig_answer_requested, timeout=1000) as answered:
        qtbot.mouseClick(metres, Qt.MouseButton.LeftButton)

    assert answered.args == [42, "metres\n\nShow one decimal too"]


def test_a_typed_answer_is_sent_only_once_there_is_text(qtbot: QtBot, pane: InboxPane) -> None:
    pane.questions.show_items([QuestionItem(ask(5, 2, "Which station first?"), "Stations", None)])
    card = pane.questions.card(5)
    assert card is not None and not card.send.isEnabled()

    qtbot.keyClicks(card.answer, "Dover")
    with qtbot.waitSignal(pane.sig_answer_requested, timeout=1000) as answered:
        qtbot.mouseClick(card.send, Qt.MouseButton.LeftButton)

    assert answered.args == [5, "Dover"]


def test_triage_asks_for_the_selected_flag_and_not_for_its_current_resolution(
    qtbot: QtBot, pane: InboxPane
) -> None:
    flags = pane.flags
    pane.show_tab(FLAGS)
    flags.show_items(
        [flag(3, 9, "Labels overlap", "warning"), flag(8, 4, "Password in plain text", "blocking")], 2
    )
    assert flags.select_flag(8)
    assert not flags.triage_buttons["open"].isEnabled() if "open" in flags.triage_buttons else True

    with qtbot.waitSignal(pane.sig_triage_requested, timeout=1000) as triaged:
        qtbot.mouseClick(flags.triage_buttons["resolved"], Qt.MouseButton.LeftButton)

    assert triaged.args == [8, "resolved"]
    assert "Password in plain text" in flags.detail_what.text()


def test_the_counts_show_in_the_tab_titles_and_the_summary(pane: InboxPane) -> None:
    pane.set_counts(2, 0, 1)

    assert [pane.tabs.tabText(i) for i in range(3)] == ["Questions (2)", "Suggestions", "Flags (1)"]
    assert pane.summary.text() == "2 questions to answer · 0 suggestions to review · 1 open flag"
