"""The node tiles: `NodeTileItem` paints the boxes of one tile at the level of detail of the
painter's scale (one blob, batched rects, or the full SVG look with shapes and text)."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QStyleOptionGraphicsItem, QWidget

from jaxscope.layout import labels
from jaxscope.qt.graph.batch_item import (
    BASELINE,
    CARD_OFFSET,
    DIM_OPACITY,
    FAR_LOD,
    MATCH_W,
    NODE_MARGIN,
    OUTLINE_W,
    STRIPE_W,
    TEXT_LOD,
    TINY_PX,
    BatchItem,
    FamilyColours,
    ViewState,
    dashed,
    lod_of,
    scene_pen,
)
from jaxscope.qt.graph.scene_index import NodeRec
from jaxscope.qt.graph.scene_model import SceneModel, commonest


def tiny_look(model: SceneModel, state: ViewState, tile: int) -> tuple[str, bool]:
    """(family, lit) of the one rect node tile `tile` is drawn as when tiny: its commonest family
    among the boxes in the highlight cone (lit), or among all of them (dimmed) if none is."""
    cone = state.cone_nodes
    if cone is None:
        return model.tile_families()[tile], True
    families = model.families
    lit = Counter(map(families.__getitem__, [i for i in model.node_tiles[tile] if i in cone]))
    return (commonest(lit), True) if lit else (model.tile_families()[tile], False)


ON_DARK = QColor("#ffffff")  # text on an overlay's dark fills


@functools.lru_cache(maxsize=256)
def filled(colour: str) -> FamilyColours:
    """The look of a box an overlay fills with `colour`: that fill, a darker border."""
    fill = QColor(colour)
    return FamilyColours(fill, fill.darker(160), fill)


class NodeTileItem(BatchItem):
    """The boxes of one tile; `painted` counts the boxes the last paint() drew (for tests)."""

    def __init__(self, model: SceneModel, state: ViewState, tile: int) -> None:
        self.extent = model.node_bounds[tile]  # the boxes' union, no margin
        super().__init__(model, state, self.extent.adjusted(-NODE_MARGIN, -NODE_MARGIN, NODE_MARGIN, NODE_MARGIN))
        self.tile = tile
        self.indices = model.node_tiles[tile]
        self._index_set: frozenset[int] | None = None  # no z of its own: it hangs under the node layer
        self.painted = 0
        self._groups: list[tuple[str, bool, list[QRectF]]] = []
        self._groups_version = -1
        self._tiny: tuple[str, bool] = ("other", True)
        self._tiny_version = -1

    @property
    def index_set(self) -> frozenset[int]:
        if self._index_set is None:
            self._index_set = frozenset(self.indices)
        return self._index_set

    def groups_made(self) -> list[tuple[str, bool, list[QRectF]]] | None:
        """The draw lists `groups` made for the current highlight, if they are made (ahead, with
        the model, for what the first paint shows); None until then."""
        return self._groups if self._groups_version == self.state.version else None

    def groups(self) -> list[tuple[str, bool, list[QRectF]]]:
        """Rects by (family, dimmed), for the batched levels of detail; rebuilt when the cone changes."""
        if self._groups_version != self.state.version:
            cone = self.state.cone_nodes
            by: dict[tuple[str, bool], list[QRectF]] = {}
            families, nodes, ids, fills = self.model.families, self.model.nodes, self.indices, self.state.fills
            # From the model's columns, not its records: a batched paint of a whole big drawing
            # would otherwise make every box's record. A box an overlay fills goes by its colour ("#...").
            for i, x, y, w, h in zip(ids, *(a[ids].tolist() for a in (nodes.x, nodes.y, nodes.w, nodes.h))):
                look = fills[i].name() if fills and i in fills else families[i]
                by.setdefault((look, cone is not None and i not in cone), []).append(QRectF(x, y, w, h))
            # dimmed first, so in-cone boxes are drawn over them
            self._groups = [(fam, dim, rects) for (fam, dim), rects in sorted(by.items(), key=lambda kv: not kv[0][1])]
            self._groups_version = self.state.version
        return self._groups

    def warm(self, lod: float) -> None:
        """Make what a batched paint at `lod` draws from (`scene_items.warm_items`)."""
        if TINY_PX <= max(self.extent.width(), self.extent.height()) * lod and lod < TEXT_LOD:
            self.groups()

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = lod_of(painter)
        if max(self.extent.width(), self.extent.height()) * lod < TINY_PX:
            self._paint_tiny(painter, lod)
        elif lod < TEXT_LOD:
            self._paint_batched(painter, lod)
        else:
            self._paint_full(painter, option.exposedRect, lod)

    # -- the whole tile is a few device px: one rect in its commonest family's colour

    def tiny_look(self) -> tuple[str, bool]:
        """`tiny_look` of this tile, made once per view-state version."""
        st = self.state
        if self._tiny_version != st.version:
            self._tiny = tiny_look(self.model, st, self.tile)
            self._tiny_version = st.version
        return self._tiny

    def _paint_tiny(self, painter: QPainter, lod: float) -> None:
        st = self.state
        fam, lit = self.tiny_look()
        painter.setOpacity(1.0 if lit else DIM_OPACITY)
        painter.fillRect(self.extent, st.palette.family(fam).far)
        painter.setOpacity(1.0)
        self.painted = len(self.indices)
        self._outlines(painter, lod, True)

    # -- batched (no text)

    def _paint_batched(self, painter: QPainter, lod: float) -> None:
        st, pal = self.state, self.state.palette
        far = lod < FAR_LOD
        count = 0
        for fam, dim, rects in self.groups():
            colours = pal.family(fam) if not fam.startswith("#") else filled(fam)
            painter.setOpacity(DIM_OPACITY if dim else 1.0)
            if far:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(colours.far)
            else:
                painter.setPen(QPen(colours.border, 0))
                painter.setBrush(colours.fill)
            painter.drawRects(rects)
            count += len(rects)
        painter.setOpacity(1.0)
        self.painted = count
        nodes = self.model.nodes
        if st.stripes and not far:
            for i in self.index_set.intersection(st.stripes):
                r = nodes[i].rect
                painter.fillRect(QRectF(r.left(), r.top(), STRIPE_W, r.height()), st.stripes[i])
        self._outlines(painter, lod, far)

    def _outlines(self, painter: QPainter, lod: float, far: bool) -> None:
        paint_outlines(painter, self.state, self.model.nodes, lod, far, self.index_set)

    # -- full detail

    def _paint_full(self, painter: QPainter, exposed: QRectF, lod: float) -> None:
        st, pal, nodes = self.state, self.state.palette, self.model.nodes
        cone = st.cone_nodes
        area = exposed.adjusted(-NODE_MARGIN, -NODE_MARGIN, NODE_MARGIN, NODE_MARGIN)
        painter.setFont(st.font)
        metrics = st.metrics
        opacity = 1.0
        count = 0
        outlined: list[int] = []
        for i in self.indices:
            rec = nodes[i]
            r = rec.rect
            if not r.intersects(area):
                continue
            count += 1
            want = DIM_OPACITY if cone is not None and i not in cone else 1.0
            if want != opacity:
                painter.setOpacity(want)
                opacity = want
            fill = st.fills.get(i)
            colours = pal.family(rec.fam) if fill is None else filled(fill.name())
            stripe = st.stripes.get(i)
            self._shape(painter, rec, colours, stripe)
            lines = rec.text_lines()
            top = r.center().y() - len(lines) * labels.LINE_H / 2
            cx = r.center().x()
            on_dark = fill is not None and fill.lightnessF() < 0.45
            for k, line in enumerate(lines):
                muted = k > 0 or rec.kind == "literal"
                painter.setPen(ON_DARK if on_dark else pal.muted if muted else pal.text)
                y = top + (k + 0.5) * labels.LINE_H + BASELINE
                painter.drawText(QPointF(cx - metrics.horizontalAdvance(line) / 2, y), line)
            if i in st.matches or i in st.selected:
                outlined.append(i)
        if opacity != 1.0:
            painter.setOpacity(1.0)
        for i in outlined:  # after every box, so a neighbour never covers an outline
            self._outline(painter, nodes[i], i in st.selected, lod)
        self.painted = count

    def _shape(self, painter: QPainter, rec: NodeRec, colours: FamilyColours, stripe: QColor | None) -> None:
        """The node's outline shape, like svg.py: rounded box, pill, dashed box or ellipse."""
        r = rec.rect
        kind = rec.kind
        if kind == "literal":
            pen, radius = QPen(colours.border, 1.0), -1.0
        elif kind in ("input", "output"):
            pen, radius = QPen(colours.border, 2.0 if kind == "output" else 1.4), min(r.height(), r.width()) / 2
        elif kind == "const":
            pen, radius = dashed(QPen(colours.border, 1.4), 4.0, 2.0), 2.0
        else:
            pen, radius = QPen(colours.border, 1.2), 4.0
            if rec.owner:
                painter.setPen(QPen(colours.border, 1.0))
                painter.setBrush(colours.fill)
                painter.drawRoundedRect(r.translated(CARD_OFFSET, CARD_OFFSET), 4.0, 4.0)
        painter.setBrush(colours.fill)
        if stripe is None:
            painter.setPen(pen)
            _draw_shape(painter, r, radius)
            return
        painter.setPen(Qt.PenStyle.NoPen)
        _draw_shape(painter, r, radius)
        clip = QPainterPath()
        if radius < 0:
            clip.addEllipse(r)
        else:
            clip.addRoundedRect(r, radius, radius)
        painter.save()
        painter.setClipPath(clip, Qt.ClipOperation.IntersectClip)
        painter.fillRect(QRectF(r.left(), r.top(), STRIPE_W, r.height()), stripe)
        painter.restore()
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        _draw_shape(painter, r, radius)

    def _outline(self, painter: QPainter, rec: NodeRec, selected: bool, lod: float) -> None:
        pal = self.state.palette
        colour, width = (pal.accent, OUTLINE_W) if selected else (pal.match, MATCH_W)
        pad = width / 2 + 1.5
        r = rec.rect.adjusted(-pad, -pad, pad, pad)
        painter.setPen(scene_pen(colour, width, lod / 2))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        if rec.kind == "literal":
            painter.drawEllipse(r)
        elif rec.kind in ("input", "output"):
            radius = min(r.height(), r.width()) / 2
            painter.drawRoundedRect(r, radius, radius)
        else:
            painter.drawRoundedRect(r, 5.0, 5.0)


