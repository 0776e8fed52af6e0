"""The one check a saved trace's JSON passes before anything decodes it (`document.decode`).

A `.jaxscope` file is data from anywhere: a colleague's, a bug report's, a fuzzer's. Every part of
jaxscope downstream (layout, cost, links, diff, the window) trusts the types of the dataclasses it
gets, so they are checked here, once, against the same type hints the codec decodes by: each field's
type, each text's and list's size, the nesting of free-form values, and every reference (a node's
source and call chain, a sub-graph's body, an edge's ends, an exact link's path). The bodies must
form a tree-shaped DAG under the root (no cycle) whose unfolding stays bounded, since cost, links
and diff walk every occurrence. A refusal is one sentence naming the field, with its value cut short.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin

from jaxscope.schema.errors import JaxscopeError
from jaxscope.schema.graph import NodeKind

MAX_TEXT = 1 << 20  # characters in an ordinary string (a label, a name, a message)
MAX_NODE_TEXT = 1 << 14  # characters in a graph node's label, aval, param, id or scope
MAX_ITEMS = 5_000_000  # items in one list
MAX_DEPTH = 32  # nesting of a free-form (Any) value
MAX_BODY_DEPTH = 200  # sub-graphs inside sub-graphs
MAX_UNFOLDED = 50_000_000  # equations of the program with every sub-graph occurrence counted
MAX_PORT = 1 << 20
BIG_TEXT_FIELDS = frozenset({"jaxpr_text", "text", "stderr_tail"})  # whole program texts: bounded by the file's own cap

_KINDS = frozenset(get_args(NodeKind))
_INT_LIMIT = 1 << 63


class CheckError(JaxscopeError, ValueError):
    """A saved trace's JSON breaks the format: what is wrong, and where (`where`: the field's path
    in the document). Remedy: save the trace again with this jaxscope; the file was damaged or made by hand."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")
        self.where, self.what = where, what


