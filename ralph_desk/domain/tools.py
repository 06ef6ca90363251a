"""The one registry of MCP tools: names, categories, annotations and input models (no I/O)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    StrictBool,
    StringConstraints,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from ralph_desk.domain.enums import (
    BlockerKind,
    FlagCategory,
    LearningKind,
    LearningScope,
    LearningSource,
    Priority,
    Severity,
    SuggestionKind,
    TaskStatus,
    Verb,
)
from ralph_desk.domain.setting_bounds import MAX_ITERATIONS, MAX_PARALLEL, MAX_TURNS

MAX_TEXT = 20_000
MAX_ITEMS = 200
MAX_SHORT_TEXT = 500
MAX_PATH = 4_096
MAX_ID = 2**31 - 1
MAX_SESSION_ID = 128
MAX_AUTHOR = 200
MAX_DISPLAY_NAME = 200

TEXT_PATTERN = r"^[^\x00]*[^\s\x00][^\x00]*$"
NO_NUL_PATTERN = r"^[^\x00]*$"
LINE_PATTERN = r"^[^\r\n\x00]*[^\s\x00][^\r\n\x00]*$"
PATH_PATTERN = r"^[^\x00\r\n]+$"
NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
ACRONYM_PATTERN = r"^[A-Za-z0-9]{1,10}$"
COLOR_PATTERN = r"^#[0-9a-fA-F]{6}$"
ICON_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"

# What each pattern allows, in the words a refusal uses.
PATTERN_WORDING: Mapping[str, str] = MappingProxyType(
    {
        TEXT_PATTERN: "a non-empty text without NUL characters",
        NO_NUL_PATTERN: "a text without NUL characters",
        LINE_PATTERN: "a single non-blank line without NUL characters (options are stored one per line)",
        PATH_PATTERN: "a path on one line, without NUL characters",
        NAME_PATTERN: "1-64 characters of a-z, 0-9, '-' and '_', starting with a letter or digit",
        ACRONYM_PATTERN: "1-10 letters or digits, e.g. 'FE'",
        COLOR_PATTERN: "a hex colour '#rrggbb', e.g. '#3b82f6'",
        ICON_PATTERN: "an icon name: 1-64 letters, digits, '-', '_' or '.', e.g. 'code' or 'book-open'",
    }
)

Text = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT, pattern=TEXT_PATTERN)]
ClearableText = Annotated[str, StringConstraints(max_length=MAX_TEXT, pattern=NO_NUL_PATTERN)]
ShortText = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_SHORT_TEXT, pattern=NO_NUL_PATTERN),
]
DisplayName = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True, min_length=1, max_length=MAX_DISPLAY_NAME, pattern=NO_NUL_PATTERN
    ),
]
Author = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_AUTHOR, pattern=NO_NUL_PATTERN),
]
Line = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT, pattern=LINE_PATTERN)]
FilePath = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_PATH, pattern=PATH_PATTERN)
]
Name = Annotated[str, StringConstraints(strip_whitespace=True, pattern=NAME_PATTERN)]
Acronym = Annotated[str, StringConstraints(strip_whitespace=True, pattern=ACRONYM_PATTERN)]
Color = Annotated[str, StringConstraints(strip_whitespace=True, pattern=COLOR_PATTERN)]
Icon = Annotated[str, StringConstraints(strip_whitespace=True, pattern=ICON_PATTERN)]


def _not_a_bool(value: object) -> object:
    """Refuse true and false where a number is wanted (pydantic would take them as 1 and 0)."""
    if isinstance(value, bool):
        raise PydanticCustomError("int_type", "Input should be a valid integer, not a boolean")
    return value


Id = Annotated[int, Field(ge=1, le=MAX_ID), BeforeValidator(_not_a_bool)]
Turns = Annotated[int, Field(ge=1, le=MAX_TURNS), BeforeValidator(_not_a_bool)]
Offset = Annotated[int, Field(ge=0), BeforeValidator(_not_a_bool)]
Limit = Annotated[int, Field(ge=1, le=MAX_ITEMS), BeforeValidator(_not_a_bool)]
TextList = Annotated[list[Text], Field(max_length=MAX_ITEMS)]
ShortTextList = Annotated[list[ShortText], Field(max_length=MAX_ITEMS)]
LineList = Annotated[list[Line], Field(max_length=MAX_ITEMS)]
PathList = Annotated[list[FilePath], Field(max_length=MAX_ITEMS)]
IdList = Annotated[list[Id], Field(max_length=MAX_ITEMS)]
NameList = Annotated[list[Name], Field(max_length=MAX_ITEMS)]


@dataclass(frozen=True)
class OneOf:
    """An enum limited to some of its members: on the wire a list of their values, as a `Literal` would be.

    The value arrives as the enum member; a value outside is refused in the words of a `Literal`.
    """

    allowed: tuple[StrEnum, ...]

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        # A text made a member: described as a text field (with its title), not as a reference to the enum.
        member = core_schema.no_info_after_validator_function(type(self.allowed[0]), core_schema.str_schema())
        return core_schema.no_info_before_validator_function(self._check, member)

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {"enum": [member.value for member in self.allowed], "type": "string"}

    def _check(self, value: object) -> object:
        if isinstance(value, str) and value in self.allowed:
            return value
        shown = [repr(member.value) for member in self.allowed]
        expected = " or ".join(filter(None, (", ".join(shown[:-1]), shown[-1])))
        raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})


NewTaskStatus = Annotated[TaskStatus, OneOf((TaskStatus.DRAFT, TaskStatus.PENDING))]
SettableTaskStatus = Annotated[
    TaskStatus,
    OneOf(
        (
            TaskStatus.DRAFT,
            TaskStatus.PENDING,
            TaskStatus.IN_PROGRESS,
            TaskStatus.DONE,
            TaskStatus.BLOCKED,
            TaskStatus.SKIPPED,
        )
    ),
]
AgentName = Literal["claude", "codex", "command"]
HistoryType = Literal["iterations", "learnings"]


class ToolCategory(StrEnum):
    """The group a tool belongs to, in registry order."""

    TASK = "task"
    COMMENT = "comment"
    FEATURE = "feature"
    DISCIPLINE = "discipline"
    PROJECT = "project"
    STATE = "state"
    SIGNAL = "signal"
    LOOP = "loop"


class ToolInput(BaseModel):
    """The arguments of one tool; a subclass's docstring is that tool's description."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class ListTasksInput(ToolInput):
    """List tasks (id, title, status, priority, feature, discipline), optionally filtered."""

    filter_status: TaskStatus | None = Field(None, description="Only tasks in this status.")
    filter_feature: Name | None = Field(None, description="Only tasks of this feature (its name).")
    filter_discipline: Name | None = Field(None, description="Only tasks of this discipline (its name).")


