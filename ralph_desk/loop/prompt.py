"""The prompt of an agent session, rendered from gathered inputs: pure and deterministic (no I/O).

Same inputs give the same bytes: every list is sorted here, and no clock is read. The only times
that reach the prompt are those stored in data (the headings of progress.txt and learnings.txt).
Tool instructions are written only for the tools the session has (seed 001's coordination problem):
a session whose discipline takes a tool away never reads that tool's name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from string import Formatter

from ralph_desk.domain.checks import Check, CheckRun, failure_report
from ralph_desk.domain.checks import listing as checks_listing
from ralph_desk.domain.enums import (
    BlockerKind,
    FlagCategory,
    LearningKind,
    LearningScope,
    Recipe,
    Severity,
    SuggestionKind,
    TaskStatus,
    values,
)
from ralph_desk.domain.recipes import FIELD_RESTRICTIONS
from ralph_desk.domain.records import Discipline, Feature, Task, TaskSummary
from ralph_desk.domain.tools import REGISTRY, in_registry_order
from ralph_desk.loop.guidance import GUIDANCE

# --- caps: each section stays readable however much history a project has -------------------------
PROGRESS_TAIL_LINES = 40
LEARNINGS_FILE_TAIL_LINES = 40
MAX_LEARNINGS_PER_SCOPE = 30
MAX_FLAGS = 20
MAX_COMMENTS = 30
MAX_STUCK_REASONS = 5
MAX_CHANGED_FILES_PER_TASK = 50
MAX_LISTED_TASKS = 50
MAX_LISTED_NAMES = 50

TOOL_PREFIX = "mcp__ralph__"
SERVER_NAME = "ralph"
CLOSING_TOOLS: tuple[str, ...] = ("done", "partial", "stuck")
WORKING_TOOLS: tuple[str, ...] = ("ask", "flag", "learned", "suggest", "blocked")

RECIPE_TITLES: Mapping[Recipe, str] = {
    Recipe.BRAINDUMP: "Braindump: set up the project from unstructured input",
    Recipe.YAP: "Yap: a conversation about tasks",
    Recipe.RAMBLE: "Ramble: refine a feature",
    Recipe.DISCUSS: "Discuss: configure a discipline",
    Recipe.TASK_EXECUTION: "Task execution",
    Recipe.OPUS_REVIEW: "Review of a feature's progress",
    Recipe.ENRICHMENT: "Enrichment: promote draft tasks",
    Recipe.IDE: "IDE session",
    Recipe.UNDERSTAND: "Understand: map the codebase",
}

# Seed 000's purpose (and rationale) of each recipe.
RECIPE_PURPOSES: Mapping[Recipe, str] = {
    Recipe.BRAINDUMP: (
        "Parse the user's unstructured input into features, disciplines and tasks. This session creates "
        "the project skeleton: it does not modify existing data or execute tasks."
    ),
    Recipe.YAP: "Refine and create tasks within the existing features and disciplines.",
    Recipe.RAMBLE: "Discuss and refine a feature's design: what it is, how it is built, where it ends.",
    Recipe.DISCUSS: "Refine a discipline: its persona, skills and conventions.",
    Recipe.TASK_EXECUTION: "Execute one task.",
    Recipe.OPUS_REVIEW: (
        "Review completed work, adjust priorities and record learnings. This review can adjust the plan "
        "(new tasks, priority changes, learnings) but does not restructure features or disciplines."
    ),
    Recipe.ENRICHMENT: "Add pseudocode and acceptance criteria to draft tasks, promoting them to pending.",
    Recipe.IDE: "Control the Ralph loop of this project from an IDE.",
    Recipe.UNDERSTAND: (
        "Map the codebase without changing it: its architecture, modules, entry points and conventions, "
        "so that later sessions start from an accurate picture."
    ),
}

# Which gathered sections each interactive recipe shows (task execution shows all of them).
RECIPES_WITH_LEARNINGS = frozenset({Recipe.RAMBLE, Recipe.ENRICHMENT, Recipe.OPUS_REVIEW})
RECIPES_WITH_FEATURE_TASKS = frozenset({Recipe.RAMBLE, Recipe.ENRICHMENT, Recipe.OPUS_REVIEW})
RECIPES_WITH_PROBLEMS = frozenset({Recipe.OPUS_REVIEW})
RECIPES_WITH_PROGRESS = frozenset({Recipe.OPUS_REVIEW})
RECIPES_WITH_DONE_REPORTS = frozenset({Recipe.OPUS_REVIEW})


# --- inputs -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileRef:
    """A file path a record names, and whether it exists in the repository."""

    path: str
    exists: bool = True
    inside: bool = True  # False: it leads out of the project (a link); the prompt says not to read it


@dataclass(frozen=True)
class LearningNote:
    """One learning as the prompt shows it: a `learned` signal or a feature learning, duplicates merged."""

    text: str
    source: str
    created: datetime
    ref: int
    kind: str | None = None
    rationale: str | None = None
    hits: int = 1


@dataclass(frozen=True)
class DependencyNote:
    """A task the planned task depends on, with the summary its `done` left."""

    id: int
    title: str
    status: TaskStatus
    summary: str | None = None


@dataclass(frozen=True)
class Continuation:
    """The last `partial` of the task: what was done, and what remains."""

    summary: str
    remaining: str


@dataclass(frozen=True)
class ReviewNote:
    """A reviewer's comment the task was sent back with: where in the diff, and what to change."""

    id: int
    where: str
    body: str
    author: str
    removed_line: int | None = None
    """For a comment on a removed line: its number in the old file (`where` then names the file only)."""

    @property
    def place(self) -> str:
        """Where the comment is, for the agent: `path:line`, a removed line of the old file, or the task."""
        if not self.where:
            return "The whole task"
        if self.removed_line is not None:
            return f"`{self.where}`, on the removed line {self.removed_line} of the old file"
        return f"`{self.where}`"


