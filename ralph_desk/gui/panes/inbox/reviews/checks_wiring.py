"""The checks of the task in review: read on the worker, shown in the strip, run again on the worker's long
thread (checks take minutes: reads go on meanwhile), their output streamed in a few times a second."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ralph_desk.checks.runner import Stop
from ralph_desk.domain.checks import CheckPurpose, CheckRun, CheckStatus, required_failures
from ralph_desk.domain.records import Change
from ralph_desk.gui.backend import Services
from ralph_desk.gui.coalesce import TextFeed
from ralph_desk.gui.pacer import ReadPacer
from ralph_desk.gui.panes.inbox.reviews.checks import ChecksStrip, CheckState
from ralph_desk.gui.worker import Worker

CHECKS_TOPIC = "checks"  # a run started or ended
READ_SPACING_MS = 250
LOG_LIMIT = 100_000
"""The most of a run's full log read into the window (its end)."""


@dataclass(frozen=True)
class _Read:
    task_id: int
    states: list[CheckState]


class ReviewChecks:
    """Shows the checks of the task the Reviews tab shows; runs them again when asked."""

    def __init__(self, strip: ChecksStrip, services: Services, worker: Worker) -> None:
        self.strip = strip
        self.services = services
        self.worker = worker
        self.task_id: int | None = None
        self.reads = ReadPacer(worker, self._start_read, READ_SPACING_MS)
        self.running: dict[int, Stop] = {}
        """The tasks whose checks run again now, each with the stop that ends them."""
        self.feed = TextFeed(self._show_output, parent=strip)
        self._feeding: int | None = None
        strip.sig_output_requested.connect(self.read_output)
        strip.sig_run_requested.connect(self.run_again)
        strip.sig_stop_requested.connect(self.stop)

    # --- reading --------------------------------------------------------------------------------

    def show_task(self, task_id: int | None) -> None:
        """The tab shows this task (None: none): read its checks."""
        changed = task_id != self.task_id
        self.task_id = task_id
        if task_id is None:
            self.strip.hide()
            return
        self.reads.request(now=changed)

    def on_changes(self, changes: list[Change]) -> None:
        """A check run started or ended: read the strip again."""
        if self.task_id is not None and any(change.topic == CHECKS_TOPIC for change in changes):
            self.reads.request()

    def _start_read(self) -> None:
        task_id = self.task_id
        if task_id is None:
            self.reads.finished()
            return
        self.worker.submit(
            f"read the checks of task #{task_id}",
            lambda: self._read(task_id),
            self.reads.then(self._show),
            self.reads.finished,
        )

    def _read(self, task_id: int) -> _Read:
        configured = self.services.workspaces.config().checks
        latest = {run.name: run for run in self.services.checks.latest(task_id)}
        return _Read(task_id, [CheckState(c.name, c.required, latest.get(c.name)) for c in configured])

    def _show(self, read: _Read) -> None:
        if read.task_id == self.task_id:
            self.strip.show_checks(read.task_id, read.states)
            running = read.task_id in self.running
            if running != self.strip.running:  # another task was shown while its checks ran, or this one's
                self.strip.set_running(read.task_id, running)

    def read_output(self, task_id: int, run_id: int) -> None:
        """Read a run's record and the end of its full log, and show them."""
        checks = self.services.checks

        def read() -> tuple[CheckRun, str] | None:
            run = checks.get(run_id)
            if run is None:
                return None
            try:
                return run, checks.read_log(run, LOG_LIMIT)
            except (OSError, ValueError):  # the log is gone or refused: the recorded tail still shows
                return run, ""

        self.worker.submit(
            f"read the output of check run #{run_id}",
            read,
            lambda found: self.strip.show_output(task_id, *found) if found is not None else None,
        )

    # --- running again --------------------------------------------------------------------------

    def run_again(self, task_id: int) -> None:
        """Run the configured checks in the task's worktree, off the GUI thread and beside the reads."""
        if task_id in self.running:
            return
        stop = Stop()
        self.running[task_id] = stop
        self._feeding = task_id
        self.feed.clear()
        self.feed.hold()
        self.strip.set_running(task_id, True)
        services, feed = self.services, self.feed

        def run() -> list[CheckRun]:
            checks = services.checks.configured()
            worktree = services.workspaces.existing(task_id)
            folder = worktree.path if worktree is not None else Path(services.paths.root)
            return services.checks.run(
                checks,
                folder,
                purpose=CheckPurpose.RERUN,
                task_id=task_id,
                stop=stop,
                on_output=lambda name, text: feed.add(text),
            )

        self.worker.submit(
            f"run the checks of task #{task_id} again",
            run,
            lambda runs: self._ran(task_id, runs),
            lambda: self._ended(task_id),
            stop=stop.request,
        )

    def stop(self) -> None:
        """End the checks running again for the task shown."""
        stop = self.running.get(self.task_id) if self.task_id is not None else None
        if stop is not None:
            stop.request()
            self.strip.stop.setEnabled(False)

    def _ran(self, task_id: int, runs: list[CheckRun]) -> None:
        self._ended(task_id)
        failed = required_failures(runs)
        if not runs:
            self.worker.succeed(f"Task #{task_id}: no check ran.")
        elif any(run.status is CheckStatus.STOPPED for run in runs):
            self.worker.succeed(f"Task #{task_id}: the checks were stopped.")
        elif failed:
            names = ", ".join(run.name for run in failed)
            self.worker.fail(f"Task #{task_id}: required checks fail: {names}.")
        else:
            self.worker.succeed(f"Task #{task_id}: the checks pass ({len(runs)} run).")

    def _ended(self, task_id: int) -> None:
        self.running.pop(task_id, None)
        if self._feeding == task_id:
            self.feed.release()
            self._feeding = None
        self.strip.set_running(task_id, False)
        if task_id == self.task_id:
            self.reads.request(now=True)

    def _show_output(self, text: str) -> None:
        if self._feeding is not None:
            self.strip.append_output(self._feeding, text)
