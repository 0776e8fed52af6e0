"""The open document: what survives any worker failure (file, function, specs, last good result)."""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxscope.analysis.scope_view import ScopedGraph
from jaxscope.schema.graph import Graph
from jaxscope.schema.layout import Layout
from jaxscope.schema.layout_tables import node_paths
from jaxscope.schema.trace import TraceResult


@dataclass
class Document:
    path: str = ""
    function: str = ""
    args: str = ""
    inputs: str = ""  # a maker instead of `args` (TraceRequest.inputs)
    result: TraceResult | None = None  # the last good trace
    view: ScopedGraph | None = None  # what the graph pane draws of `result.graph` (its modules as groups)
    layout: Layout | None = None
    expanded: frozenset[str] = field(default_factory=frozenset)
    stale: bool = False  # the last trace failed; `result` is from an earlier one
    user_toggled: bool = False  # the user expanded/collapsed by hand: keep it across re-traces
    refit: bool = False  # another function (or other inputs) was traced: its first layout is fitted, not kept in view
    annotations: tuple[tuple[str, str], ...] = ()  # (drawn path, text) on the boxes: View -> Show Partitioning

    @property
    def graph(self) -> Graph | None:
        """The traced program: what links, sources and run results name nodes of."""
        return self.result.graph if self.result else None

    @property
    def shown(self) -> Graph | None:
        """The graph drawn (`layout`, `expanded` and the graph pane's paths are of this one)."""
        return self.view.graph if self.view is not None else self.graph

    def to_real(self, paths: list[str]) -> list[str]:
        """Drawn paths -> the program's (a group: its every equation)."""
        return self.view.real_paths(paths) if self.view is not None else paths

    def to_shown(self, paths: list[str]) -> list[str]:
        return self.view.view_paths(paths) if self.view is not None else paths

    def visible_paths(self) -> set[str]:
        return {path.split("#", 1)[0] for path in node_paths(self.layout.nodes)} if self.layout else set()


def nearest_visible(path: str, visible: set[str]) -> str | None:
    """The node itself if drawn, else the collapsed owner that contains it."""
    parts = path.split("/")
    while parts:
        candidate = "/".join(parts)
        if candidate in visible:
            return candidate
        parts = parts[:-1]
        if parts:
            parts[-1] = parts[-1].split(":", 1)[0]  # "e4:1" -> owner "e4"
    return None
