"""The Tasks pane's wiring: loads summaries in one query, re-reads only touched tasks, saves edits."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.records import Change, Task, TaskSummary
from ralph_desk.gui.actions import ActionRunner
from ralph_desk.gui.dialogs.confirm import ConfirmBox, confirm
from ralph_desk.gui.dialogs.task_dialog import TaskDialog, TaskDraft
from ralph_desk.gui.directory import TaskDirectory, names_of
from ralph_desk.gui.panes.tasks.detail import TaskDetailData
from ralph_desk.gui.panes.tasks.pane import TasksPane
from ralph_desk.services.container import Services
from ralph_desk.services.errors import NotFoundError
from ralph_desk.store.mapping import summary_of

log = logging.getLogger("ralph_desk.gui")

AUTHOR = "human"
# Above this many touched tasks one full read is cheaper than one read per task.
MAX_SINGLE_READS = 200
DETAIL_TOPICS = frozenset({"tasks", "comments", "signals", "sessions", "dependencies", "inbox"})
CHOICE_TOPICS = frozenset({"features", "disciplines"})

TranscriptOpener = Callable[[str], None]


class TasksWiring:
    """Connects the Tasks pane to the services and keeps the shared task directory current."""

    topics = frozenset({"tasks"}) | DETAIL_TOPICS | CHOICE_TOPICS

    def __init__(
        self,
        pane: TasksPane,
        services: Services,
        runner: ActionRunner,
        directory: TaskDirectory,
        open_transcript: TranscriptOpener | None = None,
    ) -> None:
        self.pane = pane
        self.services = services
        self.runner = runner
        self.directory = directory
        self.open_transcript = open_transcript
        self.read_seconds = 0.0
        self.load_seconds = 0.0
        detail = pane.detail
        pane.sig_task_selected.connect(self.show_detail)
        detail.sig_save_requested.connect(self.save)
        detail.sig_add_dependency_requested.connect(self.add_dependency)
        detail.sig_remove_dependency_requested.connect(self.remove_dependency)
        detail.sig_add_comment_requested.connect(self.add_comment)
        detail.sig_edit_comment_requested.connect(self.edit_comment)
        detail.sig_delete_comment_requested.connect(self.delete_comment)
        detail.sig_open_transcript_requested.connect(self._open_transcript)
        pane.sig_new_task_requested.connect(self.new_task)
        pane.sig_delete_requested.connect(self.ask_to_delete)
        self.task_dialog: TaskDialog | None = None
        self.confirm_box: ConfirmBox | None = None

    # --- creating and deleting -----------------------------------------------------------------

    def new_task(self) -> None:
        """Ask for a new task's fields; Create adds it (the change feed brings it into the table)."""
        selected = self.directory.get(self.pane.selected_id() or 0)
        start = TaskDraft(
            feature=selected.feature if selected else "", discipline=selected.discipline if selected else ""
        )
        dialog = TaskDialog(
            "New task", "Create", self.directory.features, self.directory.disciplines, start, self.pane
        )
        dialog.accepted.connect(lambda: self._create(dialog.values()))
        self.task_dialog = dialog
        dialog.open()

    def _create(self, values: dict[str, Any]) -> None:
        task = self.runner.run("create the task", lambda: self.services.tasks.create(**values))
        if task is not None:
            self._reread({task.id})
            self.pane.select_task(task.id)
            self.runner.sig_succeeded.emit(f"Created task #{task.id}: {task.title}")

    def ask_to_delete(self, task_id: int) -> None:
        """Delete a task once the person confirms; refused, with the reason, while others depend on it."""
        dependents: list[int] = self.runner.read(
            f"read what depends on task #{task_id}", lambda: self.services.tasks.dependents(task_id), []
        )
        if dependents:
            shown = ", ".join(f"#{i}" for i in dependents)
            self.runner.fail(
                f"Task #{task_id} cannot be deleted: tasks {shown} depend on it. "
                "Remove those dependencies (or delete those tasks) first."
            )
            return
        title = self.directory.title(task_id)
        self.confirm_box = confirm(
            self.pane,
            f"Delete task #{task_id}?",
            f"“{title}”, its comments, its dependencies and its worktree are removed; its branch too, unless "
            "it holds work not merged (then it is kept). This cannot be undone.",
            "Delete",
            lambda: self._delete(task_id),
        )

    def _delete(self, task_id: int) -> None:
        title = self.directory.title(task_id)

        told: list[str] = []

        def delete() -> bool:
            told.extend(filter(None, [self.services.retiring.delete_task(task_id)]))
            return True

        if not self.runner.run(f"delete task #{task_id}", delete):
            return
        self._reread({task_id})
        self.runner.sig_succeeded.emit("; ".join([f"Deleted task #{task_id}: {title}", *told]))

    # --- reading ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read every task summary (one query) and the feature and discipline names."""
        self.refresh_choices()
        started = time.perf_counter()
        summaries: list[TaskSummary] = self.runner.read("read the tasks", self.services.tasks.list, [])
        read = time.perf_counter()
        self.directory.replace(summaries)
        self.pane.show_tasks(summaries)
        self.read_seconds = read - started
        self.load_seconds = time.perf_counter() - started
        log.info(
            "%d tasks: read in %.3f s, shown in %.3f s", len(summaries), self.read_seconds, self.load_seconds
        )
        self.show_detail(self.pane.selected_id() or 0)

    def refresh_choices(self) -> None:
        """Read the names of features and disciplines for the filters and the editor."""
        features, disciplines = names_of(self.services, self.runner)
        self.directory.features, self.directory.disciplines = features, disciplines
        self.pane.set_choices(features, disciplines)

    def on_changes(self, changes: list[Change]) -> None:
        """Re-read the touched tasks, the choices, and the detail, as the changes require."""
        topics = {change.topic for change in changes}
        if topics & CHOICE_TOPICS:
            self.refresh_choices()
        touched = {int(task_id) for change in changes if change.topic == "tasks" for task_id in change.ids}
        if "tasks" in topics:
            if len(touched) > MAX_SINGLE_READS or not touched:
                self.refresh()
                return
            self._reread(touched)
        if topics & DETAIL_TOPICS:
            self.show_detail(self.pane.selected_id() or 0)

    def _reread(self, task_ids: set[int]) -> None:
        changed: list[TaskSummary] = []
        removed: list[int] = []
        for task_id in sorted(task_ids):
            try:
                changed.append(summary_of(self.services.tasks.get(task_id)))
            except NotFoundError:
                removed.append(task_id)
            except Exception:  # one unreadable task must not stop the others
                log.exception("could not re-read task #%d", task_id)
        self.directory.update(changed, removed)
        self.pane.update_tasks(changed, removed)

    def show_detail(self, task_id: int) -> None:
        """Show the task with this id in the detail view (0: none)."""
        if not task_id:
            self.pane.detail.show_task(None)
            return
        data = self.runner.read(f"read task #{task_id}", lambda: self._detail(task_id), None)
        self.pane.detail.show_task(data)

    def _detail(self, task_id: int) -> TaskDetailData:
        task = self.services.tasks.get(task_id)
        dependents = self.services.tasks.dependents(task_id)
        return TaskDetailData(
            task=task,
            dependencies=self._summaries(task.depends_on),
            dependents=self._summaries(dependents),
            signals=self.services.signals.for_task(task_id),
            sessions=self.services.sessions.list(task_id=task_id, limit=200),
        )

    def _summaries(self, task_ids: Any) -> list[TaskSummary]:
        found = []
        for task_id in task_ids:
            summary = self.directory.get(task_id)
            if summary is None:
                summary = summary_of(self.services.tasks.get(task_id))
            found.append(summary)
        return found

    # --- acting -------------------------------------------------------------------------------

    def save(self, task_id: int, changes: dict[str, Any]) -> None:
        """Save changed fields (and the status, when it changed) of a task."""
        fields = dict(changes)
        status = fields.pop("status", None)

        def apply() -> Task:
            task = (
                self.services.tasks.update(task_id, **fields) if fields else self.services.tasks.get(task_id)
            )
            if status is not None:
                task = self.services.tasks.move(task_id, TaskStatus(status), Mover.PERSON)
            return task

        task = self.runner.run(f"save task #{task_id}", apply, done=f"Saved task #{task_id}.")
        if task is not None:
            self.pane.detail.fields.load(task, force=True)

    def add_dependency(self, task_id: int, depends_on_id: int) -> None:
        """Make a task wait for another."""
        self.runner.run(
            f"make #{task_id} wait for #{depends_on_id}",
            lambda: self.services.tasks.add_dependency(task_id, depends_on_id),
            done=f"Task #{task_id} now waits for #{depends_on_id}.",
        )

    def remove_dependency(self, task_id: int, depends_on_id: int) -> None:
        """Stop a task waiting for another."""
        self.runner.run(
            f"remove the dependency of #{task_id} on #{depends_on_id}",
            lambda: self.services.tasks.remove_dependency(task_id, depends_on_id),
            done=f"Task #{task_id} no longer waits for #{depends_on_id}.",
        )

    def add_comment(self, task_id: int, text: str) -> None:
        """Add a comment to a task."""
        added = self.runner.run(
            f"comment on task #{task_id}", lambda: self.services.comments.add(task_id, AUTHOR, text)
        )
        if added is not None:
            self.pane.detail.comments.clear_input()

    def edit_comment(self, task_id: int, comment_id: int, text: str) -> None:
        """Replace a comment's text."""
        self.runner.run(
            f"edit comment #{comment_id}", lambda: self.services.comments.update(task_id, comment_id, text)
        )

    def delete_comment(self, task_id: int, comment_id: int) -> None:
        """Delete a comment."""
        self.runner.run(
            f"delete comment #{comment_id}",
            lambda: self.services.comments.delete(task_id, comment_id),
            done="Comment deleted.",
        )

    def _open_transcript(self, relative: str) -> None:
        path = self.services.paths.root / relative
        if not path.is_file():
            self.runner.fail(f"Could not open the transcript: {path} is not there (any more).")
            return
        if self.open_transcript is not None:
            self.open_transcript(relative)
