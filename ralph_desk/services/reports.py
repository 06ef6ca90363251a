"""The reports `ralph-desk status` and `ralph-desk inbox` print: plain data, ready for JSON."""

from __future__ import annotations

import dataclasses
from typing import Any

from ralph_desk.domain.enums import FlagResolution
from ralph_desk.domain.listing import ItemError
from ralph_desk.project.config import ProjectConfig
from ralph_desk.project.confinement import sandbox_state
from ralph_desk.services.container import Services
from ralph_desk.services.progress import cost_dict, progress_dict, throughput_dict
from ralph_desk.store.errors import StoreDataError


def status_report(services: Services) -> dict[str, Any]:
    """Project, task counts (by status and feature), inbox counts, cost, throughput and each task's latest
    checks (`status --json`)."""
    project = services.project.get()
    totals = services.progress.totals()
    config = services.workspaces.config()
    configured = config.checks
    return {
        "project": {
            "title": project.title,
            "description": project.description,
            "created_at": project.created_at,
            "root": services.paths.root,
        },
        "tasks": progress_dict(totals.tasks, totals.by_feature),
        "inbox": totals.inbox.as_dict(),
        "cost": cost_dict(totals.sessions),
        "throughput": throughput_dict(totals.throughput),
        "checks": {"configured": configured, "tasks": services.checks.evidence_of_tasks(configured)},
        "sandbox": sandbox_report(services, config),
    }


def sandbox_report(services: Services, config: ProjectConfig) -> dict[str, Any]:
    """Whether sessions run confined here (and why not), and how the latest session ran."""
    state = sandbox_state(config)
    latest = services.sessions.list(limit=1)
    return {
        **dataclasses.asdict(state),
        "confined": state.confined,
        "summary": state.line(),
        "latest_session": (
            {"id": last.id, "confined": last.confined, "sandbox": last.sandbox, "note": last.sandbox_note}
            if (last := next(iter(latest), None)) is not None
            else None
        ),
    }


def inbox_report(services: Services) -> dict[str, Any]:
    """Waiting questions, suggestions (with their draft tasks) and open flags, as `inbox --json` shows;
    `errors` holds an entry (kind, id, message) for each item whose stored text cannot be read."""
    suggestions = []
    asks, suggested_signals = services.inbox.asks(open_only=False), services.inbox.suggestions()
    flags = services.inbox.flags(resolution=FlagResolution.OPEN)
    errors = [*asks.errors, *suggested_signals.errors, *flags.errors]
    for signal in suggested_signals:
        try:
            task = services.tasks.get(signal.created_task_id) if signal.created_task_id is not None else None
        except StoreDataError as error:
            errors.append(ItemError("signal", signal.id, f"its suggested task: {error}"))
            continue
        suggested = (
            None
            if task is None
            else {"id": task.id, "title": task.title, "status": task.status.value, "feature": task.feature}
        )
        suggestions.append({**dataclasses.asdict(signal), "suggested_task": suggested})
    return {
        "counts": services.inbox.counts(),
        "asks": asks,
        "suggestions": suggestions,
        "flags": flags,
        "errors": errors,
    }
