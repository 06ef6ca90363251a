"""The Inbox pane's wiring: reads questions, suggestions and flags; carries out the pane's requests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ralph_desk.domain.records import Feature, Signal, Task
from ralph_desk.gui import fmt
from ralph_desk.gui.actions import ActionRunner
from ralph_desk.gui.directory import TaskDirectory, names_of
from ralph_desk.gui.models.signals import FlagItem
from ralph_desk.gui.notify import Notifier
from ralph_desk.gui.panes.inbox.dialogs import EditSuggestionDialog
from ralph_desk.gui.panes.inbox.pane import InboxPane
from ralph_desk.gui.panes.inbox.questions import QuestionItem
from ralph_desk.gui.panes.inbox.suggestions import SuggestionItem
from ralph_desk.services.container import Services

TOPICS = frozenset({"inbox", "signals", "tasks", "features"})

CountsListener = Callable[[int, int, int], None]


class InboxWiring:
    """Connects the Inbox pane to the services; re-reads it when its topics change."""

    topics = TOPICS

    def __init__(
        self,
        pane: InboxPane,
        services: Services,
        runner: ActionRunner,
        directory: TaskDirectory,
        notifier: Notifier | None = None,
        on_counts: CountsListener | None = None,
    ) -> None:
        self.pane = pane
        self.services = services
        self.runner = runner
        self.directory = directory
        self.notifier = notifier
        self.on_counts = on_counts
        self.edit_dialog: EditSuggestionDialog | None = None
        self._features: list[str] = []
        pane.sig_answer_requested.connect(self.answer)
        pane.sig_approve_requested.connect(self.approve)
        pane.sig_edit_requested.connect(self.edit)
        pane.sig_reject_requested.connect(self.reject)
        pane.sig_acknowledge_requested.connect(self.acknowledge)
        pane.sig_triage_requested.connect(self.triage)
        pane.sig_flag_filters_changed.connect(self.refresh_flags)

    # --- reading ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read everything the pane shows."""
        self._refresh_features()
        asks = self.refresh_questions()
        self.refresh_suggestions()
        self.refresh_flags()
        self._publish_counts(len(asks))

    def on_changes(self, topics: set[str]) -> None:
        """Re-read the pane when something it shows changed."""
        if topics & self.topics:
            self.refresh()

    def refresh_questions(self) -> list[Signal]:
        """Read the open questions, with their tasks and what the agents were doing."""
        asks: list[Signal] = self.runner.read(
            "read the questions", lambda: self.services.inbox.asks(open_only=False), []
        )
        items = [self._question(ask) for ask in asks]
        self.pane.questions.show_items(items)
        if self.notifier is not None:
            self.notifier.update_asks(asks)
        return asks

    def _question(self, ask: Signal) -> QuestionItem:
        summary = self.directory.get(ask.task_id)
        doing = self.runner.read(
            "read what the agent was doing",
            lambda: self.services.signals.latest_continuation(ask.task_id),
            None,
        )
        if summary is None:
            task = self.runner.read("read a task", lambda: self.services.tasks.get(ask.task_id), None)
            return QuestionItem(ask, task.title if task else "", task.status if task else None, doing)
        return QuestionItem(ask, summary.title, summary.status, doing)

    def refresh_suggestions(self) -> None:
        """Read the suggestions waiting for review."""
        suggestions: list[Signal] = self.runner.read(
            "read the suggestions", lambda: self.services.inbox.suggestions(pending_only=True), []
        )
        items = []
        for suggestion in suggestions:
            draft = self.directory.get(suggestion.created_task_id) if suggestion.created_task_id else None
            items.append(SuggestionItem(suggestion, self.directory.title(suggestion.task_id), draft))
        self.pane.suggestions.show_items(items)

    def refresh_flags(self) -> None:
        """Read the flags the filters ask for."""
        filters = self.pane.flags.filters()
        flags: list[Signal] = self.runner.read(
            "read the flags",
            lambda: self.services.inbox.flags(
                resolution=filters.resolution,
                severity=filters.severity,
                category=filters.category,
                feature=filters.feature,
            ),
            [],
        )
        items = []
        for flag in flags:
            summary = self.directory.get(flag.task_id)
            items.append(FlagItem(flag, summary.title if summary else "", summary.feature if summary else ""))
        self.pane.flags.show_items(items, self._counts().get("flags", 0))

    def _refresh_features(self) -> None:
        features: list[Feature] = self.runner.read("read the features", self.services.features.list, [])
        names = [feature.name for feature in features]
        if names != self._features:
            self._features = names
            self.pane.flags.set_features(names)

    def _counts(self) -> dict[str, int]:
        return self.runner.read("count the inbox", self.services.inbox.counts, {})

    def _publish_counts(self, questions: int) -> None:
        counts = self._counts()
        suggestions, flags = counts.get("suggestions", 0), counts.get("flags", 0)
        self.pane.set_counts(questions, suggestions, flags)
        if self.on_counts is not None:
            self.on_counts(questions, suggestions, flags)

    # --- acting -------------------------------------------------------------------------------

    def answer(self, ask_id: int, text: str) -> None:
        """Answer a question; its task goes back to pending once no blocking question is left."""
        answered = self.runner.run(
            f"answer question #{ask_id}", lambda: self.services.inbox.answer(ask_id, text)
        )
        if answered is not None:
            self.runner.sig_succeeded.emit(
                f"Answered “{fmt.one_line(answered.question, 60)}” — task #{answered.task_id} gets it next."
            )

    def approve(self, signal_id: int) -> None:
        """Approve a new-task suggestion: its draft task becomes pending."""
        task = self.runner.run("approve the suggestion", lambda: self._approve(signal_id))
        if task is not None:
            self.runner.sig_succeeded.emit(f"Approved task #{task.id}: {task.title}")

    def _approve(self, signal_id: int) -> Task:
        return self.services.inbox.approve(self.services.signals.get(signal_id))

    def edit(self, signal_id: int) -> None:
        """Open the suggested task's fields; approving the dialog saves them and approves the task."""
        task = self.runner.run("open the suggested task", lambda: self._draft(signal_id))
        if task is None:
            return
        features, disciplines = names_of(self.services, self.runner)
        dialog = EditSuggestionDialog(task, features, disciplines, self.pane)
        dialog.accepted.connect(lambda: self._edit_and_approve(task.id, dialog.values()))
        self.edit_dialog = dialog
        dialog.open()

    def _draft(self, signal_id: int) -> Task:
        suggestion = self.services.signals.get(signal_id)
        if suggestion.created_task_id is not None:
            return self.services.tasks.get(suggestion.created_task_id)
        return self.services.inbox.create_suggested_task(signal_id)

    def _edit_and_approve(self, task_id: int, values: dict[str, Any]) -> None:
        task = self.runner.run(
            f"save and approve task #{task_id}",
            lambda: self.services.inbox.edit_and_approve(task_id, **values),
        )
        if task is not None:
            self.runner.sig_succeeded.emit(f"Approved task #{task.id}: {task.title}")

    def reject(self, signal_id: int, reason: str) -> None:
        """Reject a new-task suggestion: its draft task is skipped, the reason kept as a comment."""
        task = self.runner.run(
            "reject the suggestion", lambda: self.services.inbox.reject(self._draft(signal_id).id, reason)
        )
        if task is not None:
            self.runner.sig_succeeded.emit(f"Rejected task #{task.id}: {task.title}")

    def acknowledge(self, signal_id: int) -> None:
        """Mark a suggestion that is not a new task as seen."""
        self.runner.run(
            "acknowledge the suggestion",
            lambda: self.services.inbox.acknowledge_suggestion(signal_id),
            done="Suggestion acknowledged.",
        )

    def triage(self, flag_id: int, resolution: str) -> None:
        """Settle a flag; `convert` makes a pending task of it."""
        result = self.runner.run(
            f"triage flag #{flag_id}", lambda: self.services.inbox.triage(flag_id, resolution)
        )
        if result is None:
            return
        if result.task is not None:
            self.runner.sig_succeeded.emit(
                f"Flag #{flag_id} became task #{result.task.id}: {result.task.title}"
            )
        else:
            self.runner.sig_succeeded.emit(f"Flag #{flag_id} {resolution}.")
