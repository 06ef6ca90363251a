"""The prompt builder: snapshots of typical sessions, determinism, and seed 002's prompt-builder duties.

Snapshots live in tests/loop/snapshots/; `UPDATE_SNAPSHOTS=1 pytest tests/loop/test_prompt.py` rewrites them.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from string import Formatter

import pytest
from sqlalchemy import select

from ralph_desk.domain.enums import Recipe, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.postprocess import decide
from ralph_desk.domain.records import Task
from ralph_desk.domain.tools import REGISTRY, VERB_TOOLS
from ralph_desk.loop.apply import apply_decision
from ralph_desk.loop.gather import gather_inputs, merge_learnings
from ralph_desk.loop.guidance import GUIDANCE
from ralph_desk.loop.model import LoopSettings, SessionPlan
from ralph_desk.loop.planner import describe_queue, peek_next_task, plan_next_task, plan_recipe_session
from ralph_desk.loop.prompt import (
    MAX_LEARNINGS_PER_SCOPE,
    PROGRESS_TAIL_LINES,
    LearningNote,
    ProblemNote,
    PromptInputs,
    render_prompt,
)
from ralph_desk.project import init_project
from ralph_desk.services.container import Services
from ralph_desk.store.schema import FeatureLearningRow, TaskSignalRow

SNAPSHOTS = Path(__file__).parent / "snapshots"
NOON = datetime(2026, 3, 1, 12, 0)
SETTINGS = LoopSettings()

PROGRESS = "".join(
    f"## 2026-03-01 {hour:02d}:00 UTC\nIteration {hour}: worked on the charts.\n" for hour in range(1, 4)
)
FRONTEND_PERSONA = (
    "You are a careful frontend engineer.\nYou write strict TypeScript and small, tested functions."
)
LEARNINGS_FILE = "## 2026-02-28 09:00 UTC\nThe feed is rate-limited to one request a minute.\n"


# --- the fixed project -----------------------------------------------------------------------------------


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    """A project titled "Tide Tables" with two features, two disciplines and four tasks (two done)."""
    paths = init_project(tmp_path / "repo", title="Tide Tables")
    opened = Services.open(paths)
    try:
        _build_project(opened)
        yield opened
    finally:
        opened.close()


def _build_project(services: Services) -> None:
    services.project.set(
        "Tide Tables", "A small web app that shows tide heights for harbours, from the public tide feeds."
    )
    features, disciplines, tasks, signals = (
        services.features,
        services.disciplines,
        services.tasks,
        services.signals,
    )
    features.create("feeds", "Feeds", description="Fetching and caching tide data from the public feeds.")
    features.create(
        "charts",
        "Charts",
        description="Interactive tide charts for one harbour and one week.",
        architecture="Charts are SVG, drawn by `src/charts/draw.ts` from a `TideSeries`; no chart library.",
        boundaries="Only drawing: fetching and caching tide data belongs to the `feeds` feature.",
        context_files=["src/charts/draw.ts", "src/charts/legacy.ts"],
        knowledge_paths=["docs/charts.md"],
        dependencies=["feeds"],
    )
    disciplines.create(
        "frontend",
        "Frontend",
        icon="code",
        color="#3b82f6",
        system_prompt=FRONTEND_PERSONA,
        skills=["TypeScript", "SVG", "Vitest"],
        conventions="Every exported function has a unit test.\nNo new dependency without a reason in the PR.",
    )
    disciplines.create(
        "docs",
        "Documentation",
        icon="book",
        color="#f59e0b",
        system_prompt="You write short, accurate user documentation.",
        disabled_tools=["learned", "suggest"],
    )
    client = tasks.create("feeds", "frontend", "Set up the tide feed client")
    signals.record(
        client.id,
        "s-client",
        "learned",
        text="Feed times are UTC; convert at the edge.",
        kind="convention",
        scope="project",
    )
    signals.record(
        client.id,
        "s-client",
        "learned",
        text="The feed client retries three times.",
        kind="discovery",
        scope="feature",
    )
    signals.record(client.id, "s-client", "done", summary="Client fetches and caches the weekly feed.")
    tasks.move(client.id, TaskStatus.DONE.value, Mover.IMPORT)
    colours = tasks.create("charts", "frontend", "Pick the chart colours")
    signals.record(
        colours.id,
        "s-colours",
        "learned",
        text="Colours come from `src/theme.ts`; never hard-code them.",
        kind="convention",
        rationale="Dark mode swaps the theme.",
    )
    signals.record(
        colours.id,
        "s-colours",
        "flag",
        what="Feed heights are off by one hour in summer.",
        severity="blocking",
        category="bug",
    )
    signals.record(
        colours.id,
        "s-colours",
        "flag",
        what="The legend overlaps the axis on phones.",
        severity="info",
        category="performance",
    )
    signals.record(colours.id, "s-colours", "done", summary="Colours picked from the theme.")
    tasks.move(colours.id, TaskStatus.DONE.value, Mover.IMPORT)
    chart = tasks.create(
        "charts",
        "frontend",
        "Draw the weekly tide chart",
        description="Draw a line chart of the tide heights of one harbour over seven days.",
        priority="high",
        acceptance_criteria=["High and low tides are marked.", "The chart fits a 320 px wide screen."],
        tags=["svg", "charts"],
        context_files=["src/charts/draw.ts"],
        output_artifacts=["src/charts/week.ts", "src/charts/week.test.ts"],
        hints="Reuse `scaleLinear` from `src/charts/scale.ts`.",
        estimated_turns=12,
    )
    tasks.update(chart.id, pseudocode="1. Load the series.\n2. Scale it.\n3. Draw the path and the markers.")
    services.comments.add(chart.id, "human", "Heights in metres, please.", priority="high")
    tasks.create("charts", "docs", "Write the chart guide", priority="low")
    features.append_learning("charts", "Axis labels use the harbour's local time.", source="human")
    features.append_learning("charts", "Chart tests compare SVG snapshots.", source="agent")
    features.append_learning("charts", "Chart tests compare the SVG snapshots.", source="agent")
    services.paths.progress_file.write_text(PROGRESS, encoding="utf-8")
    services.paths.learnings_file.write_text(LEARNINGS_FILE, encoding="utf-8")
    draw = services.paths.root / "src" / "charts" / "draw.ts"
    draw.parent.mkdir(parents=True)
    draw.write_text("export function draw() {}\n", encoding="utf-8")


def _pin_times(services: Services) -> None:
    """Give every signal and learning a fixed time in id order (the prompt orders by time, not clock luck)."""
    with services.db.write() as unit:
        for signal in unit.session.scalars(select(TaskSignalRow)):
            signal.created = NOON + timedelta(minutes=signal.id)
        for learning in unit.session.scalars(select(FeatureLearningRow)):
            learning.created_at = NOON + timedelta(minutes=learning.id)


def _plan(services: Services) -> SessionPlan:
    _pin_times(services)
    plan = plan_next_task(services, SETTINGS)
    assert plan is not None
    return plan


def _prompt(services: Services, plan: SessionPlan) -> str:
    if plan.feature is not None:
        # The plan's feature was read before the times were pinned; read it again so they match.
        plan = replace(plan, feature=services.features.get(plan.feature.name))
    return render_prompt(gather_inputs(services, plan, services.paths.root))


def _session(
    services: Services,
    plan: SessionPlan,
    *,
    closing_verb: str | None,
    outcome: str,
    changed_files: list[str],
) -> None:
    """Record `plan`'s session as started and finished, as the runner does."""
    assert plan.task is not None
    services.sessions.start_session(plan.session_id, plan.task.id, plan.recipe, "claude")
    services.sessions.finish_session(
        plan.session_id, closing_verb=closing_verb, outcome=outcome, changed_files=changed_files
    )


