"""What every benchmark script shares: statistics, projects to measure on, and how a figure is reported.

A script prints its figure lines for a person, and one `BENCH-ROW {json}` line per table row for
`run_all.py`, which runs each script in a process of its own and gathers those lines into the table.
Nothing here talks to anything but 127.0.0.1.
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
PYTHON = sys.executable
RALPH_DESK = str(Path(PYTHON).with_name("ralph-desk"))
ROW_PREFIX = "BENCH-ROW "

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


# --- statistics ----------------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), linear between the closest ranks."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def stall_figures(
    ticks: Sequence[float], start: float, heartbeat_ms: float, target_ms: float
) -> dict[str, Any]:
    """The GUI thread's stalls, from the times a heartbeat timer of `heartbeat_ms` fired (perf_counter)."""
    gaps = [(later - earlier) * 1000.0 - heartbeat_ms for earlier, later in itertools.pairwise(ticks)]
    longest = max(gaps)
    return {
        "ticks": len(ticks),
        "longest_stall_ms": longest,
        "longest_stall_after_s": ticks[gaps.index(longest)] - start,
        "p99_stall_ms": percentile(gaps, 99),
        "p50_stall_ms": percentile(gaps, 50),
        "stalls_over_target": sum(1 for gap in gaps if gap > target_ms),
    }


def ms(seconds: float) -> float:
    return seconds * 1000.0


def fmt_ms(value_ms: float) -> str:
    if value_ms != value_ms:  # NaN
        return "n/a"
    if value_ms >= 100:
        return f"{value_ms:.0f} ms"
    if value_ms >= 10:
        return f"{value_ms:.1f} ms"
    return f"{value_ms:.2f} ms"


# --- reporting -----------------------------------------------------------------------------------


@dataclass
class Row:
    """One line of the table: what was measured, against what target and what reference."""

    key: str
    what: str
    measured: str
    target: str
    reference: str = "—"
    ratio: str = "—"
    passed: bool | None = None
    figures: dict[str, Any] = field(default_factory=dict)
    note: str = ""

    @property
    def verdict(self) -> str:
        return {True: "pass", False: "MISS", None: "info"}[self.passed]


def emit(row: Row) -> None:
    """Print a row for a person and for run_all.py."""
    print(
        f"  => {row.what}: {row.measured} (target {row.target}; reference {row.reference}; "
        f"ratio {row.ratio}) {row.verdict}" + (f" — {row.note}" if row.note else ""),
        flush=True,
    )
    print(ROW_PREFIX + json.dumps(asdict(row)), flush=True)


def say(text: str) -> None:
    print(text, flush=True)


# --- projects ------------------------------------------------------------------------------------


@contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    """A temporary folder, removed afterwards (kept with BENCH_KEEP=1)."""
    path = Path(tempfile.mkdtemp(prefix=f"ralph-bench-{prefix}-"))
    try:
        yield path
    finally:
        if not os.environ.get("BENCH_KEEP"):
            subprocess.run(["rm", "-rf", str(path)], check=False)


def make_project(root: Path, tasks: int = 20, git: bool = False) -> Path:
    """A project with feature `core`, discipline `backend` and `tasks` pending tasks; returns its root."""
    from ralph_desk.project import init_project
    from ralph_desk.services.container import Services

    root.mkdir(parents=True, exist_ok=True)
    if git:
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        (root / "README.md").write_text("# bench\n")
    paths = init_project(root, title="Bench")
    if git:
        subprocess.run(
            ["git", "-c", "user.email=b@example.invalid", "-c", "user.name=b", "add", "-A"],
            cwd=root,
            check=True,
        )
        subprocess.run(
            ["git", "-c", "user.email=b@example.invalid", "-c", "user.name=b", "commit", "-qm", "start"],
            cwd=root,
            check=True,
        )
    services = Services.open(paths)
    try:
        services.features.create("core", "Core")
        services.disciplines.create("backend", "Backend", "server", "#336699")
        for number in range(1, tasks + 1):
            services.tasks.create(
                "core",
                "backend",
                f"Task {number}: make the thing {number} work",
                description=f"Task number {number}, made by the benchmark.",
                acceptance_criteria=["it works", "it is tested"],
            )
    finally:
        services.close()
    return root


