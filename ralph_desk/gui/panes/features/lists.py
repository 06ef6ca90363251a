"""Small list editors of the feature form: paths to add and remove, features to tick."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from ralph_desk.gui.widgets.common import tool_button

LIST_HEIGHT = 78


class PathListEditor(QWidget):
    """A list of project paths: type one and press Enter (or +) to add it, select one and − to remove it."""

    sig_changed = Signal()
    """The list changed."""

    def __init__(self, placeholder: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QListWidget()
        self.list.setFixedHeight(LIST_HEIGHT)
        self.list.setAlternatingRowColors(True)
        self.input = QLineEdit()
        self.input.setPlaceholderText(placeholder)
        self.input.setClearButtonEnabled(True)
        self.add_button = tool_button("add", "Add the path typed on the left (Enter)")
        self.remove_button = tool_button("remove", "Remove the selected path")
        self.input.returnPressed.connect(self.add_typed)
        self.add_button.clicked.connect(self.add_typed)
        self.remove_button.clicked.connect(self.remove_selected)
        self.list.currentRowChanged.connect(lambda row: self.remove_button.setEnabled(row >= 0))
        self.input.textChanged.connect(lambda text: self.add_button.setEnabled(bool(text.strip())))
        row = QHBoxLayout()
        row.setSpacing(4)
        row.addWidget(self.input, 1)
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.list)
        layout.addLayout(row)
        self.add_button.setEnabled(False)
        self.remove_button.setEnabled(False)

    def values(self) -> list[str]:
        """The paths, in order."""
        return [self.list.item(row).text() for row in range(self.list.count())]

    def set_values(self, values: Iterable[str]) -> None:
        """Show these paths (without telling anyone)."""
        self.list.clear()
        self.list.addItems(list(values))
        self.remove_button.setEnabled(False)

    def add(self, path: str) -> None:
        """Add a path (once)."""
        cleaned = path.strip()
        if cleaned and cleaned not in self.values():
            self.list.addItem(cleaned)
            self.sig_changed.emit()

    def add_typed(self) -> None:
        """Add what is typed, then clear the box."""
        self.add(self.input.text())
        self.input.clear()

    def remove_selected(self) -> None:
        """Remove the selected path."""
        row = self.list.currentRow()
        if row >= 0:
            self.list.takeItem(row)
            self.sig_changed.emit()


class CheckList(QListWidget):
    """Names with a checkbox each; `checked()` lists the ticked ones."""

    sig_changed = Signal()
    """A box was ticked or cleared."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFixedHeight(LIST_HEIGHT)
        self.itemChanged.connect(lambda _item: self.sig_changed.emit())

    def set_items(self, names: Iterable[str], checked: Iterable[str]) -> None:
        """Offer `names`, with `checked` ticked (without telling anyone)."""
        ticked = set(checked)
        self.blockSignals(True)
        self.clear()
        for name in names:
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if name in ticked else Qt.CheckState.Unchecked)
            self.addItem(item)
        self.blockSignals(False)

    def checked(self) -> list[str]:
        """The ticked names, in order."""
        items = [self.item(row) for row in range(self.count())]
        return [item.text() for item in items if item.checkState() == Qt.CheckState.Checked]

    def set_checked(self, name: str, checked: bool) -> None:
        """Tick or clear one name."""
        for row in range(self.count()):
            item = self.item(row)
            if item.text() == name:
                item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
