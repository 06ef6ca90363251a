"""Task tools: list, search and read tasks (and their checks), create, change, enrich and move them."""

from __future__ import annotations

from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.tools import (
    CreateTaskInput,
    EnrichTaskInput,
    GetTaskChecksInput,
    GetTaskInput,
    ListTasksInput,
    SearchTasksInput,
    SetTaskStatusInput,
    UpdateTaskInput,
)
from ralph_desk.mcp_server.binding import ToolCall, handles
from ralph_desk.mcp_server.results import (
    CheckResult,
    CheckRunResult,
    TaskBrief,
    TaskChecksResult,
    TaskDetail,
    TaskList,
)

PATH_FIELDS = ("context_files", "output_artifacts")


@handles("list_tasks")
def list_tasks(call: ToolCall[ListTasksInput]) -> TaskList:
    """Tasks, optionally of one status, feature and discipline."""
    args = call.args
    return TaskList.of(
        call.services.tasks.list(
            status=args.filter_status, feature=args.filter_feature, discipline=args.filter_discipline
        )
    )


@handles("search_tasks")
def search_tasks(call: ToolCall[SearchTasksInput]) -> TaskList:
    """Tasks whose title, description or tags contain the query."""
    return TaskList.of(call.services.tasks.search(call.args.query, call.args.limit))


@handles("get_task")
def get_task(call: ToolCall[GetTaskInput]) -> TaskDetail:
    """One task in full."""
    return TaskDetail.model_validate(call.services.tasks.get(call.args.id))


@handles("create_task")
def create_task(call: ToolCall[CreateTaskInput]) -> TaskDetail:
    """A new task, draft or pending."""
    return TaskDetail.model_validate(call.services.tasks.create_input(call.paths_inside_root(PATH_FIELDS)))


@handles("update_task")
def update_task(call: ToolCall[UpdateTaskInput]) -> TaskDetail:
    """The task after changing the fields the caller gave."""
    call.require_changes("id")
    return TaskDetail.model_validate(call.services.tasks.update_input(call.paths_inside_root(PATH_FIELDS)))


@handles("set_task_status")
def set_task_status(call: ToolCall[SetTaskStatusInput]) -> TaskBrief:
    """The task in its new status; work in review, or on an unmerged branch, is the human's to decide."""
    return TaskBrief.model_validate(call.services.tasks.move(call.args.id, call.args.status, Mover.AGENT))


@handles("enrich_task")
def enrich_task(call: ToolCall[EnrichTaskInput]) -> TaskDetail:
    """The draft task with its pseudocode, now pending."""
    return TaskDetail.model_validate(call.services.tasks.enrich_input(call.paths_inside_root(PATH_FIELDS)))


@handles("get_task_checks")
def get_task_checks(call: ToolCall[GetTaskChecksInput]) -> TaskChecksResult:
    """The task's latest check runs, their verdict and the configured checks (its evidence)."""
    services = call.services
    task = services.tasks.get(call.args.task_id)  # an unknown task is named, not an empty list
    configured = services.workspaces.config().checks
    found = services.checks.evidence(task.id, configured)
    return TaskChecksResult(
        task_id=task.id,
        verdict=found.verdict,
        latest=[CheckRunResult.model_validate(run) for run in found.latest],
        configured=[CheckResult.model_validate(check) for check in configured],
    )