def db_file(root: Path) -> Path:
    return root / ".ralph" / "db" / "ralph.db"


def now() -> float:
    """A clock every process on this machine shares (CLOCK_MONOTONIC)."""
    return time.monotonic()


def env_for_children() -> dict[str, str]:
    """The environment for processes the benchmarks start: this repo importable, no proxies."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        env.pop(key, None)
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    # An installed package has its bytecode compiled; without this a changed module of the checkout
    # would be compiled again by every spawned server (this machine's shell sets the variable).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


# --- what agents say -----------------------------------------------------------------------------

FLAG_SEVERITIES = ("info", "warning", "blocking")
FLAG_CATEGORIES = ("bug", "stale", "ambiguity", "performance", "security")


def session_signals(count: int, number: int = 0, closing: str = "done") -> list[tuple[str, dict[str, Any]]]:
    """A busy session's verb calls, `count` of them, the last one `closing`: flags, learnings at every
    scope, questions (two blocking), new-task and other suggestions, external blockers, partials."""
    calls: list[tuple[str, dict[str, Any]]] = []
    pattern = (
        ["flag"] * 8 + ["learned"] * 5 + ["ask"] * 2 + ["suggest"] * 2 + ["blocked", "partial"]
    )  # 20 per round: 40 % flags, 25 % learnings, 10 % asks, 10 % suggestions, 5 % blockers, 5 % partials
    for index in range(count - 1):
        verb = pattern[index % len(pattern)]
        tag = f"s{number} #{index}"
        if verb == "flag":
            params: dict[str, Any] = {
                "what": f"{tag}: the tide table cache is never invalidated when the station list changes",
                "severity": FLAG_SEVERITIES[index % 3],
                "category": FLAG_CATEGORIES[index % 5],
            }
        elif verb == "learned":
            params = {
                "text": f"{tag}: station ids are zero-padded to five digits in every NOAA file",
                "kind": "discovery",
                "scope": ("task", "feature", "project", "feature", "task")[index % 5],
                "rationale": "found while parsing",
            }
        elif verb == "ask":
            params = {
                "question": f"{tag}: metres or feet for the chart axis?",
                "options": ["metres", "feet"],
                "blocking": index % 40 == 13,
            }
        elif verb == "suggest":
            params = {
                "what": f"{tag}: cache the harmonic constants per station",
                "kind": "new_task" if index % 40 < 20 else "refactor",
                "why": "every request recomputes them",
            }
        elif verb == "blocked":
            params = {"on": f"{tag}: the NOAA API key", "kind": "external", "detail": "waiting for access"}
        else:
            params = {"summary": f"{tag}: parser half done", "remaining": "the chart"}
        calls.append((verb, params))
    if closing == "done":
        calls.append(("done", {"summary": f"s{number}: parser and chart done, tests pass"}))
    elif closing == "stuck":
        calls.append(("stuck", {"reason": f"s{number}: the API key never arrived"}))
    else:
        calls.append(("partial", {"summary": f"s{number}: half", "remaining": "the rest"}))
    return calls


def guard_pyside_refcounts() -> str | None:
    """Keep PySide6 6.12.0's reference-count bug on Python < 3.12 from crashing a window benchmark.

    On CPython 3.11 that PySide6 release drops a reference to `None` on every void Qt call made from
    Python (`setText`, `processEvents`, `QTimer.singleShot`, …) and to `True`/`False` on signal
    emits, so after some tens of thousands of calls the interpreter aborts ("none_dealloc" /
    "bool_dealloc"). 6.11.3 does not; on 3.12+ these objects are immortal. The benchmark measures
    speed, not that bug (reported separately), so it gives the three objects a huge count up front.
    Returns what it did, or None when nothing was needed.
    """
    import ctypes

    try:
        import PySide6
    except ImportError:
        return None
    if sys.version_info >= (3, 12) or not PySide6.__version__.startswith("6.12."):
        return None
    for immortal in (None, True, False):
        ctypes.c_ssize_t.from_address(id(immortal)).value += 1 << 40
    return f"PySide6 {PySide6.__version__} on Python {sys.version.split()[0]}: refcount guard applied"