@dataclass(frozen=True)
class AnswerNote:
    """A human's answer to an `ask` of the task."""

    id: int
    question: str
    answer: str


@dataclass(frozen=True)
class ProblemNote:
    """An open flag of the task or its feature."""

    id: int
    task_id: int
    what: str
    severity: str
    category: str
    created: datetime


@dataclass(frozen=True)
class StuckNote:
    """Why an earlier attempt at the task got stuck."""

    id: int
    reason: str


@dataclass(frozen=True)
class ChangedFiles:
    """The files earlier sessions of one task changed (this task, or one of its dependencies)."""

    task_id: int
    title: str
    files: tuple[str, ...]
    this_task: bool = False


@dataclass(frozen=True)
class Overview:
    """The project at a glance, for the interactive recipes."""

    features: tuple[tuple[str, str], ...] = ()
    disciplines: tuple[tuple[str, str], ...] = ()
    status_counts: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class PromptInputs:
    """Everything one session's prompt is made of, read through the services beforehand."""

    recipe: Recipe
    enabled_tools: frozenset[str]
    project_title: str
    project_description: str = ""
    codebase_map: str | None = None
    discipline: Discipline | None = None
    feature: Feature | None = None
    feature_context_files: tuple[FileRef, ...] = ()
    feature_knowledge_paths: tuple[FileRef, ...] = ()
    task: Task | None = None
    task_context_files: tuple[FileRef, ...] = ()
    project_learnings: tuple[LearningNote, ...] = ()
    learnings_file_tail: str = ""
    feature_learnings: tuple[LearningNote, ...] = ()
    task_learnings: tuple[LearningNote, ...] = ()
    dependencies: tuple[DependencyNote, ...] = ()
    continuation: Continuation | None = None
    stuck_notes: tuple[StuckNote, ...] = ()
    silent_endings: int = 0
    answers: tuple[AnswerNote, ...] = ()
    review: tuple[ReviewNote, ...] = ()
    problems: tuple[ProblemNote, ...] = ()
    progress_tail: str = ""
    changed_files: tuple[ChangedFiles, ...] = ()
    extra_input: str | None = None
    overview: Overview = field(default_factory=Overview)
    feature_tasks: tuple[TaskSummary, ...] = ()
    done_reports: tuple[DependencyNote, ...] = ()
    draft_tasks: tuple[TaskSummary, ...] = ()
    allowed_paths: tuple[str, ...] = ()  # globs the agent may edit; empty: anywhere
    checks: tuple[Check, ...] = ()  # what the desk runs after done
    failed_checks: tuple[CheckRun, ...] = ()  # the required checks that failed after the last done


