"""Settling a finished session: its task's status, dependencies, drafts, learnings and progress, at once."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ralph_desk.domain.enums import ChangeTopic, TaskStatus, Verb
from ralph_desk.domain.postprocess import Blocker
from ralph_desk.domain.records import FeatureLearning, Signal, Task
from ralph_desk.domain.tools import Text
from ralph_desk.services import features as features_service
from ralph_desk.services import lifecycle
from ralph_desk.services import tasks as tasks_service
from ralph_desk.services import validation as check
from ralph_desk.services.errors import InvalidValueError, NotFoundError, ServiceError
from ralph_desk.services.inbox import draft_fields, refuse_unless_draftable
from ralph_desk.services.signals import require_id, require_task, session_id_of
from ralph_desk.services.state_files import LEARNINGS, PROGRESS, StateFileService
from ralph_desk.store import comments as comments_store
from ralph_desk.store import signals as store
from ralph_desk.store import tasks as tasks_store
from ralph_desk.store.database import Database, UnitOfWork
from ralph_desk.store.writes import CommentWrite, TaskWrite

SETTLER = "ralph-desk"


@dataclass(frozen=True)
class UpstreamLink:
    """An upstream blocker of a session and the open task it names (None when there is none, and `why`)."""

    blocker: Blocker
    upstream_id: int | None
    why: str


@dataclass(frozen=True)
class Settlement:
    """What a finished session writes: its task's status and stuck count, dependencies, drafts, learnings."""

    status: TaskStatus
    count_stuck: bool = False
    links: Sequence[UpstreamLink] = ()
    suggestion_ids: Sequence[int] = ()
    learning_ids: Sequence[int] = ()
    """The session's `learned` signals to keep on the task's feature, in order."""
    read_ids: Sequence[int] = ()
    """Further signals of the session to hand back (the closing one, questions)."""
    project_learning_ids: Sequence[int] = ()
    """Those of `learning_ids` that learnings.txt gets too when new (a repeat only raises a count)."""
    progress: Callable[[Task, Mapping[int, Signal]], str] | None = None
    """The progress.txt line for the settled task and the session's signals, if one is wanted."""


@dataclass(frozen=True)
class StoredLearning:
    """A session's learning as kept on the feature, whether it was new, and its text."""

    signal_id: int
    learning: FeatureLearning
    is_new: bool
    text: str


@dataclass(frozen=True)
class Settled:
    """What settling a session wrote, and what it could not write (`notes` say why)."""

    task: Task
    signals: Mapping[int, Signal]
    added_dependencies: tuple[int, ...]
    unresolved_blockers: tuple[Blocker, ...]
    created_task_ids: tuple[int, ...]
    learnings: tuple[StoredLearning, ...]
    notes: tuple[str, ...]
    progress_line: str | None = None


class SettlingService:
    """Writes what a finished session's signals decided, in one transaction."""

    def __init__(self, db: Database, state_files: StateFileService | None = None) -> None:
        self.db = db
        self.state_files = state_files

    def settle(self, task_id: int, session_id: str, settlement: Settlement) -> Settled:
        """Write a finished session's outcome to its task in one transaction, and say what it wrote.

        Dependencies, stuck count, status, the draft tasks of its new_task suggestions and its
        learnings (a near-duplicate raises a hit count). A dependency, draft or learning that cannot
        be written is skipped with a note (a refused dependency also gets a comment on the task);
        the rest is written all together or not at all. Its new project learnings and progress line
        are appended to learnings.txt and progress.txt in the same unit, which holds the write lock
        (a separate unit per entry cost half a millisecond each).
        """
        session = session_id_of(session_id)
        notes: list[str] = []
        wants_files = settlement.progress is not None or bool(settlement.project_learning_ids)
        if wants_files and self.state_files is None:
            raise RuntimeError("settling with progress or project learnings needs the state files")
        line: str | None = None
        with self.db.write() as unit:
            facts = require_task(unit, task_id)
            wanted = {*settlement.suggestion_ids, *settlement.learning_ids, *settlement.read_ids}
            named = store.by_ids(unit, wanted, for_update=bool(settlement.suggestion_ids))
            added, unresolved = _link_upstream(unit, task_id, settlement.links, notes)
            task = lifecycle.settle(unit, task_id, facts.status, settlement.status, settlement.count_stuck)
            created = _create_drafts(unit, facts, settlement.suggestion_ids, named, notes)
            ours = {signal_id: signal for signal_id, signal in named.items() if signal.session_id == session}
            learnings = _keep_learnings(unit, facts, settlement.learning_ids, ours, notes)
            if self.state_files is not None:
                project = set(settlement.project_learning_ids)
                for stored in learnings:
                    if stored.is_new and stored.signal_id in project:
                        self.state_files.append_within(unit, LEARNINGS, stored.text)
                if settlement.progress is not None:
                    line = settlement.progress(task, ours)
                    self.state_files.append_within(unit, PROGRESS, line)
        return Settled(
            task=task,
            signals=ours,
            added_dependencies=tuple(added),
            unresolved_blockers=tuple(unresolved),
            created_task_ids=tuple(created),
            learnings=tuple(learnings),
            notes=tuple(notes),
            progress_line=line,
        )


