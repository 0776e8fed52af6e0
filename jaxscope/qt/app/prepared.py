"""What the background threads hand the GUI thread, finished: a trace with everything the window
walks its every node for (`PreparedTrace`), a layout with its scene model (`PreparedLayout`).

They are made on the thread a result arrives on (`Controller`), while the layout process is still
laying the graph out, and travel in the controller's signals: the GUI thread only shows them. At
50k equations the source-line maps take 0.3-0.5 s and a scene model 0.2-0.8 s: on the GUI thread,
that was a frozen window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from jaxscope.analysis.scope_view import ScopedGraph, first_open, for_window
from jaxscope.ir import linking
from jaxscope.qt.graph.scene_model import SceneModel
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.graph import Graph
from jaxscope.schema.layout import Layout
from jaxscope.schema.trace import TraceResult
from jaxscope.workbench import view_colours


class SceneBuilder(Protocol):
    """What builds scenes ahead, from any thread (`QtGraphView` is one)."""

    def prepare_graph(self, graph: Graph) -> None: ...  # its top-level boxes resolved, for its first model

    def model_for(self, graph: Graph, layout: Layout, line_colours: dict[str, str] | None = None) -> SceneModel | None: ...


@dataclass(frozen=True, slots=True)
class PreparedTrace:
    """A trace and what the window needs of it. `view` is the one grouped view of its graph, the
    one its layout was streamed for and every pane uses (built once per trace)."""

    result: TraceResult
    view: ScopedGraph  # what the graph pane draws of `result.graph`
    links: linking.JaxprLinks  # the node sources (the jaxpr lines come with the printed jaxpr)
    expanded: frozenset[str]  # `first_open`: the clusters a first layout opens
    helpers: frozenset[str]  # `linking.helper_files`: the other user files to watch
    colours: dict[str, str]  # drawn path -> the colour of its source line, in `palette`
    palette: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PreparedLayout:
    """A layout of `graph` with `expanded` open, and the scene model built for it (None: a scene of
    that layout is kept, or nothing builds scenes)."""

    graph: Graph
    layout: Layout
    expanded: frozenset[str]
    model: SceneModel | None = None


def prepare_trace(
    result: TraceResult,
    grouping: bool,
    palette: Sequence[str],
    scenes: SceneBuilder | None = None,
    view: ScopedGraph | None = None,
) -> PreparedTrace:
    """Everything a new trace's window walks every node for, from any thread: its grouped view
    (`view`, if made already), node sources, first open clusters, helper files, source-line colours
    (and, with `scenes`, the boxes of its first scene model resolved)."""
    graph = result.graph
    path = result.request.function.path or ""
    with gc_paused(freeze=graph):  # ~100k small containers: a collection midway held the GIL 46 ms (mlp-50k)
        view = view or for_window(graph, grouping)
        if scenes is not None:
            scenes.prepare_graph(view.graph)
        if path:
            linking.nodes_by_line(graph, path)  # made here, found by the GUI thread (`schema.latest`)
        links = linking.jaxpr_links(graph, "")
        helpers = frozenset(linking.helper_files(graph, path))
        colours = view_colours(view, path, palette)
        expanded = first_open(view.graph)
    return PreparedTrace(result, view, links, expanded, helpers, colours, tuple(palette))


def build_model(scenes: SceneBuilder | None, graph: Graph, layout: Layout, colours: dict[str, str] | None) -> SceneModel | None:
    """The scene model of a layout, built ahead with the stripes of `colours` (the very dict the
    view is then given: its stripes are not made twice); a failure costs only the head start (the
    view builds it when it shows the layout)."""
    if scenes is None:
        return None
    try:
        return scenes.model_for(graph, layout, colours)
    except Exception:
        return None