# --- entry point ----------------------------------------------------------------------------------------


def render_prompt(inputs: PromptInputs) -> str:
    """The session's prompt as Markdown; the same inputs always give the same text."""
    if inputs.recipe is Recipe.TASK_EXECUTION and inputs.task is not None:
        parts = _task_prompt(inputs)
    else:
        parts = _recipe_prompt(inputs)
    return "\n\n".join(part for part in parts if part) + "\n"


def tool_ref(name: str) -> str:
    """A tool as the agent calls it: `mcp__ralph__<name>` in backticks."""
    return f"`{TOOL_PREFIX}{name}`"


# --- task execution -----------------------------------------------------------------------------------


def _task_prompt(inputs: PromptInputs) -> list[str]:
    task = inputs.task
    assert task is not None
    return [
        failure_report(inputs.failed_checks) if inputs.failed_checks else "",
        _review_section(inputs.review),
        _answers_opening(inputs.answers),
        f"# Task #{task.id}: {task.title}",
        _task_intro(inputs, task),
        _role_section(inputs.discipline),
        _project_section(inputs),
        _feature_section(inputs),
        _learnings_section(inputs, task_scope=True),
        _task_section(inputs, task),
        _allowed_paths_section(inputs.allowed_paths),
        _dependencies_section(inputs.dependencies),
        _continuation_section(inputs, task),
        _problems_section(inputs.problems, task.id),
        _progress_section(inputs.progress_tail),
        _changed_files_section(inputs.changed_files),
        checks_listing(inputs.checks),
        _reporting_section(inputs.enabled_tools),
    ]


def _task_intro(inputs: PromptInputs, task: Task) -> str:
    reporting = (
        f"Report back only through the tools of the `{SERVER_NAME}` MCP server described at the end: the "
        "loop reads them after you exit, and anything you only say in your reply is lost."
        if inputs.enabled_tools & frozenset(CLOSING_TOOLS + WORKING_TOOLS)
        else "No reporting tools are available in this session: end with a short summary of what you did."
    )
    return (
        f'You are one session of a Ralph loop on the project "{inputs.project_title}". Your job is task '
        f"#{task.id} below and nothing else. Everything the loop knows about it is in this prompt; the "
        f"repository is your working directory. {reporting}"
    )


def _task_section(inputs: PromptInputs, task: Task) -> str:
    facts = [
        f"- Priority: {task.priority.value}",
        f"- Feature: {task.feature} · Discipline: {task.discipline}",
        f"- Origin: {task.origin.value}",
    ]
    if task.tags:
        facts.append(f"- Tags: {', '.join(task.tags)}")
    if task.estimated_turns is not None:
        facts.append(f"- Estimated turns: {task.estimated_turns}")
    lines = [f"## Your task: #{task.id} {task.title}", "\n".join(facts)]
    lines += _text_block("### Description", task.description)
    if task.acceptance_criteria:
        lines += ["### Acceptance criteria", _bullets(task.acceptance_criteria, marker="- [ ] ")]
    lines += _text_block("### Hints", task.hints)
    lines += _text_block("### Pseudocode", task.pseudocode)
    if inputs.task_context_files:
        lines += ["### Context files (read these first)", _file_refs(inputs.task_context_files)]
    if task.output_artifacts:
        lines += ["### Output artifacts (files this task produces)", _paths(task.output_artifacts)]
    lines += _comments(task)
    return "\n\n".join(lines)


def _comments(task: Task) -> list[str]:
    comments = sorted(task.comments, key=lambda comment: comment.id)
    if not comments:
        return []
    shown = comments[-MAX_COMMENTS:]
    lines = ["### Comments"]
    if len(comments) > len(shown):
        lines.append(f"({len(comments) - len(shown)} older comments not shown.)")
    items = []
    for comment in shown:
        about = ", ".join(part for part in (comment.discipline, comment.priority) if part)
        who = f"{comment.author} ({about})" if about else comment.author
        items.append(_bullet(f"**{who}:** {comment.body.strip()}"))
    lines.append("\n".join(items))
    return lines


