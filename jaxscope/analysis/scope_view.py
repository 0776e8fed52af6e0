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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar

from jaxscope.analysis.avals import aval_bytes, format_bytes
from jaxscope.analysis.module_keys import (
    NUMBERED,
    PATH_TOKEN,
    Crossings,
    Key,
    display_name,
    group_key,
    module_keys,
    rematerialized,
    traced_function,
    value_path,
)
from jaxscope.analysis.scopes import read_scope
from jaxscope.schema.expansion import auto_expanded
from jaxscope.schema.graph import GROUP_KINDS, Body, Edge, Graph, Node, SubgraphRef, group_of
from jaxscope.schema.primitives import primitive

T = TypeVar("T")


@dataclass(frozen=True)
class ScopedGraph:
    """The grouped view of `real`. The window and the exports draw `graph`; links, sources and run
    results speak `real`'s paths: `to_view` and `real_paths` cross between the two."""

    graph: Graph
    prefix: dict[str, str]  # top-level node id -> the view path prefix of its group ("g0:0/g2:0/")
    real: Graph
    twins: dict[str, tuple[str, ...]] = field(default_factory=dict)  # a repeated layer -> its N instances' paths
    inner: dict[str, dict[str, str]] = field(default_factory=dict)  # a grouped loop body's id -> `prefix` of its nodes

    @property
    def grouped(self) -> bool:
        return self.graph is not self.real

    def to_view(self, path: str) -> str:
        """A real path -> the view's: the group parts of each level it passes put in."""
        head = path.split("/", 1)[0].split(":", 1)[0]
        if not self.inner or "/" not in path:
            return self.prefix.get(head, "") + path
        parts, body, out = path.split("/"), self.real.root, []
        for i, part in enumerate(parts):
            node_id, _, index = part.partition(":")
            own = self.prefix if i == 0 else self.inner.get(body, {})
            out.append(own.get(node_id, "") + part)
            node = self._nodes(body).get(node_id)
            if node is None or not index.isdigit() or int(index) >= len(node.subgraphs):
                return "/".join(out + parts[i + 1 :])
            body = node.subgraphs[int(index)].body
        return "/".join(out)

    def to_real(self, path: str) -> str:
        """A view path -> the real graph's (a group's own path, or its inputs' or outputs' box -> "")."""
        parts = path.split("/")
        if is_group(parts[-1]) or (parts[-1] in ("in", "out") and len(parts) > 1 and is_group(parts[-2])):
            return ""  # (a group, or its "N inputs"/"N outputs" box: they stand for nothing real)
        return "/".join(p for p in parts if not is_group(p))

    def drawn(self, by_path: Mapping[str, T]) -> dict[str, T]:
        """Values keyed by program path (an overlay's, a note's, a source line's colour) keyed by the
        drawn paths instead: the one crossing for what is drawn on the boxes."""
        return {self.to_view(p): v for p, v in by_path.items()} if self.grouped else dict(by_path)

    def view_paths(self, paths: Iterable[str]) -> list[str]:
        return [self.to_view(p) for p in paths] if self.grouped else list(paths)

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
            elif real := self.to_real(path):
                out.append(real)
        return list(dict.fromkeys(out))

    def _nodes(self, body: str) -> dict[str, Node]:
        found = self._index.get(body)
        if found is None:
            found = self._index[body] = {n.id: n for n in self.real.bodies[body].nodes}
        return found

    @cached_property
    def _index(self) -> dict[str, dict[str, Node]]:  # a real body's id -> its nodes by id, read as asked
        return {}

    def _members(self, group: str) -> list[str]:
        """The real nodes inside the group at view path `group`, at the level of the body it is in."""
        parts = group.split("/")
        last_real = max((i for i, p in enumerate(parts[:-1]) if not is_group(p)), default=-1)
        above, rel = [p for p in parts[: last_real + 1] if not is_group(p)], "/".join(parts[last_real + 1 :])
        own, body = self.prefix, self.real.root
        for part in above:
            node_id, _, index = part.partition(":")
            body = self._nodes(body)[node_id].subgraphs[int(index or 0)].body
            own = self.inner.get(body, {})
        want, lead = rel + ":0/", "".join(p + "/" for p in above)
        return [lead + node_id for node_id, prefix in own.items() if prefix.startswith(want)]


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
    inside = set(_loop_bodies(graph))  # the bodies `scoped` groups below the top level

    def walk(body: Body, prefix: str, way: list[str]) -> None:
        for n in body.nodes:
            path = prefix + n.id
            if is_group(n.id) and n.subgraphs and (group := group_of(n)) is not None and group[0] == SCOPE:
                found[path] = [*way, _REPEATED.sub("", n.label)]
                walk(graph.bodies[n.subgraphs[0].body], f"{path}:0/", found[path])
            else:  # (a loop's body, and what lies inside it, holds groups too)
                for i, ref in enumerate(n.subgraphs):
                    if ref.body in inside:
                        walk(graph.bodies[ref.body], f"{path}:{i}/", way)

    walk(graph.top, "", [])
    out: set[str] = set()
    for scope in scopes:
        want = [p for p in scope.strip("/").split("/") if p]
        hits = [path for path, way in found.items() if want and _ends_with(way, want)]
        if not hits:
            names = sorted({way[-1] for way in found.values()})
            raise ValueError(f"--expand {scope!r}: no group is called that; the groups are {', '.join(names[:30])}")
        for path in hits:  # the group and every group (or loop) on the way to it
            parts = path.split("/")
            out.update("/".join([*parts[:i], parts[i].partition(":")[0]]) for i in range(len(parts)))
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
    """The view of `graph` with its top level grouped by `module_keys`, and each loop's body (a scan
    over layers: its ``attn``, ``mlp``, ``norm``) and what lies inside it grouped alike; the graph
    itself when no level makes `min_groups` groups (a plain function: nothing to show)."""
    builder = _Builder(graph)
    bodies = dict(graph.bodies)
    prefix: dict[str, str] = {}
    twins: dict[str, tuple[str, ...]] = {}
    inner: dict[str, dict[str, str]] = {}
    for body_id in (graph.root, *_loop_bodies(graph)):
        body = graph.bodies[body_id]
        member = _body_members(graph, body, min_groups, body_id != graph.root)
        if member is None:
            continue
        builder.start(member, rematerialized(body))
        nodes, edges = builder.level((), body.nodes, body.edges, "")
        n_eqns = sum(1 for n in nodes if n.kind == "eqn")
        bodies[body_id] = Body(body.id, body.title, tuple(nodes), tuple(edges), n_eqns, body.total_eqns)
        if body_id == graph.root:
            prefix, twins = builder.prefix, builder.twins
        else:
            inner[body_id] = builder.prefix
    if not prefix and not inner:
        return ScopedGraph(graph, {}, graph)
    bodies.update(builder.bodies)
    return ScopedGraph(Graph(graph.function, bodies, graph.root), prefix, graph, twins, inner)