def _requeue(services: Services, task: Task) -> None:
    services.tasks.move(task.id, TaskStatus.PENDING.value, Mover.IMPORT)


def assert_snapshot(name: str, text: str) -> None:
    """Compare with tests/loop/snapshots/<name>.md; UPDATE_SNAPSHOTS=1 writes it instead."""
    path = SNAPSHOTS / f"{name}.md"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"no snapshot {path.name}; run with UPDATE_SNAPSHOTS=1 to write it")
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        diff = difflib.unified_diff(
            expected.splitlines(keepends=True), text.splitlines(keepends=True), str(path), "rendered"
        )
        pytest.fail("prompt differs from its snapshot (UPDATE_SNAPSHOTS=1 rewrites it):\n" + "".join(diff))


# --- snapshots ---------------------------------------------------------------------------------------------


def test_a_first_attempt_carries_everything_the_loop_knows_about_the_task(services: Services) -> None:
    plan = _plan(services)
    assert plan.task is not None and plan.task.title == "Draw the weekly tide chart"

    assert_snapshot("first_attempt", _prompt(services, plan))


def test_a_reattempt_after_partial_continues_from_what_remains(services: Services) -> None:
    first = _plan(services)
    assert first.task is not None
    services.signals.record(
        first.task.id, first.session_id, "stuck", reason="No tide fixture data to test with."
    )
    services.tasks.increment_stuck(first.task.id)
    _session(services, first, closing_verb="stuck", outcome="stuck", changed_files=[])
    _requeue(services, first.task)
    second = _plan(services)
    assert second.task is not None
    services.signals.record(
        second.task.id,
        second.session_id,
        "learned",
        text="Vitest needs `TZ=UTC` here.",
        kind="discovery",
        scope="task",
    )
    services.signals.record(
        second.task.id,
        second.session_id,
        "partial",
        summary="Drew the tide line.",
        remaining="Mark high and low tides; check the 320 px layout.",
    )
    _session(
        services,
        second,
        closing_verb="partial",
        outcome="requeued",
        changed_files=["src/charts/week.ts", "tests/fixtures/tides.json"],
    )
    _requeue(services, second.task)

    third = _plan(services)
    prompt = _prompt(services, third)

    assert "Mark high and low tides; check the 320 px layout." in prompt
    assert_snapshot("reattempt_after_partial", prompt)


