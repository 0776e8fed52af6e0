"""Shared plumbing of the batched scene items: palette, view state, levels of detail, pens, edge
shapes, and the `BatchItem` base class every tile item derives from.

Mutable view state (selection, search matches, highlight cone, source-line colours, palette) is
one shared `ViewState`; the view updates it and calls `update()` on the items concerned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem, QStyleOptionGraphicsItem

from jaxscope.layout import labels
from jaxscope.layout.edge_shape import ARROW_LEN, ARROW_W, STUB_LEN, arrowed, partial_edge  # noqa: F401 - ARROW_*: the items' sizes
from jaxscope.qt.graph.curve import add_curve
from jaxscope.qt.graph.scene_model import SceneModel
from jaxscope.render.styles import Theme
from jaxscope.render.svg import CARD_OFFSET  # drawn as the SVG export draws them

TEXT_LOD = 0.36  # below this scale an 11 px label would be under 4 px tall: no text
FAR_LOD = 0.12  # below this: fill-only rects and straight edges
TINY_PX = 8.0  # a tile smaller than this on screen is drawn as one rect (its edges not at all)
OUTLINE_W = 3.0  # selection outline, scene px (at least 2 device px)
MATCH_W = 2.0  # search-match outline
STRIPE_W = 7.0  # source-line colour stripe on a node's left edge: wide enough to see at the zoom that still shows text
DIM_OPACITY = 0.25  # nodes and edges outside a highlighted dataflow cone
BASELINE = 0.36 * labels.FONT_SIZE  # from a line's vertical centre to its baseline (as svg.py)
NODE_MARGIN = OUTLINE_W + CARD_OFFSET + 3.0  # how far a node's drawing may leave its box

Point = tuple[float, float]


# ---------------------------------------------------------------------------------- palette


def _colour(text: str, ink: str, opacity: float = 1.0) -> QColor:
    colour = QColor(ink if text == "currentColor" else text)
    if opacity < 1.0:
        colour.setAlphaF(opacity)
    return colour


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * t,
        a.greenF() + (b.greenF() - a.greenF()) * t,
        a.blueF() + (b.blueF() - a.blueF()) * t,
        max(a.alphaF(), b.alphaF()),
    )


@dataclass(slots=True)
class FamilyColours:
    fill: QColor
    border: QColor
    far: QColor  # fill at the far level of detail: pale fills vanish at that size


class Palette:
    """A Theme turned into QColors once, so paint() never parses colour strings."""

    def __init__(self, theme: Theme) -> None:
        ink = theme.ink
        self.theme = theme
        self.background: QColor | None = QColor(theme.background) if theme.background else None
        self.text = _colour(theme.text, ink)
        self.muted = _colour(theme.muted, ink, theme.muted_opacity)
        self.edge = _colour(theme.edge, ink, theme.edge_opacity)
        self.edge_unrouted = _colour(theme.edge_unrouted, ink, theme.unrouted_opacity)
        self.cluster_border = _colour(theme.cluster_border, ink)
        self.cluster_fills = [_colour(c, ink, theme.cluster_opacity) for c in theme.cluster_fills]
        self.backward_fills = [_colour(c, ink, theme.cluster_opacity) for c in theme.backward_fills] or self.cluster_fills
        self.title_text = _colour(theme.title_text, ink)
        self.opaque_clusters = theme.cluster_opacity >= 1.0
        dark = self.background is not None and self.background.lightnessF() < 0.5
        self.accent = QColor("#58a6ff" if dark else "#0969da")  # selection
        self.match = QColor("#e3b341" if dark else "#bf8700")  # search matches
        self.families: dict[str, FamilyColours] = {}
        for name, style in theme.families.items():
            fill = _colour(style.fill, ink, theme.fill_opacity)
            border = _colour(style.border, ink)
            self.families[name] = FamilyColours(fill, border, _mix(fill, border, 0.45))

    def family(self, name: str) -> FamilyColours:
        return self.families.get(name) or self.families["other"]

    def cluster_fill(self, depth: int, pass_: str = "") -> QColor:
        fills = self.backward_fills if pass_ == "backward" else self.cluster_fills
        return fills[min(max(depth, 1), len(fills)) - 1]


def label_font() -> QFont:
    """The labels' monospace font at `labels.FONT_SIZE` px, unhinted so it scales linearly."""
    font = QFont()
    font.setFamilies([name.strip() for name in labels.FONT_FAMILY.split(",")])
    font.setStyleHint(QFont.StyleHint.TypeWriter)
    font.setPixelSize(round(labels.FONT_SIZE))
    font.setHintingPreference(QFont.HintingPreference.PreferNoHinting)
    return font


