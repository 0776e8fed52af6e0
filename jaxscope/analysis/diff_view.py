"""A diff (`trace_diff.GraphDiff`) made visible: both traces as one graph (B's, with A's removed
equations put back where they were), each box's status, and the diff in words.

The union graph gives every body occurrence its own body (a jit called twice may differ in one
call only): B's nodes keep their ids, so B's paths are the union's paths; A's removed nodes are
``r`` + their id beside them, wired to the B nodes their A neighbours matched.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from jaxscope.analysis.module_keys import module_keys
from jaxscope.analysis.scope_view import ScopedGraph
from jaxscope.analysis.trace_diff import GraphDiff
from jaxscope.schema.graph import Body, Edge, Graph, Node, SubgraphRef, owner_chain, resolve

# light fills (black text stays readable); the same boxes grey, so no family colour reads as a status
COLOURS = {"same": "#eef0f3", "added": "#8fd694", "removed": "#f4a29a", "changed": "#f9c66b"}
REMOVED = "r"  # the id prefix of A's removed nodes in the union


@dataclass(frozen=True)
class Union:
    graph: Graph
    status: dict[str, str]  # union path -> "same", "added", "removed" or "changed" (an owner: something inside changed)


def union(a: Graph, b: Graph, d: GraphDiff) -> Union:
    removed = set(d.removed)
    status: dict[str, str] = {}
    status.update(d.status_b())
    bodies: dict[str, Body] = {}
    a_inputs = {n.label: n for n in a.top.nodes if n.kind == "input"}

    def a_node(body: Body, node_id: str) -> Node | None:
        return next((n for n in body.nodes if n.id == node_id), None)

    def build(bb: Body | None, b_prefix: str, ab: Body | None, a_prefix: str, u_prefix: str) -> tuple[str, int]:
        body_id = f"u{len(bodies)}"
        bodies[body_id] = Body(body_id, "", (), (), 0, 0)  # reserved: ids stay in visiting order
        nodes: list[Node] = []
        edges: list[Edge] = list(bb.edges) if bb is not None else []
        total = 0
        b_ids = {n.id for n in bb.nodes} if bb is not None else set()
        for node in bb.nodes if bb is not None else ():
            path = b_prefix + node.id
            if node.kind == "input" and not b_prefix and node.label not in a_inputs:
                status[path] = "added"
            elif node.kind == "input" and not b_prefix and a_inputs[node.label].avals != node.avals:
                status[path] = "changed"
            status.setdefault(path, "same")
            subs = []
            x = d.a_of.get(path)
            for index, ref in enumerate(node.subgraphs):
                a_sub = _sub(a, x, index) if x is not None else None
                sub_id, n = build(b.bodies[ref.body], f"{path}:{index}/", a_sub, f"{x}:{index}/", f"{u_prefix}{node.id}:{index}/")
                subs.append(SubgraphRef(ref.role, sub_id, ref.param))
                total += n
            nodes.append(replace(node, subgraphs=tuple(subs)) if subs else node)
        if ab is not None:
            gone = set()
            for node in ab.nodes:
                path = a_prefix + node.id
                if bb is None or _gone(node, path, removed, d, b_ids, b_prefix):
                    gone.add(node.id)
            for node in ab.nodes:
                if node.id not in gone:
                    continue
                mine = node.id if bb is None else REMOVED + node.id
                subs = []
                for index, ref in enumerate(node.subgraphs):
                    sub_id, n = build(None, "", a.bodies[ref.body], "", f"{u_prefix}{mine}:{index}/")
                    subs.append(SubgraphRef(ref.role, sub_id, ref.param))
                    total += n
                nodes.append(replace(node, id=mine, subgraphs=tuple(subs)))
                if node.kind == "eqn" or (node.kind == "input" and not a_prefix):
                    status[u_prefix + mine] = "removed"
            for e in ab.edges:
                if bb is None:
                    edges.append(e)
                    continue
                if e.src not in gone and e.dst not in gone:
                    continue
                src = REMOVED + e.src if e.src in gone else _local(d.b_of.get(a_prefix + e.src), b_prefix, b_ids, e.src)
                dst = REMOVED + e.dst if e.dst in gone else _local(d.b_of.get(a_prefix + e.dst), b_prefix, b_ids, e.dst)
                if src is not None and dst is not None:
                    edges.append(Edge(src, dst, e.src_port, e.dst_port, e.aval))
        n_eqns = sum(1 for n in nodes if n.kind == "eqn")
        source = bb or ab
        assert source is not None
        bodies[body_id] = Body(body_id, source.title, tuple(nodes), tuple(edges), n_eqns, n_eqns + total)
        return body_id, n_eqns + total

    root, _ = build(b.top, "", a.top, "", "")
    return Union(Graph(b.function, bodies, root), status)


def removed_path(d: GraphDiff, a_path: str) -> str:
    """Where A's equation at `a_path` (removed) is drawn in the union graph."""
    owner, _, local = a_path.rpartition("/")
    if not owner:
        return REMOVED + local
    eqn, _, index = owner.rpartition(":")
    mapped = d.b_of.get(eqn)
    return f"{mapped}:{index}/{REMOVED}{local}" if mapped is not None else f"{removed_path(d, eqn)}:{index}/{local}"


