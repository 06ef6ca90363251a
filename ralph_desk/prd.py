"""`prd.json` in the common Ralph format: import its user stories as tasks, export tasks as stories.

The format::

    {"project": "...", "branchName": "...", "description": "...",
     "userStories": [{"id": "US-001", "title": "...", "description": "...",
                      "acceptanceCriteria": ["..."], "priority": 1, "passes": false, "notes": "..."}]}

Priorities: a story's whole-number priority (1 = most urgent) maps to our levels as
1 → critical, 2 → high, 3 → medium, 4 and above → low; on export critical → 1, high → 2,
medium → 3, low → 4. Stories are imported in priority order (ties in file order), so that an
export, which orders by level and then task id, keeps their order.

Each imported task keeps its story id as the tag `prd:<id>`, so a second import updates those tasks
instead of adding new ones. Exported tasks without such a tag get the id `T-<task id>`, which a
later import matches back to the same task. `passes: true` means done; `notes` are the task's hints
(exported as "" when there are none). A document's `project` becomes the project's title while that
is still the folder's name.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ralph_desk.domain.enums import Priority, TaskOrigin, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.listing import ItemError
from ralph_desk.domain.records import Task
from ralph_desk.domain.text import STORABLE_WORDING, unstorable
from ralph_desk.domain.tools import MAX_ITEMS, MAX_SHORT_TEXT, MAX_TEXT
from ralph_desk.project import ProjectError, contained, read_config, update_config
from ralph_desk.services.errors import NotFoundError
from ralph_desk.store.errors import StoreDataError

if TYPE_CHECKING:
    from ralph_desk.services.container import Services

TAG_PREFIX = "prd:"
GENERAL = "general"
MAX_STORY_ID = 100
EXPORT_ID = re.compile(r"^T-0*(\d+)$")

LEVEL_BY_RANK: Mapping[int, Priority] = {1: Priority.CRITICAL, 2: Priority.HIGH, 3: Priority.MEDIUM}
RANK_BY_LEVEL: Mapping[Priority, int] = {
    Priority.CRITICAL: 1,
    Priority.HIGH: 2,
    Priority.MEDIUM: 3,
    Priority.LOW: 4,
}


class PrdError(ValueError):
    """A prd.json that cannot be used; the message names the file and the place in it."""


def level_of(rank: int) -> Priority:
    """Our priority level for a story's whole-number priority (1 = most urgent)."""
    return LEVEL_BY_RANK.get(rank, Priority.LOW)


def rank_of(level: Priority) -> int:
    """A story's whole-number priority for one of our levels."""
    return RANK_BY_LEVEL[level]


@dataclass(frozen=True)
class Story:
    """One user story of a prd.json."""

    id: str
    title: str
    description: str = ""
    acceptance_criteria: tuple[str, ...] = ()
    priority: int = 3
    passes: bool = False
    notes: str | None = None


@dataclass(frozen=True)
class PrdDocument:
    """A parsed, checked prd.json."""

    project: str | None
    branch_name: str | None
    description: str | None
    stories: tuple[Story, ...]


@dataclass
class ImportResult:
    """The task ids an import created, updated and left as they were."""

    created: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)
    unchanged: list[int] = field(default_factory=list)


# --- reading -------------------------------------------------------------------------------------


