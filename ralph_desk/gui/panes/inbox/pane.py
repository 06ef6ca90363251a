"""The Inbox pane: tabs with live counts — Questions, Suggestions, Flags, Reviews, Failed tasks."""

from __future__ import annotations

from PySide6.QtCore import QSize, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QAbstractButton, QTabWidget, QWidget

from ralph_desk.gui import icons
from ralph_desk.gui.panes.inbox.answered import AnsweredView
from ralph_desk.gui.panes.inbox.failed import FailedView
from ralph_desk.gui.panes.inbox.flags import FlagsView
from ralph_desk.gui.panes.inbox.questions import QuestionsView
from ralph_desk.gui.panes.inbox.reviews.view import ReviewsView
from ralph_desk.gui.panes.inbox.suggestions import SuggestionsView
from ralph_desk.gui.widgets.common import label
from ralph_desk.gui.widgets.layout import pane_layout

QUESTIONS, SUGGESTIONS, FLAGS, REVIEWS, FAILED, ANSWERED = range(6)
TAB_TITLES = ("Questions", "Suggestions", "Flags", "Reviews", "Failed", "Answered")
TAB_ICONS = ("question", "suggestion", "flag", "merge", "error", "approve")
COUNTED_TABS = (QUESTIONS, SUGGESTIONS, FLAGS, FAILED)
WORK_ORDER = (QUESTIONS, SUGGESTIONS, FLAGS, REVIEWS, FAILED)
"""The tabs that hold work for the person, in the order the Inbox opens on them."""