def _draw_shape(painter: QPainter, r: QRectF, radius: float) -> None:
    if radius < 0:
        painter.drawEllipse(r)
    else:
        painter.drawRoundedRect(r, radius, radius)


def paint_outlines(
    painter: QPainter, st: ViewState, nodes: Sequence[NodeRec], lod: float, far: bool, within: frozenset[int] | None
) -> None:
    """Search matches and the selection among the boxes `within` (None: all of them)."""
    pal = st.palette
    painter.setBrush(Qt.BrushStyle.NoBrush)
    for ids, colour, width in ((st.matches, pal.match, MATCH_W), (st.selected, pal.accent, OUTLINE_W)):
        if not ids:  # the common case: no per-tile set to build
            continue
        mine = ids if within is None else within.intersection(ids)
        if not mine:
            continue
        pad = width / 2 + 1.0
        if far:  # the selection grows to a dot you can find; matches (maybe thousands) do not
            pad = max(pad, 2.0 / max(lod, 1e-6)) if ids is st.selected else 0.0
        rects = [nodes[i].rect.adjusted(-pad, -pad, pad, pad) for i in sorted(mine)]
        if far:
            pen = QPen(colour, 2.0)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.setBrush(colour)
            painter.drawRects(rects)
            painter.setBrush(Qt.BrushStyle.NoBrush)
        else:
            painter.setPen(scene_pen(colour, width, lod / 2))
            painter.drawRects(rects)


