"""The page's decisions: POST forms under `/act/`, each the same service call the window makes.

A decision done is answered 303 back to its page (what it did said once there); one refused comes back as
the page with the refusal's message and what was typed, nothing changed; an id that names nothing, 404.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ralph_desk.companion import forms, inbox_pages, review_pages
from ralph_desk.companion.context import CompanionContext
from ralph_desk.companion.forms import Fields
from ralph_desk.domain.enums import Triage
from ralph_desk.domain.records import Signal, Task
from ralph_desk.domain.reviews import ReviewResult
from ralph_desk.project.errors import ProjectError
from ralph_desk.services.container import Services
from ralph_desk.services.errors import InvalidValueError, NotFoundError, ServiceError
from ralph_desk.services.inbox import TriageResult
from ralph_desk.services.merge_queue import MergeBusyError
from ralph_desk.services.reviews import (
    ChecksFailingError,
    CommentDraft,
    ReviewMovedError,
    UnsentCommentsError,
)
from ralph_desk.store.errors import StoreError

APPROVE_WAIT_S = 5.0
"""How long an approval waits for the merge turn (as the window's); then it stays queued for the holder."""
QUEUED = "Task #{} is approved and queued: another merge is under way, and it merges this task in its turn."
Refused = Callable[[int, str], Awaitable[Response]]
REFUSALS = (ServiceError, ProjectError, StoreError)


class MissingError(Exception):
    """The id in an action's path names nothing: the page answers 404 with why."""


def _status(error: Exception) -> int:
    return 400 if isinstance(error, InvalidValueError) else 409


def answer_text(option: str, note: str) -> str:
    """An answer as the window makes it: the option chosen, then the note typed (either may be alone)."""
    return f"{option}\n\n{note}" if option and note else option or note


def routes(context: CompanionContext) -> list[Route]:
    """The inbox's and the reviews' decisions."""
    services = context.services

    def said(request: Request, text: str, back: str) -> Response:
        context.notices.say(request.state.device.id, text)
        return RedirectResponse(back, status_code=303)

    async def decide(
        request: Request, call: Callable[[], Any], done: Callable[[Any], str], back: str, refused: Refused
    ) -> Response:
        try:
            result = await context.call(call)
        except NotFoundError as missing:
            raise MissingError(str(missing)) from None
        except REFUSALS as error:
            return await refused(_status(error), str(error))
        return said(request, done(result), back)

    def inbox_refused(request: Request, kept: dict[str, str] | None = None) -> Refused:
        return lambda status, error: inbox_pages.show(context, request, status, error, kept)

    async def answer(request: Request) -> Response:
        ask_id: int = request.path_params["ask_id"]
        fields = await forms.read(request)
        text = answer_text(fields.text("option"), fields.text("note"))
        refused = inbox_refused(request, forms.kept(f"ask-{ask_id}", fields, "note"))
        if not text:
            return await refused(
                400, f"Question #{ask_id} was not answered: choose an option or type an answer."
            )
        return await decide(
            request,
            lambda: services.inbox.answer(ask_id, text, by=context.maker(request)),
            lambda answered: f"Answered question #{answered.id}: task #{answered.task_id} gets it next.",
            "/",
            refused,
        )

    async def suggestion(request: Request) -> Response:
        signal_id: int = request.path_params["signal_id"]
        action: str = request.path_params["action"]
        fields = await forms.read(request)
        form_id = f"suggestion-{signal_id}-{action}"
        refused = inbox_refused(request, forms.kept(form_id, fields, "title", "description", "reason"))
        by = context.maker(request)
        calls: dict[str, tuple[Callable[[], Any], Callable[[Any], str]]] = {
            "approve": (lambda: _approve(services, signal_id, by), _approved),
            "edit": (lambda: _edit(services, signal_id, fields, by), _approved),
            "reject": (
                lambda: _reject(services, signal_id, fields.text("reason"), by),
                lambda task: f"Rejected task #{task.id}: {task.title}",
            ),
            "acknowledge": (
                lambda: services.inbox.acknowledge_suggestion(signal_id, by=by),
                lambda _: f"Suggestion #{signal_id} acknowledged.",
            ),
        }
        if action not in calls:
            raise MissingError(f"no suggestion action {action!r}; allowed: {', '.join(calls)}")
        call, done = calls[action]
        return await decide(request, call, done, "/", refused)

    async def flag(request: Request) -> Response:
        flag_id: int = request.path_params["flag_id"]
        resolution: str = request.path_params["resolution"]
        if resolution not in {choice.value for choice in Triage}:
            raise MissingError(
                f"no triage {resolution!r}; allowed: {', '.join(choice.value for choice in Triage)}"
            )
        return await decide(
            request,
            lambda: services.inbox.triage(flag_id, Triage(resolution), by=context.maker(request)),
            lambda result: _triaged(flag_id, result),
            "/",
            inbox_refused(request),
        )

    async def failed(request: Request) -> Response:
        task_id: int = request.path_params["task_id"]
        action: str = request.path_params["action"]
        fields = await forms.read(request)
        refused = inbox_refused(request, forms.kept(f"failed-{task_id}", fields, "note"))
        if action == "retry":
            return await decide(
                request,
                lambda: services.inbox.retry(task_id, fields.text("note"), by=context.maker(request)),
                lambda task: f"Task #{task.id} is pending again: {task.title}",
                "/",
                refused,
            )
        if action == "skip":
            return await decide(
                request,
                lambda: services.inbox.skip(task_id, by=context.maker(request)),
                lambda task: f"Skipped task #{task.id}: {task.title}",
                "/",
                refused,
            )
        raise MissingError(f"no action {action!r} on a failed task; allowed: retry, skip")

    async def approve(request: Request) -> Response:
        task_id: int = request.path_params["task_id"]
        fields = await forms.read(request)
        anyway, drop = fields.chosen("anyway"), fields.chosen("drop_comments")
        commit = fields.text("commit") or None
        try:
            result: ReviewResult = await context.call(
                lambda: services.reviews.approve(
                    task_id, commit, APPROVE_WAIT_S, anyway, drop, by=context.maker(request)
                )
            )
        except NotFoundError as missing:
            raise MissingError(str(missing)) from None
        except MergeBusyError:
            return said(request, QUEUED.format(task_id), "/reviews")
        except UnsentCommentsError as unsent:
            return await review_pages.show_review(context, request, task_id, 409, str(unsent), offer="drop")
        except ChecksFailingError as failing:
            offer = "anyway-drop" if drop else "anyway"
            return await review_pages.show_review(context, request, task_id, 409, str(failing), offer=offer)
        except ReviewMovedError as moved:
            said_now = f"{moved} — the diff below is the branch as it is now."
            return await review_pages.show_review(context, request, task_id, 409, said_now)
        except REFUSALS as error:
            return await review_pages.show_review(context, request, task_id, _status(error), str(error))
        if result.conflicts:
            return said(request, f"Task #{task_id} was not merged: {result.message}", "/reviews")
        return said(request, f"Task #{task_id}: {result.message} ({result.status}).", "/reviews")

    async def changes(request: Request) -> Response:
        task_id: int = request.path_params["task_id"]
        fields = await forms.read(request)
        drafts = _comments(fields)
        kept = {f"changes-{task_id}:comment": "\n\n".join(draft.body for draft in drafts)}

        async def refused(status: int, error: str) -> Response:
            return await review_pages.show_review(context, request, task_id, status, error, kept)

        return await decide(
            request,
            lambda: services.reviews.request_changes(task_id, drafts, by=context.maker(request)),
            lambda result: f"Task #{task_id}: {result.message}; it is {result.status} again.",
            "/reviews",
            refused,
        )

    return [
        Route("/act/asks/{ask_id:int}", answer, methods=["POST"]),
        Route("/act/suggestions/{signal_id:int}/{action}", suggestion, methods=["POST"]),
        Route("/act/flags/{flag_id:int}/{resolution}", flag, methods=["POST"]),
        Route("/act/failed/{task_id:int}/{action}", failed, methods=["POST"]),
        Route("/act/reviews/{task_id:int}/approve", approve, methods=["POST"]),
        Route("/act/reviews/{task_id:int}/changes", changes, methods=["POST"]),
    ]


def _approve(services: Services, signal_id: int, by: str) -> Task:
    return services.inbox.approve(services.signals.get(signal_id), by=by)


def _approved(task: Task) -> str:
    return f"Approved task #{task.id}: {task.title}"


def _edit(services: Services, signal_id: int, fields: Fields, by: str) -> Task:
    """Save the suggested task's title and description as typed, then approve it (the window's Edit)."""
    draft = services.inbox.create_suggested_task(signal_id)
    return services.inbox.edit_and_approve(
        draft.id, title=fields.text("title"), description=fields.text("description"), by=by
    )


def _reject(services: Services, signal_id: int, reason: str, by: str) -> Task:
    suggestion: Signal = services.signals.get(signal_id)
    if not reason:
        raise InvalidValueError("reason", reason, f"a reason for rejecting suggestion #{suggestion.id}")
    return services.inbox.reject(services.inbox.create_suggested_task(signal_id).id, reason, by=by)


def _triaged(flag_id: int, result: TriageResult) -> str:
    if result.task is not None:
        return f"Flag #{flag_id} became task #{result.task.id}: {result.task.title}"
    resolution = result.flag.resolution.value if result.flag.resolution else "triaged"
    return f"Flag #{flag_id} {resolution}."


def _comments(fields: Fields) -> list[CommentDraft]:
    """The comments typed on Request changes, each on the whole task or on one file."""
    files = fields.texts("file")
    bodies = fields.texts("comment")
    files += [""] * (len(bodies) - len(files))
    return [CommentDraft(body, file or None) for body, file in zip(bodies, files, strict=False) if body]
