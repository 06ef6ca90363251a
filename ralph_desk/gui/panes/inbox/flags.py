"""The Flags tab: problems agents raised, filtered, blocking first, each to triage."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from html import escape
from typing import TypeVar

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.enums import FlagCategory, FlagResolution, Severity
from ralph_desk.gui import fmt, theme
from ralph_desk.gui.models.base import RECORD_ROLE
from ralph_desk.gui.models.signals import FlagItem, FlagTableModel, flag_order
from ralph_desk.gui.widgets.card import CardFrame
from ralph_desk.gui.widgets.common import button, label, link
from ralph_desk.gui.widgets.empty_state import EmptyState
from ralph_desk.gui.widgets.layout import stacked
from ralph_desk.gui.widgets.pill import Pill
from ralph_desk.gui.widgets.tables import record_table

ANY = "any"
EXPLAIN = (
    "Agents <b>flag</b> bugs, ambiguities, stale docs or security issues they notice while they "
    "work. Flags wait here, blocking ones first, for you to acknowledge, resolve, dismiss or "
    "turn into a task."
)
SEVERITY_COLUMN, WHAT_COLUMN, TASK_COLUMN, RESOLUTION_COLUMN = 0, 2, 3, 5
TRIAGE = (
    ("acknowledged", "Acknowledge", "acknowledge", "Seen: keep it for later, no longer open"),
    ("resolved", "Resolve", "success", "It is fixed or no longer true"),
    ("dismissed", "Dismiss", "reject", "Not a problem"),
    ("convert", "Convert to task…", "convert", "Make a task of it: edit its fields, pending or draft"),
)

E = TypeVar("E", bound=StrEnum)


@dataclass(frozen=True)
class FlagFilters:
    """The flag filters: None means any."""

    severity: Severity | None = None
    category: FlagCategory | None = None
    feature: str | None = None
    resolution: FlagResolution | None = FlagResolution.OPEN


def _member(enum: type[E], value: str | None) -> E | None:
    """A combo's chosen value as its enum member (None: any)."""
    return None if value is None else enum(value)


def _combo(tip: str, values: list[tuple[str, str]]) -> QComboBox:
    combo = QComboBox()
    combo.setToolTip(tip)
    for shown, value in values:
        combo.addItem(shown, value)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    return combo