class GetTaskInput(ToolInput):
    """Get one task with all its fields, comments and dependencies."""

    id: Id = Field(description="Task id.")


class CreateTaskInput(ToolInput):
    """Create a task in an existing feature and discipline, as draft or pending."""

    feature: Name = Field(description="Name of the feature the task belongs to.")
    discipline: Name = Field(description="Name of the discipline that does the task.")
    title: ShortText = Field(description="Short title saying what to do.")
    description: Text | None = Field(None, description="What to do and why, in detail.")
    priority: Priority | None = Field(None, description="How urgent the task is.")
    status: NewTaskStatus | None = Field(None, description="draft (needs enrichment first) or pending.")
    acceptance_criteria: TextList | None = Field(None, description="Checks that prove the task is done.")
    depends_on: IdList | None = Field(None, description="Ids of tasks that must be done first.")
    tags: ShortTextList | None = Field(None, description="Free-form labels.")
    context_files: PathList | None = Field(None, description="Files a session should read first.")
    output_artifacts: PathList | None = Field(None, description="Files the task is expected to produce.")
    hints: Text | None = Field(None, description="Tips for whoever does the task.")
    estimated_turns: Turns | None = Field(None, description="Expected number of agent turns.")


class UpdateTaskInput(ToolInput):
    """Change fields of a task; omitted fields keep their value, an empty list clears a list."""

    id: Id = Field(description="Task id.")
    title: ShortText | None = Field(None, description="New title.")
    description: ClearableText | None = Field(None, description="New description; empty clears it.")
    priority: Priority | None = Field(None, description="New priority.")
    acceptance_criteria: TextList | None = Field(None, description="New acceptance criteria (replaces all).")
    depends_on: IdList | None = Field(None, description="New dependency task ids (replaces all).")
    tags: ShortTextList | None = Field(None, description="New tags (replaces all).")
    context_files: PathList | None = Field(None, description="New context files (replaces all).")
    output_artifacts: PathList | None = Field(None, description="New output artifacts (replaces all).")
    hints: ClearableText | None = Field(None, description="New hints; empty clears them.")
    estimated_turns: Turns | None = Field(None, description="New expected number of agent turns.")


