"""Project tools: the project's title and description, and its task progress."""

from __future__ import annotations

from ralph_desk.domain.tools import GetProjectInfoInput, GetProjectProgressInput
from ralph_desk.mcp_server.binding import ToolCall, handles
from ralph_desk.mcp_server.results import ProjectInfo, ProjectProgress


@handles("get_project_info")
def get_project_info(call: ToolCall[GetProjectInfoInput]) -> ProjectInfo:
    """The project's title, description and creation date."""
    return ProjectInfo.model_validate(call.services.project.get())


@handles("get_project_progress")
def get_project_progress(call: ToolCall[GetProjectProgressInput]) -> ProjectProgress:
    """Task counts (total, done, per status and per feature), what waits for the human, and the cost."""
    return ProjectProgress.of(call.services.progress.totals())
