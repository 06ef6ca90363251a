"""A session's transcript in `.ralph/logs/`: every raw output line and live event, then a JSON summary."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from ralph_desk.domain.endpoints import SessionEndpoint
from ralph_desk.loop.model import AgentCommand, EventKind, LiveEvent, SessionPlan, StreamSummary
from ralph_desk.project import contained

log = logging.getLogger("ralph_desk.loop")

REDACTED = "[redacted]"
STDERR_PREFIX = "[stderr] "  # an agent's standard error line, as the transcript keeps it
PROBLEM = "problem"
MIN_SECRET_LENGTH = 4
_BEARER = re.compile(r"(?i)\b(bearer)(\s+|%20)[A-Za-z0-9._~+/=:-]+")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """The text without credentials: every `Bearer <token>` and every known secret replaced."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return _BEARER.sub(lambda match: f"{match.group(1)}{match.group(2)}{REDACTED}", text)


def server_secrets(plan: SessionPlan) -> list[str]:
    """The env and header values of the discipline's extra MCP servers (API keys), to be masked."""
    if plan.discipline is None:
        return []
    values = (
        value
        for spec in plan.discipline.mcp_servers
        for value in (*spec.env.values(), *spec.headers.values())
    )
    # A value shorter than this is no key, and masking it would garble the transcript.
    return [value for value in values if len(value) >= MIN_SECRET_LENGTH]


def shown_argv(argv: Sequence[str], prompt: str | None, secrets: Iterable[str] = ()) -> list[str]:
    """argv as recorded: the prompt replaced by its length, credentials redacted."""
    kept = list(secrets)
    return [
        f"<prompt: {len(prompt)} characters>" if prompt is not None and arg == prompt else redact(arg, kept)
        for arg in argv
    ]


def _safe_name(name: str) -> str:
    return _UNSAFE.sub("_", name).strip("._")[:100] or "session"


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(item) for item in value]
    return value