def _loop_bodies(graph: Graph) -> list[str]:
    """The bodies of every loop and everything inside them (a `jax.checkpoint` in a scan's body: the
    backward pass's layer), each once: what `scoped` groups below the top level."""
    found: dict[str, None] = {}

    def walk(body_id: str, inside: bool) -> None:
        for n in graph.bodies[body_id].nodes:
            loop = inside or (n.kind == "eqn" and primitive(n.label).loop)
            for ref in n.subgraphs:
                if loop and ref.body not in found:
                    found[ref.body] = None
                    walk(ref.body, True)
                elif not loop:
                    walk(ref.body, False)

    walk(graph.root, False)
    return list(found)


def _body_members(graph: Graph, body: Body, min_groups: int, in_loop: bool) -> dict[str, Key] | None:
    """The group key of each of `body`'s nodes; None when fewer than `min_groups` groups would be
    made (in a loop's body, its pytrees of operands and results count: a backward scan's dozens of
    stacked parameters and gradients). In a loop's body the module every equation ran in
    (``Block.__call__``, which the loop already names) is left out, so its parts are the groups."""
    keys = _below_common(_passes_apart(body)) if in_loop else module_keys(body, graph.function)[0]
    if not in_loop and _n_groups(keys.values()) < min_groups:
        return None
    owner_of = {}  # literal id -> the equation it feeds
    for e in body.edges:
        if e.src in keys or "." not in e.src:
            continue
        owner_of[e.src] = e.dst
    member: dict[str, Key] = {}
    for n in body.nodes:
        if n.kind == "eqn":
            member[n.id] = keys[n.id]
        elif n.kind == "literal" and owner_of.get(n.id) in keys:
            member[n.id] = keys[owner_of[n.id]]
        elif n.kind in ("input", "output"):  # a pytree's leaves, grouped by their path: params, opt_state, ...
            tokens = PATH_TOKEN.findall(value_path(n.label))
            member[n.id] = (f"{n.kind}s", *tokens[:-1]) if len(tokens) > 1 else ()
        else:
            member[n.id] = ()
    _hoisted(graph, body, member)
    return member if not in_loop or _n_groups(member.values()) >= min_groups else None


def _n_groups(keys: Iterable[Key]) -> int:
    """How many groups the top of a body gets (a pass's group holds its modules)."""
    return len({k[:3] if k[1] == k[0] else k[:2] for k in keys if len(k) > 1})


RECOMPUTED = "rematted_computation"  # JAX's name stack of a checkpoint's forward, run again in its backward


