"""The interactive graph: select, search, dataflow highlight, expand and collapse, over batched
scene items; zoom and pan come from `ZoomPanView`.

The view is built from plain data (a `Graph` and its `Layout`), never from JAX: the window gets
both from the worker and the layout process and calls `set_graph` again (``keep_view=True``)
whenever a cluster is expanded or collapsed. Drawing lives in `scene_items` (a few tile items,
level of detail, no per-node QGraphicsItems), the scenes in `SceneCache`, what the user singled
out in `Focus`; this module wires them to the widget and its events.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QBrush,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPixmapCache,
)
from PySide6.QtWidgets import QGraphicsScene, QToolTip, QWidget

from jaxscope.layout.preview import Region
from jaxscope.qt.graph.batch_item import Palette, ViewState
from jaxscope.qt.graph.edge_items import EdgeTileItem
from jaxscope.qt.graph.focus import Focus
from jaxscope.qt.graph.node_items import NodeTileItem
from jaxscope.qt.graph.scene_cache import BuiltScene, SceneCache
from jaxscope.qt.graph.scene_model import SceneModel
from jaxscope.qt.graph.search import GraphSearch
from jaxscope.qt.graph.tooltips import box_tooltip, cluster_tooltip, tooltip_html
from jaxscope.qt.graph.zoom_pan import FIT_MAX_SCALE, fit_scale
from jaxscope.render.styles import Theme, get_theme
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.graph import Graph
from jaxscope.schema.layout import Layout

AA_MIN_SCALE = 0.5  # antialias when zoomed in this far (few nodes are visible then) ...
AA_MAX_NODES = 3000  # ... or when the whole graph is small enough to be cheap anyway
PIXMAP_CACHE_KB = 96 * 1024  # room for the long-edge layer's screenful (and Qt's own pixmaps)
HIT_SLOP = 2.0  # scene px of tolerance around a box for clicks
TILES_PER_TURN = 1000  # tile items made per event-loop turn after a first paint that needed none


class QtGraphView(GraphSearch):
    """A pannable, zoomable view of one laid-out graph (see the module docstring)."""

    selection_changed = Signal(list)  # base node paths, in selection order
    node_activated = Signal(str)  # double-click on a node that owns no sub-graphs
    toggle_cluster_requested = Signal(str)  # owner path: expand a collapsed owner or collapse a cluster

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # One scene per layout shown. The BSP index is kept: the items are a few thousand tile-sized
        # rects (no long thin per-edge items to bloat it, perf §4), and it spares Python
        # boundingRect() calls per paint.
        self._scene = QGraphicsScene(self)
        self.setScene(self._scene)
        # the long-edge layer's pixmap cache is a screenful (33 MB at 4K); Qt's default limit is 10 MB
        QPixmapCache.setCacheLimit(max(QPixmapCache.cacheLimit(), PIXMAP_CACHE_KB))
        self._theme: Theme = get_theme("light")
        self._state = ViewState(Palette(self._theme))
        self._long_whole = False  # see set_long_edges_whole
        self._model: SceneModel | None = None
        self._node_items: list[NodeTileItem] = []
        self.scenes = SceneCache(self)
        self.focus = Focus()
        self._line_colours: dict[str, str] = {}
        self._fills: dict[str, str] = {}  # `set_fills`
        self._anchor: tuple[str, QPoint] | None = None  # owner path + where it was, for keep_view
        self.last_paint: tuple[float, QRectF] | None = None  # the last paint's scale and scene rect (read on other threads)
        self._apply_background()
        self._update_detail()

    # ------------------------------------------------------------------ building

    def model_for(self, graph: Graph, layout: Layout, line_colours: dict[str, str] | None = None) -> SceneModel | None:
        """The scene model `set_graph(graph, layout)` would build, built now and warmed for a first
        paint, with the stripes of `line_colours` (by default the current ones), from any thread (it
        holds no QObject): None when a scene of that layout is kept (nothing to build)."""
        if self.scenes.is_kept(graph, layout):
            return None
        colours = self._line_colours if line_colours is None else line_colours
        # What carries over to the new scene needs its look-ups (read here from another thread:
        # if that changes meanwhile, the look-ups are made when first asked for)
        return self.scenes.build_ahead(
            graph, layout, self._theme, self._first_paint, long_whole=self._long_whole, lookups=self.focus.carries_over, colours=colours
        )

    def _first_paint(self, model: SceneModel) -> tuple[float, QRectF | None] | None:
        """The scale (and scene rect) of the first paint of `model`'s scene, if known ahead."""
        built, (vw, vh) = self.scenes.shown, self._viewport_px
        if (built is None or built.graph is not model.graph) and vw > 0:
            # A new graph is shown whole: its tiles' draw lists for that scale, made ahead too
            # (gpt_jit-50k: ~50 ms of a 67 ms first paint, 2-3x that while other threads run)
            return fit_scale(vw, vh, model.content, FIT_MAX_SCALE), None
        if built is not None and built.graph is model.graph:
            # A cluster of the graph shown was toggled: the view keeps its scale, and a grown
            # owner its top-left corner on screen, so the last paint's rect is the next one's
            # (gpt_jit-50k: ~45 ms of a 56 ms first paint after an expand)
            return self.last_paint
        return None

    def prepare_graph(self, graph: Graph) -> None:
        """From any thread, as soon as a trace's graph is here: resolve its top-level boxes for the
        model of its first layout, while the layout process lays it out (that model resolved every
        box itself: ~25 ms at 10k equations, ~0.1 s at 50k, between the layout's arrival and the
        first paint)."""
        self.scenes.prepare(graph)

    def set_graph(
        self,
        graph: Graph,
        layout: Layout,
        theme: Theme | str = "light",
        keep_view: bool = False,
        model: SceneModel | None = None,
        line_colours: dict[str, str] | None = None,
    ) -> None:
        """Rebuild the scene (in `theme`: pass the current one again when re-laying out); `model`,
        if it is `model_for(graph, layout)`'s, is used instead of building it here.

        With `keep_view` (after a cluster was toggled) the zoom and position stay, the toggled
        owner stays where it was on screen, and the selection, search matches and dataflow
        highlight carry over for the paths still drawn; otherwise all are reset and the view fits.
        Source-line colours carry over, or are `line_colours` (as `set_line_colours` takes them;
        given here, a new graph's are applied once, not twice at 50k boxes; kept, not copied: the
        same dict given to `model_for` is the stripes it made).
        """
        centre = self._view_centre()
        scale = self._scale()
        focus = self.focus
        old_selection = list(focus.selected)
        current = focus.current_match
        self._theme = get_theme(theme) if isinstance(theme, str) else theme
        self._switch_scene(graph, layout, model)
        model = self._model
        assert model is not None
        focus.forget_model()
        self._apply_background()
        if line_colours is not None:
            self._line_colours = line_colours
        self._apply_line_colours()
        kept = [p for p in old_selection if p in model.by_base] if keep_view else []
        self._set_selection(kept, emit=kept != old_selection)
        focus.matches, focus.match_index = [], -1
        highlight, focus.highlight = focus.highlight, None
        if keep_view:
            if focus.search_text:
                self.search(focus.search_text)
                if current in focus.matches:
                    focus.match_index = focus.matches.index(current)
            if highlight is not None and highlight[0].partition("#")[0] in model.by_base:
                self.highlight_dataflow(*highlight)
        else:
            focus.search_text = ""
        if keep_view and scale > 0:
            self.set_scale(scale)
            self._restore_anchor(centre)
        else:
            self._anchor = None
            self._auto_fit = True
            self.fit_all()
        self._update_detail()
        self.viewport().update()

    def preview_region(self, owner: str) -> Region | None:
        """What the view shows now and where `owner` is in it, for the toggle of `owner` it keeps
        the place of (a double-click; see `show_preview`); None for any other toggle."""
        anchor = self._anchor
        rect = self._owner_rect(owner) if anchor is not None and anchor[0] == owner else None
        if rect is None:
            return None
        shown = self.mapToScene(self.viewport().rect()).boundingRect()
        return Region(owner, rect.x(), rect.y(), shown.left(), shown.top(), shown.right(), shown.bottom())

    def show_preview(self, graph: Graph, part: Layout, model: SceneModel | None = None) -> None:
        """Show `part`, what the view will show of a re-layout of the graph shown after a cluster
        toggle (`layout_preview`), until that layout's own `set_graph`: at the scale and owner
        placement that will keep, with the selection drawn where it is in the part. The view's
        state (selection, search, highlight) is not touched: it carries over to the whole layout
        as it would have. `model`: `model_for(graph, part)`'s, if made. Painted before it returns:
        a preview is there to be on screen at once."""
        built = self.scenes.shown
        if built is None or built.graph is not graph or self._anchor is None:
            return  # only in front of the graph shown, for the toggle the anchor is kept for
        centre, scale, anchor = self._view_centre(), self._scale(), self._anchor
        self._switch_scene(graph, part, model, preview=True)
        self._apply_background()
        self._apply_line_colours()
        self._state.selected = self.focus.records_of(self._model, self.focus.selected)
        self.set_scale(scale)
        self._restore_anchor(centre)
        self._anchor = anchor  # the whole layout is put where the preview was
        self.viewport().repaint()

    def end_preview(self) -> None:
        """Back to the scene a preview stands in front of (its layout failed or was cancelled), as
        the view's state is now (the theme, the long-edge switch or the selection may have changed
        while the preview was shown)."""
        built = self.scenes.shown
        if built is None or not built.preview or self.scenes.held is None:
            return
        held, self.scenes.held = self.scenes.held, None
        self.scenes.drop(built)
        self._show(held)
        self._anchor = None
        self._state.selected = self.focus.records_of(self._model, self.focus.selected)
        self._state.selection_version += 1
        self._update_scene_rect()
        self._update_detail()
        self._restyle()

    @property
    def previewing(self) -> bool:
        """Whether a preview (`show_preview`) is on screen."""
        return self.scenes.shown is not None and self.scenes.shown.preview

    def _switch_scene(self, graph: Graph, layout: Layout, model: SceneModel | None = None, preview: bool = False) -> None:
        """Show a scene of `layout`: the one built for it earlier if it is still kept (a cluster
        collapsed and expanded again: no rebuild), else a new one. The scene shown until now is
        kept for a while if it is of the same graph and small enough."""
        scenes = self.scenes
        resolved = scenes.resolved_for(graph)
        built, scenes.shown = scenes.shown, None
        if built is not None and built.preview:  # it gives way: what it stood in front of is the old scene again
            scenes.drop(built)
            built, scenes.held = scenes.held, None
        if preview:  # kept as it is (neither cached nor dropped) until the whole layout replaces the preview
            scenes.held, built = built, None
        if built is not None:
            # a scene not kept is gone before the next one is built: both at once were 65 MB more
            # at 50k boxes (deleting takes ~80 ms)
            if not scenes.keep_or_drop(built, graph):
                self._model, self._node_items = None, []
                self.focus.forget_model()
            built = None
        scenes.drop_other_graphs(graph)
        again = scenes.take_kept(graph, layout)
        if again is not None:
            again.state.reset(Palette(self._theme))
            scenes.shown = again
            self._update_long_edges()  # the long item's pixmap cache holds the old palette and selection
        else:
            scenes.shown = scenes.build_scene(graph, layout, model, resolved, self._theme, preview)
        scenes.trim()
        self._show(scenes.shown)

    def _show(self, built: BuiltScene) -> None:
        """Make `built` the scene shown, drawing long edges as the view's switch says."""
        self.scenes.shown = built
        self._scene, self._model, self._node_items, self._state = built.scene, built.model, built.items.node_items, built.state
        self._state.long_whole = self._long_whole
        self.setScene(built.scene)
        if built.items.pending:
            QTimer.singleShot(0, self, self.make_pending_tiles)

    def make_pending_tiles(self) -> None:
        """Make the tile items of the scene shown that were left for after its first paint, a few
        per event-loop turn (~1k items: ~5 ms), so that the GUI answers meanwhile."""
        built = self.scenes.shown
        if built is None or not built.items.pending:
            return
        with gc_paused():
            done = built.items.make_tiles(TILES_PER_TURN)
        if not done:
            QTimer.singleShot(0, self, self.make_pending_tiles)

    def set_theme(self, theme: Theme | str) -> None:
        """Repaint in another theme (colours only; nothing is rebuilt)."""
        self._theme = get_theme(theme) if isinstance(theme, str) else theme
        self._restyle()

    def _restyle(self) -> None:
        """Draw the scene shown in the view's theme."""
        self._state.palette = Palette(self._theme)
        self._apply_background()
        self._apply_line_colours()
        self._update_all()

    @property
    def theme(self) -> Theme:
        return self._theme

    def set_long_edges_whole(self, whole: bool) -> None:
        """Draw every long edge whole (True), or, where there are many, as their two ends (the
        default; see `edge_items`): the edges of the selected boxes are whole either way."""
        self._long_whole = whole
        self._state.long_whole = whole
        self._update_long_edges()

    @property
    def long_edges_whole(self) -> bool:
        return self._long_whole

    @property
    def long_edges_partial(self) -> bool:
        """Whether the scene shown draws its long edges as their two ends."""
        long_item = self._long_item()
        return long_item is not None and long_item.partial

    def _long_item(self) -> EdgeTileItem | None:
        return self.scenes.shown.items.long_item if self.scenes.shown is not None else None

    def _update_long_edges(self) -> None:
        long_item = self._long_item()
        if long_item is not None:
            long_item.update()

    @property
    def model(self) -> SceneModel | None:
        """The scene model shown (None before the first graph)."""
        return self._model

    @property
    def view_state(self) -> ViewState:
        """What the tile items paint from: palette, selection, matches, dimming, long-edge mode."""
        return self._state

    @property
    def node_count(self) -> int:
        """How many boxes the scene draws (stub copies included)."""
        return len(self._model.nodes) if self._model is not None else 0

    def scene_node_rect(self, path: str) -> QRectF | None:
        """The scene rect of the box at `path` (exact, or the first box of a base path)."""
        model = self._model
        if model is None:
            return None
        i = model.by_path.get(path)
        if i is None:
            ids = model.by_base.get(path)
            if not ids:
                return None
            i = ids[0]
        return QRectF(model.nodes[i].rect)

    def has_content(self) -> bool:
        return self._model is not None

    def _escape(self) -> None:
        self.clear_selection()

    def content_rect(self) -> QRectF:
        """The drawing's extent in scene coordinates (the layout's width × height)."""
        return QRectF(self._model.content) if self._model is not None else QRectF()

    def _update_detail(self) -> None:
        """After a zoom: antialiasing only where it is cheap (zoomed in, or a small graph: perf §4),
        and the overview instead of the tiles that are tiny at this scale."""
        scale = self._scale()
        small = self.node_count <= AA_MAX_NODES
        self.setRenderHint(QPainter.RenderHint.Antialiasing, small or scale >= AA_MIN_SCALE)
        self.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        if self.scenes.shown is not None:
            self.scenes.shown.items.set_scale(scale)

    def _apply_background(self) -> None:
        bg = self._state.palette.background
        self.setBackgroundBrush(QBrush(bg) if bg is not None else QBrush(Qt.BrushStyle.NoBrush))

    # ------------------------------------------------------------------ selection

    def select_paths(self, paths: Iterable[str], center: bool = True) -> None:
        """Select every box whose base path is in `paths` (stub copies too); with `center`,
        centre them in the view (zooming out only if they do not fit)."""
        model = self._model
        wanted = [p.partition("#")[0] for p in paths]
        found = [p for p in dict.fromkeys(wanted) if model is not None and p in model.by_base]
        self._set_selection(found)
        if center and found:
            self._reveal(found)

    def selected_paths(self) -> list[str]:
        return list(self.focus.selected)

    def clear_selection(self) -> None:
        self._set_selection([])

    def _set_selection(self, paths: list[str], emit: bool = True) -> None:
        old = list(self.focus.selected)
        new_ids = self.focus.records_of(self._model, paths)
        changed_ids = new_ids ^ self._state.selected
        self.focus.selected = dict.fromkeys(paths)
        self._state.selected = new_ids
        self._update_nodes(changed_ids)
        if changed_ids:
            self._state.selection_version += 1
            if self.long_edges_partial:
                self._update_long_edges()
        if emit and paths != old:
            self.selection_changed.emit(list(paths))

    def _reveal(self, paths: list[str]) -> None:
        model = self._model
        assert model is not None
        rect = QRectF()
        for p in paths:
            for i in model.by_base[p]:
                rect = rect.united(model.nodes[i].rect)
        self.reveal_rect(rect)

    # ------------------------------------------------------------------ dataflow

    def dataflow_cone(self, path: str, direction: str = "both") -> set[str]:
        """Base paths of the nodes `path` depends on ("up"), that depend on it ("down"), or
        both, over the visible graph; `path` itself included; empty if it is not drawn."""
        return self.focus.cone(self._model, path, direction)

    def highlight_dataflow(self, path: str, direction: str = "both") -> None:
        """Dim everything outside the dataflow cone of `path` (see `dataflow_cone`)."""
        found = self.focus.cone_records(self._model, path, direction)
        if found is None:
            self.clear_highlight()
            return
        self._state.set_cone(*found)
        self.focus.highlight = (path, direction)
        self._update_all()

    def clear_highlight(self) -> None:
        self.focus.highlight = None
        if self._state.cone_nodes is not None:
            self._state.set_cone(None, set())
            self._update_all()

    @property
    def highlighted(self) -> bool:
        return self._state.cone_nodes is not None

    # ------------------------------------------------------------------ source-line colours

    def line_colours(self) -> dict[str, str]:
        return dict(self._line_colours)

    def set_line_colours(self, colours: dict[str, str]) -> None:
        """Colour a stripe on the left of each node in `colours` (base path -> ``#rrggbb``)."""
        self._line_colours = dict(colours)
        old = set(self._state.stripes)
        self._apply_line_colours()
        self._update_nodes(old | set(self._state.stripes))

    def _apply_line_colours(self) -> None:
        model = self._model
        self._state.stripes = model.stripes(self._line_colours) if model is not None and self._line_colours else {}
        self._state.fills = model.box_colours(self._fills) if model is not None and self._fills else {}

    def fills(self) -> dict[str, str]:
        """The fills shown (`set_fills`): base path -> colour."""
        return dict(self._fills)

    def set_fills(self, colours: dict[str, str]) -> None:
        """Fill each box in `colours` (base path -> ``#rrggbb``) with it instead of its family's: a
        measure drawn over the graph (`render.overlay`); {} for the families again."""
        self._fills = dict(colours)
        self._apply_line_colours()
        self._state.version += 1  # the batched draw lists group boxes by fill
        self._update_all()

    # ------------------------------------------------------------------ hit tests

    def node_at(self, scene_pos: QPointF) -> int | None:
        """The record index of the topmost box at `scene_pos` (within `HIT_SLOP`), or None."""
        if self._model is None:
            return None
        return self._model.node_at(scene_pos.x(), scene_pos.y(), HIT_SLOP)

    def path_at(self, viewport_pos: QPoint) -> str | None:
        """The base path of the node under a viewport position, or None."""
        i = self.node_at(self.mapToScene(viewport_pos))
        return self._model.nodes[i].base if i is not None and self._model is not None else None

    def cluster_title_at(self, scene_pos: QPointF) -> str | None:
        """The path of the cluster whose title band is at `scene_pos` (the deepest one)."""
        return self._model.cluster_title_at(scene_pos) if self._model is not None else None

    def tooltip_at(self, viewport_pos: QPoint) -> str:
        """Plain text for the tooltip at a viewport position ("" for nothing)."""
        model = self._model
        if model is None:
            return ""
        scene_pos = self.mapToScene(viewport_pos)
        i = self.node_at(scene_pos)
        if i is not None:
            return box_tooltip(model, i, self.long_edges_partial and i not in self._state.selected)
        cluster = self.cluster_title_at(scene_pos)
        return cluster_tooltip(model, cluster) if cluster is not None else ""

    # ------------------------------------------------------------------ events

    def paintEvent(self, event: QPaintEvent) -> None:
        self.last_paint = (self._scale(), self.mapToScene(self.viewport().rect()).boundingRect())
        super().paintEvent(event)

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            text = self.tooltip_at(event.pos())
            if text:
                QToolTip.showText(event.globalPos(), tooltip_html(text), self.viewport())
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().viewportEvent(event)

    def _click(self, pos: QPoint, modifiers: Qt.KeyboardModifier) -> None:
        i = self.node_at(self.mapToScene(pos))
        base = self._model.nodes[i].base if i is not None and self._model is not None else None
        ctrl, shift = (bool(modifiers & m) for m in (Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier))
        paths = self.focus.clicked(base, ctrl, shift)
        if paths is not None:
            self._set_selection(paths)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self._model is None:
            super().mouseDoubleClickEvent(event)
            return
        pos = event.position().toPoint()
        scene_pos = self.mapToScene(pos)
        i = self.node_at(scene_pos)
        model = self._model
        if i is not None:
            rec = model.nodes[i]
            if rec.owner:
                self._anchor = (rec.base, self.mapFromScene(rec.rect.topLeft()))
                self._auto_fit = False  # the user placed the view: a resize keeps it (as below)
                self.toggle_cluster_requested.emit(rec.base)
            else:
                self.node_activated.emit(rec.base)
        else:
            cluster = self.cluster_title_at(scene_pos)
            if cluster is not None:
                owner = cluster.rpartition(":")[0]
                self.keep_place_of(owner)
                self._auto_fit = False
                self.toggle_cluster_requested.emit(owner)
        event.accept()

    def keep_place_of(self, owner: str) -> None:
        """Keep `owner` where it is on screen through the re-layout of its toggle (what a
        double-click on its cluster title does; see `show_preview`)."""
        rect = self._owner_rect(owner)
        if rect is not None:
            self._anchor = (owner, self.mapFromScene(rect.topLeft()))

    def _owner_rect(self, owner: str) -> QRectF | None:
        return self._model.owner_rect(owner) if self._model is not None else None

    def _restore_anchor(self, centre: QPointF) -> None:
        anchor, self._anchor = self._anchor, None
        if anchor is not None:
            rect = self._owner_rect(anchor[0])
            if rect is not None:
                self.scroll_to(rect.topLeft(), anchor[1])
                return
        self.centre_at(centre)

    # ------------------------------------------------------------------ repaint helpers

    def _update_nodes(self, ids: Iterable[int]) -> None:
        model = self._model
        if model is None:
            return
        made = self._node_items
        for t in {model.nodes[i].tile for i in ids}:
            if t < len(made):  # a tile not made yet is tiny: the overview draws it
                made[t].update()
        if self.scenes.shown is not None and self.scenes.shown.items.overview.isVisible():
            self.scenes.shown.items.overview.update()

    def _update_all(self) -> None:
        for item in self._scene.items():
            item.update()
        self.viewport().update()
