"""The model's structure as nested groups of the graph: a view in which the top level's equations
sit inside one group per scope (flax module, `jax.named_scope`), per pass (forward and backward
apart), and equations outside every scope inside a group per library call (optax's update).

Which group each equation joins, and its name, is `module_keys`'s; this module builds the view
from those keys and picks what a first layout opens (`first_open`: the model's repeated blocks).

A group is an equation node with one sub-graph (role ``module (pass)``), so everything that draws,
collapses, expands and exports sub-jaxprs does the same for groups: ``--collapse 1`` is a picture of
the top modules. Paths change inside groups (``g0:0/g2:0/e5`` for top-level ``e5``); `ScopedGraph`
maps them both ways so links made on the real graph still apply.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from jaxscope.analysis.avals import aval_bytes, format_bytes
from jaxscope.analysis.module_keys import NUMBERED, PATH_TOKEN, Key, display_name, module_keys, rematerialized
from jaxscope.analysis.scopes import read_scope
from jaxscope.layout.engine import auto_expanded
from jaxscope.schema.graph import GROUP_KINDS, Body, Edge, Graph, Node, SubgraphRef, group_of


@dataclass(frozen=True)
class ScopedGraph:
    """The grouped view of `real`. The window and the exports draw `graph`; links, sources and run
    results speak `real`'s paths: `to_view` and `real_paths` cross between the two."""

    graph: Graph
    prefix: dict[str, str]  # top-level node id -> the view path prefix of its group ("g0:0/g2:0/")
    real: Graph
    twins: dict[str, tuple[str, ...]] = field(default_factory=dict)  # a repeated layer -> its N instances' paths

    @property
    def grouped(self) -> bool:
        return self.graph is not self.real

    def to_view(self, path: str) -> str:
        head = path.split("/", 1)[0].split(":", 1)[0]
        return self.prefix.get(head, "") + path

    def to_real(self, path: str) -> str:
        """A view path -> the real graph's (a group's own path -> "")."""
        parts = path.split("/")
        while parts and is_group(parts[0]):
            parts = parts[1:]
        return "/".join(parts)

    def view_paths(self, paths: Iterable[str]) -> list[str]:
        return [self.to_view(p) for p in paths] if self.prefix else list(paths)

    def real_paths(self, paths: Iterable[str]) -> list[str]:
        """The real nodes of view paths: a node's own, a group's every member; a group's own
        "N inputs"/"N outputs" boxes stand for nothing real."""
        if not self.grouped:
            return list(paths)
        out: list[str] = []
        for path in paths:
            last = path.rsplit("/", 1)[-1]
            if is_group(last):
                out += self._members(path)
            elif (real := self.to_real(path)) and self._is_real(real):
                out.append(real)
        return list(dict.fromkeys(out))

    def _is_real(self, path: str) -> bool:
        return "/" in path or ":" in path or path in self._top_ids

    @cached_property
    def _top_ids(self) -> frozenset[str]:
        return frozenset(n.id for n in self.real.top.nodes)

    def _members(self, group: str) -> list[str]:
        want = group + ":0/"
        return [node_id for node_id, prefix in self.prefix.items() if prefix.startswith(want)]


SCOPE, VALUES = GROUP_KINDS  # `SubgraphRef.param` of a module's group ("scope backward" in a pass), of inputs' or outputs'
GROUPS_FIT = 150  # boxes a model opens with: its modules a level or two down (issue 60.2: ~150 read when fitted)
BLOCKS_FIT = 150  # boxes a model with repeated blocks may open with to show them all
_REPEATED = re.compile(r" \((\d+) alike\)$")  # "encoder.layers[2] (4 alike)": one of 4 identical layers


