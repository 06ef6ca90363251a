"""Render the app's SVG icon (`resources/icons/app.svg`) as a square PNG, with Qt offscreen.

    python packaging/render_icon.py [SVG] [PNG] [SIZE]

Defaults: resources/icons/app.svg → packaging/ralph-desk.png at 256×256, the icon the desktop entry
installs. Re-run it after changing app.svg (a test compares the two).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SVG = HERE.parent / "resources" / "icons" / "app.svg"
DEFAULT_PNG = HERE / "ralph-desk.png"
DEFAULT_SIZE = 256


def render(svg: Path, png: Path, size: int = DEFAULT_SIZE) -> None:
    """Draw `svg` into a transparent `size`×`size` PNG at `png`."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QByteArray, QRectF, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
    # The app shows its icon with `currentColor` as "none" (ralph_desk.gui.icons.app_icon).
    data = svg.read_text(encoding="utf-8").replace("currentColor", "none").encode("utf-8")
    renderer = QSvgRenderer(QByteArray(data))
    if not renderer.isValid():
        raise ValueError(f"{svg} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    png.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(png), "PNG"):
        raise OSError(f"could not write {png}")
    del app


def main(argv: list[str]) -> int:
    svg = Path(argv[0]) if len(argv) > 0 else DEFAULT_SVG
    png = Path(argv[1]) if len(argv) > 1 else DEFAULT_PNG
    size = int(argv[2]) if len(argv) > 2 else DEFAULT_SIZE
    render(svg, png, size)
    print(f"{png} ({size}×{size}) from {svg}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
