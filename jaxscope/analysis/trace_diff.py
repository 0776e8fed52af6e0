"""Two traces compared equation by equation: which are the same, which changed (shape, dtype,
params, where their operands come from), which only one side has.

Equations are matched structurally, never by variable name or line number (both move on any
edit), by what they are (primitive), where they sit (the owners above them: a jit, a scan body,
a cond branch), which module made them (name stack) and which Python function. First along the
dataflow (an equation whose operands' producers are matched pairs with the A equation of the same
key that reads them); then the program order proposes pairs in the gaps (difflib's longest
matching runs over the keys) and the dataflow decides (a proposal that reads producers matched
elsewhere waits, unless no better pair can come: then its operand really moved, a change); what
is left is matched by order, and at last by primitive alone, so a renamed scope is a change, not
a removal and an addition.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jaxscope.schema.graph import Graph, Node

Status = str  # "added", "removed", "changed" ("" unchanged)
ROUNDS = 20  # order-proposed passes, each followed by `_follow` along what they paired


@dataclass(frozen=True, slots=True)
class Change:
    """A matched pair that differs: its paths on each side and what differs, in words."""

    a: str
    b: str
    what: tuple[str, ...]


@dataclass(frozen=True)
class GraphDiff:
    """Equation paths (per call site) of A and B, matched, changed, removed (A only), added (B only);
    `inputs`: how the top-level arguments differ, in words."""

    same: tuple[tuple[str, str], ...]
    changed: tuple[Change, ...]
    removed: tuple[str, ...]
    added: tuple[str, ...]
    inputs: tuple[str, ...] = ()
    b_of: dict[str, str] = field(default_factory=dict)  # every matched A node (equations, inputs, literals) -> B's
    a_of: dict[str, str] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        return {"matched": len(self.same), "added": len(self.added), "removed": len(self.removed), "changed": len(self.changed)}

    def summary(self) -> str:
        """The one line a script can grep: `matched N, added N, removed N, changed N`."""
        return ", ".join(f"{k} {v}" for k, v in self.counts().items())

    @property
    def identical(self) -> bool:
        return not (self.changed or self.removed or self.added or self.inputs)

    def status_a(self) -> dict[str, Status]:
        """A's equation paths that differ -> "removed" or "changed"; owners holding a difference are "changed"."""
        return _with_owners({**{p: "removed" for p in self.removed}, **{c.a: "changed" for c in self.changed}})

    def status_b(self) -> dict[str, Status]:
        return _with_owners({**{p: "added" for p in self.added}, **{c.b: "changed" for c in self.changed}})


def diff(a: Graph, b: Graph) -> GraphDiff:
    wa, wb = _Walk(a), _Walk(b)
    pa, pb = [p for p, _ in wa.eqns], [p for p, _ in wb.eqns]
    na, nb = wa.nodes, wb.nodes
    ma, mb = _modules(a), _modules(b)
    rename = _renamer(_renames(wa, wb, a.function, b.function))
    strict = ([rename(_key(p, n, na, module=ma)) for p, n in wa.eqns], [_key(p, n, nb, module=mb) for p, n in wb.eqns])
    loose = ([rename(_key(p, n, na, loose=True)) for p, n in wa.eqns], [_key(p, n, nb, loose=True) for p, n in wb.eqns])
    shaped = (
        [(*k, n.avals) for k, (_, n) in zip(strict[0], wa.eqns, strict=True)],
        [(*k, n.avals) for k, (_, n) in zip(strict[1], wb.eqns, strict=True)],
    )
    b_of: dict[str, str] = _match_inputs(a, b)
    pairs: dict[int, int] = {}  # A index -> B index
    for keys in (shaped, strict):  # shapes first: of a run of alike layers, those whose shapes stayed pair up
        _follow(wa, wb, keys, pairs, b_of)
        for _ in range(ROUNDS):  # the order proposes, the dataflow disposes
            before = len(pairs)
            _fill(keys, pairs, _Agrees(wa, wb, b_of, pairs))
            _follow(wa, wb, keys, pairs, b_of)
            if len(pairs) == before:
                break
    _fill(strict, pairs)
    _follow(wa, wb, strict, pairs, b_of)
    strict_pairs = set(pairs.items())
    _fill(loose, pairs)
    matched = sorted(pairs.items())
    b_of.update({pa[i]: pb[j] for i, j in matched})
    a_of = {v: k for k, v in b_of.items()}
    same: list[tuple[str, str]] = []
    changed: list[Change] = []
    for i, j in matched:
        x, y = pa[i], pb[j]
        what = _differences(na[x], nb[y], (i, j) not in strict_pairs, rename)
        for port, (src_a, src_b) in enumerate(zip(wa.ops.get(x, ()), wb.ops.get(y, ()), strict=False)):
            if b_of.get(src_a) != src_b and not _same_value(na.get(src_a), nb.get(src_b), src_a, src_b):
                what.append(f"operand {port} from {_name(nb, src_b)} (was {_name(na, src_a)})")
                break
        if what:
            changed.append(Change(x, y, tuple(what)))
        else:
            same.append((x, y))
    got_a, got_b = {i for i, _ in matched}, {j for _, j in matched}
    return GraphDiff(
        same=tuple(same),
        changed=tuple(changed),
        removed=tuple(p for i, p in enumerate(pa) if i not in got_a),
        added=tuple(p for j, p in enumerate(pb) if j not in got_b),
        inputs=_input_changes(a, b),
        b_of=b_of,
        a_of=a_of,
    )


