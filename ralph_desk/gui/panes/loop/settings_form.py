"""The loop's settings as a form: every key of config.json the loop reads, shown and edited; saved there."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.checks import DEFAULT_TIMEOUT_S
from ralph_desk.domain.enums import MergeStrategy, Recipe
from ralph_desk.gui.models.tool_matrix import RECIPE_PURPOSES, recipe_name
from ralph_desk.gui.widgets.common import button, label
from ralph_desk.gui.widgets.form import EditForm
from ralph_desk.gui.widgets.layout import scroller
from ralph_desk.project import ProjectConfig
from ralph_desk.project.config import ConfigError, bounds

AGENTS = {
    "claude": "Claude Code",
    "codex": "Codex",
    "command": "A command of your own",
    "rehearsal": "Rehearsal (built in: no model, no cost)",
}
MODEL_CHOICES = ("", "opus", "sonnet", "haiku")
MERGE_TITLES = {
    MergeStrategy.MERGE.value: "Merge commit",
    MergeStrategy.SQUASH.value: "Squash into one commit",
    MergeStrategy.FF_ONLY.value: "Fast-forward only",
}
IDE_DISCONNECT_TITLES = {
    "finish": "Finish the session, then stop",
    "stop": "Stop the agent at once",
}
WHEN_ALL_DONE_TITLES = {
    "stop": "Stop the loop",
    "wait": "Wait for new tasks",
}
TIMEOUT_STEP_S = 60
CHECK_COLUMNS = ("Name", "Command", "Timeout (s)", "Required")
NAME, COMMAND, TIMEOUT, REQUIRED = range(len(CHECK_COLUMNS))
RATE_WAIT_STEP_S = 0.1  # the boxes show one decimal: their least value above zero


def stagnation_rule(threshold: int) -> str:
    """DESIGN §7's stagnation rule in words, with the project's threshold."""
    return (
        "A session that does not call done and changes nothing — no project file (git, or the file tree "
        "outside git), no database content beyond its own signals, no progress or learnings entry — counts "
        f"as stuck, even when it called partial; {threshold} stuck session(s) fail the task. A partial that "
        "changed files is progress: the task is re-queued."
    )


def _words(text: str) -> tuple[str, ...] | None:
    """A command line as words (shell quoting understood; unbalanced quotes split at spaces)."""
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    return tuple(word for word in words if word.strip()) or None


def _kept(box: QDoubleSpinBox, exact: float) -> float:
    """The box's number; the exact one from the file while the box shows it rounded and unchanged."""
    shown = box.value()
    return exact if box.textFromValue(exact) == box.textFromValue(shown) else shown


def _show(box: QSpinBox | QDoubleSpinBox, value: float) -> None:
    """Show a number from the file, the box's range widened to hold it: saving never clips it."""
    if isinstance(box, QSpinBox):
        box.setRange(min(box.minimum(), int(value)), max(box.maximum(), int(value)))
        box.setValue(int(value))
        return
    box.setRange(min(box.minimum(), value), max(box.maximum(), value))
    box.setValue(value)


def _spin(setting: str, special: str | None = None, suffix: str = "") -> QSpinBox:
    """A box for a whole-number setting, its range the config's own bounds."""
    box = QSpinBox()
    minimum, maximum = bounds(setting)
    box.setRange(int(minimum), int(maximum))
    if special:
        box.setSpecialValueText(special)
    box.setSuffix(suffix)
    box.setMinimumWidth(110)
    return box


