"""The Disciplines pane: fields, extra MCP servers and the tool matrix, down to a new session's tools/list."""

from __future__ import annotations

import anyio
from mcp import Client
from PySide6.QtCore import QModelIndex, QPoint, Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.recipes import RECIPE_ALLOWED
from ralph_desk.domain.records import McpServerSpec
from ralph_desk.domain.session import SessionContext
from ralph_desk.domain.tools import REGISTRY
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.models.disciplines import DisciplineTableModel, ServerTableModel
from ralph_desk.gui.models.tool_matrix import ALLOWED_ROLE, ToolMatrixModel
from ralph_desk.gui.panes.disciplines.matrix import ToolMatrixView
from ralph_desk.gui.panes.disciplines.pane import SERVERS, TOOLS, DisciplinesPane
from ralph_desk.mcp_server.config import complete_context
from ralph_desk.mcp_server.server import build_server
from ralph_desk.services.container import Services
from tests.gui.conftest import settle

WAIT_MS = 3000


def open_discipline(qtbot: QtBot, window: MainWindow, name: str, tab: int | None = None) -> DisciplinesPane:
    window.show_pane("disciplines")
    pane = window.disciplines
    assert pane.select_discipline(name)
    qtbot.waitUntil(
        lambda: (shown := pane.detail.discipline) is not None and shown.name == name, timeout=WAIT_MS
    )
    if tab is not None:
        pane.detail.tabs.setCurrentIndex(tab)
    return pane


def cell(model: ToolMatrixModel, tool: str, recipe: Recipe) -> QModelIndex:
    row = next(row for row, entry in enumerate(model.rows) if entry.tool and entry.tool.name == tool)
    return model.index(row, model.recipes.index(recipe))


def click(qtbot: QtBot, view: ToolMatrixView, index: QModelIndex) -> None:
    view.scrollTo(index)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(index).center())


def click_row(qtbot: QtBot, view: ToolMatrixView, index: QModelIndex) -> None:
    """Click the box before the tool's name (the row's control)."""
    view.scrollTo(index)
    header = view.verticalHeader()
    at = QPoint(12, header.sectionViewportPosition(index.row()) + header.sectionSize(index.row()) // 2)
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=at)


def checked(index: QModelIndex) -> bool:
    return bool(index.data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked)


def listed_tools(services: Services, task_id: int) -> set[str]:
    """The tools/list a new task-execution session on this task gets, its context read from the database."""
    context = complete_context(SessionContext(recipe=Recipe.TASK_EXECUTION, task_id=task_id), services)

    async def listing() -> set[str]:
        async with Client(build_server(services, context), mode="legacy") as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    return anyio.run(listing)


# --- the tool matrix ------------------------------------------------------------------------


