"""Discipline tools: list, read, create and change disciplines."""

from __future__ import annotations

from ralph_desk.domain.tools import (
    CreateDisciplineInput,
    GetDisciplineInput,
    ListDisciplinesInput,
    UpdateDisciplineInput,
)
from ralph_desk.mcp_server.binding import ToolCall, handles
from ralph_desk.mcp_server.results import DisciplineDetail, DisciplineList


@handles("list_disciplines")
def list_disciplines(call: ToolCall[ListDisciplinesInput]) -> DisciplineList:
    """Every discipline, as briefs."""
    return DisciplineList.of(call.services.disciplines.list())


@handles("get_discipline")
def get_discipline(call: ToolCall[GetDisciplineInput]) -> DisciplineDetail:
    """One discipline in full."""
    return DisciplineDetail.model_validate(call.services.disciplines.get(call.args.name))


@handles("create_discipline")
def create_discipline(call: ToolCall[CreateDisciplineInput]) -> DisciplineDetail:
    """The new discipline."""
    return DisciplineDetail.model_validate(call.services.disciplines.create_input(call.args))


@handles("update_discipline")
def update_discipline(call: ToolCall[UpdateDisciplineInput]) -> DisciplineDetail:
    """The discipline after changing the fields the caller gave."""
    call.require_changes("name")
    return DisciplineDetail.model_validate(call.services.disciplines.update_input(call.args))
