"""The demo project: Tidewater, a harbour tide-table web app, half-way through a Ralph loop.

Everything is made through the services, as the loop and the window would make it, so the demo
shows every part working without an agent: features with learnings, disciplines (one taking tools
away, one with an extra MCP server), tasks in every status, dependencies, comments, the eight
signal verbs, questions waiting for an answer, suggested tasks waiting for review, open flags,
past agent sessions with cost and transcripts, and the progress and learnings files.
The story itself is data, `resources/demo/tidewater.json`; this module builds it.
The result is the same on every run (apart from the times the database stamps).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from ralph_desk import resource_dir
from ralph_desk.domain.checks import Check, CheckPurpose
from ralph_desk.domain.enums import FlagCategory, Priority, Recipe, SessionOutcome, TaskStatus, Triage, Verb
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.project import (
    ProjectError,
    ProjectPaths,
    contained,
    init_project,
    remove_project,
    update_config,
)
from ralph_desk.services.container import Services
from ralph_desk.services.state_files import StateFileService

STORY_FILE = ("demo", "tidewater.json")
DEMO_AGENT = "rehearsal"
DEMO_CHECK = "demo-check"
"""The hidden command that runs the demo's check (`loop/rehearse.py`'s `check_labels`)."""
DEMO_CHECK_TIMEOUT_S = 60


@dataclass(frozen=True)
class DemoLearning:
    """A learning of a feature, with who recorded it and why."""

    text: str
    source: str
    reason: str


@dataclass(frozen=True)
class DemoFeature:
    """A feature of the demo project."""

    name: str
    display_name: str
    acronym: str
    description: str
    architecture: str
    boundaries: str
    context_files: tuple[str, ...]
    knowledge_paths: tuple[str, ...] = ()
    dependencies: tuple[str, ...] = ()
    learnings: tuple[DemoLearning, ...] = ()


@dataclass(frozen=True)
class DemoTask:
    """A task of the demo project; `key` names it within the story, `status` is where its story ends."""

    key: str
    feature: str
    discipline: str
    title: str
    status: TaskStatus
    priority: Priority
    description: str
    criteria: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    context_files: tuple[str, ...] = ()
    output_artifacts: tuple[str, ...] = ()
    hints: str | None = None
    estimated_turns: int | None = None
    pseudocode: str | None = None


@dataclass(frozen=True)
class DemoSignal:
    """A verb an agent called, with its arguments."""

    verb: Verb
    params: dict[str, Any]


@dataclass(frozen=True)
class DemoSession:
    """A past agent session: its task, the verbs it called, what it cost."""

    name: str
    task: str
    signals: tuple[DemoSignal, ...]
    cost_usd: float
    turns: int
    input_tokens: int
    output_tokens: int
    outcome: SessionOutcome
    changed_files: tuple[str, ...] = ()
    narration: str = ""
    minutes: int = 0
    answer: str | None = None  # the human's answer to the question this session asked


@dataclass(frozen=True)
class DemoRunning:
    """The session still running on the in-progress task: its signals, but no session row yet."""

    name: str
    task: str
    started: datetime
    signals: tuple[DemoSignal, ...]


@dataclass(frozen=True)
class DemoComment:
    """A comment on a task."""

    task: str
    author: str
    body: str
    discipline: str | None = None


@dataclass(frozen=True)
class DemoStep:
    """One step of a rehearsed session: what the agent says, then the verb it calls (if any)."""

    say: str
    verb: Verb | None = None
    params: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # written in the working folder before the verb


@dataclass(frozen=True)
class DemoStory:
    """The whole demo project, as the data file tells it."""

    title: str
    description: str
    clock: datetime
    agent: str
    model: str
    disciplines: tuple[dict[str, Any], ...]
    features: tuple[DemoFeature, ...]
    tasks: tuple[DemoTask, ...]
    sessions: tuple[DemoSession, ...]
    running: DemoRunning
    comments: tuple[DemoComment, ...]
    progress: tuple[str, ...]
    learnings_file: tuple[str, ...]
    rehearsal: dict[str, tuple[DemoStep, ...]] = field(default_factory=dict)  # task key → its session
    fixes: dict[str, tuple[DemoStep, ...]] = field(default_factory=dict)
    """Task key → the session it plays after its checks failed (the fix)."""
    answered: dict[str, tuple[DemoStep, ...]] = field(default_factory=dict)
    """Task key → the session it plays once the question its session asked is answered."""

    def rehearsal_of(
        self, title: str, checks_failed: bool = False, answered: Callable[[str], bool] = lambda _q: False
    ) -> tuple[DemoStep, ...] | None:
        """The rehearsed session of the story's task with this title (its fix after failed checks; its
        sequel once `answered` says its question was), if the story scripts one."""
        key = next((task.key for task in self.tasks if task.title == title), None)
        if key is None:
            return None
        if checks_failed and key in self.fixes:
            return self.fixes[key]
        steps = self.rehearsal.get(key)
        asked = [str(step.params.get("question", "")) for step in steps or () if step.verb is Verb.ASK]
        if steps is None or not any(answered(question) for question in asked):
            return steps
        sequel = self.answered.get(key)
        if sequel is not None:
            return sequel
        return tuple(
            step for step in steps if not (step.verb is Verb.ASK and answered(step.params["question"]))
        )


STORY_ADAPTER = TypeAdapter(DemoStory)


@cache
def story() -> DemoStory:
    """The demo's story, read and checked from its data file."""
    path = resource_dir().joinpath(*STORY_FILE)
    return STORY_ADAPTER.validate_json(path.read_bytes())


