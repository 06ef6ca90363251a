"""Icons drawn from the SVGs in `resources/icons`, tinted to the palette, and painted status dots."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

import ralph_desk

SIZES = (16, 20, 24, 32, 48, 64, 96)
APP_ICON = "app"


def resource_dir() -> Path:
    """The `resources/` folder: inside the installed package, else beside it in the source tree."""
    package = Path(ralph_desk.__file__).resolve().parent
    for candidate in (package / "resources", package.parent / "resources"):
        if (candidate / "icons").is_dir():
            return candidate
    raise FileNotFoundError(f"no resources/icons folder near {package}")


@cache
def _svg(name: str) -> str:
    return (resource_dir() / "icons" / f"{name}.svg").read_text(encoding="utf-8")


def _render(svg: str, size: int, ratio: float) -> QPixmap:
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    pixels = round(size * ratio)
    pixmap = QPixmap(pixels, pixels)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, pixels, pixels))
    painter.end()
    pixmap.setDevicePixelRatio(ratio)
    return pixmap


def _text_color() -> QColor:
    app = QApplication.instance()
    if isinstance(app, QApplication):
        return app.palette().color(QPalette.ColorRole.WindowText)
    return QColor("#1f2328")


@cache
def _icon(name: str, color: str) -> QIcon:
    svg = _svg(name).replace("currentColor", color)
    result = QIcon()
    for size in SIZES:
        for ratio in (1.0, 2.0):
            result.addPixmap(_render(svg, size, ratio))
    return result


def icon(name: str, color: QColor | str | None = None) -> QIcon:
    """The icon `resources/icons/<name>.svg`, its strokes in `color` (default: the text colour)."""
    shade = QColor(color) if color is not None else _text_color()
    return _icon(name, shade.name(QColor.NameFormat.HexArgb) if shade.alpha() < 255 else shade.name())


def pixmap(name: str, size: int, color: QColor | str | None = None) -> QPixmap:
    """The icon as a pixmap of `size` logical pixels."""
    return icon(name, color).pixmap(size, size)


def app_icon() -> QIcon:
    """The application's own icon (full colour)."""
    return _icon(APP_ICON, "none")


def dot(color: QColor) -> QIcon:
    """A filled status dot (`resources/icons/dot.svg`) in `color`."""
    return icon("dot", color)


def clear_cache() -> None:
    """Forget rendered icons (after the palette changed)."""
    _icon.cache_clear()
