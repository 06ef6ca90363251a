"""Tasks: their fields, statuses and dependencies, and the loop's choice and claim of the next one."""

from __future__ import annotations

import builtins
import logging
from collections.abc import Collection, Sequence
from enum import StrEnum
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

from pydantic import BaseModel

from ralph_desk.domain.enums import Priority, TaskOrigin, TaskStatus
from ralph_desk.domain.graph import find_cycle, format_path
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.listing import Listing
from ralph_desk.domain.records import Task, TaskSummary
from ralph_desk.domain.tools import (
    MAX_ITEMS,
    CreateTaskInput,
    EnrichTaskInput,
    SearchTasksInput,
    UpdateTaskInput,
)
from ralph_desk.services import lifecycle
from ralph_desk.services import validation as check
from ralph_desk.services.errors import ConflictError, InvalidValueError, NotFoundError
from ralph_desk.services.inputs import Page, TaskExtras, TaskQuery, given
from ralph_desk.store import disciplines as disciplines_store
from ralph_desk.store import features as features_store
from ralph_desk.store import tasks as store
from ralph_desk.store.database import Database, UnitOfWork
from ralph_desk.store.errors import UnreadableRowError
from ralph_desk.store.writes import TaskWrite, checked

PATH_FIELDS = ("context_files", "output_artifacts")
_COLUMN_TYPES = get_type_hints(TaskWrite)

log = logging.getLogger("ralph_desk.tasks")

_T = TypeVar("_T")

REQUIRED = ("title", "priority")
# What `update` changes beyond update_task's arguments: a move to another feature or discipline, the plan.
MOVES = ("feature", "discipline", "pseudocode")
UPDATABLE_FIELDS = (*(name for name in UpdateTaskInput.model_fields if name != "id"), *MOVES)


_PLAIN = TaskExtras()


def _unique(values: Sequence[_T] | None) -> list[_T]:
    """The values without repeats, in the order given."""
    return list(dict.fromkeys(values or ()))


def _given_fields(args: BaseModel) -> set[str]:
    """The fields a caller set to a value."""
    return {name for name in args.model_fields_set if getattr(args, name) is not None}


def _columns(args: BaseModel, names: Collection[str]) -> TaskWrite:
    """The task columns of the input's fields `names`, by name: an empty text and a missing list clear theirs.

    The status is the lifecycle's to set; a feature or discipline is looked up; dependencies are rows.
    """
    fields: dict[str, object] = {}
    for name in names:
        hint, value = _COLUMN_TYPES.get(name), getattr(args, name)
        if hint is None or name == "status":
            continue
        if name in PATH_FIELDS:
            fields[name] = check.paths(name, value)
        elif get_origin(hint) is list:
            fields[name] = _unique(value)
        elif value is None and type(None) not in get_args(hint):
            continue  # a required column the caller left as it is
        elif isinstance(value, StrEnum):
            fields[name] = value.value
        else:
            fields[name] = check.text_or_none(value) if isinstance(value, str) else value
    return checked(fields, TaskWrite)