class SetTaskStatusInput(ToolInput):
    """Set the status of a task."""

    id: Id = Field(description="Task id.")
    status: SettableTaskStatus = Field(description="The new status.")


class EnrichTaskInput(ToolInput):
    """Add pseudocode to a draft task (and optionally criteria and context files), promoting it to pending."""

    id: Id = Field(description="Id of the draft task.")
    pseudocode: Text = Field(description="Step-by-step plan of the implementation.")
    acceptance_criteria: TextList | None = Field(None, description="Checks that prove the task is done.")
    context_files: PathList | None = Field(None, description="Files a session should read first.")


class SearchTasksInput(ToolInput):
    """Search task titles and descriptions and return the best matches."""

    query: ShortText = Field(description="Words to look for.")
    limit: int = Field(20, ge=1, le=MAX_ITEMS, description="Most tasks to return.")


class GetTaskChecksInput(ToolInput):
    """Get a task's checks: the configured ones, the latest run of each (status, exit code, output tail)."""

    task_id: Id = Field(description="Task id.")


class AddTaskCommentInput(ToolInput):
    """Add a comment to a task."""

    task_id: Id = Field(description="Task id.")
    author: Author = Field(description="Who writes the comment (e.g. human, opus, an agent name).")
    body: Text = Field(description="The comment text.")
    discipline: Name | None = Field(None, description="Discipline the comment speaks for.")
    priority: Priority | None = Field(None, description="How important the comment is.")


class ListFeaturesInput(ToolInput):
    """List features with their names and descriptions."""


class GetFeatureInput(ToolInput):
    """Get one feature with its architecture, boundaries, context files and learnings."""

    name: Name = Field(description="Feature name.")


class CreateFeatureInput(ToolInput):
    """Create a feature: an area of the product that tasks belong to."""

    name: Name = Field(description="Unique slug, e.g. auth or audit-log.")
    display_name: DisplayName = Field(description="Human-readable name.")
    description: Text | None = Field(None, description="What the feature is for.")
    acronym: Acronym | None = Field(None, description="Short code used in task labels, e.g. AUTH.")
    knowledge_paths: PathList | None = Field(None, description="Documents that explain the feature.")
    context_files: PathList | None = Field(None, description="Source files central to the feature.")
    architecture: Text | None = Field(None, description="How the feature is built.")
    boundaries: Text | None = Field(None, description="What is in and out of the feature's scope.")
    dependencies: NameList | None = Field(None, description="Names of features this one builds on.")


class UpdateFeatureInput(ToolInput):
    """Change fields of a feature; omitted fields keep their value, an empty list clears a list."""

    name: Name = Field(description="Feature name.")
    display_name: DisplayName | None = Field(None, description="New human-readable name.")
    description: ClearableText | None = Field(None, description="New description; empty clears it.")
    acronym: Acronym | None = Field(None, description="New short code.")
    knowledge_paths: PathList | None = Field(None, description="New knowledge paths (replaces all).")
    context_files: PathList | None = Field(None, description="New context files (replaces all).")
    architecture: ClearableText | None = Field(None, description="New architecture; empty clears it.")
    boundaries: ClearableText | None = Field(None, description="New boundaries; empty clears them.")
    dependencies: NameList | None = Field(None, description="New feature dependencies (replaces all).")


