"""Commands that report on a project: `status` and `inbox`."""

from __future__ import annotations

import argparse
from typing import Any

from ralph_desk.cli.command import Command, project_services
from ralph_desk.cli.errors import EXIT_OK, PROG, UsageError, left_out
from ralph_desk.cli.output import jsonable, money, print_json, shorten, table


def _configure_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _run_status(args: argparse.Namespace) -> int:
    from ralph_desk.services.reports import status_report
    from ralph_desk.store.errors import StoreDamagedError

    with project_services(args) as services:
        try:
            services.db.require_sound()  # figures read from a damaged file would be wrong, not a report
        except StoreDamagedError as error:
            raise UsageError(f"cannot report on the project at {services.paths.root}: {error}") from None
        report = jsonable(status_report(services))
    if args.json:
        print_json(report)
        return EXIT_OK
    project, tasks, inbox, cost = report["project"], report["tasks"], report["inbox"], report["cost"]
    lines = [project["title"], str(project["root"])]
    if project["description"]:
        lines.append(shorten(project["description"], 100))
    lines += ["", f"Tasks ({tasks['total']})"]
    lines += table([(status, count) for status, count in tasks["by_status"].items()])
    if tasks["by_feature"]:
        lines += ["", "By feature"]
        lines += table(
            [
                (name, f"{counts['done']}/{counts['total']} done")
                for name, counts in tasks["by_feature"].items()
            ]
        )
    lines += ["", "Inbox"]
    lines += table(
        [("questions", inbox["asks"]), ("suggestions", inbox["suggestions"]), ("flags", inbox["flags"])]
    )
    lines += ["", "Agent sessions"]
    lines += table(
        [
            ("sessions", cost["sessions"]),
            ("turns", cost["turns"]),
            ("cost", money(cost["total_usd"])),
            ("tasks finished / hour", _per_hour(report["throughput"])),
        ]
    )
    lines += ["", f"Sandbox: {report['sandbox']['summary']}"]
    print("\n".join(lines + _checks_lines(report["checks"])))
    return EXIT_OK


def _checks_lines(checks: dict[str, Any]) -> list[str]:
    """The configured checks and how many tasks their latest runs passed or failed."""
    if not checks["configured"]:
        return []
    verdicts = [task["verdict"] for task in checks["tasks"]]
    rows = [
        (check["name"], "required" if check["required"] else "advisory", shorten(check["run"], 60))
        for check in checks["configured"]
    ]
    counts = f"tasks: {verdicts.count('passed')} passed, {verdicts.count('failed')} failed"
    return ["", f"Checks  — {counts}  ({PROG} checks run)", *table(rows)]


def _per_hour(throughput: dict[str, Any]) -> str:
    """`2.5 (last 3 h) · 1.2 overall`, `—` where no time passed."""

    def rate(figures: dict[str, Any]) -> str:
        return "—" if figures["per_hour"] is None else f"{figures['per_hour']:g}"

    window = f"{throughput['window_hours']:g}"
    return f"{rate(throughput['recent'])} (last {window} h) · {rate(throughput['overall'])} overall"


def _run_inbox(args: argparse.Namespace) -> int:
    from ralph_desk.services.reports import inbox_report

    with project_services(args) as services:
        found = inbox_report(services)
    report = jsonable(found)
    if args.json:
        print_json(report)
    else:
        print("\n".join(_inbox_lines(report)))
    return left_out(found["errors"])


def _inbox_lines(report: dict[str, Any]) -> list[str]:
    asks, suggestions, flags = report["asks"], report["suggestions"], report["flags"]
    lines = [f"Questions ({len(asks)})  — answer with: {PROG} answer ASK_ID TEXT"]
    rows: list[tuple[object, ...]] = []
    for ask in asks:
        rows.append((f"#{ask['id']}", f"task #{ask['task_id']}", shorten(ask["question"])))
        if ask.get("options"):
            shown = [
                f"{option} (preferred)" if option == ask.get("preferred") else option
                for option in ask["options"]
            ]
            rows.append(("", "", "options: " + ", ".join(shown)))
    lines += table(rows) or ["  (none)"]
    lines += ["", f"Suggestions ({len(suggestions)})  — {PROG} approve TASK_ID / reject TASK_ID --reason R"]
    rows = []
    for item in suggestions:
        task = item["suggested_task"]
        if task is not None:
            rows.append((f"task #{task['id']}", task["feature"], shorten(task["title"])))
        else:
            rows.append((f"#{item['id']}", item["kind"], shorten(item["what"])))
    lines += table(rows) or ["  (none)"]
    lines += ["", f"Flags ({len(flags)})  — {PROG} triage FLAG_ID --resolution R"]
    rows = [
        (
            f"#{flag['id']}",
            flag["severity"],
            flag["category"],
            f"task #{flag['task_id']}",
            shorten(flag["what"], 60),
        )
        for flag in flags
    ]
    lines += table(rows) or ["  (none)"]
    return lines


STATUS = Command("status", "show task counts, the inbox and cost", _configure_json, _run_status)
INBOX = Command(
    "inbox", "list waiting questions, suggested tasks and open flags", _configure_json, _run_inbox
)
