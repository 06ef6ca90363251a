"""The Inbox page: questions, suggestions, open flags and failed tasks, each with the window's choices."""

from __future__ import annotations

from dataclasses import dataclass, field

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ralph_desk.companion.context import CompanionContext
from ralph_desk.domain.enums import FlagResolution, SuggestionKind, Triage
from ralph_desk.domain.records import Signal
from ralph_desk.services.container import Services
from ralph_desk.services.errors import NotFoundError
from ralph_desk.services.inbox import FailedTask, Question, draft_text

TRIAGE = (
    (Triage.ACKNOWLEDGED, "Acknowledge", "Seen: keep it for later, no longer open"),
    (Triage.RESOLVED, "Resolve", "It is fixed or no longer true"),
    (Triage.DISMISSED, "Dismiss", "Not a problem"),
    (Triage.CONVERT, "Make a task", "A pending task of it"),
)
"""The flag choices the window offers (converting makes the task from the flag as it is)."""


@dataclass(frozen=True)
class SuggestionShown:
    """A pending suggestion with the draft fields its Edit form starts from (new tasks only)."""

    suggestion: Signal
    title: str = ""
    description: str = ""

    @property
    def is_new_task(self) -> bool:
        """Approve / edit / reject (a new task), or acknowledge (anything else)."""
        return self.suggestion.kind == SuggestionKind.NEW_TASK.value


@dataclass(frozen=True)
class InboxRead:
    """Everything the Inbox page shows, read in one go off the event loop."""

    questions: list[Question]
    suggestions: list[SuggestionShown]
    flags: list[Signal]
    failed: list[FailedTask]
    titles: dict[int, str] = field(default_factory=dict)
    left_out: int = 0
    """Items that could not be read (the desk names them)."""

    @property
    def empty(self) -> bool:
        """Nothing waits for the person."""
        return not (self.questions or self.suggestions or self.flags or self.failed)

    def forms(self) -> set[str]:
        """The ids of the forms the page shows (text typed for another is shown apart, not lost)."""
        suggestions = {
            f"suggestion-{item.suggestion.id}-{form}"
            for item in self.suggestions
            for form in ("edit", "reject")
        }
        return (
            {f"ask-{question.ask.id}" for question in self.questions}
            | suggestions
            | {f"failed-{item.task.id}" for item in self.failed}
        )


def unshown(kept: dict[str, str], forms: set[str]) -> list[str]:
    """What was typed in a refused form that the page no longer shows (its item was decided elsewhere)."""
    return [text for key, text in kept.items() if text and key.partition(":")[0] not in forms]


def read_inbox(services: Services) -> InboxRead:
    """Read what waits (runs in a thread)."""
    inbox = services.inbox
    questions = inbox.questions()
    suggestions = inbox.suggestions(pending_only=True)
    flags = inbox.flags(resolution=FlagResolution.OPEN)
    failed = inbox.failed()
    shown = [_suggestion(services, suggestion) for suggestion in suggestions]
    task_ids = (
        {q.ask.task_id for q in questions} | {s.task_id for s in suggestions} | {f.task_id for f in flags}
    )
    left_out = sum(len(listing.errors) for listing in (questions, suggestions, flags, failed))
    return InboxRead(list(questions), shown, list(flags), list(failed), _titles(services, task_ids), left_out)


def _suggestion(services: Services, suggestion: Signal) -> SuggestionShown:
    if suggestion.kind != SuggestionKind.NEW_TASK.value:
        return SuggestionShown(suggestion)
    title, description = draft_text(suggestion)
    if suggestion.created_task_id is not None:
        try:
            draft = services.tasks.get(suggestion.created_task_id)
        except NotFoundError:
            pass
        else:
            title, description = draft.title, draft.description or ""
    return SuggestionShown(suggestion, title, description)


def _titles(services: Services, task_ids: set[int]) -> dict[int, str]:
    titles: dict[int, str] = {}
    for task_id in sorted(task_ids):
        try:
            titles[task_id] = services.tasks.get(task_id).title
        except NotFoundError:
            titles[task_id] = ""
    return titles


async def show(
    context: CompanionContext,
    request: Request,
    status: int = 200,
    error: str = "",
    kept: dict[str, str] | None = None,
) -> Response:
    """The Inbox page (with a refused decision's message and what was typed, when given)."""
    read: InboxRead = await context.call(read_inbox, context.services)
    kept = kept or {}
    return context.render(
        request,
        "inbox.html",
        status,
        section="inbox",
        inbox=read,
        triage=TRIAGE,
        error=error,
        kept=kept,
        unshown=unshown(kept, read.forms()),
    )


def routes(context: CompanionContext) -> list[Route]:
    """`GET /`: the Inbox."""

    async def inbox(request: Request) -> Response:
        return await show(context, request)

    return [Route("/", inbox, methods=["GET"])]
