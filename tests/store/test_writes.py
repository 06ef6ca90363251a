"""Typed store writes: a misspelt column is a type error, and a run-time refusal that changes nothing."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from mypy import api as mypy_api

from ralph_desk.store import comments as comments_store
from ralph_desk.store import disciplines as disciplines_store
from ralph_desk.store import features as features_store
from ralph_desk.store import sessions as sessions_store
from ralph_desk.store import signals as signals_store
from ralph_desk.store import tasks as tasks_store
from ralph_desk.store.database import Database
from ralph_desk.store.writes import TaskWrite, checked

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def task_id(db: Database) -> int:
    """A pending task in a feature and discipline of its own."""
    with db.write() as unit:
        feature = features_store.create(unit, {"name": "charts", "display_name": "Charts"})
        discipline = disciplines_store.create(unit, {"name": "frontend", "display_name": "Frontend"})
        task = tasks_store.create(
            unit, {"feature_id": feature.id, "discipline_id": discipline.id, "title": "Draw the chart"}
        )
    return task.id


def test_a_misspelt_column_is_a_type_error(tmp_path: Path) -> None:
    snippet = tmp_path / "misspelt.py"
    snippet.write_text(
        textwrap.dedent(
            """
            from ralph_desk.store.writes import SignalWrite, TaskWrite

            task: TaskWrite = {"titel": "Draw the chart"}
            review: SignalWrite = {"resolution": "open", "resolved": None}
            """
        )
    )
    out, _, status = mypy_api.run(
        ["--strict", "--no-error-summary", "--cache-dir", str(ROOT / ".mypy_cache"), str(snippet)]
    )
    assert status == 1
    assert 'Extra key "titel" for TypedDict "TaskWrite"' in out
    assert 'Extra key "resolved" for TypedDict "SignalWrite"' in out


def test_a_well_spelt_write_type_checks(tmp_path: Path) -> None:
    snippet = tmp_path / "spelt.py"
    snippet.write_text(
        'from ralph_desk.store.writes import TaskWrite\n\ntask: TaskWrite = {"title": "Draw the chart"}\n'
    )
    out, _, status = mypy_api.run(
        ["--strict", "--no-error-summary", "--cache-dir", str(ROOT / ".mypy_cache"), str(snippet)]
    )
    assert status == 0, out


def test_checked_refuses_a_column_the_table_does_not_have() -> None:
    with pytest.raises(TypeError, match=r"^TaskWrite has no column 'titel'$"):
        checked({"title": "Chart", "titel": "Chart"}, TaskWrite)
    assert checked({"title": "Chart"}, TaskWrite) == {"title": "Chart"}


@pytest.mark.parametrize(
    "write",
    [
        pytest.param(
            lambda unit, task_id: tasks_store.update(unit, task_id, {"titel": "x"}), id="task update"
        ),
        pytest.param(
            lambda unit, task_id: comments_store.add(unit, task_id, {"author": "me", "bdy": "x"}),
            id="comment",
        ),
        pytest.param(
            lambda unit, task_id: features_store.update(unit, "charts", {"acronim": "CH"}), id="feature"
        ),
        pytest.param(
            lambda unit, task_id: disciplines_store.update(unit, "frontend", {"colour": "#000000"}),
            id="discipline",
        ),
        pytest.param(
            lambda unit, task_id: signals_store.add(
                unit, {"task_id": task_id, "verb": "done", "sumary": "x"}, None, None
            ),
            id="signal insert",
        ),
        pytest.param(
            lambda unit, task_id: sessions_store.insert(
                unit, {"id": "s-1", "recipe": "task_execution", "agent": "claude", "cost": 1.0}
            ),
            id="session insert",
        ),
    ],
)
def test_a_write_naming_an_unknown_column_is_refused_and_changes_nothing(
    db: Database, task_id: int, write: Any
) -> None:
    with db.read() as unit:
        before = tasks_store.get(unit, task_id)

    with pytest.raises(TypeError, match="has no column"), db.write() as unit:
        write(unit, task_id)

    with db.read() as unit:
        assert tasks_store.get(unit, task_id) == before
        assert signals_store.for_task(unit, task_id) == []
        assert sessions_store.get(unit, "s-1") is None
        feature, discipline = features_store.get(unit, "charts"), disciplines_store.get(unit, "frontend")
        assert feature is not None and feature.acronym is None
        assert discipline is not None and discipline.color == ""
