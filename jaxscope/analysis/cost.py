"""What each equation costs, computed from its primitive, its avals and its params (no XLA needed):
FLOPs, transcendentals and the bytes it reads and writes, counted as XLA's cost analysis counts
an unfused HLO op (a dot: 2·M·N·K; an elementwise op: one per element, a transcendental one in
`transcendentals`; a reduction: one per element folded in; a convolution: its kernel taps that land
on the input, as XLA counts them; data movement: none). Higher-order
equations cost their bodies: a scan its body times its length, a cond its dearest branch, a while
its body once (its trip count is not known before it runs: `CostRow.note` says so).

Bytes are per equation as if nothing were fused, so their sum is an upper bound of XLA's own
`bytes accessed`, which counts the fused program; FLOPs and transcendentals add up to XLA's.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import cast

from jaxscope.analysis.avals import aval_bytes, aval_elems, aval_shape
from jaxscope.schema.graph import Graph, Node, SourceLoc
from jaxscope.schema.latest import LatestGraph
from jaxscope.schema.primitives import number, primitive

Numbers = tuple[tuple[str, tuple[int, ...]], ...]


@dataclass(frozen=True, slots=True)
class Cost:
    flops: float = 0.0
    transcendentals: float = 0.0
    bytes: float = 0.0  # read and written, unfused

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.flops + other.flops, self.transcendentals + other.transcendentals, self.bytes + other.bytes)

    def times(self, n: float) -> Cost:
        return Cost(self.flops * n, self.transcendentals * n, self.bytes * n)


@dataclass(frozen=True, slots=True)
class CostRow:
    """One equation that does work (no sub-graphs), per call site, with how often it runs."""

    path: str
    node: Node
    own: Cost  # one run of it
    runs: float  # the scan lengths around it (1 at the top level)
    note: str = ""  # "in a while loop: counted once", "in a cond branch", `DEAD`, `FOLDED`

    @property
    def cost(self) -> Cost:
        return self.own.times(self.runs)


@functools.lru_cache(maxsize=4096)
def _base(label: str) -> str:
    return label.split("(", 1)[0].split("[", 1)[0].strip()


def _length(node: Node) -> int:
    """How many times a scan runs its body (1 for anything else, or a scan whose length is not known)."""
    length = number(node.numbers, "length") if primitive(_base(node.label)).loop else None
    return length[0] if length else 1


def leaf_cost(node: Node) -> Cost:
    """One run of an equation with no sub-graphs, by its primitive's rule (`schema.primitives`);
    one whose rule reads params it was not given (`unread`) moves its bytes and no FLOP is guessed."""
    return _leaf_cost(_base(node.label), node.in_avals, node.avals, node.numbers)


UNREAD = "not priced: this JAX gave their params in a form jaxscope does not read (their bytes are counted)"


def unread(node: Node) -> bool:
    """An equation whose cost rule needs params (a dot's contracting dimensions) it was not sent:
    a JAX that changed their form. Its FLOPs are not guessed (`UNREAD` says so on its row)."""
    return not node.numbers and primitive(_base(node.label)).numbers is not None


@functools.lru_cache(maxsize=16384)  # a program repeats its layers: few distinct equations to price
def _leaf_cost(prim: str, in_avals: tuple[str, ...], avals: tuple[str, ...], numbers: Numbers) -> Cost:
    entry = primitive(prim)
    rule = entry.cost
    out = sum(aval_elems(a) for a in avals)
    moved = float(sum(aval_bytes(a) or 0 for a in (*in_avals, *avals)))
    if entry.numbers is not None and not numbers:
        return Cost(0.0, 0.0, moved)  # `unread`
    try:
        return _priced(rule, in_avals, avals, numbers, out, moved)
    except OverflowError:  # numbers no program has (a damaged or hostile saved trace): no FLOPs made of them
        return Cost(0.0, 0.0, moved)


def _priced(rule: str, in_avals: tuple[str, ...], avals: tuple[str, ...], numbers: Numbers, out: int, moved: float) -> Cost:
    """`_leaf_cost` by its primitive's rule."""
    if rule == "dot":
        return Cost(2.0 * out * _contracted(in_avals, numbers), 0.0, moved)
    if rule == "conv":
        return Cost(2.0 * _conv_macs(in_avals, avals, numbers), 0.0, moved)
    if rule == "transcendental":
        return Cost(0.0, float(out), moved)
    if rule == "integer_pow":  # repeated multiplies (x**1: none), then one divide for a negative power
        y = (number(numbers, "y") or (2,))[0]
        return Cost(float(out * ((max(abs(y) - 1, 0)) + (y < 0))), 0.0, moved)
    if rule == "convert" and in_avals and avals and _dtype(in_avals[0]) == _dtype(avals[0]):
        return Cost(0.0, 0.0, moved)  # a change of weak type only: no op
    if rule in ("elementwise", "convert"):
        return Cost(float(out), 0.0, moved)
    if rule == "reduction":
        return Cost(float(max(sum(aval_elems(a) for a in in_avals[:1]) - out, 0)), 0.0, moved)
    if rule == "window":  # each output folds its window, padding included (as XLA counts a pooling)
        dims = number(numbers, "window_dimensions")
        return Cost(float(out * max(math.prod(dims) - 1, 0)) if dims else 0.0, 0.0, moved)
    if rule in ("cumulative", "cumulative_lse"):
        steps = float(out * _steps_along(in_avals, numbers))
        return Cost(steps, 0.0, moved) if rule == "cumulative" else Cost(8.0 * steps, 2.0 * steps, moved)
    if rule == "scatter":  # one op per update element
        return Cost(float(aval_elems(in_avals[-1]) if in_avals else 0), 0.0, moved)
    return Cost(0.0, 0.0, moved)


def _steps_along(in_avals: tuple[str, ...], numbers: Numbers) -> int:
    """n − 1 for a cumulative op along an axis of n: the steps of each output's reduce_window."""
    shape = aval_shape(in_avals[0]) if in_avals else None
    axis = number(numbers, "axis")
    if not shape or not axis or not 0 <= axis[0] < len(shape):
        return 1
    return max(shape[axis[0]] - 1, 0)


def _dtype(aval: str) -> str:
    return aval.split("[", 1)[0]


def _contracted(in_avals: tuple[str, ...], numbers: Numbers) -> int:
    """The product of a dot's contracting dimensions (K of 2·M·N·K): its lhs's."""
    lhs = aval_shape(in_avals[0]) if in_avals else None
    dims = number(numbers, "lhs_contracting")
    if lhs is None or dims is None:
        return 1
    return math.prod(lhs[d] for d in dict.fromkeys(dims) if 0 <= d < len(lhs))  # each dimension once


def _conv_macs(in_avals: tuple[str, ...], avals: tuple[str, ...], numbers: Numbers) -> float:
    """A convolution's multiply-adds as XLA counts them: per output element, the kernel taps that
    land on an input element (not on padding, not between the elements of a dilated input), times
    the kernel's input features (a grouped convolution's kernel holds its group's alone). A SAME
    3×3 convolution of a 12×12 image has 34×34 such taps over its 144 outputs, not 144×9."""
    lhs = aval_shape(in_avals[0]) if in_avals else None
    rhs = aval_shape(in_avals[1]) if len(in_avals) > 1 else None
    out = aval_shape(avals[0]) if avals else None
    names = ("lhs_spec", "rhs_spec", "out_spec", "padding", "window_strides", "lhs_dilation", "rhs_dilation")
    found = [number(numbers, name) for name in names]
    if not (lhs and rhs and out) or any(f is None for f in found):
        return 0.0  # not read (a jax whose params changed form: `test_primitive_numbers` says so)
    lhs_spec, rhs_spec, out_spec, pads, strides, lhs_dilation, rhs_dilation = cast("list[tuple[int, ...]]", found)
    spatial = len(lhs_spec) - 2
    ranks = {len(lhs), len(rhs), len(out), len(rhs_spec), len(out_spec)}
    dims = (*lhs_spec, *rhs_spec, *out_spec)
    if ranks != {spatial + 2} or len(pads) != 2 * spatial or {len(strides), len(lhs_dilation), len(rhs_dilation)} != {spatial}:
        return 0.0
    if not all(0 <= d < spatial + 2 for d in dims):
        return 0.0
    taps = 1
    for d in range(spatial):
        n_in, k, n_out = lhs[lhs_spec[2 + d]], rhs[rhs_spec[2 + d]], out[out_spec[2 + d]]
        taps *= _taps(n_in, k, n_out, strides[d], pads[2 * d], lhs_dilation[d], rhs_dilation[d])
    return float(out[out_spec[0]] * out[out_spec[1]] * rhs[rhs_spec[1]] * taps)


@functools.lru_cache(maxsize=1024)
def _taps(n_in: int, k: int, n_out: int, stride: int, pad_lo: int, lhs_dilation: int, rhs_dilation: int) -> int:
    """Kernel taps on input elements along one spatial dimension, summed over its output positions:
    per tap, the outputs whose window puts it inside the input (a range, counted in closed form) and,
    for a dilated input, on one of its elements (every `lhs_dilation / gcd` outputs of the range)."""
    if min(n_in, k, n_out, stride, lhs_dilation, rhs_dilation) < 1 or max(k, lhs_dilation) > 1 << 16:
        return 0  # no convolution XLA would accept (a damaged saved trace)
    extent = (n_in - 1) * lhs_dilation + 1  # the dilated input, before padding
    g = math.gcd(stride, lhs_dilation)
    period = lhs_dilation // g
    step = pow(stride // g, -1, period) if period > 1 else 0  # o ≡ -offset/g · step (mod period) lands on an element
    count = 0
    for t in range(k):
        offset = t * rhs_dilation - pad_lo  # output o reads position o * stride + offset
        lo, hi = max(0, -(offset // stride)), min(n_out - 1, (extent - 1 - offset) // stride)
        if hi < lo or offset % g:
            continue  # no output's window puts this tap on the input, or never on an element of it
        first = lo + ((-offset // g) * step - lo) % period if period > 1 else lo
        if first <= hi:
            count += (hi - first) // period + 1
    return count


DEAD = "dead: their results are never used (jit drops them; not counted)"


def dead(graph: Graph) -> set[str]:
    """The top-level equations none of whose results reach an output: jit's lowering drops them
    (a grad's forward results nobody reads), so XLA never counts them, and neither do `total`
    and `rows`' costs."""
    top = graph.top
    kinds = {n.id: n.kind for n in top.nodes}
    into: dict[str, list[str]] = {}
    for e in top.edges:
        into.setdefault(e.dst, []).append(e.src)
    live: set[str] = set()
    stack = [n.id for n in top.nodes if n.kind == "output"]
    while stack:
        for src in into.get(stack.pop(), ()):
            if src not in live:
                live.add(src)
                stack.append(src)
    return {node_id for node_id, kind in kinds.items() if kind == "eqn" and node_id not in live}


FOLDED = "folded: constants only, or + 0, * 1 (lowering folds them; not counted)"
_PASS_ALONG = frozenset({"broadcast_in_dim", "reshape", "convert_element_type", "squeeze", "expand_dims", "copy"})


def folded(graph: Graph, body_id: str) -> set[str]:
    """The equations of a body that lowering folds away before XLA counts anything: elementwise
    ops of constants only (`square(broadcast(0.0))`), `x + 0`, `x - 0`, `x * 1`, `x / 1`; what
    they make is a constant too. What optax's norms and a grad's seeds are full of."""
    body = graph.bodies[body_id]
    value: dict[str, str] = {n.id: n.label for n in body.nodes if n.kind == "literal"}  # constant node -> its value ("" unknown)
    inputs: dict[str, list[tuple[int, str]]] = {}
    for e in body.edges:
        inputs.setdefault(e.dst, []).append((e.dst_port, e.src))
    out: set[str] = set()
    for n in body.nodes:  # program order: a constant is made before it is read
        if n.kind != "eqn" or n.subgraphs:
            continue
        into = inputs.get(n.id)
        if not into or all(src not in value for _, src in into):  # most equations: no constant in sight
            continue
        ins = [src for _, src in sorted(into)]
        consts = [value[src] for src in ins if src in value]
        prim = _base(n.label)
        if not ins or len(consts) < len(ins):
            identity = (
                prim in ("add", "add_any", "sub")
                and _is(consts, 0.0)
                and (prim != "sub" or ins[-1] in value)
                or prim == "mul"
                and _is(consts, 1.0)
                or prim == "div"
                and ins[-1] in value
                and _is([value[ins[-1]]], 1.0)
            )
            if identity:
                out.add(n.id)
            continue
        if prim in _PASS_ALONG:
            value[n.id] = consts[0]
        elif primitive(prim).cost in ("elementwise", "transcendental", "integer_pow"):
            value[n.id] = ""
            out.add(n.id)
    return out


def _is(consts: list[str], number: float) -> bool:
    for c in consts:
        try:
            if float(c) == number:
                return True
        except ValueError:
            continue
    return False


class _Skipped:
    """A graph's dead equations and, per body, its folded ones, found once for `rows` and `total`."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.dead = dead(graph)
        self._folded: dict[str, set[str]] = {}

    def folded(self, body_id: str) -> set[str]:
        if body_id not in self._folded:
            self._folded[body_id] = folded(self.graph, body_id)
        return self._folded[body_id]


_LAST: LatestGraph[_Skipped] = LatestGraph()  # the last graph's: `rows` then `total` of one graph find them once


def _skipped(graph: Graph) -> _Skipped:
    return _LAST.get(graph, None, lambda: _Skipped(graph))


def rows(graph: Graph) -> list[CostRow]:
    """Every equation that does work, per call site, in program order, with its runs (a dead one
    with none: `DEAD`)."""
    return list(_rows(graph, graph.root, "", 1.0, "", 0, _skipped(graph).dead))


def _rows(graph: Graph, body_id: str, prefix: str, runs: float, note: str, depth: int, gone: set[str]) -> Iterator[CostRow]:
    body = graph.bodies.get(body_id)
    if body is None or depth > 200:
        return
    free = _skipped(graph).folded(body_id)
    for node in body.nodes:
        if node.kind != "eqn":
            continue
        path = prefix + node.id
        runs_here, note_here = (0.0, DEAD) if depth == 0 and node.id in gone else (runs, note)
        if not node.subgraphs:
            gone_here = node.id in free
            if gone_here:
                note_here = FOLDED
            elif note_here != DEAD and unread(node):
                note_here = UNREAD  # said before a loop's note: its count is not known at all
            yield CostRow(path, node, leaf_cost(node), 0.0 if gone_here else runs_here, note_here)
            continue
        prim = _base(node.label)
        entry = primitive(prim)
        untold = entry.loop and number(node.numbers, "length") is None  # (a while's trips are not known before it runs)
        loop = f"in a {prim} loop: counted once" if untold else "in a cond branch" if entry.ports == "branches" else ""
        for i, ref in enumerate(node.subgraphs):
            yield from _rows(graph, ref.body, f"{path}:{i}/", runs_here * _length(node), note_here or loop, depth + 1, gone)


def total(graph: Graph, found: list[CostRow] | None = None) -> Cost:
    """The program's cost: each body once per run, a cond its dearest branch (XLA's figure for
    it), dead equations not at all. Summed from `found` (its `rows`) where that is the same: with
    no cond; else the graph is walked."""
    if found is not None and all(r.note != "in a cond branch" for r in found):
        return Cost(
            sum(r.own.flops * r.runs for r in found),
            sum(r.own.transcendentals * r.runs for r in found),
            sum(r.own.bytes * r.runs for r in found),
        )
    return _body_total(graph, graph.root, 0, _skipped(graph).dead)


def _body_total(graph: Graph, body_id: str, depth: int, gone: set[str]) -> Cost:
    body = graph.bodies.get(body_id)
    if body is None or depth > 200:
        return Cost()
    out = Cost()
    free = _skipped(graph).folded(body_id)
    for node in body.nodes:
        if node.kind != "eqn" or (depth == 0 and node.id in gone) or node.id in free:
            continue
        if not node.subgraphs:
            out = out + leaf_cost(node)
            continue
        parts = [_body_total(graph, ref.body, depth + 1, gone) for ref in node.subgraphs]
        if primitive(_base(node.label)).ports == "branches":  # a cond: its dearest branch
            out = out + max(parts, key=lambda c: (c.flops + c.transcendentals, c.bytes))
        else:
            out = out + sum(parts, Cost()).times(_length(node))
    return out


def by_key(found: list[CostRow], key: str, depth: int = 0, graph: Graph | None = None) -> dict[str, Cost]:
    """Costs summed by `key_of` each row's equation; by "scope" named as the grouped view names
    its groups (`scope_view.module_keys` of `graph`'s top level) when `graph` is given."""
    name = namer(key, depth, graph)
    out: dict[str, Cost] = {}
    for row in found:
        k = name(row)
        out[k] = out.get(k, Cost()) + row.cost
    return out


def namer(key: str, depth: int = 0, graph: Graph | None = None) -> Callable[[CostRow], str]:
    """The row name of a cost row under `key` (see `by_key`): the module keys are read once."""
    if key != "scope" or graph is None:
        return lambda row: key_of(row.node, key, depth)
    from jaxscope.analysis.module_keys import module_keys

    keys = module_keys(graph.top, graph.function)[0]
    loops = {n.id for n in graph.top.nodes if n.kind == "eqn" and primitive(_base(n.label)).loop}

    def name(row: CostRow) -> str:
        top = row.path.split("/")[0].split(":")[0]
        parts = keys.get(top)
        if parts is not None and top in loops:
            parts = _in_loop(parts, row.node)
        return key_of(row.node, key, depth, parts)

    return name


def _in_loop(outer: tuple[str, ...], node: Node) -> tuple[str, ...]:
    """A loop body's equation's scope: the loop's own, then the modules the equation ran in inside
    the body (a scan over layers: ``Stack.__call__/Stack.__call__.layer/Block.__call__/Attn.__call__``), so a model's
    stacked blocks get rows of their own, each counted as often as the loop runs."""
    from jaxscope.analysis.module_keys import group_key

    inner, _ = group_key(node, detached=True)  # from the body's own function (`layer`), as hoisted equations are named
    if not inner:
        return outer
    if not outer:
        return inner
    pass_ = outer[0] if outer[0] != "program" else inner[0]
    return (pass_, *outer[1:], *inner[1:])


def key_of(node: Node, key: str, depth: int = 0, parts: tuple[str, ...] | None = None) -> str:
    """An equation's row: "line" its user file:line, "scope" its module path (or the calls it came
    through where there are no scopes) and pass, its first `depth` parts when given, else its
    primitive. `parts`: its group key when known (`module_keys`), else read from the node alone."""
    from jaxscope.analysis.module_keys import group_key

    if key == "line":
        return _where(node.source)
    if key == "scope":
        if parts is None:
            parts, _ = group_key(node)
        inner = parts[2:] if len(parts) > 1 and parts[1] == parts[0] else parts[1:]  # (a pass's own group)
        path = "/".join(inner[:depth] if depth else inner) or "(top level)"
        return f"{path} · {parts[0]}" if parts and parts[0] != "program" else path
    return _base(node.label)


def _where(loc: SourceLoc | None) -> str:
    return f"{loc.file.rsplit('/', 1)[-1]}:{loc.line}" if loc is not None else "(no user line)"