def test_unchecking_a_tool_changes_the_effective_set_and_saving_changes_a_new_sessions_tools_list(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    task_id = services.tasks.list(discipline="backend")[0].id
    assert "learned" in listed_tools(services, task_id)
    pane = open_discipline(qtbot, window, "backend", TOOLS)
    tools = pane.detail.tools
    learned = cell(tools.model, "learned", Recipe.TASK_EXECUTION)
    assert checked(learned)
    assert "learned" in tools.effective.summary()["task_execution"]

    click_row(qtbot, tools.view, learned)

    assert not checked(learned)
    assert "learned" not in tools.effective.summary()["task_execution"]
    assert "taken away: learned" in tools.effective.text.text()
    header = tools.model.headerData(
        tools.model.recipes.index(Recipe.TASK_EXECUTION), Qt.Orientation.Horizontal
    )
    assert header == "Task\n7/8"
    assert services.disciplines.get("backend").disabled_tools == ()
    assert pane.detail.save.isEnabled()
    assert "next session" in pane.detail.notice.text()

    pane.detail.save.click()
    settle(qtbot, window)

    assert services.disciplines.get("backend").disabled_tools == ("learned",)
    assert window.message_bar.text == "Saved discipline backend; the next session gets the change."
    assert not pane.detail.save.isEnabled()
    listed = listed_tools(services, task_id)
    assert "learned" not in listed
    assert listed == set(RECIPE_ALLOWED[Recipe.TASK_EXECUTION]) - {"learned"}


def test_a_tool_is_taken_away_by_its_row_control_in_every_recipe_and_a_cell_is_no_checkbox(
    qtbot: QtBot, window: MainWindow
) -> None:
    pane = open_discipline(qtbot, window, "frontend", TOOLS)
    model = pane.detail.tools.model
    allowed = [recipe for recipe in model.recipes if "list_tasks" in RECIPE_ALLOWED[recipe]]
    assert len(allowed) > 3
    yap = cell(model, "list_tasks", Recipe.YAP)
    assert not model.flags(yap) & Qt.ItemFlag.ItemIsUserCheckable  # a cell shows; it does not switch

    click(qtbot, pane.detail.tools.view, yap)
    assert model.disabled == frozenset()
    row_state = model.headerData(yap.row(), Qt.Orientation.Vertical, Qt.ItemDataRole.CheckStateRole)
    assert row_state == Qt.CheckState.Checked
    click_row(qtbot, pane.detail.tools.view, yap)

    assert not any(checked(cell(model, "list_tasks", recipe)) for recipe in allowed)
    assert model.disabled == {"list_tasks"}
    row_state = model.headerData(yap.row(), Qt.Orientation.Vertical, Qt.ItemDataRole.CheckStateRole)
    assert row_state == Qt.CheckState.Unchecked
    assert "in every recipe" in pane.detail.tools.legend.text()
    tip = cell(model, "list_tasks", Recipe.BRAINDUMP).data(Qt.ItemDataRole.ToolTipRole)
    assert "every other recipe" in tip

    pane.detail.tools.view.toggle_row(cell(model, "list_tasks", Recipe.YAP).row())

    assert all(checked(cell(model, "list_tasks", recipe)) for recipe in allowed)
    assert not pane.detail.dirty


def test_a_cell_the_recipe_does_not_allow_is_greyed_and_cannot_be_checked(
    qtbot: QtBot, window: MainWindow
) -> None:
    pane = open_discipline(qtbot, window, "backend", TOOLS)
    model = pane.detail.tools.model
    refused = cell(model, "create_discipline", Recipe.TASK_EXECUTION)
    assert "create_discipline" not in RECIPE_ALLOWED[Recipe.TASK_EXECUTION]

    assert refused.data(ALLOWED_ROLE) is False
    assert not model.flags(refused) & Qt.ItemFlag.ItemIsEnabled
    assert not model.flags(refused) & Qt.ItemFlag.ItemIsUserCheckable
    assert not checked(refused)
    assert refused.data(Qt.ItemDataRole.BackgroundRole) is not None
    click(qtbot, pane.detail.tools.view, refused)
    assert not model.setData(refused, Qt.CheckState.Checked, Qt.ItemDataRole.CheckStateRole)

    assert not checked(refused)
    assert model.disabled == frozenset()
    assert "does not allow it" in refused.data(Qt.ItemDataRole.ToolTipRole)


def test_a_discipline_that_takes_tools_away_shows_them_unchecked_where_allowed(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    pane = open_discipline(qtbot, window, "docs", TOOLS)
    model = pane.detail.tools.model

    assert model.disabled == set(services.disciplines.get("docs").disabled_tools) == {"learned", "suggest"}
    assert not checked(cell(model, "suggest", Recipe.TASK_EXECUTION))
    assert checked(cell(model, "done", Recipe.TASK_EXECUTION))
    assert model.effective(Recipe.TASK_EXECUTION) == ["done", "partial", "stuck", "ask", "flag", "blocked"]


def test_every_registry_tool_has_a_row_under_its_category_with_its_description(window: MainWindow) -> None:
    model = window.disciplines.detail.tools.model
    tool_rows = [entry for entry in model.rows if entry.tool is not None]
    headers = [row for row, entry in enumerate(model.rows) if entry.tool is None]

    assert [entry.tool.name for entry in tool_rows if entry.tool] == list(REGISTRY)
    assert model.headerData(headers[0], Qt.Orientation.Vertical) == "TASKS"
    row = next(row for row, entry in enumerate(model.rows) if entry.tool and entry.tool.name == "ask")
    tip = model.headerData(row, Qt.Orientation.Vertical, Qt.ItemDataRole.ToolTipRole)
    assert REGISTRY["ask"].description in tip
    recipe_tip = model.headerData(0, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert recipe_tip.startswith("braindump — ")


# --- fields and servers ---------------------------------------------------------------------


def test_editing_fields_and_saving_stores_them(qtbot: QtBot, window: MainWindow, services: Services) -> None:
    pane = open_discipline(qtbot, window, "testing")
    fields = pane.detail.fields

    fields.display_name.setText("Quality")
    fields.acronym.setText("QA2")
    fields.color.set_text("#123abc")
    fields.icon.setText("shield")
    fields.system_prompt.setPlainText("You break things on purpose.")
    fields.skills.setPlainText("pytest\nhypothesis\n")
    fields.conventions.setPlainText("Every bug gets a failing test first.")
    pane.detail.save.click()
    settle(qtbot, window)

    stored = services.disciplines.get("testing")
    assert (stored.display_name, stored.acronym, stored.color, stored.icon) == (
        "Quality",
        "QA2",
        "#123abc",
        "shield",
    )
    assert stored.system_prompt == "You break things on purpose."
    assert stored.skills == ("pytest", "hypothesis")
    assert stored.conventions == "Every bug gets a failing test first."


def test_an_invalid_colour_is_refused_with_the_services_message(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    pane = open_discipline(qtbot, window, "testing")
    pane.detail.fields.color.set_text("orange")

    pane.detail.save.click()
    settle(qtbot, window)

    assert "color" in window.message_bar.text and "#rrggbb" in window.message_bar.text
    assert services.disciplines.get("testing").color == "#f59e0b"


def test_adding_editing_and_removing_mcp_servers(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    pane = open_discipline(qtbot, window, "backend", SERVERS)
    servers = pane.detail.servers
    assert servers.stack.currentWidget() is servers.empty

    servers.add_button.click()
    settle(qtbot, window)
    dialog = servers.dialog
    assert dialog is not None
    dialog.name.setText("docs-search")
    dialog.url_kind.setChecked(True)
    dialog.url.setText("https://docs.example.com/mcp")
    dialog.headers.setPlainText("Authorization: Bearer abc")
    dialog.ok.click()
    settle(qtbot, window)
    servers.add_button.click()
    settle(qtbot, window)
    dialog = servers.dialog
    assert dialog is not None
    dialog.name.setText("db")
    dialog.command.setText("uvx")
    dialog.args.setPlainText("mcp-server-postgres\n--read-only")
    dialog.env.setPlainText("DATABASE_URL=postgres://localhost/tides")
    dialog.ok.click()
    settle(qtbot, window)
    pane.detail.save.click()
    settle(qtbot, window)

    stored = {spec.name: spec for spec in services.disciplines.get("backend").mcp_servers}
    assert stored["docs-search"] == McpServerSpec(
        name="docs-search", url="https://docs.example.com/mcp", headers={"Authorization": "Bearer abc"}
    )
    assert stored["db"] == McpServerSpec(
        name="db",
        command="uvx",
        args=("mcp-server-postgres", "--read-only"),
        env={"DATABASE_URL": "postgres://localhost/tides"},
    )
    assert "Bearer abc" not in "".join(
        str(servers.model.index(row, 3).data()) for row in range(servers.model.rowCount())
    )

    servers.table.selectRow(servers.model.row_of("db") or 0)
    servers.remove_selected()
    assert servers.confirm_box is not None
    servers.confirm_box.confirm_button.click()
    settle(qtbot, window)
    pane.detail.save.click()
    settle(qtbot, window)

    assert [spec.name for spec in services.disciplines.get("backend").mcp_servers] == ["docs-search"]


def test_the_reserved_server_name_cannot_be_chosen(qtbot: QtBot, window: MainWindow) -> None:
    pane = open_discipline(qtbot, window, "backend", SERVERS)
    pane.detail.servers.add_button.click()
    settle(qtbot, window)
    dialog = pane.detail.servers.dialog
    assert dialog is not None

    dialog.name.setText("ralph")
    dialog.command.setText("anything")

    assert not dialog.ok.isEnabled()
    assert "ralph-desk's own server" in dialog.problem.text()
    dialog.reject()


def test_creating_a_discipline_and_deleting_one_in_use_is_refused(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    window.show_pane("disciplines")
    pane = window.disciplines
    pane.new_button.click()
    settle(qtbot, window)
    dialog = pane.new_dialog
    assert dialog is not None
    dialog.display_name.setText("Data science")
    dialog.create_button.click()
    settle(qtbot, window)
    assert services.disciplines.get("data-science").display_name == "Data science"
    qtbot.waitUntil(lambda: pane.selected_name() == "data-science", timeout=WAIT_MS)

    open_discipline(qtbot, window, "backend")
    pane.delete_button.click()
    settle(qtbot, window)
    assert pane.confirm_box is not None
    pane.confirm_box.confirm_button.click()
    settle(qtbot, window)

    assert "discipline 'backend' is used by tasks" in window.message_bar.text
    assert "backend" in pane.names()


# --- models ---------------------------------------------------------------------------------


def test_the_discipline_models_pass_the_model_tester(qtmodeltester: ModelTester, services: Services) -> None:
    disciplines = DisciplineTableModel()
    disciplines.set_items(services.disciplines.list())
    servers = ServerTableModel()
    servers.set_items(list(services.disciplines.get("frontend").mcp_servers))
    matrix = ToolMatrixModel()
    matrix.load(["learned", "list_tasks"])

    qtmodeltester.check(disciplines)
    qtmodeltester.check(servers)
    qtmodeltester.check(matrix)
    matrix.set_enabled("list_tasks", True)
    qtmodeltester.check(matrix)