def _sub(graph: Graph, owner: str, index: int) -> Body | None:
    try:
        _, node = resolve(graph, owner)
    except (KeyError, IndexError):
        return None
    return graph.bodies.get(node.subgraphs[index].body) if index < len(node.subgraphs) else None


def _gone(node: Node, path: str, removed: set[str], d: GraphDiff, b_ids: set[str], b_prefix: str) -> bool:
    """Whether an A node of a body both sides have is drawn as removed: a removed equation, a
    literal of one, an argument B lacks, a body input or constant with no B node at its place."""
    if node.kind == "eqn":
        return path in removed
    if node.kind == "literal":
        return path.rpartition(".")[0] in removed
    if node.kind in ("input", "const") and not b_prefix and "/" not in path:
        return path not in d.b_of
    return node.id not in b_ids and node.kind != "output"


def _local(b_path: str | None, b_prefix: str, b_ids: set[str], a_id: str) -> str | None:
    """The id, in the body at `b_prefix`, of the B node an A node matched; a body's own input or
    output by its place; None when it matched nothing here."""
    if b_path is not None:
        local = b_path[len(b_prefix) :] if b_path.startswith(b_prefix) else ""
        return local if local and "/" not in local and local in b_ids else None
    return a_id if a_id in b_ids and not a_id.startswith("e") else None


def report(a: Graph, b: Graph, d: GraphDiff, names: tuple[str, str] = ("A", "B"), every: bool = False) -> list[str]:
    """The diff in words: what each side is, arguments, the removed and added equations grouped by
    scope and source line (each equation with `every`), the changed ones, then the summary line."""
    na = {p: resolve(a, p)[1] for p in (*d.removed, *(c.a for c in d.changed))}
    nb = {p: resolve(b, p)[1] for p in (*d.added, *(c.b for c in d.changed))}
    lines = [f"A (before): {names[0]} ({a.top.total_eqns} equations)", f"B (now): {names[1]} ({b.top.total_eqns} equations)"]
    if d.inputs:
        lines += ["", "arguments:", *(f"  {line}" for line in d.inputs)]
    for title, mark, graph, paths, nodes in (("removed (in A only)", "-", a, d.removed, na), ("added (in B only)", "+", b, d.added, nb)):
        if not paths:
            continue
        lines += ["", f"{title}: {len(paths)} equation{'s' if len(paths) != 1 else ''}"]
        if every:
            lines += [f"  {mark} {p:<10} {_eqn(nodes[p], _where(graph, p))}" for p in paths]
            continue
        groups: dict[tuple[str, str], list[Node]] = {}
        keys = module_keys(graph.top, graph.function)[0]
        for p in paths:
            groups.setdefault((_module(keys, p, nodes[p]), _where(graph, p)), []).append(nodes[p])
        for (scope, where), group in groups.items():
            kinds = Counter(n.label for n in group)
            listed = ", ".join(f"{k} ×{v}" if v > 1 else k for k, v in kinds.most_common(6)) + (", …" if len(kinds) > 6 else "")
            lines.append(f"  {mark} {len(group):>4}  {scope or '(top)'}  {where}  {listed}")
    if d.changed:
        lines += ["", f"changed: {len(d.changed)} equation{'s' if len(d.changed) != 1 else ''}"]
        if every:
            for c in d.changed:
                node = nb[c.b]
                lines.append(f"  ~ {c.a} → {c.b}  {node.label}  {node.name_stack or '(top)'}  {_where(b, c.b)}: {'; '.join(c.what)}")
        else:
            lines += _changed_by_module(b, d, nb)
    lines += ["", d.summary()]
    return lines