class _Walk:
    """A graph per call site: its equations in program order, every node by path, each equation's
    operands' producers by port."""

    def __init__(self, graph: Graph) -> None:
        self.eqns: list[tuple[str, Node]] = []
        self.nodes: dict[str, Node] = {}
        self.ops: dict[str, tuple[str, ...]] = {}
        self._visit(graph, graph.root, "", 0)
        # each equation's operands in its own terms (`producer` unmapped): `_follow` groups by them
        self.raw = {path: tuple(self.producer(src, None) for src in self.ops[path]) for path, _ in self.eqns}

    def _visit(self, graph: Graph, body_id: str, prefix: str, depth: int) -> None:
        body = graph.bodies.get(body_id)
        if body is None or depth > 200:
            return
        into: dict[str, dict[int, str]] = {}
        for e in body.edges:
            into.setdefault(e.dst, {})[e.dst_port] = prefix + e.src
        for node in body.nodes:
            self.nodes[prefix + node.id] = node
        for node in sorted((n for n in body.nodes if n.kind == "eqn"), key=_order):
            path = prefix + node.id
            ports = into.get(node.id, {})
            self.ops[path] = tuple(ports[k] for k in sorted(ports))
            self.eqns.append((path, node))
            for index, ref in enumerate(node.subgraphs):
                self._visit(graph, ref.body, f"{path}:{index}/", depth + 1)

    def producer(self, path: str, mapped: dict[str, str] | None) -> object:
        """What an operand is, in A's terms: an argument by name, a literal by value, a body's input
        by its place under its owner, an equation by its A path (`mapped`: B's path -> A's; None
        when unmatched)."""
        node = self.nodes.get(path)
        if node is None or node.kind == "eqn":
            return path if mapped is None else mapped.get(path)
        if node.kind == "literal":
            return ("literal", node.label, node.avals)
        owner, _, local = path.rpartition("/")
        if not owner:
            return (node.kind, node.label)
        owner_eqn = owner.rpartition(":")[0]
        at = owner_eqn if mapped is None else mapped.get(owner_eqn)
        return (node.kind, at, owner.rpartition(":")[2], local) if at is not None else None


