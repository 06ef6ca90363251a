"""The Inbox pane's wiring: reads questions, suggestions and flags; carries out the pane's requests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import QApplication
from shiboken6 import isValid

from ralph_desk.domain.enums import FlagResolution, Priority, Severity, TaskStatus, Triage, Verb
from ralph_desk.domain.listing import errors_of
from ralph_desk.domain.records import Change, Signal, Task
from ralph_desk.gui import fmt
from ralph_desk.gui.backend import FailedTask, Question, Services, TriageResult, title_from
from ralph_desk.gui.dialogs.task_dialog import TaskDialog, TaskDraft
from ralph_desk.gui.directory import TaskDirectory
from ralph_desk.gui.models.signals import FlagItem
from ralph_desk.gui.notify import Notifier
from ralph_desk.gui.pacer import ReadPacer
from ralph_desk.gui.panes.inbox.answered import AnsweredItem
from ralph_desk.gui.panes.inbox.dialogs import EditSuggestionDialog
from ralph_desk.gui.panes.inbox.flags import FlagFilters
from ralph_desk.gui.panes.inbox.pane import InboxPane
from ralph_desk.gui.panes.inbox.questions import QuestionItem
from ralph_desk.gui.panes.inbox.suggestions import SuggestionItem
from ralph_desk.gui.undo import PendingActions
from ralph_desk.gui.widgets.card_list import CardList
from ralph_desk.gui.worker import Worker

TOPICS = frozenset({"inbox", "signals", "tasks", "features"})

SIGNAL_TOPICS = frozenset({"signals", "inbox"})
MAX_SINGLE_READS = 50
ANSWERED_SHOWN = 50
READ_SPACING_MS = 500
SIGNAL_READ_SPACING_MS = 250
"""Changed flags are put in place at most four times a second, however fast agents flag."""

CountsListener = Callable[[int, int, int, int], None]


def _matches(flag: Signal, filters: FlagFilters) -> bool:
    """Whether the flags table, with these filters (and no feature filter), shows this flag."""
    return filters.feature is None and all(
        wanted is None or value == wanted
        for wanted, value in (
            (filters.resolution, flag.resolution),
            (filters.severity, flag.severity),
            (filters.category, flag.category),
        )
    )


def _open_blocking(flag: Signal) -> bool:
    return flag.severity == Severity.BLOCKING.value and flag.resolution is FlagResolution.OPEN


@dataclass(frozen=True)
class _InboxRead:
    """What one read of the inbox brings back from the worker."""

    features: list[str]
    questions: list[Question]
    suggestions: list[Signal]
    flags: list[Signal]
    counts: dict[str, int]
    failed: list[FailedTask]
    blocking_flags: list[Signal]
    answered: list[Signal]


class InboxWiring:
    """Connects the Inbox pane to the services; re-reads it when its topics change."""

    topics = TOPICS

    def __init__(
        self,
        pane: InboxPane,
        services: Services,
        worker: Worker,
        directory: TaskDirectory,
        notifier: Notifier | None = None,
        on_counts: CountsListener | None = None,
        pending: PendingActions | None = None,
    ) -> None:
        self.pane = pane
        self.services = services
        self.worker = worker
        self.directory = directory
        self.notifier = notifier
        self.on_counts = on_counts
        self.pending = pending
        """Where decisions wait a few seconds for an Undo (None: they are done at once)."""
        self.edit_dialog: EditSuggestionDialog | None = None
        self.task_dialog: TaskDialog | None = None
        self._features: list[str] = []
        self.reads = ReadPacer(worker, self._start_read, READ_SPACING_MS)
        self.signal_reads = ReadPacer(worker, self._start_signal_read, SIGNAL_READ_SPACING_MS)
        self._touched: set[int] = set()
        """Signals changed since the last read of changed signals began."""
        pane.sig_answer_requested.connect(self.answer)
        pane.sig_approve_requested.connect(self.approve)
        pane.sig_edit_requested.connect(self.edit)
        pane.sig_reject_requested.connect(self.reject)
        pane.sig_acknowledge_requested.connect(self.acknowledge)
        pane.sig_triage_requested.connect(self.triage)
        pane.sig_flag_filters_changed.connect(self.refresh_flags)
        pane.sig_retry_requested.connect(self.retry)
        pane.sig_skip_requested.connect(self.skip)
        self._failed_count = 0

    # --- reading ------------------------------------------------------------------------------

    @property
    def reading(self) -> bool:
        """Whether a read of the whole pane is under way or due."""
        return self.reads.waiting

    def refresh(self, now: bool = False) -> None:
        """Read everything the pane shows, on the worker (one read at a time, spaced out unless `now`)."""
        self.reads.request(now)

    def _start_read(self) -> None:
        filters = self.pane.flags.filters()
        self.worker.submit(
            "read the inbox", lambda: self._read(filters), self.reads.then(self._show), self._read_failed
        )

    def on_changes(self, changes: list[Change]) -> None:
        """Re-read what the changes touched: only the flags when only flags changed, else the pane."""
        topics = {change.topic for change in changes}
        if not topics & self.topics:
            return
        touched_tasks = {int(i) for change in changes if change.topic == "tasks" for i in change.ids}
        if (
            topics <= {"tasks"}
            and touched_tasks
            and not touched_tasks & self._shown_tasks()
            and not any(self._failed(task_id) for task_id in touched_tasks)
        ):
            return  # no task the inbox shows changed, and none failed
        touched = {int(i) for change in changes if change.topic in SIGNAL_TOPICS for i in change.ids}
        if (
            self.reading
            or (topics & self.topics) - SIGNAL_TOPICS - {"tasks"}
            or not touched
            or len(touched) > MAX_SINGLE_READS
        ):
            self.refresh()
            return
        if touched_tasks & self._shown_tasks():
            self.refresh()
            return
        self._touched |= touched
        self.signal_reads.request()

    def _start_signal_read(self) -> None:
        touched, self._touched = self._touched, set()
        if self.reading or len(touched) > MAX_SINGLE_READS:
            self.signal_reads.finished()
            self.refresh()  # the whole pane is read anyway: it shows these too
            return
        filters = self.pane.flags.filters()
        self.worker.submit(
            "read the changed signals",
            lambda: (self.services.inbox.signals(touched), self.services.inbox.counts()),
            self.signal_reads.then(lambda read: self._merge(touched, filters, *read)),
            lambda: self._signal_read_failed(touched),
        )

    def _signal_read_failed(self, touched: set[int]) -> None:
        self._touched |= touched  # read with the next change
        self.signal_reads.finished()

    def _failed(self, task_id: int) -> bool:
        summary = self.directory.get(task_id)
        return summary is not None and summary.status is TaskStatus.FAILED

    def _shown_tasks(self) -> set[int]:
        return (
            {item.flag.task_id for item in self.pane.flags.model.items}
            | {card.item.task.id for card in self.pane.failed.cards.values()}
            | {card.item.ask.task_id for card in self.pane.questions.cards.values()}
            | {card.item.suggestion.task_id for card in self.pane.suggestions.cards.values()}
        )

    def _merge(
        self, touched: set[int], filters: FlagFilters, signals: list[Signal], counts: dict[str, int]
    ) -> None:
        """Put changed flags in place; anything else the inbox shows changed: read the pane again."""
        if any(signal.verb is not Verb.FLAG for signal in signals) or filters != self.pane.flags.filters():
            self.refresh()
            return
        if self.notifier is not None:
            self.notifier.update_flags([signal for signal in signals if _open_blocking(signal)])
        shown = [signal for signal in signals if _matches(signal, filters)]
        flags, open_count = self.pane.flags, counts.get("flags", 0)
        flags.remove_flags([key for key in touched if key not in {signal.id for signal in shown}], open_count)
        flags.update_items([self._flag(flag) for flag in shown], open_count)
        self._publish(counts)

    def _publish(self, counts: dict[str, int]) -> None:
        questions, suggestions, flags = (counts.get(key, 0) for key in ("asks", "suggestions", "flags"))
        self.pane.set_counts(questions, suggestions, flags, self._failed_count)
        if self.on_counts is not None:
            self.on_counts(questions, suggestions, flags, self._failed_count)

    def refresh_flags(self) -> None:
        """Read the flags again (the filters changed)."""
        self.refresh(now=True)

    def _read(self, filters: FlagFilters) -> _InboxRead:
        inbox = self.services.inbox
        return _InboxRead(
            features=[feature.name for feature in self.services.features.list()],
            questions=inbox.questions(),
            suggestions=inbox.suggestions(pending_only=True),
            flags=inbox.flags(
                resolution=filters.resolution,
                severity=filters.severity,
                category=filters.category,
                feature=filters.feature,
            ),
            counts=inbox.counts(),
            failed=inbox.failed(),
            blocking_flags=inbox.flags(resolution=FlagResolution.OPEN, severity=Severity.BLOCKING),
            answered=inbox.answered(ANSWERED_SHOWN),
        )

    def _read_failed(self) -> None:
        self.reads.finished()

    def _show(self, read: _InboxRead) -> None:
        lists = (read.questions, read.suggestions, read.flags, read.failed, read.answered)
        self.worker.left_out("read the inbox", [error for items in lists for error in errors_of(items)])
        if read.features != self._features:
            self._features = read.features
            self.pane.flags.set_features(read.features)
        self.pane.questions.show_items([self._question(question) for question in read.questions])
        self.pane.answered.show_items(
            [AnsweredItem(ask, self.directory.title(ask.task_id)) for ask in read.answered]
        )
        if self.notifier is not None:
            self.notifier.update_asks([question.ask for question in read.questions])
            self.notifier.update_flags(read.blocking_flags)
            self.notifier.update_failed(
                [(item.task.id, item.task.title, item.reason) for item in read.failed]
            )
        self._failed_count = len(read.failed)
        self.pane.failed.show_items(read.failed)
        self.pane.suggestions.show_items([self._suggestion(suggestion) for suggestion in read.suggestions])
        self.pane.flags.show_items([self._flag(flag) for flag in read.flags], read.counts.get("flags", 0))
        self._publish(read.counts)

    def _question(self, question: Question) -> QuestionItem:
        summary = self.directory.get(question.ask.task_id)
        return QuestionItem(
            question.ask,
            summary.title if summary else "",
            summary.status if summary else None,
            question.doing,
        )

    def _suggestion(self, suggestion: Signal) -> SuggestionItem:
        draft = self.directory.get(suggestion.created_task_id) if suggestion.created_task_id else None
        return SuggestionItem(suggestion, self.directory.title(suggestion.task_id), draft)

    def _flag(self, flag: Signal) -> FlagItem:
        summary = self.directory.get(flag.task_id)
        return FlagItem(flag, summary.title if summary else "", summary.feature if summary else "")

    # --- acting (on the worker; the change feed brings the result into the pane) ------------

    def _decide(
        self, text: str, commit: Callable[[], None], view: CardList[Any, Any] | None = None, key: int = 0
    ) -> None:
        """Do a decision now, or hold it for Undo with its card greyed out (the keyboard moves on)."""
        if self.pending is None:
            commit()
            return
        shown = view.card(key) if view is not None else None
        if view is not None and shown is not None:
            focus = QApplication.focusWidget()
            index = view.order.index(key)
            if focus is not None and shown.isAncestorOf(focus) and len(view.order) > 1:
                view.card_at(index + 1 if index + 1 < len(view.order) else index - 1).focus_input()
            shown.setEnabled(False)

        def restore() -> None:
            if shown is not None and isValid(shown):
                shown.setEnabled(True)

        self.pending.hold(text, commit, restore)

    def _succeeded(self, text: str) -> None:
        """Confirm a decision in the message bar, unless the undo notice already said it."""
        if self.pending is None:
            self.worker.succeed(text)

    def answer(self, ask_id: int, text: str) -> None:
        """Answer a question; its task goes back to pending once no blocking question is left."""
        self._decide(
            f"Answered question #{ask_id}",
            lambda: self._answer(ask_id, text),
            self.pane.questions,
            ask_id,
        )

    def _answer(self, ask_id: int, text: str) -> None:
        self.worker.submit(
            f"answer question #{ask_id}",
            lambda: self.services.inbox.answer(ask_id, text),
            lambda answered: self._succeeded(
                f"Answered “{fmt.one_line(answered.question, 60)}” — task #{answered.task_id} gets it next."
            ),
            keep=True,
        )

    def approve(self, signal_id: int) -> None:
        """Approve a new-task suggestion: its draft task becomes pending."""
        self._decide(
            "Approved the suggested task",
            lambda: self.worker.submit(
                "approve the suggestion", lambda: self._approve(signal_id), self._approved, keep=True
            ),
            self.pane.suggestions,
            signal_id,
        )

    def _approve(self, signal_id: int) -> Task:
        return self.services.inbox.approve(self.services.signals.get(signal_id))

    def _approved(self, task: Task) -> None:
        self._succeeded(f"Approved task #{task.id}: {task.title}")

    def edit(self, signal_id: int) -> None:
        """Open the suggested task's fields; approving the dialog saves them and approves the task."""
        self.worker.submit(
            "open the suggested task",
            lambda: self._draft_and_names(signal_id),
            lambda read: self._open_editor(signal_id, read),
        )

    def _draft_and_names(self, signal_id: int) -> tuple[Task, list[str], list[str]]:
        features = [feature.name for feature in self.services.features.list()]
        disciplines = [discipline.name for discipline in self.services.disciplines.list()]
        return self._draft(signal_id), features, disciplines

    def _open_editor(self, signal_id: int, read: tuple[Task, list[str], list[str]]) -> None:
        task, features, disciplines = read
        dialog = EditSuggestionDialog(task, features, disciplines, self.pane)
        dialog.accepted.connect(lambda: self._edit_and_approve(signal_id, task.id, dialog.values()))
        self.edit_dialog = dialog
        dialog.open()

    def _draft(self, signal_id: int) -> Task:
        suggestion = self.services.signals.get(signal_id)
        if suggestion.created_task_id is not None:
            return self.services.tasks.get(suggestion.created_task_id)
        return self.services.inbox.create_suggested_task(signal_id)

    def _edit_and_approve(self, signal_id: int, task_id: int, values: dict[str, Any]) -> None:
        """Save the edited draft and approve it, held for Undo like an approval."""
        self._decide(
            f"Approved task #{task_id} as edited",
            lambda: self.worker.submit(
                f"save and approve task #{task_id}",
                lambda: self.services.inbox.edit_and_approve(task_id, **values),
                self._approved,
                keep=True,
            ),
            self.pane.suggestions,
            signal_id,
        )

    def reject(self, signal_id: int, reason: str) -> None:
        """Reject a new-task suggestion: its draft task is skipped, the reason kept as a comment."""
        self._decide(
            "Rejected the suggested task",
            lambda: self.worker.submit(
                "reject the suggestion",
                lambda: self.services.inbox.reject(self._draft(signal_id).id, reason),
                lambda task: self._succeeded(f"Rejected task #{task.id}: {task.title}"),
                keep=True,
            ),
            self.pane.suggestions,
            signal_id,
        )

    def acknowledge(self, signal_id: int) -> None:
        """Mark a suggestion that is not a new task as seen."""
        self.worker.submit(
            "acknowledge the suggestion",
            lambda: self.services.inbox.acknowledge_suggestion(signal_id),
            lambda _: self.worker.succeed("Suggestion acknowledged."),
            keep=True,
        )

    def triage(self, flag_id: int, resolution: str) -> None:
        """Settle a flag; `convert` opens the task dialog first (pending or draft, chosen there)."""
        if resolution == "convert":
            self.convert(flag_id)
            return
        self._decide(
            f"Flag #{flag_id} {resolution.replace('_', ' ')}",
            lambda: self.worker.submit(
                f"triage flag #{flag_id}",
                lambda: self.services.inbox.triage(flag_id, Triage(resolution)),
                lambda result: self._triaged(flag_id, resolution, result),
                keep=True,
            ),
        )

    def retry(self, task_id: int, note: str) -> None:
        """Queue a failed task again, with the note as a comment for its next session."""
        self.worker.submit(
            f"retry task #{task_id}",
            lambda: self.services.inbox.retry(task_id, note),
            lambda task: self.worker.succeed(f"Task #{task.id} is pending again: {task.title}"),
            keep=True,
        )

    def skip(self, task_id: int) -> None:
        """Skip a failed task."""
        self.worker.submit(
            f"skip task #{task_id}",
            lambda: self.services.inbox.skip(task_id),
            lambda task: self.worker.succeed(f"Skipped task #{task.id}: {task.title}"),
            keep=True,
        )

    def convert(self, flag_id: int) -> None:
        """Open the task dialog filled from the flag; Create makes the task and converts the flag."""
        item = next((item for item in self.pane.flags.model.items if item.flag.id == flag_id), None)
        if item is None:
            self.worker.fail(f"Flag #{flag_id} is not shown (any more).")
            return
        flag = item.flag
        task = self.directory.get(flag.task_id)
        start = TaskDraft(
            title=title_from(flag.what or ""),
            description=f"{flag.what or ''}\n\nFlagged on task #{flag.task_id} ({item.task_title}) — "
            f"severity: {flag.severity}, category: {flag.category}.",
            feature=task.feature if task else "",
            discipline=task.discipline if task else "",
            priority=Priority.HIGH if flag.severity == Severity.BLOCKING.value else Priority.MEDIUM,
        )
        dialog = TaskDialog(
            f"Make a task of flag #{flag_id}",
            "Create task",
            self.directory.features or self._features,
            self.directory.disciplines,
            start,
            self.pane,
        )
        dialog.accepted.connect(lambda: self._convert(flag_id, dialog.values()))
        self.task_dialog = dialog
        dialog.open()

    def _convert(self, flag_id: int, values: dict[str, Any]) -> None:
        """Make the task and convert the flag, held for Undo like a triage."""
        self._decide(
            f"Flag #{flag_id} becomes a task: {fmt.one_line(str(values.get('title') or ''), 60)}",
            lambda: self.worker.submit(
                f"make a task of flag #{flag_id}",
                lambda: self.services.inbox.convert_flag(flag_id, **values),
                lambda result: self._triaged(flag_id, "convert", result),
                keep=True,
            ),
        )

    def _triaged(self, flag_id: int, resolution: str, result: TriageResult) -> None:
        if result.task is not None:
            self._succeeded(f"Flag #{flag_id} became task #{result.task.id}: {result.task.title}")
        else:
            self._succeeded(f"Flag #{flag_id} {resolution}.")