class _Checker:
    """Collects every problem of a document, each named by its JSON path."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[str] = []

    def problem(self, path: str, message: str) -> None:
        self.problems.append(f"{path}: {message}")

    def text(self, data: Mapping[str, Any], key: str, path: str, required: bool, limit: int) -> str | None:
        where = f"{path}.{key}" if path else key
        return self.value_text(data.get(key), where, required, limit)

    def value_text(self, value: Any, where: str, required: bool, limit: int) -> str | None:
        if value is None:
            if required:
                self.problem(where, "missing")
            return None
        if not isinstance(value, str):
            self.problem(where, f"must be a text, not {_kind(value)}")
            return None
        if required and not value.strip():
            self.problem(where, "must not be empty")
            return None
        if len(value) > limit:
            self.problem(where, f"has {len(value)} characters; at most {limit} allowed")
            return None
        if "\x00" in value:
            self.problem(where, "contains a NUL character")
            return None
        if (why := unstorable(value)) is not None:
            self.problem(where, f"holds {why}; allowed: {STORABLE_WORDING}")
            return None
        return value

    def raise_if_any(self) -> None:
        if self.problems:
            shown = self.problems[:20]
            more = f" (and {len(self.problems) - 20} more)" if len(self.problems) > 20 else ""
            raise PrdError(f"{self.source}: " + "; ".join(shown) + more)


def _kind(value: Any) -> str:
    return {
        bool: "true/false",
        int: "a number",
        float: "a number",
        str: "a text",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def parse(data: Any, source: str = "prd.json") -> PrdDocument:
    """Check a loaded prd.json; PrdError lists every problem by its path (e.g. `userStories[3].title`)."""
    checker = _Checker(source)
    if not isinstance(data, dict):
        checker.problem("(top level)", f"must be an object with userStories, not {_kind(data)}")
        checker.raise_if_any()
    project = checker.text(data, "project", "", required=False, limit=200)
    branch = checker.text(data, "branchName", "", required=False, limit=250)
    description = checker.text(data, "description", "", required=False, limit=MAX_TEXT)
    raw_stories = data.get("userStories")
    stories: list[Story] = []
    if raw_stories is None:
        checker.problem("userStories", "missing")
    elif not isinstance(raw_stories, list):
        checker.problem("userStories", f"must be a list, not {_kind(raw_stories)}")
    else:
        seen: dict[str, int] = {}
        for index, raw in enumerate(raw_stories):
            story = _story(checker, raw, f"userStories[{index}]")
            if story is None:
                continue
            if story.id in seen:
                checker.problem(
                    f"userStories[{index}].id", f"{story.id!r} repeats userStories[{seen[story.id]}].id"
                )
            seen.setdefault(story.id, index)
            stories.append(story)
    checker.raise_if_any()
    return PrdDocument(project, branch, description, tuple(stories))


def _story(checker: _Checker, raw: Any, path: str) -> Story | None:
    if not isinstance(raw, dict):
        checker.problem(path, f"must be an object, not {_kind(raw)}")
        return None
    before = len(checker.problems)
    story_id = checker.text(raw, "id", path, required=True, limit=MAX_STORY_ID)
    if story_id is not None and (story_id != story_id.strip() or any(c.isspace() for c in story_id)):
        checker.problem(f"{path}.id", f"{story_id!r} must not contain spaces or line breaks")
    title = checker.text(raw, "title", path, required=True, limit=MAX_SHORT_TEXT)
    description = checker.text(raw, "description", path, required=False, limit=MAX_TEXT)
    notes = checker.text(raw, "notes", path, required=False, limit=MAX_TEXT)
    criteria = _criteria(checker, raw.get("acceptanceCriteria"), f"{path}.acceptanceCriteria")
    priority = raw.get("priority", 3)
    if isinstance(priority, bool) or not isinstance(priority, int) or priority < 1:
        checker.problem(
            f"{path}.priority", f"{json.dumps(priority)} is not allowed; allowed: a whole number ≥ 1"
        )
    passes = raw.get("passes", False)
    if not isinstance(passes, bool):
        checker.problem(f"{path}.passes", f"{json.dumps(passes)} is not allowed; allowed: true or false")
    if len(checker.problems) > before:
        return None
    assert story_id is not None and title is not None
    return Story(
        id=story_id,
        title=title.strip(),
        description=description or "",
        acceptance_criteria=criteria,
        priority=priority,
        passes=passes,
        notes=notes if notes and notes.strip() else None,
    )


def _criteria(checker: _Checker, raw: Any, path: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        checker.problem(path, f"must be a list of texts, not {_kind(raw)}")
        return ()
    if len(raw) > MAX_ITEMS:
        checker.problem(path, f"has {len(raw)} items; at most {MAX_ITEMS} allowed")
        return ()
    checked = [
        checker.value_text(item, f"{path}[{index}]", required=True, limit=MAX_TEXT)
        for index, item in enumerate(raw)
    ]
    return tuple(item for item in checked if item is not None)


def load(path: Path) -> PrdDocument:
    """Read and check a prd.json file."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PrdError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise PrdError(f"{path}: cannot read it: {error}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise PrdError(
            f"{path}: not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}"
        ) from None
    except RecursionError:
        raise PrdError(f"{path}: lists and objects nest too deeply; a prd.json nests 3 levels") from None
    return parse(data, source=str(path))


# --- import --------------------------------------------------------------------------------------


def story_tag(story_id: str) -> str:
    """The tag that ties a task to its story."""
    return f"{TAG_PREFIX}{story_id}"


def _story_id_of(task: Task) -> str | None:
    return next((tag[len(TAG_PREFIX) :] for tag in task.tags if tag.startswith(TAG_PREFIX)), None)


