"""Run every benchmark, each in a process of its own, and print one table; also write bench/results.json.

    python bench/run_all.py              # everything (about 5 minutes on the 2-core machine)
    python bench/run_all.py --quick      # fewer repetitions, for a smoke run
    python bench/run_all.py --only stdio_startup tool_latency

Each script prints its own figures as it goes; the table at the end has, per row: what was
measured, the figure, the target, the reference measured in the same run, the ratio to it, and
pass / MISS (info where there is no target). The machine's load average is recorded before each
script: other processes on this 2-core machine move every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _common import BENCH_DIR, PYTHON, REPO, ROW_PREFIX, env_for_children

SCRIPTS: list[tuple[str, list[str], list[str]]] = [
    # (script, arguments, quick arguments)
    ("stdio_startup", ["--runs", "9"], ["--runs", "7"]),
    ("tool_latency", ["--calls", "300", "--rounds", "2"], ["--calls", "100", "--rounds", "1"]),
    ("session_open", ["--sessions", "60"], ["--sessions", "50"]),
    ("concurrent_verbs", ["--sessions", "8", "--calls", "500"], ["--sessions", "8", "--calls", "100"]),
    ("loop_overhead", ["--tasks", "20"], ["--tasks", "10"]),
    ("check_overhead", ["--tasks", "12"], ["--tasks", "6"]),
    ("sandbox_start", ["--runs", "40"], ["--runs", "10"]),
    ("companion_page", ["--loads", "60", "--writes", "20"], ["--loads", "20", "--writes", "5"]),
    ("parallel", ["--tasks", "12"], ["--tasks", "8", "--hold", "2"]),
    ("postprocess", ["--sessions", "15"], ["--sessions", "8"]),
    ("window_open", [], []),
    ("window_open", ["--tasks", "50000", "--signals", "500000"], ["--tasks", "50000", "--signals", "500000"]),
    ("window_live", ["--writes", "12"], ["--writes", "8"]),
    ("window_responsive", ["--tasks", "12"], ["--tasks", "6"]),
    ("review_diff", ["--runs", "7"], ["--runs", "3"]),
    ("window_checks", ["--view", "loop"], ["--view", "loop"]),
    ("window_checks", ["--view", "reviews", "--seconds", "5"], ["--view", "reviews"]),
]


def load_average() -> list[float]:
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except OSError:
        return []


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in ("mcp", "PySide6_Essentials", "SQLAlchemy", "uvicorn", "pydantic"):
        try:
            from importlib.metadata import version

            found[package] = version(package)
        except Exception:  # a missing package is simply not listed
            continue
    return found


def git_commit() -> str | None:
    result = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True).stdout
    return (result.stdout.strip() + ("+dirty" if dirty.strip() else "")) if result.returncode == 0 else None


def run(script: str, arguments: list[str]) -> tuple[list[dict[str, Any]], int, float]:
    """Run one script, echoing its output; its table rows, exit code and seconds."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [PYTHON, str(BENCH_DIR / f"{script}.py"), *arguments],
        cwd=BENCH_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env_for_children(),
    )
    assert process.stdout is not None
    rows = []
    for line in process.stdout:
        if line.startswith(ROW_PREFIX):
            rows.append(json.loads(line[len(ROW_PREFIX) :]))
        else:
            print(f"  {line}", end="", flush=True)
    return rows, process.wait(), time.perf_counter() - start


def table(rows: list[dict[str, Any]]) -> str:
    header = "| what | measured | target | reference (same run) | ratio | result |"
    lines = [header, "|---|---|---|---|---|---|"]
    for row in rows:
        verdict = {True: "pass", False: "**MISS**", None: "info"}[row["passed"]]
        cells = [row["what"], row["measured"], row["target"], row["reference"], row["ratio"], verdict]
        lines.append("| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--only", nargs="*", help="run only these scripts")
    parser.add_argument("--output", type=Path, default=BENCH_DIR / "results.json")
    args = parser.parse_args()
    started = datetime.now(UTC)
    report: dict[str, Any] = {
        "started": started.isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "versions": versions(),
        "commit": git_commit(),
        "quick": args.quick,
        "scripts": [],
        "rows": [],
    }
    failures = []
    for script, full, quick in SCRIPTS:
        if args.only and script not in args.only:
            continue
        arguments = quick if args.quick else full
        load = load_average()
        print(f"\n== {script} {' '.join(arguments)}  (load average {load})", flush=True)
        rows, code, seconds = run(script, arguments)
        report["scripts"].append(
            {
                "script": script,
                "arguments": arguments,
                "exit_code": code,
                "seconds": round(seconds, 1),
                "load_before": load,
            }
        )
        for row in rows:
            row["script"] = script
            row["load_before"] = load
        report["rows"].extend(rows)
        if code != 0 or not rows:
            failures.append(f"{script} (exit code {code}, {len(rows)} rows)")
    report["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print("\n" + table(report["rows"]))
    print(
        f"\n{sum(r['passed'] is True for r in report['rows'])} pass, "
        f"{sum(r['passed'] is False for r in report['rows'])} miss, "
        f"{sum(r['passed'] is None for r in report['rows'])} info; "
        f"commit {report['commit']}; {report['versions']}; written to {args.output}"
    )
    if failures:
        print("scripts that failed: " + ", ".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
