"""The layout engine's own types: a body laid out, its clusters, a whole layout in tenths of a px,
and what laying out one body needs of the call that runs it (`LayoutContext`).

Kept apart from the engine so that `body`, `edges` and `engine` import them one way only."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from jaxscope.schema.graph import Edge, Graph, SubgraphRef
from jaxscope.schema.layout_tables import EdgeTable, NodeTable

Point = tuple[float, float]


Children = dict[str, list[tuple[int, SubgraphRef, "BodyLayout"]]]  # owner id -> its laid-out sub-graphs

# What a node's size depends on: its (kind, label, avals, params) and the annotation on it.
SizeKey = tuple[str, str, tuple[str, ...], tuple[tuple[str, str], ...], str]

# The sub-layouts `compute_layout` keeps between calls on one graph: a layout key (`engine.LayoutKey`)
# -> BodyLayout, (options, body id) -> the body's engine placement (Placed), a str -> a flag of `lay_out_ahead`;
# the value's type goes with the key's shape.
LayoutCache = dict[Hashable, Any]


@dataclass(slots=True)
class Cluster:
    path: str  # "<owner id>:<index>", relative to the body
    title: str
    x: int  # top-left, body coordinates, tenths of a px
    y: int
    w: int
    h: int
    child: BodyLayout
    dx: int  # where the child's (0, 0) lands, body coordinates
    dy: int


@dataclass(slots=True, eq=False)
class BodyLayout:
    """One body laid out at the origin, in tenths of a px; paths are relative to the body."""

    w: int
    h: int
    nodes: NodeTable
    index: dict[str, int]  # local node id -> its row in `boxes`
    boxes: np.ndarray  # every item's (cx, cy, w, h), (n, 4)
    edges: EdgeTable
    clusters: list[Cluster]
    engines: frozenset[str]
    notes: tuple[str, ...]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BodyLayout):
            return NotImplemented
        fields = ("w", "h", "nodes", "index", "edges", "clusters", "engines", "notes")
        return all(getattr(self, f) == getattr(other, f) for f in fields) and np.array_equal(self.boxes, other.boxes)

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it was

    def box(self, local_id: str) -> tuple[int, int, int, int]:
        """Node `local_id`'s (cx, cy, w, h)."""
        x, y, w, h = self.boxes[self.index[local_id]].tolist()
        return x, y, w, h


@dataclass(slots=True)
class Tenths:
    """A whole layout in integer tenths of a px, as columns (`layout_tables`): what the layout
    process encodes (no NodeBox/EdgePath objects made only to be taken apart again) and what
    `to_layout` turns into a Layout (x / 10 there is the very float the Layout always held)."""

    width: int
    height: int
    nodes: NodeTable
    edges: EdgeTable
    clusters: list[tuple[str, str, int, int, int, int, int]]  # path, title, x, y, w, h, depth
    engine: str
    notes: tuple[str, ...]


@dataclass(slots=True)
class Placed:
    """A body's items as placed, with the structure they were placed from (the same whatever is
    expanded): an engine's placement is kept per body, so laying the body out again with another
    owner expanded grows that drawing (`grow`) instead of placing every box anew. Tenths of a px."""

    paths: list[str]  # per item: the nodes, then stub copies
    index: dict[str, int]  # node id -> item
    edges: list[Edge]  # the body's edges between known nodes
    item_of_edge: list[tuple[int, int]]
    short_set: set[tuple[int, int]]  # item pairs the engine saw (not long edges)
    ghosts: set[int]  # stubbed originals (not drawn)
    sizes: list[tuple[int, int]]
    boxes: np.ndarray  # per item: centre x, centre y, w, h, (n, 4); all at x, y >= 0
    troutes: dict[tuple[int, int], list[Point]]  # dot's splines by item pair
    use_dot: bool
    composed: frozenset[str]  # owners drawn expanded (their size is their clusters')
    notes: tuple[str, ...]
    memo: dict[str, Any]  # what `body_edges` keeps per structure (shared by the layouts grown from this one)


class LayoutContext(Protocol):
    """What laying out one body needs of the `compute_layout` call it belongs to
    (`jaxscope.layout.engine.Context`): the graph, the options, the engines."""

    graph: Graph
    lr: bool
    max_span: int
    size_memo: dict[SizeKey, tuple[int, int]]
    annotations: dict[str, dict[str, str]]  # body id -> node id -> its annotation (`Layout.annotations`)

    def place(
        self,
        name: str,
        px_sizes: list[Point],
        short: list[tuple[int, int]],
        pair_list: list[tuple[int, int]],
        ranks: list[int],
        notes: list[str],
    ) -> tuple[bool, list[float], list[float], dict[tuple[int, int], list[Point]]]: ...
