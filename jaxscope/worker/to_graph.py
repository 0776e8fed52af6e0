"""A traced ClosedJaxpr -> the core Graph: one Body per distinct jaxpr, walked generically.

Sub-jaxprs are found structurally in every equation's params (cond branches, while cond/body,
scan, nested jit, custom_jvp/vjp, remat2, shard_map, ...), so new higher-order primitives show
up as clusters without code here knowing about them; known ones get the titles and the integer
params (`Node.numbers`) their `schema.primitives` entries say.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from jaxscope.analysis.body_names import named_bodies
from jaxscope.schema.codec import maker
from jaxscope.schema.graph import Body, Edge, Graph, Node, SubgraphRef
from jaxscope.schema.primitives import body_title, primitive, read_numbers
from jaxscope.worker import jax_compat as jc

_NODE, _EDGE = maker(Node), maker(Edge)  # an equation's node and its operand edges, tens of thousands a trace

PARAM_CHARS = 160
Params = tuple[tuple[str, str], ...]  # (name, text) pairs
Numbers = tuple[tuple[str, tuple[int, ...]], ...]  # (name, integers) pairs: `Node.numbers`
Seen = tuple[list[tuple[str, Any, list[Any]]], Params, Numbers]


def build_graph(
    closed: Any,
    function: str,
    arg_names: tuple[str, ...] = (),
    result_paths: tuple[str, ...] = (),
    const_names: dict[int, str] | None = None,
) -> Graph:
    """Walk `closed` (a ClosedJaxpr) into a Graph whose root body is "b0"."""
    builder = GraphBuilder(const_names or {})
    root = builder.body(closed.jaxpr, list(closed.consts), function, arg_names, result_paths)
    return named_bodies(at_call_sites(Graph(function=function, bodies=builder.finish(), root=root)))


def at_call_sites(graph: Graph) -> Graph:
    """The equations of a body that name no line of the user's (their traceback holds only a
    library's frames: jax 0.12 cuts it at a `jit` inside the program, e.g. optax's
    `tree_bias_correction`) take their call sites' line, the user's line that called it, where every
    call site has the same one (a body shared by calls from two lines has no one line: left without)."""
    sites: dict[str, list[tuple[str, int]]] = {}  # body -> (owner body, index of the owner node)
    for body in graph.bodies.values():
        for k, node in enumerate(body.nodes):
            for ref in node.subgraphs:
                sites.setdefault(ref.body, []).append((body.id, k))
    bodies = dict(graph.bodies)
    changed = False
    for body_id in _callers_first(graph, sites):
        lines = [bodies[owner].nodes[k].source for owner, k in sites.get(body_id, ())]
        site = lines[0] if lines and all(line == lines[0] for line in lines) else None
        body = bodies[body_id]
        if site is not None and any(n.kind == "eqn" and n.source is None and n.frames for n in body.nodes):
            nodes = tuple(replace(n, source=site) if n.kind == "eqn" and n.source is None and n.frames else n for n in body.nodes)
            bodies[body_id] = replace(body, nodes=nodes)
            changed = True
    return Graph(graph.function, bodies, graph.root) if changed else graph


def _callers_first(graph: Graph, sites: dict[str, list[tuple[str, int]]]) -> list[str]:
    """The bodies in an order where every body comes after all that call it (Kahn's)."""
    waiting = {b: len({owner for owner, _ in sites.get(b, ())}) for b in graph.bodies}
    ready = [b for b, n in waiting.items() if n == 0]
    order: list[str] = []
    while ready:
        body_id = ready.pop()
        order.append(body_id)
        for callee in dict.fromkeys(ref.body for node in graph.bodies[body_id].nodes for ref in node.subgraphs):
            if callee in waiting:
                waiting[callee] -= 1
                if waiting[callee] == 0:
                    ready.append(callee)
    return order


def io_names(prim: str, path: str, params: dict[str, Any], n_in: int, n_out: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What a loop body's inputs and outputs are (a scan's consts, carry and slices of xs; a while's
    consts and carry), instead of in0…inN; () where the params do not say."""

    def numbered(*groups: tuple[str, int]) -> tuple[str, ...]:
        return tuple(f"{name}{i}" if count > 1 else name for name, count in groups for i in range(count))

    ports = primitive(prim).ports
    counts = jc.scan_counts(params) if ports == "scan" else None
    if counts is not None and counts[0] + counts[1] <= n_in and counts[1] <= n_out:
        return (
            numbered(("const", counts[0]), ("carry", counts[1]), ("x", n_in - counts[0] - counts[1])),
            numbered(("carry", counts[1]), ("y", n_out - counts[1])),
        )
    if ports == "while":
        consts = params.get("cond_nconsts" if path == "cond_jaxpr" else "body_nconsts")
        if isinstance(consts, int) and consts <= n_in:
            carry = n_in - consts
            return numbered(("const", consts), ("carry", carry)), numbered(("carry", carry)) if path == "body_jaxpr" else ()
    return (), ()


class GraphBuilder:
    def __init__(self, const_names: dict[int, str]) -> None:
        self.const_names = const_names
        self.bodies: dict[str, Body] = {}
        self.by_identity: dict[int, str] = {}
        self.keep_alive: list[Any] = []  # ids stay unique only while the objects live
        self.chains = jc.ChainCache()
        self.totals: dict[str, int] = {}
        self._aval_text: dict[Any, str] = {}  # a program has few distinct avals; str_short is slow
        self._params_seen: dict[Any, Seen] = {}  # and few distinct params
        self._stacks: dict[int, tuple[Any, str]] = {}  # id(name stack) -> (it, its text)

    def finish(self) -> dict[str, Body]:
        return dict(sorted(self.bodies.items(), key=lambda kv: int(kv[0][1:])))

    def body(
        self,
        jaxpr: Any,
        consts: list[Any],
        title: str,
        arg_names: tuple[str, ...] = (),
        result_paths: tuple[str, ...] = (),
    ) -> str:
        key = id(jaxpr)
        if key in self.by_identity:
            return self.by_identity[key]
        body_id = f"b{len(self.by_identity)}"
        self.by_identity[key] = body_id
        self.keep_alive.append(jaxpr)
        nodes: list[Node] = []
        edges: list[Edge] = []
        producer: dict[int, tuple[str, int]] = {}

        self._inputs(jaxpr, consts, arg_names, nodes, producer)

        total = 0
        for i, eqn in enumerate(jaxpr.eqns):
            node_id = f"e{i}"
            prim = eqn.primitive.name
            subs, params, numbers = self.params(prim, eqn.params)
            refs = []
            for index, (path, sub, sub_consts) in enumerate(subs):
                role = body_title(prim, path, index, len(subs), eqn.params)
                sub_id = self.body(sub, sub_consts, role, *io_names(prim, path, eqn.params, len(sub.invars), len(sub.outvars)))
                refs.append(SubgraphRef(role=role, body=sub_id, param=path))
                total += self.totals[sub_id]
            for port, atom in enumerate(eqn.invars):
                src = self._operand(atom, producer, nodes, f"{node_id}.l{port}")
                edges.append(_EDGE(src[0], node_id, src[1], port, self._aval(atom.aval)))
            frames, source = jc.eqn_chain(eqn, self.chains)
            # positionally, every field: id kind label avals in_avals params source name_stack subgraphs detail frames numbers
            nodes.append(
                _NODE(
                    node_id,
                    "eqn",
                    prim,
                    tuple([self._aval(v.aval) for v in eqn.outvars]),
                    tuple([self._aval(v.aval) for v in eqn.invars]),
                    params,
                    source,
                    self._name_stack(eqn),
                    tuple(refs),
                    "",
                    frames,
                    numbers,
                )
            )
            for port, var in enumerate(eqn.outvars):
                if not isinstance(var, jc.DropVar):
                    producer[id(var)] = (node_id, port)

        for i, atom in enumerate(jaxpr.outvars):
            label = result_paths[i] if i < len(result_paths) and result_paths[i] else f"out{i}"
            src = self._operand(atom, producer, nodes, f"out{i}.l")
            nodes.append(Node(id=f"out{i}", kind="output", label=label, avals=(self._aval(atom.aval),)))
            edges.append(Edge(src=src[0], dst=f"out{i}", src_port=src[1], dst_port=0, aval=self._aval(atom.aval)))

        n_eqns = len(jaxpr.eqns)
        self.totals[body_id] = n_eqns + total
        self.bodies[body_id] = Body(
            id=body_id,
            title=title,
            nodes=tuple(nodes),
            edges=tuple(edges),
            n_eqns=n_eqns,
            total_eqns=n_eqns + total,
        )
        return body_id

    def _inputs(
        self, jaxpr: Any, consts: list[Any], arg_names: tuple[str, ...], nodes: list[Node], producer: dict[int, tuple[str, int]]
    ) -> None:
        """A body's constants (named by the global or closure variable they were read from, where
        known) and its inputs (by argument name), each the producer of its variable."""
        for i, (var, value) in enumerate(zip(jaxpr.constvars, consts or [None] * len(jaxpr.constvars), strict=True)):
            name = self.const_names.get(id(value), "") if value is not None else ""
            base = getattr(value, "base", None)
            if not name and base is not None:
                name = self.const_names.get(id(base), "")
            nodes.append(
                Node(
                    id=f"c{i}",
                    kind="const",
                    label=name or "const",
                    avals=(self._aval(var.aval),),
                    detail=f"captured global or closure variable {name!r}" if name else "captured constant",
                )
            )
            producer[id(var)] = (f"c{i}", 0)
        for i, var in enumerate(jaxpr.invars):
            label = arg_names[i] if i < len(arg_names) and arg_names[i] else f"in{i}"
            nodes.append(Node(id=f"in{i}", kind="input", label=label, avals=(self._aval(var.aval),)))
            producer[id(var)] = (f"in{i}", 0)

    def _aval(self, aval: Any) -> str:
        try:
            text = self._aval_text.get(aval)
        except TypeError:  # an unhashable aval
            return jc.aval_str(aval)
        if text is None:
            text = self._aval_text[aval] = jc.aval_str(aval)
        return text

    def _operand(self, atom: Any, producer: dict[int, tuple[str, int]], nodes: list[Node], lit_id: str) -> tuple[str, int]:
        if isinstance(atom, jc.Literal):
            nodes.append(Node(id=lit_id, kind="literal", label=literal_text(atom.val), avals=(self._aval(atom.aval),)))
            return lit_id, 0
        return producer[id(atom)]

    def params(self, prim: str, params: dict[str, Any]) -> Seen:
        """The sub-jaxprs, `params_text` and numbers of an equation's params, once per distinct (primitive,
        params): 10k equations have a few hundred. Sub-jaxprs compare by identity; the key holds
        each value's type too, so that equal values of other types (1, 1.0, True) that print
        differently never share a text."""
        try:
            key: Any = (prim, *[(k, type(v), v) for k, v in params.items()])
            seen = self._params_seen.get(key)
        except TypeError:  # an unhashable value (an array)
            return jc.subjaxprs(params), params_text(prim, params), read_numbers(prim, params)
        if seen is None:
            seen = self._params_seen[key] = (jc.subjaxprs(params), params_text(prim, params), read_numbers(prim, params))
        return seen

    def _name_stack(self, eqn: Any) -> str:
        stack = getattr(eqn.source_info, "name_stack", None)
        seen = self._stacks.get(id(stack))
        if seen is None or seen[0] is not stack:
            seen = self._stacks[id(stack)] = (stack, jc.name_stack(eqn))
        return seen[1]


def params_text(prim: str, params: dict[str, Any]) -> Params:
    """An equation's params as (name, text) pairs for tooltips, sorted by name; sub-jaxprs left out."""
    out = []
    for key in sorted(params):
        value = params[key]
        if value is None or isinstance(value, (jc.ClosedJaxpr, jc.Jaxpr)):
            continue  # None params (sharding=None, accuracy=None) are noise in tooltips
        if jc.is_opaque(value):
            name = getattr(getattr(value, "debug_info", None), "func_name", "") or getattr(value, "__name__", "")
            out.append((key, f"<{name or type(value).__name__}>"))
            continue
        if isinstance(value, (tuple, list)) and value and all(isinstance(v, (jc.ClosedJaxpr, jc.Jaxpr)) for v in value):
            continue
        out.append((key, param_text(value)))
    if prim in ("custom_jvp_call", "custom_vjp_call") and "name" not in params:
        name = jc.func_name_of(params.get("call_jaxpr"))
        if name:
            out.append(("name", name))
    return tuple(out)


def literal_text(value: Any) -> str:
    """A literal operand as it reads in code: `2.0`, `True`, `-1`, or `[...]` for arrays."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        item = arr.item()
        if isinstance(item, float):
            text = f"{item:.6g}"
            return text if any(c in text for c in ".ein") else text + ".0"
        return repr(item)
    return f"[{arr.size} values]"


def param_text(value: Any) -> str:
    """Stringify one equation param for tooltips; cut long values."""
    if isinstance(value, np.dtype) or type(value).__name__ == "dtype":
        text = str(value)
    elif isinstance(value, np.ndarray):
        text = np.array2string(value, threshold=8)
    else:
        text = str(value)
    if len(text) > PARAM_CHARS:
        text = text[: PARAM_CHARS - 1] + "…"
    return text
