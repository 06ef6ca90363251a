"""A large project for the window benchmarks: 10,000 tasks and 50,000 signals, made in seconds.

Features and disciplines are created through the services; tasks and signals are bulk-inserted
through the store's own write unit (one transaction, the schema's tables and defaults), which is
what makes 60,000 rows take seconds instead of minutes. The project looks like one after a long
run: most tasks done, the rest in every other status; most questions answered, most flags
triaged and most suggestions reviewed, with a realistic inbox left open (a few dozen questions
and suggestions, a few hundred flags).

    python bench/big_project.py DIR [--tasks 10000] [--signals 50000]
"""

from __future__ import annotations

import argparse
import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from _common import FLAG_CATEGORIES, FLAG_SEVERITIES, say

FEATURES = 20
DISCIPLINES = ("backend", "frontend", "docs", "infra", "data")
STATUSES = (
    ["done"] * 60
    + ["pending"] * 22
    + ["draft"] * 5
    + ["skipped"] * 4
    + ["blocked"] * 3
    + ["failed"] * 2
    + ["needs_input"] * 2
    + ["in_progress"] * 2
)
PRIORITIES = ("low", "medium", "medium", "high", "critical")
VERBS = (
    ["flag"] * 8 + ["learned"] * 5 + ["ask"] * 2 + ["suggest"] * 2 + ["blocked", "partial", "done", "stuck"]
)
OPEN_QUESTIONS = 25
OPEN_SUGGESTIONS = 30
OPEN_FLAGS = 300
VERSION = 1  # bump when the generated content changes, so that a kept copy is made again


