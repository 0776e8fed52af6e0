"""SVG text -> PNG or PDF through QtSvg, headless.

`jaxscope.core.export` imports this module lazily, only for ``png`` and ``pdf``, so the other
formats never load Qt. Rendering needs a QGuiApplication (fonts); one is created when none
exists. With no DISPLAY / WAYLAND_DISPLAY and no QT_QPA_PLATFORM on Linux and other X11
systems, QT_QPA_PLATFORM is set to ``offscreen`` first: without it Qt aborts the process.

Sizes: the SVG's viewBox is in CSS px (96 per inch), so a PNG at `dpi` has ``dpi / 96`` pixels
per px (the long side capped at `max_px`, the dpi recorded in the file scaled to match), and a
PDF page is the drawing's size at 96 px per inch.

QtSvg (6.11) takes a ``font-family`` list such as ``DejaVu Sans Mono, Menlo, monospace`` as one
family name and falls back to a proportional font, so each list is narrowed to its first
installed family before rendering.
"""

from __future__ import annotations

import math
import os
import re
import sys

from PySide6.QtCore import QByteArray, QMarginsF, QRectF, QSizeF, Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication, QImage, QPageSize, QPainter, QPdfWriter
from PySide6.QtWidgets import QApplication
from PySide6.QtSvg import QSvgRenderer

_app: QGuiApplication | None = None


def ensure_app() -> QGuiApplication:
    """The running Qt application, or a new headless-safe QApplication."""
    global _app
    app = QGuiApplication.instance()
    if app is not None:
        return app  # type: ignore[return-value]
    if (
        sys.platform not in ("win32", "darwin")
        and not os.environ.get("DISPLAY")
        and not os.environ.get("WAYLAND_DISPLAY")
        and not os.environ.get("QT_QPA_PLATFORM")
    ):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    # a QApplication, not a QGuiApplication: in a process that later shows widgets (a test run, a
    # notebook opening the app) a GUI-only application would make the first QWidget abort
    _app = QApplication([sys.argv[0] if sys.argv and sys.argv[0] else "jaxscope"])
    return _app


FAST_PNG_PIXELS = 16_000_000  # above this many pixels, compress for speed
FAST_PNG_QUALITY = 80  # Qt's PNG "quality" picks zlib's level: higher is faster, bigger

_FONT_LIST = re.compile(r"""font-family=(["'])([^"']*,[^"']*)\1""")
_GENERIC = {"monospace", "sans-serif", "serif"}


def narrow_font_lists(svg_text: str) -> str:
    """`svg_text` with every ``font-family`` list replaced by its first installed family."""
    if not _FONT_LIST.search(svg_text):
        return svg_text
    installed = {name.casefold() for name in QFontDatabase.families()}

    def pick(match: re.Match[str]) -> str:
        names = [n.strip().strip("'\"").strip() for n in match.group(2).split(",")]
        names = [n for n in names if n]
        chosen = next((n for n in names if n.casefold() in installed or n in _GENERIC), names[-1] if names else "")
        return f"font-family={match.group(1)}{chosen}{match.group(1)}"

    return _FONT_LIST.sub(pick, svg_text)


def _renderer(svg_text: str) -> tuple[QSvgRenderer, float, float]:
    ensure_app()
    renderer = QSvgRenderer(QByteArray(narrow_font_lists(svg_text).encode("utf-8")))
    if not renderer.isValid():
        raise ValueError("the SVG could not be parsed by QtSvg")
    box = renderer.viewBoxF()
    w, h = box.width(), box.height()
    if w <= 0 or h <= 0:
        size = renderer.defaultSize()
        w, h = float(size.width()), float(size.height())
    if w <= 0 or h <= 0:
        raise ValueError("the SVG has no size")
    renderer.setAspectRatioMode(Qt.AspectRatioMode.KeepAspectRatio)
    return renderer, w, h


def svg_to_png(svg_text: str, path: str, dpi: int = 96, max_px: int = 16000) -> tuple[int, int]:
    """Render `svg_text` to a PNG file at `dpi` (96 = one pixel per px); returns its pixel size."""
    if dpi <= 0:
        raise ValueError(f"dpi must be positive, got {dpi}")
    renderer, w, h = _renderer(svg_text)
    scale = dpi / 96.0
    longest = max(w, h) * scale
    if longest > max_px:
        scale *= max_px / longest
    pw, ph = max(1, min(max_px, math.ceil(w * scale - 1e-6))), max(1, min(max_px, math.ceil(h * scale - 1e-6)))
    image = QImage(pw, ph, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    dots_per_metre = round(96.0 * scale / 0.0254)
    image.setDotsPerMeterX(dots_per_metre)
    image.setDotsPerMeterY(dots_per_metre)
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
        renderer.render(painter, QRectF(0.0, 0.0, w * scale, h * scale))
    finally:
        painter.end()
    # zlib's default level spent 4.7 s of 6 on a 16000x4400 image; a lighter one: 2.4 s, 25% bigger file
    quality = FAST_PNG_QUALITY if pw * ph > FAST_PNG_PIXELS else -1
    if not image.save(path, "PNG", quality):
        raise OSError(f"could not write PNG {path!r}")
    return pw, ph


def svg_to_pdf(svg_text: str, path: str, title: str = "") -> None:
    """Render `svg_text` to a one-page vector PDF the size of the drawing."""
    renderer, w, h = _renderer(svg_text)
    writer = QPdfWriter(path)
    writer.setCreator("jaxscope")
    if title:
        writer.setTitle(title)
    writer.setResolution(96)
    writer.setPageSize(QPageSize(QSizeF(w * 72.0 / 96.0, h * 72.0 / 96.0), QPageSize.Unit.Point, "jaxscope"))
    writer.setPageMargins(QMarginsF(0.0, 0.0, 0.0, 0.0))
    painter = QPainter()
    if not painter.begin(writer):
        raise OSError(f"could not write PDF {path!r}")
    try:
        renderer.render(painter, QRectF(0.0, 0.0, w, h))
    finally:
        painter.end()