class AppendFeatureLearningInput(ToolInput):
    """Record a learning on a feature; a near duplicate of an existing one is merged into it."""

    feature_name: Name = Field(description="Feature name.")
    text: Text = Field(description="The learning, specific enough to help another task.")
    source: LearningSource | None = Field(None, description="Who found it.")
    reason: Text | None = Field(None, description="Why it is true or why it matters.")
    task_id: Id | None = Field(None, description="Task during which it was learned.")


class AddFeatureContextFileInput(ToolInput):
    """Register a file as relevant context for a feature."""

    feature_name: Name = Field(description="Feature name.")
    file_path: FilePath = Field(description="Path of the file, relative to the project root.")


class ListDisciplinesInput(ToolInput):
    """List disciplines: the kinds of work (e.g. frontend, backend, docs) that tasks are assigned to."""


class GetDisciplineInput(ToolInput):
    """Get one discipline with its system prompt, skills and conventions."""

    name: Name = Field(description="Discipline name.")


class CreateDisciplineInput(ToolInput):
    """Create a discipline: a kind of work with its own persona and conventions."""

    name: Name = Field(description="Unique slug, e.g. frontend.")
    display_name: DisplayName = Field(description="Human-readable name.")
    icon: Icon = Field(description="Icon name, e.g. 'code' or 'book-open'.")
    color: Color = Field(description="Colour as #rrggbb.")
    acronym: Acronym | None = Field(None, description="Short code used in task labels, e.g. FE.")
    system_prompt: Text | None = Field(None, description="Persona and instructions given to its sessions.")
    skills: ShortTextList | None = Field(None, description="Skills and technologies it covers.")
    conventions: Text | None = Field(None, description="Rules its work must follow.")


class UpdateDisciplineInput(ToolInput):
    """Change fields of a discipline; omitted fields keep their value."""

    name: Name = Field(description="Discipline name.")
    display_name: DisplayName | None = Field(None, description="New human-readable name.")
    icon: Icon | None = Field(None, description="New icon name.")
    color: Color | None = Field(None, description="New colour as #rrggbb.")
    system_prompt: ClearableText | None = Field(None, description="New system prompt; empty clears it.")
    skills: ShortTextList | None = Field(None, description="New skills (replaces all).")
    conventions: ClearableText | None = Field(None, description="New conventions; empty clears them.")


class GetProjectInfoInput(ToolInput):
    """Get the project's title, description and creation date."""


class GetProjectProgressInput(ToolInput):
    """Get task counts: total, done, by status and by feature."""


class AppendLearningInput(ToolInput):
    """Append a learning to the project's learnings file (.ralph/learnings.txt)."""

    text: Text = Field(description="The learning to append.")


class ReadLearningsInput(ToolInput):
    """Read the project's learnings file (.ralph/learnings.txt)."""


class AppendProgressInput(ToolInput):
    """Append an entry to the project's progress log (.ralph/progress.txt)."""

    text: Text = Field(description="The progress entry to append.")


class ReadProgressInput(ToolInput):
    """Read the project's progress log (.ralph/progress.txt)."""


class DoneInput(ToolInput):
    """Close this session: your task is fully complete and tested."""

    summary: Text = Field(description="What was accomplished, with key decisions and outcomes.")


class PartialInput(ToolInput):
    """Close this session with your task unfinished; the next session continues from what remains."""

    summary: Text = Field(description="What was accomplished so far.")
    remaining: Text = Field(description="What still needs to be done and why you stopped. Be specific.")


class StuckInput(ToolInput):
    """Close this session because you cannot make meaningful progress on your task."""

    reason: Text = Field(description="Why you are stuck: what exactly prevents progress.")


class AskInput(ToolInput):
    """Ask the human a question about your task; if blocking, also close with partial or stuck."""

    question: Text = Field(description="The specific question you need answered.")
    options: LineList | None = Field(None, description="Possible answers you have identified, one line each.")
    preferred: Text | None = Field(None, description="The answer you recommend, if any.")
    blocking: StrictBool = Field(
        description="True if you cannot proceed without the answer; "
        "false if you can continue on your best judgment."
    )