class LoopSettingsForm(EditForm):
    """Agent, program, models and limits; Save writes them to `.ralph/config.json`."""

    sig_save_requested = Signal(object)
    """Save these changes (a dict of config.json keys to their new values)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.loaded = ProjectConfig()
        self.agent = QComboBox()
        for key, title in AGENTS.items():
            self.agent.addItem(title, key)
        self.agent_bin = QLineEdit()
        self.agent_bin.setClearButtonEnabled(True)
        self.agent_bin.setToolTip(
            "Where the agent's program is (agent_bin, kept in this project's config.json); "
            "empty: looked up on PATH"
        )
        self.browse = button("Browse…", "open", "Choose the agent's program file")
        self.browse.clicked.connect(self.choose_program)
        self.program_dialog: QFileDialog | None = None
        self.command = QLineEdit()
        self.command.setPlaceholderText("my-agent --prompt {prompt_file} --mcp {mcp_config}")
        self.command.setToolTip(
            "The command for your own agent; placeholders: "
            "{prompt_file}, {mcp_config}, {session_id}, {workdir}"
        )
        self.base_branch = QLineEdit()
        self.base_branch.setClearButtonEnabled(True)
        self.base_branch.setPlaceholderText("the branch checked out")
        self.base_branch.setToolTip("The branch that task branches are made from (base_branch)")
        self.review_gate = QCheckBox("Done work waits for review")
        self.review_gate.setToolTip(
            "On: a task that calls done waits in review on its own branch until a person merges it "
            "(review_gate). Off: done work merges at once when it applies cleanly"
        )
        self.merge_strategy = QComboBox()
        for strategy, title in MERGE_TITLES.items():
            self.merge_strategy.addItem(title, strategy)
        self.merge_strategy.setToolTip("How approved work joins the base branch (merge_strategy)")
        self.ide_disconnect = QComboBox()
        for choice, title in IDE_DISCONNECT_TITLES.items():
            self.ide_disconnect.addItem(title, choice)
        self.ide_disconnect.setToolTip(
            "What a loop started from an IDE (ralph_run) does when the IDE goes away (ide_disconnect); "
            "either way no agent outlives the server and its task goes back to the queue"
        )
        self.when_all_done = QComboBox()
        for choice, title in WHEN_ALL_DONE_TITLES.items():
            self.when_all_done.addItem(title, choice)
        self.when_all_done.setToolTip(
            "What the loop does once every task is done or skipped (when_all_done): stop, so that new tasks "
            "wait for the next Start, or wait and start on new tasks as they come. While work waits for "
            "you (answers, approvals, reviews) it waits either way"
        )
        self.models: dict[Recipe, QComboBox] = {}
        for recipe in Recipe:
            combo = QComboBox()
            combo.setEditable(True)
            combo.addItems(list(MODEL_CHOICES))
            line = combo.lineEdit()
            if line is not None:
                line.setPlaceholderText("default")
            combo.setToolTip(f"The model for {recipe_name(recipe)} sessions ({RECIPE_PURPOSES[recipe]})")
            self.models[recipe] = combo
        self.max_iterations = _spin("max_iterations", "no limit")
        self.max_iterations.setToolTip("Sessions per run before the loop stops (0: no limit)")
        self.parallel = _spin("parallel")
        self.parallel.setToolTip(
            "Agent sessions running at once, each in its task's worktree; tasks sharing a context file "
            "never run together"
        )
        self.budget = QDoubleSpinBox()
        self.budget.setRange(*bounds("max_cost_usd"))
        self.budget.setDecimals(2)
        self.budget.setPrefix("$")
        self.budget.setSpecialValueText("no budget")
        self.budget.setToolTip("The loop stops once a run has cost this much (0: no budget)")
        self.timeout = _spin("session_timeout_s", suffix=" s")
        self.timeout.setSingleStep(TIMEOUT_STEP_S)
        self.timeout.setToolTip("A session running longer is ended and counts as stuck")
        self.max_turns = _spin("max_turns")
        self.max_turns.setToolTip("Agent turns one session may take (Claude Code's --max-turns)")
        self.rate_wait = QDoubleSpinBox()
        self.rate_wait.setRange(RATE_WAIT_STEP_S, bounds("rate_limit_wait_s")[1])
        self.rate_wait.setDecimals(1)
        self.rate_wait.setSuffix(" s")
        self.rate_wait.setToolTip("How long to wait on a rate limit that names no reset time")
        self.rate_cap = QDoubleSpinBox()
        self.rate_cap.setRange(RATE_WAIT_STEP_S, bounds("rate_limit_max_wait_s")[1])
        self.rate_cap.setDecimals(1)
        self.rate_cap.setSuffix(" s")
        self.rate_cap.setToolTip(
            "The wait doubles after each rate limit in a row, up to this; a reset time the agent names wins"
        )
        self.stuck = _spin("stuck_threshold")
        self.stuck.setToolTip("Sessions without progress before a task is marked failed")
        self.stagnation = label(name="muted", wrap=True)
        self.allowed_paths = QLineEdit()
        self.allowed_paths.setClearButtonEnabled(True)
        self.allowed_paths.setPlaceholderText("anywhere in the project, e.g. src/** docs/*.md")
        self.allowed_paths.setToolTip(
            "Globs of the files agents may edit (allowed_paths); an edit elsewhere is put aside after the "
            "session (nothing lost) and raised as a blocking flag"
        )
        self.review = _spin("opus_review_every", "off")
        self.review.setToolTip("Run an opus review of a feature after every N of its tasks are done (0: off)")
        self.allow_edits = QCheckBox("Agents may edit files")
        self.allow_edits.setToolTip(
            "Off: edits found after a session are put aside in a git stash and the session is rejected"
        )
        self.sandbox = QCheckBox("Confine agents in a sandbox")
        self.sandbox.setToolTip(
            "On (sandbox): each session writes only its task's worktree; your home, other worktrees and "
            "the repository's git settings are out of its reach. Off: they run as you, with all you can reach"
        )
        self.sandbox_network = QCheckBox("Sandbox keeps the network")
        self.sandbox_network.setToolTip(
            "Off (sandbox_network): a confined command agent, its checks and setup run without a network. "
            "Claude Code and Codex always keep it: they reach their model API"
        )
        self.sandbox.toggled.connect(self.sandbox_network.setEnabled)
        self.checks = QTableWidget(0, len(CHECK_COLUMNS))
        self.checks.setHorizontalHeaderLabels(list(CHECK_COLUMNS))
        self.checks.verticalHeader().setVisible(False)
        self.checks.setTabKeyNavigation(False)  # Tab leaves the table, as in every other table of the window
        header = self.checks.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(COMMAND, header.ResizeMode.Stretch)
        self.checks.setMinimumHeight(120)
        self.checks.setToolTip(
            "The project's own commands (tests, lint, a type check), run in the task's worktree after each "
            "done; a task reaches review only when every required one passes (checks)"
        )
        self.add_check = button("Add check", "add", "Add a check: its name, its command line, its timeout")
        self.remove_check = button("Remove", "remove", "Remove the selected checks")
        self.add_check.clicked.connect(self._add_check_row)
        self.remove_check.clicked.connect(self._remove_check_rows)
        self.setup = QLineEdit()
        self.setup.setClearButtonEnabled(True)
        self.setup.setPlaceholderText("none, e.g. npm ci")
        self.setup.setToolTip(
            "A command run once in each new task worktree, e.g. installing dependencies (setup)"
        )
        self.worktree_files = QLineEdit()
        self.worktree_files.setClearButtonEnabled(True)
        self.worktree_files.setPlaceholderText("none, e.g. .env")
        self.worktree_files.setToolTip(
            "Files git ignores, copied into each new task worktree (worktree_files), such as .env"
        )
        self.checks_problem: str | None = None
        self.notice = label(name="muted", wrap=True)
        self.save = button("Save settings", "save", "Write the settings to .ralph/config.json")
        self.revert = button("Revert", "refresh", "Show the settings as saved")
        self.save.clicked.connect(self.request_save)
        self.revert.clicked.connect(self.revert_edits)
        self._build()
        self.agent.currentIndexChanged.connect(self._on_agent)
        self.stuck.valueChanged.connect(self._show_stagnation_rule)
        self._show_stagnation_rule()
        for signal in self._edited_signals():
            signal.connect(self._on_edit)
        self._on_agent()
        self._update_buttons()

    def _build(self) -> None:
        agent_box = QGroupBox("Agent")
        agent_form = QFormLayout(agent_box)
        agent_form.addRow("Agent", self.agent)
        program_row = QHBoxLayout()
        program_row.setSpacing(6)
        program_row.addWidget(self.agent_bin, 1)
        program_row.addWidget(self.browse)
        agent_form.addRow("Program", program_row)
        agent_form.addRow("Command", self.command)
        agent_form.addRow("Base branch", self.base_branch)
        agent_form.addRow("", self.review_gate)
        agent_form.addRow("Merge", self.merge_strategy)
        models_box = QGroupBox("Model per recipe")
        grid = QGridLayout(models_box)
        grid.setHorizontalSpacing(8)
        for position, (recipe, combo) in enumerate(self.models.items()):
            row, column = divmod(position, 2)
            grid.addWidget(label(recipe_name(recipe)), row, column * 2)
            grid.addWidget(combo, row, column * 2 + 1)
        limits_box = QGroupBox("Limits")
        limits = QFormLayout(limits_box)
        limits.addRow("Max iterations", self.max_iterations)
        limits.addRow("Sessions at once", self.parallel)
        limits.addRow("Budget", self.budget)
        limits.addRow("Max turns", self.max_turns)
        limits.addRow("Session timeout", self.timeout)
        limits.addRow("Rate-limit wait", self.rate_wait)
        limits.addRow("Longest wait", self.rate_cap)
        limits.addRow("Stuck after", self.stuck)
        limits.addRow("", self.stagnation)
        limits.addRow("Opus review every", self.review)
        limits.addRow("", self.allow_edits)
        limits.addRow("", self.sandbox)
        limits.addRow("", self.sandbox_network)
        limits.addRow("Allowed paths", self.allowed_paths)
        limits.addRow("IDE gone", self.ide_disconnect)
        limits.addRow("All work done", self.when_all_done)
        checks_box = QGroupBox("Checks after done")
        checks_layout = QVBoxLayout(checks_box)
        checks_layout.addWidget(self.checks)
        check_buttons = QHBoxLayout()
        check_buttons.addStretch(1)
        check_buttons.addWidget(self.add_check)
        check_buttons.addWidget(self.remove_check)
        checks_layout.addLayout(check_buttons)
        worktree_form = QFormLayout()
        worktree_form.addRow("Setup", self.setup)
        worktree_form.addRow("Copied files", self.worktree_files)
        checks_layout.addLayout(worktree_form)
        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 6, 0)
        for box in (agent_box, models_box, limits_box, checks_box):
            body_layout.addWidget(box)
        body_layout.addStretch(1)
        area = scroller(body)
        # Only ever scroll down: the form is as wide as its fields need, with room for the scroll bar.
        area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        area.setMinimumWidth(body.minimumSizeHint().width() + area.verticalScrollBar().sizeHint().width())
        actions = QHBoxLayout()
        actions.addWidget(self.notice, 1)
        actions.addWidget(self.revert)
        actions.addWidget(self.save)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(area, 1)
        layout.addLayout(actions)

    def _edited_signals(self) -> list[Any]:
        combos = [self.agent, *self.models.values()]
        return [
            self.agent_bin.textChanged,
            self.command.textChanged,
            self.base_branch.textChanged,
            self.review_gate.toggled,
            self.merge_strategy.currentIndexChanged,
            *(combo.currentTextChanged for combo in combos),
            self.max_iterations.valueChanged,
            self.parallel.valueChanged,
            self.budget.valueChanged,
            self.max_turns.valueChanged,
            self.timeout.valueChanged,
            self.rate_wait.valueChanged,
            self.rate_cap.valueChanged,
            self.allowed_paths.textChanged,
            self.stuck.valueChanged,
            self.review.valueChanged,
            self.allow_edits.toggled,
            self.sandbox.toggled,
            self.sandbox_network.toggled,
            self.ide_disconnect.currentIndexChanged,
            self.when_all_done.currentIndexChanged,
            self.checks.itemChanged,
            self.setup.textChanged,
            self.worktree_files.textChanged,
        ]

    # --- values -------------------------------------------------------------------------------

    def load(self, config: ProjectConfig) -> None:
        """Show these settings (no edits pending)."""
        self.loaded = config
        self._loading = True
        self.agent.setCurrentIndex(max(0, self.agent.findData(config.agent)))
        self.agent_bin.setText(config.agent_bin or "")
        self.command.setText(shlex.join(config.agent_command) if config.agent_command else "")
        self.base_branch.setText(config.base_branch or "")
        self.review_gate.setChecked(config.review_gate)
        self.merge_strategy.setCurrentIndex(max(0, self.merge_strategy.findData(config.merge_strategy)))
        for recipe, combo in self.models.items():
            combo.setCurrentText(config.models.get(recipe.value) or "")
        _show(self.max_iterations, config.max_iterations)
        _show(self.parallel, config.parallel)
        _show(self.budget, config.max_cost_usd or 0.0)
        _show(self.max_turns, config.max_turns)
        _show(self.timeout, config.session_timeout_s)
        _show(self.rate_wait, config.rate_limit_wait_s)
        _show(self.rate_cap, config.rate_limit_max_wait_s)
        # Globs as typed: only one with a space needs quotes (shlex would quote every `*`).
        self.allowed_paths.setText(
            " ".join(f'"{glob}"' if " " in glob else glob for glob in config.allowed_paths)
        )
        _show(self.stuck, config.stuck_threshold)
        _show(self.review, config.opus_review_every)
        self.allow_edits.setChecked(config.allow_edits)
        self.sandbox.setChecked(config.sandbox)
        self.sandbox_network.setChecked(config.sandbox_network)
        self.sandbox_network.setEnabled(config.sandbox)
        self.ide_disconnect.setCurrentIndex(max(0, self.ide_disconnect.findData(config.ide_disconnect)))
        self.when_all_done.setCurrentIndex(max(0, self.when_all_done.findData(config.when_all_done)))
        self.checks.setRowCount(0)
        for check in config.checks:
            self._add_check_row(check.name, check.run, check.timeout_s, check.required)
        self.setup.setText(config.setup or "")
        self.worktree_files.setText(" ".join(config.worktree_files))
        self._loading = False
        self._on_agent()
        self._set_dirty(False)

    def values(self) -> ProjectConfig:
        """The settings as the form shows them (the checks as loaded while they break a rule: see
        `checks_problem`)."""
        shown = self._plain_values()
        try:
            checked = shown.changed(
                checks=self._table_checks(),
                setup=self.setup.text().strip() or None,
                worktree_files=_words(self.worktree_files.text()) or (),
            )
        except ConfigError as error:
            self.checks_problem = str(error)
            return shown
        self.checks_problem = None
        return checked

    def _plain_values(self) -> ProjectConfig:
        return self.loaded.changed(
            agent=self.agent.currentData(),
            agent_bin=self.agent_bin.text().strip() or None,
            agent_command=_words(self.command.text()),
            base_branch=self.base_branch.text().strip() or None,
            review_gate=self.review_gate.isChecked(),
            merge_strategy=self.merge_strategy.currentData(),
            models={
                recipe.value: combo.currentText().strip() or None for recipe, combo in self.models.items()
            },
            max_iterations=self.max_iterations.value(),
            parallel=self.parallel.value(),
            max_cost_usd=_kept(self.budget, self.loaded.max_cost_usd or 0.0) or None,
            max_turns=self.max_turns.value(),
            session_timeout_s=self.timeout.value(),
            rate_limit_wait_s=_kept(self.rate_wait, self.loaded.rate_limit_wait_s),
            rate_limit_max_wait_s=_kept(self.rate_cap, self.loaded.rate_limit_max_wait_s),
            allowed_paths=_words(self.allowed_paths.text()) or (),
            stuck_threshold=self.stuck.value(),
            opus_review_every=self.review.value(),
            allow_edits=self.allow_edits.isChecked(),
            sandbox=self.sandbox.isChecked(),
            sandbox_network=self.sandbox_network.isChecked(),
            ide_disconnect=self.ide_disconnect.currentData(),
            when_all_done=self.when_all_done.currentData(),
        )

    def changes(self) -> dict[str, Any]:
        """The settings edited since they were loaded: config.json keys and their new values."""
        shown = self.values()
        return {
            name: getattr(shown, name)
            for name in ProjectConfig.model_fields
            if getattr(shown, name) != getattr(self.loaded, name)
        }

    def request_save(self) -> None:
        """Ask to save the edited settings."""
        self.sig_save_requested.emit(self.changes())

    def revert_edits(self) -> None:
        """Show the settings as saved again."""
        self.load(self.loaded)

    # --- reactions ----------------------------------------------------------------------------

    def choose_program(self) -> None:
        """Let the person pick the agent's program file; the choice fills the Program field."""
        current = self.agent_bin.text().strip()
        dialog = QFileDialog(self, "Choose the agent's program", str(Path(current).parent) if current else "")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(self.agent_bin.setText)
        self.program_dialog = dialog
        dialog.open()

    def _on_agent(self, *_args: object) -> None:
        agent = self.agent.currentData()
        self.command.setEnabled(agent == "command")
        self.agent_bin.setEnabled(agent in ("claude", "codex"))
        self.browse.setEnabled(agent in ("claude", "codex"))
        program = {"claude": "claude", "codex": "codex"}.get(str(agent), "")
        placeholder = "the command's first word" if agent == "command" else "none needed: built in"
        self.agent_bin.setPlaceholderText(f"{program} on PATH" if program else placeholder)

    def _add_check_row(
        self, name: str = "", command: str = "", timeout_s: int = DEFAULT_TIMEOUT_S, required: bool = True
    ) -> None:
        """A row of the checks table (empty: a new check for the person to fill in)."""
        row = self.checks.rowCount()
        self.checks.insertRow(row)
        for column, text in ((NAME, name), (COMMAND, command), (TIMEOUT, str(timeout_s))):
            self.checks.setItem(row, column, QTableWidgetItem(text))
        box = QTableWidgetItem()
        box.setFlags(
            Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        )
        box.setCheckState(Qt.CheckState.Checked if required else Qt.CheckState.Unchecked)
        self.checks.setItem(row, REQUIRED, box)
        if not self._loading:
            self.checks.setCurrentCell(row, NAME)
            self._on_edit()

    def _remove_check_rows(self) -> None:
        # The selected rows, else the row of the cell being edited (a click in a cell selects no row in
        # every style).
        chosen = {index.row() for index in self.checks.selectedIndexes()} or {self.checks.currentRow()}
        rows = sorted((row for row in chosen if row >= 0), reverse=True)
        for row in rows:
            self.checks.removeRow(row)
        self._on_edit()

    def _table_checks(self) -> list[dict[str, Any]]:
        """The checks the table shows, as config.json holds them (rows left blank are not checks)."""
        found: list[dict[str, Any]] = []
        for row in range(self.checks.rowCount()):
            cells = [self.checks.item(row, column) for column in range(len(CHECK_COLUMNS))]
            name, command, timeout = ((cell.text().strip() if cell else "") for cell in cells[:REQUIRED])
            if not name and not command:
                continue
            box = cells[REQUIRED]
            required = box is not None and box.checkState() == Qt.CheckState.Checked
            found.append(
                {
                    "name": name,
                    "run": command,
                    "timeout_s": int(timeout) if timeout.isdigit() else timeout,
                    "required": required,
                }
            )
        return found

    def _show_stagnation_rule(self, *_args: object) -> None:
        self.stagnation.setText(stagnation_rule(self.stuck.value()))

    def _on_edit(self, *_args: object) -> None:
        # A check that breaks a rule is an unsaved edit too: the form stays dirty and Save stays off.
        if not self._loading:
            self._set_dirty(bool(self.changes()) or self.checks_problem is not None)

    def _update_buttons(self) -> None:
        self.save.setEnabled(self._dirty and self.checks_problem is None)
        self.revert.setEnabled(self._dirty)
        if self.checks_problem:
            self.notice.setText(f"Not saved: {self.checks_problem}")
            self.notice.setToolTip(self.checks_problem)
            return
        self.notice.setText("Unsaved — Start saves them" if self._dirty else "Saved in config.json")
        self.notice.setToolTip("The project's .ralph/config.json")