def create_demo(root: str | os.PathLike[str], db_url: str | None = None) -> ProjectPaths:
    """Create the Tidewater demo project in `root` (refused when `root/.ralph/` exists)."""
    paths = ProjectPaths.at(root)
    if paths.ralph.exists():
        raise ProjectError(f"{paths.ralph}: already exists; the demo needs a folder without a project")
    paths = init_project(paths.root, title=story().title, db_url=db_url)
    try:
        # The demo's loop rehearses (no model, no cost); a real agent is the person's explicit choice.
        # Its check is written through the desk's writer, so it is trusted like a check the person set.
        update_config(paths, agent=DEMO_AGENT, checks=[demo_check().model_dump()])
        services = Services.open(paths, db_url)
        try:
            if services.tasks.list(limit=1):
                raise ProjectError(
                    f"the database of {paths.root} already holds tasks; the demo needs an empty one"
                )
            build(services)
        finally:
            services.close()
    except BaseException:
        remove_project(paths)
        raise
    return paths


def own_command(command: str) -> list[str]:
    """How to start one of this installation's hidden commands (the frozen app is its own interpreter)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, command]
    # -P: the working folder is the project, which must never shadow ralph_desk's modules.
    return [sys.executable, "-P", "-m", "ralph_desk", command]


def demo_check() -> Check:
    """The demo's one check: the chart's high and low water labels sit on the right side of the curve."""
    argv = own_command(DEMO_CHECK)
    line = subprocess.list2cmdline(argv) if os.name == "nt" else shlex.join(argv)
    return Check(name="chart-labels", run=line, timeout_s=DEMO_CHECK_TIMEOUT_S)


def build(services: Services) -> None:
    """Fill an empty project with the demo's story."""
    demo = story()
    services.project.set(demo.title, demo.description)
    for spec in demo.disciplines:
        services.disciplines.create(**spec)
    _features(services, demo)
    ids = _tasks(services, demo)
    for comment in demo.comments:
        services.comments.add(ids[comment.task], comment.author, comment.body, discipline=comment.discipline)
    _sessions(services, demo, ids)
    _statuses(services, demo, ids)
    _inbox(services, demo, ids)
    _state_files(services, demo)
    # The check runs once as the project is made: its evidence is real, and `checks list` has a run to show.
    services.checks.run([demo_check()], services.paths.root, purpose=CheckPurpose.PROJECT)


