"""The recipe × tool matrix of a discipline: rows are the registry's tools by category, columns the recipes.

A cell is checked when the recipe allows the tool and the discipline does not take it away. The
discipline's disabled tools are one set for every recipe: the control is the row's (its header's check
state), and the cells only show what each recipe's sessions get.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.recipes import RECIPE_ALLOWED, enabled_tools
from ralph_desk.domain.tools import ToolCategory, ToolSpec, in_registry_order, tools_in
from ralph_desk.gui import theme

Index = QModelIndex | QPersistentModelIndex
_ROOT = QModelIndex()

ALLOWED_ROLE = Qt.ItemDataRole.UserRole + 20
"""Whether the column's recipe allows the row's tool (False on category rows)."""
HEADER_ROLE = Qt.ItemDataRole.UserRole + 21
"""Whether the row is a category header."""

RECIPES: tuple[Recipe, ...] = tuple(Recipe)

# Short column titles; the tooltip gives the whole name and what the recipe is for.
RECIPE_TITLES: dict[Recipe, str] = {
    Recipe.BRAINDUMP: "Brain",
    Recipe.YAP: "Yap",
    Recipe.RAMBLE: "Ramble",
    Recipe.DISCUSS: "Discuss",
    Recipe.TASK_EXECUTION: "Task",
    Recipe.OPUS_REVIEW: "Review",
    Recipe.ENRICHMENT: "Enrich",
    Recipe.IDE: "IDE",
    Recipe.UNDERSTAND: "Map",
}
RECIPE_PURPOSES: dict[Recipe, str] = {
    Recipe.BRAINDUMP: "turns a brain dump into features, disciplines and tasks",
    Recipe.YAP: "talks tasks through: lists, creates and updates them",
    Recipe.RAMBLE: "shapes features: descriptions, context files, learnings",
    Recipe.DISCUSS: "refines disciplines",
    Recipe.TASK_EXECUTION: "the loop's session on one task: the eight closing verbs",
    Recipe.OPUS_REVIEW: "reviews a feature's tasks and learnings every N tasks done",
    Recipe.ENRICHMENT: "turns draft tasks into pending ones with pseudocode",
    Recipe.IDE: "IDE clients: loop control and read-only tools",
    Recipe.UNDERSTAND: "a read-only run that maps the codebase",
}
CATEGORY_TITLES: dict[ToolCategory, str] = {
    ToolCategory.TASK: "Tasks",
    ToolCategory.COMMENT: "Comments",
    ToolCategory.FEATURE: "Features",
    ToolCategory.DISCIPLINE: "Disciplines",
    ToolCategory.PROJECT: "Project",
    ToolCategory.STATE: "Progress & learnings",
    ToolCategory.SIGNAL: "Signals (verbs)",
    ToolCategory.LOOP: "Loop control",
}


def recipe_name(recipe: Recipe) -> str:
    """A recipe as people read it ("task execution")."""
    return recipe.value.replace("_", " ")


def band_color() -> QColor:
    """The opaque background of a category band: the base colour with a touch of the accent."""
    base, accent = QColor(theme.tones().base), theme.accent()
    share = 0.09
    return QColor(
        round(base.red() + (accent.red() - base.red()) * share),
        round(base.green() + (accent.green() - base.green()) * share),
        round(base.blue() + (accent.blue() - base.blue()) * share),
    )


@dataclass(frozen=True)
class MatrixRow:
    """A category header (no tool) or one tool of that category."""

    category: ToolCategory
    tool: ToolSpec | None = None


def matrix_rows() -> list[MatrixRow]:
    """Every registry tool under its category's header, in registry order."""
    rows: list[MatrixRow] = []
    for category in ToolCategory:
        specs = tools_in(category)
        if specs:
            rows.append(MatrixRow(category))
            rows.extend(MatrixRow(category, spec) for spec in specs)
    return rows