def make_big_project(
    root: Path, tasks: int = 10_000, signals: int = 50_000, seed: int = 7
) -> dict[str, float]:
    """Create the project at `root`; returns how long each step took, in seconds."""
    from ralph_desk.project import ProjectPaths, init_project
    from ralph_desk.services.container import Services
    from ralph_desk.store.schema import TaskRow, TaskSignalRow

    rng = random.Random(seed)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    root.mkdir(parents=True, exist_ok=True)
    paths = init_project(root, title="Big bench project")
    services = Services.open(ProjectPaths.at(paths.root))
    try:
        for number in range(FEATURES):
            services.features.create(f"feature-{number:02d}", f"Feature {number:02d}")
        for name in DISCIPLINES:
            services.disciplines.create(name, name.capitalize(), "code", "#336699")
        feature_ids = {feature.name: feature.id for feature in services.features.list()}
        discipline_ids = {discipline.name: discipline.id for discipline in services.disciplines.list()}
        timings["services_setup_s"] = time.perf_counter() - start

        start = time.perf_counter()
        epoch = datetime(2026, 1, 1, tzinfo=UTC).replace(tzinfo=None)
        task_rows: list[dict[str, Any]] = []
        for number in range(1, tasks + 1):
            created = epoch + timedelta(minutes=7 * number)
            status = rng.choice(STATUSES)
            task_rows.append(
                {
                    "id": number,
                    "feature_id": feature_ids[f"feature-{number % FEATURES:02d}"],
                    "discipline_id": discipline_ids[DISCIPLINES[number % len(DISCIPLINES)]],
                    "title": f"Task {number}: {rng.choice(('parse', 'chart', 'cache', 'alert', 'test'))} the "
                    f"{rng.choice(('tide table', 'station list', 'harbour map', 'keel depth', 'forecast'))} "
                    f"for case {number}",
                    "description": f"Generated task {number}. " * 8,
                    "priority": rng.choice(PRIORITIES),
                    "status": status,
                    "acceptance_criteria": [f"criterion {k}" for k in range(3)],
                    "tags": ["bench", f"batch-{number // 500}"],
                    "context_files": [],
                    "output_artifacts": [],
                    "origin": "agent" if number % 11 == 0 else "human",
                    "stuck_count": 1 if status == "failed" else 0,
                    "created_at": created,
                    "updated_at": created + timedelta(hours=2),
                    "completed_at": created + timedelta(hours=2) if status == "done" else None,
                }
            )
        signal_rows: list[dict[str, Any]] = []
        asks = suggestions = flags = 0
        for number in range(1, signals + 1):
            task_id = rng.randint(1, tasks)
            verb = VERBS[number % len(VERBS)]
            created = epoch + timedelta(minutes=7 * task_id, seconds=number % 3600)
            row: dict[str, Any] = {
                "id": number,
                "task_id": task_id,
                "session_id": f"session-{task_id}-{number % 3}",
                "verb": verb,
                "discipline_id": discipline_ids[DISCIPLINES[task_id % len(DISCIPLINES)]],
                "created": created,
            }
            tag = f"signal {number}"
            if verb == "flag":
                flags += 1
                row.update(
                    what=f"{tag}: the cache is never invalidated when the station list changes",
                    severity=FLAG_SEVERITIES[number % 3],
                    category=FLAG_CATEGORIES[number % 5],
                    resolution="open" if flags <= OPEN_FLAGS else rng.choice(("resolved", "dismissed")),
                )
                if row["resolution"] != "open":
                    row["resolved_at"] = created + timedelta(hours=1)
            elif verb == "learned":
                row.update(text=f"{tag}: station ids are zero-padded", kind="discovery", scope="task")
            elif verb == "ask":
                asks += 1
                row.update(question=f"{tag}: metres or feet?", options="metres\nfeet", blocking=False)
                if asks > OPEN_QUESTIONS:
                    row.update(answer="metres", answered_at=created + timedelta(hours=1))
            elif verb == "suggest":
                suggestions += 1
                row.update(
                    what=f"{tag}: cache the harmonic constants",
                    kind="refactor",
                    why="recomputed on every request",
                    review_decision="pending"
                    if suggestions <= OPEN_SUGGESTIONS
                    else rng.choice(("approved", "rejected")),
                )
            elif verb == "blocked":
                row.update(on=f"{tag}: the API key", kind="external", detail="waiting")
            elif verb == "partial":
                row.update(summary=f"{tag}: half done", remaining="the rest")
            elif verb == "done":
                row.update(summary=f"{tag}: done")
            else:
                row.update(reason=f"{tag}: no way forward")
            signal_rows.append(row)
        timings["rows_built_s"] = time.perf_counter() - start

        start = time.perf_counter()
        tasks_table = TaskRow.metadata.tables[TaskRow.__tablename__]
        signals_table = TaskSignalRow.metadata.tables[TaskSignalRow.__tablename__]
        columns = {column.name for column in signals_table.columns}
        with services.db.write() as unit:
            unit.session.execute(tasks_table.insert(), task_rows)
            for chunk in range(0, len(signal_rows), 5000):
                batch = [
                    {name: row.get(name) for name in columns} for row in signal_rows[chunk : chunk + 5000]
                ]
                unit.session.execute(signals_table.insert(), batch)
            unit.touch("tasks")
            unit.touch("signals")
        timings["bulk_insert_s"] = time.perf_counter() - start
        counted = services.tasks.count_by_status()
    finally:
        services.close()
    timings["tasks"] = float(sum(counted.values()))
    timings["signals"] = float(signals)
    return timings


def ensure_big_project(cache: Path, tasks: int, signals: int) -> tuple[Path, dict[str, float] | None]:
    """The big project kept in `cache` (made now when missing); the timings when it was made now."""
    root = cache / f"big-v{VERSION}-{tasks}-{signals}"
    if (root / ".ralph" / "db" / "ralph.db").exists() and (root / "ready").exists():
        return root, None
    import shutil

    shutil.rmtree(root, ignore_errors=True)
    timings = make_big_project(root, tasks, signals)
    (root / "ready").write_text("made by bench/big_project.py\n")
    return root, timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", type=Path)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--signals", type=int, default=50_000)
    args = parser.parse_args()
    timings = make_big_project(args.root, args.tasks, args.signals)
    say(
        f"made {timings['tasks']:.0f} tasks and {timings['signals']:.0f} signals in "
        f"{sum(v for k, v in timings.items() if k.endswith('_s')):.1f} s "
        f"(services setup {timings['services_setup_s']:.2f} s, rows built {timings['rows_built_s']:.2f} s, "
        f"bulk insert {timings['bulk_insert_s']:.2f} s)"
    )


if __name__ == "__main__":
    main()
