"""The `ralph-desk` command line: every subcommand a person may script without the window.

To add a subcommand, write a `_configure_x(parser)` and a `_run_x(args)` and append a `Command` to
`COMMANDS`; import heavy modules (the MCP SDK, the loop, Qt) inside the configure and run functions:
a command's configure function runs only when that command is chosen, so that `--version` and quick
commands such as `status` stay quick. A folder as the first argument means `open` that folder.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import logging
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from ralph_desk import __version__
from ralph_desk.domain.enums import DiffSide, TaskStatus
from ralph_desk.domain.listing import ItemError
from ralph_desk.domain.text import STORABLE_WORDING, unstorable
from ralph_desk.project import (
    DB_URL_ENV,
    ProjectError,
    ProjectPaths,
    init_project,
    validate_project,
)
from ralph_desk.project.checks import base_branch_problems

PROG = "ralph-desk"
EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
DEBUG_ENV = "RALPH_DEBUG"
REHEARSE = "rehearse"  # the rehearsal agent's hidden command (loop/agents/rehearsal.py starts it)

log = logging.getLogger("ralph_desk.cli")

if TYPE_CHECKING:  # importing the services at start-up would slow down `--help`
    from ralph_desk.domain.records import Discipline
    from ralph_desk.loop.control import LoopController
    from ralph_desk.services.container import Services
    from ralph_desk.services.opening import ServicesOnFirstUse


class UsageError(Exception):
    """The command line was wrong, or what it names does not fit; exit code 2."""


class CommandFailed(Exception):
    """The command was understood but could not be carried out; exit code 1."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors become one `ralph-desk: error: …` line, not usage text."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


@dataclasses.dataclass(frozen=True)
class Command:
    """One subcommand: its name, one-line help, how it reads its arguments and what it does."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# --- shared helpers ------------------------------------------------------------------------------


def _root(args: argparse.Namespace) -> Path:
    return Path(args.root)


@contextmanager
def _services(args: argparse.Namespace) -> Iterator[Services]:
    """The services of the project at `--root`, closed afterwards; a broken project is a clean error."""
    from ralph_desk.services.container import Services
    from ralph_desk.store.errors import in_words
    from ralph_desk.store.migrate import SchemaTooNewError

    paths = ProjectPaths.at(_root(args))
    if not paths.ralph.is_dir():
        raise UsageError(
            f"no ralph-desk project at {paths.root} (no .ralph/ folder); "
            f"run `{PROG} init {paths.root}` or pass --root"
        )
    try:
        services = Services.open(paths, args.db_url)
    except SchemaTooNewError as error:
        raise CommandFailed(str(error)) from None
    except Exception as error:  # a damaged project: say what validate finds rather than a traceback
        log.debug("opening %s failed", paths.root, exc_info=True)
        problems = validate_project(paths.root, args.db_url)
        detail = str(problems[0]) if problems else in_words(error)
        raise UsageError(f"cannot open the project at {paths.root}: {detail}") from None
    try:
        yield services
    finally:
        services.close()


def _jsonable(value: Any) -> Any:
    """Records, enums, dates and paths as plain JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _jsonable(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(item) for item in value]
    return value


def _print_json(value: Any, out: TextIO | None = None) -> None:
    stream = out or sys.stdout
    stream.write(json.dumps(_jsonable(value), indent=2, ensure_ascii=False) + "\n")


def _table(rows: Sequence[Sequence[object]], indent: str = "  ") -> list[str]:
    """Rows of cells as left-aligned columns (the last column is not padded)."""
    cells = [[str(cell) for cell in row] for row in rows]
    if not cells:
        return []
    widths = [max(len(row[index]) for row in cells if index < len(row)) for index in range(len(cells[0]))]
    lines = []
    for row in cells:
        padded = [cell.ljust(widths[index]) for index, cell in enumerate(row[:-1])] + row[-1:]
        lines.append((indent + "  ".join(padded)).rstrip())
    return lines


def _shorten(text: str | None, limit: int = 72) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _money(amount: float) -> str:
    return f"${amount:,.2f}"


# --- init, validate, demo, open ------------------------------------------------------------------


def _configure_init(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="the project folder (created if missing)")
    parser.add_argument("--title", help="the project title (default: the folder name)")
    parser.add_argument(
        "--force",
        action="store_true",
        help="re-create the configuration of an existing .ralph/, keeping the database, "
        "progress.txt and learnings.txt",
    )