class Transcript:
    """`YYYYMMDD-HHMMSS_<name>.log` (raw lines and rendered events) and, on close, `….json` (the summary).

    Nothing written here carries a credential: `Bearer …`, the secrets it is told about and the values of
    the discipline's server env and headers are redacted; both files are the owner's only (0600).
    """

    def __init__(
        self, logs_dir: Path, name: str, started: datetime | None = None, root: Path | None = None
    ) -> None:
        """`root` is the project folder: no link between it and the files written (default: `logs_dir`)."""
        self.started = started or datetime.now().astimezone()
        self._clock_start = time.monotonic()
        if root is None:
            logs_dir.mkdir(parents=True, exist_ok=True)
        else:
            contained.make_folder(root, logs_dir)
        self._root = root or logs_dir
        stem = f"{self.started:%Y%m%d-%H%M%S}_{_safe_name(name)}"
        self.log_path, self._file = self._open(self._root, logs_dir, stem)
        self.summary_path = self.log_path.with_suffix(".json")
        self.name = name
        self._secrets: list[str] = []
        self._facts: dict[str, Any] = {"name": name}
        self._closed = False

    @staticmethod
    def _open(root: Path, logs_dir: Path, stem: str) -> tuple[Path, TextIO]:
        for attempt in range(1, 1000):
            path = logs_dir / (f"{stem}.log" if attempt == 1 else f"{stem}-{attempt}.log")
            try:
                return path, contained.open_text(root, path, "x", contained.PRIVATE_FILE_MODE)
            except FileExistsError:
                continue
        raise FileExistsError(f"no free transcript name for {stem} in {logs_dir}")

    def add_secret(self, secret: str) -> None:
        """Redact this exact text wherever it would be written."""
        if secret and secret not in self._secrets:
            self._secrets.append(secret)

    def describe(
        self,
        plan: SessionPlan | None = None,
        *,
        agent: str | None = None,
        model: str | None = None,
        command: AgentCommand | None = None,
        prompt: str | None = None,
        endpoint: SessionEndpoint | None = None,
    ) -> None:
        """Record what the session is, for the summary; from now on the endpoint's credential is redacted."""
        if endpoint is not None:
            self.add_secret(endpoint.token)
        if plan is not None:
            for secret in server_secrets(plan):
                self.add_secret(secret)
            self._facts.update(
                session_id=plan.session_id,
                recipe=plan.recipe.value,
                task_id=plan.task.id if plan.task else None,
                task=plan.task.title if plan.task else None,
                feature=plan.feature.name if plan.feature else None,
                discipline=plan.discipline.name if plan.discipline else None,
                iteration=plan.iteration,
                loop_run_id=plan.loop_run_id,
                tools=sorted(plan.enabled_tools),
            )
        if agent is not None:
            self._facts["agent"] = agent
        if model is not None:
            self._facts["model"] = model
        if command is not None:
            self._facts["argv"] = shown_argv(command.argv, prompt, self._secrets)
            self._facts["cwd"] = str(command.cwd) if command.cwd else None
            self._facts["prompt_on_stdin"] = command.stdin_text is not None
        if prompt is not None:
            self._facts["prompt_characters"] = len(prompt)

    def raw(self, line: str) -> None:
        """One line of the agent's output, as it came (credentials redacted)."""
        self._write(line.rstrip("\n"))

    def event(self, event: LiveEvent) -> None:
        """One live event, rendered on one line (the agent's own session id and model go to the summary)."""
        if event.kind is EventKind.INIT:
            agent_session = event.data.get("session_id") or event.data.get("thread_id")
            if agent_session:
                self._facts["agent_session_id"] = agent_session
            if event.data.get("model"):
                self._facts["agent_model"] = event.data["model"]
        at = (event.at or datetime.now(UTC)).astimezone()
        text = event.text.replace("\r", " ").replace("\n", " ⏎ ")
        self._write(f"# {at:%H:%M:%S.%f}"[:-3] + f" {event.kind.value:<17} {text}")

    def note(self, text: str) -> None:
        """A line of the loop's own (session started, killed, timed out…)."""
        self._write(f"# {datetime.now().astimezone():%H:%M:%S} note{' ' * 14}{text}")

    def redacted(self, text: str) -> str:
        """The text without the credentials this transcript masks."""
        return redact(text, self._secrets)

    def problem(self, text: str) -> None:
        """A line of the loop's own about what went wrong (a crashed agent): replayed as an error."""
        flat = text.replace("\r", " ").replace("\n", " ⏎ ")
        self._write(f"# {datetime.now().astimezone():%H:%M:%S} {PROBLEM}{' ' * 11}{flat}")

    def _write(self, line: str) -> None:
        if self._closed:
            log.warning("transcript %s is closed; dropped a line", self.log_path.name)
            return
        self._file.write(redact(line, self._secrets) + "\n")

    def close(
        self,
        summary: StreamSummary | None = None,
        exit_code: int | None = None,
        outcome: str | None = None,
        error: str | None = None,
        **extra: Any,
    ) -> Path:
        """Close the log and write the JSON summary beside it; returns the log's path (again, when closed)."""
        if self._closed:
            return self.log_path
        self._closed = True
        self._file.close()
        ended = datetime.now().astimezone()
        document: dict[str, Any] = {
            **self._facts,
            "exit_code": exit_code,
            "outcome": outcome,
            "error": error,
            "started_at": self.started.isoformat(),
            "ended_at": ended.isoformat(),
            "duration_s": round(time.monotonic() - self._clock_start, 3),
            "log": self.log_path.name,
            "stream": _plain(asdict(summary)) if summary is not None else None,
            **{key: _plain(value) for key, value in extra.items()},
        }
        text = redact(json.dumps(document, indent=2, ensure_ascii=False), self._secrets)
        contained.write_text(self._root, self.summary_path, text + "\n", contained.PRIVATE_FILE_MODE)
        return self.log_path

    def __enter__(self) -> Transcript:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close(error=str(exc) if exc is not None else None)