class ViewState:
    """What the view changes and the items read while painting."""

    def __init__(self, palette: Palette) -> None:
        self.palette = palette
        self._font: QFont | None = None  # made on the first paint that draws text: a state (and
        self._metrics: QFontMetricsF | None = None  # its scene) can be made off the GUI thread
        self.selected: set[int] = set()  # record indices
        self.matches: set[int] = set()
        self.stripes: dict[int, QColor] = {}
        self.fills: dict[int, QColor] = {}  # a measure's fill per box (`QtGraphView.set_fills`), over its family's
        self.cone_nodes: set[int] | None = None  # None: no highlight
        self.cone_edges: set[int] = set()
        self.version = 0  # bumped whenever the cone changes (batched draw lists depend on it)
        self.selection_version = 0  # bumped whenever `selected` changes (the partial long edges depend on it)
        self.long_whole = False  # draw every long edge whole, even where there are many (see EdgeTileItem)

    @property
    def font_made(self) -> bool:
        """Whether text was drawn yet (the font is made then, on the GUI thread)."""
        return self._font is not None

    @property
    def font(self) -> QFont:
        if self._font is None:
            self._font = label_font()
        return self._font

    @property
    def metrics(self) -> QFontMetricsF:
        if self._metrics is None:
            self._metrics = QFontMetricsF(self.font)
        return self._metrics

    def reset(self, palette: Palette) -> None:
        """As new, in `palette` (a kept scene shown again: the view sets selection and the rest anew)."""
        self.palette = palette
        self.selected, self.matches, self.stripes = set(), set(), {}
        self.selection_version += 1
        if self.cone_nodes is not None:
            self.set_cone(None, set())

    def set_cone(self, nodes: set[int] | None, edges: set[int]) -> None:
        self.cone_nodes = nodes
        self.cone_edges = edges
        self.version += 1


# ---------------------------------------------------------------------------------- geometry


def edge_shapes(pts: Sequence[Point]) -> tuple[QPainterPath, QPolygonF | None]:
    """The curve (ending at the arrow's base, as the SVG export draws it) and the arrowhead triangle."""
    pts, arrowhead = arrowed(pts)
    arrow = QPolygonF([QPointF(x, y) for x, y in arrowhead]) if arrowhead is not None else None
    return add_curve(QPainterPath(), pts), arrow


def partial_shapes(pts: Sequence[Point], length: float = STUB_LEN) -> tuple[QPainterPath, QPolygonF | None]:
    """`edge_shapes` of an edge drawn as its two ends (`partial_edge`), or whole when it is short."""
    ends = partial_edge(pts, length)
    if ends is None:
        return edge_shapes(pts)
    head, tail = ends
    path = add_curve(QPainterPath(), head)
    curve, arrow = edge_shapes(tail)
    path.addPath(curve)
    return path, arrow


def scene_pen(colour: QColor, width: float, lod: float) -> QPen:
    """A pen `width` scene px wide, but never under one device px."""
    pen = QPen(colour, max(width, 1.0 / max(lod, 1e-6)))
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    return pen


def dashed(pen: QPen, on: float, off: float) -> QPen:
    w = max(pen.widthF(), 1e-6)
    pen.setDashPattern([on / w, off / w])
    return pen


def lod_of(painter: QPainter) -> float:
    return QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())


# ---------------------------------------------------------------------------------- items


_NO_PEN = QPen(Qt.PenStyle.NoPen)
_FLAGS = QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption  # the only flag a tile has


class BatchItem(QGraphicsRectItem):
    """Shared plumbing: a fixed bounding rect and the extended style option (exposedRect).

    A rect item with no pen, so that Qt's boundingRect() stays in C++: a Python override is
    called several times per item at every repaint (gpt-50k pans at zoom 1: 14-15 -> 11-13 ms).
    """

    def __init__(self, model: SceneModel, state: ViewState, bounds: QRectF) -> None:
        super().__init__(bounds)
        self.setPen(_NO_PEN)  # constants: ~9k tiles at 50k, and each enum lookup goes through Python
        self.model = model
        self.state = state
        self.setFlags(_FLAGS)

    def warm(self, lod: float) -> None:
        """Make what a paint at `lod` draws from, ahead (`scene_items.warm_items`); nothing here."""
