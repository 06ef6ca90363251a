"""The demo project: Tidewater, a harbour tide-table web app, half-way through a Ralph loop.

Everything is made through the services, as the loop and the window would make it, so the demo
shows every part working without an agent: features with learnings, disciplines (one taking tools
away, one with an extra MCP server), tasks in every status, dependencies, comments, the eight
signal verbs, questions waiting for an answer, suggested tasks waiting for review, open flags,
past agent sessions with cost and transcripts, and the progress and learnings files.
The result is the same on every run (apart from the times the database stamps).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ralph_desk.domain.enums import Priority, Recipe, SessionOutcome, TaskStatus, Verb
from ralph_desk.project import ProjectError, ProjectPaths, init_project, remove_project
from ralph_desk.services.container import Services
from ralph_desk.services.state_files import StateFileService

TITLE = "Tidewater"
DESCRIPTION = (
    "A harbour tide-table web app: tide predictions for every harbour station, a seven-day tide "
    "chart, and alerts before the water gets too shallow for your keel."
)
DEMO_CLOCK = datetime(2026, 11, 18, 9, 0, tzinfo=UTC)
AGENT = "claude"
MODEL = "sonnet"


@dataclass(frozen=True)
class DemoFeature:
    name: str
    display_name: str
    acronym: str
    description: str
    architecture: str
    boundaries: str
    context_files: tuple[str, ...]
    knowledge_paths: tuple[str, ...] = ()
    dependencies: tuple[str, ...] = ()
    learnings: tuple[tuple[str, str, str], ...] = ()  # (text, source, reason)


@dataclass(frozen=True)
class DemoTask:
    key: str
    feature: str
    discipline: str
    title: str
    status: TaskStatus
    priority: Priority
    description: str
    criteria: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    context_files: tuple[str, ...] = ()
    output_artifacts: tuple[str, ...] = ()
    hints: str | None = None
    estimated_turns: int | None = None
    pseudocode: str | None = None


@dataclass(frozen=True)
class DemoSession:
    """A past agent session: its task, the verbs it called, what it cost."""

    name: str
    task: str
    signals: tuple[tuple[Verb, dict[str, Any]], ...]
    cost_usd: float
    turns: int
    input_tokens: int
    output_tokens: int
    outcome: SessionOutcome
    changed_files: tuple[str, ...] = ()
    narration: str = ""
    minutes: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


FEATURES: tuple[DemoFeature, ...] = (
    DemoFeature(
        name="tide-data",
        display_name="Tide data",
        acronym="TD",
        description="Harmonic constituents per station, and the tide predictions computed from them.",
        architecture=(
            "A pure-Python prediction core (tidewater/tides/) sums the harmonic constituents of a "
            "station; an importer loads the hydrographic office's CSV files into PostgreSQL; a small "
            "FastAPI service serves /stations/{id}/predictions as JSON."
        ),
        boundaries=(
            "Owns tidewater/tides/ and the api/predictions endpoints. Does not draw anything and "
            "does not send alerts: the chart and the alerts read predictions through the API."
        ),
        context_files=("tidewater/tides/harmonics.py", "tidewater/tides/predict.py", "api/predictions.py"),
        knowledge_paths=("docs/tides-primer.md",),
        learnings=(
            (
                "Heights are metres above chart datum never above mean sea level.",
                "human",
                "The office's CSV header says so; two early tasks got it wrong.",
            ),
            (
                "Constituent phases in the CSV are in degrees relative to UTC, not local time.",
                "agent",
                "Found while comparing predictions with the published Dover table.",
            ),
        ),
    ),
    DemoFeature(
        name="tide-charts",
        display_name="Tide charts",
        acronym="TC",
        description="The seven-day tide curve of a station, with high and low water marked.",
        architecture=(
            "A React page (web/src/charts/) draws the curve with an SVG path from the predictions "
            "endpoint; times are shown in the station's local time."
        ),
        boundaries="Owns web/src/charts/. Reads predictions only through the API; computes nothing tidal.",
        context_files=("web/src/charts/TideChart.tsx", "web/src/charts/useTides.ts"),
        dependencies=("tide-data",),
        learnings=(
            (
                "Chart tests compare SVG snapshots; update them (`npm test -- -u`) only on purpose.",
                "human",
                "A session once updated every snapshot to make its test pass.",
            ),
        ),
    ),
    DemoFeature(
        name="harbour-alerts",
        display_name="Harbour alerts",
        acronym="HA",
        description="E-mail alerts before the water at a berth drops below a boat's keel clearance.",
        architecture=(
            "A rule engine (tidewater/alerts/rules.py) checks the next 48 hours of predictions "
            "every 15 minutes; a sender delivers the alert e-mails."
        ),
        boundaries="Owns tidewater/alerts/ and the alert settings page. Never changes predictions.",
        context_files=("tidewater/alerts/rules.py",),
        dependencies=("tide-data",),
        learnings=(
            (
                "Keel clearance is draught plus a safety margin of 0.3 m unless the user sets another.",
                "human",
                "The harbour master's rule of thumb.",
            ),
        ),
    ),
    DemoFeature(
        name="station-search",
        display_name="Station search",
        acronym="SS",
        description="Find a harbour station by name, or by the nearest one to a position.",
        architecture="A trigram index on station names; nearest stations by great-circle distance.",
        boundaries="Owns api/stations.py and the station picker.",
        context_files=("api/stations.py",),
    ),
)

DISCIPLINES: tuple[dict[str, Any], ...] = (
    {
        "name": "frontend",
        "display_name": "Frontend",
        "icon": "layout",
        "color": "#3b82f6",
        "acronym": "FE",
        "system_prompt": "You build Tidewater's React front end. Keep components small and typed.",
        "skills": ["React", "TypeScript", "SVG charts", "accessibility"],
        "conventions": "Function components and hooks; CSS modules; every component has a test.",
        "mcp_servers": {"playwright": {"command": "npx", "args": ["-y", "@playwright/mcp"]}},
    },
    {
        "name": "backend",
        "display_name": "Backend",
        "icon": "server",
        "color": "#10b981",
        "acronym": "BE",
        "system_prompt": "You build Tidewater's Python services. Prefer pure functions for tidal maths.",
        "skills": ["Python", "FastAPI", "PostgreSQL", "numerical methods"],
        "conventions": "Type hints everywhere; pytest; no floating-point equality in tests.",
    },
    {
        "name": "testing",
        "display_name": "Testing",
        "icon": "flask-conical",
        "color": "#f59e0b",
        "acronym": "QA",
        "system_prompt": "You write tests that prove behaviour against published tide tables.",
        "skills": ["pytest", "Playwright", "property-based testing"],
        "conventions": "Tests are named as behaviour sentences; no sleeps.",
    },
    {
        "name": "docs",
        "display_name": "Documentation",
        "icon": "book-open",
        "color": "#8b5cf6",
        "acronym": "DOC",
        "system_prompt": "You write Tidewater's user guide for sailors, not for programmers.",
        "skills": ["technical writing", "Markdown"],
        "conventions": "Short sentences; one idea per paragraph; metric units with imperial in brackets.",
        "disabled_tools": ["learned", "suggest"],
    },
)

TASKS: tuple[DemoTask, ...] = (
    DemoTask(
        "parse-csv",
        "tide-data",
        "backend",
        "Parse harmonic constituents from the hydrographic office CSV",
        TaskStatus.DONE,
        Priority.HIGH,
        "Read the office's per-station CSV (name, amplitude, phase, speed) into Constituent records.",
        ("All 37 constituents of Dover are read", "A malformed row names its line number"),
        tags=("importer",),
        context_files=("data/samples/dover.csv",),
        output_artifacts=("tidewater/tides/harmonics.py",),
        estimated_turns=12,
    ),
    DemoTask(
        "predict",
        "tide-data",
        "backend",
        "Compute hourly tide predictions from the constituents",
        TaskStatus.DONE,
        Priority.CRITICAL,
        "Sum the constituents with nodal corrections to give the height at any time.",
        ("Dover predictions match the published table within 0.1 m", "Times are UTC"),
        depends_on=("parse-csv",),
        tags=("core",),
        output_artifacts=("tidewater/tides/predict.py",),
        estimated_turns=20,
        pseudocode="for each hour: h = Z0 + Σ f·H·cos(σt + V0 + u − g)",
    ),
    DemoTask(
        "extrema",
        "tide-data",
        "backend",
        "Find the times of high and low water",
        TaskStatus.DONE,
        Priority.HIGH,
        "Locate turning points of the predicted curve to the nearest minute.",
        ("High and low water within 5 minutes of the published table",),
        depends_on=("predict",),
        estimated_turns=10,
    ),
    DemoTask(
        "cache",
        "tide-data",
        "backend",
        "Cache predictions per station for 30 days",
        TaskStatus.IN_PROGRESS,
        Priority.MEDIUM,
        "Store computed predictions so the chart loads in under 100 ms.",
        ("A cached station answers in under 100 ms", "The cache is dropped when constituents change"),
        depends_on=("predict",),
        context_files=("api/predictions.py",),
    ),
    DemoTask(
        "local-time",
        "tide-data",
        "backend",
        "Apply daylight-saving offsets to displayed times",
        TaskStatus.NEEDS_INPUT,
        Priority.HIGH,
        "Predictions are UTC; people read tide tables in local time.",
        ("The clock change in March and October shows no gap or duplicate hour",),
        depends_on=("extrema",),
    ),
    DemoTask(
        "secondary-ports",
        "tide-data",
        "backend",
        "Import the secondary-port differences table",
        TaskStatus.BLOCKED,
        Priority.MEDIUM,
        "Secondary ports are predicted from a standard port plus time and height differences.",
        ("Every secondary port in the table has predictions",),
        depends_on=("parse-csv",),
    ),
    DemoTask(
        "prediction-tests",
        "tide-data",
        "testing",
        "Test predictions against the published Dover table",
        TaskStatus.DONE,
        Priority.HIGH,
        "Compare a month of predictions with the office's published heights and times.",
        ("Heights within 0.1 m", "Times within 5 minutes"),
        depends_on=("predict",),
        output_artifacts=("tests/tides/test_dover.py",),
    ),
    DemoTask(
        "tide-curve",
        "tide-charts",
        "frontend",
        "Draw the seven-day tide curve",
        TaskStatus.DONE,
        Priority.HIGH,
        "An SVG curve of the next seven days with a day grid and a 'now' line.",
        ("The curve spans seven days", "Resizing redraws without flicker"),
        depends_on=("extrema",),
        output_artifacts=("web/src/charts/TideChart.tsx",),
    ),
    DemoTask(
        "mark-extrema",
        "tide-charts",
        "frontend",
        "Mark high and low water on the chart",
        TaskStatus.PENDING,
        Priority.MEDIUM,
        "Label each high and low water with its time and height.",
        ("Labels never overlap at 320 px width",),
        depends_on=("tide-curve",),
    ),
    DemoTask(
        "shallow-band",
        "tide-charts",
        "frontend",
        "Shade the band below keel clearance",
        TaskStatus.NEEDS_INPUT,
        Priority.MEDIUM,
        "Shade the part of the chart where the water is shallower than the user's keel clearance.",
        ("The band follows the user's clearance setting",),
        depends_on=("tide-curve",),
    ),
    DemoTask(
        "dark-mode",
        "tide-charts",
        "frontend",
        "Dark mode for the tide chart",
        TaskStatus.PENDING,
        Priority.LOW,
        "Follow the system colour scheme; keep the contrast of the curve at 4.5:1 or more.",
        hints="Use the CSS variables in web/src/theme.css rather than new colours.",
    ),
    DemoTask(
        "print-table",
        "tide-charts",
        "frontend",
        "Print-friendly monthly tide table",
        TaskStatus.SKIPPED,
        Priority.LOW,
        "A printable A4 page of a month's high and low waters.",
    ),
    DemoTask(
        "keyboard-nav",
        "tide-charts",
        "frontend",
        "Keyboard navigation along the tide curve",
        TaskStatus.FAILED,
        Priority.MEDIUM,
        "Arrow keys move a cursor along the curve and announce height and time to screen readers.",
        ("Works with NVDA and VoiceOver",),
        depends_on=("tide-curve",),
    ),
    DemoTask(
        "alert-rule",
        "harbour-alerts",
        "backend",
        "Define the keel-clearance alert rule",
        TaskStatus.DONE,
        Priority.HIGH,
        "Raise an alert when predicted depth at a berth drops below draught plus margin.",
        ("An alert is raised 2 hours before the water drops below clearance",),
        depends_on=("predict",),
    ),
    DemoTask(
        "alert-email",
        "harbour-alerts",
        "backend",
        "Send alert e-mails before low water",
        TaskStatus.NEEDS_INPUT,
        Priority.HIGH,
        "Deliver the alert by e-mail, at most once per tide per boat.",
        ("One e-mail per tide per boat", "A failed delivery is retried three times"),
        depends_on=("alert-rule",),
    ),
    DemoTask(
        "alert-settings",
        "harbour-alerts",
        "frontend",
        "Alert settings page",
        TaskStatus.PENDING,
        Priority.MEDIUM,
        "Let a user enter the boat's draught, the margin and the berth.",
        ("Invalid draughts are refused with a message",),
        depends_on=("alert-rule",),
    ),
    DemoTask(
        "alert-e2e",
        "harbour-alerts",
        "testing",
        "End-to-end test of the alert e-mail",
        TaskStatus.BLOCKED,
        Priority.MEDIUM,
        "From settings to e-mail, against a local mail catcher.",
        depends_on=("alert-email",),
    ),
    DemoTask(
        "station-index",
        "station-search",
        "backend",
        "Search stations by name and position",
        TaskStatus.PENDING,
        Priority.MEDIUM,
        "A trigram search on names and a nearest-station query by latitude and longitude.",
        ("'dovr' finds Dover", "The nearest station to 51.1N 1.3E is Dover"),
    ),
    DemoTask(
        "station-picker",
        "station-search",
        "frontend",
        "Station picker with a map",
        TaskStatus.PENDING,
        Priority.MEDIUM,
        "A search box with suggestions and a small map of the matches.",
        depends_on=("station-index",),
    ),
    DemoTask(
        "user-guide",
        "tide-charts",
        "docs",
        "User guide: reading a tide chart",
        TaskStatus.DONE,
        Priority.MEDIUM,
        "Explain chart datum, high and low water, and springs and neaps for sailors.",
        output_artifacts=("docs/guide/reading-the-chart.md",),
    ),
    DemoTask(
        "accuracy-doc",
        "tide-data",
        "docs",
        "Document prediction accuracy and its limits",
        TaskStatus.PENDING,
        Priority.LOW,
        "Weather (surge, pressure) is not in the predictions; say how wrong they can be.",
    ),
    DemoTask(
        "changelog",
        "tide-data",
        "docs",
        "Write the changelog for release 0.1",
        TaskStatus.DRAFT,
        Priority.LOW,
        "List what 0.1 does for sailors, in their words.",
    ),
)

LEARNED_PROJECT = {
    "text": "Run `make check` before calling done: it runs ruff, mypy and the tests together.",
    "kind": "convention",
    "scope": "project",
    "rationale": "Two sessions called done with failing type checks.",
}

SESSIONS: tuple[DemoSession, ...] = (
    DemoSession(
        "task-predict",
        "predict",
        (
            (
                Verb.LEARNED,
                {
                    "text": "Nodal corrections (f, u) change slowly: once per day is accurate enough.",
                    "kind": "discovery",
                    "scope": "feature",
                },
            ),
            (Verb.LEARNED, LEARNED_PROJECT),
            (
                Verb.DONE,
                {"summary": "predict() with nodal corrections; Dover matches the table within 0.06 m."},
            ),
        ),
        cost_usd=0.84,
        turns=23,
        input_tokens=182_400,
        output_tokens=9_850,
        outcome=SessionOutcome.DONE,
        changed_files=("tidewater/tides/predict.py", "tests/tides/test_predict.py"),
        narration="I'll read harmonics.py first, then write predict() and check it against Dover.",
        minutes=14,
    ),
    DemoSession(
        "task-extrema",
        "extrema",
        (
            (
                Verb.FLAG,
                {
                    "what": "docs/tides-primer.md says heights are above mean sea level, not chart datum.",
                    "severity": "info",
                    "category": "stale",
                },
            ),
            (
                Verb.SUGGEST,
                {
                    "what": "Add a regression test for the spring-equinox tides of March 2027",
                    "kind": "new_task",
                    "why": "The largest tides of the year are where turning-point search is least stable.",
                    "feature": "tide-data",
                },
            ),
            (
                Verb.DONE,
                {"summary": "Turning points by golden-section search; all within 3 minutes of the table."},
            ),
        ),
        cost_usd=0.52,
        turns=15,
        input_tokens=121_300,
        output_tokens=6_120,
        outcome=SessionOutcome.DONE,
        changed_files=("tidewater/tides/extrema.py", "tests/tides/test_extrema.py"),
        narration="Turning points: I'll bracket each one from the hourly values, then refine.",
        minutes=9,
    ),
    DemoSession(
        "task-tide-curve",
        "tide-curve",
        (
            (
                Verb.LEARNED,
                {
                    "text": "useTides() must memoise on station and day, or each resize refetches.",
                    "kind": "decision",
                    "scope": "feature",
                    "rationale": "Resizing fired 40 requests a second before memoising.",
                },
            ),
            (
                Verb.FLAG,
                {
                    "what": "Redrawing the whole SVG path on every resize takes 30 ms on a phone.",
                    "severity": "warning",
                    "category": "performance",
                },
            ),
            (
                Verb.SUGGEST,
                {
                    "what": "Debounce chart redraws while the window is being resized",
                    "kind": "new_task",
                    "why": "Resizing on phones stutters; a 100 ms debounce would hide it.",
                    "feature": "tide-charts",
                },
            ),
            (Verb.DONE, {"summary": "TideChart draws seven days with a day grid and a now line."}),
        ),
        cost_usd=1.12,
        turns=31,
        input_tokens=240_900,
        output_tokens=14_400,
        outcome=SessionOutcome.DONE,
        changed_files=("web/src/charts/TideChart.tsx", "web/src/charts/useTides.ts"),
        narration="I'll draw the curve as one SVG path and add the grid afterwards.",
        minutes=21,
    ),
    DemoSession(
        "task-local-time",
        "local-time",
        (
            (
                Verb.ASK,
                {
                    "question": "Show times in the station's local time or in the user's own time zone?",
                    "options": ["station local time", "user's time zone", "both, station time first"],
                    "preferred": "station local time",
                    "blocking": True,
                },
            ),
            (
                Verb.PARTIAL,
                {
                    "summary": "Added zoneinfo-based conversion helpers and tests for both clock changes.",
                    "remaining": "Wire the conversion into the API once the time zone question is answered.",
                },
            ),
        ),
        cost_usd=0.31,
        turns=9,
        input_tokens=70_200,
        output_tokens=3_900,
        outcome=SessionOutcome.NEEDS_INPUT,
        changed_files=("tidewater/tides/timezones.py",),
        minutes=6,
    ),
    DemoSession(
        "task-shallow-band",
        "shallow-band",
        (
            (
                Verb.ASK,
                {
                    "question": "Which colours should mark water shallower than the keel clearance?",
                    "options": ["red band", "amber band", "hatched blue band (colour-blind safe)"],
                    "preferred": "hatched blue band (colour-blind safe)",
                    "blocking": True,
                },
            ),
            (
                Verb.FLAG,
                {
                    "what": "The task says 'keel clearance' but the settings page calls it 'minimum depth'.",
                    "severity": "warning",
                    "category": "ambiguity",
                },
            ),
            (
                Verb.PARTIAL,
                {
                    "summary": "The band is computed from the clearance setting.",
                    "remaining": "Its colours, once chosen.",
                },
            ),
        ),
        cost_usd=0.27,
        turns=8,
        input_tokens=61_800,
        output_tokens=3_100,
        outcome=SessionOutcome.NEEDS_INPUT,
        minutes=5,
    ),
    DemoSession(
        "task-alert-email",
        "alert-email",
        (
            (
                Verb.ASK,
                {
                    "question": "Which way should alert e-mails be sent?",
                    "options": ["the harbour office's SMTP relay", "a transactional e-mail service"],
                    "preferred": "the harbour office's SMTP relay",
                    "blocking": True,
                },
            ),
            (
                Verb.FLAG,
                {
                    "what": "The example settings keep the SMTP password in plain text in config.yaml.",
                    "severity": "blocking",
                    "category": "security",
                },
            ),
            (
                Verb.PARTIAL,
                {
                    "summary": "Alert e-mail text and the once-per-tide rule are done and tested.",
                    "remaining": "The sender itself, once the delivery route is chosen.",
                },
            ),
        ),
        cost_usd=0.46,
        turns=12,
        input_tokens=98_500,
        output_tokens=5_200,
        outcome=SessionOutcome.NEEDS_INPUT,
        changed_files=("tidewater/alerts/email.py",),
        minutes=8,
    ),
    DemoSession(
        "task-mark-extrema",
        "mark-extrema",
        (
            (
                Verb.ASK,
                {
                    "question": "Should heights be labelled to one decimal (3.4 m) or two (3.42 m)?",
                    "options": ["one decimal", "two decimals"],
                    "preferred": "one decimal",
                    "blocking": True,
                },
            ),
            (
                Verb.PARTIAL,
                {"summary": "Label placement avoids overlaps.", "remaining": "Label format, once answered."},
            ),
        ),
        cost_usd=0.22,
        turns=7,
        input_tokens=50_100,
        output_tokens=2_600,
        outcome=SessionOutcome.NEEDS_INPUT,
        minutes=4,
        extra={"answer": "One decimal, as the printed tables do."},
    ),
    DemoSession(
        "task-keyboard-nav-1",
        "keyboard-nav",
        (
            (
                Verb.STUCK,
                {"reason": "The SVG has no focusable elements; I could not find a way to add a cursor."},
            ),
        ),
        cost_usd=0.35,
        turns=10,
        input_tokens=80_000,
        output_tokens=4_000,
        outcome=SessionOutcome.STUCK,
        minutes=7,
    ),
    DemoSession(
        "task-keyboard-nav-2",
        "keyboard-nav",
        ((Verb.STUCK, {"reason": "Screen readers do not announce live regions inside the SVG."}),),
        cost_usd=0.41,
        turns=11,
        input_tokens=88_000,
        output_tokens=4_400,
        outcome=SessionOutcome.STUCK,
        minutes=8,
    ),
    DemoSession(
        "task-keyboard-nav-3",
        "keyboard-nav",
        (
            (
                Verb.FLAG,
                {
                    "what": "Task 'Keyboard navigation' overlaps the chart's planned accessibility rework.",
                    "severity": "info",
                    "category": "overlap",
                },
            ),
            (Verb.STUCK, {"reason": "Same problem as before: no accessible cursor in the chart library."}),
        ),
        cost_usd=0.38,
        turns=10,
        input_tokens=84_000,
        output_tokens=4_100,
        outcome=SessionOutcome.FAILED,
        minutes=7,
    ),
    DemoSession(
        "task-secondary-ports",
        "secondary-ports",
        (
            (
                Verb.BLOCKED,
                {
                    "on": "The licence for the secondary-port differences table",
                    "kind": "external",
                    "detail": "The office sends the table only to licensees; nothing in data/ has it.",
                },
            ),
            (
                Verb.STUCK,
                {"reason": "Cannot import a table that is not in the repository."},
            ),
        ),
        cost_usd=0.12,
        turns=4,
        input_tokens=30_200,
        output_tokens=1_500,
        outcome=SessionOutcome.BLOCKED,
        minutes=2,
    ),
    DemoSession(
        "task-alert-e2e",
        "alert-e2e",
        (
            (
                Verb.BLOCKED,
                {
                    "on": "Task 'Send alert e-mails before low water'",
                    "kind": "upstream_task",
                    "detail": "There is no sender to test yet.",
                },
            ),
            (
                Verb.LEARNED,
                {
                    "text": "MailHog on port 1025 is already in docker-compose.yml for tests.",
                    "kind": "discovery",
                    "scope": "task",
                },
            ),
            (Verb.STUCK, {"reason": "Waiting for the e-mail sender."}),
        ),
        cost_usd=0.09,
        turns=3,
        input_tokens=22_000,
        output_tokens=1_000,
        outcome=SessionOutcome.BLOCKED,
        minutes=2,
    ),
)

# Signals of the session still running on the in-progress task (no session row: it has not ended).
RUNNING_STARTED = datetime(2026, 11, 18, 12, 15, tzinfo=UTC)
RUNNING_SESSION = f"{RUNNING_STARTED:%Y%m%d-%H%M%S}-task-cache"
RUNNING_SIGNALS: tuple[tuple[Verb, dict[str, Any]], ...] = (
    (
        Verb.SUGGEST,
        {
            "what": "Publish each station's predictions as an iCalendar feed of high and low waters",
            "kind": "new_task",
            "why": "Sailors asked to see tides in their phone calendar; the cache makes it cheap.",
            "feature": "harbour-alerts",
        },
    ),
    (
        Verb.SUGGEST,
        {
            "what": "Move the prediction cache behind an interface so tests can use an in-memory one",
            "kind": "refactor",
            "why": "Tests currently need PostgreSQL.",
        },
    ),
    (
        Verb.FLAG,
        {
            "what": "Two stations share the id 'DOV' in the sample data.",
            "severity": "warning",
            "category": "bug",
        },
    ),
    (
        Verb.FLAG,
        {
            "what": "The cache key ignores the constituent file's version.",
            "severity": "warning",
            "category": "incomplete_prior",
        },
    ),
)

COMMENTS: tuple[tuple[str, str, str, str | None], ...] = (
    ("predict", "human", "Lovely. Dover matches the almanac to the centimetre on the days I checked.", None),
    ("cache", "human", "30 days is fine; the office publishes new constituents yearly.", "backend"),
    ("print-table", "human", "Skipped: printing is out of scope for 0.1; people use the almanac.", None),
    ("keyboard-nav", "opus", "Three stuck sessions on the same library limit; needs a human decision.", None),
    ("secondary-ports", "human", "I have asked the office for the licence; expect two weeks.", None),
    ("dark-mode", "frontend-agent", "Theme variables exist already in web/src/theme.css.", "frontend"),
)

PROGRESS = (
    "Loop started: 12 tasks pending, agent claude (sonnet).",
    "Done: predictions from harmonic constituents match the Dover table within 0.06 m.",
    "Done: high and low water times within 3 minutes of the published table.",
    "Done: seven-day tide chart. Waiting for answers on 3 questions before continuing.",
)
LEARNINGS_FILE = (
    "Chart datum is the lowest astronomical tide: heights are never negative in normal weather.",
    "Time zones: the API speaks UTC; only the web page converts.",
)


def create_demo(root: str | os.PathLike[str], db_url: str | None = None) -> ProjectPaths:
    """Create the Tidewater demo project in `root` (refused when `root/.ralph/` exists)."""
    paths = ProjectPaths.at(root)
    if paths.ralph.exists():
        raise ProjectError(f"{paths.ralph}: already exists; the demo needs a folder without a project")
    paths = init_project(paths.root, title=TITLE, db_url=db_url)
    try:
        services = Services.open(paths, db_url)
        try:
            if services.tasks.list(limit=1):
                raise ProjectError(
                    f"the database of {paths.root} already holds tasks; the demo needs an empty one"
                )
            build(services)
        finally:
            services.close()
    except BaseException:
        remove_project(paths)
        raise
    return paths


def build(services: Services) -> None:
    """Fill an empty project with the Tidewater demo."""
    services.project.set(TITLE, DESCRIPTION)
    for spec in DISCIPLINES:
        services.disciplines.create(**spec)
    _features(services)
    ids = _tasks(services)
    for task_key, author, body, discipline in COMMENTS:
        services.comments.add(ids[task_key], author, body, discipline=discipline)
    _sessions(services, ids)
    _statuses(services, ids)
    _inbox(services, ids)
    _state_files(services)


def _features(services: Services) -> None:
    for feature in FEATURES:
        services.features.create(
            feature.name,
            feature.display_name,
            description=feature.description,
            acronym=feature.acronym,
            knowledge_paths=feature.knowledge_paths,
            context_files=feature.context_files,
            architecture=feature.architecture,
            boundaries=feature.boundaries,
            dependencies=feature.dependencies,
        )
        for text, source, reason in feature.learnings:
            services.features.append_learning(feature.name, text, source=source, reason=reason)


def _tasks(services: Services) -> dict[str, int]:
    ids: dict[str, int] = {}
    for task in TASKS:
        created = services.tasks.create(
            feature=task.feature,
            discipline=task.discipline,
            title=task.title,
            description=task.description,
            priority=task.priority.value,
            status=(TaskStatus.DRAFT if task.status is TaskStatus.DRAFT else TaskStatus.PENDING).value,
            acceptance_criteria=task.criteria,
            depends_on=[ids[key] for key in task.depends_on],
            tags=task.tags,
            context_files=task.context_files,
            output_artifacts=task.output_artifacts,
            hints=task.hints,
            estimated_turns=task.estimated_turns,
            pseudocode=task.pseudocode,
        )
        ids[task.key] = created.id
    return ids


def _sessions(services: Services, ids: dict[str, int]) -> None:
    tasks = {task.key: task for task in TASKS}
    loop_run = services.sessions.start_loop_run(
        AGENT, max_iterations=30, max_cost_usd=10.0, allow_edits=True, settings={"model": MODEL}
    )
    started = DEMO_CLOCK
    total = 0.0
    for iteration, session in enumerate(SESSIONS, start=1):
        task = tasks[session.task]
        session_id = f"{started:%Y%m%d-%H%M%S}-{session.name}"
        services.sessions.start_session(
            session_id,
            ids[session.task],
            Recipe.TASK_EXECUTION,
            AGENT,
            model=MODEL,
            loop_run_id=loop_run.id,
            iteration=iteration,
            discipline=task.discipline,
            feature=task.feature,
            started_at=started,
        )
        # The session's calls spread over its minutes, as an agent would have made them.
        step = timedelta(minutes=session.minutes) / (len(session.signals) + 1)
        for number, (verb, params) in enumerate(session.signals, start=1):
            services.signals.record(
                ids[session.task], session_id, verb, recorded_at=started + step * number, **params
            )
        if session.outcome is SessionOutcome.STUCK or session.outcome is SessionOutcome.FAILED:
            services.tasks.increment_stuck(ids[session.task])
        transcript = _write_transcript(services.paths, session_id, started, session, ids[session.task])
        closing = next((verb for verb, _ in reversed(session.signals) if verb in _CLOSING), None)
        services.sessions.finish_session(
            session_id,
            ended_at=started + timedelta(minutes=session.minutes),
            exit_code=0,
            closing_verb=closing.value if closing else None,
            outcome=session.outcome.value,
            cost_usd=session.cost_usd,
            input_tokens=session.input_tokens,
            output_tokens=session.output_tokens,
            turns=session.turns,
            transcript_path=transcript,
            changed_files=list(session.changed_files),
        )
        total += session.cost_usd
        started += timedelta(minutes=session.minutes + 3)
    for number, (verb, params) in enumerate(RUNNING_SIGNALS, start=1):
        at = RUNNING_STARTED + timedelta(minutes=2 * number)
        services.signals.record(ids["cache"], RUNNING_SESSION, verb, recorded_at=at, **params)
    services.sessions.update_loop_run(
        loop_run.id,
        state="stopped",
        iterations=len(SESSIONS),
        cost_usd=round(total, 2),
        stop_reason="stopped by the user while tasks wait for answers",
    )


_CLOSING = frozenset({Verb.DONE, Verb.PARTIAL, Verb.STUCK})


def _write_transcript(
    paths: ProjectPaths, session_id: str, started: datetime, session: DemoSession, task_id: int
) -> str:
    """A short stream-json transcript and its summary in `.ralph/logs/`; returns the project-relative path."""
    stem = f"{started:%Y%m%d-%H%M%S}_{session.name}"
    events: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init", "session_id": session_id, "model": MODEL, "cwd": "."},
        {
            "type": "assistant",
            "message": {
                "content": [{"type": "text", "text": session.narration or "Reading the task first."}]
            },
        },
    ]
    for number, (verb, params) in enumerate(session.signals, start=1):
        tool_id = f"toolu_{session.name}_{number}"
        events.append(
            {
                "type": "assistant",
                "message": {
                    "content": [
                        {
                            "type": "tool_use",
                            "id": tool_id,
                            "name": f"mcp__ralph__{verb.value}",
                            "input": params,
                        }
                    ]
                },
            }
        )
        events.append(
            {
                "type": "user",
                "message": {
                    "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": '{"ok": true}'}]
                },
            }
        )
    events.append(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "num_turns": session.turns,
            "total_cost_usd": session.cost_usd,
            "usage": {"input_tokens": session.input_tokens, "output_tokens": session.output_tokens},
        }
    )
    log_file = paths.logs_dir / f"{stem}.log"
    log_file.write_text("".join(json.dumps(event) + "\n" for event in events), encoding="utf-8")
    summary = {
        "session_id": session_id,
        "task_id": task_id,
        "recipe": Recipe.TASK_EXECUTION.value,
        "agent": AGENT,
        "model": MODEL,
        "started_at": started.isoformat(),
        "outcome": session.outcome.value,
        "cost_usd": session.cost_usd,
        "turns": session.turns,
        "input_tokens": session.input_tokens,
        "output_tokens": session.output_tokens,
        "changed_files": list(session.changed_files),
    }
    (paths.logs_dir / f"{stem}.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return Path(log_file).relative_to(paths.root).as_posix()


def _statuses(services: Services, ids: dict[str, int]) -> None:
    """Move every task to where its story has it (a task first passes through in_progress, as in a loop)."""
    for task in TASKS:
        if task.status in (TaskStatus.DRAFT, TaskStatus.PENDING):
            continue
        if task.status is not TaskStatus.SKIPPED:
            services.tasks.set_status(ids[task.key], TaskStatus.IN_PROGRESS.value)
        services.tasks.set_status(ids[task.key], task.status.value)


def _inbox(services: Services, ids: dict[str, int]) -> None:
    """Answer one question, create the suggested drafts, acknowledge the refactor, triage two flags."""
    answered = next(session for session in SESSIONS if "answer" in session.extra)
    services.tasks.set_status(ids[answered.task], TaskStatus.NEEDS_INPUT.value)
    for ask in services.inbox.asks():
        if ask.task_id == ids[answered.task]:
            services.inbox.answer(ask.id, answered.extra["answer"])
    for suggestion in services.inbox.suggestions():
        if suggestion.kind == "new_task":
            services.inbox.create_suggested_task(suggestion.id)
        else:
            services.inbox.acknowledge_suggestion(suggestion.id)
    stale = next(flag for flag in services.inbox.flags(category="stale"))
    services.inbox.triage(stale.id, "resolved")
    seen = next(flag for flag in services.inbox.flags(category="incomplete_prior"))
    services.inbox.triage(seen.id, "acknowledged")


def _state_files(services: Services) -> None:
    moments = iter(DEMO_CLOCK + timedelta(minutes=37 * step) for step in range(100))
    state = StateFileService(services.paths, services.db, clock=lambda: next(moments))
    for entry in PROGRESS:
        state.append_progress(entry)
    for entry in LEARNINGS_FILE:
        state.append_learning(entry)
