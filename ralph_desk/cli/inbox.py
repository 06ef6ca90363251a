"""Commands that act on the inbox (`answer`, `approve`, `reject`, `triage`) and `delete` a task."""

from __future__ import annotations

import argparse

from ralph_desk.cli.command import Command, project_services
from ralph_desk.cli.errors import EXIT_OK


def _configure_answer(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ask_id", metavar="ASK_ID", type=int, help="the question's id (see `inbox`)")
    parser.add_argument("text", metavar="TEXT", help="the answer")


def _run_answer(args: argparse.Namespace) -> int:
    with project_services(args) as services:
        signal = services.inbox.answer(args.ask_id, args.text)
    print(f"Answered question #{args.ask_id}; task #{signal.task_id} is pending again")
    return EXIT_OK


def _configure_task_id(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task_id", metavar="TASK_ID", type=int, help="the suggested task's id (see `inbox`)")


def _run_approve(args: argparse.Namespace) -> int:
    with project_services(args) as services:
        task = services.inbox.approve(args.task_id)
    print(f"Approved task #{task.id}: {task.title} (now {task.status.value})")
    return EXIT_OK


def _configure_delete(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task_id", metavar="TASK_ID", type=int, help="the task's id (see `status`)")


def _run_delete(args: argparse.Namespace) -> int:
    with project_services(args) as services:
        title = services.tasks.get(args.task_id).title
        told = services.retiring.delete_task(args.task_id)
    print(f"Deleted task #{args.task_id}: {title}" + (f"; {told}" if told else ""))
    return EXIT_OK


def _configure_reject(parser: argparse.ArgumentParser) -> None:
    _configure_task_id(parser)
    parser.add_argument("--reason", required=True, help="why it is rejected (kept as a comment)")


def _run_reject(args: argparse.Namespace) -> int:
    with project_services(args) as services:
        task = services.inbox.reject(args.task_id, args.reason)
    print(f"Rejected task #{task.id}: {task.title} (now {task.status.value})")
    return EXIT_OK


def _configure_triage(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("flag_id", metavar="FLAG_ID", type=int, help="the flag's id (see `inbox`)")
    parser.add_argument(
        "--resolution",
        required=True,
        help="acknowledged, resolved, dismissed, or convert (makes a pending task of it)",
    )


def _run_triage(args: argparse.Namespace) -> int:
    with project_services(args) as services:
        result = services.inbox.triage(args.flag_id, args.resolution)
    resolution = result.flag.resolution.value if result.flag.resolution else args.resolution
    print(f"Flag #{result.flag.id} is now {resolution}")
    if result.task is not None:
        print(f"Created task #{result.task.id}: {result.task.title}")
    return EXIT_OK


ANSWER = Command("answer", "answer an agent's question", _configure_answer, _run_answer)
APPROVE = Command("approve", "approve an agent-suggested task", _configure_task_id, _run_approve)
REJECT = Command("reject", "reject an agent-suggested task", _configure_reject, _run_reject)
TRIAGE = Command("triage", "set the resolution of a flag", _configure_triage, _run_triage)
DELETE = Command(
    "delete", "delete a task and its worktree (unmerged work stays)", _configure_delete, _run_delete
)
