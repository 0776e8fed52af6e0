"""The graph view's scenes, kept apart from what the view shows: the scene on screen, the one a
preview stands in front of, earlier scenes of the same graph (a cluster collapsed and expanded
again shows its old scene at once), the models and items built ahead on other threads
(`QtGraphView.model_for`), and dropped scenes let go of a slice per event-loop turn.

Plain Python around a few Qt objects: any thread may read it and hand in a model built ahead
(under `lock`); only the GUI thread swaps scenes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

from PySide6.QtCore import QObject, QRectF, QTimer
from PySide6.QtWidgets import QGraphicsScene

from jaxscope.layout.edge_shape import draws_partial
from jaxscope.qt.graph.batch_item import Palette, ViewState
from jaxscope.qt.graph.scene_index import Resolved
from jaxscope.qt.graph.scene_items import SceneItems, build_items, warm_items
from jaxscope.qt.graph.scene_model import SceneModel, build_model
from jaxscope.render.styles import Theme
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.graph import Graph
from jaxscope.schema.layout import Layout

# boxes kept in earlier scenes of the same graph, as layouts are (controller.LAYOUT_CACHE_BOXES):
# a scene is ~0.5 KB a box over its layout; one of mlp-50k's 72.5k boxes fits
KEPT_NODES = 100_000
KEPT_SCENES = 3
RELEASE_SLICE = 2000  # records or items of a dropped scene let go per event-loop turn


@dataclass
class BuiltScene:
    """One graph's built scene: what the view swaps back in when it gets the same layout again."""

    graph: Graph
    layout: Layout
    scene: QGraphicsScene
    model: SceneModel
    items: SceneItems
    state: ViewState
    preview: bool = False  # a re-layout's part (`show_preview`): never kept, never swapped back in


class Ahead(NamedTuple):
    """A model built ahead (`model_for`), with its view state and items (not in a scene yet: they
    belong to no thread)."""

    model: SceneModel
    state: ViewState
    items: SceneItems


def _release_in_slices(built: BuiltScene) -> Iterator[None]:
    """Let go of a dropped scene's records and items a slice at a time, yielding between slices:
    at 50k boxes, freeing them at once held the GUI thread ~0.1 s when a new program replaced it.
    Its Qt items are deleted already (`SceneCache.drop`); this is their Python side and the model's."""
    items, model = built.items, built.model
    lists: list[list] = [items.node_items, items.edge_items, items.items, model.nodes.made]
    del items, model
    for seq in lists:
        while seq:
            del seq[-RELEASE_SLICE:]
            yield


_DONE = object()


