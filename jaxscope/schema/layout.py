"""Where everything of a graph is drawn: boxes, edge paths and cluster frames in points."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from jaxscope.schema.codec import dumps, loads

Annotations = Sequence[tuple[str, str]]  # (node path, text) pairs: `Layout.annotations`


@dataclass(frozen=True, slots=True)
class NodeBox:
    """A placed node: `path` addresses it in the Graph (see module docstring). Centre x/y."""

    path: str
    x: float
    y: float
    w: float
    h: float


@dataclass(frozen=True, slots=True)
class EdgePath:
    """A drawn edge between node paths. `points` is a cubic Bezier chain: p0, (c1, c2, p)*.

    `routed` is False for edges left out of the layout (long spans): renderers draw them as
    plain curves or stubs so no dataflow is silently dropped.
    """

    src: str
    dst: str
    points: tuple[tuple[float, float], ...]
    routed: bool = True
    aval: str = ""


@dataclass(frozen=True, slots=True)
class ClusterBox:
    """An expanded sub-graph drawn as a titled box; `path` is "<owner path>:<index>"."""

    path: str
    title: str
    x: float  # top-left corner
    y: float
    w: float
    h: float
    depth: int = 1


@dataclass(frozen=True, slots=True)
class Layout:
    """Absolute positions (pixels at 96 dpi, y down) for everything a renderer draws."""

    width: float
    height: float
    nodes: tuple[NodeBox, ...]  # or, read from the layout process, a `layout_tables.NodeTable` (equal to that tuple)
    edges: tuple[EdgePath, ...]  # or, read from the layout process, a `layout_tables.EdgeTable` (equal to that tuple)
    clusters: tuple[ClusterBox, ...] = ()
    engine: str = ""  # "dot", "layered", or "dot+layered" when mixed
    notes: tuple[str, ...] = ()  # e.g. "dot exceeded its 5 s budget; used the layered layout"
    # (node path, text): drawn as the last line of that node's box, which was made room for: what
    # XLA's partitioner did there (`analysis.partition.box_notes`). Kept beside the Graph, never in it.
    annotations: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> str:
        return dumps(self)

    @staticmethod
    def from_json(text: str | bytes) -> Layout:
        return cast(Layout, loads(Layout, text))  # decoded JSON
