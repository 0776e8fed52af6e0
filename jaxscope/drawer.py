"""The one drawer: every drawing is laid out here, for the CLI, the API, the window's exports and
diff. It owns the layout process (dot under each request's time budget: dot can hang, and it holds
the GIL, so it never runs in the caller's process), the streaming of a layout while the trace
reply still arrives, and the bodies an HTML page lays out ahead.

>>> with Drawer() as drawer:
...     drawing = drawer.draw(DrawRequest(view_of(graph, "auto"), options))
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import TYPE_CHECKING

from jaxscope.drawing import Decorations, Drawing, DrawOptions, DrawRequest, view_of
from jaxscope.schema.graph import Graph

if TYPE_CHECKING:
    from jaxscope.render.html import BodyLayouts
    from jaxscope.runtime.layout_client import LayoutClient
    from jaxscope.runtime.layout_requests import LayoutStream
    from jaxscope.schema.layout import Layout

AHEAD_DOT_NODES = 120  # a page's body this small is laid out by dot in this process (a fraction of a second)


class Drawer:
    """Lays out drawing requests in one layout process, started with the first that needs it and
    kept for the next (the window's exports); each request runs under its own options' budget."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._layouts: LayoutClient | None = None

    def _client(self) -> LayoutClient:
        from jaxscope.runtime.layout_client import LayoutClient

        with self._lock:
            if self._layouts is None:
                self._layouts = LayoutClient()
            return self._layouts

    def stream(self, options: DrawOptions) -> LayoutStream | None:
        """A layout started before the graph exists, of what `options` draw, fed by the trace's reply
        as it arrives (pass its `feed` as the trace's tap, then the stream to `draw`): the window's
        view opened as the window opens it. None when the drawing needs the graph first (a
        `collapse` depth, an `expand`, a forced grouping)."""
        if options.collapse is not None or options.expand or options.grouping == "scopes":
            return None
        return self._client().stream(direction=options.direction, scopes=options.grouping == "auto", budget_s=options.layout_budget)

    def draw(self, request: DrawRequest, stream: LayoutStream | None = None) -> Drawing:
        """`request` laid out (or as its own layout places it; from `stream` when given and it has no
        notes to place) and decorated; ValueError for an `expand` or `highlight` that finds nothing,
        LayoutError when the layout process fails."""
        from jaxscope.layout.wire import LayoutError

        o, view = request.options, request.view
        notes = request.decorations.annotations(view)
        layout = request.layout
        if stream is not None:
            stream.bind(view.graph)
            if layout is None and not notes:
                try:
                    layout = stream.future.result()
                except LayoutError:  # e.g. dot over budget before the graph was bound: ask again below
                    layout = None
        if layout is None:
            extra = {"annotations": notes} if notes else {}
            layout = self._client().layout(view.graph, request.expanded(), direction=o.direction, budget_s=o.layout_budget, **extra)
        return Drawing.of(request, layout, self._bodies(view.graph, layout, o) if request.page else None)

    def _bodies(self, graph: Graph, shown: Layout, options: DrawOptions) -> BodyLayouts:
        """Every body of `graph` laid out on its own, its sub-graphs shut, for the HTML page to open
        in place: the top one as the drawing places it (dot, in the layout process, under its
        budget), the others here with dot up to `AHEAD_DOT_NODES` boxes, else the layered layout
        (a body drawn whole in a page need not match the window's pixel for pixel). `shown` says
        what opens first."""
        from jaxscope.layout.engine import annotations_by_body, compute_layout
        from jaxscope.render.html import BodyLayouts

        if options.direction != "TB":
            raise ValueError("an HTML page draws top to bottom: leave out --direction LR")
        out: dict[str, Layout] = {}
        notes = {body: sorted(on.items()) for body, on in annotations_by_body(graph, shown.annotations).items()}  # by node id
        top = {"annotations": notes[graph.root]} if graph.root in notes else {}
        out[graph.root] = self._client().layout(graph, (), budget_s=options.layout_budget, **top)
        for body_id in _reachable(graph):
            if body_id != graph.root:
                alone = Graph(graph.function, graph.bodies, body_id)
                engine = "auto" if len(graph.bodies[body_id].nodes) <= AHEAD_DOT_NODES else "layered"
                out[body_id] = compute_layout(alone, (), engine=engine, dot_max_nodes=AHEAD_DOT_NODES, annotations=notes.get(body_id, ()))
        opened = frozenset(p.split("#")[0] for c in shown.clusters for p in [c.path.rsplit(":", 1)[0]])
        return BodyLayouts(out, opened)

    def close(self) -> None:
        """Stop the layout process (a request still being laid out fails)."""
        with self._lock:
            layouts, self._layouts = self._layouts, None
        if layouts is not None:
            layouts.close()

    def __enter__(self) -> Drawer:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def draw(graph: Graph, options: DrawOptions, decorations: Decorations | None = None, *, page: bool = False) -> Drawing:
    """The view of `graph` that `options` ask for, with `decorations`, laid out in a layout process
    of its own."""
    with Drawer() as drawer:
        return drawer.draw(DrawRequest(view_of(graph, options.grouping), options, decorations or Decorations(), page=page))


def _reachable(graph: Graph) -> list[str]:
    seen, todo = [graph.root], [graph.root]
    while todo:
        for n in graph.bodies[todo.pop()].nodes:
            for ref in n.subgraphs:
                if ref.body not in seen and ref.body in graph.bodies:
                    seen.append(ref.body)
                    todo.append(ref.body)
    return seen
