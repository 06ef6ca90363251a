"""The project's checks run and their evidence kept (DESIGN §13): one service for the loop's gate, the merge
queue, the window and the command line."""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ralph_desk.checks.runner import Stop, run_check
from ralph_desk.domain.checks import Check, CheckPurpose, CheckRun, CheckStatus, Outcome, Verdict, verdict
from ralph_desk.project import ProjectPaths, contained, read_config
from ralph_desk.project.confinement import SandboxRequest, confined, release
from ralph_desk.project.errors import ProjectError
from ralph_desk.project.untrusted import require_trusted_checks
from ralph_desk.sandbox import Confined
from ralph_desk.store import check_runs as store
from ralph_desk.store.database import Database

GATE_PURPOSES = (CheckPurpose.SESSION, CheckPurpose.RERUN)
"""The runs that speak for a task's own work (a merge-queue run speaks for the work merged with the base)."""
HISTORY_LIMIT = 100
LOG_FOLDER = "checks"

CheckOutput = Callable[[str, str], None]
"""Called with a check's name and each piece of its output as it arrives (off the caller's thread)."""


@dataclass(frozen=True)
class TaskChecks:
    """A task's evidence: what its latest runs say of the configured checks, and those runs."""

    task_id: int
    verdict: Verdict
    latest: tuple[CheckRun, ...]


@dataclass(frozen=True)
class FirstTimePasses:
    """How often a task's first checked done passed its checks."""

    passed: int
    checked: int


@dataclass(frozen=True)
class _Sandboxing:
    on: bool
    network: bool