def _name(field: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidValueError(field, value, f"the name of an existing {field}")
    return value


def _shown(task_ids: Sequence[int]) -> str:
    return ", ".join(f"#{task_id}" for task_id in task_ids)


class TaskService:
    """Create, read, change and delete tasks; keep their dependencies acyclic; hand the loop its next task."""

    def __init__(
        self,
        db: Database,
        unmerged: lifecycle.UnmergedWork | None = None,
        checks: lifecycle.ChecksVerdict | None = None,
    ) -> None:
        self.db = db
        self.unmerged = unmerged  # asked before a person or an agent declares a task done
        self.checks = checks  # asked before an agent declares a task done

    def create(
        self,
        feature: str,
        discipline: str,
        title: str,
        description: str | None = None,
        priority: Priority = Priority.MEDIUM,
        status: TaskStatus = TaskStatus.PENDING,
        acceptance_criteria: Sequence[str] | None = None,
        depends_on: Sequence[int] | None = None,
        tags: Sequence[str] | None = None,
        context_files: Sequence[str] | None = None,
        output_artifacts: Sequence[str] | None = None,
        hints: str | None = None,
        estimated_turns: int | None = None,
        origin: TaskOrigin = TaskOrigin.HUMAN,
        pseudocode: str | None = None,
    ) -> Task:
        """Add a task from plain values (the window, the CLI, an import), checked as create_task's."""
        values = {
            "feature": feature,
            "discipline": discipline,
            "title": title,
            "description": check.blank_is_none(description),
            "priority": priority,
            "acceptance_criteria": acceptance_criteria,
            "depends_on": depends_on,
            "tags": tags,
            "context_files": context_files,
            "output_artifacts": output_artifacts,
            "hints": check.blank_is_none(hints),
            "estimated_turns": estimated_turns,
        }
        args = check.arguments(CreateTaskInput, given(values), "create_task")
        extras = {"status": status, "origin": origin, "pseudocode": check.blank_is_none(pseudocode)}
        return self.create_input(args, check.arguments(TaskExtras, given(extras), "create"))

    def create_input(self, args: CreateTaskInput, extras: TaskExtras = _PLAIN) -> Task:
        """Add a task to a feature and discipline, as draft or pending (an import may also add done tasks).

        The extras' status (else the arguments', else pending) may be done only for an import; their
        pseudocode is the plan an enrichment would give.
        """
        new_statuses = [TaskStatus.DRAFT, TaskStatus.PENDING]
        if extras.origin is TaskOrigin.IMPORT:
            new_statuses.append(TaskStatus.DONE)
        wanted = extras.status or args.status or TaskStatus.PENDING
        if wanted not in new_statuses:
            raise InvalidValueError("status", wanted.value, "one of " + ", ".join(new_statuses))
        fields = _columns(args, type(args).model_fields)
        fields.setdefault("priority", Priority.MEDIUM.value)
        fields["status"] = wanted.value
        fields["origin"] = extras.origin.value
        fields["pseudocode"] = extras.pseudocode
        dependency_ids = _unique(args.depends_on)
        with self.db.write() as unit:
            fields["feature_id"] = self._feature_id(unit, args.feature)
            fields["discipline_id"] = self._discipline_id(unit, args.discipline)
            _require_all(unit, dependency_ids)
            return store.create(unit, fields, dependency_ids)

    def get(self, task_id: int) -> Task:
        """One task with its comments and dependencies."""
        task_id = check.positive_int("task_id", task_id)
        task = store.read(self.db, task_id)
        if task is None:
            raise NotFoundError("task", task_id)
        return task

    def list(
        self,
        status: TaskStatus | Sequence[TaskStatus] | None = None,
        feature: str | Sequence[str] | None = None,
        discipline: str | Sequence[str] | None = None,
        origin: TaskOrigin | Sequence[TaskOrigin] | None = None,
        search: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> Listing[TaskSummary]:
        """Tasks by id, narrowed by each given filter (a value or a list of values) and search text."""
        filters = {"status": status, "feature": feature, "discipline": discipline, "origin": origin}
        query = check.arguments(
            TaskQuery, given({**filters, "search": search, "limit": limit, "offset": offset}), "list"
        )
        with self.db.read() as unit:
            for name in query.feature or ():
                self._feature_id(unit, name)
            for name in query.discipline or ():
                self._discipline_id(unit, name)
            return store.list_summaries(
                unit,
                statuses=None if query.status is None else [member.value for member in query.status],
                features=query.feature,
                disciplines=query.discipline,
                origins=None if query.origin is None else [member.value for member in query.origin],
                search=query.search,
                limit=query.limit,
                offset=query.offset,
            )

    def search(self, query: str, limit: int = 20) -> Listing[TaskSummary]:
        """Tasks whose title, description or tags contain `query` (any case); title matches first."""
        args = check.arguments(SearchTasksInput, {"query": query, "limit": limit}, "search_tasks")
        with self.db.read() as unit:
            return store.list_summaries(unit, search=args.query, limit=args.limit)

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
        """Change the given fields from plain values (None clears an optional one; a list replaces the whole
        list); checked as update_task's arguments, plus a move to another feature or discipline."""
        task_id = check.positive_int("task_id", task_id)
        unknown = sorted(set(changes) - set(UPDATABLE_FIELDS))
        if unknown:
            raise InvalidValueError("field", unknown[0], "one of " + ", ".join(UPDATABLE_FIELDS))
        plain = {key: value for key, value in changes.items() if key not in MOVES}
        for key in REQUIRED:
            if key in plain and plain[key] is None:
                raise InvalidValueError(key, None, f"a value ({key} cannot be cleared)")
        args = check.arguments(UpdateTaskInput, {"id": task_id, **plain}, "update_task")
        moves = {key: value for key, value in changes.items() if key in MOVES}
        return self.update_input(args, set(plain), **moves)

    def update_input(self, args: UpdateTaskInput, names: Collection[str] | None = None, **moves: Any) -> Task:
        """Change the task's fields `names` (by default those the arguments set to a value) as the arguments
        say, and make the `moves` (feature, discipline, pseudocode)."""
        task_id = args.id
        if names is None:
            names = _given_fields(args)
        fields = _columns(args, names)
        dependency_ids = _unique(args.depends_on) if "depends_on" in names else None
        if "pseudocode" in moves:
            plan = check.blank_is_none(moves["pseudocode"])
            fields["pseudocode"] = check.arguments(TaskExtras, {"pseudocode": plan}, "update").pseudocode
        with self.db.write() as unit:
            task = self._require(unit, task_id)
            if "feature" in moves:
                fields["feature_id"] = self._feature_id(unit, _name("feature", moves["feature"]))
            if "discipline" in moves:
                fields["discipline_id"] = self._discipline_id(unit, _name("discipline", moves["discipline"]))
            if dependency_ids is not None:
                _require_all(unit, dependency_ids)
                _check_acyclic(unit, task_id, dependency_ids, replacing=True)
                store.set_dependencies(unit, task_id, dependency_ids)
            if fields:
                updated = store.update(unit, task_id, fields)
                assert updated is not None
                return updated
            return self._require(unit, task_id) if dependency_ids is not None else task

    def move(self, task_id: int, status: TaskStatus, mover: Mover) -> Task:
        """Move a task to a status if `mover` may (the lifecycle's rules), stamping its start or end."""
        task_id = check.positive_int("task_id", task_id)
        checked = check.arguments(TaskExtras, {"status": status}, "move").status
        assert checked is not None
        with self.db.write() as unit:
            return lifecycle.move(unit, task_id, checked, Mover(mover), self.unmerged, self.checks)

    def enrich(
        self,
        task_id: int,
        pseudocode: str,
        acceptance_criteria: Sequence[str] | None = None,
        context_files: Sequence[str] | None = None,
    ) -> Task:
        """Give a draft task its pseudocode from plain values; checked as enrich_task's arguments."""
        given = {"acceptance_criteria": acceptance_criteria, "context_files": context_files}
        values = {
            "id": task_id,
            "pseudocode": pseudocode,
            **{k: v for k, v in given.items() if v is not None},
        }
        return self.enrich_input(check.arguments(EnrichTaskInput, values, "enrich_task"))

    def enrich_input(self, args: EnrichTaskInput) -> Task:
        """Give a draft task its pseudocode (and maybe new criteria and context files); it becomes pending."""
        task_id = args.id
        fields = _columns(args, _given_fields(args))
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
            return lifecycle.move(unit, task_id, TaskStatus.PENDING, Mover.PERSON)

    def add_context_file(self, task_id: int, file_path: str) -> Task:
        """Register a project file that sessions on this task should read (once)."""
        task_id = check.positive_int("task_id", task_id)
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
        task_id = check.positive_int("task_id", task_id)
        depends_on_id = check.positive_int("depends_on_id", depends_on_id)
        with self.db.write() as unit:
            add_dependency(unit, task_id, depends_on_id)
            return self._require(unit, task_id)

    def remove_dependency(self, task_id: int, depends_on_id: int) -> Task:
        """Stop a task waiting for another one."""
        task_id = check.positive_int("task_id", task_id)
        depends_on_id = check.positive_int("depends_on_id", depends_on_id)
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
        task_id = check.positive_int("task_id", task_id)
        with self.db.read() as unit:
            _require_all(unit, [task_id])
            return store.dependents(unit, task_id)

    def edges(self) -> builtins.list[tuple[int, int]]:
        """Every dependency as `(task_id, depends_on_id)`."""
        with self.db.read() as unit:
            return store.edges(unit)

    def increment_stuck(self, task_id: int) -> int:
        """Count one more session that ended without progress; returns the new count."""
        task_id = check.positive_int("task_id", task_id)
        with self.db.write() as unit:
            count = store.increment_stuck(unit, task_id)
            if count is None:
                raise NotFoundError("task", task_id)
            return count

    def reset_stuck(self, task_id: int) -> None:
        """Set a task's stuck count back to zero."""
        task_id = check.positive_int("task_id", task_id)
        with self.db.write() as unit:
            if not store.reset_stuck(unit, task_id):
                raise NotFoundError("task", task_id)

    def delete(self, task_id: int) -> None:
        """Remove a task and its comments; refused while other tasks depend on it."""
        task_id = check.positive_int("task_id", task_id)
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
        page = check.arguments(Page, {"limit": limit}, "next_runnable")
        with self.db.read() as unit:
            return store.next_runnable(unit, page.limit)

    def claim_next(self) -> Task | None:
        """Take the next runnable task and mark it in_progress atomically: no two callers get the same one.

        A task whose stored text cannot be read stays pending and is passed over (logged), so that the
        others still run.
        """
        unreadable: set[int] = set()
        while True:
            try:
                with self.db.write() as unit:
                    return lifecycle.claim_next(unit, skip=unreadable)
            except UnreadableRowError as error:
                log.warning("the loop passes over %s", error)
                unreadable.add(error.row_id)

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
