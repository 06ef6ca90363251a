"""The `review` command: list, show, comment on, approve, send back, discard or restore work in review."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from ralph_desk.cli.command import Command, Parser, project_services
from ralph_desk.cli.errors import EXIT_FAILURE, EXIT_OK, PROG, CommandFailed, UsageError, left_out
from ralph_desk.cli.output import print_json, shorten, table
from ralph_desk.domain.enums import DiffSide, TaskStatus


def _configure_review(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=Parser)
    # The project options again, after the action, without overriding those given before it.
    common = Parser(add_help=False)
    common.add_argument("--root", default=argparse.SUPPRESS, metavar="DIR", help="the project folder")
    common.add_argument("--db-url", default=argparse.SUPPRESS, metavar="URL", help="database URL")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    actions.add_parser("list", help="list the tasks in review", parents=[common])
    show = actions.add_parser("show", help="show a task's review and diff", parents=[common])
    show.add_argument("task_id", metavar="ID", type=int)
    show.add_argument("--session", metavar="S", help="one session's diff: its id, or its number (1 = first)")
    approve = actions.add_parser(
        "approve", help="merge the commit whose diff you read (see `show`) into the base", parents=[common]
    )
    approve.add_argument("task_id", metavar="ID", type=int)
    approve.add_argument(
        "--commit", metavar="OID", help="the commit `review show ID` printed: exactly this one merges"
    )
    approve.add_argument(
        "--anyway",
        action="store_true",
        help="merge although its required checks fail (kept with the approval)",
    )
    approve.add_argument(
        "--drop-comments",
        action="store_true",
        help="merge although you have unsent comments, which are dropped (else send them with `changes`)",
    )
    changes = actions.add_parser(
        "changes", help="send the task back with its unsent comments (and this one)", parents=[common]
    )
    changes.add_argument("task_id", metavar="ID", type=int)
    changes.add_argument("--comment", metavar="TEXT", help="what to change (needed without unsent comments)")
    _comment_place(changes)
    comment = actions.add_parser(
        "comment", help="keep a comment on the task, sent with the decision", parents=[common]
    )
    comment.add_argument("task_id", metavar="ID", type=int)
    comment.add_argument("--comment", required=True, metavar="TEXT", help="what to change")
    _comment_place(comment)
    edit = actions.add_parser("edit", help="change the text of your unsent comment", parents=[common])
    edit.add_argument("comment_id", metavar="COMMENT", type=int, help="the comment's id (see `show`)")
    edit.add_argument("--comment", required=True, metavar="TEXT", help="its new text")
    delete = actions.add_parser("delete", help="delete your unsent comment", parents=[common])
    delete.add_argument("comment_id", metavar="COMMENT", type=int, help="the comment's id (see `show`)")
    discard = actions.add_parser("discard", help="drop the task's branch and worktree", parents=[common])
    discard.add_argument("task_id", metavar="ID", type=int)
    discard.add_argument("--skip", action="store_true", help="skip the task instead of starting it again")
    restore = actions.add_parser(
        "restore", help="bring back the task's discarded work (kept 30 days), as it was", parents=[common]
    )
    restore.add_argument("task_id", metavar="ID", type=int)
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _comment_place(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--file", metavar="F", help="the file the comment is about")
    parser.add_argument("--line", metavar="N", type=int, help="the line of --file (in the new file)")
    parser.add_argument(
        "--old", action="store_true", help="--line is a removed line, numbered in the old file"
    )


def _run_review(args: argparse.Namespace) -> int:
    from ralph_desk.services.errors import InvalidValueError
    from ralph_desk.services.reviews import CommentDraft

    with project_services(args) as services:
        reviews = services.reviews
        if args.action in ("comment", "edit", "delete"):
            if args.action == "comment":
                side = DiffSide.OLD if args.old else DiffSide.NEW
                kept = reviews.add_comment(args.task_id, args.comment, args.file, args.line, side=side)
                said = f"Comment #{kept.id} kept on task #{kept.task_id}; it is sent with your decision"
            elif args.action == "edit":
                kept = reviews.edit_comment(args.comment_id, args.comment)
                said = f"Comment #{kept.id} on task #{kept.task_id} now reads: {kept.body}"
            else:
                kept = reviews.delete_comment(args.comment_id)
                said = f"Comment #{kept.id} on task #{kept.task_id} deleted"
            return _review_out(args, kept, [said])
        if args.action == "list":
            items = reviews.list()
            code = _review_out(args, items, _review_list_lines(items))
            return left_out(items.errors) or code
        if args.action == "show":
            session = int(args.session) if args.session and args.session.isdigit() else args.session
            diff = reviews.diff(args.task_id, session)
            item = reviews.get(args.task_id)
            checks = services.checks.evidence(item.task.id, services.workspaces.config().checks)
            shown = {
                "review": item,
                "checks": checks,
                "diff": diff.text,
                "pin": diff.pin,
                "rules_changed": diff.rules_changed,
            }
            pinned = _review_pin_lines(item.task.id, diff, whole=session is None)
            lines = [*_review_show_lines(item), *_review_checks_lines(checks), *pinned, "", diff.text]
            return _review_out(args, shown, lines)
        if args.action == "approve":
            result = _approve_reviewed(reviews, args.task_id, args.commit, args.anyway, args.drop_comments)
        elif args.action == "changes":
            side = DiffSide.OLD if args.old else DiffSide.NEW
            if args.comment is None and (args.file or args.line is not None or args.old):
                raise InvalidValueError("comment", None, "a --comment for --file, --line or --old")
            drafts = (
                [CommentDraft(args.comment, args.file, args.line, side)] if args.comment is not None else []
            )
            result = reviews.request_changes(args.task_id, drafts)
        elif args.action == "restore":
            result = reviews.restore(args.task_id)
        else:
            result = reviews.discard(args.task_id, skip=args.skip)
    _review_out(args, result, [f"Task #{result.task_id}: {result.message} (now {result.status})"])
    not_merged = args.action == "approve" and result.status != TaskStatus.DONE.value
    return EXIT_FAILURE if result.conflicts or not_merged else EXIT_OK


def _approve_reviewed(
    reviews: Any, task_id: int, commit: str | None, anyway: bool = False, drop_comments: bool = False
) -> Any:
    """Approve the commit given; without one, or when the branch moved, say how to read and approve it."""
    from ralph_desk.services.reviews import ReviewMovedError

    try:
        return reviews.approve(task_id, commit, anyway=anyway, drop_comments=drop_comments)
    except ReviewMovedError as error:
        if error.tip is None:
            raise
        read = f"{PROG} review show {task_id}"
        if commit is None:
            raise UsageError(
                f"review approve needs --commit, the commit whose diff you read, so that nothing you did not "
                f"see merges. Read the diff with `{read}`; it prints the command, now "
                f"`{PROG} review approve {task_id} --commit {error.tip}`"
            ) from None
        raise CommandFailed(
            f"task #{task_id} was not merged: its branch moved since you read its diff (it is at {error.tip} "
            f"now, not {commit}). Read the new diff with `{read}` and approve that"
        ) from None


def _review_pin_lines(task_id: int, diff: Any, whole: bool) -> list[str]:
    """The commit the diff shows and the command that merges exactly it; the rule files flagged."""
    lines = []
    if diff.rules_changed:
        lines.append(
            "  FLAGGED: the branch changes the project's rules under .ralph/ — approval is refused until "
            f"they are removed from the branch: {', '.join(diff.rules_changed)}"
        )
    if diff.pin is not None and whole:
        lines.append(f"  commit {diff.pin.tip} (diff from {diff.pin.base})")
        lines.append(f"  approve exactly this diff: {PROG} review approve {task_id} --commit {diff.pin.tip}")
    elif diff.pin is not None:
        lines.append(f"  session diff {diff.pin.base}..{diff.pin.tip}")
    return lines


def _review_checks_lines(checks: Any) -> list[str]:
    """The verdict of the task's checks and each latest run, with where its whole output is."""
    if not checks.latest:
        return [f"  checks: {checks.verdict.value}"] if checks.verdict.value != "none" else []
    lines = [f"  checks: {checks.verdict.value}"]
    for run in checks.latest:
        kind = "" if run.required else " (advisory)"
        lines.append(
            f"    {run.name}{kind}: {run.status.value}, exit {run.exit_code}, {run.duration_s or 0:.1f} s"
            f" — {run.log_path or 'no log'}"
        )
    return lines


