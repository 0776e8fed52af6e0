"""SVG text -> PNG or PDF through QtSvg, headless; and an overview PNG painted from a layout.

`jaxscope.exporter` imports this module lazily, only for ``png`` and ``pdf``, so the other
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
import struct
import sys
import zlib

import numpy as np
from PySide6.QtCore import QByteArray, QMarginsF, QRectF, QSizeF, Qt
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QGuiApplication,
    QImage,
    QPageSize,
    QPainter,
    QPainterPath,
    QPdfWriter,
    QPen,
)
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from jaxscope.layout.edge_shape import partial_edge, partial_edges
from jaxscope.qt.graph.curve import add_curve
from jaxscope.render.styles import Theme, cluster_passes, family, get_theme
from jaxscope.render.svg import EDGE_W, HIGHLIGHT, HIGHLIGHT_PAD, HIGHLIGHT_W, svg_frame
from jaxscope.schema.graph import Graph, Node
from jaxscope.schema.layout import Layout, NodeBox

_app: QGuiApplication | None = None


def ensure_app() -> QGuiApplication:
    """The running Qt application, or a new headless-safe QApplication."""
    global _app
    app = QGuiApplication.instance()
    if app is not None:
        return app  # type: ignore[return-value]  # instance() is typed QCoreApplication; a GUI app is the only kind made here
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


FAST_PNG_PIXELS = 16_000_000  # above this many pixels, `_write_png` writes the file
FAST_PNG_LEVEL = 3  # its zlib level
PNG_BAND_ROWS = 128  # rows converted and compressed at a time (~2 MB each at 4400 px wide)

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


def svg_to_image(svg_text: str, dpi: int = 96, max_px: int = 16000) -> QImage:
    """`svg_text` rendered at `dpi` (96 = one pixel per px), the long side capped at `max_px`: the
    one raster of an SVG, for the PNG export and the window's clipboard image alike."""
    if dpi <= 0:
        raise ValueError(f"dpi must be positive, got {dpi}")
    renderer, w, h = _renderer(svg_text)
    image, scale = _canvas(w, h, dpi, max_px)
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
        renderer.render(painter, QRectF(0.0, 0.0, w * scale, h * scale))
    finally:
        painter.end()
    return image


def svg_to_png(svg_text: str, path: str, dpi: int = 96, max_px: int = 16000) -> tuple[int, int]:
    """Render `svg_text` to a PNG file at `dpi` (96 = one pixel per px); returns its pixel size."""
    return _save_png(svg_to_image(svg_text, dpi, max_px), path)


def _canvas(w: float, h: float, dpi: int, max_px: int, background: QColor | None = None) -> tuple[QImage, float]:
    """An image filled with `background` (None: transparent) for a `w` x `h` px drawing at `dpi`
    (long side capped at `max_px`), and its pixels per px."""
    scale = dpi / 96.0
    longest = max(w, h) * scale
    if longest > max_px:
        scale *= max_px / longest
    pw, ph = max(1, min(max_px, math.ceil(w * scale - 1e-6))), max(1, min(max_px, math.ceil(h * scale - 1e-6)))
    image = QImage(pw, ph, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent if background is None else background)
    dots_per_metre = round(96.0 * scale / 0.0254)
    image.setDotsPerMeterX(dots_per_metre)
    image.setDotsPerMeterY(dots_per_metre)
    return image, scale


def _save_png(image: QImage, path: str) -> tuple[int, int]:
    if image.width() * image.height() > FAST_PNG_PIXELS:
        _write_png(image, path, FAST_PNG_LEVEL)
    elif not image.save(path, "PNG"):  # type: ignore[call-overload]  # str works, bytes raise: the stubs are wrong
        raise OSError(f"could not write PNG {path!r}")
    return image.width(), image.height()


def _write_png(image: QImage, path: str, level: int) -> None:
    """A big image as an RGBA PNG, written a band of rows at a time with no row filter: a 16000 x
    4400 drawing (flat colours on transparency) in 1.8 s and 8.9 MB, where Qt's writer took 3.7 s
    and 9.4 MB at a speed-leaning level (its adaptive row filters), and no second full-size copy
    of the image is made."""
    w, h = image.width(), image.height()

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(tag)))

    pack = zlib.compressobj(level)
    try:
        with open(path, "wb") as fh:
            fh.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)))
            fh.write(chunk(b"pHYs", struct.pack(">IIB", image.dotsPerMeterX(), image.dotsPerMeterY(), 1)))
            for top in range(0, h, PNG_BAND_ROWS):
                band = image.copy(0, top, w, min(PNG_BAND_ROWS, h - top)).convertToFormat(QImage.Format.Format_RGBA8888)
                n, stride = band.height(), band.bytesPerLine()
                rows = np.zeros((n, 1 + 4 * w), np.uint8)  # a 0 (no filter) byte, then the row's RGBA
                rows[:, 1:] = np.frombuffer(band.constBits(), np.uint8, count=n * stride).reshape(n, stride)[:, : 4 * w]
                data = pack.compress(rows.data)
                if data:
                    fh.write(chunk(b"IDAT", data))
            fh.write(chunk(b"IDAT", pack.flush()) + chunk(b"IEND", b""))
    except OSError as exc:
        raise OSError(f"could not write PNG {path!r}: {exc.strerror or exc}") from exc


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


