"""The Reviews pages: the tasks in review, and one task's diff (read-only) with its checks and comments."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ralph_desk.companion.context import CompanionContext
from ralph_desk.companion.diff_shown import ShownDiff, shown
from ralph_desk.domain.diffs import parse_diff
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.listing import Listing
from ralph_desk.domain.reviews import ReviewItem
from ralph_desk.services.checks import TaskChecks
from ralph_desk.services.container import Services
from ralph_desk.services.reviews import ReviewError

COMMENT_BLOCKS = 1
"""Comment fields shown at first on Request changes (the page's script adds more)."""


@dataclass(frozen=True)
class ReviewPage:
    """One task's review as the page shows it."""

    item: ReviewItem
    diff: ShownDiff | None
    tip: str
    """The commit the diff was read at: approving merges exactly it ("" without a branch)."""
    checks: TaskChecks
    unsent: int
    problem: str = ""
    """Why the diff could not be read (git failed), if it could not."""

    @property
    def in_review(self) -> bool:
        """Whether the task still waits for a decision."""
        return self.item.task.status is TaskStatus.IN_REVIEW


def read_review(services: Services, task_id: int) -> ReviewPage:
    """Read a task's review, its diff, checks and unsent comments (runs in a thread; NotFoundError)."""
    reviews = services.reviews
    item = reviews.get(task_id)
    checks = services.checks.evidence(task_id, services.workspaces.config().checks)
    unsent = len(reviews.unsent(task_id))
    try:
        read = reviews.diff(task_id)
    except ReviewError as error:
        return ReviewPage(item, None, "", checks, unsent, str(error))
    tip = read.pin.tip if read.pin is not None else ""
    return ReviewPage(item, shown(parse_diff(read.text)), tip, checks, unsent)


def read_list(services: Services) -> tuple[Listing[ReviewItem], dict[int, TaskChecks]]:
    """The tasks in review, oldest first, with their checks' verdicts (runs in a thread)."""
    items = services.reviews.list()
    configured = services.workspaces.config().checks
    return items, {item.task.id: services.checks.evidence(item.task.id, configured) for item in items}


async def show_list(
    context: CompanionContext, request: Request, status: int = 200, error: str = ""
) -> Response:
    """The list of tasks in review."""
    items, checks = await context.call(read_list, context.services)
    return context.render(
        request, "reviews.html", status, section="reviews", items=items, checks=checks, error=error
    )


async def show_review(
    context: CompanionContext,
    request: Request,
    task_id: int,
    status: int = 200,
    error: str = "",
    kept: dict[str, str] | None = None,
    offer: str = "",
) -> Response:
    """One task's review; `offer` is the choice a refused approval leaves (`drop`, `anyway`)."""
    page: ReviewPage = await context.call(read_review, context.services, task_id)
    kept = kept or {}
    return context.render(
        request,
        "review.html",
        status,
        section="reviews",
        page=page,
        error=error,
        kept=kept,
        unshown=[] if page.in_review else [text for text in kept.values() if text],
        offer=offer,
        comment_blocks=COMMENT_BLOCKS,
    )


def routes(context: CompanionContext) -> list[Route]:
    """`GET /reviews` and `GET /reviews/{task_id}`."""

    async def listing(request: Request) -> Response:
        return await show_list(context, request)

    async def review(request: Request) -> Response:
        return await show_review(context, request, request.path_params["task_id"])

    return [
        Route("/reviews", listing, methods=["GET"]),
        Route("/reviews/{task_id:int}", review, methods=["GET"]),
    ]