def first_open(graph: Graph, fits: int = GROUPS_FIT, blocks_fit: int = BLOCKS_FIT) -> frozenset[str]:
    """The clusters a first layout opens. A model with repeated layers opens every group on the way
    to them (the forward and the backward pass, the model's call), so the first picture is its
    blocks, each a box, when at most `blocks_fit` boxes are drawn; the loss's and the optimizer's
    arithmetic stays inside their shut groups. Otherwise a grouped view opens its module groups a
    whole level at a time while at most `fits` boxes are drawn (every module at that level alike), but
    a flat group with more boxes than fit on its own (an update of every leaf) and a library's call
    (the optimizer's update) stay shut; groups of inputs and outputs stay boxes. A view without groups opens as `auto_expanded` picks."""
    if not any(is_group(n.id) for n in graph.top.nodes):
        return auto_expanded(graph)
    blocks = _to_blocks(graph)
    count = len(graph.top.nodes) + sum(len(body.nodes) - 1 for body in blocks.values())
    if blocks and count <= blocks_fit:
        return frozenset(blocks)
    count, chosen = len(graph.top.nodes), []
    level = [("", graph.top)]
    while level:
        opening = [
            (prefix + n.id, graph.bodies[n.subgraphs[0].body])
            for prefix, body in level
            for n in body.nodes
            if (group := group_of(n)) is not None and group[0] == SCOPE
        ]
        opening = [
            (path, body)
            for path, body in opening
            if not _library(body.title) and (len(body.nodes) <= fits or any(is_group(n.id) for n in body.nodes))
        ]
        count += sum(len(body.nodes) - 1 for _, body in opening)
        if not opening or count > fits:
            break
        chosen += [path for path, _ in opening]
        level = [(f"{path}:0/", body) for path, body in opening]
    return frozenset(chosen)


def expand_scopes(graph: Graph, scopes: Iterable[str]) -> frozenset[str]:
    """The groups named `scopes` (a group's title, ``block1``, or the last titles of its way down,
    ``CNN.__call__/block1`` or ``block1/conv``; a pass's or repeat's suffix need not be given), each
    with the groups on the way to it, so it is drawn open; ValueError names one that matches none,
    with the groups there are."""
    found: dict[str, list[str]] = {}  # group path -> the titles on the way to it, itself last

    def walk(body: Body, prefix: str, way: list[str]) -> None:
        for n in body.nodes:
            if is_group(n.id) and n.subgraphs and (group := group_of(n)) is not None and group[0] == SCOPE:
                path = prefix + n.id
                found[path] = [*way, _REPEATED.sub("", n.label)]
                walk(graph.bodies[n.subgraphs[0].body], f"{path}:0/", found[path])

    walk(graph.top, "", [])
    out: set[str] = set()
    for scope in scopes:
        want = [p for p in scope.strip("/").split("/") if p]
        hits = [path for path, way in found.items() if want and _ends_with(way, want)]
        if not hits:
            names = sorted({way[-1] for way in found.values()})
            raise ValueError(f"--expand {scope!r}: no group is called that; the groups are {', '.join(names[:30])}")
        for path in hits:  # the group and every group on the way to it
            parts = path.split(":0/")
            out.update(":0/".join(parts[: i + 1]) for i in range(len(parts)))
    return frozenset(out)


def _ends_with(way: list[str], want: list[str]) -> bool:
    """Titles match with or without their pass: ``block1`` is ``block1 (forward)`` too."""
    tail = way[-len(want) :]
    return len(tail) == len(want) and all(t == w or t.split(" (", 1)[0] == w for t, w in zip(tail, want))


def _to_blocks(graph: Graph) -> dict[str, Body]:
    """The module groups that hold a model's repeated layers ("block2 (3 alike)", or a `scan` over
    layers), by path, through groups that fit on their own: in each top-level group, the repeats
    nearest the top (a ViT's encoder blocks, not the attention's `query (3 alike)` of a last block
    that differs from the others)."""
    found: dict[str, list[tuple[int, list[tuple[str, Body]]]]] = defaultdict(list)  # top group -> (depth, the way)

    def walk(body: Body, prefix: str, above: list[tuple[str, Body]]) -> None:
        for n in body.nodes:
            group = group_of(n)
            module = group is not None and group[0] == SCOPE
            repeated = (n.label == "scan" and bool(n.subgraphs)) or (module and bool(_REPEATED.search(n.label)))
            if repeated and above:  # a scan over layers is a stack of blocks too
                found[above[0][0]].append((len(above), above))
            if not module or _REPEATED.search(n.label) or _library(n.label):
                continue  # (the optimizer's update per parameter is no block of the model)
            inner = graph.bodies[n.subgraphs[0].body]
            if len(inner.nodes) <= GROUPS_FIT:  # (an update of every leaf is no way to a block)
                walk(inner, f"{prefix}{n.id}:0/", [*above, (prefix + n.id, inner)])

    walk(graph.top, "", [])
    out: dict[str, Body] = {}
    for ways in found.values():
        nearest = min(depth for depth, _ in ways)
        for depth, way in ways:
            if depth == nearest:
                out.update(way)
    return out


def _library(title: str) -> bool:
    """A library's call (``flax: Optimizer.update``, ``optax: softmax_cross_entropy…``): its
    internals are no part of the user's model, and a first view keeps them shut."""
    return ": " in title.split(" (", 1)[0]