class FlagInput(ToolInput):
    """Report a problem you discovered while working on your task."""

    what: Text = Field(description="Clear description of the problem.")
    severity: Severity = Field(
        description="info: FYI; warning: should be addressed, does not block this task; "
        "blocking: this task cannot be fully completed because of it."
    )
    category: FlagCategory = Field(description="The kind of problem.")


class LearnedInput(ToolInput):
    """Record knowledge that will help future tasks on this project."""

    text: Text = Field(description="The knowledge, specific enough to help a different task.")
    kind: LearningKind = Field(
        description="discovery: a fact about the codebase; decision: a judgment call; "
        "convention: a project pattern to follow."
    )
    rationale: Text | None = Field(
        None, description="For decisions: why, and which alternatives you rejected."
    )
    scope: LearningScope = Field(
        LearningScope.FEATURE,
        description="project: always relevant; feature: relevant to this feature's tasks; "
        "task: only if this task is re-attempted.",
    )


class SuggestInput(ToolInput):
    """Recommend work outside your task's scope, such as a new task, a split or a refactor."""

    what: Text = Field(description="What should be done.")
    kind: SuggestionKind = Field(description="The kind of suggestion; new_task proposes a task for approval.")
    why: Text = Field(description="Why it is needed.")
    feature: Name | None = Field(None, description="Name of the feature it relates to (for new_task).")


class BlockedInput(ToolInput):
    """Report that something outside your control blocks part of your task."""

    on: Text = Field(description="What is blocking you.")
    kind: BlockerKind = Field(
        description="upstream_task: another task is incomplete; "
        "external: credentials, services, human decisions or infrastructure."
    )
    detail: Text | None = Field(None, description="More context about the blocker.")


VerbInput = (
    DoneInput | PartialInput | StuckInput | AskInput | FlagInput | LearnedInput | SuggestInput | BlockedInput
)

# Each verb of seed 002 and the model of its arguments.
VERB_INPUTS: Mapping[Verb, type[VerbInput]] = MappingProxyType(
    {
        Verb.DONE: DoneInput,
        Verb.PARTIAL: PartialInput,
        Verb.STUCK: StuckInput,
        Verb.ASK: AskInput,
        Verb.FLAG: FlagInput,
        Verb.LEARNED: LearnedInput,
        Verb.SUGGEST: SuggestInput,
        Verb.BLOCKED: BlockedInput,
    }
)
VERB_OF: Mapping[type[VerbInput], Verb] = MappingProxyType(
    {model: verb for verb, model in VERB_INPUTS.items()}
)


class RalphInitInput(ToolInput):
    """Create the project's .ralph/ folder; with force, re-create its configuration."""

    force: bool = Field(
        False,
        description="Re-create the configuration if it exists, keeping the database, progress and learnings.",
    )


class RalphValidateInput(ToolInput):
    """Check the project's .ralph/ folder and report what is missing or invalid."""


class RalphRunInput(ToolInput):
    """Start the Ralph loop on this project, or preview it with dry_run; it edits no files unless allowed."""

    max_iterations: int | None = Field(
        None,
        ge=0,
        le=MAX_ITERATIONS,
        description="Most iterations to run (0: no limit); omit for the setting.",
    )
    dry_run: bool = Field(False, description="Show the tasks and first prompt without starting an agent.")
    agent: AgentName | None = Field(None, description="Agent CLI to run; omit for the project's setting.")
    allow_edits: bool = Field(
        False, description="Let the agents change files; otherwise changes are put aside."
    )
    parallel: int | None = Field(
        None,
        ge=1,
        le=MAX_PARALLEL,
        description="Agent sessions running at once, each in its task's worktree; omit for the setting.",
    )
    allowed_paths: PathList | None = Field(
        None,
        description="Globs of the files agents may edit, relative to the project root (e.g. src/**); "
        "omit for the setting.",
    )
    wait: bool = Field(
        False,
        description="Run to the end (within the limits), reporting progress per session, and return the "
        "summary; otherwise return the loop id at once (ralph_status follows it).",
    )


