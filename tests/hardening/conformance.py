"""The official MCP conformance suite against ralph's HTTP server, and what its scenarios mean for us.

The suite (npm `@modelcontextprotocol/conformance`) cannot send a bearer token (`server --help` has
no header option), so it runs against the `ralph-desk mcp --transport http` code path with one
change: a credential store whose lookup accepts any request (`AnyToken`). Everything else —
the server, the DNS-rebinding settings, the HTTP host — is what `ralph-desk mcp` runs.

    python -m tests.hardening.conformance            run the suite, print the results table
    python -m tests.hardening.conformance serve ...  only the server (arguments of `ralph-desk mcp`)

`.ci/conformance` runs the first; tests/hardening/test_conformance.py runs the same in the suite.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ralph_desk.domain.session import SessionContext
from ralph_desk.mcp_server.auth import SessionTokens
from ralph_desk.project import ProjectPaths
from tests.hardening.support import StderrWatch, seed_project
from tests.support.npm_tools import conformance_cmd, missing_reason

REPO = Path(__file__).resolve().parents[2]
SUITE_TIMEOUT_S = 600

# Scenarios that test the protocol itself: they must pass.
GENERIC: Mapping[str, str] = {
    "server-initialize": "initialize answered with a valid result",
    "ping": "ping answered",
    "tools-list": "tools/list answered with valid tool definitions",
    "tools-call-error": "a failing call is a tool result with isError and a message",
    "server-sse-multiple-streams": "concurrent POST streams all work",
    "resources-list": "resources/list answered with valid resources",
    "prompts-list": "prompts/list answered with valid prompts",
    "dns-rebinding-protection": "a foreign Host/Origin is refused, localhost accepted",
}
# Scenarios that call the suite's "everything" fixture server's own tools, prompts and resources
# (test_simple_text, test://static-text, …) or capabilities ralph does not declare.
FIXTURE: Mapping[str, str] = {
    "tools-call-simple-text": "calls the fixture tool test_simple_text; it passes only because the "
    "unknown-tool error is itself a text block (ralph's own text results: tests/mcp_server)",
    "logging-set-level": "ralph declares no logging capability (it logs to stderr and .ralph/logs), "
    "so logging/setLevel is rightly 'Method not found'",
    "completion-complete": "ralph declares no completions capability; the scenario completes a "
    "fixture prompt's argument",
    "tools-call-image": "calls the fixture tool test_image_content; ralph's tools return JSON text",
    "tools-call-audio": "calls the fixture tool test_audio_content; ralph's tools return JSON text",
    "tools-call-embedded-resource": "calls the fixture tool test_embedded_resource",
    "tools-call-mixed-content": "calls the fixture tool test_multiple_content_types",
    "tools-call-with-logging": "calls the fixture tool test_tool_with_logging and expects log "
    "notifications (no logging capability)",
    "tools-call-with-progress": "calls the fixture tool test_tool_with_progress; ralph's tools are "
    "short database calls that report no progress",
    "tools-call-sampling": "calls the fixture tool test_sampling; ralph never asks the client to sample",
    "tools-call-elicitation": "calls the fixture tool test_elicitation; ralph asks the human through "
    "the `ask` verb and the inbox, not elicitation",
    "elicitation-sep1034-defaults": "calls the fixture tool test_elicitation_sep1034_defaults "
    "(elicitation: see tools-call-elicitation)",
    "elicitation-sep1330-enums": "calls the fixture tool test_elicitation_sep1330_enums "
    "(elicitation: see tools-call-elicitation)",
    "resources-read-text": "reads the fixture resource test://static-text; ralph's are ralph:// "
    "(tests/mcp_server/test_resources_prompts.py)",
    "resources-read-binary": "reads the fixture resource test://static-binary",
    "resources-templates-read": "reads the fixture template test://template/123/data",
    "resources-subscribe": "ralph declares resources.subscribe: false, so resources/subscribe is "
    "rightly 'Method not found'",
    "resources-unsubscribe": "as resources-subscribe",
    "prompts-get-simple": "gets the fixture prompt test_simple_prompt; ralph's prompts are tested in "
    "tests/mcp_server/test_resources_prompts.py",
    "prompts-get-with-args": "gets the fixture prompt test_prompt_with_arguments",
    "prompts-get-embedded-resource": "gets the fixture prompt test_prompt_with_embedded_resource",
    "prompts-get-with-image": "gets the fixture prompt test_prompt_with_image",
}
_DIR_NAME = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[0-9-]+Z$")


class AnyToken(SessionTokens):
    """Test only: every request gets the registered context, with or without a bearer token."""

    def lookup(self, token: str) -> SessionContext | None:
        with self._lock:
            contexts = list(self._contexts.values())
        return contexts[0] if contexts else None


def serve(argv: list[str]) -> int:
    """`ralph-desk mcp --transport http` with the any-token gate."""
    from ralph_desk import cli
    from ralph_desk.mcp_server import auth

    auth.SessionTokens = AnyToken  # type: ignore[misc]  # serve_http imports it when it runs
    return cli.main(["mcp", "--transport", "http", *argv])


@contextmanager
def open_gate_server(paths: ProjectPaths, *flags: str) -> Iterator[str]:
    """The server as its own process (`flags`: more `ralph-desk mcp` options); yields its URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.hardening.conformance", "serve", "--root", str(paths.root), *flags],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    watch = StderrWatch(process)
    try:
        match = watch.wait_for(r"ralph MCP server: (http://\S+)")
        if match is None:
            raise RuntimeError(f"the server did not start: {watch.text(5)}")
        yield match.group(1)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


