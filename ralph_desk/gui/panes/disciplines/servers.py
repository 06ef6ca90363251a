"""A discipline's extra MCP servers: a table to add, edit and remove them, and the dialog for one."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QRadioButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.records import McpServerSpec
from ralph_desk.gui.dialogs.buttons import action_buttons
from ralph_desk.gui.dialogs.confirm import ConfirmBox, confirm
from ralph_desk.gui.dialogs.new_record import NAME_PATTERN
from ralph_desk.gui.models.disciplines import ServerTableModel
from ralph_desk.gui.widgets.common import button, label
from ralph_desk.gui.widgets.empty_state import EmptyState
from ralph_desk.gui.widgets.layout import stacked
from ralph_desk.gui.widgets.tables import record_table

DIALOG_WIDTH = 560
RESERVED = "ralph"


def _pairs(text: str, separator: str) -> dict[str, str]:
    """`KEY=value` (or `Name: value`) lines as a mapping; lines without the separator are skipped."""
    pairs: dict[str, str] = {}
    for line in text.splitlines():
        key, found, value = line.partition(separator)
        if found and key.strip():
            pairs[key.strip()] = value.strip()
    return pairs


def _lines_of(pairs: dict[str, str], separator: str) -> str:
    return "\n".join(f"{key}{separator}{value}" for key, value in pairs.items())


class ServerDialog(QDialog):
    """One extra MCP server: a command the agent starts (with arguments and environment) or a URL."""

    def __init__(self, spec: McpServerSpec | None, taken: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.original = spec
        self.taken = {name for name in taken if spec is None or name != spec.name}
        self.setWindowTitle("Edit MCP server" if spec else "Add an MCP server")
        self.setMinimumWidth(DIALOG_WIDTH)
        self.name = QLineEdit(spec.name if spec else "")
        self.name.setPlaceholderText("playwright")
        self.command_kind = QRadioButton("Command the agent starts (stdio)")
        self.url_kind = QRadioButton("Server at a URL (HTTP)")
        kinds = QButtonGroup(self)
        kinds.addButton(self.command_kind)
        kinds.addButton(self.url_kind)
        self.command = QLineEdit(spec.command or "" if spec else "")
        self.command.setPlaceholderText("npx")
        self.args = QPlainTextEdit("\n".join(spec.args) if spec else "")
        self.args.setPlaceholderText("One argument per line:\n-y\n@playwright/mcp")
        self.args.setFixedHeight(76)
        self.env = QPlainTextEdit(_lines_of(spec.env, "=") if spec else "")
        self.env.setPlaceholderText("One per line: API_KEY=value")
        self.env.setFixedHeight(60)
        self.url = QLineEdit(spec.url or "" if spec else "")
        self.url.setPlaceholderText("https://mcp.example.com/mcp")
        self.headers = QPlainTextEdit(_lines_of(spec.headers, ": ") if spec else "")
        self.headers.setPlaceholderText("One per line: Authorization: Bearer …")
        self.headers.setFixedHeight(60)
        self.pages = QStackedWidget()
        self.pages.addWidget(self._command_page())
        self.pages.addWidget(self._url_page())
        self.problem = label(name="muted", wrap=True)
        buttons, self.ok = action_buttons(self, "Keep")
        kinds.buttonToggled.connect(lambda *_: self._on_kind())
        for edit in (self.name, self.command, self.url):
            edit.textChanged.connect(self._check)
        (self.url_kind if spec is not None and spec.url is not None else self.command_kind).setChecked(True)
        form = QFormLayout()
        form.addRow("Name", self.name)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.command_kind)
        layout.addWidget(self.url_kind)
        layout.addWidget(self.pages)
        layout.addWidget(self.problem)
        layout.addWidget(
            label(
                "The discipline's sessions get this server beside ralph's own; "
                "the change applies to the next session.",
                name="muted",
                wrap=True,
            )
        )
        layout.addWidget(buttons)
        self._check()

    def _command_page(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Command", self.command)
        form.addRow("Arguments", self.args)
        form.addRow("Environment", self.env)
        return page

    def _url_page(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("URL", self.url)
        form.addRow("Headers", self.headers)
        return page

    def _on_kind(self) -> None:
        self.pages.setCurrentIndex(1 if self.url_kind.isChecked() else 0)
        self._check()

    def _check(self) -> None:
        name = self.name.text().strip()
        problem = ""
        if name and not NAME_PATTERN.match(name):
            problem = "The name takes lower-case letters, digits, - and _."
        elif name == RESERVED:
            problem = "“ralph” is ralph-desk's own server; choose another name."
        elif name in self.taken:
            problem = f"This discipline has a server named {name} already."
        target = self.url.text().strip() if self.url_kind.isChecked() else self.command.text().strip()
        self.problem.setText(problem)
        self.ok.setEnabled(bool(name and target and not problem))

    def spec(self) -> McpServerSpec:
        """The server as entered."""
        name = self.name.text().strip()
        if self.url_kind.isChecked():
            return McpServerSpec(
                name=name, url=self.url.text().strip(), headers=_pairs(self.headers.toPlainText(), ":")
            )
        args = tuple(line.strip() for line in self.args.toPlainText().splitlines() if line.strip())
        return McpServerSpec(
            name=name, command=self.command.text().strip(), args=args, env=_pairs(self.env.toPlainText(), "=")
        )


class ServersEditor(QWidget):
    """The discipline's extra MCP servers as edited (saved with the discipline)."""

    sig_edited = Signal()
    """A server was added, changed or removed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ServerTableModel(self)
        self.stored: list[McpServerSpec] = []
        self.dialog: ServerDialog | None = None
        self.confirm_box: ConfirmBox | None = None
        self.table = record_table(self.model)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setHighlightSections(False)
        self.table.setColumnWidth(0, 150)
        self.table.setColumnWidth(1, 80)
        self.table.setColumnWidth(3, 170)
        self.table.doubleClicked.connect(lambda _index: self.edit_selected())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        self.add_button = button("Add…", "add", "Add an MCP server for this discipline's sessions")
        self.edit_button = button("Edit…", "edit", "Change the selected server")
        self.remove_button = button("Remove", "trash", "Remove the selected server")
        self.add_button.clicked.connect(self.add)
        self.edit_button.clicked.connect(self.edit_selected)
        self.remove_button.clicked.connect(self.remove_selected)
        self.empty = EmptyState(
            "server",
            "No extra MCP servers",
            "Sessions of this discipline get ralph's own tools only. Add a server (a browser driver, a "
            "docs search…) to hand its tools to them as well.",
            action="Add a server…",
        )
        self.empty.sig_action_requested.connect(self.add)
        self.stack = stacked(self.table, self.empty)
        actions = QHBoxLayout()
        actions.addWidget(
            label("Values of environment variables and headers are not shown.", name="muted", wrap=True), 1
        )
        actions.addWidget(self.add_button)
        actions.addWidget(self.edit_button)
        actions.addWidget(self.remove_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.stack, 1)
        layout.addLayout(actions)
        self._update_buttons()

    def load(self, specs: list[McpServerSpec]) -> None:
        """Show a discipline's stored servers."""
        self.stored = list(specs)
        self._show(self.stored)

    def values(self) -> list[McpServerSpec]:
        """The servers as edited."""
        return self.model.items

    @property
    def dirty(self) -> bool:
        """Whether the servers differ from the stored ones."""
        return self.values() != self.stored

    def revert(self) -> None:
        """Show the stored servers again."""
        self._show(self.stored)

    def put(self, spec: McpServerSpec, replaced: str | None = None) -> None:
        """Add a server, or replace the one named `replaced`."""
        kept = [item for item in self.values() if item.name not in (replaced, spec.name)]
        self._show([*kept, spec])
        self.sig_edited.emit()

    def add(self) -> None:
        """Open the dialog for a new server."""
        self._open(None)

    def edit_selected(self) -> None:
        """Open the selected server in the dialog."""
        rows = self.table.selectionModel().selectedRows()
        if rows:
            self._open(self.model.record(rows[0].row()))

    def remove_selected(self) -> None:
        """Ask, then remove the selected server (saved with the discipline)."""
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return
        name = self.model.record(rows[0].row()).name
        self.confirm_box = confirm(
            self,
            "Remove an MCP server",
            f"Remove the server {name}? (Save the discipline to apply it.)",
            "Remove",
            lambda: self._remove(name),
        )

    def _remove(self, name: str) -> None:
        self._show([item for item in self.values() if item.name != name])
        self.sig_edited.emit()

    def _open(self, spec: McpServerSpec | None) -> None:
        dialog = ServerDialog(spec, [item.name for item in self.values()], self)
        dialog.accepted.connect(lambda: self.put(dialog.spec(), spec.name if spec else None))
        self.dialog = dialog
        dialog.open()

    def _show(self, specs: list[McpServerSpec]) -> None:
        self.model.set_items(sorted(specs, key=lambda item: item.name))
        self.stack.setCurrentWidget(self.table if specs else self.empty)
        self._update_buttons()

    def _update_buttons(self) -> None:
        selected = bool(self.table.selectionModel().selectedRows())
        self.edit_button.setEnabled(selected)
        self.remove_button.setEnabled(selected)