def is_group(part: str) -> bool:
    """Whether a path part ("g4" or "g4:0") is a group of the scoped view (real ids never start with g)."""
    head = part.partition(":")[0]
    return head[:1] == "g" and head[1:].isdigit()


def for_window(graph: Graph, grouping: bool = True, fits: int = BLOCKS_FIT) -> ScopedGraph:
    """What the window draws: the model's groups when the program has scopes (a flax model, a
    `jax.named_scope`) or more top-level nodes than read flat (an nnx CNN's step of 557 boxes, whose
    modules leave no scopes, was drawn flat); else the graph itself (a tutorial's small plain
    function reads best as it is). The layout process applies the same rule
    to the graph it is sent, so both sides draw the same view."""
    if not grouping:
        return ScopedGraph(graph, {}, graph)
    top = graph.top.nodes
    if len(top) <= fits and not any(n.kind == "eqn" and read_scope(n.name_stack).parts for n in top):
        return ScopedGraph(graph, {}, graph)
    return scoped(graph)


def _chain(key: Key, nodes: list[Node]) -> str:
    """A call's group says the whole way its equations came, the wrappers its name folds in too
    (``; calls: train_step → _check_grads_wrapper → Optimizer.update → …``); "" for a scope's."""
    first = next((n for n in nodes if n.kind == "eqn" and n.frames and not is_group(n.id)), None)
    if first is None or key[0] in ("inputs", "outputs") or read_scope(first.name_stack).parts:
        return ""
    return "; calls: " + " → ".join(display_name(f.function).rsplit(".<lambda>", 1)[0] for f in first.frames)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def scoped(graph: Graph, min_groups: int = 2) -> ScopedGraph:
    """The view of `graph` with its top level grouped by `module_keys`; the graph itself when fewer
    than `min_groups` top-level groups would be made (a plain function: nothing to show)."""
    top = graph.top
    keys, _ = module_keys(top, graph.function)
    if len({k[:3] if k[1] == k[0] else k[:2] for k in keys.values() if len(k) > 1}) < min_groups:  # (a pass's group: its modules)
        return ScopedGraph(graph, {}, graph)
    owner_of = {}  # literal id -> the equation it feeds
    for e in top.edges:
        if e.src in keys or "." not in e.src:
            continue
        owner_of[e.src] = e.dst
    member: dict[str, Key] = {}
    for n in top.nodes:
        if n.kind == "eqn":
            member[n.id] = keys[n.id]
        elif n.kind == "literal" and owner_of.get(n.id) in keys:
            member[n.id] = keys[owner_of[n.id]]
        elif n.kind in ("input", "output"):  # a pytree's leaves, grouped by their path: params, opt_state, ...
            tokens = PATH_TOKEN.findall(n.label)
            member[n.id] = (f"{n.kind}s", *tokens[:-1]) if len(tokens) > 1 else ()
        else:
            member[n.id] = ()
    builder = _Builder(graph, member, rematerialized(top))
    root_nodes, root_edges = builder.level((), top.nodes, top.edges, "")
    prefix = builder.prefix
    bodies = dict(graph.bodies)
    bodies.update(builder.bodies)
    n_eqns = sum(1 for n in root_nodes if n.kind == "eqn")
    bodies[graph.root] = Body(top.id, top.title, tuple(root_nodes), tuple(root_edges), n_eqns, top.total_eqns)
    return ScopedGraph(Graph(graph.function, bodies, graph.root), prefix, graph, builder.twins)


