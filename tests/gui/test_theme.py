"""Colours in one place: every state its own colour, light and dark palettes that follow the system."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import SessionOutcome, Severity, TaskStatus
from ralph_desk.gui import icons, theme
from ralph_desk.gui.main_window import MainWindow


@pytest.fixture
def dark(qapp: QApplication) -> Iterator[theme.ThemeWatcher]:
    """A palette follower whose system just switched to dark; light again afterwards."""
    watcher = theme.ThemeWatcher(qapp)
    theme.force_scheme(theme.Scheme.DARK)
    yield watcher
    theme.force_scheme(None)
    watcher.apply()
    watcher.deleteLater()


def test_every_session_outcome_has_a_colour() -> None:
    assert set(theme.OUTCOME_STATUS) == set(SessionOutcome)


@pytest.mark.parametrize("scheme", list(theme.Scheme))
def test_every_task_status_and_severity_has_its_own_colour(scheme: theme.Scheme) -> None:
    statuses = {theme.status_color(status, scheme).name() for status in TaskStatus}
    severities = {theme.severity_color(severity.value, scheme).name() for severity in Severity}

    assert len(statuses) == len(TaskStatus)
    assert len(severities) == len(Severity)


def test_the_dark_palette_is_dark_and_its_text_light() -> None:
    palette = theme.palette(theme.Scheme.DARK)

    assert palette.color(QPalette.ColorRole.Window).lightness() < 60
    assert palette.color(QPalette.ColorRole.WindowText).lightness() > 200


def test_a_switch_of_the_system_scheme_repaints_the_window_in_dark(
    qtbot: QtBot, window: MainWindow, dark: theme.ThemeWatcher
) -> None:
    dark.sig_changed.connect(window.refresh_style)

    with qtbot.waitSignal(dark.sig_changed, timeout=1000):
        dark._on_scheme_changed(Qt.ColorScheme.Dark)

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    assert app.palette().color(QPalette.ColorRole.Window) == QColor(theme.TONES[theme.Scheme.DARK].window)
    image = icons.pixmap("inbox", 24).toImage()
    lit = [
        image.pixelColor(x, y) for x in range(24) for y in range(24) if image.pixelColor(x, y).alpha() > 200
    ]
    assert lit and all(color.lightness() > 150 for color in lit)
