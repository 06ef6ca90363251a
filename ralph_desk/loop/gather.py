"""Reading everything a session's prompt needs through the services, into one frozen `PromptInputs`.

All I/O of the prompt builder happens here; `prompt.render_prompt` then turns the inputs into text
without touching the database, the files or the clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from ralph_desk.domain.checks import Check, required_failures
from ralph_desk.domain.enums import DiffSide, LearningScope, Recipe, SessionOutcome, TaskStatus, Verb
from ralph_desk.domain.learnings import find_duplicate
from ralph_desk.domain.records import AgentSession, Feature, FeatureLearning, Signal, Task
from ralph_desk.domain.reviews import ReviewComment
from ralph_desk.loop.model import SessionPlan
from ralph_desk.loop.prompt import (
    LEARNINGS_FILE_TAIL_LINES,
    PROGRESS_TAIL_LINES,
    RECIPES_WITH_DONE_REPORTS,
    RECIPES_WITH_FEATURE_TASKS,
    RECIPES_WITH_LEARNINGS,
    RECIPES_WITH_PROBLEMS,
    RECIPES_WITH_PROGRESS,
    AnswerNote,
    ChangedFiles,
    Continuation,
    DependencyNote,
    FileRef,
    LearningNote,
    Overview,
    ProblemNote,
    PromptInputs,
    ReviewNote,
    StuckNote,
)
from ralph_desk.project import ProjectError, contained
from ralph_desk.services.container import Services
from ralph_desk.services.project_info import ProjectNotInitialisedError

__all__ = ["PromptInputs", "gather_inputs", "merge_learnings"]

# Sessions read per task for changed files and silent endings (newest first).
MAX_SESSIONS_READ = 50


def gather_inputs(
    services: Services,
    plan: SessionPlan,
    repo_root: Path,
    allowed_paths: Sequence[str] = (),
    checks: Sequence[Check] = (),
) -> PromptInputs:
    """Everything the prompt of `plan`'s session shows, read now; `repo_root` resolves file paths."""
    title, description = _project(services, repo_root)
    feature, task, recipe = plan.feature, plan.task, plan.recipe
    is_task = recipe is Recipe.TASK_EXECUTION and task is not None
    wants_learnings = is_task or recipe in RECIPES_WITH_LEARNINGS
    inputs = PromptInputs(
        recipe=recipe,
        enabled_tools=plan.enabled_tools,
        project_title=title,
        project_description=description,
        codebase_map=_codebase_map(services, repo_root),
        discipline=plan.discipline,
        feature=feature,
        feature_context_files=_file_refs(repo_root, feature.context_files) if feature else (),
        feature_knowledge_paths=_file_refs(repo_root, feature.knowledge_paths) if feature else (),
        extra_input=plan.extra_input,
        allowed_paths=tuple(allowed_paths),
        checks=tuple(checks),
    )
    if wants_learnings:
        inputs = _with_learnings(services, inputs, feature)
    if is_task or recipe in RECIPES_WITH_PROBLEMS:
        inputs = replace(inputs, problems=_problems(services, task, feature))
    if is_task or recipe in RECIPES_WITH_PROGRESS:
        inputs = replace(inputs, progress_tail=services.state_files.progress_tail(PROGRESS_TAIL_LINES))
    if is_task:
        assert task is not None
        return _with_task(services, inputs, task, plan.session_id, repo_root)
    return _with_project_view(services, inputs, recipe, feature)


def merge_learnings(
    feature_learnings: Iterable[FeatureLearning], signals: Iterable[Signal]
) -> tuple[LearningNote, ...]:
    """Feature learnings and `learned` signals as notes, near duplicates (Jaccard ≥ 0.8) merged into one.

    A merged note counts the hits of both and keeps the newer time; a signal and the feature learning
    copied from it (same task, same text) are one learning, not a confirmation.
    """
    kept_learnings = sorted(feature_learnings, key=lambda item: item.id)
    notes: list[LearningNote] = [
        LearningNote(
            text=item.text,
            source=item.source,
            created=item.created_at,
            ref=item.id,
            rationale=item.reason,
            hits=item.hit_count,
        )
        for item in kept_learnings
    ]
    origins: list[tuple[int | None, str]] = [(item.task_id, item.text.strip()) for item in kept_learnings]
    for signal in sorted(signals, key=lambda signal: signal.id):
        text = (signal.text or "").strip()
        if not text:
            continue
        duplicate = find_duplicate(text, ((index, note.text) for index, note in enumerate(notes)))
        if duplicate is None:
            notes.append(
                LearningNote(
                    text=text,
                    source="agent",
                    created=signal.created,
                    ref=signal.id,
                    kind=signal.kind,
                    rationale=signal.rationale,
                )
            )
            origins.append((signal.task_id, text))
            continue
        kept = notes[duplicate]
        same = origins[duplicate] == (signal.task_id, text)
        notes[duplicate] = LearningNote(
            text=kept.text,
            source=kept.source,
            created=max(kept.created, signal.created),
            ref=kept.ref,
            kind=kept.kind or signal.kind,
            rationale=kept.rationale or signal.rationale,
            hits=kept.hits if same else kept.hits + 1,
        )
    return tuple(notes)


