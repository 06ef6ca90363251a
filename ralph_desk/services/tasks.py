"""Tasks: their fields, statuses and dependencies, and the loop's choice and claim of the next one."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from ralph_desk.domain.enums import Priority, TaskOrigin, TaskStatus
from ralph_desk.domain.graph import find_cycle, format_path
from ralph_desk.domain.records import Task, TaskSummary
from ralph_desk.domain.tools import MAX_ITEMS
from ralph_desk.services import validation as check
from ralph_desk.services.errors import ConflictError, InvalidValueError, NotFoundError
from ralph_desk.store import disciplines as disciplines_store
from ralph_desk.store import features as features_store
from ralph_desk.store import tasks as store
from ralph_desk.store.database import Database, UnitOfWork
from ralph_desk.store.writes import TaskWrite, checked

MAX_TITLE = 500
MAX_TAG = 500
MAX_TURNS = 1000
MAX_QUERY = 500

UPDATABLE_FIELDS = (
    "title",
    "description",
    "priority",
    "feature",
    "discipline",
    "acceptance_criteria",
    "depends_on",
    "tags",
    "context_files",
    "output_artifacts",
    "hints",
    "estimated_turns",
    "pseudocode",
)

Filter = str | Sequence[str] | None


def _task_id(value: int, field: str = "task_id") -> int:
    checked = check.positive_int(field, value)
    if checked is None:
        raise InvalidValueError(field, value, f"a whole number from 1 to {2**31 - 1}")
    return checked


def _optional_text(field: str, value: str | None) -> str | None:
    """A clearable text: None, empty or blank all clear it."""
    checked = check.text(field, value)
    return checked if checked is not None and checked.strip() else None


def _tags(values: Sequence[str] | None) -> list[str]:
    """Labels, trimmed, without repeats, in the order given."""
    tags: list[str] = []
    for index, tag in enumerate(check.text_list("tags", values)):
        trimmed = check.required_text(f"tags[{index}]", tag.strip(), limit=MAX_TAG)
        if trimmed not in tags:
            tags.append(trimmed)
    return tags


def _ids(field: str, values: Sequence[int] | None) -> list[int]:
    """Task ids, without repeats, in the order given."""
    if values is None:
        return []
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise InvalidValueError(field, values, "a list of task ids")
    if len(values) > MAX_ITEMS:
        raise InvalidValueError(field, f"<{len(values)} items>", f"at most {MAX_ITEMS} items")
    ids: list[int] = []
    for index, value in enumerate(values):
        task_id = _task_id(value, f"{field}[{index}]")
        if task_id not in ids:
            ids.append(task_id)
    return ids


def _turns(value: int | None) -> int | None:
    return check.positive_int("estimated_turns", value, maximum=MAX_TURNS)


def _field(key: str, value: Any) -> Any:
    """One updatable field, checked (feature, discipline and depends_on are resolved later)."""
    if key == "title":
        return check.required_text(key, value, limit=MAX_TITLE)
    if key in ("description", "hints", "pseudocode"):
        return _optional_text(key, value)
    if key == "priority":
        return check.choice(key, value, Priority).value
    if key in ("feature", "discipline"):
        if not isinstance(value, str):
            raise InvalidValueError(key, value, f"the name of an existing {key}")
        return value
    if key == "acceptance_criteria":
        return check.text_list(key, value)
    if key == "depends_on":
        return _ids(key, value)
    if key == "tags":
        return _tags(value)
    if key in ("context_files", "output_artifacts"):
        return check.path_list(key, value)
    if key == "estimated_turns":
        return _turns(value)
    raise AssertionError(f"unhandled task field {key!r}")


def _choices(field: str, value: Filter, enum: type[TaskStatus] | type[TaskOrigin]) -> list[str] | None:
    values = _filter_values(field, value)
    if values is None:
        return None
    return [check.choice(field, item, enum).value for item in values]


def _filter_values(field: str, value: Filter) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Sequence):
        raise InvalidValueError(field, value, "a value or a list of values")
    return builtins.list(value)


def _shown(task_ids: Sequence[int]) -> str:
    return ", ".join(f"#{task_id}" for task_id in task_ids)


class TaskService:
    """Create, read, change and delete tasks; keep their dependencies acyclic; hand the loop its next task."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def create(
        self,
        feature: str,
        discipline: str,
        title: str,
        description: str | None = None,
        priority: str = Priority.MEDIUM.value,
        status: str = TaskStatus.PENDING.value,
        acceptance_criteria: Sequence[str] | None = None,
        depends_on: Sequence[int] | None = None,
        tags: Sequence[str] | None = None,
        context_files: Sequence[str] | None = None,
        output_artifacts: Sequence[str] | None = None,
        hints: str | None = None,
        estimated_turns: int | None = None,
        origin: str = TaskOrigin.HUMAN.value,
        pseudocode: str | None = None,
    ) -> Task:
        """Add a task to a feature and discipline, as draft or pending (an import may also add done tasks)."""
        checked_origin = check.choice("origin", origin, TaskOrigin)
        new_statuses = [TaskStatus.DRAFT, TaskStatus.PENDING]
        if checked_origin is TaskOrigin.IMPORT:
            new_statuses.append(TaskStatus.DONE)
        fields: TaskWrite = {
            "title": _field("title", title),
            "description": _field("description", description),
            "priority": _field("priority", priority),
            "status": check.choice("status", status, TaskStatus, new_statuses).value,
            "acceptance_criteria": _field("acceptance_criteria", acceptance_criteria),
            "tags": _field("tags", tags),
            "context_files": _field("context_files", context_files),
            "output_artifacts": _field("output_artifacts", output_artifacts),
            "hints": _field("hints", hints),
            "estimated_turns": _field("estimated_turns", estimated_turns),
            "pseudocode": _field("pseudocode", pseudocode),
            "origin": checked_origin.value,
        }
        dependency_ids = _ids("depends_on", depends_on)
        feature_name = _field("feature", feature)
        discipline_name = _field("discipline", discipline)
        with self.db.write() as unit:
            fields["feature_id"] = self._feature_id(unit, feature_name)
            fields["discipline_id"] = self._discipline_id(unit, discipline_name)
            _require_all(unit, dependency_ids)
            return store.create(unit, fields, dependency_ids)

    def get(self, task_id: int) -> Task:
        """One task with its comments and dependencies."""
        task_id = _task_id(task_id)
        with self.db.read() as unit:
            return self._require(unit, task_id)

    def list(
        self,
        status: Filter = None,
        feature: Filter = None,
        discipline: Filter = None,
        origin: Filter = None,
        search: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> builtins.list[TaskSummary]:
        """Tasks by id, narrowed by each given filter (a value or a list of values) and search text."""
        statuses = _choices("status", status, TaskStatus)
        origins = _choices("origin", origin, TaskOrigin)
        feature_names = _filter_values("feature", feature)
        discipline_names = _filter_values("discipline", discipline)
        query = check.required_text("search", search, limit=MAX_QUERY).strip() if search is not None else None
        checked_limit = check.positive_int("limit", limit)
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise InvalidValueError("offset", offset, "a whole number from 0 up")
        with self.db.read() as unit:
            for name in feature_names or ():
                self._feature_id(unit, name)
            for name in discipline_names or ():
                self._discipline_id(unit, name)
            return store.list_summaries(
                unit,
                statuses=statuses,
                features=feature_names,
                disciplines=discipline_names,
                origins=origins,
                search=query,
                limit=checked_limit,
                offset=offset,
            )

    def search(self, query: str, limit: int = 20) -> builtins.list[TaskSummary]:
        """Tasks whose title, description or tags contain `query` (any case); title matches first."""
        checked = check.required_text("query", query, limit=MAX_QUERY).strip()
        checked_limit = check.positive_int("limit", limit, maximum=MAX_ITEMS)
        with self.db.read() as unit:
            return store.list_summaries(unit, search=checked, limit=checked_limit)

    def count_by_status(self) -> dict[str, int]:
        """How many tasks are in each status (every status present, zero included)."""
        with self.db.read() as unit:
            counts = store.count_by_status(unit)
        return {status.value: counts.get(status.value, 0) for status in TaskStatus}

    def count_by_feature(self) -> dict[str, dict[str, int]]:
        """For every feature, how many of its tasks are in each status (every status present)."""
        with self.db.read() as unit:
            counts = store.count_by_feature(unit)
        return {
            feature: {status.value: by_status.get(status.value, 0) for status in TaskStatus}
            for feature, by_status in counts.items()
        }

    def update(self, task_id: int, **changes: Any) -> Task:
        """Change the given fields (None clears an optional one; a list replaces the whole list)."""
        task_id = _task_id(task_id)
        unknown = sorted(set(changes) - set(UPDATABLE_FIELDS))
        if unknown:
            raise InvalidValueError("field", unknown[0], "one of " + ", ".join(UPDATABLE_FIELDS))
        fields = {key: _field(key, value) for key, value in changes.items()}
        dependency_ids: builtins.list[int] | None = fields.pop("depends_on", None)
        with self.db.write() as unit:
            task = self._require(unit, task_id)
            if "feature" in fields:
                fields["feature_id"] = self._feature_id(unit, fields.pop("feature"))
            if "discipline" in fields:
                fields["discipline_id"] = self._discipline_id(unit, fields.pop("discipline"))
            if dependency_ids is not None:
                _require_all(unit, dependency_ids)
                _check_acyclic(unit, task_id, dependency_ids, replacing=True)
                store.set_dependencies(unit, task_id, dependency_ids)
            if fields:
                updated = store.update(unit, task_id, checked(fields, TaskWrite))
                assert updated is not None
                return updated
            return self._require(unit, task_id) if dependency_ids is not None else task

    def set_status(self, task_id: int, status: str) -> Task:
        """Move a task to a status (stamps started_at on in_progress, completed_at on done)."""
        task_id = _task_id(task_id)
        checked = check.choice("status", status, TaskStatus)
        with self.db.write() as unit:
            self._require(unit, task_id)
            task = store.set_status(unit, task_id, checked.value)
            assert task is not None
            return task

    def enrich(
        self,
        task_id: int,
        pseudocode: str,
        acceptance_criteria: Sequence[str] | None = None,
        context_files: Sequence[str] | None = None,
    ) -> Task:
        """Give a draft task its pseudocode (and maybe new criteria and context files); it becomes pending."""
        task_id = _task_id(task_id)
        fields: TaskWrite = {"pseudocode": check.required_text("pseudocode", pseudocode)}
        if acceptance_criteria is not None:
            fields["acceptance_criteria"] = _field("acceptance_criteria", acceptance_criteria)
        if context_files is not None:
            fields["context_files"] = _field("context_files", context_files)
        with self.db.write() as unit:
            task = self._require(unit, task_id)
            if task.status is not TaskStatus.DRAFT:
                raise ConflictError(
                    f"task #{task_id} is not a draft (its status is {task.status.value!r}); "
                    "only draft tasks can be enriched — change its fields with update instead"
                )
            if task.origin is TaskOrigin.AGENT:
                raise ConflictError(
                    f"task #{task_id} was suggested by an agent and waits for human review; "
                    "it can be enriched once a human approves it"
                )
            store.update(unit, task_id, fields)
            enriched = store.set_status(unit, task_id, TaskStatus.PENDING.value)
            assert enriched is not None
            return enriched

    def add_context_file(self, task_id: int, file_path: str) -> Task:
        """Register a project file that sessions on this task should read (once)."""
        task_id = _task_id(task_id)
        path = check.relative_path("file_path", file_path)
        with self.db.write() as unit:
            task = self._require(unit, task_id)
            if path in task.context_files:
                return task
            if len(task.context_files) >= MAX_ITEMS:
                raise InvalidValueError(
                    "context_files", f"<{len(task.context_files) + 1} items>", f"at most {MAX_ITEMS}"
                )
            updated = store.update(unit, task_id, {"context_files": [*task.context_files, path]})
            assert updated is not None
            return updated

    def add_dependency(self, task_id: int, depends_on_id: int) -> Task:
        """Make a task wait for another one to be done (refused if that would close a cycle)."""
        task_id = _task_id(task_id)
        depends_on_id = _task_id(depends_on_id, "depends_on_id")
        with self.db.write() as unit:
            add_dependency(unit, task_id, depends_on_id)
            return self._require(unit, task_id)

    def remove_dependency(self, task_id: int, depends_on_id: int) -> Task:
        """Stop a task waiting for another one."""
        task_id = _task_id(task_id)
        depends_on_id = _task_id(depends_on_id, "depends_on_id")
        with self.db.write() as unit:
            task = self._require(unit, task_id)
            if not store.remove_dependency(unit, task_id, depends_on_id):
                shown = _shown(task.depends_on) or "nothing"
                raise NotFoundError(
                    "dependency", f"#{task_id} → #{depends_on_id}", [f"task #{task_id} depends on {shown}"]
                )
            return self._require(unit, task_id)

    def dependents(self, task_id: int) -> builtins.list[int]:
        """Ids of the tasks that wait for this one."""
        task_id = _task_id(task_id)
        with self.db.read() as unit:
            _require_all(unit, [task_id])
            return store.dependents(unit, task_id)

    def increment_stuck(self, task_id: int) -> int:
        """Count one more session that ended without progress; returns the new count."""
        task_id = _task_id(task_id)
        with self.db.write() as unit:
            count = store.increment_stuck(unit, task_id)
            if count is None:
                raise NotFoundError("task", task_id)
            return count

    def reset_stuck(self, task_id: int) -> None:
        """Set a task's stuck count back to zero."""
        task_id = _task_id(task_id)
        with self.db.write() as unit:
            if not store.reset_stuck(unit, task_id):
                raise NotFoundError("task", task_id)

    def delete(self, task_id: int) -> None:
        """Remove a task and its comments; refused while other tasks depend on it."""
        task_id = _task_id(task_id)
        with self.db.write() as unit:
            _require_all(unit, [task_id])
            waiting = store.dependents(unit, task_id)
            if waiting:
                raise ConflictError(
                    f"task #{task_id} is depended on by tasks {_shown(waiting)}; "
                    "remove those dependencies or delete those tasks first"
                )
            store.delete_task(unit, task_id)

    def next_runnable(self, limit: int = 1) -> builtins.list[TaskSummary]:
        """Pending tasks whose dependencies are all done: most urgent first, then oldest."""
        checked_limit = check.positive_int("limit", limit, maximum=MAX_ITEMS)
        assert checked_limit is not None
        with self.db.read() as unit:
            return store.next_runnable(unit, checked_limit)

    def claim_next(self) -> Task | None:
        """Take the next runnable task and mark it in_progress atomically: no two callers get the same one."""
        with self.db.write() as unit:
            return store.claim_next(unit)

    def _require(self, unit: UnitOfWork, task_id: int) -> Task:
        task = store.get(unit, task_id)
        if task is None:
            raise NotFoundError("task", task_id)
        return task

    def _feature_id(self, unit: UnitOfWork, name: str) -> int:
        feature_id = features_store.id_of(unit, name)
        if feature_id is None:
            raise NotFoundError("feature", name, features_store.names(unit))
        return feature_id

    def _discipline_id(self, unit: UnitOfWork, name: str) -> int:
        discipline_id = disciplines_store.id_of(unit, name)
        if discipline_id is None:
            raise NotFoundError("discipline", name, disciplines_store.names(unit))
        return discipline_id


def _require_all(unit: UnitOfWork, task_ids: Sequence[int]) -> None:
    missing = sorted(set(task_ids) - store.existing_ids(unit, task_ids))
    if missing:
        raise NotFoundError("task", missing[0])


def _check_acyclic(unit: UnitOfWork, task_id: int, dependency_ids: Sequence[int], replacing: bool) -> None:
    edges = store.edges(unit)
    if replacing:
        edges = [edge for edge in edges if edge[0] != task_id]
    for depends_on_id in dependency_ids:
        if depends_on_id == task_id:
            raise ConflictError(f"task #{task_id} cannot depend on itself")
        cycle = find_cycle(edges, (task_id, depends_on_id))
        if cycle is not None:
            raise ConflictError(
                f"task #{task_id} cannot depend on #{depends_on_id}: that would close the cycle "
                f"{format_path(cycle)}; remove one of those dependencies first"
            )
        edges.append((task_id, depends_on_id))


def add_dependency(unit: UnitOfWork, task_id: int, depends_on_id: int) -> None:
    """Within `unit`: make a task wait for another (both must exist; refused if that would close a cycle)."""
    _require_all(unit, [task_id])
    _require_all(unit, [depends_on_id])
    _check_acyclic(unit, task_id, [depends_on_id], replacing=False)
    store.add_dependency(unit, task_id, depends_on_id)