class ToolMatrixModel(QAbstractTableModel):
    """The tools a discipline's sessions get in each recipe; a row's control takes a tool away everywhere."""

    sig_disabled_changed = Signal()
    """The disabled set changed (by a click or by loading a discipline)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows = matrix_rows()
        self.recipes = RECIPES
        self._disabled: set[str] = set()
        self._saved: frozenset[str] = frozenset()

    # --- the plain state ----------------------------------------------------------------------

    @property
    def disabled(self) -> frozenset[str]:
        """The tools the discipline takes away, as edited."""
        return frozenset(self._disabled)

    @property
    def dirty(self) -> bool:
        """Whether the edited set differs from the one loaded."""
        return self.disabled != self._saved

    def disabled_list(self) -> list[str]:
        """The edited set in registry order (as `set_disabled_tools` takes it)."""
        return in_registry_order(self._disabled)

    def effective(self, recipe: Recipe) -> list[str]:
        """The tools a session of `recipe` gets with the edited set, in registry order."""
        return in_registry_order(enabled_tools(recipe, self._disabled))

    def load(self, disabled: Iterable[str]) -> None:
        """Show a discipline's stored set (no edits pending)."""
        self._saved = frozenset(disabled)
        self._set(set(self._saved))

    def revert(self) -> None:
        """Drop the edits."""
        self._set(set(self._saved))

    def set_enabled(self, tool: str, enabled: bool) -> None:
        """Give the tool back (in every recipe that allows it) or take it away from all of them."""
        wanted = set(self._disabled)
        if enabled:
            wanted.discard(tool)
        else:
            wanted.add(tool)
        self._set(wanted)

    def _set(self, disabled: set[str]) -> None:
        changed = disabled ^ self._disabled
        self._disabled = disabled
        for row, entry in enumerate(self.rows):
            if entry.tool is not None and entry.tool.name in changed:
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.recipes) - 1))
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(self.recipes) - 1)
        self.headerDataChanged.emit(Qt.Orientation.Vertical, 0, len(self.rows) - 1)
        self.sig_disabled_changed.emit()

    # --- reading ------------------------------------------------------------------------------

    def rowCount(self, parent: Index = _ROOT) -> int:
        """Category headers and tools."""
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = _ROOT) -> int:
        """One column per recipe."""
        return 0 if parent.isValid() else len(self.recipes)

    def tool_at(self, index: Index) -> ToolSpec | None:
        """The tool of a cell's row (None on a category header)."""
        return self.rows[index.row()].tool if index.isValid() else None

    def recipe_at(self, index: Index) -> Recipe:
        """The recipe of a cell's column."""
        return self.recipes[index.column()]

    def is_allowed(self, index: Index) -> bool:
        """Whether the cell's recipe allows the cell's tool."""
        tool = self.tool_at(index)
        return tool is not None and tool.name in RECIPE_ALLOWED[self.recipe_at(index)]

    def is_checked(self, index: Index) -> bool:
        """Whether a session of the cell's recipe gets the cell's tool."""
        tool = self.tool_at(index)
        return tool is not None and self.is_allowed(index) and tool.name not in self._disabled

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Check state, tooltip and background of a cell."""
        return self._cell(index, role)

    def _cell(self, index: Index, role: int) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        if role == HEADER_ROLE:
            return self.rows[index.row()].tool is None
        if role == ALLOWED_ROLE:
            return self.is_allowed(index)
        if self.tool_at(index) is None:
            if role == Qt.ItemDataRole.BackgroundRole:
                return band_color()
            return None
        if role == Qt.ItemDataRole.CheckStateRole:
            return Qt.CheckState.Checked if self.is_checked(index) else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._cell_tip(index)
        if role == Qt.ItemDataRole.BackgroundRole and not self.is_allowed(index):
            return theme.tint(theme.muted(), 0.14)
        return None

    def _cell_tip(self, index: Index) -> str:
        tool = self.tool_at(index)
        assert tool is not None
        recipe = recipe_name(self.recipe_at(index))
        if not self.is_allowed(index):
            return f"{tool.name}: the {recipe} recipe does not allow it (this cannot be changed here)"
        if tool.name in self._disabled:
            return (
                f"{tool.name}: taken away by this discipline — in {recipe} and every other recipe that "
                "allows it. The box before its name gives it back."
            )
        return (
            f"{tool.name}: {recipe} sessions of this discipline get it. The box before its name takes it "
            "away in every recipe that allows it."
        )

    def flags(self, index: Index) -> Qt.ItemFlag:
        """Allowed tool cells are enabled (not checkable: the row's control changes them); others are not."""
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        if self.tool_at(index) is None or self.is_allowed(index):
            return Qt.ItemFlag.ItemIsEnabled
        return Qt.ItemFlag.NoItemFlags

    def can_change(self, row: int) -> bool:
        """Whether the row is a tool some recipe allows (its control can take it away or give it back)."""
        tool = self.rows[row].tool if 0 <= row < len(self.rows) else None
        return tool is not None and any(tool.name in RECIPE_ALLOWED[recipe] for recipe in self.recipes)

    def row_enabled(self, row: int) -> bool:
        """Whether the discipline keeps the row's tool (in every recipe that allows it)."""
        tool = self.rows[row].tool
        return tool is not None and tool.name not in self._disabled

    def toggle_row(self, row: int) -> None:
        """Give back or take away the row's tool, in every recipe at once (when some recipe allows it)."""
        tool = self.rows[row].tool
        if tool is not None and self.can_change(row):
            self.set_enabled(tool.name, tool.name in self._disabled)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Recipes (with their effective count) across; tools and category titles down."""
        return self._header(section, orientation, role)

    def _header(self, section: int, orientation: Qt.Orientation, role: int) -> Any:
        if orientation == Qt.Orientation.Horizontal:
            return self._recipe_header(section, role)
        if not 0 <= section < len(self.rows):
            return None
        entry = self.rows[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return CATEGORY_TITLES[entry.category].upper() if entry.tool is None else entry.tool.name
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tool_tip(entry)
        if role == Qt.ItemDataRole.CheckStateRole and entry.tool is not None:
            return Qt.CheckState.Checked if self.row_enabled(section) else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.FontRole and entry.tool is None:
            font = QFont()
            font.setBold(True)
            font.setPointSizeF(max(7.0, font.pointSizeF() * 0.86))
            return font
        if role == Qt.ItemDataRole.ForegroundRole and entry.tool is None:
            return theme.muted()
        if role == Qt.ItemDataRole.BackgroundRole and entry.tool is None:
            return band_color()
        return None

    def _recipe_header(self, section: int, role: int) -> Any:
        if not 0 <= section < len(self.recipes):
            return None
        recipe = self.recipes[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{RECIPE_TITLES[recipe]}\n{len(self.effective(recipe))}/{len(RECIPE_ALLOWED[recipe])}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                f"{recipe_name(recipe)} — {RECIPE_PURPOSES[recipe]}.\n"
                f"This discipline's sessions get {len(self.effective(recipe))} of the "
                f"{len(RECIPE_ALLOWED[recipe])} tools the recipe allows."
            )
        return None

    def _tool_tip(self, entry: MatrixRow) -> str:
        if entry.tool is None:
            count = len(tools_in(entry.category))
            return f"{CATEGORY_TITLES[entry.category]}: {count} tool{'s' if count != 1 else ''}"
        spec = entry.tool
        notes = ["read-only" if spec.read_only else "changes data"]
        if spec.destructive:
            notes.append("destructive")
        allowed = [RECIPE_TITLES[recipe] for recipe in self.recipes if spec.name in RECIPE_ALLOWED[recipe]]
        where = ", ".join(allowed) if allowed else "no recipe"
        kept = (
            "This discipline keeps it; click to take it away in every recipe."
            if spec.name not in self._disabled
            else "This discipline takes it away in every recipe; click to give it back."
        )
        return f"{spec.name} ({', '.join(notes)})\n{spec.description}\nAllowed in: {where}\n{kept}"