# --- pieces -----------------------------------------------------------------------------------------------


def _project(services: Services, repo_root: Path) -> tuple[str, str]:
    try:
        project = services.project.get()
    except ProjectNotInitialisedError:
        return repo_root.name or "project", ""
    return project.title, project.description


def _codebase_map(services: Services, repo_root: Path) -> str | None:
    path = services.paths.codebase_map
    try:
        contained.checked(services.paths.root, path)
    except ProjectError:
        return None  # a link: the map is not the project's, and no agent is pointed at it
    if not path.is_file():
        return None
    try:
        return path.resolve().relative_to(repo_root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _file_refs(repo_root: Path, paths: Sequence[str]) -> tuple[FileRef, ...]:
    refs = []
    for path in paths:
        inside = contained.resolves_inside(repo_root, path)
        try:
            exists = inside and (repo_root / path).exists()
        except OSError:
            exists = False
        refs.append(FileRef(path, exists, inside))
    return tuple(refs)


def _with_learnings(services: Services, inputs: PromptInputs, feature: Feature | None) -> PromptInputs:
    signals = services.signals
    project_signals = signals.learnings(scope=LearningScope.PROJECT)
    project = merge_learnings((), project_signals)
    feature_notes: tuple[LearningNote, ...] = ()
    if feature is not None:
        # Every learning is also kept on its task's feature: its copy there shows only in its own scope.
        elsewhere = [*project_signals, *signals.learnings(feature=feature.name, scope=LearningScope.TASK)]
        copies = {(signal.task_id, (signal.text or "").strip()) for signal in elsewhere}
        own = [item for item in feature.learnings if (item.task_id, item.text.strip()) not in copies]
        feature_notes = merge_learnings(
            own, signals.learnings(feature=feature.name, scope=LearningScope.FEATURE)
        )
    feature_notes = not_shown(feature_notes, project)
    file_text = _entries_not_shown(services.state_files.read_learnings(), (*project, *feature_notes))
    lines = file_text.rstrip("\n").split("\n")
    return replace(
        inputs,
        project_learnings=project,
        feature_learnings=feature_notes,
        learnings_file_tail="\n".join(lines[-LEARNINGS_FILE_TAIL_LINES:]),
    )


def _entries_not_shown(text: str, shown: Sequence[LearningNote]) -> str:
    """learnings.txt without the entries (a `## time` heading and its text) that repeat a shown learning."""
    entries = re.split(r"(?m)^(?=## )", text)
    return "".join(
        entry
        for entry in entries
        if not (entry.startswith("## ") and _is_shown(entry.partition("\n")[2].strip(), shown))
    )


def not_shown(notes: Sequence[LearningNote], shown: Sequence[LearningNote]) -> tuple[LearningNote, ...]:
    """The notes that are not (near) duplicates of one already shown: a learning appears once in a prompt."""
    return tuple(note for note in notes if not _is_shown(note.text, shown))


def _is_shown(text: str, shown: Sequence[LearningNote]) -> bool:
    return find_duplicate(text, ((index, note.text) for index, note in enumerate(shown))) is not None


def _problems(services: Services, task: Task | None, feature: Feature | None) -> tuple[ProblemNote, ...]:
    flags: dict[int, Signal] = {}
    if task is not None:
        flags.update((flag.id, flag) for flag in services.signals.open_flags(task_id=task.id))
    if feature is not None:
        flags.update((flag.id, flag) for flag in services.signals.open_flags(feature=feature.name))
    if task is None and feature is None:
        flags.update((flag.id, flag) for flag in services.signals.open_flags())
    return tuple(
        ProblemNote(
            id=flag.id,
            task_id=flag.task_id,
            what=flag.what or "",
            severity=flag.severity or "info",
            category=flag.category or "",
            created=flag.created,
        )
        for flag in sorted(flags.values(), key=lambda flag: flag.id)
    )


def _with_task(
    services: Services, inputs: PromptInputs, task: Task, session_id: str, repo_root: Path
) -> PromptInputs:
    signals = services.signals
    own_signals = signals.for_task(task.id)
    continuation = signals.latest_continuation(task.id)
    dependencies = [services.tasks.get(dependency_id) for dependency_id in sorted(task.depends_on)]
    own_sessions = [
        session
        for session in services.sessions.list(task_id=task.id, limit=MAX_SESSIONS_READ)
        if session.id != session_id
    ]
    changed = [ChangedFiles(task.id, task.title, _files(own_sessions), this_task=True)]
    for dependency in dependencies:
        sessions = services.sessions.list(task_id=dependency.id, limit=MAX_SESSIONS_READ)
        changed.append(ChangedFiles(dependency.id, dependency.title, _files(sessions)))
    return replace(
        inputs,
        task=task,
        failed_checks=tuple(required_failures(services.checks.latest(task.id))) if inputs.checks else (),
        task_context_files=_file_refs(repo_root, task.context_files),
        task_learnings=not_shown(
            merge_learnings((), signals.learnings(task_id=task.id, scope=LearningScope.TASK)),
            (*inputs.project_learnings, *inputs.feature_learnings),
        ),
        dependencies=tuple(
            DependencyNote(
                dependency.id,
                dependency.title,
                dependency.status,
                _done_summary(services, dependency.id) if dependency.status is TaskStatus.DONE else None,
            )
            for dependency in dependencies
        ),
        continuation=Continuation(continuation.summary or "", continuation.remaining or "")
        if continuation is not None
        else None,
        stuck_notes=_stuck_notes(own_signals),
        silent_endings=sum(
            1
            for session in own_sessions
            if session.ended_at is not None
            and session.closing_verb is None
            and session.outcome in (SessionOutcome.STUCK.value, SessionOutcome.FAILED.value)
        ),
        answers=tuple(
            AnswerNote(ask.id, ask.question or "", ask.answer or "")
            for ask in signals.latest_answers(task.id)
            if ask.answer is not None
        ),
        review=tuple(_review_note(comment) for comment in services.reviews.requested(task.id)),
        changed_files=tuple(changed),
    )


def _review_note(comment: ReviewComment) -> ReviewNote:
    """A sent-back comment for the prompt; one on a removed line names its line in the old file."""
    if comment.side is DiffSide.OLD and comment.file is not None and comment.line is not None:
        return ReviewNote(comment.id, comment.file, comment.body, comment.author, comment.line)
    return ReviewNote(comment.id, comment.where, comment.body, comment.author)


def _done_summary(services: Services, task_id: int) -> str | None:
    """The summary of the task's last `done`, if it has one."""
    done = [signal for signal in services.signals.for_task(task_id) if signal.verb is Verb.DONE]
    return done[-1].summary if done else None


def _stuck_notes(signals: Sequence[Signal]) -> tuple[StuckNote, ...]:
    """The stuck reasons of the task's attempts since its last `done`."""
    last_done = max((signal.id for signal in signals if signal.verb is Verb.DONE), default=0)
    return tuple(
        StuckNote(signal.id, signal.reason)
        for signal in signals
        if signal.verb is Verb.STUCK and signal.id > last_done and signal.reason
    )


def _files(sessions: Iterable[AgentSession]) -> tuple[str, ...]:
    return tuple(sorted({path for session in sessions for path in session.changed_files}))


def _with_project_view(
    services: Services, inputs: PromptInputs, recipe: Recipe, feature: Feature | None
) -> PromptInputs:
    overview = Overview(
        features=tuple((item.name, item.display_name) for item in services.features.list()),
        disciplines=tuple((item.name, item.display_name) for item in services.disciplines.list()),
        status_counts=tuple(services.tasks.count_by_status().items()),
    )
    feature_tasks = (
        tuple(services.tasks.list(feature=feature.name))
        if feature is not None and recipe in RECIPES_WITH_FEATURE_TASKS
        else ()
    )
    done_reports = tuple(
        DependencyNote(task.id, task.title, task.status, _done_summary(services, task.id))
        for task in feature_tasks
        if task.status is TaskStatus.DONE and recipe in RECIPES_WITH_DONE_REPORTS
    )
    drafts = (
        tuple(services.tasks.list(status=TaskStatus.DRAFT, feature=feature.name if feature else None))
        if recipe is Recipe.ENRICHMENT
        else ()
    )
    return replace(
        inputs, overview=overview, feature_tasks=feature_tasks, done_reports=done_reports, draft_tasks=drafts
    )