def _run_init(args: argparse.Namespace) -> int:
    existed = ProjectPaths.at(args.dir).ralph.is_dir()
    paths = init_project(args.dir, title=args.title, force=args.force, db_url=args.db_url)
    if existed:
        print(f"Re-created the configuration of {paths.ralph}")
        print("Kept the database, progress.txt, learnings.txt and logs.")
    else:
        print(f"Created {paths.ralph}")
    for problem in base_branch_problems(paths):  # the project opens, but no task can start yet
        sys.stderr.write(f"{PROG}: warning: {problem.message}\n")
    return EXIT_OK


def _configure_validate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", nargs="?", help="the project folder (default: --root)")
    parser.add_argument("--json", action="store_true", help="print the problems as JSON")


def _run_validate(args: argparse.Namespace) -> int:
    root = Path(args.dir) if args.dir is not None else _root(args)
    problems = validate_project(root, args.db_url)
    if args.json:
        _print_json(
            {"ok": not problems, "problems": [{"path": p.path, "message": p.message} for p in problems]}
        )
    elif not problems:
        print(f"OK: {ProjectPaths.at(root).ralph} is a sound ralph-desk project")
    else:
        for problem in problems:
            print(f"{problem.path}: {problem.message}")
    if problems:
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        raise UsageError(f"{count} in {ProjectPaths.at(root).ralph}")
    return EXIT_OK


def _configure_demo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="the folder to create the demo project in")


def _run_demo(args: argparse.Namespace) -> int:
    from ralph_desk.demo import create_demo

    paths = create_demo(args.dir, db_url=args.db_url)
    print(f"Created the demo project in {paths.root}")
    print(f"  {PROG} status --root {paths.root}")
    return EXIT_OK