def _link_upstream(
    unit: UnitOfWork, task_id: int, links: Sequence[UpstreamLink], notes: list[str]
) -> tuple[list[int], list[Blocker]]:
    """A dependency per resolved upstream blocker; the others stay as external blockers, with a comment."""
    added: list[int] = []
    unresolved: list[Blocker] = []
    for link in links:
        problem = link.why if link.upstream_id is None else _try_dependency(unit, task_id, link.upstream_id)
        if problem is None and link.upstream_id is not None:
            added.append(link.upstream_id)
            continue
        blocker = link.blocker
        note = (
            f"blocked on {blocker.on!r} (signal {blocker.signal_id}): no dependency added — {problem}; "
            "left for a person to resolve, like an external blocker"
        )
        notes.append(note)
        unresolved.append(blocker)
        try:
            fields: CommentWrite = {
                "author": SETTLER,
                "body": check.value(Text, "body", note),
                "discipline": None,
                "priority": None,
            }
            comments_store.add(unit, task_id, fields)
        except ServiceError as error:
            notes.append(f"could not comment on task #{task_id}: {error}")
    return added, unresolved


def _try_dependency(unit: UnitOfWork, task_id: int, upstream_id: int) -> str | None:
    try:
        tasks_service.add_dependency(unit, task_id, upstream_id)
    except ServiceError as error:
        return str(error)
    return None


def _create_drafts(
    unit: UnitOfWork,
    session_task: store.TaskFacts,
    suggestion_ids: Sequence[int],
    named: Mapping[int, Signal],
    notes: list[str],
) -> list[int]:
    """The draft task of each new_task suggestion (an existing one when already made); their ids, in order."""
    drafts: dict[int, TaskWrite] = {}
    existing: dict[int, int] = {}
    facts: dict[int, store.TaskFacts | None] = {session_task.id: session_task}
    for suggestion_id in suggestion_ids:
        if suggestion_id in drafts or suggestion_id in existing:
            continue
        try:
            suggestion = _suggestion(suggestion_id, named)
        except ServiceError as error:
            notes.append(f"suggestion {suggestion_id} made no draft task: {error}")
            continue
        if suggestion.created_task_id is not None:
            existing[suggestion_id] = suggestion.created_task_id
            continue
        if suggestion.task_id not in facts:
            facts[suggestion.task_id] = store.task_facts(unit, suggestion.task_id)
        source = facts[suggestion.task_id]
        assert source is not None, "a signal's task exists (signals are deleted with it)"
        drafts[suggestion_id] = draft_fields(unit, suggestion, source)
    made = dict(zip(drafts, tasks_store.create_many(unit, drafts.values()), strict=True))
    store.link_created_tasks(unit, made)
    if made:
        unit.touch(ChangeTopic.INBOX, *made)
    ids = {**existing, **made}
    return [ids[suggestion_id] for suggestion_id in dict.fromkeys(suggestion_ids) if suggestion_id in ids]


def _suggestion(signal_id: int, named: Mapping[int, Signal]) -> Signal:
    """The new_task suggestion `signal_id`, refused as `InboxService.create_suggested_task` refuses it."""
    require_id("signal_id", signal_id)
    suggestion = named.get(signal_id)
    if suggestion is None:
        raise NotFoundError(Verb.SUGGEST.value, signal_id)
    if suggestion.verb is not Verb.SUGGEST:
        raise InvalidValueError(
            "signal_id",
            signal_id,
            f"the id of a signal of verb {Verb.SUGGEST.value!r} "
            f"(signal {signal_id} has verb {suggestion.verb.value!r})",
        )
    refuse_unless_draftable(suggestion)
    return suggestion


def _keep_learnings(
    unit: UnitOfWork,
    facts: store.TaskFacts,
    learning_ids: Sequence[int],
    ours: Mapping[int, Signal],
    notes: list[str],
) -> list[StoredLearning]:
    """The session's learnings, kept on the task's feature (one read of its learnings for all of them)."""
    texts: list[tuple[int, str]] = []
    items: list[features_service.NewLearning] = []
    for signal_id in learning_ids:
        signal = ours.get(signal_id)
        if signal is None or not signal.text:
            notes.append(f"learning {signal_id} is not a learning of this session with a text; skipped")
            continue
        texts.append((signal_id, signal.text))
        items.append(features_service.NewLearning(signal.text, "agent", signal.rationale, facts.id))
    kept: list[StoredLearning] = []
    appended = (
        features_service.append_learnings(unit, facts.feature, items, facts.feature_id) if items else []
    )
    for (signal_id, text), result in zip(texts, appended, strict=True):
        if isinstance(result, ServiceError):
            notes.append(f"learning {signal_id} was not stored on feature {facts.feature!r}: {result}")
            continue
        learning, is_new = result
        kept.append(StoredLearning(signal_id, learning, is_new, text))
    return kept