def _allowed_paths_section(globs: Sequence[str]) -> str:
    if not globs:
        return ""
    return "\n\n".join(
        [
            "## Where you may edit",
            "Edit only files matching these paths (globs relative to the repository; `**` crosses folders):",
            "\n".join(f"- `{glob}`" for glob in globs),
            "An edit anywhere else is put aside after the session and raised as a blocking problem; if the "
            "task needs one, say so with a flag instead of making it.",
        ]
    )


def _dependencies_section(dependencies: Sequence[DependencyNote]) -> str:
    if not dependencies:
        return ""
    intro = "This task builds on these tasks; what their sessions reported:"
    return "\n\n".join(["## Done dependencies", intro, *_reports(dependencies)])


def _done_reports_section(reports: Sequence[DependencyNote]) -> str:
    if not reports:
        return ""
    intro = "What the sessions of the feature's done tasks reported when they finished:"
    return "\n\n".join(["## Done work", intro, *_reports(reports)])


def _reports(notes: Sequence[DependencyNote]) -> list[str]:
    ordered = sorted(notes, key=lambda note: note.id)
    lines: list[str] = []
    for note in ordered[:MAX_LISTED_TASKS]:
        status = "" if note.status is TaskStatus.DONE else f" (status: {note.status.value})"
        lines.append(f"### #{note.id} {note.title}{status}")
        lines.append(note.summary.strip() if note.summary else "(no summary was recorded)")
    if len(ordered) > MAX_LISTED_TASKS:
        lines.append(f"({len(ordered) - MAX_LISTED_TASKS} more not shown.)")
    return lines


def _continuation_section(inputs: PromptInputs, task: Task) -> str:
    lines: list[str] = []
    if inputs.continuation is not None:
        lines += [
            "An earlier session made progress on this task. Continue from where it stopped; do not redo "
            "finished work.",
            "### Done so far",
            inputs.continuation.summary.strip(),
            "### Remaining",
            inputs.continuation.remaining.strip(),
        ]
    stuck = sorted(inputs.stuck_notes, key=lambda note: note.id)
    if stuck:
        shown = stuck[-MAX_STUCK_REASONS:]
        lines.append("### Earlier attempts got stuck")
        if len(stuck) > len(shown):
            lines.append(f"({len(stuck) - len(shown)} older reasons not shown.)")
        lines.append("\n".join(_bullet(note.reason.strip()) for note in shown))
        lines.append("Try a different approach from theirs.")
    if inputs.silent_endings:
        sessions = _plural(inputs.silent_endings, "earlier session")
        lines.append(f"{sessions} of this task ended without a closing call (crashed or timed out).")
    if task.stuck_count and lines:
        lines.append(f"Attempts counted as stuck so far: {task.stuck_count}.")
    if not lines:
        return ""
    return "\n\n".join(["## Continuation", *lines])


def _review_section(review: Sequence[ReviewNote]) -> str:
    if not review:
        return ""
    lines = [
        f"- {note.place} ({note.author}): {note.body.strip()}"
        for note in sorted(review, key=lambda note: note.id)
    ]
    intro = (
        "Your earlier work on this task was reviewed and sent back. Make these changes first, on the work "
        "already in your working directory; then finish the task as usual."
    )
    return "\n\n".join(["## REVIEW from the human", intro, "\n".join(lines)])


def answer_opening(question: str) -> str:
    """How a prompt opens the human's answer to a question (what follows is the answer)."""
    return f"ANSWER to your question '{question.strip()}': "


def _answers_opening(answers: Sequence[AnswerNote]) -> str:
    """The human's answers open the prompt, one line each (seed 002: prepended to the next session)."""
    return "\n\n".join(
        answer_opening(note.question) + note.answer.strip()
        for note in sorted(answers, key=lambda note: note.id)
    )


def _problems_section(problems: Sequence[ProblemNote], task_id: int | None) -> str:
    if not problems:
        return ""
    ranked = sorted(problems, key=_problem_order)
    shown = ranked[:MAX_FLAGS]
    lines = ["## Known problems", "Reported by earlier sessions and not resolved yet, most serious first:"]
    items = []
    for note in shown:
        where = "this task" if note.task_id == task_id else f"task #{note.task_id}"
        items.append(_bullet(f"**{note.severity}** · {note.category} ({where}): {note.what.strip()}"))
    lines.append("\n".join(items))
    if len(ranked) > len(shown):
        lines.append(f"({len(ranked) - len(shown)} less serious or older problems not shown.)")
    return "\n\n".join(lines)