def _configure_open(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", nargs="?", help="the project folder (default: --root)")


def _run_open(args: argparse.Namespace) -> int:
    folder = Path(args.dir if args.dir is not None else _root(args))
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise UsageError(f"the folder {folder} {what}; `{PROG} init {folder}` makes a new project there")
    return launch(folder, args.db_url)


def demo_home() -> Path:
    """Where the no-argument command keeps its demo project: the user's data folder."""
    import platformdirs

    return Path(platformdirs.user_data_dir("ralph-desk")) / "demo"


def _run_default() -> int:
    from ralph_desk.demo import create_demo

    root = demo_home()
    if not ProjectPaths.at(root).ralph.is_dir():
        create_demo(root)
    return launch(root)


def _window_launcher() -> Callable[..., object] | None:
    """`ralph_desk.app.launch_window`, or None when this build has no window."""
    try:
        app = importlib.import_module("ralph_desk.app")
    except ImportError as error:
        if error.name != "ralph_desk.app":
            raise
        return None
    launch_window: Callable[..., object] | None = getattr(app, "launch_window", None)
    return launch_window


def launch(root: Path, db_url: str | None = None) -> int:
    """Open the window on the project at `root`, which offers to initialise a plain folder."""
    launch_window = _window_launcher()
    if launch_window is None:
        paths = ProjectPaths.at(root)
        if not paths.ralph.is_dir():
            raise UsageError(f"no ralph-desk project at {paths.root}; run `{PROG} init {paths.root}` first")
        print(f"the window is not available in this build; the project is at {root}")
        print(f"  {PROG} status --root {root}")
        return EXIT_OK
    result = launch_window(root, db_url=db_url)
    return result if isinstance(result, int) else EXIT_OK


# --- status and inbox ----------------------------------------------------------------------------


def _configure_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _run_status(args: argparse.Namespace) -> int:
    from ralph_desk.services.reports import status_report

    with _services(args) as services:
        report = _jsonable(status_report(services))
    if args.json:
        _print_json(report)
        return EXIT_OK
    project, tasks, inbox, cost = report["project"], report["tasks"], report["inbox"], report["cost"]
    lines = [project["title"], str(project["root"])]
    if project["description"]:
        lines.append(_shorten(project["description"], 100))
    lines += ["", f"Tasks ({tasks['total']})"]
    lines += _table([(status, count) for status, count in tasks["by_status"].items()])
    if tasks["by_feature"]:
        lines += ["", "By feature"]
        lines += _table(
            [
                (name, f"{counts['done']}/{counts['total']} done")
                for name, counts in tasks["by_feature"].items()
            ]
        )
    lines += ["", "Inbox"]
    lines += _table(
        [("questions", inbox["asks"]), ("suggestions", inbox["suggestions"]), ("flags", inbox["flags"])]
    )
    lines += ["", "Agent sessions"]
    lines += _table(
        [
            ("sessions", cost["sessions"]),
            ("turns", cost["turns"]),
            ("cost", _money(cost["total_usd"])),
            ("tasks finished / hour", _per_hour(report["throughput"])),
        ]
    )
    print("\n".join(lines))
    return EXIT_OK


def _per_hour(throughput: dict[str, Any]) -> str:
    """`2.5 (last 3 h) · 1.2 overall`, `—` where no time passed."""

    def rate(figures: dict[str, Any]) -> str:
        return "—" if figures["per_hour"] is None else f"{figures['per_hour']:g}"

    window = f"{throughput['window_hours']:g}"
    return f"{rate(throughput['recent'])} (last {window} h) · {rate(throughput['overall'])} overall"


def _run_inbox(args: argparse.Namespace) -> int:
    from ralph_desk.services.reports import inbox_report

    with _services(args) as services:
        found = inbox_report(services)
    report = _jsonable(found)
    if args.json:
        _print_json(report)
    else:
        print("\n".join(_inbox_lines(report)))
    return _left_out(found["errors"])


def _inbox_lines(report: dict[str, Any]) -> list[str]:
    asks, suggestions, flags = report["asks"], report["suggestions"], report["flags"]
    lines = [f"Questions ({len(asks)})  — answer with: {PROG} answer ASK_ID TEXT"]
    rows: list[tuple[object, ...]] = []
    for ask in asks:
        rows.append((f"#{ask['id']}", f"task #{ask['task_id']}", _shorten(ask["question"])))
        if ask.get("options"):
            shown = [
                f"{option} (preferred)" if option == ask.get("preferred") else option
                for option in ask["options"]
            ]
            rows.append(("", "", "options: " + ", ".join(shown)))
    lines += _table(rows) or ["  (none)"]
    lines += ["", f"Suggestions ({len(suggestions)})  — {PROG} approve TASK_ID / reject TASK_ID --reason R"]
    rows = []
    for item in suggestions:
        task = item["suggested_task"]
        if task is not None:
            rows.append((f"task #{task['id']}", task["feature"], _shorten(task["title"])))
        else:
            rows.append((f"#{item['id']}", item["kind"], _shorten(item["what"])))
    lines += _table(rows) or ["  (none)"]
    lines += ["", f"Flags ({len(flags)})  — {PROG} triage FLAG_ID --resolution R"]
    rows = [
        (
            f"#{flag['id']}",
            flag["severity"],
            flag["category"],
            f"task #{flag['task_id']}",
            _shorten(flag["what"], 60),
        )
        for flag in flags
    ]
    lines += _table(rows) or ["  (none)"]
    return lines


# --- inbox actions -------------------------------------------------------------------------------


def _configure_answer(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ask_id", metavar="ASK_ID", type=int, help="the question's id (see `inbox`)")
    parser.add_argument("text", metavar="TEXT", help="the answer")


def _run_answer(args: argparse.Namespace) -> int:
    with _services(args) as services:
        signal = services.inbox.answer(args.ask_id, args.text)
    print(f"Answered question #{args.ask_id}; task #{signal.task_id} is pending again")
    return EXIT_OK


def _configure_task_id(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task_id", metavar="TASK_ID", type=int, help="the suggested task's id (see `inbox`)")


def _run_approve(args: argparse.Namespace) -> int:
    with _services(args) as services:
        task = services.inbox.approve(args.task_id)
    print(f"Approved task #{task.id}: {task.title} (now {task.status.value})")
    return EXIT_OK


def _configure_delete(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task_id", metavar="TASK_ID", type=int, help="the task's id (see `status`)")


def _run_delete(args: argparse.Namespace) -> int:
    with _services(args) as services:
        title = services.tasks.get(args.task_id).title
        told = services.retiring.delete_task(args.task_id)
    print(f"Deleted task #{args.task_id}: {title}" + (f"; {told}" if told else ""))
    return EXIT_OK


def _configure_reject(parser: argparse.ArgumentParser) -> None:
    _configure_task_id(parser)
    parser.add_argument("--reason", required=True, help="why it is rejected (kept as a comment)")


def _run_reject(args: argparse.Namespace) -> int:
    with _services(args) as services:
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
    with _services(args) as services:
        result = services.inbox.triage(args.flag_id, args.resolution)
    resolution = result.flag.resolution.value if result.flag.resolution else args.resolution
    print(f"Flag #{result.flag.id} is now {resolution}")
    if result.task is not None:
        print(f"Created task #{result.task.id}: {result.task.title}")
    return EXIT_OK


# --- prd.json ------------------------------------------------------------------------------------


def _configure_import_prd(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the prd.json to import")
    parser.add_argument("--feature", help="feature of new tasks (default: 'general', created when needed)")
    parser.add_argument(
        "--discipline", help="discipline of new tasks (default: 'general', created when needed)"
    )


def _run_import_prd(args: argparse.Namespace) -> int:
    from ralph_desk import prd

    try:
        document = prd.load(Path(args.file))
    except prd.PrdError as error:
        raise UsageError(str(error)) from None
    with _services(args) as services:
        try:
            result = prd.import_document(services, document, feature=args.feature, discipline=args.discipline)
        except prd.PrdError as error:
            raise UsageError(str(error)) from None
    print(
        f"Imported {len(document.stories)} stories from {args.file}: "
        f"{len(result.created)} created, {len(result.updated)} updated, {len(result.unchanged)} unchanged"
    )
    return EXIT_OK


def _configure_export_prd(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="where to write prd.json ('-' for standard output)")


def _run_export_prd(args: argparse.Namespace) -> int:
    from ralph_desk import prd

    with _services(args) as services:
        document, errors = prd.export(services)
    if args.file == "-":
        _print_json(document)
    else:
        prd.write(Path(args.file), document)
        print(f"Exported {len(document['userStories'])} stories to {args.file}")
    return _left_out(errors)


def _configure_mcp(parser: argparse.ArgumentParser) -> None:
    from ralph_desk.mcp_server.commands import configure_mcp

    configure_mcp(parser)


def _run_mcp(args: argparse.Namespace) -> int:
    from ralph_desk.mcp_server.commands import run_mcp
    from ralph_desk.mcp_server.deferred_loop import DeferredLoopControl

    return run_mcp(args, lambda services: DeferredLoopControl(lambda: _loop_controller(services)))


def _loop_controller(services: ServicesOnFirstUse) -> LoopController:
    """The loop behind a standalone server's loop-control tools, with an embedded server for its agents."""
    from ralph_desk.loop.control import LoopController
    from ralph_desk.mcp_server.embedded import EmbeddedMcp

    control = LoopController(services)
    hosts: list[EmbeddedMcp] = []

    async def issuer() -> EmbeddedMcp:
        if not hosts:
            host = EmbeddedMcp(services(), loop=control)
            await host.start()
            hosts.append(host)
        return hosts[0]

    control.make_issuer = issuer
    return control


def _configure_run(parser: argparse.ArgumentParser) -> None:
    from ralph_desk.loop.headless import configure_run
    from ralph_desk.mcp_server.commands import add_log_dir

    configure_run(parser)
    add_log_dir(parser)


def _run_run(args: argparse.Namespace) -> int:
    from ralph_desk.loop.headless import run_loop_command
    from ralph_desk.mcp_server.calllog import beside, in_project
    from ralph_desk.mcp_server.embedded import EmbeddedMcp
    from ralph_desk.mcp_server.standalone import setup_logging

    # Only when asked: the log's INFO lines would otherwise join the run's own output on stderr.
    paths, log_dir = ProjectPaths.at(_root(args)), Path(args.log_dir) if args.log_dir else None
    call_log = beside(setup_logging(paths, "run", log_dir=log_dir)) if log_dir else in_project(paths, "run")
    with _services(args) as services:
        return run_loop_command(
            args, services, lambda services, control: EmbeddedMcp(services, loop=control, call_log=call_log)
        )


def _configure_trust(parser: argparse.ArgumentParser) -> None:
    """`trust` takes only --root."""


def _run_trust(args: argparse.Namespace) -> int:
    from ralph_desk.loop.trust_check import trust_config

    with _services(args) as services:  # the disciplines' server commands live in the database
        print(trust_config(services.paths, services.disciplines.list()))
    return EXIT_OK


def _configure_session(parser: argparse.ArgumentParser) -> None:
    from ralph_desk.loop.headless import configure_session

    configure_session(parser)


def _run_session(args: argparse.Namespace) -> int:
    from ralph_desk.loop.headless import run_session_command
    from ralph_desk.mcp_server.embedded import EmbeddedMcp

    with _services(args) as services:
        return run_session_command(
            args, services, lambda services, control: EmbeddedMcp(services, loop=control)
        )


def _configure_connect(parser: argparse.ArgumentParser) -> None:
    from ralph_desk.mcp_server.commands import configure_connect

    configure_connect(parser)


def _run_connect(args: argparse.Namespace) -> int:
    from ralph_desk.mcp_server.commands import run_connect

    return run_connect(args)


def _configure_migrate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from", dest="source", metavar="URL", help="the database to copy (default: the project's)"
    )
    parser.add_argument(
        "--to",
        dest="target",
        metavar="URL",
        help="the database to fill (its password from PGPASSWORD or ~/.pgpass, not in the URL)",
    )
    parser.add_argument(
        "--to-file",
        dest="target_file",
        metavar="FILE",
        help="read the URL of the database to fill from this owner-only file (chmod 600)",
    )
    parser.add_argument("--force", action="store_true", help="replace the rows a target already holds")


def _run_migrate(args: argparse.Namespace) -> int:
    from ralph_desk.store import transfer

    if (args.target is None) == (args.target_file is None):
        raise UsageError("give the database to fill once: --to URL or --to-file FILE")
    if args.target_file is not None:
        args.target = _url_from_file(Path(args.target_file))
    source = args.source or ProjectPaths.at(_root(args)).db_url(args.db_url)
    print(f"Copying {transfer.shown(source)}\n     to {transfer.shown(args.target)}", flush=True)
    try:
        report = transfer.copy_database(source, args.target, force=args.force)
    except transfer.TransferMismatchError as error:
        print("\n".join(transfer.report_lines(error.report)))
        raise CommandFailed(f"{error}; nothing was copied") from None
    except transfer.TransferRequestError as error:
        raise UsageError(str(error)) from None
    except transfer.TransferError as error:
        raise CommandFailed(str(error)) from None
    print("\n".join(transfer.report_lines(report)))
    print(f"All {len(report.tables)} tables match: {report.rows} rows copied, ids kept.")
    if report.sequences_reset:
        print(f"Id sequences moved past the copied ids: {', '.join(report.sequences_reset)}.")
    if _holds_password(args.target):  # never suggest a password on a command line
        print(f"Use it with --db-url-file FILE (the URL, in a file only you may read) or set {DB_URL_ENV}.")
    else:
        print(f"Use it with --db-url {transfer.shown(args.target)} (or set {DB_URL_ENV}).")
    return EXIT_OK


# --- disciplines ---------------------------------------------------------------------------------

# Each action's words: the fewest, the most, and how they are written.
DISCIPLINE_WORDS = {
    "list": (0, 0, "no further words"),
    "show": (1, 1, "NAME"),
    "disable": (2, 1_000, "NAME TOOL …"),
    "enable": (2, 1_000, "NAME TOOL …"),
}
DISCIPLINE_ACTIONS = tuple(DISCIPLINE_WORDS)


def _configure_discipline(parser: argparse.ArgumentParser) -> None:
    """Arguments of `discipline`: one action word, then its words (options may come anywhere)."""
    parser.add_argument(
        "action",
        metavar="ACTION",
        choices=DISCIPLINE_ACTIONS,
        help="list, show NAME, disable or enable NAME TOOL…",
    )
    parser.add_argument("words", metavar="NAME [TOOL …]", nargs="*", help="the discipline, then tool names")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _run_discipline(args: argparse.Namespace) -> int:
    """Carry out `discipline ACTION`."""
    name, tools = _discipline_words(args.action, args.words)
    with _services(args) as services:
        disciplines = services.disciplines
        if args.action == "list":
            listed = disciplines.list()
            if args.json:
                _print_json([_jsonable(item) for item in listed])
                return _left_out(listed.errors)
            rows = [(item.name, item.display_name, _tool_names(item.disabled_tools)) for item in listed]
            print("\n".join(_table(rows) or ["  (no disciplines)"]))
            return _left_out(listed.errors)
        if args.action == "show":
            discipline = disciplines.get(name)
        elif args.action == "disable":
            discipline = disciplines.disable_tools(name, tools)
        else:
            discipline = disciplines.enable_tools(name, tools)
    if args.json:
        _print_json({**_jsonable(discipline), "tools_by_recipe": _tools_by_recipe(discipline)})
        return EXIT_OK
    print("\n".join(_discipline_lines(discipline)))
    return EXIT_OK


def _discipline_words(action: str, words: list[str]) -> tuple[str, list[str]]:
    """The discipline's name and the tool names, as many as the action takes; UsageError otherwise."""
    fewest, most, wanted = DISCIPLINE_WORDS[action]
    if not fewest <= len(words) <= most:
        raise UsageError(f"discipline {action} takes {wanted} (got: {' '.join(words) or 'nothing'})")
    return (words[0], words[1:]) if words else ("", [])


def _tool_names(names: tuple[str, ...] | list[str]) -> str:
    return ", ".join(names) if names else "(none)"


def _tools_by_recipe(discipline: Discipline) -> dict[str, list[str]]:
    """The tools a session of each recipe gets once this discipline took its tools away."""
    from ralph_desk.domain.enums import Recipe
    from ralph_desk.domain.recipes import enabled_tools
    from ralph_desk.domain.tools import in_registry_order

    taken = discipline.disabled_tools
    return {recipe.value: in_registry_order(enabled_tools(recipe, taken)) for recipe in Recipe}


def _discipline_lines(discipline: Discipline) -> list[str]:
    lines = [
        f"{discipline.name}: {discipline.display_name}",
        f"takes away: {_tool_names(discipline.disabled_tools)}",
        "",
        "Tools its sessions get, by recipe:",
    ]
    rows = [(recipe, _tool_names(tools)) for recipe, tools in _tools_by_recipe(discipline).items()]
    return lines + _table(rows)


# --- the table and the parser --------------------------------------------------------------------


# --- review --------------------------------------------------------------------------------------


def _configure_review(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=_Parser)
    # The project options again, after the action, without overriding those given before it.
    common = _Parser(add_help=False)
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

    with _services(args) as services:
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
            return _left_out(items.errors) or code
        if args.action == "show":
            session = int(args.session) if args.session and args.session.isdigit() else args.session
            diff = reviews.diff(args.task_id, session)
            item = reviews.get(args.task_id)
            shown = {"review": item, "diff": diff.text, "pin": diff.pin, "rules_changed": diff.rules_changed}
            pinned = _review_pin_lines(item.task.id, diff, whole=session is None)
            return _review_out(args, shown, [*_review_show_lines(item), *pinned, "", diff.text])
        if args.action == "approve":
            result = _approve_reviewed(reviews, args.task_id, args.commit)
        elif args.action == "changes":
            side = DiffSide.OLD if args.old else DiffSide.NEW
            if args.comment is None and (args.file or args.line is not None or args.old):
                raise InvalidValueError("comment", None, "a --comment for --file, --line or --old")
            drafts = (
                [CommentDraft(args.comment, args.file, args.line, side)] if args.comment is not None else []
            )
            result = reviews.request_changes(args.task_id, drafts)
        else:
            result = reviews.discard(args.task_id, skip=args.skip)
    _review_out(args, result, [f"Task #{result.task_id}: {result.message} (now {result.status})"])
    not_merged = args.action == "approve" and result.status != TaskStatus.DONE.value
    return EXIT_FAILURE if result.conflicts or not_merged else EXIT_OK


def _approve_reviewed(reviews: Any, task_id: int, commit: str | None) -> Any:
    """Approve the commit given; without one, or when the branch moved, say how to read and approve it."""
    from ralph_desk.services.reviews import ReviewMovedError

    try:
        return reviews.approve(task_id, commit)
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


def _review_out(args: argparse.Namespace, value: Any, lines: list[str]) -> int:
    if args.json:
        _print_json(value)
    else:
        print("\n".join(lines).rstrip("\n"))
    return EXIT_OK


def _review_list_lines(items: Sequence[Any]) -> list[str]:
    rows = [
        (
            f"#{item.task.id}",
            item.branch or "(no branch)",
            f"{len(item.sessions)} sessions",
            _shorten(item.task.title),
            item.merge or "awaits review",
        )
        for item in items
    ]
    head = f"In review ({len(items)})  — {PROG} review show / comment / approve / changes / discard ID"
    return [head, *(_table(rows) or ["  (none)"])]


def _review_show_lines(item: Any) -> list[str]:
    lines = [f"Task #{item.task.id}: {item.task.title} ({item.task.status.value})"]
    lines.append(f"  branch {item.branch or '(none)'} → {item.base or '(no base)'}")
    lines.append(f"  {item.merge or 'awaits review'}")
    if item.summary:
        lines.append(f"  agent: {_shorten(item.summary)}")
    lines += [
        f"  session {n}: {s.id} {s.outcome or ''} {s.closing_verb or ''}"
        for n, s in enumerate(item.sessions, 1)
    ]
    lines += [
        f"  comment #{c.id} [{'unsent' if c.pending else c.state.value}] {c.where or 'task'}: {c.body}"
        for c in item.comments
    ]
    return lines


COMMANDS: list[Command] = [
    Command("init", "create a project's .ralph/ folder", _configure_init, _run_init),
    Command("validate", "check a project's .ralph/ folder", _configure_validate, _run_validate),
    Command("status", "show task counts, the inbox and cost", _configure_json, _run_status),
    Command("demo", "create the demo project (Tidewater) in a folder", _configure_demo, _run_demo),
    Command("open", "open the window on a project", _configure_open, _run_open),
    Command("inbox", "list waiting questions, suggested tasks and open flags", _configure_json, _run_inbox),
    Command("answer", "answer an agent's question", _configure_answer, _run_answer),
    Command("approve", "approve an agent-suggested task", _configure_task_id, _run_approve),
    Command("reject", "reject an agent-suggested task", _configure_reject, _run_reject),
    Command("triage", "set the resolution of a flag", _configure_triage, _run_triage),
    Command("delete", "delete a task and its worktree (unmerged work stays)", _configure_delete, _run_delete),
    Command(
        "import-prd", "import the user stories of a prd.json as tasks", _configure_import_prd, _run_import_prd
    ),
    Command("export-prd", "write the tasks as a prd.json", _configure_export_prd, _run_export_prd),
    Command(
        "discipline",
        "list disciplines, or take tools away or give them back",
        _configure_discipline,
        _run_discipline,
    ),
    Command("mcp", "serve the project's MCP tools over stdio or HTTP", _configure_mcp, _run_mcp),
    Command("connect", "write and print a ready MCP config for a client", _configure_connect, _run_connect),
    Command("run", "run the Ralph loop headless until a limit, a stop or idleness", _configure_run, _run_run),
    Command(
        "trust",
        "allow the agent program the project's config.json names (asked again when it changes)",
        _configure_trust,
        _run_trust,
    ),
    Command("session", "run one agent session with a recipe's tools", _configure_session, _run_session),
    Command("migrate", "copy a project's database to another URL, checked", _configure_migrate, _run_migrate),
    Command(
        "review", "list, show, approve, send back or discard work in review", _configure_review, _run_review
    ),
]


class _CommandParser(_Parser):
    """A subcommand's parser that adds its own arguments when first used, so their modules load late."""

    pending: Callable[[argparse.ArgumentParser], None] | None = None

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        """Add the command's arguments the first time, then parse."""
        configure, self.pending = self.pending, None
        if configure is not None:
            configure(self)
        return super().parse_known_args(*args, **kwargs)


def _common_options() -> _CommandParser:
    common = _CommandParser(add_help=False)
    common.add_argument("--root", default=".", metavar="DIR", help="the project folder (default: current)")
    common.add_argument(
        "--db-url",
        default=None,
        metavar="URL",
        help=f"database URL instead of .ralph/db/ralph.db (default: ${DB_URL_ENV}); give a password "
        f"through --db-url-file, ${DB_URL_ENV} or libpq's PGPASSWORD / ~/.pgpass, never here: every "
        "local user can read a command line",
    )
    common.add_argument(
        "--db-url-file",
        default=None,
        metavar="FILE",
        help="read the database URL from this file, which only its owner may read (chmod 600)",
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command of `COMMANDS` (each configured when it is chosen)."""
    parser = _Parser(
        prog=PROG,
        usage=f"{PROG} [-h] [--version] [DIR | COMMAND ...]",
        description="Run a Ralph loop of coding agents and review what they signal. "
        "With a folder, opens the window on that project; without arguments, on the demo project.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    common = _common_options()
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", prog=PROG, parser_class=_CommandParser
    )
    for command in COMMANDS:
        sub = commands.add_parser(command.name, help=command.help, description=command.help, parents=[common])
        sub.pending = command.configure
        sub.set_defaults(run=command.run)
    return parser


def with_folder_as_open(argv: Sequence[str]) -> list[str]:
    """`ralph-desk DIR …` as `ralph-desk open DIR …`; commands and options pass unchanged."""
    arguments = list(argv)
    if not arguments or arguments[0].startswith("-") or arguments[0] in {c.name for c in COMMANDS}:
        return arguments
    # Only an existing folder: a mistyped command stays an "invalid choice", never a new project.
    if Path(arguments[0]).is_dir():
        return ["open", *arguments]
    if _looks_like_a_path(arguments[0]):
        raise UsageError(
            f"the folder {arguments[0]} does not exist; `{PROG} DIR` opens an existing folder "
            f"(`{PROG} init DIR` makes a new project)"
        )
    return arguments


def _looks_like_a_path(argument: str) -> bool:
    """A path, not a mistyped command: it has a separator, or starts with `.` or `~`."""
    return any(mark in argument for mark in ("/", "\\", os.sep)) or argument.startswith((".", "~"))


def _url_from_file(path: Path) -> str:
    """The database URL in an owner-only file; a line that is not one is refused, never shown."""
    from ralph_desk.project.private_files import read_private_line
    from ralph_desk.store.urls import URL_EXAMPLES, looks_like_url

    url = read_private_line(path, "the database URL")
    if not looks_like_url(url):
        raise UsageError(
            f"{path}: its line is not a database URL (not shown: it may be a secret); "
            f"allowed: one line such as {URL_EXAMPLES}"
        )
    return url


def _read_db_url(args: argparse.Namespace) -> None:
    """Take `--db-url-file`'s URL as `--db-url`; warn about a password given on the command line."""
    given_file = getattr(args, "db_url_file", None)
    if given_file is not None and getattr(args, "db_url", None):
        raise UsageError("give the database URL once: --db-url or --db-url-file, not both")
    given = (("--db-url", "db_url"), ("--from", "source"), ("--to", "target"))
    for option, name in given:
        url = getattr(args, name, None)
        if url and _holds_password(url):
            sys.stderr.write(
                f"{PROG}: warning: the password in {option} is visible to every local user "
                f"(/proc/PID/cmdline, `ps`); give it through --db-url-file, ${DB_URL_ENV}, or libpq's "
                "PGPASSWORD / ~/.pgpass instead\n"
            )
    if given_file is not None:
        args.db_url = _url_from_file(Path(given_file))


def _masked(message: str, arguments: Sequence[str]) -> str:
    """`message` without the password of any database URL the command line or $RALPH_DB_URL gave."""
    from ralph_desk.store.health import passwords_in

    for password in passwords_in(" ".join([*arguments, os.environ.get(DB_URL_ENV, "")])):
        # Where a URL holds it, not everywhere: a password such as "ralph" is also a word of the message.
        message = message.replace(f":{password}@", ":***@").replace(f"password={password}", "password=***")
    return message


def _holds_password(url: str) -> bool:
    from ralph_desk.store.health import redacted

    return redacted(url) != url


def _left_out(errors: Iterable[ItemError]) -> int:
    """Say on stderr which items could not be read and were left out: exit 1 if any, else 0."""
    code = EXIT_OK
    for error in errors:
        code = _fail(
            f"{error.kind} #{error.id} could not be read and is left out: {error.message}", EXIT_FAILURE
        )
    return code


def _fail(message: str, code: int) -> int:
    sys.stderr.write(f"{PROG}: error: {' '.join(message.split())}\n")
    return code


def exit_code_of(error: BaseException) -> int:
    """The exit code of an error: 2 when the request or the project is wrong, 1 when doing it failed."""
    from ralph_desk.services.errors import ConflictError, ServiceError

    if isinstance(error, UsageError | ProjectError):
        return EXIT_USAGE
    if isinstance(error, ServiceError) and not isinstance(error, ConflictError):
        return EXIT_USAGE
    return EXIT_FAILURE


def _message_of(error: Exception) -> str:
    from ralph_desk.services.errors import ServiceError
    from ralph_desk.store.errors import StoreError
    from ralph_desk.store.migrate import SchemaTooNewError

    known = (
        UsageError,
        ProjectError,
        ServiceError,
        CommandFailed,
        OSError,
        StoreError,
        SchemaTooNewError,
    )
    return str(error) if isinstance(error, known) else f"{type(error).__name__}: {error}"


def _refuse_unstorable(argv: Sequence[str]) -> None:
    """Refuse an argument that holds text UTF-8 cannot store (bytes that are not UTF-8), naming it."""
    for index, argument in enumerate(argv):
        if (why := unstorable(argument)) is None:
            continue
        option = argument.split("=", 1)[0] if argument.startswith("--") and "=" in argument else None
        before = argv[index - 1] if index else ""
        if option is None and before.startswith("-") and "=" not in before:
            option = before
        place = f"the value of {option}" if option else f"argument {index + 1}"
        raise UsageError(f"{place} ({argument!a}) holds {why}; allowed: {STORABLE_WORDING}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command line; returns the exit code (0 ok, 1 failure, 2 usage or validation error)."""
    logging.basicConfig(level=logging.DEBUG if os.environ.get(DEBUG_ENV) else logging.WARNING)
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == [REHEARSE]:  # hidden: the rehearsal agent's process, started by the loop
        from ralph_desk.loop.rehearse import main as rehearse

        return rehearse(arguments[1:])
    try:
        _refuse_unstorable(arguments)
        args = build_parser().parse_args(with_folder_as_open(arguments))
        _read_db_url(args)
        arguments.append(getattr(args, "db_url", None) or "")  # a URL from a file: masked like the others
        if args.command is None:
            return _run_default()
        run: Callable[[argparse.Namespace], int] = args.run
        return run(args)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except Exception as error:  # the top of every command: one line ($RALPH_DEBUG logs the traceback)
        log.debug("command failed", exc_info=True)
        return _fail(_masked(_message_of(error), arguments), exit_code_of(error))