def shown(value: Any, limit: int = 40) -> str:
    """`value` for a message: its repr cut to `limit` characters (a 100 KB field is not printed whole)."""
    if isinstance(value, str):
        text = repr(value[: limit + 1])
    elif isinstance(value, (dict, list)):
        return f"{'an object' if isinstance(value, dict) else 'a list'} of {len(value)} item{'s' if len(value) != 1 else ''}"
    else:
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def cut(value: Any, limit: int = 40) -> str:
    """`str(value)` cut to `limit` characters, for a message."""
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _kind(value: Any) -> str:
    names = {str: "text", bool: "true/false", int: "an integer", float: "a number", list: "a list", dict: "an object"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _got(value: Any) -> str:
    """What a field holds instead, said once: `an object of 1 item`, `text 'abc'`, `an integer 3`."""
    return shown(value) if isinstance(value, (dict, list)) else f"{_kind(value)} {shown(value)}"


def expect(ok: bool, where: str, what: str) -> None:
    """Raise CheckError(where, what) unless `ok`; build `what` only where it is cheap (hot paths test first)."""
    if not ok:
        raise CheckError(where, what)


def text(value: Any, where: str, limit: int = MAX_TEXT) -> str:
    if type(value) is not str or len(value) > limit:  # the messages are built only for a refusal
        expect(value is not None, where, "missing")
        expect(type(value) is str, where, f"expected text, got {_got(value)}")
        raise CheckError(where, f"text of {len(value):,} characters (at most {limit:,})")
    return value


def integer(value: Any, where: str, low: int = -_INT_LIMIT, high: int = _INT_LIMIT) -> int:
    if type(value) is not int or not low <= value < high:
        expect(type(value) is int, where, f"expected an integer, got {_got(value)}")
        raise CheckError(where, f"{value} is out of range ({low} to {high - 1})")
    return value


def items(value: Any, where: str, limit: int = MAX_ITEMS) -> list[Any]:
    if type(value) is not list or len(value) > limit:
        expect(value is not None, where, "missing")
        expect(type(value) is list, where, f"expected a list, got {_got(value)}")
        raise CheckError(where, f"a list of {len(value):,} items (at most {limit:,})")
    return value


def fields(value: Any, where: str) -> dict[str, Any]:
    if type(value) is not dict:
        expect(value is not None, where, "missing")
        raise CheckError(where, f"expected an object, got {_got(value)}")
    return typing.cast(dict[str, Any], value)


def _texts(value: Any, limit: int, count: int = 1 << 16) -> bool:
    """A list of at most `count` texts of at most `limit` characters (the fast test; the slow one says why)."""
    return type(value) is list and len(value) <= count and all(type(s) is str and len(s) <= limit for s in value)


MAX_NUMBERS = 64  # a node's integer params (`Node.numbers`), and the integers in each


def _numbers(value: Any) -> bool:
    """A node's numbers in wire form: (name, list of ints) pairs, flat; names and counts bounded."""
    return (
        type(value) is list
        and len(value) <= 2 * MAX_NUMBERS
        and len(value) % 2 == 0
        and all(type(name) is str and len(name) <= MAX_NUMBERS for name in value[::2])
        and all(
            type(ints) is list and len(ints) <= MAX_NUMBERS and all(type(v) is int and -(1 << 62) < v < 1 << 62 for v in ints)
            for ints in value[1::2]
        )
    )


# ------------------------------------------------------------------------------ by type hints


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    found = _HINTS.get(cls)
    if found is None:
        found = _HINTS[cls] = typing.get_type_hints(cls)
    return found


def typed(tp: Any, value: Any, where: str, skip: Callable[[str], bool] = lambda name: False) -> None:
    """Check `value` (JSON) against `tp` as `codec.from_jsonable` reads it: a dataclass is an
    object whose known keys have their field's type and whose fields without defaults are present;
    `skip(field)` leaves a field to another check (a graph's wire form)."""
    if value is None:
        return  # the codec reads null as None, and a field's default where it has one
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        data = fields(value, where)
        hints = _hints(tp)
        for f in dataclasses.fields(tp):
            if not f.init or skip(f.name):
                continue
            if f.name not in data:
                required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
                expect(not required, where, f"no field {f.name!r}")
                continue
            limit = _INT_LIMIT if f.name in BIG_TEXT_FIELDS else MAX_TEXT
            _value(hints[f.name], data[f.name], f"{where}.{f.name}", limit)
        return
    _value(tp, value, where, MAX_TEXT)


def _value(tp: Any, value: Any, where: str, limit: int) -> None:
    origin, args = get_origin(tp), get_args(tp)
    if value is None:  # only where the type allows it: a null among a tuple's texts reached `"; ".join`
        expect(tp is Any or (origin in (Union, types.UnionType) and type(None) in args), where, "null where a value is required")
        return
    if tp is str:
        text(value, where, limit)
    elif tp is bool:
        expect(type(value) is bool, where, f"expected true or false, got {_got(value)}")
    elif tp is int:
        integer(value, where)
    elif tp is float:
        expect(type(value) in (int, float), where, f"expected a number, got {_got(value)}")
    elif tp is Any:
        _free(value, where, 0)
    elif origin is Literal:
        expect(value in args, where, f"{shown(value)} is none of {', '.join(map(repr, args))}")
    elif origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        errors = []
        for option in options:
            try:
                _value(option, value, where, limit)
                return
            except CheckError as exc:
                errors.append(exc)
        raise errors[0]
    elif origin in (tuple, list):
        seq = items(value, where)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            expect(len(seq) >= len(args), where, f"expected {len(args)} items, got {len(seq)}")
            for k, (a, v) in enumerate(zip(args, seq)):
                _value(a, v, f"{where}[{k}]", limit)
            return
        scalar = args[0] if args[0] in (str, int, float, bool) else None
        if scalar is str and all(type(v) is str and len(v) <= limit for v in seq):
            return
        if scalar is not None and scalar is not str and all(type(v) is scalar for v in seq):
            return
        for k, v in enumerate(seq):
            _value(args[0], v, f"{where}[{k}]", limit)
    elif origin is dict:
        data = fields(value, where)
        expect(len(data) <= MAX_ITEMS, where, f"an object of {len(data):,} keys (at most {MAX_ITEMS:,})")
        for key, v in data.items():
            _value(args[1], v, f"{where}[{shown(key)}]", limit)
    elif isinstance(tp, type) and dataclasses.is_dataclass(tp):
        typed(tp, value, where)
    else:  # pragma: no cover - a field type this check does not know: a bug in the schema, caught by the round-trip tests
        raise TypeError(f"document_check: no rule for {tp!r} at {where}")


def _free(value: Any, where: str, depth: int) -> None:
    """A free-form value (`Any`): JSON of bounded nesting."""
    expect(depth <= MAX_DEPTH, where, f"nested more than {MAX_DEPTH} levels deep")
    if type(value) is list:
        for k, v in enumerate(items(value, where)):
            _free(v, f"{where}[{k}]", depth + 1)
    elif type(value) is dict:
        for key, v in value.items():
            _free(v, f"{where}[{shown(key)}]", depth + 1)
    elif type(value) is str:
        text(value, where, _INT_LIMIT)


# ------------------------------------------------------------------------------ the graph's wire form


Owners = dict[str, dict[str, list[str]]]  # body -> node id -> the bodies of its sub-graphs, in order


def wire_graph(data: Any, where: str) -> tuple[str, Owners]:
    """Check a graph in wire form (`graph_wire`); its root and nodes, for the references into the
    graph from elsewhere (`graph_path`: diagnostics, exact links)."""
    g = fields(data, where)
    wire = g.get("wire")
    expect(wire in (2, 3), f"{where}.wire", f"expected wire form 2 or 3, got {shown(wire)}")
    text(g.get("function"), f"{where}.function")
    sources = items(g.get("sources"), f"{where}.sources")
    for k, s in enumerate(sources):
        at = f"{where}.sources[{k}]"
        row = items(s, at)
        expect(len(row) == 7, at, f"expected 7 items (file, line, col, end line, end col, function, library), got {len(row)}")
        text(row[0], f"{at}[0]")
        for j in (1, 2, 3, 4):
            integer(row[j], f"{at}[{j}]", 0)
        text(row[5], f"{at}[5]")
        text(row[6], f"{at}[6]")
    chains = items(g.get("chains"), f"{where}.chains")
    for k, c in enumerate(chains):
        for j, index in enumerate(items(c, f"{where}.chains[{k}]")):
            integer(index, f"{where}.chains[{k}][{j}]", 0, len(sources))
    bodies = fields(g.get("bodies"), f"{where}.bodies")
    root = text(g.get("root"), f"{where}.root")
    expect(root in bodies, f"{where}.root", f"names no body ({shown(root)})")
    owners: Owners = {}
    for body_id, b in bodies.items():
        at = f"{where}.bodies[{shown(body_id)}]"
        text(body_id, at, MAX_NODE_TEXT)
        owners[body_id] = _body(fields(b, at), at, set(bodies), len(sources), len(chains), 11 if wire == 2 else 12)
    _tree(root, bodies, {b: [s for subs in nodes.values() for s in subs] for b, nodes in owners.items()}, where)
    return root, owners


def _body(b: dict[str, Any], at: str, bodies: set[str], n_sources: int, n_chains: int, width: int) -> dict[str, list[str]]:
    text(b.get("title"), f"{at}.title")
    integer(b.get("n_eqns"), f"{at}.n_eqns", 0)
    integer(b.get("total_eqns"), f"{at}.total_eqns", 0)
    ids: dict[str, list[str]] = {}
    avals: dict[str, int] = {}
    limit = MAX_NODE_TEXT
    for k, row in enumerate(items(b.get("nodes"), f"{at}.nodes")):
        ok = type(row) is list and len(row) == width
        if ok:
            nid, kind, label, outs, ins, params, src, scope, subs, detail, chain = row[:11]
            ok = (
                type(nid) is str
                and len(nid) <= limit
                and type(kind) is str
                and kind in _KINDS
                and type(label) is str
                and len(label) <= limit
                and _texts(outs, limit)
                and _texts(ins, limit)
                and _texts(params, limit)
                and len(params) % 2 == 0
                and type(src) is int
                and -1 <= src < n_sources
                and type(scope) is str
                and len(scope) <= limit
                and _texts(subs, limit, 3 << 12)
                and len(subs) % 3 == 0
                and all(subs[i] in bodies for i in range(1, len(subs), 3))
                and type(detail) is str
                and len(detail) <= MAX_TEXT
                and type(chain) is int
                and -1 <= chain < n_chains
                and (width == 11 or _numbers(row[11]))
            )
        if not ok:
            _node(row, f"{at}.nodes[{k}]", bodies, n_sources, n_chains, width)  # says what is wrong
        if nid in ids:
            raise CheckError(f"{at}.nodes[{k}][0]", f"a second node {shown(nid)} in this body")
        ids[nid] = subs[1::3]
        avals[nid] = len(outs)
    edges = items(b.get("edges"), f"{at}.edges")
    expect(len(edges) % 5 == 0, f"{at}.edges", "its items do not divide into (src, dst, src port, dst port, aval) edges")
    for k in range(0, len(edges), 5):
        src, dst, sp, dp, aval = edges[k : k + 5]
        if not (
            type(src) is str
            and src in avals
            and type(dst) is str
            and dst in avals
            and type(sp) is int
            and 0 <= sp < max(avals[src], 1)
            and type(dp) is int
            and 0 <= dp < MAX_PORT
            and type(aval) is str
            and len(aval) <= limit
        ):
            where = f"{at}.edges[{k // 5}]"
            text(src, where, limit)
            text(dst, where, limit)
            expect(src in ids, where, f"comes from no node of this body ({shown(src)})")
            expect(dst in ids, where, f"goes to no node of this body ({shown(dst)})")
            integer(sp, where, 0, max(avals[src], 1))
            integer(dp, where, 0, MAX_PORT)
            text(aval, where, limit)
    return ids


def _node(row: Any, where: str, bodies: set[str], n_sources: int, n_chains: int, width: int) -> None:
    """The first fault of a node row the fast test refused, as a CheckError."""
    row = items(row, where)
    expect(len(row) == width, where, f"expected {width} items, got {len(row)}")
    text(row[0], f"{where}[0]", MAX_NODE_TEXT)
    expect(type(row[1]) is str and row[1] in _KINDS, f"{where}[1]", f"{shown(row[1])} is no node kind ({', '.join(sorted(_KINDS))})")
    text(row[2], f"{where}[2]", MAX_NODE_TEXT)
    for j in (3, 4, 5):
        for i, s in enumerate(items(row[j], f"{where}[{j}]", 1 << 16)):
            text(s, f"{where}[{j}][{i}]", MAX_NODE_TEXT)
    expect(len(row[5]) % 2 == 0, f"{where}[5]", "params are not (name, value) pairs")
    integer(row[6], f"{where}[6]", -1, n_sources)
    text(row[7], f"{where}[7]", MAX_NODE_TEXT)
    sub = items(row[8], f"{where}[8]", 3 << 12)
    expect(len(sub) % 3 == 0, f"{where}[8]", "sub-graphs are not (role, body, param) triples")
    for i, s in enumerate(sub):
        text(s, f"{where}[8][{i}]", MAX_NODE_TEXT)
        if i % 3 == 1:
            expect(s in bodies, f"{where}[8][{i}]", f"names no body ({shown(s)})")
    text(row[9], f"{where}[9]")
    integer(row[10], f"{where}[10]", -1, n_chains)
    expect(
        width == 11 or _numbers(row[11]),
        f"{where}[11]",
        f"numbers are not (name, up to {MAX_NUMBERS} integers) pairs, at most {MAX_NUMBERS} of them",
    )
    raise AssertionError(f"document_check: {where} passed the slow test and failed the fast one")  # pragma: no cover


def _tree(root: str, bodies: dict[str, Any], subs: dict[str, list[str]], where: str) -> None:
    """No body reaches itself through its sub-graphs; nesting and unfolded size stay bounded."""
    unfolded: dict[str, int] = {}
    on_path: list[str] = []
    stack: list[tuple[str, int]] = [(root, 0)]
    while stack:
        body_id, k = stack.pop()
        if k == 0:
            if body_id in unfolded:
                continue
            on_path.append(body_id)
            expect(
                len(on_path) <= MAX_BODY_DEPTH, f"{where}.bodies[{shown(body_id)}]", f"sub-graphs nested more than {MAX_BODY_DEPTH} deep"
            )
        children = subs[body_id]
        if k < len(children):
            child = children[k]
            stack.append((body_id, k + 1))
            if child in on_path:
                cycle = " -> ".join([*on_path[on_path.index(child) :], child])
                raise CheckError(f"{where}.bodies[{shown(body_id)}]", f"its sub-graph {shown(child)} contains it again (a cycle: {cycle})")
            if child not in unfolded:
                stack.append((child, 0))
            continue
        on_path.pop()
        total = fields(bodies[body_id], where).get("n_eqns", 0) + sum(unfolded[c] for c in children)
        expect(total <= MAX_UNFOLDED, f"{where}.bodies[{shown(body_id)}]", f"unfolds to {total:,} equations (at most {MAX_UNFOLDED:,})")
        unfolded[body_id] = total


# ------------------------------------------------------------------------------ references into the graph


def graph_path(path: Any, graph: tuple[str, Owners], where: str) -> None:
    """`path` (``e4:1/e0``: owners, the index of a sub-graph, the node) names a node of `graph`."""
    text(path, where, MAX_NODE_TEXT)
    body, owners = graph
    parts = path.split("/")
    for k, part in enumerate(parts):
        node_id, colon, index = part.partition(":")
        subs = owners[body].get(node_id)
        last = k == len(parts) - 1
        ok = subs is not None and colon != last and (last or (index.isdigit() and int(index) < len(subs)))
        expect(ok, where, f"{shown(path)} names no node of the graph")
        if not last:
            body = typing.cast(list[str], subs)[int(index)]


def hlo_maps(hlo: dict[str, Any], where: str, graph: tuple[str, Owners]) -> None:
    """An IR result's line maps: `ops` (`linking.located_to_wire`, with "fusions" when compiled)
    and `exact` (`hlo_marks.to_wire`: paths named once, lines pointing at them)."""
    ops = hlo.get("ops")
    if ops is not None:
        at = f"{where}.ops"
        ops = fields(ops, at)
        files, prims = items(ops.get("files"), f"{at}.files"), items(ops.get("prims"), f"{at}.prims")
        for k, name in enumerate(files + prims):
            text(name, f"{at}.files/prims[{k}]", 4096)
        rows = items(ops.get("rows"), f"{at}.rows")
        expect(len(rows) % 5 == 0, f"{at}.rows", "its items do not divide into (line, primitive, file, line, col) rows")
        for k in range(0, len(rows), 5):
            row_at = f"{at}.rows[{k // 5}]"
            integer(rows[k], row_at, 0)
            integer(rows[k + 1], row_at, 0, len(prims))
            integer(rows[k + 2], row_at, -1, len(files))
            integer(rows[k + 3], row_at, 0)
            integer(rows[k + 4], row_at, 0)
        for k, fusion in enumerate(items(ops.get("fusions", []), f"{at}.fusions")):
            f = items(fusion, f"{at}.fusions[{k}]")
            expect(len(f) == 4, f"{at}.fusions[{k}]", "expected (name, kind, line, lines)")
            text(f[0], f"{at}.fusions[{k}][0]")
            text(f[1], f"{at}.fusions[{k}][1]")
            integer(f[2], f"{at}.fusions[{k}][2]", 0)
            for j, line in enumerate(items(f[3], f"{at}.fusions[{k}][3]")):
                integer(line, f"{at}.fusions[{k}][3][{j}]", 0)
    exact = hlo.get("exact")
    if exact is not None:
        at = f"{where}.exact"
        exact = fields(exact, at)
        paths = items(exact.get("paths"), f"{at}.paths")
        for k, path in enumerate(paths):
            graph_path(path, graph, f"{at}.paths[{k}]")
        for k, row in enumerate(items(exact.get("lines"), f"{at}.lines")):
            r = items(row, f"{at}.lines[{k}]")
            expect(len(r) == 2, f"{at}.lines[{k}]", "expected (line, path indices)")
            integer(r[0], f"{at}.lines[{k}][0]", 0)
            for j, index in enumerate(items(r[1], f"{at}.lines[{k}][1]")):
                integer(index, f"{at}.lines[{k}][1][{j}]", 0, len(paths))