class RalphStatusInput(ToolInput):
    """Report whether the loop runs, its current task and iteration, task counts, and how a run went."""

    loop_id: Id | None = Field(
        None, description="The loop run to summarise once ended (default: the last one)."
    )


class RalphStopInput(ToolInput):
    """Stop the running loop of this project."""


class RalphHistoryInput(ToolInput):
    """List past loop iterations, or one iteration in full, or the learnings recorded."""

    limit: int = Field(10, ge=1, le=MAX_ITEMS, description="Most entries to return.")
    offset: int = Field(0, ge=0, le=MAX_ID, description="Entries to skip, newest first.")
    iteration: int | None = Field(None, ge=1, le=MAX_ID, description="Return this iteration in full.")
    loop_id: Id | None = Field(
        None, description="The loop run whose iteration to return (default: the last one)."
    )
    type: HistoryType = Field("iterations", description="iterations or learnings.")


class RalphUnderstandInput(ToolInput):
    """Run a read-only agent session that maps the codebase into .ralph/codebase_map.md."""


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, category, description, input model and MCP annotations."""

    name: str
    category: ToolCategory
    description: str
    input_model: type[ToolInput]
    read_only: bool
    destructive: bool
    idempotent: bool = False


class UnknownToolError(KeyError):
    """A tool name that the registry does not know."""

    def __str__(self) -> str:
        """The message, without the quotes KeyError adds."""
        return str(self.args[0])


def _spec(
    name: str,
    category: ToolCategory,
    model: type[ToolInput],
    *,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
) -> ToolSpec:
    """A spec whose description is the input model's docstring."""
    description = " ".join((model.__doc__ or "").split())
    return ToolSpec(name, category, description, model, read_only, destructive, idempotent or read_only)


_SPECS: tuple[ToolSpec, ...] = (
    _spec("list_tasks", ToolCategory.TASK, ListTasksInput, read_only=True),
    _spec("get_task", ToolCategory.TASK, GetTaskInput, read_only=True),
    _spec("create_task", ToolCategory.TASK, CreateTaskInput),
    _spec("update_task", ToolCategory.TASK, UpdateTaskInput, idempotent=True),
    _spec("set_task_status", ToolCategory.TASK, SetTaskStatusInput, idempotent=True),
    _spec("enrich_task", ToolCategory.TASK, EnrichTaskInput),
    _spec("search_tasks", ToolCategory.TASK, SearchTasksInput, read_only=True),
    _spec("get_task_checks", ToolCategory.TASK, GetTaskChecksInput, read_only=True),
    _spec("add_task_comment", ToolCategory.COMMENT, AddTaskCommentInput),
    _spec("list_features", ToolCategory.FEATURE, ListFeaturesInput, read_only=True),
    _spec("get_feature", ToolCategory.FEATURE, GetFeatureInput, read_only=True),
    _spec("create_feature", ToolCategory.FEATURE, CreateFeatureInput),
    _spec("update_feature", ToolCategory.FEATURE, UpdateFeatureInput, idempotent=True),
    _spec("append_feature_learning", ToolCategory.FEATURE, AppendFeatureLearningInput),
    _spec("add_feature_context_file", ToolCategory.FEATURE, AddFeatureContextFileInput, idempotent=True),
    _spec("list_disciplines", ToolCategory.DISCIPLINE, ListDisciplinesInput, read_only=True),
    _spec("get_discipline", ToolCategory.DISCIPLINE, GetDisciplineInput, read_only=True),
    _spec("create_discipline", ToolCategory.DISCIPLINE, CreateDisciplineInput),
    _spec("update_discipline", ToolCategory.DISCIPLINE, UpdateDisciplineInput, idempotent=True),
    _spec("get_project_info", ToolCategory.PROJECT, GetProjectInfoInput, read_only=True),
    _spec("get_project_progress", ToolCategory.PROJECT, GetProjectProgressInput, read_only=True),
    _spec("append_learning", ToolCategory.STATE, AppendLearningInput),
    _spec("read_learnings", ToolCategory.STATE, ReadLearningsInput, read_only=True),
    _spec("append_progress", ToolCategory.STATE, AppendProgressInput),
    _spec("read_progress", ToolCategory.STATE, ReadProgressInput, read_only=True),
    _spec("done", ToolCategory.SIGNAL, DoneInput),
    _spec("partial", ToolCategory.SIGNAL, PartialInput),
    _spec("stuck", ToolCategory.SIGNAL, StuckInput),
    _spec("ask", ToolCategory.SIGNAL, AskInput),
    _spec("flag", ToolCategory.SIGNAL, FlagInput),
    _spec("learned", ToolCategory.SIGNAL, LearnedInput),
    _spec("suggest", ToolCategory.SIGNAL, SuggestInput),
    _spec("blocked", ToolCategory.SIGNAL, BlockedInput),
    _spec("ralph_init", ToolCategory.LOOP, RalphInitInput),
    _spec("ralph_validate", ToolCategory.LOOP, RalphValidateInput, read_only=True),
    _spec("ralph_run", ToolCategory.LOOP, RalphRunInput),
    _spec("ralph_status", ToolCategory.LOOP, RalphStatusInput, read_only=True),
    _spec("ralph_stop", ToolCategory.LOOP, RalphStopInput, idempotent=True),
    _spec("ralph_history", ToolCategory.LOOP, RalphHistoryInput, read_only=True),
    _spec("ralph_understand", ToolCategory.LOOP, RalphUnderstandInput),
)