def _review_out(args: argparse.Namespace, value: Any, lines: list[str]) -> int:
    if args.json:
        print_json(value)
    else:
        print("\n".join(lines).rstrip("\n"))
    return EXIT_OK


def _review_list_lines(items: Sequence[Any]) -> list[str]:
    rows = [
        (
            f"#{item.task.id}",
            item.branch or "(no branch)",
            f"{len(item.sessions)} sessions",
            shorten(item.task.title),
            item.merge or "awaits review",
        )
        for item in items
    ]
    actions = "show / comment / approve / changes / discard / restore"
    head = f"In review ({len(items)})  — {PROG} review {actions} ID"
    return [head, *(table(rows) or ["  (none)"])]


def _review_show_lines(item: Any) -> list[str]:
    lines = [f"Task #{item.task.id}: {item.task.title} ({item.task.status.value})"]
    lines.append(f"  branch {item.branch or '(none)'} → {item.base or '(no base)'}")
    lines.append(f"  {item.merge or 'awaits review'}")
    if item.summary:
        lines.append(f"  agent: {shorten(item.summary)}")
    lines += [
        f"  session {n}: {s.id} {s.outcome or ''} {s.closing_verb or ''}"
        for n, s in enumerate(item.sessions, 1)
    ]
    lines += [
        f"  comment #{c.id} [{'unsent' if c.pending else c.state.value}] {c.where or 'task'}: {c.body}"
        for c in item.comments
    ]
    return lines


REVIEW = Command(
    "review",
    "list, show, approve, send back, discard or restore work in review",
    _configure_review,
    _run_review,
)
