"""`ralph-desk run` and `ralph-desk session`: the loop without the window, printing what happens."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from ralph_desk.domain.endpoints import EndpointIssuer
from ralph_desk.domain.enums import LoopState, Recipe
from ralph_desk.domain.loop_results import EXIT_WAITING
from ralph_desk.loop.agents import adapter_for
from ralph_desk.loop.build import RunOptions, build_runner
from ralph_desk.loop.control import LoopController
from ralph_desk.loop.idle import IdleReport, idle_report
from ralph_desk.loop.model import ALL_DONE, NOTHING_RUNNABLE, EventKind, LiveEvent, LoopSettings
from ralph_desk.loop.planner import describe_queue, plan_recipe_session
from ralph_desk.loop.preview import preview_next_session
from ralph_desk.loop.runner import LoopRunner, LoopStatus
from ralph_desk.loop.settings import RunOverrides, load_checked
from ralph_desk.process_tree import on_stop_signals
from ralph_desk.project.config import RULES, problem
from ralph_desk.services.container import Services

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
RECIPES_FOR_SESSION = ("braindump", "yap", "ramble", "discuss", "enrichment", "opus_review", "understand")


class HostedIssuer(EndpointIssuer, Protocol):
    """An endpoint issuer that is also a server to start and stop (the embedded MCP host)."""

    async def start(self) -> None: ...
    async def stop(self) -> None: ...


IssuerFactory = Callable[[Services, LoopController], HostedIssuer]
"""Builds the embedded server whose loop-control tools the controller answers."""


class Beside(Protocol):
    """What a headless run serves beside its loop once the runner exists (the companion page)."""

    async def start(self, runner: LoopRunner, task: asyncio.Task[Any]) -> None: ...
    async def stop(self) -> None: ...


def configure_run(parser: argparse.ArgumentParser) -> None:
    """Arguments of `run`."""
    parser.add_argument("--agent", choices=("claude", "codex", "command"), default=None)
    parser.add_argument("--agent-command", default=None, help="e.g. 'tool {prompt_file} {mcp_config}'")
    parser.add_argument(
        "--claude-bin",
        default=None,
        help="the agent's program (default: agent_bin in config.json, else RALPH_CLAUDE_BIN or PATH)",
    )
    parser.add_argument("--model", default=None, help="model for task sessions (default: config.json)")
    parser.add_argument("--max-iterations", type=_setting("max_iterations", int), default=None)
    parser.add_argument("--max-cost", type=_setting("max_cost_usd", float), default=None, metavar="USD")
    parser.add_argument(
        "--parallel",
        type=_setting("parallel", int),
        default=None,
        metavar="N",
        help="agent sessions running at once, each in its task's worktree (default: parallel in config.json)",
    )
    parser.add_argument(
        "--session-timeout", type=_setting("session_timeout_s", int), default=None, metavar="S"
    )
    parser.add_argument("--dry-run", action="store_true", help="show what would run; start nothing")
    parser.add_argument("--allow-edits", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument(
        "--wait",
        action="store_true",
        help="when nothing is runnable, wait for answers, approvals or new tasks instead of exiting",
    )
    # The default since `--wait` came; still accepted so that existing scripts keep working.
    parser.add_argument("--exit-when-idle", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print events and the result as JSON lines")


def _setting(name: str, parse: Callable[[str], float]) -> Callable[[str], float]:
    """An argparse type for a run override: the number the config's own rule allows, else what is allowed."""

    def parsed(text: str) -> float:
        try:
            value = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not allowed: {RULES[name].allowed}") from None
        if problem(name, value) is not None:
            raise argparse.ArgumentTypeError(f"{text!r} is not allowed: {RULES[name].allowed}")
        return value

    return parsed


def configure_session(parser: argparse.ArgumentParser) -> None:
    """Arguments of `session`."""
    parser.add_argument("--recipe", choices=RECIPES_FOR_SESSION, required=True)
    parser.add_argument("--feature", default=None)
    parser.add_argument("--discipline", default=None)
    parser.add_argument(
        "--input", default=None, metavar="FILE", help="text handed to the session (e.g. a braindump)"
    )
    parser.add_argument("--agent", choices=("claude", "codex", "command"), default=None)
    parser.add_argument("--agent-command", default=None)
    parser.add_argument("--claude-bin", default=None)
    parser.add_argument("--model", default=None)
    parser.add_argument("--json", action="store_true")