def _features(services: Services, demo: DemoStory) -> None:
    for feature in demo.features:
        services.features.create(
            feature.name,
            feature.display_name,
            description=feature.description,
            acronym=feature.acronym,
            knowledge_paths=feature.knowledge_paths,
            context_files=feature.context_files,
            architecture=feature.architecture,
            boundaries=feature.boundaries,
            dependencies=feature.dependencies,
        )
        for learning in feature.learnings:
            services.features.append_learning(
                feature.name, learning.text, source=learning.source, reason=learning.reason
            )


def _tasks(services: Services, demo: DemoStory) -> dict[str, int]:
    ids: dict[str, int] = {}
    for task in demo.tasks:
        created = services.tasks.create(
            feature=task.feature,
            discipline=task.discipline,
            title=task.title,
            description=task.description,
            priority=task.priority,
            status=TaskStatus.DRAFT if task.status is TaskStatus.DRAFT else TaskStatus.PENDING,
            acceptance_criteria=task.criteria,
            depends_on=[ids[key] for key in task.depends_on],
            tags=task.tags,
            context_files=task.context_files,
            output_artifacts=task.output_artifacts,
            hints=task.hints,
            estimated_turns=task.estimated_turns,
            pseudocode=task.pseudocode,
        )
        ids[task.key] = created.id
    return ids


def _sessions(services: Services, demo: DemoStory, ids: dict[str, int]) -> None:
    tasks = {task.key: task for task in demo.tasks}
    loop_run = services.sessions.start_loop_run(
        demo.agent, max_iterations=30, max_cost_usd=10.0, allow_edits=True, settings={"model": demo.model}
    )
    started = demo.clock
    total = 0.0
    for iteration, session in enumerate(demo.sessions, start=1):
        task = tasks[session.task]
        session_id = f"{started:%Y%m%d-%H%M%S}-{session.name}"
        services.sessions.start_session(
            session_id,
            ids[session.task],
            Recipe.TASK_EXECUTION,
            demo.agent,
            model=demo.model,
            loop_run_id=loop_run.id,
            iteration=iteration,
            discipline=task.discipline,
            feature=task.feature,
            started_at=started,
        )
        # The session's calls spread over its minutes, as an agent would have made them.
        step = timedelta(minutes=session.minutes) / (len(session.signals) + 1)
        for number, signal in enumerate(session.signals, start=1):
            services.signals.record(
                ids[session.task],
                session_id,
                signal.verb,
                recorded_at=started + step * number,
                **signal.params,
            )
        if session.outcome is SessionOutcome.STUCK or session.outcome is SessionOutcome.FAILED:
            services.tasks.increment_stuck(ids[session.task])
        transcript = _write_transcript(services.paths, demo, session_id, started, session, ids[session.task])
        closing = next((s.verb for s in reversed(session.signals) if s.verb in _CLOSING), None)
        services.sessions.finish_session(
            session_id,
            ended_at=started + timedelta(minutes=session.minutes),
            exit_code=0,
            closing_verb=closing.value if closing else None,
            outcome=session.outcome.value,
            cost_usd=session.cost_usd,
            input_tokens=session.input_tokens,
            output_tokens=session.output_tokens,
            turns=session.turns,
            transcript_path=transcript,
            changed_files=list(session.changed_files),
        )
        total += session.cost_usd
        started += timedelta(minutes=session.minutes + 3)
    running = demo.running
    running_id = f"{running.started:%Y%m%d-%H%M%S}-{running.name}"
    for number, signal in enumerate(running.signals, start=1):
        at = running.started + timedelta(minutes=2 * number)
        services.signals.record(ids[running.task], running_id, signal.verb, recorded_at=at, **signal.params)
    services.sessions.update_loop_run(
        loop_run.id,
        state="stopped",
        iterations=len(demo.sessions),
        cost_usd=round(total, 2),
        stop_reason="stopped by the user while tasks wait for answers",
    )


_CLOSING = frozenset({Verb.DONE, Verb.PARTIAL, Verb.STUCK})


