"""A compact JSON form of a `Graph` for the pipes between processes (worker -> GUI -> layout).

The readable form (`codec.to_jsonable`: one object per node, every key spelled out) is what
`jaxscope export --format json` writes and what tests keep as fixtures. Between processes a graph
goes as positional arrays instead: a node is a 12-item list, an edge 5 items of one flat list per
body, and each distinct source location and each distinct chain of frames is written once: a
fraction of the size and of the time to encode and decode, on each of the GUI and the layout
process (the figures: benchmarks/README.md, "Measured in the code").

    {"wire": 3, "function": str, "root": str,
     "sources": [[file, line, col, end_line, end_col, function, library], ...],
     "chains": [[source_index, ...], ...],
     "bodies": {id: {"title": str, "n_eqns": int, "total_eqns": int,
                     "nodes": [[id, kind, label, avals, in_avals, params_flat, source_index | -1,
                                name_stack, subgraphs_flat (role, body, param)*, detail,
                                chain_index | -1, numbers_flat (name, [int, ...])*], ...],
                     "edges": [src, dst, src_port, dst_port, aval, src, dst, ...]}}}

Bodies are objects so that `runtime.protocol` sends their long node and edge lists in parts (no
single ``json.loads`` of megabytes). A reader takes either form (`graph_from_jsonable`).

Wire 2 (saved traces written before `Node.numbers`) has 11-item nodes: its numbers are read from
the params texts once, when it is decoded (`wire2_numbers`), so that no analysis reads texts.

A trace's graph goes ahead of its result, in a ``{"id", "event": "graph", "graph": <wire>}``
message sent as soon as it is built: the GUI and the layout process decode it (and the layout
process lays it out) while the worker still diagnoses. The result then says `SENT_AHEAD`.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import sys
from typing import Any, cast

from jaxscope.schema.codec import from_jsonable, maker, to_jsonable
from jaxscope.schema.graph import Body, Edge, Graph, Node, SourceLoc, SubgraphRef
from jaxscope.schema.primitives import primitive, read_numbers

WIRE_VERSION = 3
READABLE = (2, 3)
_NODE, _EDGE = maker(Node), maker(Edge)
_EMPTY = Graph(function="", bodies={})


def graph_to_wire(graph: Graph) -> dict[str, Any]:
    sources: dict[SourceLoc, int] = {}
    chains: dict[int, tuple[int, list[int]]] = {}  # id(frames) -> (index, source indices): the worker makes equal chains one tuple

    def source_index(s: SourceLoc) -> int:
        index = sources.get(s, -1)
        if index < 0:
            index = sources[s] = len(sources)
        return index

    def chain_index(frames: tuple[SourceLoc, ...]) -> int:
        seen = chains.get(id(frames))
        if seen is None:
            seen = chains[id(frames)] = (len(chains), [source_index(f) for f in frames])
        return seen[0]

    bodies: dict[str, Any] = {}
    for body in graph.bodies.values():
        nodes = []
        for n in body.nodes:
            nodes.append(
                [
                    n.id,
                    n.kind,
                    n.label,
                    n.avals,
                    n.in_avals,
                    [x for kv in n.params for x in kv],
                    -1 if n.source is None else source_index(n.source),
                    n.name_stack,
                    [x for r in n.subgraphs for x in (r.role, r.body, r.param)],
                    n.detail,
                    chain_index(n.frames) if n.frames else -1,
                    [x for name, values in n.numbers for x in (name, values)],
                ]
            )
        edges = [x for e in body.edges for x in (e.src, e.dst, e.src_port, e.dst_port, e.aval)]
        bodies[body.id] = {"title": body.title, "n_eqns": body.n_eqns, "total_eqns": body.total_eqns, "nodes": nodes, "edges": edges}
    return {
        "wire": WIRE_VERSION,
        "function": graph.function,
        "root": graph.root,
        "sources": [[s.file, s.line, s.col, s.end_line, s.end_col, s.function, s.library] for s in sources],
        "chains": [indices for _, indices in sorted(chains.values())],
        "bodies": bodies,
    }


def graph_from_wire(data: dict[str, Any]) -> Graph:
    """The Graph `graph_to_wire` wrote; ValueError if `data` is not that form."""
    if data.get("wire") not in READABLE:
        raise ValueError(f"not a graph in wire form {WIRE_VERSION}: {str(data.get('wire'))[:20]!r}")
    legacy = data["wire"] == 2
    intern = sys.intern  # a program has few distinct avals: one string each, not one per use
    sources = [SourceLoc(*s) for s in data["sources"]]
    chains = [tuple([sources[i] for i in c]) for c in data["chains"]]
    bodies: dict[str, Body] = {}
    node, edge = _NODE, _EDGE  # tens of thousands: the fast constructors
    for body_id, b in data["bodies"].items():
        nodes = []
        for row in b["nodes"]:
            nid, kind, label, avals, in_avals, params, index, name_stack, subs, detail, chain = row[:11]
            p = iter(params)
            r = iter(subs)
            n = iter(row[11] if not legacy else wire2_numbers(label, params))
            nodes.append(
                node(
                    nid,
                    kind,
                    label,
                    tuple([intern(a) for a in avals]),
                    tuple([intern(a) for a in in_avals]),
                    tuple(zip(p, p)) if params else (),
                    sources[index] if index >= 0 else None,
                    name_stack,
                    tuple([SubgraphRef(role, sub, param) for role, sub, param in zip(r, r, r)]) if subs else (),
                    detail,
                    chains[chain] if chain >= 0 else (),
                    tuple([(name, tuple(values)) for name, values in zip(n, n)]),
                )
            )
        e = iter(b["edges"])
        edges = tuple([edge(s, d, sp, dp, intern(a)) for s, d, sp, dp, a in zip(e, e, e, e, e)])
        bodies[body_id] = Body(body_id, b["title"], tuple(nodes), edges, b["n_eqns"], b["total_eqns"])
    return Graph(data["function"], bodies, data["root"])


def graph_from_jsonable(data: Any) -> Graph:
    """A Graph from its wire form or its readable form."""
    if isinstance(data, dict) and "wire" in data:
        return graph_from_wire(data)
    return graph_from_readable(data)


def graph_from_readable(data: Any) -> Graph:
    """A Graph from its readable form (`export --format json`); a node written before
    `Node.numbers` (no "numbers" key) reads them from its texts once, as a wire-2 node does."""
    graph = cast(Graph, from_jsonable(Graph, data))  # decoded JSON
    bodies = dict(graph.bodies)
    for body_id, body in graph.bodies.items():
        written = (data.get("bodies") or {}).get(body_id) or {}
        old = {n.get("id") for n in written.get("nodes") or () if isinstance(n, dict) and "numbers" not in n}
        if old:
            nodes = tuple(_with_numbers(n) if n.id in old and n.kind == "eqn" else n for n in body.nodes)
            bodies[body_id] = dataclasses.replace(body, nodes=nodes)
    return Graph(graph.function, bodies, graph.root) if bodies != graph.bodies else graph


def _with_numbers(node: Node) -> Node:
    flat = wire2_numbers(node.label, [x for kv in node.params for x in kv])
    return dataclasses.replace(node, numbers=tuple((name, tuple(ints)) for name, ints in zip(flat[::2], flat[1::2]))) if flat else node


SENT_AHEAD = {"wire": "sent"}  # a result's graph that went ahead in its own "graph" event


def to_wire_jsonable(obj: Any, sent: Graph | None = None) -> Any:
    """`to_jsonable(obj)`, with the Graph of a result that has one (a TraceResult) in wire form,
    or `SENT_AHEAD` if it is `sent` (the reader pairs the result with the graph it got before)."""
    graph = getattr(obj, "graph", None)
    if isinstance(graph, Graph) and dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        data = to_jsonable(dataclasses.replace(obj, graph=_EMPTY))
        data["graph"] = dict(SENT_AHEAD) if graph is sent else graph_to_wire(graph)
        return data
    return to_jsonable(obj)


def split_wire_graph(data: dict[str, Any]) -> tuple[dict[str, Any], Graph | None]:
    """(`data` with a wire-form "graph" replaced by an empty readable one, that graph decoded), or
    (`data`, None) when its graph is readable, or was `SENT_AHEAD` (the caller puts it back)."""
    graph = data.get("graph")
    if isinstance(graph, dict) and "wire" in graph:
        return {**data, "graph": to_jsonable(_EMPTY)}, None if graph == SENT_AHEAD else graph_from_wire(graph)
    return data, None


def wire2_numbers(label: str, params: list[str]) -> list[Any]:
    """The numbers (flat, as wire 3 writes them) of a wire-2 node: its params texts read back into the
    values they print (Python literals; a convolution's `ConvDimensionNumbers(lhs_spec=..., ...)` as
    its three specs) and read as the worker reads an equation's (`primitives.read_numbers`). A text
    that does not read so gives none (the analyses then say so)."""
    if primitive(label).numbers is None:
        return []
    values: dict[str, Any] = {}
    for name, text in zip(params[::2], params[1::2]):
        conv = _CONV_SPECS.fullmatch(text)
        try:
            values[name] = tuple(ast.literal_eval(spec) for spec in conv.groups()) if conv else ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue  # a name, a text cut short: no number in it
    found = read_numbers(label, values)
    if len(found) > 64 or any(len(ints) > 64 or any(abs(v) >= 1 << 62 for v in ints) for _name, ints in found):
        return []  # as wire 3 bounds them (`trace_file_check`): not what a real program holds
    return [x for pair in found for x in pair]


_CONV_SPECS = re.compile(r"ConvDimensionNumbers\(lhs_spec=(\([^)]*\)), rhs_spec=(\([^)]*\)), out_spec=(\([^)]*\))\)")