class OverviewItem(BatchItem):
    """The first `count` node tiles of `order` (the view's tiny ones: `SceneItems.set_scale`) as
    the one rect each is when tiny, in a few batched calls: the same picture without one Python
    paint() per tile (9k at gpt-50k's fit-all: most of a repaint). Drawn from the model, so it
    stands in for tiles whose items are not made yet. `painted` counts the boxes the last paint()
    stood for (for tests)."""

    def __init__(self, model: SceneModel, state: ViewState, order: list[int]) -> None:
        super().__init__(model, state, model.content.adjusted(-NODE_MARGIN, -NODE_MARGIN, NODE_MARGIN, NODE_MARGIN))
        self.order = order  # node tile indices (NodeRec.tile), smallest first
        self.count = 0
        self.setZValue(3.0)
        self.setVisible(False)
        self.painted = 0
        self._groups: list[tuple[tuple[str, bool], list[QRectF]]] = []
        self._key: tuple[int, int] = (-1, -1)  # (state version, count) the groups were made for
        self._looks: dict[int, tuple[str, bool]] = {}  # `tiny_look` by tile, for `_looks_version`
        self._looks_version = -1
        self._rank: list[int] = []  # the inverse of `order`

    def set_count(self, count: int) -> None:
        """Stand for the first `count` tiles (none: hidden)."""
        if count != self.count:
            self.count = count
            self.update()
        if self.isVisible() != (count > 0):
            self.setVisible(count > 0)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        st, count, model = self.state, self.count, self.model
        tiles = self.order[:count]
        if self._key != (st.version, count):
            if self._looks_version != st.version:
                self._looks, self._looks_version = {}, st.version
            looks = self._looks
            by: dict[tuple[str, bool], list[QRectF]] = {}
            bounds = model.node_bounds
            for t in tiles:
                look = looks.get(t)
                if look is None:
                    look = looks[t] = tiny_look(model, st, t)
                by.setdefault(look, []).append(bounds[t])
            self._groups = sorted(by.items(), key=lambda kv: kv[0][1])  # dimmed first, as the tiles
            self._key = (st.version, count)
            self.painted = sum(len(model.node_tiles[t]) for t in tiles)
        painter.setPen(Qt.PenStyle.NoPen)
        for (fam, lit), rects in self._groups:
            painter.setOpacity(1.0 if lit else DIM_OPACITY)
            painter.setBrush(st.palette.family(fam).far)
            painter.drawRects(rects)
        painter.setOpacity(1.0)
        paint_outlines(painter, st, model.nodes, lod_of(painter), True, None if count == len(self.order) else self.within(count))

    def within(self, count: int) -> frozenset[int]:
        """The selected and matching boxes in the first `count` tiles: the others' tiles outline them."""
        st = self.state
        if not (st.selected or st.matches):
            return frozenset()
        if not self._rank:
            self._rank = [0] * len(self.order)
            for k, t in enumerate(self.order):
                self._rank[t] = k
        rank, nodes = self._rank, self.model.nodes
        return frozenset(i for ids in (st.selected, st.matches) for i in ids if rank[nodes[i].tile] < count)