def _problem_order(note: ProblemNote) -> tuple[int, float, int]:
    rank = Severity(note.severity).rank if note.severity in values(Severity) else -1
    return (-rank, -_stamp(note.created), -note.id)


def _progress_section(tail: str) -> str:
    kept = _tail(tail, PROGRESS_TAIL_LINES)
    if not kept:
        return ""
    return "\n\n".join(["## Recent progress", "The last lines of `.ralph/progress.txt`:", _fenced(kept)])


def _changed_files_section(groups: Sequence[ChangedFiles]) -> str:
    shown = [group for group in groups if group.files]
    if not shown:
        return ""
    lines = ["## Files changed by earlier sessions"]
    for group in sorted(shown, key=lambda group: (not group.this_task, group.task_id)):
        title = "This task" if group.this_task else f"Task #{group.task_id} {group.title} (a dependency)"
        files = sorted(set(group.files))
        lines += [f"### {title}", _paths(files[:MAX_CHANGED_FILES_PER_TASK])]
        if len(files) > MAX_CHANGED_FILES_PER_TASK:
            lines.append(f"({len(files) - MAX_CHANGED_FILES_PER_TASK} more files not shown.)")
    return "\n\n".join(lines)


# --- the verbs: instructions for the enabled ones only --------------------------------------------------


def _verb_instructions(enabled: frozenset[str]) -> dict[str, str]:
    """One instruction per verb; a sentence naming another tool is kept only when that tool is enabled."""
    closers = [name for name in ("partial", "stuck") if name in enabled]
    also_close = f" — then also close with {_either(closers)}" if closers else ""
    done_note = (
        f" It takes effect only if you do not close with {tool_ref('done')}." if "done" in enabled else ""
    )
    return {
        "ask": (
            "when you need a human decision to do the task well. Set `blocking` to true if you cannot "
            f"proceed without the answer{also_close}: the task waits for the answer, and your next "
            "session receives it. Set it to false if you can continue on your best judgment."
        ),
        "flag": (
            "when you discover a problem (in this task's inputs, in earlier work, in the codebase). "
            f"`severity`: {_choices(Severity)}; `category`: {_choices(FlagCategory)}."
        ),
        "learned": (
            "to record knowledge a different task would benefit from — specific, not a diary. "
            f"`kind`: {_choices(LearningKind)}; `scope`: {_choices(LearningScope)} "
            f"(default {LearningScope.FEATURE.value}). Do not repeat the learnings listed above."
        ),
        "suggest": (
            "to recommend work outside this task's scope instead of doing it. "
            f"`kind`: {_choices(SuggestionKind)}; a {SuggestionKind.NEW_TASK.value} becomes a draft task "
            "that a human approves."
        ),
        "blocked": (
            "when something outside your control blocks part of the task. "
            f"`kind`: {BlockerKind.UPSTREAM_TASK.value} (another task is incomplete) or "
            f"{BlockerKind.EXTERNAL.value} (credentials, services, infrastructure, a human decision)."
            f"{done_note}"
        ),
        "done": (
            "when the task is fully complete and tested: every acceptance criterion met. The summary says "
            "what you did, with key decisions and outcomes; tasks that depend on this one read it."
        ),
        "partial": (
            "when you made progress but cannot finish in this session. Say what is done and, specifically, "
            "what remains and why you stopped: the next session on this task starts from it."
        ),
        "stuck": (
            "when you cannot make meaningful progress (or the task is obsolete). Say exactly what prevents "
            "progress; repeated stuck sessions make the task fail."
        ),
    }


def _reporting_section(enabled: frozenset[str]) -> str:
    instructions = _verb_instructions(enabled)
    working = [name for name in WORKING_TOOLS if name in enabled]
    closing = [name for name in CLOSING_TOOLS if name in enabled]
    if not working and not closing:
        return ""
    lines = [
        "## How to report back",
        f"You report through the tools of the `{SERVER_NAME}` MCP server; they always concern this task.",
    ]
    if working:
        lines.append("While you work (each as often as needed):")
        lines.append("\n".join(_bullet(f"{_signature(name)}: {instructions[name]}") for name in working))
    if closing:
        lines.append("To finish:")
        lines.append("\n".join(_bullet(f"{_signature(name)}: {instructions[name]}") for name in closing))
        lines.append(_closing_rule(closing))
    return "\n\n".join(lines)