def import_document(
    services: Services, document: PrdDocument, feature: str | None = None, discipline: str | None = None
) -> ImportResult:
    """Create or update one task per story (origin `import`) in one transaction: all stories or none."""
    with services.transaction():
        result = _import_stories(services, document, feature, discipline)
    _adopt_project_details(services, document)
    return result


def _import_stories(
    services: Services, document: PrdDocument, feature: str | None, discipline: str | None
) -> ImportResult:
    feature_name = _known_or_general(services, "feature", feature)
    discipline_name = _known_or_general(services, "discipline", discipline)
    listed = services.tasks.list()
    if listed.errors:  # a task left out could be the one a story updates: refuse rather than duplicate it
        raise StoreDataError("; ".join(str(error) for error in listed.errors))
    tasks = [services.tasks.get(summary.id) for summary in listed]
    by_story = _tagged(tasks)
    claimed = {by_story[story.id].id for story in document.stories if story.id in by_story}
    by_id = {task.id: task for task in tasks if task.id not in claimed}
    ordered = sorted(enumerate(document.stories), key=lambda item: (item[1].priority, item[0]))
    result = ImportResult()
    for _, story in ordered:
        tagged = by_story.get(story.id)
        existing = tagged or _exported_task(story.id, by_id)
        if existing is None:
            if not result.created:  # the default feature and discipline only when a task needs them
                _ensure_general(services, feature_name, discipline_name)
            task = services.tasks.create(
                feature=feature_name,
                discipline=discipline_name,
                title=story.title,
                description=story.description or None,
                priority=level_of(story.priority),
                status=TaskStatus.DONE if story.passes else TaskStatus.PENDING,
                acceptance_criteria=list(story.acceptance_criteria),
                tags=[story_tag(story.id)],
                hints=story.notes,
                origin=TaskOrigin.IMPORT,
            )
            result.created.append(task.id)
        elif _update(services, existing, story, keep_tags=tagged is None):
            result.updated.append(existing.id)
        else:
            result.unchanged.append(existing.id)
    _adopt_project_text(services, document)
    return result


def _adopt_project_text(services: Services, document: PrdDocument) -> None:
    """Take the document's project name where the title is still the folder's (what `init` gave it), and
    its description where the project has none: an export then gives both back."""
    project = services.project.get()
    title, description = project.title, project.description
    if document.project and document.project.strip() and title == services.paths.root.name:
        title = document.project.strip()
    if document.description and not description:
        description = document.description
    if (title, description) != (project.title, project.description):
        services.project.set(title, description)


def _adopt_project_details(services: Services, document: PrdDocument) -> None:
    """Take the document's branch where the project has none yet."""
    if document.branch_name and document.branch_name.strip():
        try:
            if read_config(services.paths).base_branch is None:
                update_config(services.paths, base_branch=document.branch_name)
        except ProjectError:
            return


def _tagged(tasks: list[Task]) -> dict[str, Task]:
    """Each story id a task's tag holds, and the task: of several with the same tag, the lowest id."""
    found: dict[str, Task] = {}
    for task in sorted(tasks, key=lambda task: task.id):
        story_id = _story_id_of(task)
        if story_id is not None:
            found.setdefault(story_id, task)
    return found


def _exported_task(story_id: str, by_id: Mapping[int, Task]) -> Task | None:
    """The task an exported id (`T-7`) names, unless a story of the document claims it by its tag."""
    match = EXPORT_ID.match(story_id)
    return by_id.get(int(match.group(1))) if match else None


def _known_or_general(services: Services, kind: str, name: str | None) -> str:
    if name is None or name == GENERAL:
        return GENERAL
    known = [
        item.name for item in (services.features.list() if kind == "feature" else services.disciplines.list())
    ]
    if name not in known:
        raise PrdError(f"--{kind} {name!r}: no such {kind}; known: {', '.join(known) or '(none)'}")
    return name


def _ensure_general(services: Services, feature: str, discipline: str) -> None:
    if feature == GENERAL:
        try:
            services.features.get(GENERAL)
        except NotFoundError:
            services.features.create(
                GENERAL, "General", description="Tasks imported from a prd.json without a feature."
            )
    if discipline == GENERAL:
        try:
            services.disciplines.get(GENERAL)
        except NotFoundError:
            services.disciplines.create(GENERAL, "General", icon="code", color="#64748b", acronym="GEN")