class FlagsView(QWidget):
    """Filters, the table of flags, and the selected flag with its triage buttons."""

    sig_filters_changed = Signal()
    """The filters changed: read the flags again (`filters()` says which)."""
    sig_triage_requested = Signal(int, str)
    """Set the resolution of the flag with this id: acknowledged, resolved, dismissed or convert."""
    sig_open_task_requested = Signal(int)
    """Show the task with this id."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.severity = _combo(
            "Show flags of one severity", [("Any severity", ANY)] + [(s.value, s.value) for s in Severity]
        )
        self.category = _combo(
            "Show flags of one category",
            [("Any category", ANY)] + [(c.value.replace("_", " "), c.value) for c in FlagCategory],
        )
        self.feature = _combo("Show flags raised on one feature's tasks", [("Any feature", ANY)])
        self.resolution = _combo(
            "Show open flags, or those triaged one way",
            [(r.value.capitalize(), r.value) for r in FlagResolution] + [("Any resolution", ANY)],
        )
        self.count = label(name="muted")
        filters = QHBoxLayout()
        filters.setSpacing(8)
        for combo in (self.severity, self.category, self.feature, self.resolution):
            filters.addWidget(combo)
            combo.currentIndexChanged.connect(self.sig_filters_changed)
        filters.addStretch(1)
        filters.addWidget(self.count)
        self.model = FlagTableModel(self)
        self.table = record_table(self.model, pills=(SEVERITY_COLUMN, RESOLUTION_COLUMN))
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSortingEnabled(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for column in (WHAT_COLUMN, TASK_COLUMN):  # they share the room: what was flagged stays readable
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
        for column, width in ((SEVERITY_COLUMN, 96), (1, 100), (4, 100), (RESOLUTION_COLUMN, 104), (6, 110)):
            self.table.setColumnWidth(column, width)
        self.table.selectionModel().selectionChanged.connect(self._show_selected)
        self.empty = EmptyState("flag", "No open flags", EXPLAIN, action="Show every flag")
        self.empty.sig_action_requested.connect(self.show_all)
        self.stack = stacked(self.table, self.empty)
        self.detail = self._build_detail()
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.stack)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 8, 0, 0)
        layout.setSpacing(8)
        layout.addLayout(filters)
        layout.addWidget(splitter, 1)
        self._show_selected()

    def _build_detail(self) -> CardFrame:
        frame = CardFrame()
        self.detail_severity = Pill()
        self.detail_task = link("")
        self.detail_task.linkActivated.connect(lambda href: self.sig_open_task_requested.emit(int(href[5:])))
        self.detail_meta = label(name="muted")
        top = QHBoxLayout()
        top.setSpacing(8)
        top.addWidget(self.detail_severity)
        top.addWidget(self.detail_task, 1)
        top.addWidget(self.detail_meta)
        self.detail_what = label(wrap=True, selectable=True)
        self.detail_what.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.triage_buttons: dict[str, QPushButton] = {}
        actions = QHBoxLayout()
        actions.setSpacing(8)
        for resolution, text, icon_name, tip in TRIAGE:
            triage = button(text, icon_name, tip, primary=resolution == "convert")
            triage.clicked.connect(lambda _=False, r=resolution: self._triage(r))
            self.triage_buttons[resolution] = triage
            actions.addWidget(triage)
        actions.addStretch(1)
        layout = QVBoxLayout(frame)
        layout.setContentsMargins(14, 10, 14, 10)
        layout.setSpacing(8)
        layout.addLayout(top)
        layout.addWidget(self.detail_what, 1)
        layout.addLayout(actions)
        return frame

    # --- filters ------------------------------------------------------------------------------

    def filters(self) -> FlagFilters:
        """The filters chosen."""

        def value(combo: QComboBox) -> str | None:
            data = combo.currentData()
            return None if data in (None, ANY) else str(data)

        return FlagFilters(
            severity=_member(Severity, value(self.severity)),
            category=_member(FlagCategory, value(self.category)),
            feature=value(self.feature),
            resolution=_member(FlagResolution, value(self.resolution)),
        )

    def set_features(self, names: list[str]) -> None:
        """Offer these features in the feature filter (keeping the choice when it still exists)."""
        current = self.feature.currentData()
        self.feature.blockSignals(True)
        self.feature.clear()
        self.feature.addItem("Any feature", ANY)
        for name in names:
            self.feature.addItem(name, name)
        index = self.feature.findData(current)
        self.feature.setCurrentIndex(max(0, index))
        self.feature.blockSignals(False)

    def set_filter(self, combo: QComboBox, value: str | None) -> None:
        """Choose `value` (None: any) in one of the filter combos."""
        index = combo.findData(ANY if value is None else value)
        combo.setCurrentIndex(max(0, index))

    def show_all(self) -> None:
        """Clear every filter."""
        for combo in (self.severity, self.category, self.feature, self.resolution):
            combo.blockSignals(True)
            self.set_filter(combo, None)
            combo.blockSignals(False)
        self.sig_filters_changed.emit()

    # --- content ------------------------------------------------------------------------------

    def show_items(self, items: list[FlagItem], open_count: int) -> None:
        """Show these flags; the selection stays on its flag, or moves to the next when it left."""
        previous = self.selected_row()
        self.model.set_items(items)
        if self.selected() is None and items and previous is not None:
            self.select_row(min(previous, len(items) - 1))
        self.stack.setCurrentWidget(self.table if items else self.empty)
        self._update_empty()
        shown = fmt.plural(len(items), "flag")
        self.count.setText(f"{shown} shown · {open_count} open")
        self._show_selected()

    def update_items(self, items: list[FlagItem], open_count: int) -> None:
        """Put these flags in place (changed, or new in the inbox's order), leaving the others."""
        self.model.upsert(items, order=flag_order)
        self._show_count(open_count)

    def remove_flags(self, flag_ids: list[int], open_count: int) -> None:
        """Drop these flags from the table (they no longer match the filters)."""
        self.model.remove_keys(flag_ids)
        self._show_count(open_count)

    def _show_count(self, open_count: int) -> None:
        shown = self.model.rowCount()
        self.stack.setCurrentWidget(self.table if shown else self.empty)
        self._update_empty()
        self.count.setText(f"{fmt.plural(shown, 'flag')} shown · {open_count} open")

    def _update_empty(self) -> None:
        filters = self.filters()
        if filters == FlagFilters():
            self.empty.set_text("No open flags", EXPLAIN)
        else:
            self.empty.set_text("No flag matches these filters", "Clear the filters to see every flag.")
        self.empty.button.setVisible(filters != FlagFilters(resolution=None))

    def selected_row(self) -> int | None:
        """The row selected, if any."""
        rows = self.table.selectionModel().selectedRows()
        return rows[0].row() if rows else None

    def selected(self) -> FlagItem | None:
        """The flag selected, if any."""
        row = self.selected_row()
        if row is None:
            return None
        item = self.model.index(row, 0).data(RECORD_ROLE)
        return item if isinstance(item, FlagItem) else None

    def select_row(self, row: int) -> None:
        """Select a row of the table."""
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.table.selectionModel().select(self.model.index(row, 0), flags)
        self.table.setCurrentIndex(self.model.index(row, 0))

    def step(self, delta: int) -> None:
        """Select the flag `delta` rows on (the first when none is) and give the table the keyboard."""
        rows = self.model.rowCount()
        if not rows:
            return
        current = self.selected_row()
        self.select_row(0 if current is None else max(0, min(rows - 1, current + delta)))
        self.table.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def select_flag(self, flag_id: int) -> bool:
        """Select the flag with this id; whether it is shown."""
        row = self.model.row_of(flag_id)
        if row is None:
            return False
        self.select_row(row)
        return True

    def _show_selected(self) -> None:
        item = self.selected()
        self.detail.setEnabled(item is not None)
        if item is None:
            self.detail_severity.set_pill("no flag selected", theme.muted())
            self.detail_task.setText("")
            self.detail_meta.setText("")
            self.detail_what.setText("Select a flag to read it in full and triage it.")
            return
        flag = item.flag
        self.detail_severity.set_pill(flag.severity or "", theme.severity_color(flag.severity))
        self.detail_task.setText(
            f"{escape((flag.category or '').replace('_', ' '))} on "
            f'<a href="task:{flag.task_id}">#{flag.task_id}</a> {escape(item.task_title)}'
        )
        resolution = (flag.resolution or FlagResolution.OPEN).value
        self.detail_meta.setText(f"{resolution} · raised {fmt.ago(flag.created)}")
        self.detail_meta.setToolTip(f"Session {flag.session_id or '—'}, {fmt.full(flag.created)}")
        self.detail_what.setText(flag.what or "")
        converted = flag.resolution is FlagResolution.CONVERTED
        for resolution_value, triage in self.triage_buttons.items():
            same = resolution_value == resolution
            triage.setEnabled(not converted and not same)

    def _triage(self, resolution: str) -> None:
        item = self.selected()
        if item is not None:
            self.sig_triage_requested.emit(item.flag.id, resolution)