REGISTRY: Mapping[str, ToolSpec] = MappingProxyType({spec.name: spec for spec in _SPECS})
ALL_TOOLS: frozenset[str] = frozenset(REGISTRY)
_ORDER: Mapping[str, int] = MappingProxyType({name: index for index, name in enumerate(REGISTRY)})

# Seed 001 adds this one to the task category; it is not among seed 000's tools. Seed 000's deletes
# and comment edits, and seed 001's add_task_context_file, are left out: no recipe of the seeds
# allows them (the window and the CLI delete and edit through the services).
SEED_001_TOOLS: frozenset[str] = frozenset({"search_tasks"})
DESK_TOOLS: frozenset[str] = frozenset({"get_task_checks"})
"""The desk's own reads beyond the seeds: a task's checks (DESIGN §13), for the clients of `ide`."""


def tools_in(category: ToolCategory) -> list[ToolSpec]:
    """The tools of a category, in registry order."""
    return [spec for spec in REGISTRY.values() if spec.category is category]


def _names(specs: Iterable[ToolSpec]) -> frozenset[str]:
    """The names of some specs."""
    return frozenset(spec.name for spec in specs)


VERB_TOOLS: frozenset[str] = _names(tools_in(ToolCategory.SIGNAL))
LOOP_TOOLS: frozenset[str] = _names(tools_in(ToolCategory.LOOP))
DATA_TOOLS: frozenset[str] = ALL_TOOLS - VERB_TOOLS - LOOP_TOOLS - SEED_001_TOOLS - DESK_TOOLS
READ_ONLY_TOOLS: frozenset[str] = _names(spec for spec in REGISTRY.values() if spec.read_only)


def closest_tools(name: str, n: int = 3, among: Iterable[str] | None = None) -> list[str]:
    """Up to n tool names (of among, else of the registry) that look like name, closest first."""
    candidates = in_registry_order(REGISTRY if among is None else among)
    return difflib.get_close_matches(name, candidates, n=n)


def unknown_tool_message(name: str, among: Iterable[str] | None = None) -> str:
    """A message saying that name is no tool, with the closest names (of among, else all) if any."""
    close = closest_tools(name, among=among)
    hint = f" (did you mean: {', '.join(close)}?)" if close else ""
    return f"unknown tool {name!r}{hint}"


def tool(name: str) -> ToolSpec:
    """The spec of a tool; raises UnknownToolError (a KeyError) naming the closest tools."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise UnknownToolError(unknown_tool_message(name)) from None


def in_registry_order(names: Iterable[str]) -> list[str]:
    """Tool names sorted as the registry lists them; unknown names last, alphabetically."""
    return sorted(set(names), key=lambda name: (_ORDER.get(name, len(_ORDER)), name))
