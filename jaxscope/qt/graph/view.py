"""The interactive graph: pan, zoom, select, search, dataflow highlight, over batched scene items.

The view is built from plain data (a `Graph` and its `Layout`), never from JAX: the window gets
both from the worker and the layout process and calls `set_graph` again (``keep_view=True``)
whenever a cluster is expanded or collapsed. Drawing lives in `graph_items` (a few tile items,
level of detail, no per-node QGraphicsItems); this module keeps the interaction state and the
queries: hit tests through the tiles' buckets, dataflow cones over a networkx DiGraph, search.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QBrush,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPixmapCache,
    QResizeEvent,
    QTransform,
    QWheelEvent,
)
from PySide6.QtWidgets import QApplication, QFrame, QGraphicsScene, QGraphicsView, QToolTip, QWidget

from jaxscope.analysis.graph_query import Dataflow, SearchIndex
from jaxscope.layout.edge_shape import draws_partial
from jaxscope.layout.preview import Region
from jaxscope.qt.graph.batch_item import Palette, ViewState
from jaxscope.qt.graph.edge_items import EdgeTileItem
from jaxscope.qt.graph.node_items import NodeTileItem
from jaxscope.qt.graph.scene_cache import Ahead, BuiltScene, SceneCache
from jaxscope.qt.graph.scene_items import SceneItems, build_items, warm_items
from jaxscope.qt.graph.scene_model import SceneModel, build_model
from jaxscope.render.styles import Theme, get_theme
from jaxscope.render.svg import node_tooltip
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.graph import Graph
from jaxscope.schema.layout import Layout

MAX_SCALE = 4.0
FIT_MAX_SCALE = 1.25  # fit_all never blows a small graph up beyond this
FIT_PADDING = 16  # viewport px around the drawing after fit_all
ZOOM_STEP = 1.25
AA_MIN_SCALE = 0.5  # antialias when zoomed in this far (few nodes are visible then) ...
AA_MAX_NODES = 3000  # ... or when the whole graph is small enough to be cheap anyway
PIXMAP_CACHE_KB = 96 * 1024  # room for the long-edge layer's screenful (and Qt's own pixmaps)
HIT_SLOP = 2.0  # scene px of tolerance around a box for clicks
def fit_scale(width: int, height: int, rect: QRectF, max_scale: float) -> float:
    """The scale that shows `rect` whole in a viewport of `width` x `height` px (with `FIT_PADDING`)."""
    w, h = max(width - 2 * FIT_PADDING, 10), max(height - 2 * FIT_PADDING, 10)
    return min(w / max(rect.width(), 1e-6), h / max(rect.height(), 1e-6), max_scale)


TILES_PER_TURN = 1000  # tile items made per event-loop turn after a first paint that needed none


def tooltip_html(text: str) -> str:
    """QToolTip reads rich text: user strings (labels, params, file names) are escaped, and the
    lines kept as they are, in monospace."""
    return f"<pre>{html.escape(text, quote=False)}</pre>"


class QtGraphView(QGraphicsView):
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
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing, True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self._theme: Theme = get_theme("light")
        self._state = ViewState(Palette(self._theme))
        self._long_whole = False  # see set_long_edges_whole
        self._model: SceneModel | None = None
        self._node_items: list[NodeTileItem] = []
        self.scenes = SceneCache(self)
        self._selected: dict[str, None] = {}  # base paths, ordered
        self._dag: Dataflow | None = None
        self._search_keys: SearchIndex | None = None
        self._search_text = ""
        self._matches: list[str] = []
        self._match_index = -1
        self._highlight: tuple[str, str] | None = None  # (path, direction) of the dataflow cone shown
        self._line_colours: dict[str, str] = {}
        self._auto_fit = True  # refit on resize until the user moves the view
        self._press: QPoint | None = None
        self._press_button = Qt.MouseButton.NoButton
        self._last: QPoint = QPoint()
        self._panning = False
        self._anchor: tuple[str, QPoint] | None = None  # owner path + where it was, for keep_view
        self._viewport_px = (0, 0)  # its last size, for `model_for` on another thread (read, not asked of Qt)
        self.last_paint: tuple[float, QRectF] | None = None  # the last paint's scale and scene rect, likewise
        self._apply_background()
        self._update_detail()

    # ------------------------------------------------------------------ building

    def model_for(self, graph: Graph, layout: Layout, line_colours: dict[str, str] | None = None) -> SceneModel | None:
        """The scene model `set_graph(graph, layout)` would build, built now and warmed for a first
        paint, with the stripes of `line_colours` (by default the current ones), from any thread (it
        holds no QObject): None when a scene of that layout is kept (nothing to build)."""
        if self.scenes.is_kept(graph, layout):
            return None
        # the model is frozen once built: else the next collection, on whichever thread, rescans
        # it all (gpt-50k: a 263 ms pause of the GUI thread)
        with gc_paused(freeze=graph):
            model = build_model(graph, layout, self.scenes.resolved_for(graph))
            # What carries over to the new scene needs its look-ups (read here from another thread:
            # if that changes meanwhile, the look-ups are made when first asked for)
            carried = bool(self._selected or self._highlight or self._search_text)
            model.warm(long_lines=not draws_partial(len(model.long_edges), self._long_whole), lookups=carried)
            colours = self._line_colours if line_colours is None else line_colours
            if colours:
                model.stripes(colours)
            # The scene's items too (not in a scene yet, they belong to no thread): ~9k tiles at
            # gpt-50k took 0.07-0.1 s of the GUI thread. Only the last ones are kept for `set_graph`.
            state, items = self._new_items(model, tiles=False)
            built, (vw, vh) = self.scenes.shown, self._viewport_px
            first: tuple[float, QRectF | None] | None = None  # the first paint's scale (and rect)
            if (built is None or built.graph is not graph) and vw > 0:
                # A new graph is shown whole: its tiles' draw lists for that scale, made here too
                # (gpt_jit-50k: ~50 ms of a 67 ms first paint, 2-3x that while other threads run)
                first = (fit_scale(vw, vh, model.content, FIT_MAX_SCALE), None)
            elif built is not None and built.graph is graph and (seen := self.last_paint) is not None:
                # A cluster of the graph shown was toggled: the view keeps its scale, and a grown
                # owner its top-left corner on screen, so the last paint's rect is the next one's
                # (gpt_jit-50k: ~45 ms of a 56 ms first paint after an expand)
                first = seen
            if first is None or not items.all_tiny(first[0]):  # else the tiles are made after the first paint
                items.make_tiles()
            if first is not None:
                warm_items(items, *first)
            self.scenes.put_ahead(Ahead(model, state, items))
            return model

    def prepare_graph(self, graph: Graph) -> None:
        """From any thread, as soon as a trace's graph is here: resolve its top-level boxes for the
        model of its first layout, while the layout process lays it out (that model resolved every
        box itself: ~25 ms at 10k equations, ~0.1 s at 50k, between the layout's arrival and the
        first paint)."""
        self.scenes.prepare(graph)

    def _new_items(self, model: SceneModel, tiles: bool = True) -> tuple[ViewState, SceneItems]:
        """A fresh view state in the current theme and the scene items of `model` drawing from it
        (without `tiles`, its tile items are made later: `SceneItems.make_tiles`)."""
        state = ViewState(Palette(self._theme))
        return state, build_items(model, state, tiles)

    def set_graph(
        self, graph: Graph, layout: Layout, theme: Theme | str = "light", keep_view: bool = False,
        model: SceneModel | None = None, line_colours: dict[str, str] | None = None,
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
        old_selection = list(self._selected)
        current = self._matches[self._match_index] if self._match_index >= 0 else None
        self._theme = get_theme(theme) if isinstance(theme, str) else theme
        self._switch_scene(graph, layout, model)
        model = self._model
        assert model is not None
        self._dag = None
        self._search_keys = None
        self._apply_background()
        if line_colours is not None:
            self._line_colours = line_colours
        self._apply_line_colours()
        kept = [p for p in old_selection if p in model.by_base] if keep_view else []
        self._set_selection(kept, emit=kept != old_selection)
        self._matches, self._match_index = [], -1
        highlight, self._highlight = self._highlight, None
        if keep_view:
            if self._search_text:
                self.search(self._search_text)
                if current in self._matches:
                    self._match_index = self._matches.index(current)
            if highlight is not None and highlight[0].partition("#")[0] in model.by_base:
                self.highlight_dataflow(*highlight)
        else:
            self._search_text = ""
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
        self._state.selected = self._records_of(self._selected)
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
        self._state.selected = self._records_of(self._selected)
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
                self._model, self._node_items, self._dag, self._search_keys = None, [], None, None
            built = None
        scenes.drop_other_graphs(graph)
        again = scenes.take_kept(graph, layout)
        if again is not None:
            again.state.reset(Palette(self._theme))
            scenes.shown = again
            self._update_long_edges()  # the long item's pixmap cache holds the old palette and selection
        else:
            scene = QGraphicsScene(self)
            # ~10 small objects per node; the collector would rescan them all (100 ms at 50k boxes)
            with gc_paused(freeze=graph):
                if model is None or model.graph is not graph or model.layout is not layout:
                    model = build_model(graph, layout, resolved)
                ahead = scenes.take_ahead(model, keep_rest=preview)
                if ahead is not None:  # its items, made with it by `model_for`
                    state, items = ahead.state, ahead.items
                    if state.palette.theme is not self._theme:
                        state.reset(Palette(self._theme))
                else:
                    state, items = self._new_items(model)
                for item in items.items:
                    scene.addItem(item)
            scenes.shown = BuiltScene(graph, layout, scene, model, items, state, preview)
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

    def content_rect(self) -> QRectF:
        """The drawing's extent in scene coordinates (the layout's width × height)."""
        return QRectF(self._model.content) if self._model is not None else QRectF()

    # ------------------------------------------------------------------ zoom and pan

    def zoom_in(self) -> None:
        self.zoom_by(ZOOM_STEP, self.viewport().rect().center())

    def zoom_out(self) -> None:
        self.zoom_by(1 / ZOOM_STEP, self.viewport().rect().center())

    def zoom(self) -> float:
        """The current scale (1.0: one scene px per device-independent px)."""
        return self._scale()

    def zoom_to(self, scale: float, centre: QPointF | None = None) -> None:
        """Zoom to `scale` (clamped as the wheel's is) around `centre` (scene px; default: the view's)."""
        target = self._view_centre() if centre is None else centre
        self._auto_fit = False
        self.set_scale(scale)
        self.centre_at(target)

    def fit_all(self) -> None:
        """Zoom (at most to `FIT_MAX_SCALE`) and centre so the whole drawing is visible."""
        if self._model is None:
            return
        self._auto_fit = True
        self._fit_rect(self._model.content, FIT_MAX_SCALE)

    def _fit_rect(self, rect: QRectF, max_scale: float) -> None:
        vp = self.viewport().rect()
        self.set_scale(fit_scale(vp.width(), vp.height(), rect, max_scale))
        self.centerOn(rect.center())

    def _scale(self) -> float:
        return self.transform().m11()

    def _min_scale(self) -> float:
        if self._model is None:
            return 0.01
        c = self._model.content
        vp = self.viewport().rect()
        fit = min(vp.width() / max(c.width(), 1.0), vp.height() / max(c.height(), 1.0))
        return max(min(fit * 0.5, 0.05), 1e-5)

    def set_scale(self, s: float) -> None:
        s = min(max(s, self._min_scale()), MAX_SCALE)
        self.setTransform(QTransform.fromScale(s, s))
        self._update_scene_rect()
        self._update_detail()

    def zoom_by(self, factor: float, anchor: QPoint) -> None:
        """Scale by `factor`, keeping the scene point under `anchor` (viewport px) where it is."""
        self._auto_fit = False
        target = self.mapToScene(anchor)
        self.set_scale(self._scale() * factor)
        self.scroll_to(target, anchor)

    def scroll_to(self, scene_point: QPointF, viewport_point: QPoint | QPointF) -> None:
        """Scroll so that `scene_point` shows at `viewport_point`, to the nearest device px: the
        scroll bars are the view's position (the scene rect always leaves room, so Qt adds no
        indent), and `centerOn` truncates, which crept ~1 px per re-layout that kept the view."""
        p = self.transform().map(QPointF(scene_point))
        self.horizontalScrollBar().setValue(round(p.x() - viewport_point.x()))
        self.verticalScrollBar().setValue(round(p.y() - viewport_point.y()))

    def _viewport_centre(self) -> QPointF:
        vp = self.viewport()
        return QPointF(vp.width() / 2, vp.height() / 2)

    def _view_centre(self) -> QPointF:
        """The scene point at the viewport's exact centre (`mapToScene` takes whole px only)."""
        inverse, _ = self.transform().inverted()
        c = self._viewport_centre()
        return inverse.map(QPointF(self.horizontalScrollBar().value() + c.x(), self.verticalScrollBar().value() + c.y()))

    def centre_at(self, scene_point: QPointF) -> None:
        self.scroll_to(scene_point, self._viewport_centre())

    def _update_scene_rect(self) -> None:
        """The drawing plus a viewport's worth of room on every side, so the view can always be
        centred anywhere (zooming around the cursor never hits a scroll limit)."""
        if self._model is None:
            return
        vp = self.viewport().rect()
        room = max(vp.width(), vp.height(), 100) / max(self._scale(), 1e-6)
        self.setSceneRect(self._model.content.adjusted(-room, -room, room, room))

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
        return list(self._selected)

    def clear_selection(self) -> None:
        self._set_selection([])

    def _records_of(self, paths: Iterable[str]) -> set[int]:
        """The record indices of the boxes drawn for these base paths (stub copies too)."""
        model = self._model
        return {i for p in paths for i in model.by_base.get(p, ())} if model is not None else set()

    def _set_selection(self, paths: list[str], emit: bool = True) -> None:
        old = list(self._selected)
        new_ids = self._records_of(paths)
        changed_ids = new_ids ^ self._state.selected
        self._selected = dict.fromkeys(paths)
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
        self._auto_fit = False
        visible = self.mapToScene(self.viewport().rect()).boundingRect()
        margin = 2 * FIT_PADDING / max(self._scale(), 1e-6)
        if rect.width() + margin > visible.width() or rect.height() + margin > visible.height():
            self._fit_rect(rect, self._scale())  # zoom out, never in
        else:
            self.centerOn(rect.center())

    # ------------------------------------------------------------------ dataflow

    def _graph_dag(self) -> Dataflow:
        """The visible dataflow (stubs folded into their node), built once per layout."""
        if self._dag is None:
            model = self._model
            self._dag = Dataflow(model.by_base if model else (), model.edge_ends() if model else ())
        return self._dag

    def _cones(self, path: str, direction: str) -> tuple[set[str], set[str]]:
        return self._graph_dag().cones(path, direction)

    def dataflow_cone(self, path: str, direction: str = "both") -> set[str]:
        """Base paths of the nodes `path` depends on ("up"), that depend on it ("down"), or
        both, over the visible graph; `path` itself included; empty if it is not drawn."""
        up, down = self._cones(path, direction)
        model = self._model
        return {p for p in up | down if model is not None and p in model.by_base}

    def highlight_dataflow(self, path: str, direction: str = "both") -> None:
        """Dim everything outside the dataflow cone of `path` (see `dataflow_cone`)."""
        up, down = self._cones(path, direction)
        model = self._model
        if model is None or not (up or down):
            self.clear_highlight()
            return
        cone = up | down
        node_ids = self._records_of(cone)
        edge_ids = {
            j for j, (src, dst) in enumerate(model.edge_ends())
            if (src in up and dst in up) or (src in down and dst in down)
        }
        self._state.set_cone(node_ids, edge_ids)
        self._highlight = (path, direction)
        self._update_all()

    def clear_highlight(self) -> None:
        self._highlight = None
        if self._state.cone_nodes is not None:
            self._state.set_cone(None, set())
            self._update_all()

    @property
    def highlighted(self) -> bool:
        return self._state.cone_nodes is not None

    # ------------------------------------------------------------------ search

    def search(self, text: str) -> list[str]:
        """Base paths (layout order) whose label, avals or ``file:line`` contain `text`
        (case-insensitive); ``:12`` or ``line 12`` match line 12 exactly, ``model.py:12`` that
        line in a matching file. The matches are outlined; `next_match` walks them."""
        model = self._model
        self._search_text = text.strip()
        matches = self._index().search(text) if model is not None else []
        self._matches = matches
        self._match_index = -1
        ids = {i for p in matches for i in model.by_base[p]} if model is not None else set()
        changed = ids ^ self._state.matches
        self._state.matches = ids
        self._update_nodes(changed)
        return list(matches)

    def _index(self) -> SearchIndex:
        """The search index of the drawn nodes, built on first search."""
        if self._search_keys is None:
            model = self._model
            assert model is not None
            self._search_keys = SearchIndex((base, model.nodes[i].node) for base, i in model.by_base.firsts())
        return self._search_keys

    @property
    def match_count(self) -> int:
        return len(self._matches)

    @property
    def current_match_index(self) -> int:
        """Index into the last search's matches of the one shown, or -1."""
        return self._match_index

    def next_match(self) -> str | None:
        return self._step_match(+1)

    def previous_match(self) -> str | None:
        return self._step_match(-1)

    def _step_match(self, step: int) -> str | None:
        if not self._matches:
            return None
        n = len(self._matches)
        if self._match_index < 0:
            self._match_index = 0 if step > 0 else n - 1
        else:
            self._match_index = (self._match_index + step) % n
        path = self._matches[self._match_index]
        self.select_paths([path], center=False)
        self._centre_on(path)
        return path

    def _centre_on(self, path: str) -> None:
        """Centre the box of `path` nearest to the view's centre (an input may have many copies)."""
        model = self._model
        assert model is not None
        here = self._view_centre()
        rects = [model.nodes[i].rect for i in model.by_base[path]]
        best = min(rects, key=lambda r: (r.center() - here).manhattanLength())
        self._auto_fit = False
        self.centerOn(best.center())

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
        model = self._model
        if model is None:
            return None
        hits = [k for k in model.title_grid.near(scene_pos.x(), scene_pos.y())
                if model.title_rect(model.clusters[k]).contains(scene_pos)]
        if not hits:
            return None
        return model.clusters[max(hits, key=lambda k: model.clusters[k].depth)].path

    def tooltip_at(self, viewport_pos: QPoint) -> str:
        """Plain text for the tooltip at a viewport position ("" for nothing)."""
        model = self._model
        if model is None:
            return ""
        scene_pos = self.mapToScene(viewport_pos)
        i = self.node_at(scene_pos)
        if i is not None:
            rec = model.nodes[i]
            if rec.node is None:
                return rec.path
            text = node_tooltip(rec.node, rec.base)
            if rec.owner:
                text += "\ndouble-click to expand"
            long = len(model.long_edges_at().get(rec.base, ())) if self.long_edges_partial else 0
            if long and i not in self._state.selected:
                text += f"\n{long} long edge{'s' if long > 1 else ''} drawn as {'their' if long > 1 else 'its'} ends: click the box to see {'them' if long > 1 else 'it'} whole"
            return text
        cluster = self.cluster_title_at(scene_pos)
        if cluster is not None:
            title = next(c.title for c in model.clusters if c.path == cluster)
            return f"{title}\npath: {cluster}\ndouble-click to collapse"
        return ""

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

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() in (Qt.MouseButton.LeftButton, Qt.MouseButton.MiddleButton):
            self._press = self._last = event.position().toPoint()
            self._press_button = event.button()
            self._panning = False
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._press is not None:
            pos = event.position().toPoint()
            if not self._panning and (pos - self._press).manhattanLength() >= QApplication.startDragDistance():
                self._panning = True
                self._auto_fit = False
                self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            if self._panning:
                delta = pos - self._last
                self._last = pos
                h, v = self.horizontalScrollBar(), self.verticalScrollBar()
                h.setValue(h.value() - delta.x())
                v.setValue(v.value() - delta.y())
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._press is not None and event.button() == self._press_button:
            clicked = not self._panning and event.button() == Qt.MouseButton.LeftButton
            self._press = None
            self._panning = False
            self.viewport().unsetCursor()
            if clicked:
                self._click(event.position().toPoint(), event.modifiers())
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def _click(self, pos: QPoint, modifiers: Qt.KeyboardModifier) -> None:
        i = self.node_at(self.mapToScene(pos))
        ctrl = bool(modifiers & Qt.KeyboardModifier.ControlModifier)
        shift = bool(modifiers & Qt.KeyboardModifier.ShiftModifier)
        if i is None:
            if not (ctrl or shift):
                self.clear_selection()
            return
        assert self._model is not None
        base = self._model.nodes[i].base
        paths = list(self._selected)
        if ctrl and base in self._selected:
            paths.remove(base)  # Ctrl-click toggles
        elif ctrl or shift:
            if base not in self._selected:
                paths.append(base)
        else:
            paths = [base]
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
        """Where an owner is drawn: its box when collapsed, its clusters' union when expanded."""
        model = self._model
        if model is None:
            return None
        if owner in model.by_path:
            return QRectF(model.nodes[model.by_path[owner]].rect)
        rect = QRectF()
        prefix = owner + ":"
        for c in model.clusters:
            if c.path.startswith(prefix) and c.path[len(prefix):].isdigit():
                rect = rect.united(QRectF(c.x, c.y, c.w, c.h))
        return rect if not rect.isNull() else None

    def _restore_anchor(self, centre: QPointF) -> None:
        anchor, self._anchor = self._anchor, None
        if anchor is not None:
            rect = self._owner_rect(anchor[0])
            if rect is not None:
                self.scroll_to(rect.topLeft(), anchor[1])
                return
        self.centre_at(centre)

    def wheelEvent(self, event: QWheelEvent) -> None:
        delta = event.angleDelta()
        if delta.y():
            self.zoom_by(2.0 ** (delta.y() / 480.0), event.position().toPoint())
        elif delta.x():
            self._auto_fit = False
            h = self.horizontalScrollBar()
            h.setValue(h.value() - delta.x())
        event.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_in()
        elif key in (Qt.Key.Key_Minus, Qt.Key.Key_Underscore):
            self.zoom_out()
        elif key in (Qt.Key.Key_F, Qt.Key.Key_0):
            self.fit_all()
        elif key == Qt.Key.Key_Escape:
            self.clear_selection()
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def resizeEvent(self, event: QResizeEvent) -> None:
        centre = self._view_centre()
        super().resizeEvent(event)
        vp = self.viewport().rect()
        self._viewport_px = (vp.width(), vp.height())
        if self._model is None:
            return
        if self._auto_fit:
            self.fit_all()
        else:
            self._update_scene_rect()
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