def test_after_a_human_answer_the_next_prompt_carries_it(services: Services) -> None:
    first = _plan(services)
    assert first.task is not None
    ask = services.signals.record(
        first.task.id,
        first.session_id,
        "ask",
        question="Metres or feet?",
        options=["metres", "feet"],
        preferred="metres",
        blocking=True,
    )
    services.signals.record(
        first.task.id,
        first.session_id,
        "partial",
        summary="Drew the axes.",
        remaining="Label the heights once the unit is known.",
    )
    _session(
        services, first, closing_verb="partial", outcome="needs_input", changed_files=["src/charts/week.ts"]
    )
    services.tasks.move(first.task.id, TaskStatus.NEEDS_INPUT.value, Mover.IMPORT)
    assert first.task.id not in [task.id for task in describe_queue(services)]
    services.inbox.answer(ask.id, "Metres, with one decimal.")

    prompt = _prompt(services, _plan(services))

    assert "ANSWER to your question 'Metres or feet?': Metres, with one decimal." in prompt
    assert_snapshot("after_human_answer", prompt)


def test_a_task_with_done_dependencies_reads_their_summaries_and_changed_files(services: Services) -> None:
    chart = _plan(services)
    assert chart.task is not None
    picker = services.tasks.create(
        "charts", "frontend", "Add a harbour picker", priority="critical", depends_on=[chart.task.id]
    )
    services.signals.record(
        chart.task.id,
        chart.session_id,
        "done",
        summary="Weekly chart drawn in `src/charts/week.ts`, with tests.",
    )
    _session(
        services,
        chart,
        closing_verb="done",
        outcome="done",
        changed_files=["src/charts/week.ts", "src/charts/week.test.ts"],
    )
    services.tasks.move(chart.task.id, TaskStatus.DONE.value, Mover.IMPORT)

    plan = _plan(services)
    assert plan.task is not None and plan.task.id == picker.id
    prompt = _prompt(services, plan)

    assert "Weekly chart drawn in `src/charts/week.ts`, with tests." in prompt
    assert_snapshot("done_dependencies", prompt)