@dataclass(frozen=True)
class Outcome:
    """One scenario's result: passed or not, and the suite's first failure message."""

    scenario: str
    passed: bool
    detail: str

    @property
    def kind(self) -> str:
        if self.scenario in GENERIC:
            return "generic"
        return "fixture" if self.scenario in FIXTURE else "unclassified"

    @property
    def reason(self) -> str:
        return GENERIC.get(self.scenario) or FIXTURE.get(self.scenario) or "not classified yet"


def run_suite(url: str, output: Path, scenario: str | None = None) -> tuple[list[Outcome], str]:
    """Run every active server scenario (or one); the outcomes (suite order) and the console output."""
    command = conformance_cmd()
    if command is None:
        raise RuntimeError(missing_reason("the MCP conformance suite (Node 22)"))
    run = subprocess.run(
        [
            *command,
            "server",
            "--url",
            url,
            "-o",
            str(output),
            *(["--scenario", scenario] if scenario else []),
        ],
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
    outcomes = []
    for folder in sorted(output.iterdir(), key=lambda path: path.stat().st_mtime):
        match = _DIR_NAME.match(folder.name)
        checks_file = folder / "checks.json"
        if match is None or not checks_file.is_file():
            continue
        checks = json.loads(checks_file.read_text(encoding="utf-8"))
        failures = [check for check in checks if check.get("status") == "FAILURE"]
        passed = not failures and any(check.get("status") == "SUCCESS" for check in checks)
        detail = failures[0].get("errorMessage") or failures[0].get("name", "") if failures else ""
        outcomes.append(Outcome(match.group("scenario"), passed, str(detail)))
    return outcomes, run.stdout + run.stderr


def table(outcomes: list[Outcome]) -> str:
    """The results as the README's Markdown table."""
    lines = ["| scenario | result | reason |", "|---|---|---|"]
    for outcome in outcomes:
        if outcome.kind == "generic":
            result = "pass" if outcome.passed else f"**FAIL**: {outcome.detail}"
        elif outcome.kind == "fixture":
            result = "n/a (passes)" if outcome.passed else "n/a"
        else:
            result = ("pass" if outcome.passed else "fail") + " (unclassified)"
        lines.append(f"| {outcome.scenario} | {result} | {outcome.reason} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv[:1] == ["serve"]:
        return serve(argv[1:])
    if conformance_cmd() is None:
        print(missing_reason("the MCP conformance suite (Node 22)"), file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ralph-conformance-") as scratch:
        paths, _ = seed_project(Path(scratch) / "project")
        with open_gate_server(paths) as url:
            outcomes, _ = run_suite(url, Path(scratch) / "results")
    print(table(outcomes))
    generic = {o.scenario for o in outcomes if o.kind == "generic" and o.passed}
    unclassified = [o.scenario for o in outcomes if o.kind == "unclassified"]
    print(
        f"\n{len(generic)}/{len(GENERIC)} generic scenarios passed; "
        f"{sum(o.kind == 'fixture' for o in outcomes)} fixture-specific (not applicable)"
        + (f"; unclassified: {', '.join(unclassified)}" if unclassified else "")
    )
    return 0 if generic == set(GENERIC) and not unclassified else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