def _settings(services: Services, args: argparse.Namespace, recipe: Recipe) -> LoopSettings:
    base = load_checked(services)
    models = dict(base.models)
    if getattr(args, "model", None):
        models[recipe.value] = args.model
    overrides = RunOverrides(
        agent=args.agent,
        agent_command=args.agent_command,
        agent_bin=args.claude_bin,
        models=models,
        max_iterations=getattr(args, "max_iterations", None),
        max_cost_usd=getattr(args, "max_cost", None),
        parallel=getattr(args, "parallel", None),
        session_timeout_s=getattr(args, "session_timeout", None),
        allow_edits=getattr(args, "allow_edits", None),
    )
    return load_checked(services, overrides)


class EventPrinter:
    """Prints live events as readable lines, or as JSON lines."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json

    def __call__(self, event: LiveEvent) -> None:
        if self.as_json:
            print(
                json.dumps(
                    {
                        "event": event.kind.value,
                        "text": event.text,
                        "session": event.session_id,
                        **{k: v for k, v in event.data.items() if _plain(v)},
                    }
                ),
                flush=True,
            )
            return
        text = event.text.replace("\n", " ")[:200]
        labels = {
            EventKind.SESSION_STARTED: "▶ session",
            EventKind.SESSION_ENDED: "■ session",
            EventKind.ASSISTANT_TEXT: "  agent",
            EventKind.TOOL_CALL: "  tool ",
            EventKind.TOOL_RESULT: "  result",
            EventKind.RATE_LIMIT: "  rate-limit",
            EventKind.RETRY: "  retry",
            EventKind.LOOP_STATE: "● loop",
            EventKind.ERROR: "  error",
            EventKind.PERMISSION_DENIED: "  denied",
            EventKind.COST: "  cost",
        }
        label = labels.get(event.kind)
        reason = event.data.get("reason")
        if event.kind is EventKind.LOOP_STATE and reason:
            text = f"{text} — {reason}"
        if label:
            print(f"{label}: {text}", flush=True)


def _plain(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


def _print_status(status: LoopStatus, as_json: bool, idle: IdleReport | None = None) -> None:
    if as_json:
        print(
            json.dumps(
                {
                    "event": "finished",
                    "state": status.state.value,
                    "iterations": status.iteration,
                    "cost_usd": round(status.cost_usd, 6),
                    "completed": status.completed,
                    "failed": status.failed,
                    "reason": status.stop_reason,
                    "allDone": idle.all_done if idle else None,
                    "waitingFor": list(idle.waiting) if idle else [],
                    "runningElsewhere": list(idle.elsewhere) if idle else [],
                }
            ),
            flush=True,
        )
        return
    reason = status.stop_reason or ""
    if idle is not None:
        reason = _idle_reason(idle)
    print(
        f"Loop {status.state.value} after {status.iteration} iteration(s), ${status.cost_usd:.4f}: {reason}",
        flush=True,
    )
    for line in idle.waiting if idle else ():
        print(f"  - {line}", flush=True)
    if idle is not None and idle.elsewhere:
        print("  running in another loop (nothing for a person to do about it):", flush=True)
        for line in idle.elsewhere:
            print(f"  - {line}", flush=True)


def _idle_reason(idle: IdleReport) -> str:
    if idle.waiting:
        return "nothing is runnable; waiting for a person:"
    return "nothing left to run here" if idle.elsewhere else "all done"


def _serving(services: Services, make_issuer: IssuerFactory) -> tuple[LoopController, HostedIssuer]:
    """The embedded server and the loop controller answering its loop-control tools through it."""
    control = LoopController(services)
    issuer = make_issuer(services, control)
    control.issue_through(issuer)
    return control, issuer


def run_loop_command(
    args: argparse.Namespace, services: Services, make_issuer: IssuerFactory, beside: Beside | None = None
) -> int:
    """`ralph-desk run`: the loop in this process (and `beside` it, the companion page when on);
    SIGINT/SIGTERM stop it cleanly."""
    settings = _settings(services, args, Recipe.TASK_EXECUTION)
    if args.dry_run:
        return _dry_run(services, settings, args.json)
    adapter_for(settings).check_available(settings)
    printer = EventPrinter(args.json)

    def on_event(event: LiveEvent) -> None:
        printer(event)
        if event.kind is EventKind.LOOP_STATE and event.text == LoopState.WAITING.value and not args.json:
            for line in idle_report(services).waiting:
                print(f"  - {line}", flush=True)

    status = asyncio.run(run_headless(services, settings, make_issuer, not args.wait, on_event, beside))
    report = idle_report(services) if status.stop_reason in (NOTHING_RUNNABLE, ALL_DONE) else None
    _print_status(status, args.json, report)
    return EXIT_WAITING if report is not None and report.waiting else 0


async def run_headless(
    services: Services,
    settings: LoopSettings,
    make_issuer: IssuerFactory,
    exit_when_idle: bool,
    on_event: Callable[[LiveEvent], None],
    beside: Beside | None = None,
) -> LoopStatus:
    """The loop of `ralph-desk run`, the embedded server its agents and IDE clients reach, and `beside`."""
    control, issuer = _serving(services, make_issuer)
    await issuer.start()
    runner = build_runner(services, issuer, settings, RunOptions(exit_when_idle=exit_when_idle))
    runner.subscribe(on_event)
    current = asyncio.current_task()
    assert current is not None
    control.follow(runner, current)  # the embedded server's ralph_status and ralph_stop see this loop
    restore = on_stop_signals(asyncio.get_running_loop(), runner.stop, STOP_SIGNALS)
    try:
        if beside is not None:
            await beside.start(runner, current)
        return await runner.run()
    finally:
        restore()
        if beside is not None:
            await beside.stop()
        await issuer.stop()


def _dry_run(services: Services, settings: LoopSettings, as_json: bool) -> int:
    queue = describe_queue(services, limit=20)
    preview = preview_next_session(services, settings, services.paths.root)
    if as_json:
        print(
            json.dumps(
                {
                    "dryRun": True,
                    "tasksToAttempt": [
                        {"id": t.id, "title": t.title, "priority": t.priority.value} for t in queue
                    ],
                    "prompt": preview.prompt if preview else None,
                    "mcpConfig": preview.mcp_config if preview else None,
                    "tools": sorted(preview.tools) if preview else [],
                },
                indent=2,
            )
        )
        return 0
    print("Tasks it would attempt, in order:")
    for task in queue:
        print(f"  #{task.id:<5} {task.priority.value:<8} {task.title}")
    if not queue:
        print("  (nothing is runnable)")
    if preview:
        print("\nTools of the first session: " + ", ".join(sorted(preview.tools)))
        print("\nMCP config of the first session (credential issued when it starts):")
        print(json.dumps(preview.mcp_config, indent=2))
        print("\nPrompt of the first session:\n")
        print(preview.prompt)
    return 0


def run_session_command(args: argparse.Namespace, services: Services, make_issuer: IssuerFactory) -> int:
    """`ralph-desk session --recipe R`: one agent session with that recipe's tools."""
    recipe = Recipe(args.recipe)
    settings = _settings(services, args, recipe)
    if recipe is Recipe.UNDERSTAND:
        settings = replace(settings, allow_edits=False)
    extra = Path(args.input).read_text(encoding="utf-8") if args.input else None
    adapter_for(settings).check_available(settings)
    plan = plan_recipe_session(
        services, recipe, feature=args.feature, discipline=args.discipline, extra_input=extra
    )

    async def main() -> int | None:
        _, issuer = _serving(services, make_issuer)
        await issuer.start()
        runner = build_runner(services, issuer, settings)
        runner.subscribe(EventPrinter(args.json))
        try:
            result = await runner.run_session(plan)
        finally:
            await issuer.stop()
        return result.exit_code

    exit_code = asyncio.run(main())
    print(f"Session {plan.session_id} ({recipe.value}) ended with exit code {exit_code}", file=sys.stderr)
    return 0 if exit_code == 0 else 1