class InboxPane(QWidget):
    """What waits for the human; its widgets only show and ask, the wiring does the work."""

    sig_answer_requested = Signal(int, str)
    """Answer the question with this id with this text."""
    sig_approve_requested = Signal(int)
    """Approve the new-task suggestion with this signal id."""
    sig_edit_requested = Signal(int)
    """Edit the task suggested by this signal id, then approve it."""
    sig_reject_requested = Signal(int, str)
    """Reject the suggestion with this signal id, for this reason."""
    sig_acknowledge_requested = Signal(int)
    """Mark the suggestion with this signal id as seen."""
    sig_triage_requested = Signal(int, str)
    """Set the resolution of the flag with this id."""
    sig_flag_filters_changed = Signal()
    """The flag filters changed."""
    sig_open_task_requested = Signal(int)
    """Show the task with this id in the Tasks pane."""
    sig_retry_requested = Signal(int, str)
    """Queue the failed task with this id again, with this note for its agent."""
    sig_skip_requested = Signal(int)
    """Skip the failed task with this id."""
    sig_open_transcript_requested = Signal(str)
    """Show this session transcript (a path relative to the project)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.questions = QuestionsView()
        self.suggestions = SuggestionsView()
        self.flags = FlagsView()
        self.reviews = ReviewsView()
        self.failed = FailedView()
        self.answered = AnsweredView()
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.setIconSize(QSize(16, 16))
        views: tuple[QWidget, ...] = (
            self.questions,
            self.suggestions,
            self.flags,
            self.reviews,
            self.failed,
            self.answered,
        )
        for view, title, icon_name in zip(views, TAB_TITLES, TAB_ICONS, strict=True):
            self.tabs.addTab(view, icons.icon(icon_name), title)
        self.tabs.setTabToolTip(QUESTIONS, "Questions agents asked: answer them so their tasks can go on")
        self.tabs.setTabToolTip(SUGGESTIONS, "Tasks and changes agents propose: approve, edit or reject")
        self.tabs.setTabToolTip(FLAGS, "Problems agents noticed: triage them")
        self.tabs.setTabToolTip(REVIEWS, "Finished work: read the diff, then merge, send back or discard")
        self.tabs.setTabToolTip(FAILED, "Tasks the loop gave up on: retry with a note, edit or skip")
        self.tabs.setTabToolTip(
            ANSWERED,
            "Questions answered, the latest first, with the answers and who gave them (desk or device)",
        )
        self.heading = label("Inbox", name="heading")
        self.summary = label(name="muted")
        pane_layout(self, self.heading, self.summary, self.tabs, spacing=6)
        self.counts = (0, 0, 0, 0)
        self.review_count = 0
        self.tab_chosen = False
        """The tab shown was chosen (by the person, a link, or once for them): not changed under them."""
        self.tabs.tabBarClicked.connect(self._on_tab_clicked)
        self._connect()

    def _connect(self) -> None:
        self.questions.sig_answer_requested.connect(self.sig_answer_requested)
        self.suggestions.sig_approve_requested.connect(self.sig_approve_requested)
        self.suggestions.sig_edit_requested.connect(self.sig_edit_requested)
        self.suggestions.sig_reject_requested.connect(self.sig_reject_requested)
        self.suggestions.sig_acknowledge_requested.connect(self.sig_acknowledge_requested)
        self.flags.sig_triage_requested.connect(self.sig_triage_requested)
        self.flags.sig_filters_changed.connect(self.sig_flag_filters_changed)
        self.failed.sig_retry_requested.connect(self.sig_retry_requested)
        self.failed.sig_skip_requested.connect(self.sig_skip_requested)
        self.failed.sig_open_transcript_requested.connect(self.sig_open_transcript_requested)
        for view in (self.questions, self.suggestions, self.flags, self.reviews, self.failed, self.answered):
            view.sig_open_task_requested.connect(self.sig_open_task_requested)

    def set_counts(self, questions: int, suggestions: int, flags: int, failed: int = 0) -> None:
        """Show how many questions, pending suggestions, open flags and failed tasks wait."""
        self.counts = (questions, suggestions, flags, failed)
        for index, count in zip(COUNTED_TABS, self.counts, strict=True):
            title = TAB_TITLES[index]
            self.tabs.setTabText(index, f"{title} ({count})" if count else title)
        total = sum(self.counts) + self.review_count
        reviews = self.review_count
        if self.isVisible():
            self.open_on_work()
        if total:
            self.summary.setText(
                f"{questions} question{'s' if questions != 1 else ''} to answer · "
                f"{suggestions} suggestion{'s' if suggestions != 1 else ''} to review · "
                f"{flags} open flag{'s' if flags != 1 else ''}"
                + (f" · {failed} failed task{'s' if failed != 1 else ''}" if failed else "")
                + (f" · {reviews} task{'s' if reviews != 1 else ''} in review" if reviews else "")
            )
        else:
            self.summary.setText(
                "Nothing waits for you. Agents' questions, suggestions and flags arrive here."
            )

    def waiting_in(self, index: int) -> int:
        """How many items wait in a tab (0 for the Answered tab)."""
        if index == REVIEWS:
            return self.review_count
        return self.counts[COUNTED_TABS.index(index)] if index in COUNTED_TABS else 0

    def open_on_work(self) -> None:
        """Show the first tab that holds waiting work, unless the tab shown holds some or was chosen.

        Once per opening of the pane: a tab emptied by the person's own decisions stays shown.
        """
        if self.tab_chosen:
            return
        found = next((index for index in WORK_ORDER if self.waiting_in(index)), None)
        if found is None:
            return
        self.tab_chosen = True
        if not self.waiting_in(self.tabs.currentIndex()):
            self.tabs.setCurrentIndex(found)

    def showEvent(self, event: QShowEvent) -> None:
        """Opened again: on the tab with waiting work (the person's last choice was for the last visit)."""
        if not event.spontaneous():
            self.tab_chosen = False
            self.open_on_work()
        super().showEvent(event)

    def _on_tab_clicked(self, index: int) -> None:
        if index >= 0:
            self.tab_chosen = True

    def set_review_count(self, count: int) -> None:
        """Show how many tasks wait in review."""
        self.review_count = count
        self.tabs.setTabText(REVIEWS, f"{TAB_TITLES[REVIEWS]} ({count})" if count else TAB_TITLES[REVIEWS])
        self.set_counts(*self.counts)

    def step(self, delta: int) -> None:
        """Move to the next (1) or previous (-1) item of the tab shown."""
        index = self.tabs.currentIndex()
        if index == FLAGS:
            self.flags.step(delta)
        elif index == QUESTIONS:
            self.questions.step(delta)
        elif index == SUGGESTIONS:
            self.suggestions.step(delta)
        elif index == FAILED:
            self.failed.step(delta)
        elif index == REVIEWS:
            self.reviews.step(delta)

    def act(self, action: str) -> bool:
        """Do `action` (answer, approve, reject, resolve, dismiss) on the current item; whether it applied."""
        index = self.tabs.currentIndex()
        target: QAbstractButton | None = None
        if action == "answer" and index == QUESTIONS:
            card = self.questions.current_card()
            if card is not None:
                card.focus_input()
                return True
        elif action in ("approve", "reject") and index == SUGGESTIONS:
            suggestion = self.suggestions.current_card()
            if suggestion is not None:
                target = suggestion.approve if action == "approve" else suggestion.reject_button
        elif action in ("resolve", "dismiss") and index == FLAGS and self.flags.selected() is not None:
            target = self.flags.triage_buttons["resolved" if action == "resolve" else "dismissed"]
        if target is None or not target.isVisible() or not target.isEnabled():
            return False
        target.click()
        return True

    def show_tab(self, index: int) -> None:
        """Switch to a tab: QUESTIONS, SUGGESTIONS, FLAGS, REVIEWS or FAILED (kept while the pane is open)."""
        self.tab_chosen = True
        self.tabs.setCurrentIndex(index)

    def next_tab(self, delta: int) -> None:
        """Show the tab `delta` places on, round the end (Ctrl+Tab, Ctrl+Shift+Tab)."""
        self.show_tab((self.tabs.currentIndex() + delta) % self.tabs.count())

    def refresh_style(self) -> None:
        """Redraw the tab icons in the current palette."""
        for index, icon_name in enumerate(TAB_ICONS):
            self.tabs.setTabIcon(index, icons.icon(icon_name))