def _follow(wa: _Walk, wb: _Walk, keys: tuple[list[Any], list[Any]], pairs: dict[int, int], b_of: dict[str, str]) -> None:
    """Match along the dataflow, in B's program order: an equation whose key, owner and every operand
    are those of an unmatched A equation (its owner and its operands' producers matched already) is
    that equation. One fed by literals alone carries no dataflow (a `zeros` in every layer): it pairs
    in order only where both owners hold as many of it; else the program order places it (`_fill`)."""
    got_b = set(pairs.values())
    if len(pairs) == len(wa.eqns) or len(got_b) == len(wb.eqns):
        return
    index: dict[tuple[Any, ...], list[int]] = {}
    alike: dict[tuple[Any, ...], int] = {}  # A's count of literal-fed equations per (key, owner, literals)
    for i, (path, _) in enumerate(wa.eqns):
        group = (keys[0][i], _owner(path, None), wa.raw[path])
        if not _flows(group[2]):
            alike[group] = alike.get(group, 0) + 1
        if i not in pairs:
            index.setdefault(group, []).append(i)
    literal_fed: dict[tuple[Any, ...], int] = {}  # B's, per (key, B's owner, literals)
    for j, (path, _) in enumerate(wb.eqns):
        if not _flows(wb.raw[path]):
            group = (keys[1][j], _owner(path, None), wb.raw[path])
            literal_fed[group] = literal_fed.get(group, 0) + 1
    a_of = {v: k for k, v in b_of.items()}
    a_paths = [p for p, _ in wa.eqns]
    for i, j in pairs.items():
        a_of[wb.eqns[j][0]] = a_paths[i]
    for j, (path, _) in enumerate(wb.eqns):
        if j in got_b:
            continue
        raw = wb.raw[path]
        operands = tuple(wb.producer(src, a_of) for src in wb.ops[path])
        owner = _owner(path, a_of)
        if None in operands or owner is None:
            continue
        group = (keys[1][j], owner, operands)
        if not _flows(raw) and alike.get(group) != literal_fed.get((keys[1][j], _owner(path, None), raw)):
            continue
        found = index.get(group)
        while found and found[0] in pairs:
            found.pop(0)
        if found:
            i = found.pop(0)
            pairs[i] = j
            a_of[path] = a_paths[i]


def _owner(path: str, mapped: dict[str, str] | None) -> tuple[str, str] | None:
    """The equation whose body holds `path` and the body's index, in A's terms ("" at the top; None
    when B's owner is unmatched)."""
    body, _, _ = path.rpartition("/")
    if not body:
        return ("", "")
    owner, _, index = body.rpartition(":")
    at = owner if mapped is None else mapped.get(owner)
    return (at, index) if at is not None else None


def _flows(operands: tuple[Any, ...]) -> bool:
    return any(not (isinstance(o, tuple) and o[0] == "literal") for o in operands)


class _Agrees:
    """Whether a pair the program order proposes agrees with the dataflow matched so far. Of many
    alike chains (an optimizer's update of every leaf) the order alone pairs the wrong ones after an
    inserted layer; the dataflow picks the right one once the chain's start is matched."""

    def __init__(self, wa: _Walk, wb: _Walk, b_of: dict[str, str], pairs: dict[int, int]) -> None:
        self.wa, self.wb = wa, wb
        self.b_of = dict(b_of)
        self.b_of.update({wa.eqns[i][0]: wb.eqns[j][0] for i, j in pairs.items()})
        self.a_of = {v: k for k, v in self.b_of.items()}
        self.settled = frozenset(self.b_of)  # matched before this pass: `_follow` found all it could from them

    def __call__(self, i: int, j: int) -> bool:
        """Yes when every operand's producers are matched to each other (or are alike arguments and
        literals); also when all of A's were matched before this pass and some differ: the operand
        really moved (a change). No while a producer is unmatched: a later pass decides."""
        x, y = self.wa.eqns[i][0], self.wb.eqns[j][0]
        nodes_a, nodes_b = self.wa.nodes, self.wb.nodes
        agree = True
        for src_a, src_b in zip(self.wa.ops[x], self.wb.ops[y], strict=False):
            to_b, to_a = self.b_of.get(src_a), self.a_of.get(src_b)
            pending = to_b is None and to_a is None and (_is_eqn(nodes_a, src_a) or _is_eqn(nodes_b, src_b))
            if pending or ((to_b is not None or to_a is not None) and to_b != src_b):
                agree = False
                break
        if not agree and not all(src in self.settled or not _is_eqn(nodes_a, src) for src in self.wa.ops[x]):
            return False
        self.b_of[x], self.a_of[y] = y, x
        return True


def _is_eqn(nodes: dict[str, Node], path: str) -> bool:
    node = nodes.get(path)
    return node is not None and node.kind == "eqn"


