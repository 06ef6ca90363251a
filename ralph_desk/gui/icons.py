"""Icons drawn from the SVGs in `resources/icons`, tinted to the palette, and painted status dots."""

from __future__ import annotations

from functools import cache

from PySide6.QtCore import QByteArray, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QIconEngine, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from ralph_desk import resource_dir

DISABLED_OPACITY = 0.35
APP_ICON = "app"


@cache
def _svg(name: str) -> str:
    return (resource_dir() / "icons" / f"{name}.svg").read_text(encoding="utf-8")


class _SvgEngine(QIconEngine):
    """Renders an SVG at the size and pixel ratio asked for, once per size (disabled: faded)."""

    def __init__(self, svg: str, color: str | None) -> None:
        super().__init__()
        self._svg = svg
        self._color = color
        self._renderers: dict[str, QSvgRenderer] = {}
        self._cache: dict[tuple[int, int, int, float, str], QPixmap] = {}

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        """Draw into `rect` at the painter's pixel ratio."""
        device = painter.device()
        ratio = device.devicePixelRatioF() if device is not None else 1.0
        painter.drawPixmap(rect, self.scaledPixmap(rect.size(), mode, state, ratio))

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        """The icon at `size` logical pixels, ratio 1."""
        return self.scaledPixmap(size, mode, state, 1.0)

    def scaledPixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State, scale: float) -> QPixmap:
        """The icon at `size` logical pixels and pixel ratio `scale`."""
        color = self._color or _text_color().name()
        key = (size.width(), size.height(), int(mode.value), scale, color)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._render(self._renderer(color), size, mode, scale)
            self._cache[key] = cached
        return cached

    def _renderer(self, color: str) -> QSvgRenderer:
        renderer = self._renderers.get(color)
        if renderer is None:
            renderer = QSvgRenderer(QByteArray(self._svg.replace("currentColor", color).encode("utf-8")))
            self._renderers[color] = renderer
        return renderer

    def _render(self, renderer: QSvgRenderer, size: QSize, mode: QIcon.Mode, scale: float) -> QPixmap:
        width, height = max(1, round(size.width() * scale)), max(1, round(size.height() * scale))
        image = QPixmap(width, height)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if mode == QIcon.Mode.Disabled:
            painter.setOpacity(DISABLED_OPACITY)
        side = min(width, height)
        renderer.render(painter, QRectF((width - side) / 2, (height - side) / 2, side, side))
        painter.end()
        image.setDevicePixelRatio(scale)
        return image

    def clone(self) -> QIconEngine:
        """A copy of the engine."""
        return _SvgEngine(self._svg, self._color)


def _text_color() -> QColor:
    app = QApplication.instance()
    if isinstance(app, QApplication):
        return app.palette().color(QPalette.ColorRole.WindowText)
    return QColor("#1f2328")


_engines: list[_SvgEngine] = []


@cache
def _icon(name: str, color: str | None) -> QIcon:
    engine = _SvgEngine(_svg(name), color)
    _engines.append(engine)  # the icon refers to the engine; keep the Python side alive with it
    return QIcon(engine)


def icon(name: str, color: QColor | str | None = None) -> QIcon:
    """The icon `resources/icons/<name>.svg` in `color` (default: the palette's text colour when drawn)."""
    if color is None:
        return _icon(name, None)
    shade = QColor(color)
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
    _engines.clear()