def _changed_by_module(b: Graph, d: GraphDiff, nodes: dict[str, Node]) -> list[str]:
    """The changed equations a row per module and primitive, biggest first, with what changed in
    the first and how many others: an optimizer's update of every leaf is one row per transform
    (146 rows of optax broadcasts buried the one change that mattered, a scan's length)."""
    keys = module_keys(b.top, b.function)[0]
    rows: dict[tuple[str, str], list[str]] = {}
    for c in d.changed:
        rows.setdefault((_module(keys, c.b, nodes[c.b]), nodes[c.b].label), []).append("; ".join(c.what))
    out = []
    for (where, label), whats in sorted(rows.items(), key=lambda kv: -len(kv[1])):
        others = len(set(whats)) - 1
        more = f" (and {others} other change{'s' if others != 1 else ''})" if others else ""
        out.append(f"  ~ {len(whats):>4}  {where}  {label}: {whats[0]}{more}")
    return out


def _module(keys: dict[str, tuple[str, ...]], path: str, node: Node) -> str:
    """The module (and pass) an equation belongs to, named as the grouped view and `cost` name it."""
    from jaxscope.analysis.cost import key_of

    top = path.removeprefix(REMOVED).split("/")[0].split(":")[0]
    return key_of(node, "scope", 0, keys[top]) if top in keys else node.name_stack or "(top)"


def _where(graph: Graph, path: str) -> str:
    """file:line of the equation at `path`, else of the nearest call that holds it: the equations
    of a library's jit (jnp.linalg.norm) carry no frame of the user's, as JAX cuts tracebacks at
    each traced function."""
    for p in (path, *reversed(owner_chain(path))):
        s = resolve(graph, p)[1].source
        if s is not None:
            return f"{s.file.rsplit('/', 1)[-1]}:{s.line}"
    return "-"


def _eqn(node: Node, where: str) -> str:
    return f"{node.label:<18} {', '.join(node.avals):<20} {node.name_stack or '(top)'}  {where}"


def shown_status(status: dict[str, str], view: ScopedGraph | None = None) -> dict[str, str]:
    """Each drawn box's status (`view`: the grouped view drawn): an equation's own; a group's or a
    collapsed owner's what its equations share ("removed" when they all went, "same" when none
    differ), else "changed"."""
    inside: dict[str, list[str]] = {}
    out: dict[str, str] = {}
    for path, what in status.items():
        for shown in view.view_paths([path]) if view is not None else [path]:
            if shown.rpartition("/")[2] == path.rpartition("/")[2]:  # the node itself, not a group holding it
                out[shown] = what
            if _is_equation(path):  # a literal or a jit body's input says nothing of what changed
                for owner in owner_chain(shown):
                    inside.setdefault(owner, []).append(what)
    for owner, found in inside.items():
        if owner in out:
            continue
        members = [p for p in (view.real_paths([owner]) if view is not None else [owner]) if _is_equation(p)]
        out[owner] = found[0] if len(set(found)) == 1 and len(found) >= len(members) else "changed"
    return out


def _is_equation(path: str) -> bool:
    """An equation, or an argument of the program (added or reshaped ones are differences too)."""
    last = path.rpartition("/")[2]
    return "." not in last and (last.removeprefix(REMOVED)[:1] == "e" or (last == path and last.startswith("in")))