def _update(services: Services, task: Task, story: Story, keep_tags: bool) -> bool:
    """Bring a task in line with its story; whether anything changed.

    `keep_tags` for a task matched by its exported id (`T-7`): that id finds it again next time, so
    an export imported back changes nothing.
    """
    wanted: dict[str, Any] = {
        "title": story.title,
        "description": story.description or None,
        "priority": level_of(story.priority).value,
        "acceptance_criteria": list(story.acceptance_criteria),
        "hints": story.notes,
    }
    current: dict[str, Any] = {
        "title": task.title,
        "description": task.description,
        "priority": task.priority.value,
        "acceptance_criteria": list(task.acceptance_criteria),
        "hints": task.hints,
    }
    changes = {key: value for key, value in wanted.items() if current[key] != value}
    tag = story_tag(story.id)
    if not keep_tags and tag not in task.tags:
        changes["tags"] = [*task.tags, tag]
    if changes:
        services.tasks.update(task.id, **changes)
    status = _status_for(task.status, story.passes)
    if status is not None:
        services.tasks.move(task.id, status, Mover.IMPORT)
    return bool(changes) or status is not None


def _status_for(current: TaskStatus, passes: bool) -> TaskStatus | None:
    """The status a story's `passes` asks for, or None to keep the current one."""
    if passes and current is not TaskStatus.DONE:
        return TaskStatus.DONE
    if not passes and current is TaskStatus.DONE:
        return TaskStatus.PENDING
    return None


# --- export --------------------------------------------------------------------------------------


def export_document(services: Services) -> dict[str, Any]:
    """Every task but drafts as a prd.json document, most urgent first, then by id (unreadable ones out)."""
    return export(services)[0]


def export(services: Services) -> tuple[dict[str, Any], tuple[ItemError, ...]]:
    """`export_document`, and an error for each task left out because its stored text cannot be read."""
    project = services.project.get()
    listed = services.tasks.list()
    summaries = [summary for summary in listed if summary.status is not TaskStatus.DRAFT]
    summaries.sort(key=lambda summary: (-summary.priority.rank, summary.id))
    tasks: list[Task] = []
    errors = list(listed.errors)
    for summary in summaries:
        try:
            tasks.append(services.tasks.get(summary.id))
        except StoreDataError as error:
            errors.append(ItemError("task", summary.id, str(error)))
    stories = [_story_of(task, story_id) for task, story_id in zip(tasks, _story_ids(tasks), strict=True)]
    document = {
        "project": project.title,
        "branchName": _branch_name(services, project.title),
        "description": project.description,
        "userStories": stories,
    }
    return document, tuple(errors)


def _story_ids(tasks: list[Task]) -> list[str]:
    """One distinct id per task that an import takes back to the same task: its story's, else `T-<id>`.

    Of several tasks with the same story tag the lowest id keeps it, as an import matches them; a tag an
    import would refuse (spaces, too long) gives way to `T-<id>`, padded with zeros until distinct.
    """
    usable = {story_id: task.id for story_id, task in _tagged(tasks).items() if _is_story_id(story_id)}
    taken = set(usable)
    ids = []
    for task in tasks:
        story_id = _story_id_of(task)
        if story_id is None or usable.get(story_id) != task.id:
            story_id = f"T-{task.id:03d}"
            while story_id in taken:
                story_id = f"T-0{story_id[2:]}"
            taken.add(story_id)
        ids.append(story_id)
    return ids


def _is_story_id(text: str) -> bool:
    """Whether an import takes `text` as a story id."""
    return 0 < len(text) <= MAX_STORY_ID and not any(c.isspace() for c in text) and unstorable(text) is None


def _story_of(task: Task, story_id: str) -> dict[str, Any]:
    story: dict[str, Any] = {
        "id": story_id,
        "title": task.title,
        "description": task.description or "",
        "acceptanceCriteria": list(task.acceptance_criteria),
        "priority": rank_of(task.priority),
        "passes": task.status is TaskStatus.DONE,
        "notes": task.hints or "",  # always a text: the peers' loops read it with jq
    }
    return story


def _branch_name(services: Services, title: str) -> str:
    try:
        configured = read_config(services.paths).base_branch
    except ProjectError:
        configured = None
    if isinstance(configured, str) and configured:
        return configured
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return f"ralph/{slug or 'project'}"


def write(path: Path, document: Mapping[str, Any], root: Path | None = None) -> None:
    """Write a prd.json document (the whole file replaced at once), never through a link.

    With `root`, no folder between it and `path` may be a link either (`.ralph/prd.json`).
    """
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    target = Path(os.path.abspath(path))
    contained.write_text(root or target.parent, target, text)