def _fill(keys: tuple[list[Any], list[Any]], pairs: dict[int, int], agrees: _Agrees | None = None) -> None:
    """Match what is left by key, in program order, between the matches both sides agree on the
    order of (difflib's longest matching runs in each gap); with `agrees`, only pairs the dataflow
    does not contradict."""
    ka, kb = keys
    if len(pairs) in (len(ka), len(kb)):
        return
    anchors = _increasing(sorted(((i, j) for i, j in pairs.items()), key=lambda p: p[1]))
    got_b = set(pairs.values())
    ids: dict[Any, int] = {}
    prev_i = prev_j = -1
    for i, j in [*anchors, (len(ka), len(kb))]:
        left = [x for x in range(prev_i + 1, i) if x not in pairs]
        right = [y for y in range(prev_j + 1, j) if y not in got_b]
        if left and right:
            ia = [ids.setdefault(ka[x], len(ids)) for x in left]
            ib = [ids.setdefault(kb[y], len(ids)) for y in right]
            matcher = difflib.SequenceMatcher(None, ia, ib, autojunk=False)
            for m in matcher.get_matching_blocks():
                for k in range(m.size):
                    if agrees is None or agrees(left[m.a + k], right[m.b + k]):
                        pairs[left[m.a + k]] = right[m.b + k]
        prev_i, prev_j = i, j


def _order(node: Node) -> int:
    return int(node.id[1:]) if node.id[1:].isdigit() else -1


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of `pairs` (sorted by j) whose i increase too (O(n log n))."""
    import bisect

    tails: list[int] = []  # tails[k]: the smallest i ending an increasing run of length k + 1
    tail_at: list[int] = []
    back: list[int] = []
    for n, (i, _) in enumerate(pairs):
        k = bisect.bisect_left(tails, i)
        if k == len(tails):
            tails.append(i)
            tail_at.append(n)
        else:
            tails[k], tail_at[k] = i, n
        back.append(tail_at[k - 1] if k else -1)
    out = []
    n = tail_at[-1] if tail_at else -1
    while n >= 0:
        out.append(pairs[n])
        n = back[n]
    return out[::-1]


def _modules(graph: Graph) -> dict[str, str]:
    """Each top-level equation's module as the grouped view names it (``encoder.layers[4]/attn``,
    read from the parameters an nnx or equinox call uses): the backward of a block added at the end
    pairs with nothing, not with the block before it."""
    from jaxscope.analysis.module_keys import module_keys

    return {node_id: "/".join(key) for node_id, key in module_keys(graph.top, graph.function)[0].items()}


def _key(path: str, node: Node, nodes: dict[str, Node], loose: bool = False, module: dict[str, str] | None = None) -> tuple[str, ...]:
    """What an equation is and where it sits, with nothing that an edit elsewhere moves."""
    owners = []
    parts = path.split("/")
    for k in range(1, len(parts)):
        owner, _, index = "/".join(parts[:k]).rpartition(":")
        found = nodes.get(owner)
        owners.append(f"{found.label if found is not None else '?'}:{index}")
    where = ">".join(owners)
    if loose:
        return (where, node.label)
    function = node.source.function if node.source is not None else ""
    group = module.get(parts[0].split(":")[0], "") if module is not None else ""
    return (where, node.label, node.name_stack, group, function, str(len(node.in_avals)))


def _renames(wa: _Walk, wb: _Walk, fa: str, fb: str) -> dict[str, str]:
    """The functions of A that B has under another name, when two functions are compared (`diff
    f.py::step_a f.py::step_b`): the traced ones, and the helpers renamed the same way (``mlp_a`` ->
    ``mlp_b``, as ``step_a`` -> ``step_b``). A name alone is no change; a helper called instead of
    another (``gelu`` for ``relu``) stays one. The same function on both sides: none."""
    if not fa or not fb or fa == fb:
        return {}
    match = difflib.SequenceMatcher(None, fa, fb, autojunk=False)
    edits = [(fa[i1:i2], fb[j1:j2]) for tag, i1, i2, j1, j2 in match.get_opcodes() if tag != "equal"]
    if len(edits) != 1 or not edits[0][0]:
        return {fa: fb}
    old, new = edits[0]
    names_a = {n.source.function for _, n in wa.eqns if n.source is not None and n.source.function}
    names_b = {n.source.function for _, n in wb.eqns if n.source is not None and n.source.function}
    out = {fa: fb}
    for name in sorted(names_a - names_b):
        head, sep, tail = name.rpartition(old)
        if sep and head + new + tail in names_b - names_a:
            out[name] = head + new + tail
    return out


def _renamer(renames: dict[str, str]) -> Callable[[Any], Any]:
    """A's key, scope or function name as B would call it (`_renames`); the identity when none."""
    if not renames:
        return lambda value: value
    pattern = re.compile("|".join(rf"(?<![\w.]){re.escape(k)}(?![\w])" for k in sorted(renames, key=len, reverse=True)))

    def rename(value: Any) -> Any:
        if isinstance(value, tuple):
            return tuple(rename(v) for v in value)
        return pattern.sub(lambda m: renames[m.group(0)], value) if isinstance(value, str) else value

    return rename