class SceneCache:
    """See the module docstring. `owner` parents the scenes and runs the release timers."""

    def __init__(self, owner: QObject) -> None:
        self.owner = owner
        self.shown: BuiltScene | None = None
        self.held: BuiltScene | None = None  # the scene a preview stands in front of (`show_preview`)
        self.kept: dict[tuple[int, int], BuiltScene] = {}  # earlier scenes of this graph, oldest first
        self.lock = threading.Lock()
        self._ahead: list[Ahead] = []  # the last two `model_for`s (a preview's and its whole layout's)
        self.releasing: list[Iterator[None]] = []  # dropped scenes being let go (`_release_in_slices`)
        self.prepared: Resolved | None = None  # `prepare`'s, for the next graph's first model

    # -- built ahead, on any thread

    def is_kept(self, graph: Graph, layout: Layout) -> bool:
        """Whether a scene of `layout` is kept (showing it builds nothing)."""
        kept = self.kept.get((id(graph), id(layout)))
        return kept is not None and kept.layout is layout

    def put_ahead(self, ahead: Ahead) -> None:
        with self.lock:
            self._ahead = [*self._ahead[-1:], ahead]

    def take_ahead(self, model: SceneModel, keep_rest: bool) -> Ahead | None:
        """The items made with `model` ahead, if any; the other models built ahead are dropped,
        unless `keep_rest` (a preview's whole layout may be made meanwhile)."""
        with self.lock:
            ahead = next((a for a in self._ahead if a.model is model), None)
            self._ahead = [a for a in self._ahead if a is not ahead] if keep_rest else []
        return ahead

    @property
    def ahead(self) -> list[Ahead]:
        """The models built ahead and not shown yet (with their items), oldest first."""
        with self.lock:
            return list(self._ahead)

    def prepare(self, graph: Graph) -> None:
        """Resolve `graph`'s top-level boxes now, for the model of its first layout (any thread)."""
        resolved = Resolved(graph)
        for node in graph.top.nodes:
            resolved[node.id]
        self.prepared = resolved  # published whole

    def resolved_for(self, graph: Graph) -> Resolved | None:
        """The shown model's resolved paths, if it is of `graph` (another graph's would keep that
        graph alive), else `prepare`'s (taken once); attribute reads: safe from any thread."""
        built = self.shown
        if built is not None and built.graph is graph:
            return built.model.resolved
        pre = self.prepared
        if pre is not None and pre.graph is graph:
            self.prepared = None
            return pre
        return None

    def build_ahead(
        self,
        graph: Graph,
        layout: Layout,
        theme: Theme,
        first_paint: Callable[[SceneModel], tuple[float, QRectF | None] | None],
        *,
        long_whole: bool,
        lookups: bool,
        colours: dict[str, str],
    ) -> SceneModel:
        """Build the scene model of (graph, layout) on this thread, warmed for its first paint
        (`first_paint(model)`: its scale and rect, if known), with its items (not in a scene yet,
        they belong to no thread: ~9k tiles at gpt-50k took 0.07-0.1 s of the GUI thread); kept
        for `build_scene` (only the last two)."""
        # frozen once built: else the next collection, on whichever thread, rescans it all
        # (gpt-50k: a 263 ms pause of the GUI thread)
        with gc_paused(freeze=graph):
            model = build_model(graph, layout, self.resolved_for(graph))
            model.warm(long_lines=not draws_partial(len(model.long_edges), long_whole), lookups=lookups)
            if colours:
                model.stripes(colours)
            state = ViewState(Palette(theme))
            items = build_items(model, state, tiles=False)
            first = first_paint(model)
            if first is None or not items.all_tiny(first[0]):  # else the tiles are made after the first paint
                items.make_tiles()
            if first is not None:
                warm_items(items, *first)
            self.put_ahead(Ahead(model, state, items))
            return model

    # -- on the GUI thread

    def keep_or_drop(self, built: BuiltScene, graph: Graph) -> bool:
        """Keep `built` (no longer shown) for a re-expand if it is of `graph` and small enough,
        else drop it; True if kept."""
        kept = built.graph is graph and len(built.model.nodes) <= KEPT_NODES
        if kept:
            self.kept[(id(built.graph), id(built.layout))] = built
        else:
            self.drop(built)
        return kept

    def drop_other_graphs(self, graph: Graph) -> None:
        for key in [k for k, b in self.kept.items() if b.graph is not graph]:
            self.drop(self.kept.pop(key))

    def build_scene(
        self,
        graph: Graph,
        layout: Layout,
        model: SceneModel | None,
        resolved: Resolved | None,
        theme: Theme,
        preview: bool,
    ) -> BuiltScene:
        """A new scene of (graph, layout): from `model` and the items built ahead with it if it is
        of this layout, else built here."""
        scene = QGraphicsScene(self.owner)
        # ~10 small objects per node; the collector would rescan them all (100 ms at 50k boxes)
        with gc_paused(freeze=graph):
            if model is None or model.graph is not graph or model.layout is not layout:
                model = build_model(graph, layout, resolved)
            ahead = self.take_ahead(model, keep_rest=preview)
            if ahead is not None:
                state, items = ahead.state, ahead.items
                if state.palette.theme is not theme:
                    state.reset(Palette(theme))
            else:
                state = ViewState(Palette(theme))
                items = build_items(model, state)
            for item in items.items:
                scene.addItem(item)
        return BuiltScene(graph, layout, scene, model, items, state, preview)

    def take_kept(self, graph: Graph, layout: Layout) -> BuiltScene | None:
        again = self.kept.pop((id(graph), id(layout)), None)
        return again if again is not None and again.layout is layout else None

    def trim(self) -> None:
        """Drop the oldest kept scenes beyond `KEPT_SCENES` or `KEPT_NODES` boxes."""
        while self.kept and (len(self.kept) > KEPT_SCENES or sum(len(b.model.nodes) for b in self.kept.values()) > KEPT_NODES):
            self.drop(self.kept.pop(next(iter(self.kept))))

    def drop(self, built: BuiltScene) -> None:
        """Delete a scene's items now, the scene itself once the event loop runs, and the Python
        side of both (the model too, unless still held elsewhere) over the next event-loop turns."""
        built.scene.clear()
        built.scene.setParent(None)
        built.scene.deleteLater()
        self.releasing.append(_release_in_slices(built))
        if len(self.releasing) == 1:
            QTimer.singleShot(0, self.owner, self._release_step)

    def _release_step(self) -> None:
        if next(self.releasing[0], _DONE) is _DONE:
            self.releasing.pop(0)
        if self.releasing:
            QTimer.singleShot(0, self.owner, self._release_step)