def test_a_discipline_without_learned_and_suggest_never_reads_their_names(services: Services) -> None:
    chart = services.tasks.list(search="weekly tide chart")[0]
    services.tasks.move(chart.id, TaskStatus.BLOCKED.value, Mover.IMPORT)
    plan = _plan(services)
    assert plan.discipline is not None and plan.discipline.name == "docs"
    assert plan.enabled_tools == VERB_TOOLS - {"learned", "suggest"}

    prompt = _prompt(services, plan)

    for name in ("learned", "suggest"):
        assert f"mcp__ralph__{name}" not in prompt
        assert re.search(rf"\b{name}\b", prompt) is None, name
    for name in ("done", "partial", "stuck", "ask", "flag", "blocked"):
        assert f"mcp__ralph__{name}" in prompt
    assert_snapshot("discipline_without_learned_and_suggest", prompt)


def test_an_opus_review_of_a_feature_lists_its_tasks_and_only_its_tools(services: Services) -> None:
    _pin_times(services)
    plan = plan_recipe_session(services, Recipe.OPUS_REVIEW, feature="charts")

    prompt = _prompt(services, plan)

    assert "mcp__ralph__update_task(id, description?, priority?)" in prompt
    assert "mcp__ralph__create_discipline" not in prompt
    assert "mcp__ralph__done" not in prompt
    assert_snapshot("opus_review", prompt)


def test_a_braindump_carries_the_input_verbatim(services: Services) -> None:
    text = "I want tide alerts:\n- push a notice an hour before high tide\n- per harbour, opt-in\n"
    plan = plan_recipe_session(services, "braindump", extra_input=text)

    prompt = _prompt(services, plan)

    assert text.strip("\n") in prompt
    assert_snapshot("braindump", prompt)


# --- determinism and the duties --------------------------------------------------------------------------


def test_rendering_the_same_inputs_twice_gives_identical_text(services: Services) -> None:
    plan = _plan(services)
    inputs = gather_inputs(services, plan, services.paths.root)

    assert render_prompt(inputs) == render_prompt(inputs)
    assert render_prompt(gather_inputs(services, plan, services.paths.root)) == render_prompt(inputs)


def test_a_dry_run_preview_renders_the_prompt_the_claimed_session_gets(services: Services) -> None:
    _pin_times(services)
    peeked = peek_next_task(services)
    assert peeked is not None
    preview = _prompt(services, peeked)

    claimed = plan_next_task(services, SETTINGS)

    assert claimed is not None
    assert _prompt(services, claimed) == preview


def test_the_order_of_gathered_lists_does_not_change_the_prompt(services: Services) -> None:
    inputs = gather_inputs(services, _plan(services), services.paths.root)
    shuffled = replace(
        inputs,
        feature_learnings=tuple(reversed(inputs.feature_learnings)),
        project_learnings=tuple(reversed(inputs.project_learnings)),
        problems=tuple(reversed(inputs.problems)),
    )

    assert len(inputs.feature_learnings) > 1 and len(inputs.problems) > 1
    assert render_prompt(shuffled) == render_prompt(inputs)


def test_sections_come_in_the_order_of_the_prompt_builders_duties(services: Services) -> None:
    prompt = _prompt(services, _plan(services))

    headings = _headings(prompt)

    assert headings == [
        "## Your role: Frontend",
        "## Project: Tide Tables",
        "## Feature: Charts (`charts`)",
        "## Learnings",
        "## Your task: #3 Draw the weekly tide chart",
        "## Known problems",
        "## Recent progress",
        "## How to report back",
    ]


def test_learnings_of_another_feature_stay_out_and_project_ones_come_in(services: Services) -> None:
    prompt = _prompt(services, _plan(services))

    assert "Feed times are UTC; convert at the edge." in prompt
    assert "The feed is rate-limited to one request a minute." in prompt
    assert "Colours come from `src/theme.ts`" in prompt
    assert "The feed client retries three times." not in prompt


