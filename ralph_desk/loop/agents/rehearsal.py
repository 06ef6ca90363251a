"""The rehearsal agent: built in, no model, no cost, no program to install; it plays scripted sessions.

Each session is a real agent process (`ralph-desk rehearse`, see `loop/rehearse.py`) that calls the
verbs its script names through the session's MCP endpoint, so signals, post-processing, the Inbox
and the live view all work as with a real agent. The demo's story scripts a session per task; any
other task gets a short generic one that closes with `done`.
"""

from __future__ import annotations

import json
from typing import Any

from ralph_desk.demo import DemoStep, own_command, story
from ralph_desk.domain.checks import FAILED_HEADING
from ralph_desk.domain.enums import LearningKind, LearningScope, Verb
from ralph_desk.loop.agents.base import session_file, write_mcp_config
from ralph_desk.loop.agents.claude_stream import ClaudeStreamParser
from ralph_desk.loop.model import AgentCommand, LoopSettings, SessionLaunch, SessionPlan
from ralph_desk.loop.prompt import answer_opening
from ralph_desk.loop.streams import StreamParser
from ralph_desk.project.confinement import HomeFile

COMMAND = "rehearse"
PAUSE_S = 0.4  # between steps, so a person watching the live view can read them


def rehearsal_command() -> list[str]:
    """How to start `ralph-desk rehearse` from this installation."""
    return own_command(COMMAND)


def generic_steps(plan: SessionPlan) -> tuple[DemoStep, ...]:
    """A short believable session for a task the story does not script (or a session with no task)."""
    if plan.task is None:
        return (DemoStep(say="Rehearsal: nothing to do in this kind of session."),)
    title = plan.task.title
    return (
        DemoStep(say=f"Rehearsing “{title}”: reading the task and its feature first."),
        DemoStep(
            say="Noting what a real session would need to know.",
            verb=Verb.LEARNED,
            params={
                "text": f"“{title}” was rehearsed, not built: a real agent still has to do it.",
                "kind": LearningKind.DISCOVERY.value,
                "scope": LearningScope.TASK.value,
            },
        ),
        DemoStep(
            say="Closing the rehearsed session.",
            verb=Verb.DONE,
            params={"summary": f"Rehearsed “{title}” (no code was written: this was the rehearsal agent)."},
        ),
    )


def script_of(plan: SessionPlan, pause_s: float = PAUSE_S, prompt: str = "") -> dict[str, Any]:
    """The script the rehearsal process plays for this session (the fix after failed checks)."""
    failed = FAILED_HEADING in prompt

    def answered(question: str) -> bool:
        return answer_opening(question) in prompt

    scripted = story().rehearsal_of(plan.task.title, failed, answered) if plan.task is not None else None
    steps = scripted if scripted is not None else generic_steps(plan)
    return {
        "pause_s": pause_s,
        "steps": [
            {
                "say": step.say,
                "verb": step.verb.value if step.verb else None,
                "params": step.params,
                "files": step.files,
            }
            for step in steps
        ],
        "closing": "Rehearsal over: no model was asked and nothing was spent.",
    }


class RehearsalAdapter:
    """Runs `ralph-desk rehearse` with the session's script and MCP config; reads its Claude-style stream."""

    name = "rehearsal"
    home_files: tuple[HomeFile, ...] = ()
    needs_network = True  # it reaches the desk's MCP server over 127.0.0.1

    def check_available(self, settings: LoopSettings) -> None:
        """Always there: the rehearsal ships with ralph-desk."""

    def program(self, settings: LoopSettings) -> str:
        """ralph-desk itself."""
        return "built into ralph-desk (no program to install)"

    def build(self, launch: SessionLaunch) -> AgentCommand:
        """The rehearsal process with its script and MCP config as files (the config holds the credential)."""
        script = session_file(
            launch, "rehearsal.json", json.dumps(script_of(launch.plan, prompt=launch.prompt))
        )
        config = write_mcp_config(launch)
        argv = [*rehearsal_command(), str(script), str(config)]
        return AgentCommand(argv=argv, cwd=launch.workdir, config_files=(config, script))

    def parser(self) -> StreamParser:
        """Its output is Claude Code's stream-json."""
        return ClaudeStreamParser()