def _passes_apart(body: Body) -> dict[str, Key]:
    """`module_keys` of a loop's body; a checkpointed layer's backward (the body of `remat2` in a
    backward loop) holds its forward again, marked by JAX's name stack alone: each pass is keyed on
    its own, so a module's recomputed forward and its backward are two groups, not calls #1 and #2."""
    again = {n.id for n in body.nodes if n.kind == "eqn" and n.name_stack.split("/", 1)[0] == RECOMPUTED}
    if not again or len(again) == sum(1 for n in body.nodes if n.kind == "eqn"):
        return module_keys(body, "")[0]
    keys: dict[str, Key] = {}
    forward = Body(body.id, body.title, tuple(n for n in body.nodes if n.kind != "eqn" or n.id in again), body.edges, 0, 0)
    for node_id, k in module_keys(forward, "")[0].items():
        keys[node_id] = ("forward", *k[1:]) if k else ()
    for n in body.nodes:  # (its transposes' data flow does not follow its calls: grouped by the calls alone)
        if n.kind == "eqn" and n.id not in again:
            k = group_key(n)[0]
            keys[n.id] = ("backward", *k[1:]) if k else ()
    return keys


def _below_common(keys: dict[str, Key]) -> dict[str, Key]:
    """`keys` without the module all of them share below their pass, as often as there is one; an
    equation of that module itself (a residual add of ``Block.__call__``) sits at the top."""
    while True:
        grouped = [k for k in keys.values() if len(k) > 1]
        heads = {k[:2] for k in grouped}
        if len(heads) != 1 or len(grouped) < len(keys) // 2:
            return keys
        (head,) = heads
        keys = {i: (() if k == head else (k[0], *k[2:]) if k[:2] == head else k) for i, k in keys.items()}


def _hoisted(graph: Graph, body: Body, member: dict[str, Key]) -> None:
    """Put the equations JAX moved out of a loop's body (loop-invariant values, a LayerNorm's
    constants: their frames do not start at the traced function) and that feed that loop alone into
    one group beside it, ``hoisted for scan``, instead of a row of anonymous boxes above it."""
    readers: dict[str, set[str]] = defaultdict(set)
    for e in body.edges:
        readers[e.src].add(e.dst)
    loops = {n.id: n for n in body.nodes if n.kind == "eqn" and primitive(n.label).loop}
    if not loops:
        return
    traced = traced_function(body, "" if body is not graph.top else graph.function)
    feeds: dict[str, str] = {}  # a hoisted equation -> the loop it feeds
    for n in reversed(body.nodes):
        if n.kind != "eqn" or not n.frames or n.frames[0].function == traced or not readers[n.id]:
            continue
        targets = {r if r in loops else feeds.get(r, "") for r in readers[n.id]}
        if len(targets) == 1 and (loop := next(iter(targets))):
            feeds[n.id] = loop
    for node_id, loop in feeds.items():
        title = graph.bodies[loops[loop].subgraphs[-1].body].title.split(" (", 1)[0]
        member[node_id] = (*member[loop], f"hoisted for {title}")
    for n in body.nodes:  # their literals with them
        if n.kind == "literal" and len(readers[n.id]) == 1 and (owner := next(iter(readers[n.id]))) in feeds:
            member[n.id] = member[owner]


class _Builder:
    """Builds the grouped levels of one graph's bodies (`start` per body), numbering their groups
    and new bodies apart."""

    def __init__(self, graph: Graph) -> None:
        self.member: dict[str, Key] = {}
        self.remat_names, self.remat_ids = frozenset[str](), frozenset[str]()
        self.bodies: dict[str, Body] = {}
        self.count = 0
        self.next_body = len(graph.bodies)
        self.totals = {b.id: b.total_eqns for b in graph.bodies.values()}
        self.signature: dict[str, tuple[object, ...]] = {}
        self.structure: dict[str, tuple[object, ...]] = {}  # the signature without shapes: "same structure, other shapes"
        self.twins: dict[str, tuple[str, ...]] = {}  # a repeated layer's view path -> every instance's, in order
        self.prefix: dict[str, str] = {}  # a grouped node's id -> its innermost group's view path prefix

    def start(self, member: dict[str, Key], remat: tuple[frozenset[str], frozenset[str]]) -> None:
        """Begin a body whose nodes go to the groups `member` says."""
        self.member = member
        self.remat_names, self.remat_ids = remat  # checkpointed functions (by name), equations under a remat
        self.prefix, self.twins = {}, {}

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
        pass_of = {gid: child_key[0] for child_key, gid, _ in made}
        crossed = Crossings.of(edges, group_of, pass_of)
        out_edges, ports_in, ports_out = crossed.out_edges, crossed.ports_in, crossed.ports_out
        inner_edges, residuals, aval_of = crossed.inner_edges, crossed.residuals, crossed.aval_of
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
        for item in built:
            out_nodes.append(self._group_node(prefix, item, same, paths, shaped, recomputed))
        return out_nodes, out_edges

    def _group_node(
        self,
        prefix: str,
        item: tuple[Key, str, list[str], list[str], list[Node], list[Edge], int, list[str]],
        same: dict[object, list[str]],
        paths: dict[object, list[str]],
        shaped: dict[object, list[str]],
        recomputed: set[str],
    ) -> Node:
        """A group's box at its level, and its body: titled by its module (its pass, its identical
        twins, remat), its detail saying what it holds, what it shares and what it keeps."""
        child_key, gid, ins, outs, sub_nodes, sub_edges, total, kept = item
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
        return Node(
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