def _closing_rule(closing: Sequence[str]) -> str:
    if len(closing) == 1:
        return (
            f"**Call {tool_ref(closing[0])} as your last action.** A session that ends without it "
            "counts as a failed attempt."
        )
    return (
        f"**Call exactly one of {_either(closing)} as your last action.** If you call more than one, the "
        "last one counts; a session that ends without one counts as a failed attempt."
    )


# --- other recipes ------------------------------------------------------------------------------------


def _recipe_prompt(inputs: PromptInputs) -> list[str]:
    recipe = inputs.recipe
    show_learnings = recipe in RECIPES_WITH_LEARNINGS
    return [
        f"# {RECIPE_TITLES[recipe]}",
        f'You are one session of a Ralph loop on the project "{inputs.project_title}". '
        f"{RECIPE_PURPOSES[recipe]}",
        _input_section(inputs.extra_input),
        _discipline_under_discussion(inputs.discipline)
        if recipe is Recipe.DISCUSS
        else _role_section(inputs.discipline),
        _project_section(inputs),
        _overview_section(inputs.overview),
        _feature_section(inputs),
        _learnings_section(inputs, task_scope=False) if show_learnings else "",
        _task_list(f"Tasks of feature `{inputs.feature.name}`", inputs.feature_tasks)
        if inputs.feature is not None and recipe in RECIPES_WITH_FEATURE_TASKS
        else "",
        _done_reports_section(inputs.done_reports) if recipe in RECIPES_WITH_DONE_REPORTS else "",
        _task_list("Draft tasks waiting for enrichment", inputs.draft_tasks)
        if recipe is Recipe.ENRICHMENT
        else "",
        _problems_section(inputs.problems, None) if recipe in RECIPES_WITH_PROBLEMS else "",
        _progress_section(inputs.progress_tail) if recipe in RECIPES_WITH_PROGRESS else "",
        _tools_section(inputs.enabled_tools, recipe),
        _guidance_section(inputs),
    ]


def _input_section(extra_input: str | None) -> str:
    if not extra_input or not extra_input.strip():
        return ""
    return "\n\n".join(["## Input", extra_input.strip("\n")])


def _discipline_under_discussion(discipline: Discipline | None) -> str:
    if discipline is None:
        return ""
    lines = [f"## Discipline under discussion: {discipline.display_name} (`{discipline.name}`)"]
    lines += _text_block("### System prompt", discipline.system_prompt)
    if discipline.skills:
        lines += ["### Skills", _bullets(discipline.skills)]
    lines += _text_block("### Conventions", discipline.conventions)
    if discipline.disabled_tools:
        shown = ", ".join(f"`{name}`" for name in in_registry_order(discipline.disabled_tools))
        lines += ["### Tools it takes away from its sessions", shown]
    if discipline.mcp_servers:
        names = sorted(server.name for server in discipline.mcp_servers)
        lines += ["### Extra MCP servers its sessions get", _bullets([f"`{name}`" for name in names])]
    return "\n\n".join(lines)


def _overview_section(overview: Overview) -> str:
    lines: list[str] = []
    if overview.features:
        lines += ["Features:", _name_list(overview.features)]
    if overview.disciplines:
        lines += ["Disciplines:", _name_list(overview.disciplines)]
    counts = [
        f"{status} {count}" for status, count in sorted(overview.status_counts, key=_status_order) if count
    ]
    if counts:
        lines.append(f"Tasks by status: {', '.join(counts)}.")
    if not lines:
        lines.append("The project has no features, disciplines or tasks yet.")
    return "\n\n".join(["## The project at a glance", *lines])


def _name_list(pairs: Iterable[tuple[str, str]]) -> str:
    ordered = sorted(pairs)
    items = [f"- `{name}` — {display}" for name, display in ordered[:MAX_LISTED_NAMES]]
    if len(ordered) > MAX_LISTED_NAMES:
        items.append(f"- … and {len(ordered) - MAX_LISTED_NAMES} more")
    return "\n".join(items)


