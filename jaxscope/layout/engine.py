"""Graph + expanded owner paths -> Layout: one body at a time, composed, cached.

How a layout is built
---------------------
* **Per body.** Each visible Body is laid out on its own. An *expanded* owner (its path is in
  `expanded` and it has `subgraphs`) is one big fixed-size box in its parent: its sub-graphs side
  by side (top to bottom for ``direction="LR"``), each with a title band of `labels.TITLE_H` and
  `CLUSTER_PAD` px of padding. The child layouts are then translated into that box and each gets a
  ClusterBox (path ``"<owner path>:<index>"``, title = `SubgraphRef.role`, depth 1 for a cluster
  in the top-level body, 2 inside that, ...). The expanded owner has no NodeBox of its own.
  Sub-layouts are cached by (body id, the expanded set relative to that instance), so a block
  called 200 times is laid out once; within one `compute_layout` call always, and across calls
  when the caller passes the same `cache` dict (the layout worker does, per graph).
* **Growing, not re-placing.** The cache also keeps each body's *base*: its last placement by
  an engine (`Placed`). A layout of the body with at most `layout_body.GROW_MAX` owners expanded
  or collapsed relative to the base grows the base (`layout_body.grow`): each such owner's box
  takes its new size in place and everything wholly right of or below it moves over by the
  growth, so the rest of the drawing stays where the user saw it and no engine runs (a 12k-box
  body: 0.34 -> 0.16 s). Collapsing an owner the base has collapsed gives its room back. More
  changes than that: the body is placed anew and that becomes its base. With a fresh cache (an
  export, a new graph) the output depends only on the input; within one cache, on which
  placement is the base too.
* **Engines.** A body with at most `dot_max_nodes` boxes (stub copies included) goes to Graphviz
  dot (see `dot_layout`), a bigger one to the pure-Python layered layout (`layered`). `engine`
  forces one or the other. If pygraphviz is missing or dot fails, the layered layout is used and
  a note says so.
* **Long edges.** Ranks are longest-path ranks over the body's edges (sources moved down next to
  their nearest consumer). An edge spanning more than `max_span` ranks is left out of the dot
  graph and comes out with ``routed=False`` as a smooth cubic from the producer's bottom centre to
  the consumer's top centre (right centre -> left centre for LR). Shorter edges are
  ``routed=True``: dot's spline, or for the layered engine the same kind of cubic (that engine does
  not route). No edge is ever dropped: every edge of every visible body has an EdgePath (parallel
  edges, e.g. ``x * x``, get one EdgePath each, on the same curve).
* **Cost.** Ranking, ordering and placing are O(V + E) Python (the layered engine: ~0.5 s at 50k
  boxes on a slow 2-core VM); growing, the plain edges' curves and putting sub-layouts in place
  are numpy over the body's boxes and edges, and the output is columns (`layout_tables`), not an
  object per box or edge (a grown 50k-box layout: ~0.1 s). The cyclic GC is paused meanwhile.
  dot's time depends on structure more than size: see `dot_layout`, and run it through
  `layout_client.LayoutClient`, which bounds it with a time budget.

Conventions
-----------
* **Units.** Layout px; one px is one Graphviz point (1/72 in) when talking to dot. Sizes come
  from `labels.node_size`. y grows downwards; the drawing starts at (0, 0) with a `MARGIN` of
  8 px; every coordinate is a multiple of 0.1 px (body layouts are kept in whole tenths, so a
  cached body drawn twice is exactly translated).
* **Stub copies.** An ``input`` or ``const`` node with more than `STUB_FANOUT` distinct consumers
  gets one copy per consumer, placed next to it; the copy's path is ``f"{path}#{k}"`` (k = 0, 1, ...
  in order of the consumer's first edge) and the EdgePaths to that consumer start at the copy.
  In the top-level body and for a constant the original has no NodeBox (it has no edges of its
  own); a sub-graph's input keeps its NodeBox in the first rank, where the edges from outside its
  cluster land. Renderers draw a copy like the original; ``path.partition("#")[0]`` is the node's
  real path.
* **Edges across a cluster boundary.** The owner's box is what the parent's layout sees; the
  EdgePaths then continue inside. Operand port p of an expanded owner is sub-graph input k when:
  the counts are equal (jit, scan, custom_jvp, ...: k = p); for ``cond``, operand 0 (the branch
  index) is not an input of any branch and p -> p - 1; for ``while``, the cond sub-graph takes
  ``cond_consts + carry`` and the body ``body_consts + carry`` (from the ``cond_nconsts`` and
  ``body_nconsts`` params). Output port i of the owner is output node i of every sub-graph with
  as many outputs as the owner (never the while cond). An edge whose port maps into no sub-graph
  ends (or starts) at the cluster box itself: its `dst` (or `src`) is the cluster path
  ``"<owner path>:<index>"`` and the point is the middle of the box's top (bottom) edge, once per
  cluster of that owner. A routed edge is dot's spline to the owner box, then a straight cubic to
  the node inside. When both ends are expanded owners, one EdgePath per (source, target) pair.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import replace

from jaxscope.layout.body import (
    CLUSTER_GAP,
    CLUSTER_PAD,
    STUB_FANOUT,
    STUB_KINDS,
    flatten,
    layout_body,
    split_rel,
    tenths,
    to_layout,
)
from jaxscope.layout.dot import dot_available, run_dot
from jaxscope.layout.layered import LAYER_GAP, NODE_GAP, layered_layout
from jaxscope.layout.types import BodyLayout, Children, LayoutCache, Placed, Point, SizeKey, Tenths
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.expansion import expandable
from jaxscope.schema.graph import Body, Graph, Node, resolve
from jaxscope.schema.layout import Annotations, Layout
from jaxscope.schema.layout_tables import EdgeTable, NodeTable

__all__ = [
    "CLUSTER_GAP",
    "CLUSTER_PAD",
    "ENGINES",
    "MARGIN",
    "STUB_FANOUT",
    "STUB_KINDS",
    "compute_layout",
    "compute_tenths",
    "trim",
    "visible_count",
    "lay_out_ahead",
]

MARGIN = 8.0  # px around the whole drawing
ENGINES = ("auto", "dot", "layered")
AHEAD_DOT_S = 0.5  # after a dot run this long, `lay_out_ahead` leaves the (bigger) dot bodies left out
_SLOW_DOT = "ahead: slow dot"  # its key in the cache

# direction, max_span, dot_max_nodes, engine, and the annotations when there are any
Opts = tuple[str, int, int, str] | tuple[str, int, int, str, tuple[tuple[str, str], ...]]
# A body's layout in the cache: the options, the body id, and (owner id, sub-graph index, its key) of
# each expanded sub-graph.
LayoutKey = tuple[Opts, str, tuple[tuple[str, int, "LayoutKey"], ...]]
DOT_MAX_NODES = 1000  # dot takes ~0.5 s at 1k boxes here and seconds at 2.5k; the layered engine 0.05 s at 1.5k


# ------------------------------------------------------------------------------- public API


def compute_layout(
    graph: Graph,
    expanded: Collection[str] = (),
    *,
    direction: str = "TB",
    max_span: int = 4,
    dot_max_nodes: int = DOT_MAX_NODES,
    engine: str = "auto",
    cache: LayoutCache | None = None,
    progress: Callable[[str, int], None] | None = None,
    annotations: Annotations = (),
) -> Layout:
    """Lay out the visible part of `graph` (see the module docstring).

    `cache` (optional) keeps sub-layouts between calls on the *same* graph: pass the same dict
    every time, and a fresh one for a new graph. `progress` (optional) is called with
    ``("dot", n_boxes)`` right before each dot run and ``("dot-done", n_boxes)`` right after it
    (the layout worker uses it to apply its time budget to dot only). `annotations` (node path,
    text) pairs are drawn as the last line of their boxes, made room for (`Layout.annotations`:
    what the partitioner did there, `export --sharding`).
    """
    t = compute_tenths(
        graph,
        expanded,
        direction=direction,
        max_span=max_span,
        dot_max_nodes=dot_max_nodes,
        engine=engine,
        cache=cache,
        progress=progress,
        annotations=annotations,
    )
    with gc_paused():
        layout = to_layout(t)
    return replace(layout, annotations=tuple(annotations)) if annotations else layout


def compute_tenths(
    graph: Graph,
    expanded: Collection[str] = (),
    *,
    direction: str = "TB",
    max_span: int = 4,
    dot_max_nodes: int = DOT_MAX_NODES,
    engine: str = "auto",
    cache: LayoutCache | None = None,
    progress: Callable[[str, int], None] | None = None,
    annotations: Annotations = (),
) -> Tenths:
    """`compute_layout`, as rows in integer tenths of a px (what the layout process sends)."""
    if direction not in ("TB", "LR"):
        raise ValueError(f"direction must be 'TB' or 'LR', not {direction!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")
    ctx = Context(graph, direction, int(max_span), int(dot_max_nodes), engine, {} if cache is None else cache, annotations)
    ctx.progress = progress
    node_parts: list[tuple[NodeTable, str, int, int]] = []
    edge_parts: list[tuple[EdgeTable, str, int, int]] = []
    clusters: list[tuple[str, str, int, int, int, int, int]] = []
    engines: set[str] = set()
    notes: list[str] = []
    with gc_paused():
        root, _ = ctx.layout(graph.root, expanded)
        m = tenths(MARGIN)
        flatten(root, "", m, m, 1, node_parts, edge_parts, clusters, engines, notes)
        nodes, edges = NodeTable.concat(node_parts), EdgeTable.concat(edge_parts)
        root_w, root_h = root.w, root.h
        # A per-call cache dies here, while the collector is paused: the collection that follows
        # then scans only the output, not also the hundreds of thousands of body-layout tuples.
        del ctx, root
    if engines == {"dot", "layered"}:
        used = "dot+layered"
    elif engines:
        used = next(iter(engines))
    else:
        used = "layered" if engine == "layered" else "dot"
    return Tenths(root_w + 2 * m, root_h + 2 * m, nodes, edges, clusters, used, tuple(dict.fromkeys(notes)))


def visible_count(graph: Graph, expanded: Collection[str]) -> int:
    """How many nodes are drawn (stub copies not counted; expanded owners not counted)."""
    memo: dict[tuple[str, tuple[str, ...]], int] = {}

    def count(body_id: str, rel: Iterable[str]) -> int:
        body = graph.bodies[body_id]
        local, inner = split_rel(rel)
        total = len(body.nodes)
        if not local:
            return total
        for node in body.nodes:
            if node.id in local and expandable(graph, node):
                total -= 1
                for i, ref in enumerate(node.subgraphs):
                    sub_rel = tuple(sorted(inner.get((node.id, i), ())))
                    key = (ref.body, sub_rel)
                    if key not in memo:
                        memo[key] = count(ref.body, sub_rel)
                    total += memo[key]
        return total

    return count(graph.root, expanded)


def lay_out_ahead(
    graph: Graph,
    expanded: Collection[str],
    cache: LayoutCache,
    *,
    direction: str = "TB",
    max_span: int = 4,
    dot_max_nodes: int = DOT_MAX_NODES,
    engine: str = "auto",
    dot_items: int = DOT_MAX_NODES,
    annotations: Annotations = (),
) -> Iterator[str]:
    """Lay out into `cache`, one body per step (yielding its id), the sub-graphs of every visible
    collapsed owner, nothing inside them expanded, smallest first. The layout process runs this
    while it is idle, so the first expand of an owner finds its clusters laid out and only grows
    their parent. It caches what `compute_layout` would cache for them on demand (from the same
    bases: a body never laid out before gets its base here, as it would then). A body that
    would go to dot with more than `dot_items` boxes is skipped, and so is every dot body after a
    dot run that took `AHEAD_DOT_S`: a dot run cannot be interrupted, and a request arriving
    meanwhile waits for it."""
    seen: set[str] = set()
    found: list[Body] = []

    def visit(body_id: str, rel: Iterable[str]) -> None:
        local, inner = split_rel(rel)
        for node in graph.bodies[body_id].nodes:
            if not expandable(graph, node):
                continue
            if node.id in local:
                for i, ref in enumerate(node.subgraphs):
                    visit(ref.body, inner.get((node.id, i), ()))
                continue
            for ref in node.subgraphs:
                if ref.body not in seen:
                    seen.add(ref.body)
                    found.append(graph.bodies[ref.body])

    visit(graph.root, expanded)
    ctx = Context(graph, direction, int(max_span), int(dot_max_nodes), engine, cache, annotations)  # as `compute_tenths` keys its layouts
    for body in sorted(found, key=lambda b: len(b.nodes)):
        n = len(body.nodes)
        to_dot = ctx.wants_dot(n)
        if (to_dot and (n > dot_items or cache.get(_SLOW_DOT))) or (ctx.opts, body.id, ()) in cache:
            continue
        start = time.monotonic()
        with gc_paused():
            ctx.layout(body.id, ())
        if to_dot and time.monotonic() - start > AHEAD_DOT_S:
            cache[_SLOW_DOT] = True  # for this graph, from now on
        yield body.id


CACHE_MAX = 16384  # entries of a layout cache before `trim` drops the oldest half of its layouts


def trim(cache: LayoutCache, limit: int = CACHE_MAX) -> None:
    """Bound a long session's cache: past `limit` entries, drop the oldest body layouts (they are
    made again on demand) down to half of it, but keep every body's base (its engine placement):
    without it the next expand of a 50k-box body places all of it anew (~1 s), not grows it."""
    if len(cache) <= limit:
        return
    layouts = [key for key in cache if isinstance(key, tuple) and len(key) == 3]
    for key in layouts[: max(0, len(cache) - limit // 2)]:
        del cache[key]


# ------------------------------------------------------------------------------- internals


def annotations_by_body(graph: Graph, annotations: Annotations) -> dict[str, dict[str, str]]:
    """(node path, text) pairs -> body id -> node id -> text; a path that names no node is left out."""
    out: dict[str, dict[str, str]] = {}
    for path, text in annotations:
        try:
            body, node = resolve(graph, path)
        except (KeyError, IndexError, ValueError):
            continue
        out.setdefault(body.id, {})[node.id] = text
    return out


class Context:
    """One `compute_layout` call: its options, the sub-layout cache and the engines."""

    def __init__(
        self,
        graph: Graph,
        direction: str,
        max_span: int,
        dot_max_nodes: int,
        engine: str,
        cache: LayoutCache,
        annotations: Annotations = (),
    ):
        self.graph = graph
        notes = tuple((str(path), str(text)) for path, text in annotations)  # lists, from the layout process's JSON
        self.annotations = annotations_by_body(graph, notes)
        self.lr = direction == "LR"
        self.max_span = max_span
        self.dot_max_nodes = dot_max_nodes
        self.engine = engine
        self.cache = cache
        plain = (direction, max_span, dot_max_nodes, engine)
        self.opts: Opts = (*plain, tuple(sorted(notes))) if notes else plain
        self._dot_ok: bool | None = None
        self.size_memo: dict[SizeKey, tuple[int, int]] = {}  # node_size depends on these fields only
        self.progress: Callable[[str, int], None] | None = None

    def wants_dot(self, n_items: int) -> bool:
        """Whether a body of `n_items` boxes goes to dot (if dot works)."""
        return self.engine == "dot" or (self.engine == "auto" and n_items <= self.dot_max_nodes)

    def dot_ok(self) -> bool:
        if self._dot_ok is None:
            self._dot_ok = dot_available()
        return self._dot_ok

    def layout(self, body_id: str, rel: Iterable[str]) -> tuple[BodyLayout, LayoutKey]:
        """The (cached) layout of `body_id` with `rel` expanded, and its normalised cache key."""
        body = self.graph.bodies[body_id]
        local, inner = split_rel(rel)
        children: Children = {}
        parts: list[tuple[str, int, LayoutKey]] = []
        if local:
            for node in self._owners(body_id, body, local):
                if expandable(self.graph, node):
                    subs = []
                    for i, ref in enumerate(node.subgraphs):
                        child, child_key = self.layout(ref.body, inner.get((node.id, i), ()))
                        subs.append((i, ref, child))
                        parts.append((node.id, i, child_key))
                    children[node.id] = subs
        key: LayoutKey = (self.opts, body_id, tuple(parts))
        hit = self.cache.get(key)
        if hit is None:
            base = (self.opts, body_id)  # the body's last placement by an engine: layouts grow from it
            hit, placed = self._layout_body(body, children, self.cache.get(base))
            if placed is not None:
                self.cache[base] = placed
            self.cache[key] = hit
        return hit, key

    def _owners(self, body_id: str, body: Body, local: Collection[str]) -> list[Node]:
        """The nodes of `body` named in `local`, in body order: looked up in the body's placement
        when it has one (a walk of a 45k-node body took ~6 ms of every expand in it)."""
        base = self.cache.get((self.opts, body_id))
        nodes = body.nodes
        if base is not None:
            at = sorted(k for i in local if (k := base.index.get(i)) is not None and k < len(nodes))
            if all(nodes[k].id in local for k in at):
                return [nodes[k] for k in at]
        return [node for node in nodes if node.id in local]

    # -- one body

    def _layout_body(self, body: Body, children: Children, base: Placed | None) -> tuple[BodyLayout, Placed | None]:
        return layout_body(self, body, children, base)

    def place(
        self,
        name: str,
        px_sizes: list[Point],
        short: list[tuple[int, int]],
        pair_list: list[tuple[int, int]],
        ranks: list[int],
        notes: list[str],
    ) -> tuple[bool, list[float], list[float], dict[tuple[int, int], list[Point]]]:
        """Whether dot was used, the box centres' x and y (px) from dot or the layered engine, and
        dot's routes; a fallback to the layered layout is noted in `notes`."""
        n_items = len(px_sizes)
        use_dot = self.wants_dot(n_items)
        if self.engine == "auto" and n_items > self.dot_max_nodes:
            notes.append(f"{name}: {n_items} nodes, above dot's limit of {self.dot_max_nodes}; used the layered layout")
        if use_dot and not self.dot_ok():
            use_dot = False
            notes.append("pygraphviz is not available; used the layered layout")
        routes: dict[tuple[int, int], list[Point]] = {}
        centres: list[Point] = []
        if use_dot and n_items:
            try:
                if self.progress is not None:
                    self.progress("dot", n_items)
                try:
                    centres, routes = run_dot(px_sizes, short, direction="LR" if self.lr else "TB")
                finally:
                    if self.progress is not None:
                        self.progress("dot-done", n_items)
            except Exception as exc:  # a dot failure must not lose the drawing
                use_dot = False
                notes.append(f"dot failed on {name} ({type(exc).__name__}: {exc}); used the layered layout")
        if not use_dot:
            tb_sizes = [(h, w) for w, h in px_sizes] if self.lr else px_sizes
            sweeps = 4 if n_items <= 20000 else 2  # past that, nobody reads it all; keep it fast
            xs, ys = layered_layout(
                tb_sizes, pair_list, ranks=ranks, order_edges=short, sweeps=sweeps, layer_gap=LAYER_GAP, node_gap=NODE_GAP
            )
            cxs, cys = (ys, xs) if self.lr else (xs, ys)
            return False, cxs, cys, {}
        return use_dot, [c[0] for c in centres], [c[1] for c in centres], routes