def overview_png(
    graph: Graph,
    layout: Layout,
    path: str,
    *,
    theme: str = "light",
    title: str | None = None,
    legend: bool = False,
    highlight: frozenset[str] = frozenset(),
    dpi: int = 96,
    max_px: int = 16000,
    long_edges: str = "auto",
) -> tuple[int, int]:
    """A PNG of `layout` sized as `svg_to_png` sizes its SVG, drawn straight from the layout with
    QPainter: for a drawing scaled down until its labels are unreadable (`exporter` decides), where
    writing an SVG only to parse it again cost 2.8 of 10 s at 50k equations.

    The same canvas as `render_svg`'s document (title band and legend rows included, though their
    text, like the labels, is too small to read) with clusters, edges and node shapes in the theme's
    colours, and the `highlight` outlines; no labels or arrowheads."""
    ensure_app()
    t = get_theme(theme)
    width, height, top, boxes = svg_frame(graph, layout, theme=theme, title=title, legend=legend)
    image, scale = _canvas(width, height, dpi, max_px, None if t.background is None else _colour(t.background))
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.scale(scale, scale)
        painter.translate(0.0, top)
        _paint_clusters(painter, layout, t, cluster_passes(graph))
        _paint_edges(painter, layout, t, partial_edges(layout, long_edges))
        _paint_nodes(painter, boxes, t)
        if highlight:
            colour = _colour(HIGHLIGHT.get(t.name, HIGHLIGHT["light"]))
            painter.setPen(QPen(colour, HIGHLIGHT_W))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            pad = HIGHLIGHT_PAD
            painter.drawRects(
                [
                    QRectF(b.x - b.w / 2 - pad, b.y - b.h / 2 - pad, b.w + 2 * pad, b.h + 2 * pad)
                    for b, _ in boxes
                    if b.path.partition("#")[0] in highlight
                ]
            )
    finally:
        painter.end()
    return _save_png(image, path)


def _colour(text: str, opacity: float = 1.0) -> QColor:
    colour = QColor("#000000" if text == "currentColor" else text)  # QtSvg's currentColor is black too
    colour.setAlphaF(opacity)
    return colour


def _paint_clusters(painter: QPainter, layout: Layout, t: Theme, passes: dict[str, str]) -> None:
    painter.setPen(QPen(_colour(t.cluster_border), 1.0))
    for c in sorted(layout.clusters, key=lambda c: c.depth):
        painter.setBrush(_colour(t.cluster_fill(c.depth, passes.get(c.path, "")), t.cluster_opacity))
        painter.drawRoundedRect(QRectF(c.x, c.y, c.w, c.h), 6.0, 6.0)


def _paint_edges(painter: QPainter, layout: Layout, t: Theme, partial: frozenset[int] = frozenset()) -> None:
    """The edges, the `partial` ones as their two ends (`layout.edge_shape`), in one path per style."""
    groups: dict[bool, QPainterPath] = {True: QPainterPath(), False: QPainterPath()}
    for j, e in enumerate(layout.edges):
        pts = e.points
        if len(pts) < 2:
            continue
        path = groups[e.routed]
        ends = partial_edge(pts) if j in partial else None
        for part in ends if ends is not None else (pts,):
            add_curve(path, part)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    for routed, path in groups.items():
        colour = _colour(t.edge, t.edge_opacity) if routed else _colour(t.edge_unrouted, t.edge_opacity * t.unrouted_opacity)
        pen = QPen(colour, EDGE_W)
        if not routed:
            pen.setDashPattern([5.0 / EDGE_W, 4.0 / EDGE_W])
        painter.setPen(pen)
        painter.drawPath(path)


def _paint_nodes(painter: QPainter, boxes: list[tuple[NodeBox, Node | None]], t: Theme) -> None:
    """Rects and ellipses batched by colour: corner radii are far below a pixel at these scales."""
    groups: dict[tuple[str, bool], list[QRectF]] = {}
    for b, node in boxes:
        fam = family(node) if node is not None else "other"
        groups.setdefault((fam, node is not None and node.kind == "literal"), []).append(QRectF(b.x - b.w / 2, b.y - b.h / 2, b.w, b.h))
    for (fam, ellipse), rects in groups.items():
        style = t.style(fam)
        painter.setPen(QPen(_colour(style.border), 1.2))
        painter.setBrush(_colour(style.fill, t.fill_opacity))
        if ellipse:
            for r in rects:
                painter.drawEllipse(r)
        else:
            painter.drawRects(rects)