def test_near_duplicate_learnings_are_merged_and_counted(services: Services) -> None:
    colours = services.tasks.list(search="chart colours")[0]
    services.signals.record(
        colours.id, "s-again", "learned", text="Chart tests compare SVG snapshots!", kind="convention"
    )
    feature = services.features.get("charts")
    notes = merge_learnings(feature.learnings, services.signals.learnings(feature="charts", scope="feature"))

    texts = {note.text: note.hits for note in notes}

    assert texts == {
        "Axis labels use the harbour's local time.": 1,
        "Chart tests compare SVG snapshots.": 3,
        "Colours come from `src/theme.ts`; never hard-code them.": 1,
    }


def test_the_most_confirmed_learnings_come_first_then_the_newest(services: Services) -> None:
    notes = tuple(
        LearningNote(
            text=f"Learning {index}.", source="agent", created=NOON + timedelta(minutes=index), ref=index
        )
        for index in range(MAX_LEARNINGS_PER_SCOPE + 5)
    )
    confirmed = replace(notes[0], hits=4)
    inputs = _bare_inputs(services, project_learnings=(*notes[1:], confirmed))

    prompt = render_prompt(inputs)
    shown = re.findall(r"^- Learning (\d+)\.", prompt, flags=re.MULTILINE)

    assert shown[0] == "0"
    assert shown[1:4] == [
        str(MAX_LEARNINGS_PER_SCOPE + 4),
        str(MAX_LEARNINGS_PER_SCOPE + 3),
        str(MAX_LEARNINGS_PER_SCOPE + 2),
    ]
    assert len(shown) == MAX_LEARNINGS_PER_SCOPE
    assert "(5 more not shown.)" in prompt
    assert "confirmed 4 times" in prompt


def test_blocking_problems_come_first(services: Services) -> None:
    problems = (
        ProblemNote(1, 3, "An info note.", "info", "bug", NOON + timedelta(hours=2)),
        ProblemNote(2, 3, "A blocking bug.", "blocking", "bug", NOON),
        ProblemNote(3, 3, "A warning.", "warning", "stale", NOON + timedelta(hours=1)),
    )
    prompt = render_prompt(_bare_inputs(services, problems=problems))

    assert prompt.index("A blocking bug.") < prompt.index("A warning.") < prompt.index("An info note.")


def test_the_progress_tail_is_capped(services: Services) -> None:
    tail = "\n".join(f"line {number}" for number in range(1, PROGRESS_TAIL_LINES + 11))
    prompt = render_prompt(_bare_inputs(services, progress_tail=tail))

    assert "line 11\n" in prompt and f"line {PROGRESS_TAIL_LINES + 10}\n" in prompt
    assert "line 10\n" not in prompt


def test_verbatim_text_with_backticks_stays_inside_its_fence(services: Services) -> None:
    prompt = render_prompt(_bare_inputs(services, progress_tail="Ran:\n```\nnpm test\n```"))

    assert "````text\nRan:\n```\nnpm test\n```\n````" in prompt


def test_with_only_done_enabled_the_closing_rule_names_only_done(services: Services) -> None:
    prompt = render_prompt(_bare_inputs(services, enabled_tools=frozenset({"done", "ask"})))

    assert "**Call `mcp__ralph__done` as your last action.**" in prompt
    for name in ("partial", "stuck", "learned", "suggest", "blocked", "flag"):
        assert f"mcp__ralph__{name}" not in prompt
    assert "then also close with" not in prompt


def test_the_ask_instruction_names_only_the_enabled_closing_tools(services: Services) -> None:
    prompt = render_prompt(_bare_inputs(services, enabled_tools=frozenset({"ask", "stuck", "blocked"})))

    assert "then also close with `mcp__ralph__stuck`:" in prompt
    assert "mcp__ralph__partial" not in prompt
    assert "mcp__ralph__done" not in prompt
    assert "**Call `mcp__ralph__stuck` as your last action.**" in prompt


