"""Row 6: post-processing one agent session with 100 signals on a real SQLite project.

Each session's signals are recorded through the services, as the MCP verbs record them: 40 flags,
25 learnings (task, feature and project scope), 10 questions, 10 suggestions (6 new-task ones, which
become draft tasks), 5 external blockers, partials, and a closing `done`. Then, as the runner does,
the session's signals are read, `decide` judges them (pure, no I/O), and `apply_decision` writes the
outcome: status, draft tasks, feature learnings, learnings.txt and progress.txt. `decide` is timed
alone over many repetitions; read and apply once per session (apply is not idempotent), on
`--sessions` sessions, each on its own task.

    python bench/postprocess.py [--sessions 15] [--signals 100]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from _common import (
    Row,
    emit,
    fmt_ms,
    make_project,
    median,
    ms,
    percentile,
    say,
    scratch_dir,
    session_signals,
)

TARGET_MS = 5.0
DECIDE_REPEATS = 200


def measure(root: Path, sessions: int, signals: int) -> dict[str, Any]:
    from ralph_desk.domain.enums import TaskStatus
    from ralph_desk.domain.lifecycle import Mover
    from ralph_desk.domain.postprocess import decide
    from ralph_desk.loop.apply import apply_decision
    from ralph_desk.project import ProjectPaths
    from ralph_desk.services.container import Services

    services = Services.open(ProjectPaths.at(root))
    try:
        started = time.perf_counter()
        for number in range(sessions):
            task_id = number + 1
            services.tasks.move(task_id, TaskStatus.IN_PROGRESS, Mover.LOOP)
            for verb, params in session_signals(signals, number):
                services.signals.record(task_id, f"bench-post-{number}", verb, **params)
        setup = time.perf_counter() - started
        read_ms: list[float] = []
        decide_ms: list[float] = []
        apply_ms: list[float] = []
        drafts = learnings = 0
        for number in range(sessions):
            task_id = number + 1
            start = time.perf_counter()
            task = services.tasks.get(task_id)
            recorded = services.signals.for_session(f"bench-post-{number}")
            read_ms.append(ms(time.perf_counter() - start))
            assert len(recorded) == signals
            for _ in range(DECIDE_REPEATS // sessions + 1):
                start = time.perf_counter()
                decision = decide(recorded, stuck_count=task.stuck_count, stuck_threshold=3)
                decide_ms.append(ms(time.perf_counter() - start))
            start = time.perf_counter()
            decision = decide(recorded, stuck_count=task.stuck_count, stuck_threshold=3)
            outcome = apply_decision(services, task_id, f"bench-post-{number}", decision)
            apply_ms.append(ms(time.perf_counter() - start))
            assert outcome.task.status.value == "done", outcome.task.status
            drafts += len(outcome.created_task_ids)
            learnings += len(outcome.feature_learnings)
        writes = _writes_of_one_apply(services, signals)
    finally:
        services.close()
    return {
        "sessions": sessions,
        "signals_per_session": signals,
        "setup_s": setup,
        "read_median_ms": median(read_ms),
        "decide_median_ms": median(decide_ms),
        "decide_p95_ms": percentile(decide_ms, 95),
        "decide_apply_median_ms": median(apply_ms),
        "decide_apply_p95_ms": percentile(apply_ms, 95),
        "drafts_per_session": drafts / sessions,
        "learnings_per_session": learnings / sessions,
        "write_units_per_apply": writes,
    }


def _writes_of_one_apply(services: Any, signals: int) -> int:
    """How many committed write units one more apply makes (counted through the change listener)."""
    from ralph_desk.domain.postprocess import decide
    from ralph_desk.loop.apply import apply_decision

    task = services.tasks.create("core", "backend", "One more, to count the writes")
    for verb, params in session_signals(signals, 999):
        services.signals.record(task.id, "bench-post-count", verb, **params)
    decision = decide(services.signals.for_session("bench-post-count"), stuck_count=0)
    units: list[Any] = []
    unsubscribe = services.db.subscribe(units.append)
    try:
        apply_decision(services, task.id, "bench-post-count", decision)
    finally:
        unsubscribe()
    return len(units)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=15)
    parser.add_argument("--signals", type=int, default=100)
    args = parser.parse_args()
    with scratch_dir("post") as tmp:
        root = make_project(tmp / "project", tasks=args.sessions)
        figures = measure(root, args.sessions, args.signals)
    say(
        f"setup: {args.sessions} sessions × {args.signals} signals recorded through the services in "
        f"{figures['setup_s']:.1f} s"
    )
    say(f"read task + session signals: median {fmt_ms(figures['read_median_ms'])}")
    say(
        f"decide alone:                median {fmt_ms(figures['decide_median_ms'])}, "
        f"p95 {fmt_ms(figures['decide_p95_ms'])}"
    )
    say(
        f"decide + apply_decision:     median {fmt_ms(figures['decide_apply_median_ms'])}, "
        f"p95 {fmt_ms(figures['decide_apply_p95_ms'])} "
        f"(write transactions: {figures['write_units_per_apply']}, for status, "
        f"{figures['drafts_per_session']:.0f} draft tasks, {figures['learnings_per_session']:.0f} feature "
        "learnings and the progress line)"
    )
    emit(
        Row(
            key="postprocess_decide",
            what=f"post-processing {args.signals} signals: decide alone (median)",
            measured=fmt_ms(figures["decide_median_ms"]),
            target=f"≤ {TARGET_MS:g} ms",
            passed=figures["decide_median_ms"] <= TARGET_MS,
            figures=figures,
        )
    )
    emit(
        Row(
            key="postprocess_apply",
            what=f"post-processing {args.signals} signals: decide + apply_decision (median)",
            measured=fmt_ms(figures["decide_apply_median_ms"]),
            target=f"≤ {TARGET_MS:g} ms",
            passed=figures["decide_apply_median_ms"] <= TARGET_MS,
            figures=figures,
            note=(
                f"{figures['write_units_per_apply']} committed writes (the outcome in one transaction, "
                "learnings.txt and progress.txt entries included); reading the session first: "
                f"{fmt_ms(figures['read_median_ms'])}"
            ),
        )
    )


if __name__ == "__main__":
    main()
