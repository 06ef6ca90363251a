"""The companion page on a phone's connection (DESIGN §14): how fast a page loads, how soon it hears a change.

A project with T tasks, each with an agent's open question, serves its companion page over HTTPS on
127.0.0.1. A paired client (one TLS connection kept open, as a browser keeps it) loads the Inbox R
times; then, with the page's live stream open, an agent's question is recorded W times and the time
until the stream says `changed` is taken each time.

    python bench/companion_page.py [--tasks 30] [--loads 60] [--writes 20]
"""

from __future__ import annotations

import argparse
import asyncio
import threading
import time
from pathlib import Path

from _common import Row, emit, fmt_ms, make_project, median, ms, percentile, say, scratch_dir

PAGE_TARGET_MS = 150.0
LIVE_TARGET_MS = 1000.0


def measure(root: Path, loads: int, writes: int) -> dict[str, float]:
    import httpx2

    from ralph_desk.companion.host import CompanionHost
    from ralph_desk.domain.enums import Verb
    from ralph_desk.project import ProjectPaths
    from ralph_desk.project.companion_home import CompanionHome, CompanionSettings
    from ralph_desk.services.container import Services

    services = Services.open(ProjectPaths.at(root))
    other = Services.open(ProjectPaths.at(root))  # another process's writes: heard at the poll, not at once
    tasks = services.tasks.list()
    for task in tasks:
        question = f"Which way for {task.title}?"
        services.signals.record(task.id, "bench", Verb.ASK, question=question, blocking=True)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    settings = CompanionSettings(enabled=True, host="127.0.0.1", port=0)
    host = CompanionHost(services, CompanionHome.of(services.paths), settings)
    asyncio.run_coroutine_threadsafe(host.start(), loop).result(60)
    base = host.url.rstrip("/")
    try:
        with httpx2.Client(base_url=base, verify=False, headers={"origin": base}, timeout=30) as client:
            paired = client.post("/pair", data={"code": host.new_code().code, "name": "Bench phone"})
            assert paired.status_code == 303, paired.text
            page_times: list[float] = []
            for _ in range(loads):
                started = time.perf_counter()
                answer = client.get("/", headers={"accept": "text/html"})
                page_times.append(time.perf_counter() - started)
                assert answer.status_code == 200
            live: dict[str, list[float]] = {"here": [], "elsewhere": []}
            with client.stream("GET", "/events") as stream:
                lines = stream.iter_lines()
                assert next(lines).startswith("retry")
                for index in range(writes):
                    for where, writer in (("here", services), ("elsewhere", other)):
                        started = time.perf_counter()
                        question = f"One more, {index}?"
                        writer.signals.record(
                            tasks[0].id, "bench", Verb.ASK, question=question, blocking=False
                        )
                        next(line for line in lines if line.startswith("event: changed"))
                        live[where].append(time.perf_counter() - started)
    finally:
        asyncio.run_coroutine_threadsafe(host.stop(), loop).result(60)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        services.close()
        other.close()
    pages = [ms(value) for value in page_times]
    here = [ms(value) for value in live["here"]]
    elsewhere = [ms(value) for value in live["elsewhere"]]
    return {
        "page_median_ms": median(pages),
        "page_p95_ms": percentile(pages, 95),
        "live_median_ms": median(here),
        "live_p95_ms": percentile(here, 95),
        "elsewhere_median_ms": median(elsewhere),
        "elsewhere_p95_ms": percentile(elsewhere, 95),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--loads", type=int, default=60)
    parser.add_argument("--writes", type=int, default=20)
    args = parser.parse_args()
    with scratch_dir("companion") as tmp:
        root = make_project(tmp / "repo", tasks=args.tasks, git=True)
        figures = measure(root, args.loads, args.writes)
    say(
        f"Inbox with {args.tasks} open questions over HTTPS, {args.loads} loads: median "
        f"{fmt_ms(figures['page_median_ms'])}, p95 {fmt_ms(figures['page_p95_ms'])}"
    )
    say(
        f"a change heard by an open page, {args.writes} writes each: made in the serving process median "
        f"{fmt_ms(figures['live_median_ms'])}, p95 {fmt_ms(figures['live_p95_ms'])}; made elsewhere (its own "
        f"database connection, heard at the poll) median {fmt_ms(figures['elsewhere_median_ms'])}, p95 "
        f"{fmt_ms(figures['elsewhere_p95_ms'])}"
    )
    emit(
        Row(
            key="companion_page",
            what=f"the companion's Inbox with {args.tasks} open questions, loaded over HTTPS",
            measured=fmt_ms(figures["page_p95_ms"]) + " p95",
            target=f"≤ {PAGE_TARGET_MS:g} ms",
            passed=figures["page_p95_ms"] <= PAGE_TARGET_MS,
            figures=figures,
        )
    )
    emit(
        Row(
            key="companion_live",
            what="an agent's question from another process heard by an open companion page (an SSE event)",
            measured=fmt_ms(figures["elsewhere_p95_ms"]) + " p95",
            target=f"≤ {LIVE_TARGET_MS:g} ms",
            passed=figures["elsewhere_p95_ms"] <= LIVE_TARGET_MS,
            figures=figures,
        )
    )


if __name__ == "__main__":
    main()