def _differences(x: Node, y: Node, loose: bool, rename: Callable[[Any], Any] = lambda v: v) -> list[str]:
    what = []
    if x.avals != y.avals:
        what.append(f"{_avals(x.avals)} → {_avals(y.avals)}")
    if x.in_avals != y.in_avals and len(x.in_avals) == len(y.in_avals):
        what.append(f"operands {_avals(x.in_avals)} → {_avals(y.in_avals)}")
    elif len(x.in_avals) != len(y.in_avals):
        what.append(f"{len(x.in_avals)} → {len(y.in_avals)} operands")
    pa, pb = dict(x.params), dict(y.params)
    for name in sorted(pa.keys() | pb.keys()):
        if pa.get(name) != pb.get(name):
            what.append(f"{name}={pa.get(name, '—')} → {pb.get(name, '—')}")
    if loose:
        if rename(x.name_stack) != y.name_stack:
            what.append(f"scope {x.name_stack or '(top)'} → {y.name_stack or '(top)'}")
        fx, fy = (n.source.function if n.source is not None else "" for n in (x, y))
        if rename(fx) != fy:
            what.append(f"function {fx or '?'} → {fy or '?'}")
    return what


def _avals(avals: tuple[str, ...]) -> str:
    return ", ".join(avals) if avals else "()"


def _match_inputs(a: Graph, b: Graph) -> dict[str, str]:
    """Top-level arguments by name; inside a body, inputs, constants and literals by their id
    under an owner path both sides have (`diff` adds the equations)."""
    by_label = {n.label: n.id for n in b.top.nodes if n.kind in ("input", "const")}
    out = {n.id: by_label[n.label] for n in a.top.nodes if n.kind in ("input", "const") and n.label in by_label}
    return out


def _name(nodes: dict[str, Node], path: str) -> str:
    node = nodes.get(path)
    if node is None:
        return path
    return f"{node.label} ({path})" if node.kind == "eqn" else node.label


def _same_value(x: Node | None, y: Node | None, px: str, py: str) -> bool:
    """Two operands that are the same thing though not matched as nodes: a literal of one value,
    or a body's own input or constant at the same place."""
    if x is None or y is None or x.kind != y.kind or x.kind == "eqn":
        return False
    if x.kind == "literal":
        return x.label == y.label and x.avals == y.avals
    return "/" in px and px.rpartition("/")[2] == py.rpartition("/")[2]


def _input_changes(a: Graph, b: Graph) -> tuple[str, ...]:
    ins_a = {n.label: n for n in a.top.nodes if n.kind == "input"}
    ins_b = {n.label: n for n in b.top.nodes if n.kind == "input"}
    out = [f"- argument {k} {_avals(ins_a[k].avals)}" for k in ins_a if k not in ins_b]
    out += [f"+ argument {k} {_avals(ins_b[k].avals)}" for k in ins_b if k not in ins_a]
    out += [
        f"~ argument {k} {_avals(ins_a[k].avals)} → {_avals(ins_b[k].avals)}"
        for k in ins_a
        if k in ins_b and ins_a[k].avals != ins_b[k].avals
    ]
    return tuple(out)


def _with_owners(status: dict[str, Status]) -> dict[str, Status]:
    """`status`, and every owner path above a difference "changed" (unless it differs itself):
    a jit or a scan drawn collapsed shows that something inside it changed."""
    out = dict(status)
    for path in status:
        parts = path.split("/")
        for k in range(1, len(parts)):
            owner = "/".join(parts[:k]).rpartition(":")[0]
            out.setdefault(owner, "changed")
    return out
