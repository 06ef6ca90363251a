"""The Tasks pane's wiring: loads summaries in one query, re-reads only touched tasks, saves edits."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.listing import errors_of
from ralph_desk.domain.records import Change, Task, TaskSummary
from ralph_desk.gui.backend import ConflictError, NotFoundError, Services, summary_of
from ralph_desk.gui.dialogs.confirm import ConfirmBox, confirm
from ralph_desk.gui.dialogs.task_dialog import TaskDialog, TaskDraft
from ralph_desk.gui.directory import TaskDirectory, names_of
from ralph_desk.gui.panes.tasks.detail import TaskDetailData
from ralph_desk.gui.panes.tasks.pane import TasksPane
from ralph_desk.gui.worker import Worker

log = logging.getLogger("ralph_desk.gui")

AUTHOR = "human"
# Above this many touched tasks one full read is cheaper than one read per task.
MAX_SINGLE_READS = 200
DETAIL_TOPICS = frozenset({"tasks", "comments", "signals", "sessions", "dependencies", "inbox"})
CHOICE_TOPICS = frozenset({"features", "disciplines"})

TranscriptOpener = Callable[[str], None]


@dataclass(frozen=True)
class StatusRefused:
    """A save whose fields went through and whose status move the lifecycle refused (the reason)."""

    task: Task
    reason: str


class TasksWiring:
    """Connects the Tasks pane to the services and keeps the shared task directory current."""

    topics = frozenset({"tasks"}) | DETAIL_TOPICS | CHOICE_TOPICS

    def __init__(
        self,
        pane: TasksPane,
        services: Services,
        worker: Worker,
        directory: TaskDirectory,
        open_transcript: TranscriptOpener | None = None,
    ) -> None:
        self.pane = pane
        self.services = services
        self.worker = worker
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
        tasks = self.services.tasks
        self.worker.submit(
            "create the task", lambda: tasks.create(**values), self._created, keep=True, busy=True
        )

    def _created(self, task: Task) -> None:
        self._reread({task.id}, then=lambda: self._select_created(task))

    def _select_created(self, task: Task) -> None:
        self.pane.select_task(task.id)
        self.worker.succeed(f"Created task #{task.id}: {task.title}")

    def ask_to_delete(self, task_id: int) -> None:
        """Delete a task once the person confirms; refused, with the reason, while others depend on it."""
        tasks = self.services.tasks
        self.worker.submit(
            f"read what depends on task #{task_id}",
            lambda: tasks.dependents(task_id),
            lambda dependents: self._confirm_delete(task_id, dependents),
            busy=True,
        )

    def _confirm_delete(self, task_id: int, dependents: list[int]) -> None:
        if dependents:
            shown = ", ".join(f"#{i}" for i in dependents)
            self.worker.fail(
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
        retiring = self.services.retiring
        self.worker.submit(
            f"delete task #{task_id}",
            lambda: retiring.delete_task(task_id),
            lambda told: self._deleted(task_id, title, told),
            keep=True,
            busy=True,
        )

    def _deleted(self, task_id: int, title: str, told: str | None) -> None:
        self._reread({task_id})
        self.worker.succeed("; ".join([f"Deleted task #{task_id}: {title}", *filter(None, [told])]))

    # --- reading ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read every task summary (one query) and the feature and discipline names."""
        self.refresh_choices()
        tasks = self.services.tasks

        def read() -> tuple[list[TaskSummary], float]:
            started = time.perf_counter()
            return tasks.list(), time.perf_counter() - started

        self.worker.submit("read the tasks", read, lambda read: self._show_tasks(*read))

    def _show_tasks(self, summaries: list[TaskSummary], read_seconds: float) -> None:
        started = time.perf_counter()
        self.directory.replace(summaries)
        self.pane.show_tasks(summaries)
        self.read_seconds = read_seconds
        self.load_seconds = read_seconds + time.perf_counter() - started
        log.info(
            "%d tasks: read in %.3f s, shown in %.3f s", len(summaries), self.read_seconds, self.load_seconds
        )
        self.worker.left_out("read the tasks", errors_of(summaries))
        self.show_detail(self.pane.selected_id() or 0)

    def refresh_choices(self) -> None:
        """Read the names of features and disciplines for the filters and the editor."""
        services = self.services
        self.worker.submit(
            "read the features and disciplines",
            lambda: names_of(services),
            lambda names: self._set_choices(*names),
        )

    def _set_choices(self, features: list[str], disciplines: list[str]) -> None:
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
            self._reread(touched, then=self._show_selected)  # a deleted task leaves the table first
        elif topics & DETAIL_TOPICS:
            self._show_selected()

    def _show_selected(self) -> None:
        self.show_detail(self.pane.selected_id() or 0)

    def _reread(self, task_ids: set[int], then: Callable[[], None] | None = None) -> None:
        services = self.services
        self.worker.submit(
            "re-read the changed tasks",
            lambda: _read_summaries(services, task_ids),
            lambda read: self._apply_reread(*read, then=then),
        )

    def _apply_reread(
        self, changed: list[TaskSummary], removed: list[int], then: Callable[[], None] | None = None
    ) -> None:
        self.directory.update(changed, removed)
        self.pane.update_tasks(changed, removed)
        if then is not None:
            then()

    def show_detail(self, task_id: int) -> None:
        """Show the task with this id in the detail view (0: none)."""
        if not task_id:
            self.pane.detail.show_task(None)
            return
        services, known = self.services, self.directory.by_id
        self.worker.submit(
            f"read task #{task_id}",
            lambda: _detail(services, task_id, known),
            self.pane.detail.show_task,
            lambda: self.pane.detail.show_task(None),
        )

    # --- acting -------------------------------------------------------------------------------

    def save(self, task_id: int, changes: dict[str, Any]) -> None:
        """Save changed fields (and the status, when it changed) of a task."""
        fields = dict(changes)
        status = fields.pop("status", None)
        tasks = self.services.tasks

        def apply() -> Task | StatusRefused:
            task = tasks.update(task_id, **fields) if fields else tasks.get(task_id)
            if status is None:
                return task
            try:
                return tasks.move(task_id, TaskStatus(status), Mover.PERSON)
            except ConflictError as refused:  # the lifecycle's rule: the task keeps the status it has
                return StatusRefused(task, str(refused))

        self.worker.submit(f"save task #{task_id}", apply, self._saved, keep=True, busy=True)

    def _saved(self, result: Task | StatusRefused) -> None:
        """Show the task as saved; a status the lifecycle refused is shown as it stays, with the reason."""
        task = result.task if isinstance(result, StatusRefused) else result
        self.pane.detail.fields.load(task, force=True)
        if isinstance(result, StatusRefused):
            self.worker.fail(f"Task #{task.id} keeps its status — {result.reason}")
        else:
            self.worker.succeed(f"Saved task #{task.id}.")

    def add_dependency(self, task_id: int, depends_on_id: int) -> None:
        """Make a task wait for another."""
        tasks = self.services.tasks
        self.worker.submit(
            f"make #{task_id} wait for #{depends_on_id}",
            lambda: tasks.add_dependency(task_id, depends_on_id),
            done=f"Task #{task_id} now waits for #{depends_on_id}.",
            keep=True,
            busy=True,
        )

    def remove_dependency(self, task_id: int, depends_on_id: int) -> None:
        """Stop a task waiting for another."""
        tasks = self.services.tasks
        self.worker.submit(
            f"remove the dependency of #{task_id} on #{depends_on_id}",
            lambda: tasks.remove_dependency(task_id, depends_on_id),
            done=f"Task #{task_id} no longer waits for #{depends_on_id}.",
            keep=True,
            busy=True,
        )

    def add_comment(self, task_id: int, text: str) -> None:
        """Add a comment to a task."""
        comments = self.services.comments
        self.worker.submit(
            f"comment on task #{task_id}",
            lambda: comments.add(task_id, AUTHOR, text),
            lambda _added: self.pane.detail.comments.clear_input(),
            keep=True,
            busy=True,
        )

    def edit_comment(self, task_id: int, comment_id: int, text: str) -> None:
        """Replace a comment's text."""
        comments = self.services.comments
        self.worker.submit(
            f"edit comment #{comment_id}",
            lambda: comments.update(task_id, comment_id, text),
            keep=True,
            busy=True,
        )

    def delete_comment(self, task_id: int, comment_id: int) -> None:
        """Delete a comment."""
        comments = self.services.comments
        self.worker.submit(
            f"delete comment #{comment_id}",
            lambda: comments.delete(task_id, comment_id),
            done="Comment deleted.",
            keep=True,
            busy=True,
        )

    def _open_transcript(self, relative: str) -> None:
        path = self.services.paths.root / relative
        self.worker.submit(
            "open the transcript", path.is_file, lambda there: self._open_found(relative, path, there)
        )

    def _open_found(self, relative: str, path: Path, there: bool) -> None:
        if not there:
            self.worker.fail(f"Could not open the transcript: {path} is not there (any more).")
            return
        if self.open_transcript is not None:
            self.open_transcript(relative)


def _read_summaries(services: Services, task_ids: set[int]) -> tuple[list[TaskSummary], list[int]]:
    """The summaries of these tasks, and the ids of those that are gone (on the worker)."""
    changed: list[TaskSummary] = []
    removed: list[int] = []
    for task_id in sorted(task_ids):
        try:
            changed.append(summary_of(services.tasks.get(task_id)))
        except NotFoundError:
            removed.append(task_id)
        except Exception:  # one unreadable task must not stop the others
            log.exception("could not re-read task #%d", task_id)
    return changed, removed


def _detail(services: Services, task_id: int, known: dict[int, TaskSummary]) -> TaskDetailData:
    """A task with what it waits for, what waits for it, its signals and sessions (on the worker)."""
    task = services.tasks.get(task_id)
    dependents = services.tasks.dependents(task_id)

    def summaries(task_ids: Iterable[int]) -> list[TaskSummary]:
        return [known.get(i) or summary_of(services.tasks.get(i)) for i in task_ids]

    return TaskDetailData(
        task=task,
        dependencies=summaries(task.depends_on),
        dependents=summaries(dependents),
        signals=services.signals.for_task(task_id),
        sessions=services.sessions.list(task_id=task_id, limit=200),
    )