def _task_list(title: str, tasks: Sequence[TaskSummary]) -> str:
    if not tasks:
        return ""
    ordered = sorted(tasks, key=lambda task: task.id)
    items = [
        f"- #{task.id} [{task.status.value}, {task.priority.value}] {task.title} "
        f"({task.feature} · {task.discipline})"
        for task in ordered[:MAX_LISTED_TASKS]
    ]
    if len(ordered) > MAX_LISTED_TASKS:
        items.append(f"- … and {len(ordered) - MAX_LISTED_TASKS} more")
    return "\n\n".join([f"## {title}", "\n".join(items)])


def _tools_section(enabled: frozenset[str], recipe: Recipe) -> str:
    names = in_registry_order(name for name in enabled if name in REGISTRY)
    if not names:
        return ""
    items = []
    for name in names:
        restricted = FIELD_RESTRICTIONS.get(recipe, {}).get(name)
        note = " In this session it may change only the fields listed." if restricted is not None else ""
        items.append(_bullet(f"{_signature(name, restricted)}: {REGISTRY[name].description}{note}"))
    return "\n\n".join(
        [
            "## Tools",
            f"Only these tools of the `{SERVER_NAME}` MCP server are available in this session:",
            "\n".join(items),
        ]
    )


def _guidance(recipe: Recipe, feature: str | None, discipline: str | None) -> list[tuple[str, set[str]]]:
    """The recipe's steps, filled in, each with the tools it names."""
    subjects = {
        "feature": f"the feature `{feature}`" if feature else "the feature the input is about",
        "discipline": f"the discipline `{discipline}`" if discipline else "the discipline the input is about",
    }
    steps = []
    for template in GUIDANCE.get(recipe, ()):
        named = {field for _, field, _, _ in Formatter().parse(template) if field}
        tools = named - subjects.keys()
        steps.append((template.format(**subjects, **{name: tool_ref(name) for name in tools}), tools))
    return steps


def _guidance_section(inputs: PromptInputs) -> str:
    feature = inputs.feature.name if inputs.feature else None
    discipline = inputs.discipline.name if inputs.discipline else None
    steps = [
        text for text, tools in _guidance(inputs.recipe, feature, discipline) if tools <= inputs.enabled_tools
    ]
    if not steps:
        return ""
    return "\n\n".join(
        ["## What to do", "\n".join(f"{index}. {text}" for index, text in enumerate(steps, 1))]
    )


# --- sections shared by all recipes ------------------------------------------------------------------


def _role_section(discipline: Discipline | None) -> str:
    if discipline is None:
        return ""
    lines = [f"## Your role: {discipline.display_name}"]
    if discipline.system_prompt and discipline.system_prompt.strip():
        lines.append(discipline.system_prompt.strip("\n"))
    if discipline.skills:
        lines += ["### Skills", _bullets(discipline.skills)]
    lines += _text_block("### Conventions", discipline.conventions)
    return "\n\n".join(lines)


def _project_section(inputs: PromptInputs) -> str:
    lines = [f"## Project: {inputs.project_title}"]
    if inputs.project_description.strip():
        lines.append(inputs.project_description.strip("\n"))
    if inputs.codebase_map and inputs.recipe is not Recipe.UNDERSTAND:
        lines.append(f"A map of the codebase is in `{inputs.codebase_map}`.")
    return "\n\n".join(lines)


def _feature_section(inputs: PromptInputs) -> str:
    feature = inputs.feature
    if feature is None:
        return ""
    lines = [f"## Feature: {feature.display_name} (`{feature.name}`)"]
    if feature.description and feature.description.strip():
        lines.append(feature.description.strip("\n"))
    if feature.dependencies:
        lines.append(
            f"Builds on the features: {', '.join(f'`{name}`' for name in sorted(feature.dependencies))}."
        )
    lines += _text_block("### Architecture", feature.architecture)
    lines += _text_block("### Boundaries", feature.boundaries)
    if inputs.feature_context_files:
        lines += ["### Context files", _file_refs(inputs.feature_context_files)]
    if inputs.feature_knowledge_paths:
        lines += [
            "### Knowledge (documents that explain the feature)",
            _file_refs(inputs.feature_knowledge_paths),
        ]
    return "\n\n".join(lines)


