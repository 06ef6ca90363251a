"""The closed vocabularies of ralph_desk: task states, priorities, verbs and review states."""

from __future__ import annotations

from enum import StrEnum


class TaskStatus(StrEnum):
    """Where a task is in its life (DESIGN §2.6)."""

    DRAFT = "draft"
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    IN_REVIEW = "in_review"
    DONE = "done"
    BLOCKED = "blocked"
    NEEDS_INPUT = "needs_input"
    SKIPPED = "skipped"
    FAILED = "failed"


class Priority(StrEnum):
    """How urgent a task is, lowest first."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        """Sort weight: higher is more urgent."""
        return _PRIORITY_RANK[self]


_PRIORITY_RANK = {priority: rank for rank, priority in enumerate(Priority)}


class TaskOrigin(StrEnum):
    """Who created a task."""

    HUMAN = "human"
    AGENT = "agent"
    IMPORT = "import"


class Verb(StrEnum):
    """The eight signal verbs of seed 002."""

    DONE = "done"
    PARTIAL = "partial"
    STUCK = "stuck"
    ASK = "ask"
    FLAG = "flag"
    LEARNED = "learned"
    SUGGEST = "suggest"
    BLOCKED = "blocked"


CLOSING_VERBS: frozenset[Verb] = frozenset({Verb.DONE, Verb.PARTIAL, Verb.STUCK})


class Severity(StrEnum):
    """How much a flagged problem matters."""

    INFO = "info"
    WARNING = "warning"
    BLOCKING = "blocking"

    @property
    def rank(self) -> int:
        """Sort weight: higher is more serious."""
        return list(Severity).index(self)


class FlagCategory(StrEnum):
    """What kind of problem a flag reports."""

    BUG = "bug"
    STALE = "stale"
    CONTRADICTION = "contradiction"
    AMBIGUITY = "ambiguity"
    OVERLAP = "overlap"
    PERFORMANCE = "performance"
    SECURITY = "security"
    INCOMPLETE_PRIOR = "incomplete_prior"


class LearningKind(StrEnum):
    """What a `learned` signal records."""

    DISCOVERY = "discovery"
    DECISION = "decision"
    CONVENTION = "convention"


class LearningScope(StrEnum):
    """Which future prompts a learning reaches."""

    PROJECT = "project"
    FEATURE = "feature"
    TASK = "task"


class SuggestionKind(StrEnum):
    """What a `suggest` signal proposes."""

    NEW_TASK = "new_task"
    SPLIT = "split"
    REFACTOR = "refactor"
    ALTERNATIVE = "alternative"
    DEPRECATE = "deprecate"


class BlockerKind(StrEnum):
    """What a `blocked` signal waits on."""

    UPSTREAM_TASK = "upstream_task"
    EXTERNAL = "external"


class FlagResolution(StrEnum):
    """The human's triage state of a flag."""

    OPEN = "open"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"
    DISMISSED = "dismissed"
    CONVERTED = "converted"


class Triage(StrEnum):
    """What a person may do with a flag: settle it, or convert it into a pending task."""

    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"
    DISMISSED = "dismissed"
    CONVERT = "convert"


class ReviewDecision(StrEnum):
    """The human's decision on a suggestion."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    ACKNOWLEDGED = "acknowledged"


class ReviewCommentState(StrEnum):
    """Where a review comment is: written, sent to the agent, or answered by a session."""

    OPEN = "open"
    REQUESTED = "requested"
    ADDRESSED = "addressed"


class DiffSide(StrEnum):
    """Which file of a diff a line comment is about: the old one (a removed line) or the new one."""

    OLD = "old"
    NEW = "new"


class MergeStrategy(StrEnum):
    """How an approved task branch joins the base branch."""

    MERGE = "merge"
    SQUASH = "squash"
    FF_ONLY = "ff-only"


class LearningSource(StrEnum):
    """Who wrote a feature learning."""

    AUTO = "auto"
    AGENT = "agent"
    HUMAN = "human"


class Recipe(StrEnum):
    """A session kind; each allows a fixed set of tools (DESIGN §5)."""

    BRAINDUMP = "braindump"
    YAP = "yap"
    RAMBLE = "ramble"
    DISCUSS = "discuss"
    TASK_EXECUTION = "task_execution"
    OPUS_REVIEW = "opus_review"
    ENRICHMENT = "enrichment"
    IDE = "ide"
    UNDERSTAND = "understand"


class SessionOutcome(StrEnum):
    """What a finished agent session did to its task."""

    DONE = "done"
    REQUEUED = "requeued"
    STUCK = "stuck"
    FAILED = "failed"
    NEEDS_INPUT = "needs_input"
    BLOCKED = "blocked"
    STOPPED = "stopped"
    RATE_LIMITED = "rate_limited"
    REJECTED = "rejected"
    CHECKS_FAILED = "checks_failed"
    RUNNING = "running"


class LoopState(StrEnum):
    """The state of a loop run."""

    RUNNING = "running"
    PAUSED = "paused"
    WAITING = "waiting"
    RATE_LIMITED = "rate_limited"
    COMPLETED = "completed"
    STOPPED = "stopped"
    FAILED = "failed"


def values(enum: type[StrEnum]) -> list[str]:
    """The wire values of an enum, in declaration order."""
    return [member.value for member in enum]


class ChangeTopic(StrEnum):
    """What a change-feed notice is about: the panes and listeners re-read what their topics name."""

    TASKS = "tasks"
    DEPENDENCIES = "dependencies"
    COMMENTS = "comments"
    SIGNALS = "signals"
    INBOX = "inbox"
    SESSIONS = "sessions"
    LOOP = "loop"
    FEATURES = "features"
    LEARNINGS = "learnings"
    DISCIPLINES = "disciplines"
    PROJECT = "project"
    STATE_FILES = "state_files"
    REVIEWS = "reviews"
    MERGES = "merges"
    CHECKS = "checks"
    COMPANION = "companion"
