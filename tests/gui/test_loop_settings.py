"""The Loop pane's settings: every key of config.json the loop reads is shown, edited and saved there."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from ralph_desk.domain.checks import Check
from ralph_desk.domain.enums import Recipe
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.loop.settings_form import LoopSettingsForm
from ralph_desk.gui.panes.loop.wiring import LoopWiring, loop_settings, program_key
from ralph_desk.project import ProjectConfig, ProjectError, read_config, update_config
from ralph_desk.project.config import bounds
from ralph_desk.services.container import Services
from tests.gui.conftest import settle

WAIT_MS = 3000

CONFIGURED = ProjectConfig(
    agent="claude",
    agent_bin="/opt/claude/bin/claude",
    max_turns=7,
    rate_limit_wait_s=42.5,
    max_iterations=3,
    parallel=3,
    max_cost_usd=2.5,
    session_timeout_s=600,
    stuck_threshold=4,
    opus_review_every=2,
    allow_edits=False,
    base_branch="trunk",
    rate_limit_max_wait_s=900.0,
    allowed_paths=("src/**", "docs/*.md"),
    review_gate=False,
    merge_strategy="squash",
    ide_disconnect="stop",
)


def wiring(window: MainWindow) -> LoopWiring:
    found = window.findChild(LoopWiring)
    assert found is not None
    return found


def test_the_form_shows_every_setting_it_is_given(qtbot: QtBot) -> None:
    form = LoopSettingsForm()
    qtbot.addWidget(form)

    form.load(CONFIGURED)

    assert form.agent.currentData() == "claude"
    assert form.agent_bin.text() == "/opt/claude/bin/claude"
    assert (form.max_turns.value(), form.rate_wait.value()) == (7, 42.5)
    assert (form.max_iterations.value(), form.budget.value(), form.timeout.value()) == (3, 2.5, 600)
    assert (form.stuck.value(), form.review.value(), form.allow_edits.isChecked()) == (4, 2, False)
    assert form.base_branch.text() == "trunk"
    assert form.models[Recipe.BRAINDUMP].currentText() == "opus"
    assert (form.rate_cap.value(), form.allowed_paths.text()) == (900.0, "src/** docs/*.md")
    assert (form.review_gate.isChecked(), form.merge_strategy.currentData()) == (False, "squash")
    assert form.ide_disconnect.currentData() == "stop"
    assert form.parallel.value() == 3
    assert not form.dirty and form.values() == CONFIGURED


def test_sessions_at_once_is_saved_when_edited_and_never_below_one(qtbot: QtBot) -> None:
    form = LoopSettingsForm()
    qtbot.addWidget(form)
    form.load(CONFIGURED)

    form.parallel.setValue(0)
    assert form.parallel.value() == 1
    form.parallel.setValue(4)

    assert form.dirty and form.changes() == {"parallel": 4}


def test_what_an_ides_loop_does_when_the_ide_goes_is_saved_when_edited(qtbot: QtBot) -> None:
    form = LoopSettingsForm()
    qtbot.addWidget(form)
    form.load(CONFIGURED)

    form.ide_disconnect.setCurrentIndex(form.ide_disconnect.findData("finish"))

    assert form.dirty and form.changes() == {"ide_disconnect": "finish"}


def test_the_review_gate_and_merge_strategy_are_saved_when_edited(qtbot: QtBot) -> None:
    form = LoopSettingsForm()
    qtbot.addWidget(form)
    form.load(CONFIGURED)

    form.review_gate.setChecked(True)
    form.merge_strategy.setCurrentIndex(form.merge_strategy.findData("ff-only"))

    assert form.dirty
    assert form.changes() == {"review_gate": True, "merge_strategy": "ff-only"}


def test_the_sandbox_is_on_by_default_and_turning_it_off_is_saved_and_greys_the_network_box(
    qtbot: QtBot,
) -> None:
    form = LoopSettingsForm()
    qtbot.addWidget(form)
    form.load(ProjectConfig())
    assert form.sandbox.isChecked() and form.sandbox_network.isChecked() and form.sandbox_network.isEnabled()

    form.sandbox.setChecked(False)

    assert not form.sandbox_network.isEnabled()
    assert form.dirty and form.changes() == {"sandbox": False}
    form.load(ProjectConfig(sandbox=True, sandbox_network=False))
    assert form.sandbox_network.isEnabled() and not form.sandbox_network.isChecked()


def test_the_stagnation_rule_is_shown_with_the_threshold_being_edited(qtbot: QtBot) -> None:
    form = LoopSettingsForm()
    qtbot.addWidget(form)
    form.load(CONFIGURED)
    assert "4 stuck session(s) fail the task" in form.stagnation.text()
    assert "even when it called partial" in form.stagnation.text()
    form.stuck.setValue(6)
    assert "6 stuck session(s) fail the task" in form.stagnation.text()
    form.allowed_paths.setText("")
    assert form.changes() == {"stuck_threshold": 6, "allowed_paths": ()}


def test_saving_asks_for_only_the_edited_settings(qtbot: QtBot) -> None:
    form = LoopSettingsForm()
    qtbot.addWidget(form)
    form.load(CONFIGURED)

    form.max_turns.setValue(9)
    form.rate_wait.setValue(5.0)
    form.agent_bin.setText("  ")
    form.command.setText("my-agent --prompt '{prompt_file}'")
    with qtbot.waitSignal(form.sig_save_requested, timeout=WAIT_MS) as saved:
        form.save.click()

    assert saved.args == [
        {
            "agent_bin": None,
            "agent_command": ("my-agent", "--prompt", "{prompt_file}"),
            "max_turns": 9,
            "rate_limit_wait_s": 5.0,
        }
    ]


def test_a_wait_the_box_rounds_is_kept_exact_until_it_is_edited(qtbot: QtBot) -> None:
    form = LoopSettingsForm()
    qtbot.addWidget(form)

    form.load(CONFIGURED.changed(rate_limit_wait_s=0.25))
    form.max_turns.setValue(8)

    assert form.changes() == {"max_turns": 8}


def test_the_boxes_range_is_the_configs_own_bounds(qtbot: QtBot) -> None:
    form = LoopSettingsForm()
    qtbot.addWidget(form)

    boxes = {
        "max_iterations": form.max_iterations,
        "parallel": form.parallel,
        "session_timeout_s": form.timeout,
        "max_turns": form.max_turns,
        "stuck_threshold": form.stuck,
        "opus_review_every": form.review,
        "max_cost_usd": form.budget,
    }
    assert {name: (box.minimum(), box.maximum()) for name, box in boxes.items()} == {
        name: bounds(name) for name in boxes
    }


def test_the_loop_pane_shows_max_turns_the_rate_limit_wait_and_the_program_from_config_json(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    update_config(services.paths, agent_bin="/opt/claude/bin/claude", max_turns=7, rate_limit_wait_s=42.5)

    wiring(window).refresh()
    settle(qtbot, window)

    form = window.loop.settings
    assert form.agent_bin.text() == "/opt/claude/bin/claude"
    assert (form.max_turns.value(), form.rate_wait.value()) == (7, 42.5)
    assert not form.dirty


def test_edits_in_the_loop_pane_are_saved_to_config_json_and_run_the_loop(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    form = window.loop.settings
    form.max_turns.setValue(12)
    form.rate_wait.setValue(3.5)
    form.agent_bin.setText("/opt/claude/bin/claude")
    form.base_branch.setText("develop")

    form.save.click()
    settle(qtbot, window)

    config = read_config(services.paths)
    assert (config.max_turns, config.rate_limit_wait_s) == (12, 3.5)
    assert (config.agent_bin, config.base_branch) == ("/opt/claude/bin/claude", "develop")
    settings = loop_settings(services.paths, window.loop.settings.changes())
    assert settings is not None
    assert (settings.max_turns, settings.rate_limit_wait_s, settings.agent_bin) == (
        12,
        3.5,
        "/opt/claude/bin/claude",
    )


def test_unsaved_edits_are_what_the_loop_would_run_with(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    window.loop.settings.max_turns.setValue(3)

    settings = loop_settings(services.paths, window.loop.settings.changes())

    assert settings is not None and settings.max_turns == 3


def test_a_program_kept_on_this_computer_moves_into_config_json_once(
    qtbot: QtBot, window: MainWindow, services: Services, settings: QSettings
) -> None:
    key = program_key(str(services.paths.root))
    settings.setValue(key, "/opt/old/claude")

    wiring(window).refresh()
    settle(qtbot, window)

    assert read_config(services.paths).agent_bin == "/opt/old/claude"
    assert window.loop.settings.agent_bin.text() == "/opt/old/claude"
    assert settings.value(key) is None


def test_a_program_in_config_json_wins_over_one_kept_on_this_computer(
    qtbot: QtBot, window: MainWindow, services: Services, settings: QSettings
) -> None:
    update_config(services.paths, agent_bin="/opt/new/claude")
    settings.setValue(program_key(str(services.paths.root)), "/opt/old/claude")

    wiring(window).refresh()
    settle(qtbot, window)

    assert read_config(services.paths).agent_bin == "/opt/new/claude"
    assert window.loop.settings.agent_bin.text() == "/opt/new/claude"


def test_a_broken_config_json_is_named_and_left_as_it_was(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    services.paths.config_file.write_text('{"max_turns": 0}', encoding="utf-8")
    form = window.loop.settings
    form.max_turns.setValue(5)

    wiring(window).save_settings(form.changes())
    settle(qtbot, window)

    assert "Could not save the loop settings" in window.message_bar.text
    assert services.paths.config_file.read_text(encoding="utf-8") == '{"max_turns": 0}'
    with pytest.raises(ProjectError):
        loop_settings(services.paths, window.loop.settings.changes())


def test_browse_picks_the_agent_program_which_save_keeps_in_this_projects_config(
    qtbot: QtBot, window: MainWindow, services: Services, tmp_path: Path
) -> None:
    program = tmp_path / "bin" / "claude"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n", encoding="utf-8")
    form = window.loop.settings
    form.agent.setCurrentIndex(form.agent.findData("claude"))
    assert form.browse.isEnabled()

    form.browse.click()
    settle(qtbot, window)
    dialog = form.program_dialog
    assert dialog is not None and dialog.isVisible()
    dialog.selectFile(str(program))
    dialog.accept()
    settle(qtbot, window)
    assert form.agent_bin.text() == str(program)
    form.request_save()
    settle(qtbot, window)

    assert read_config(services.paths).agent_bin == str(program)
    form.agent.setCurrentIndex(form.agent.findData("rehearsal"))
    assert not form.browse.isEnabled()


def test_the_checks_setup_and_copied_files_are_shown_and_edited(qtbot: QtBot) -> None:
    form = LoopSettingsForm()
    qtbot.addWidget(form)
    form.load(
        CONFIGURED.changed(
            checks=[{"name": "tests", "run": "pytest -q", "timeout_s": 300}],
            setup="npm ci",
            worktree_files=[".env"],
        )
    )
    assert form.checks.rowCount() == 1 and form.checks.item(0, 1).text() == "pytest -q"
    assert (form.setup.text(), form.worktree_files.text()) == ("npm ci", ".env")
    assert not form.dirty

    form.add_check.click()
    row = form.checks.rowCount() - 1
    form.checks.item(row, 0).setText("lint")
    form.checks.item(row, 1).setText("ruff check .")
    form.checks.item(row, 3).setCheckState(Qt.CheckState.Unchecked)

    assert form.dirty and form.save.isEnabled()
    assert form.changes() == {
        "checks": (
            Check(name="tests", run="pytest -q", timeout_s=300),
            Check(name="lint", run="ruff check .", required=False),
        )
    }


def test_a_check_that_breaks_a_rule_is_named_and_never_saved(qtbot: QtBot) -> None:
    form = LoopSettingsForm()
    qtbot.addWidget(form)
    form.load(CONFIGURED)

    form.add_check.click()
    form.checks.item(0, 0).setText("Tests Here")  # capitals and a space: not a check name
    form.checks.item(0, 1).setText("pytest")

    assert form.dirty and not form.save.isEnabled()
    assert "checks:" in form.notice.text() and "not allowed" in form.notice.text()
    assert "checks" not in form.changes()

    form.checks.item(0, 0).setText("tests")
    assert form.save.isEnabled() and "checks" in form.changes()

    form.checks.setCurrentCell(0, 0)
    form.remove_check.click()
    assert form.checks.rowCount() == 0 and not form.dirty


def test_checks_edited_in_the_loop_pane_are_saved_to_config_json_and_trusted(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    form = window.loop.settings
    before = read_config(services.paths).checks
    form.add_check.click()
    row = form.checks.rowCount() - 1
    form.checks.item(row, 0).setText("typing")
    form.checks.item(row, 1).setText("mypy")

    form.save.click()
    settle(qtbot, window)

    config = read_config(services.paths)
    assert config.checks == (*before, Check(name="typing", run="mypy"))
    assert services.checks.configured() == config.checks  # written by the person: allowed to run