class CheckService:
    """Run the configured checks in a folder, record each run, and read the records back."""

    def __init__(self, db: Database, paths: ProjectPaths) -> None:
        self.db = db
        self.paths = paths

    def configured(self) -> tuple[Check, ...]:
        """The checks config.json names, once the person allowed them; every run outside the loop asks here.

        `UntrustedCommandError` (which says to run `ralph-desk trust`) when they came with the folder unasked.
        """
        config = read_config(self.paths)
        require_trusted_checks(self.paths, config)
        return config.checks

    def run(
        self,
        checks: Sequence[Check],
        folder: Path,
        *,
        purpose: CheckPurpose,
        task_id: int | None = None,
        session_id: str | None = None,
        commit: str | None = None,
        stop: Stop | None = None,
        on_output: CheckOutput | None = None,
    ) -> list[CheckRun]:
        """Run `checks` one after another in `folder`, each recorded as it starts and ends; the runs.

        The caller took them from `configured` or from trusted loop settings. A stop ends the running check
        and skips the rest.
        """
        runs: list[CheckRun] = []
        sandboxed = self._sandbox()
        for check in checks:
            if stop is not None and stop.requested:
                break
            log_path = self._log_path(task_id, check.name)
            with self.db.write() as unit:
                started = store.start(
                    unit,
                    task_id=task_id,
                    session_id=session_id,
                    name=check.name,
                    command=check.run,
                    required=check.required,
                    purpose=purpose,
                    log_path=str(log_path),
                    commit=commit,
                )
            heard = (lambda text, name=check.name: on_output(name, text)) if on_output is not None else None
            sandbox = SandboxRequest(f"check-{uuid.uuid4().hex[:12]}", folder, network=sandboxed.network)
            try:
                outcome = run_check(
                    check,
                    folder,
                    (self.paths.root, log_path),
                    stop,
                    heard,
                    functools.partial(self._confined, request=sandbox, on=sandboxed.on),
                )
            except Exception as error:  # the record must not stay "running": say why it could not run
                outcome = Outcome(CheckStatus.ERROR, None, 0.0, f"could not run: {error}")
            except BaseException:  # Ctrl-C in a terminal: the run ended (its process tree too), and says so
                with self.db.write() as unit:
                    store.finish(unit, started.id, Outcome(CheckStatus.STOPPED, None, 0.0, "interrupted"))
                raise
            finally:
                release(self.paths, sandbox.name)
            with self.db.write() as unit:
                store.finish(unit, started.id, outcome)
                ended = store.get(unit, started.id)
            assert ended is not None
            runs.append(ended)
        return runs

    def _confined(self, argv: list[str], *, request: SandboxRequest, on: bool) -> Confined:
        return confined(self.paths, argv, request, on)

    def _sandbox(self) -> _Sandboxing:
        """Whether checks run confined and with a network: the project settings (confined if unreadable)."""
        try:
            config = read_config(self.paths)
        except ProjectError:
            return _Sandboxing(True, True)
        return _Sandboxing(config.sandbox, config.sandbox_network)

    def latest(self, task_id: int) -> list[CheckRun]:
        """The newest run of each check on the task's own work (after a done, or run again)."""
        with self.db.read() as unit:
            return store.latest(unit, task_id, GATE_PURPOSES)

    def evidence(self, task_id: int, checks: Sequence[Check]) -> TaskChecks:
        """The task's latest runs and their verdict on `checks` (the configured ones)."""
        latest = self.latest(task_id)
        return TaskChecks(task_id, verdict(checks, latest), tuple(latest))

    def evidence_of_tasks(self, checks: Sequence[Check]) -> list[TaskChecks]:
        """`evidence` of every task that has a run, by task id."""
        with self.db.read() as unit:
            found = store.latest_of_tasks(unit, GATE_PURPOSES)
        return [TaskChecks(task_id, verdict(checks, runs), tuple(runs)) for task_id, runs in found.items()]

    def for_session(self, session_id: str) -> list[CheckRun]:
        """The runs after one session's done."""
        with self.db.read() as unit:
            return store.for_session(unit, session_id)

    def history(self, task_id: int, limit: int = HISTORY_LIMIT) -> list[CheckRun]:
        """A task's runs, newest first."""
        with self.db.read() as unit:
            return store.history(unit, task_id, limit)

    def get(self, run_id: int) -> CheckRun | None:
        """One run."""
        with self.db.read() as unit:
            return store.get(unit, run_id)

    def verdict(self, task_id: int, checks: Sequence[Check]) -> Verdict:
        """What the task's latest runs say of `checks` (the configured ones)."""
        return verdict(checks, self.latest(task_id))

    def first_time_passes(self) -> FirstTimePasses:
        """Of the tasks whose done was checked, how many passed on their first checked done."""
        with self.db.read() as unit:
            gates = store.session_gates(unit)
        first: dict[int, bool] = {}
        for task_id, _session, passed in gates:
            first.setdefault(task_id, passed)
        return FirstTimePasses(sum(first.values()), len(first))

    def abandon(self, session_ids: Sequence[str]) -> int:
        """Close the runs that sessions of a dead loop left running (stopped); how many."""
        if not session_ids:
            return 0
        with self.db.write() as unit:
            left = store.running(unit, session_ids)
            for run in left:
                store.finish(unit, run.id, Outcome(CheckStatus.STOPPED, None, 0.0, run.tail))
        return len(left)

    def read_log(self, run: CheckRun, limit: int) -> str:
        """The end of a run's full output from its log file (at most about `limit` characters)."""
        if run.log_path is None:
            return run.tail
        path = Path(run.log_path)
        contained.parts_below(self.paths.logs_dir, path)  # a record naming a path outside logs/ is refused
        descriptor = contained.open_descriptor(self.paths.root, path, os.O_RDONLY)
        with os.fdopen(descriptor, "rb") as stream:
            size = stream.seek(0, os.SEEK_END)
            stream.seek(max(0, size - limit * 4))
            return stream.read().decode("utf-8", errors="replace")[-limit:]

    def _log_path(self, task_id: int | None, name: str) -> Path:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        owner = f"task-{task_id}" if task_id is not None else "project"
        return self.paths.logs_dir / LOG_FOLDER / f"{stamp}-{owner}-{name}.log"  # a check's name is a slug