def _learnings_section(inputs: PromptInputs, task_scope: bool) -> str:
    lines: list[str] = []
    project = _learning_list(inputs.project_learnings)
    file_tail = _tail(inputs.learnings_file_tail, LEARNINGS_FILE_TAIL_LINES)
    if project or file_tail:
        lines.append("### Project (always relevant)")
        lines += project
        if file_tail:
            lines += ["The latest entries of `.ralph/learnings.txt`:", _fenced(file_tail)]
    feature = _learning_list(inputs.feature_learnings)
    if feature:
        name = inputs.feature.name if inputs.feature else "this feature"
        lines += [f"### Feature `{name}`", *feature]
    task = _learning_list(inputs.task_learnings) if task_scope else []
    if task:
        lines += ["### This task (from earlier attempts)", *task]
    if not lines:
        return ""
    return "\n\n".join(["## Learnings", "Most confirmed first, then newest.", *lines])


def _learning_list(notes: Sequence[LearningNote]) -> list[str]:
    if not notes:
        return []
    ranked = sorted(notes, key=lambda note: (-note.hits, -_stamp(note.created), note.source, -note.ref))
    shown = ranked[:MAX_LEARNINGS_PER_SCOPE]
    items = []
    for note in shown:
        text = f"[{note.kind}] {note.text.strip()}" if note.kind else note.text.strip()
        if note.rationale and note.rationale.strip():
            text += f" Why: {note.rationale.strip()}"
        meta = [note.source] if note.source != "agent" else []
        if note.hits > 1:
            meta.append(f"confirmed {note.hits} times")
        if meta:
            text += f" ({', '.join(meta)})"
        items.append(_bullet(text))
    result = ["\n".join(items)]
    if len(ranked) > len(shown):
        result.append(f"({len(ranked) - len(shown)} more not shown.)")
    return result


# --- small helpers ---------------------------------------------------------------------------------------


def _signature(name: str, only: frozenset[str] | None = None) -> str:
    """`mcp__ralph__name(a, b?)`: required parameters plain, optional ones with a question mark."""
    fields = REGISTRY[name].input_model.model_fields
    params = [
        key if info.is_required() else f"{key}?"
        for key, info in fields.items()
        if only is None or key in only
    ]
    return f"`{TOOL_PREFIX}{name}({', '.join(params)})`"


def _either(names: Sequence[str]) -> str:
    refs = [tool_ref(name) for name in names]
    if len(refs) <= 1:
        return "".join(refs)
    return f"{', '.join(refs[:-1])} or {refs[-1]}"


def _choices(enum: type[StrEnum]) -> str:
    return " | ".join(values(enum))


def _text_block(heading: str, text: str | None) -> list[str]:
    if text is None or not text.strip():
        return []
    return [heading, text.strip("\n")]


def _bullet(text: str, marker: str = "- ") -> str:
    """A list item; the lines after the first are indented to stay inside it."""
    first, *rest = text.strip("\n").split("\n")
    indent = " " * len(marker)
    return "\n".join([marker + first, *(indent + line if line.strip() else "" for line in rest)])


def _bullets(items: Iterable[str], marker: str = "- ") -> str:
    return "\n".join(_bullet(item, marker) for item in items)


def _paths(paths: Iterable[str]) -> str:
    return "\n".join(f"- `{path}`" for path in paths)


def _file_refs(refs: Iterable[FileRef]) -> str:
    return "\n".join(f"- `{ref.path}`{_file_note(ref)}" for ref in refs)


def _file_note(ref: FileRef) -> str:
    if not ref.inside:
        return " (leads outside the project through a link: do not read it)"
    return "" if ref.exists else " (not found in the repository)"


def _tail(text: str, lines: int) -> str:
    kept = text.rstrip("\n").split("\n")[-lines:] if text.strip() else []
    return "\n".join(kept).strip("\n")


def _fenced(text: str) -> str:
    """Text in a code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _stamp(moment: datetime) -> float:
    """A sort key for a stored time (naive times are UTC, as the store keeps them)."""
    naive = moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment
    return (naive - datetime(1970, 1, 1)).total_seconds()


def _status_order(pair: tuple[str, int]) -> int:
    statuses = values(TaskStatus)
    return statuses.index(pair[0]) if pair[0] in statuses else len(statuses)