class _Builder:
    def __init__(
        self, graph: Graph, member: dict[str, Key], remat: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
    ) -> None:
        self.member = member
        self.remat_names, self.remat_ids = remat  # checkpointed functions (by name), equations under a remat
        self.bodies: dict[str, Body] = {}
        self.count = 0
        self.next_body = len(graph.bodies)
        self.totals = {b.id: b.total_eqns for b in graph.bodies.values()}
        self.signature: dict[str, tuple[object, ...]] = {}
        self.structure: dict[str, tuple[object, ...]] = {}  # the signature without shapes: "same structure, other shapes"
        self.twins: dict[str, tuple[str, ...]] = {}  # a repeated layer's view path -> every instance's, in order
        self.prefix: dict[str, str] = {}  # a grouped node's id -> its innermost group's view path prefix

    def level(
        self, key: Key, nodes: tuple[Node, ...] | list[Node], edges: tuple[Edge, ...] | list[Edge], prefix: str
    ) -> tuple[list[Node], list[Edge]]:
        """The nodes at group `key`: its own, one group node per child key (with its body made), and
        the edges between them; `prefix` is this level's view path prefix."""
        depth = len(key)
        take = depth + 1 if depth else 2  # the top level: a pass and a module ("forward", "Deep") at once
        here: list[Node] = []
        children: dict[Key, list[Node]] = defaultdict(list)
        for n in nodes:
            k = self.member.get(n.id, ())
            if len(k) >= take and k[:depth] == key:
                children[k[:take]].append(n)
            else:
                here.append(n)
        if not children:  # a module with no sub-modules: its nodes and edges as they are
            return list(nodes), list(edges)
        group_of: dict[str, str] = {}  # node id -> the group node id that holds it at this level
        made: list[tuple[Key, str, list[Node]]] = []
        recomputed: set[str] = set()  # groups of a checkpointed layer: the backward pass runs their forward again
        for child_key, inside in children.items():
            gid = f"g{self.count}"
            self.count += 1
            made.append((child_key, gid, inside))
            for n in inside:
                group_of[n.id] = gid
            base = NUMBERED.sub("", child_key[-1]).split(": ", 1)[-1]
            if base in self.remat_names or any(n.id in self.remat_ids for n in inside):
                recomputed.add(gid)
        out_nodes = list(here)
        out_edges: list[Edge] = []
        ports_in: dict[str, dict[tuple[str, int], int]] = defaultdict(dict)
        ports_out: dict[str, dict[tuple[str, int], int]] = defaultdict(dict)
        inner_edges: dict[str, list[Edge]] = defaultdict(list)
        seen_out: set[tuple[str | int, ...]] = set()
        pass_of = {gid: child_key[0] for child_key, gid, _ in made}
        residuals: dict[str, set[tuple[str, int]]] = defaultdict(set)  # forward group -> its values the backward pass reads
        aval_of: dict[tuple[str, int], str] = {}
        for e in edges:
            if e.aval:
                aval_of.setdefault((e.src, e.src_port), e.aval)
            gs, gd = group_of.get(e.src), group_of.get(e.dst)
            if gs is not None and gs == gd:
                inner_edges[gs].append(e)
                continue
            if gs is not None and gd is not None and pass_of[gs] == "forward" and pass_of[gd] == "backward":
                residuals[gs].add((e.src, e.src_port))
            src, src_port = e.src, e.src_port
            if gs is not None:  # leaves a group: through one of its outputs
                src_port = ports_out[gs].setdefault((e.src, e.src_port), len(ports_out[gs]))
                src = gs
            dst, dst_port = e.dst, e.dst_port
            if gd is not None:  # enters a group: through one of its inputs
                port = ports_in[gd].setdefault((e.src, e.src_port), len(ports_in[gd]))
                inner_edges[gd].append(Edge("in", e.dst, port, e.dst_port, e.aval))
                dst, dst_port = gd, port
            if gs is not None:
                inner_edges[gs].append(Edge(e.src, "out", e.src_port, src_port, e.aval))
            # a group's values go in and out of its one box (their ports map to no sub-graph input: the
            # layout ends them at its cluster), so one edge per pair of boxes draws them all; a
            # module reading 400 parameters drew 400 edges on one line, and dot laid out each
            mark = (src, dst) if gs is not None or gd is not None else (src, dst, src_port, dst_port)
            if mark not in seen_out:
                seen_out.add(mark)
                out_edges.append(Edge(src, dst, src_port, dst_port, e.aval))
        built = []
        for child_key, gid, inside in made:
            ins = [aval_of.get(key, "") for key, _ in sorted(ports_in[gid].items(), key=lambda kv: kv[1])]
            outs = [aval_of.get(key, "") for key, _ in sorted(ports_out[gid].items(), key=lambda kv: kv[1])]
            sub_prefix = f"{prefix}{gid}:0/"
            # one box for what comes in and one for what goes out, each value a port: a module reads
            # tens of parameters, and a box each would bury its equations
            inner_nodes = [Node("in", "input", _count(len(ins), "input"), avals=tuple(ins))] if ins else []
            inner_nodes += inside
            kept = [aval_of.get(key, "") for key in sorted(residuals[gid])]
            out_label = _count(len(outs), "output") + (f", {_count(len(kept), 'residual')}" if kept else "")
            inner_nodes += [Node("out", "output", out_label, avals=tuple(outs))] if outs else []
            sub_nodes, sub_edges = self.level(child_key, inner_nodes, list(dict.fromkeys(inner_edges[gid])), sub_prefix)
            own = [n for n in sub_nodes if n.kind == "eqn" and not n.id.startswith("g")]
            groups = [n for n in sub_nodes if n.id.startswith("g")]
            total = sum(1 + sum(self.totals.get(r.body, 0) for r in n.subgraphs) for n in own)
            total += sum(self.totals.get(g.subgraphs[0].body, 0) for g in groups)
            # identical layers: the same primitives in order on the same shapes and dtypes, and the same
            # sub-groups, whatever their names (a conv block of 16 channels is not one of 32 again)
            own_sig = tuple((n.label, n.in_avals, n.avals) for n in own)
            self.signature[gid] = (own_sig, tuple(self.signature[g.id] for g in groups), tuple(ins), tuple(outs))
            self.structure[gid] = (tuple(n.label for n in own), tuple(self.structure[g.id] for g in groups))
            built.append((child_key, gid, ins, outs, sub_nodes, sub_edges, total, kept))
            for n in inside:
                self.prefix.setdefault(n.id, sub_prefix)  # the innermost group's, set first
        same: dict[object, list[str]] = defaultdict(list)
        paths: dict[object, list[str]] = defaultdict(list)
        shaped: dict[object, list[str]] = defaultdict(list)  # the names of each structure, whatever the shapes
        for child_key, gid, *_, total, _kept in built:
            if total:  # groups of inputs or outputs hold no equations: never "identical layers"
                same[self.signature[gid]].append(child_key[-1])
                paths[self.signature[gid]].append(prefix + gid)
                shaped[self.structure[gid]].append(child_key[-1])
        for child_key, gid, ins, outs, sub_nodes, sub_edges, total, kept in built:
            name, twins = child_key[-1], same[self.signature[gid]] if total else []
            if len(twins) > 1:
                self.twins[prefix + gid] = tuple(paths[self.signature[gid]])
            title = f"{name} ({child_key[0]})" if len(child_key) == 2 and child_key[0] not in ("program", name) else name
            if child_key[0] in ("inputs", "outputs") and len(child_key) > 2:
                title = name
            if len(twins) > 1:
                title += f" ({len(twins)} alike)"  # (not "×4": that reads as called 4 times)
            if gid in recomputed and child_key[0] not in ("inputs", "outputs"):
                title += " · remat"
            body_id = f"b{self.next_body}"
            self.next_body += 1
            n_eqns = sum(1 for n in sub_nodes if n.kind == "eqn")
            self.bodies[body_id] = Body(body_id, title, tuple(sub_nodes), tuple(sub_edges), n_eqns, total)
            self.totals[body_id] = total
            what = f"{child_key[0]} pass: {total} equations" if child_key[0] in ("forward", "backward") else f"{total} equations"
            if child_key[0] in ("inputs", "outputs"):
                what = _count(len(outs if child_key[0] == "inputs" else ins), "value")
            elif gid in recomputed:
                what += "; checkpointed (jax.checkpoint / remat): the backward pass computes it again instead of keeping its values"
            kin = [k for k in shaped[self.structure[gid]] if k not in twins] if total else []
            if kin:  # (a conv block of 16 channels beside one of 32: not identical, but the same layer)
                what += f"; same structure as {', '.join(kin[:4])}{', …' if len(kin) > 4 else ''}, other shapes"
            if kept:  # what the backward pass keeps of this forward pass: the memory a train step holds
                size = format_bytes(sum(aval_bytes(a) or 0 for a in kept))
                what += f"; {_count(len(kept), 'residual')} read by the backward pass ({size})"
            if len(twins) > 1:
                others = [t for t in twins if t != name]
                what += f"; identical to {', '.join(others)}" if len(others) <= 4 else f"; one of {len(twins)} identical layers"
            what += _chain(child_key, sub_nodes)
            values = child_key[0] in ("inputs", "outputs")
            kind = VALUES if values else f"{SCOPE} {child_key[0]}" if child_key[0] in ("forward", "backward") else SCOPE
            count = ("values", str(len(outs if child_key[0] == "inputs" else ins))) if values else ("equations", str(total))
            out_nodes.append(
                Node(
                    gid,
                    "eqn",
                    title,
                    avals=tuple(outs),
                    in_avals=tuple(ins),
                    name_stack="/".join(child_key[1:]),
                    params=(count,),
                    subgraphs=(SubgraphRef(title, body_id, kind),),
                    detail=what,
                )
            )
        return out_nodes, out_edges
