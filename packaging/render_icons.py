"""Render the application icon's SVG into the PNG (Linux menus) and ICO (Windows) it ships as.

The SVG is the one source of truth; Qt's SVG renderer draws it at each size (so small sizes
are rendered, not downscaled blurs) and Pillow packs the Windows ICO. Run it after editing the
SVG and commit the outputs, so building a bundle needs neither step:

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/render_icons.py
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from PIL import Image
from PySide6.QtCore import QBuffer, QIODevice, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
SVG = ICONS / "storwatt.svg"
PNG_SIZE = 256
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)  # what Explorer and the Start menu ask for


def render(renderer: QSvgRenderer, size: int) -> Image.Image:
    """One square RGBA rendering of the SVG at ``size`` pixels."""
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # stub: bytes; PySide6: str only
    return Image.open(io.BytesIO(buffer.data().data())).convert("RGBA")


def main() -> int:
    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        print(f"render_icons: {SVG} is not a valid SVG", file=sys.stderr)
        return 1
    frames = {size: render(renderer, size) for size in ICO_SIZES}
    frames[PNG_SIZE].save(ICONS / "storwatt.png")
    largest = frames[max(ICO_SIZES)]
    largest.save(ICONS / "storwatt.ico", sizes=[(s, s) for s in ICO_SIZES],
                 append_images=[frames[s] for s in ICO_SIZES if s != max(ICO_SIZES)])
    print(f"wrote {ICONS / 'storwatt.png'} and {ICONS / 'storwatt.ico'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