def _write_transcript(
    paths: ProjectPaths,
    demo: DemoStory,
    session_id: str,
    started: datetime,
    session: DemoSession,
    task_id: int,
) -> str:
    """A short stream-json transcript and its summary in `.ralph/logs/`; returns the project-relative path."""
    stem = f"{started:%Y%m%d-%H%M%S}_{session.name}"
    events: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init", "session_id": session_id, "model": demo.model, "cwd": "."},
        {
            "type": "assistant",
            "message": {
                "content": [{"type": "text", "text": session.narration or "Reading the task first."}]
            },
        },
    ]
    for number, signal in enumerate(session.signals, start=1):
        tool_id = f"toolu_{session.name}_{number}"
        events.append(
            {
                "type": "assistant",
                "message": {
                    "content": [
                        {
                            "type": "tool_use",
                            "id": tool_id,
                            "name": f"mcp__ralph__{signal.verb.value}",
                            "input": signal.params,
                        }
                    ]
                },
            }
        )
        events.append(
            {
                "type": "user",
                "message": {
                    "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": '{"ok": true}'}]
                },
            }
        )
    events.append(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "num_turns": session.turns,
            "total_cost_usd": session.cost_usd,
            "usage": {"input_tokens": session.input_tokens, "output_tokens": session.output_tokens},
        }
    )
    log_file = paths.logs_dir / f"{stem}.log"
    contained.write_text(paths.root, log_file, "".join(json.dumps(event) + "\n" for event in events))
    summary = {
        "session_id": session_id,
        "task_id": task_id,
        "recipe": Recipe.TASK_EXECUTION.value,
        "agent": demo.agent,
        "model": demo.model,
        "started_at": started.isoformat(),
        "outcome": session.outcome.value,
        "cost_usd": session.cost_usd,
        "turns": session.turns,
        "input_tokens": session.input_tokens,
        "output_tokens": session.output_tokens,
        "changed_files": list(session.changed_files),
    }
    contained.write_text(paths.root, paths.logs_dir / f"{stem}.json", json.dumps(summary, indent=2) + "\n")
    return Path(log_file).relative_to(paths.root).as_posix()


def _statuses(services: Services, demo: DemoStory, ids: dict[str, int]) -> None:
    """Move every task to where its story has it (a task first passes through in_progress, as in a loop)."""
    for task in demo.tasks:
        if task.status in (TaskStatus.DRAFT, TaskStatus.PENDING):
            continue
        if task.status is not TaskStatus.SKIPPED:
            services.tasks.move(ids[task.key], TaskStatus.IN_PROGRESS, Mover.IMPORT)
        services.tasks.move(ids[task.key], task.status, Mover.IMPORT)


def _inbox(services: Services, demo: DemoStory, ids: dict[str, int]) -> None:
    """Answer the story's questions, create the suggested drafts, acknowledge the rest, triage two flags."""
    for session in demo.sessions:
        if session.answer is None:
            continue
        services.tasks.move(ids[session.task], TaskStatus.NEEDS_INPUT, Mover.IMPORT)
        for ask in services.inbox.asks():
            if ask.task_id == ids[session.task]:
                services.inbox.answer(ask.id, session.answer)
    for suggestion in services.inbox.suggestions():
        if suggestion.kind == "new_task":
            services.inbox.create_suggested_task(suggestion.id)
        else:
            services.inbox.acknowledge_suggestion(suggestion.id)
    stale = next(flag for flag in services.inbox.flags(category=FlagCategory.STALE))
    services.inbox.triage(stale.id, Triage.RESOLVED)
    seen = next(flag for flag in services.inbox.flags(category=FlagCategory.INCOMPLETE_PRIOR))
    services.inbox.triage(seen.id, Triage.ACKNOWLEDGED)


def _state_files(services: Services, demo: DemoStory) -> None:
    moments = iter(demo.clock + timedelta(minutes=37 * step) for step in range(100))
    state = StateFileService(services.paths, services.db, clock=lambda: next(moments))
    for entry in demo.progress:
        state.append_progress(entry)
    for entry in demo.learnings_file:
        state.append_learning(entry)