def test_a_session_without_verbs_gets_no_reporting_section(services: Services) -> None:
    prompt = render_prompt(_bare_inputs(services, enabled_tools=frozenset()))

    assert "## How to report back" not in prompt
    assert "mcp__ralph__" not in prompt
    assert "No reporting tools are available in this session" in prompt


def test_a_context_file_missing_from_the_repository_is_marked(services: Services) -> None:
    prompt = _prompt(services, _plan(services))

    assert "- `src/charts/draw.ts`\n" in prompt
    assert "- `src/charts/legacy.ts` (not found in the repository)\n" in prompt


def _headings(prompt: str) -> list[str]:
    """The `## ` headings of a prompt, outside its fenced blocks."""
    headings, fence = [], ""
    for line in prompt.splitlines():
        if fence and line == fence:
            fence = ""
        elif not fence and line.startswith("```"):
            fence = line.removesuffix("text")
        elif not fence and line.startswith("## "):
            headings.append(line)
    return headings


def _bare_inputs(services: Services, **changes: object) -> PromptInputs:
    """A task-execution input with nothing but the task, changed by `changes`."""
    task = services.tasks.list(search="weekly tide chart")[0]
    base = PromptInputs(
        recipe=Recipe.TASK_EXECUTION,
        enabled_tools=VERB_TOOLS,
        project_title="Tide Tables",
        task=services.tasks.get(task.id),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize("recipe", sorted(GUIDANCE))
def test_every_name_in_a_recipes_guidance_is_a_tool_or_its_subject(recipe: Recipe) -> None:
    named = {field for step in GUIDANCE[recipe] for _, field, _, _ in Formatter().parse(step) if field}
    assert named - {"feature", "discipline"} <= set(REGISTRY)


# --- seed 002's answers and learnings, as the loop settles them ------------------------------------------


def test_a_human_answer_opens_the_next_prompt(services: Services) -> None:
    first = _plan(services)
    assert first.task is not None
    ask = services.signals.record(
        first.task.id, first.session_id, "ask", question="Metres or feet?", blocking=True
    )
    services.signals.record(first.task.id, first.session_id, "partial", summary="axes", remaining="labels")
    services.tasks.move(first.task.id, TaskStatus.NEEDS_INPUT.value, Mover.IMPORT)
    services.inbox.answer(ask.id, "Metres.")
    prompt = _prompt(services, _plan(services))
    assert prompt.startswith("ANSWER to your question 'Metres or feet?': Metres.\n\n# Task #")
    assert prompt.count("ANSWER to your question") == 1


def test_a_learning_appears_once_in_a_prompt_whatever_scopes_it_matches(services: Services) -> None:
    plan = _plan(services)
    assert plan.task is not None
    texts = {
        "project": "Run the chart tests with `npm run test:charts`.",
        "feature": "Chart paths are built with d3-path.",
        "task": "The week chart needs seven ticks, one per day.",
    }
    for scope, text in texts.items():
        services.signals.record(
            plan.task.id, plan.session_id, "learned", text=text, kind="discovery", scope=scope
        )
    services.signals.record(plan.task.id, plan.session_id, "partial", summary="axes", remaining="ticks")
    signals = services.signals.for_session(plan.session_id)
    apply_decision(services, plan.task.id, plan.session_id, decide(signals, stuck_count=0))
    kept = {item.text for item in services.features.get("charts").learnings}
    assert {texts["project"], texts["feature"]} <= kept  # the loop keeps them on the feature too
    prompt = _prompt(services, _plan(services))
    for scope, text in texts.items():
        assert prompt.count(text) == 1, f"the {scope} learning is shown {prompt.count(text)} times"
    sections = prompt.split("### ")
    assert any(s.startswith("Project") and texts["project"] in s for s in sections)
    assert any(s.startswith("This task") and texts["task"] in s for s in sections)
    other = services.tasks.create("charts", "frontend", "Draw the monthly chart", priority="critical")
    other_prompt = _prompt(services, _plan(services))
    assert other_prompt.startswith(f"# Task #{other.id}: ")
    assert texts["task"] not in other_prompt and texts["feature"] in other_prompt
