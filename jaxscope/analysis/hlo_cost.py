"""What the compiled program costs, instruction by instruction, handed to the equations each
instruction came from (the exact links): the per-equation figures that add up to XLA's own
`cost_analysis()` of the compiled program, fusion's recomputations included, which the
per-primitive model (`analysis.cost`) cannot see.

The figures are XLA's own: the worker prices every instruction with XLA's cost model
(`worker.xla_cost`, `HloResult.priced`), on the backend it was compiled for. A document saved
before that (or a JAX whose parser refused the text) has none: then the instructions are read from
the text and counted by the rules below (a dot 2·M·N·K, an elementwise op one per element, a
reduce one per element folded in), and `HloCost.source` says so."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jaxscope.analysis.cost import Cost, CostRow
from jaxscope.schema.graph import Graph, resolve
from jaxscope.schema.hlo import InstructionCosts

if TYPE_CHECKING:
    from jaxscope.ir.hlo_module import HloFusion

TRANSCENDENTAL = frozenset(
    {
        "exponential",
        "log",
        "logistic",
        "power",
        "sqrt",
        "cbrt",
        "rsqrt",
        "tanh",
        "sine",
        "cosine",
        "exponential-minus-one",
        "log-plus-one",
        "atan2",
        "tan",
        "erf",
        "acosh",
    }
)
ELEMENTWISE = frozenset(
    {
        "add",
        "subtract",
        "multiply",
        "divide",
        "maximum",
        "minimum",
        "negate",
        "abs",
        "compare",
        "select",
        "convert",
        "and",
        "or",
        "xor",
        "not",
        "clamp",
        "sign",
        "floor",
        "ceil",
        "round-nearest-afz",
        "round-nearest-even",
        "remainder",
        "shift-left",
        "shift-right-logical",
        "shift-right-arithmetic",
        "is-finite",
        "popcnt",
        "clz",
        "real",
        "imag",
        "reduce-precision",
        "stochastic-convert",
    }
)
_HEADER = re.compile(r"^\s*(?:ENTRY\s+)?%?([\w.\-]+)\s*\(.*\{\s*$")
INSTRUCTION = re.compile(  # "%name = shape opcode(operands), attributes": its name, shape, opcode, rest
    r"^\s*(?:ROOT\s+)?%([\w.\-]+)\s*=\s*(\([^=]*?\)|[\w\[\],{}:()]+?)\s+([\w\-]+)\((.*)$"
)
_SHAPE = re.compile(r"^[a-z]+\d*\[([0-9,]*)\]")
_REGION = re.compile(r"\b(?:to_apply|select|scatter|comparator)=%([\w.\-]+)")
_DIM_LABELS = re.compile(r"dim_labels=[^_]*_([^-]*)->")
_CONTRACT = re.compile(r"lhs_contracting_dims=\{([0-9,]*)\}")


_CALLED = re.compile(r"\b(body|calls|true_computation|false_computation)=%([\w.\-]+)")
_BRANCHES = re.compile(r"\bbranch_computations=\{([^}]*)\}")
_TRIPS = re.compile(r'"known_trip_count":\{"n":"(\d+)"\}')


@dataclass(frozen=True, slots=True)
class HloCost:
    by_line: dict[int, Cost]  # 1-based line of the text -> what that instruction costs, times the loop trips around it
    total: Cost  # every instruction as often as it runs: a loop body times its trip count
    once: Cost = Cost()  # as XLA's cost_analysis() counts: every instruction once, a loop body once
    uncounted: int = 0  # while loops whose trip count XLA did not know: their bodies counted once
    source: str = "xla"  # "xla": XLA's cost model per instruction; "text": jaxscope's rules over the text (no prices saved)


def trips(lines: list[str]) -> tuple[dict[str, float], int]:
    """How often each computation runs per run of the program: the entry once, a while loop's body
    its `known_trip_count` times its caller's (XLA's own analysis, in the backend config), a fusion
    or branch as its caller; and how many loops had no known trip count (their bodies run once here)."""
    callers: dict[str, list[tuple[str, float]]] = {}
    order: list[str] = []
    entry, current, unknown = "", "", 0
    for line in lines:
        header = _HEADER.match(line)
        if header and " = " not in line:
            current = header.group(1)
            order.append(current)
            entry = current if line.lstrip().startswith("ENTRY") else entry
            continue
        for kind, callee in _CALLED.findall(line):
            factor = 1.0
            if kind == "body":
                found = _TRIPS.search(line)
                factor = float(found.group(1)) if found else 1.0
                unknown += found is None
            callers.setdefault(callee, []).append((current, factor))
        for group in _BRANCHES.findall(line):
            for callee in re.findall(r"%([\w.\-]+)", group):
                callers.setdefault(callee, []).append((current, 1.0))
    runs: dict[str, float] = {entry: 1.0}
    for name in reversed(order):  # callees are printed before their callers: each caller is done first
        if name != entry:
            runs[name] = sum(runs.get(caller, 0.0) * factor for caller, factor in callers.get(name, ()))
    return runs, unknown


def hlo_cost(text: str, priced: InstructionCosts | None = None) -> HloCost:
    """Each instruction line's cost times the loop trips around it, their sum, and XLA's own sum
    (every instruction once): XLA's prices where the worker made them, else the text's rules."""
    if priced is not None and priced.rows:
        by_line: dict[int, Cost] = {}
        total = once = Cost()
        for line, flops, transcendentals, _, runs in priced.rows:
            if not (flops or transcendentals):
                continue
            cost = Cost(flops, transcendentals)
            once = once + cost
            by_line[line] = cost.times(runs)
            total = total + by_line[line]
        return HloCost(by_line, total, once, priced.unknown_trips)
    return _from_text(text)


def _from_text(text: str) -> HloCost:
    """The text's own rules (see the module docstring), for a compiled text saved without XLA's prices."""
    lines = text.splitlines()
    runs, unknown = trips(lines)
    regions = {m.group(1) for line in lines for m in _REGION.finditer(line)}
    shapes: dict[str, tuple[int, ...]] = {}
    by_line: dict[int, Cost] = {}
    current = ""
    total = once = Cost()
    for number, line in enumerate(lines, 1):
        header = _HEADER.match(line)
        if header and " = " not in line:
            current = header.group(1)
            continue
        m = INSTRUCTION.match(line)
        if not m:
            continue
        name, shape_text, opcode, rest = m.groups()
        shape = _shape(shape_text)
        if shape is not None:
            shapes[name] = shape
        if current in regions:
            continue
        out = math.prod(shape) if shape is not None else 0
        operands = re.findall(r"%([\w.\-]+)", rest.split(")", 1)[0])
        cost = _cost(opcode, out, operands, rest, shapes)
        if cost.flops or cost.transcendentals:
            once = once + cost
            cost = cost.times(runs.get(current, 1.0))
            by_line[number] = cost
            total = total + cost
    return HloCost(by_line, total, once, unknown, "text")


def _shape(text: str) -> tuple[int, ...] | None:
    m = _SHAPE.match(text)
    return tuple(int(d) for d in m.group(1).split(",") if d) if m else None


def _cost(opcode: str, out: int, operands: list[str], rest: str, shapes: dict[str, tuple[int, ...]]) -> Cost:
    if opcode in TRANSCENDENTAL:
        return Cost(0.0, float(out))
    if opcode in ELEMENTWISE:
        return Cost(float(out))
    if opcode == "dot" and operands:
        lhs = shapes.get(operands[0], ())
        dims = _CONTRACT.search(rest)
        k = math.prod(lhs[int(d)] for d in dims.group(1).split(",") if d and int(d) < len(lhs)) if dims else 1
        return Cost(2.0 * out * k)
    if opcode == "reduce" and operands:
        return Cost(float(max(math.prod(shapes.get(operands[0], ())) - out, 0)))
    if opcode == "convolution" and len(operands) > 1:
        if "window=" in rest or "batch_group_count=" in rest:
            return Cost()  # padded, strided, dilated windows: which taps fall on data is XLA's count (left out, said)
        rhs = shapes.get(operands[1], ())
        labels = _DIM_LABELS.search(rest)  # `dim_labels=b01f_01io->b01f`: the kernel's output feature is its `o`
        o = labels.group(1).find("o") if labels else len(rhs) - 1
        features = rhs[o] if 0 <= o < len(rhs) else (rhs[-1] if rhs else 1)
        return Cost(2.0 * out * max(math.prod(rhs) // max(features, 1), 1))
    return Cost()


def claimants(text: str, exact: dict[int, list[str]], priced: InstructionCosts | None, graph: Graph | None = None) -> dict[int, list[str]]:
    """The equations to credit with each priced instruction line: those its metadata names; for a
    line XLA left without (a fusion made of named instructions, a convolution rewritten for the
    backward pass), the equations of the instructions fused into it, else of its nearest users,
    else of its nearest operands; and a dot or convolution XLA merged with the transpose after it
    (named after the transpose) is credited to the dot_general that fed the transpose."""
    return _claim(text, exact, priced, graph)[0]


def merged_links(text: str, exact: dict[int, list[str]], priced: InstructionCosts | None, graph: Graph) -> dict[int, list[str]]:
    """`exact` (each compiled line's own equations) with every dot and convolution linked to the
    equation it computes: one XLA merged with the transpose after it (named after the transpose)
    to its dot_general, one XLA rewrote without metadata (a backward convolution) to the
    equation its neighbours name. So every dot_general has its compiled lines."""
    claimed, matmuls = _claim(text, exact, priced, graph)
    return {**exact, **{line: claimed[line] for line in matmuls if line in claimed}}


def _claim(
    text: str, exact: dict[int, list[str]], priced: InstructionCosts | None, graph: Graph | None
) -> tuple[dict[int, list[str]], set[int]]:
    """(`claimants`, the priced lines that compute a matmul), from one reading of the text."""
    from jaxscope.ir.hlo_module import parse_hlo

    out = {line: list(paths) for line, paths in exact.items() if paths}
    if priced is None or not priced.rows:
        return out, set()
    fusions = parse_hlo(text).fusions.values()
    inner = {f.line: [i.line for i in f.instructions] for f in fusions}
    matmuls = _matmul_lines(priced, fusions)
    users: dict[int, list[int]] = {}
    operands: dict[int, list[int]] = {}
    for src, dst in priced.edges:
        users.setdefault(src, []).append(dst)
        operands.setdefault(dst, []).append(src)
    for row in priced.rows:
        line = row[0]
        paths = out.get(line) or sorted({p for n in inner.get(line, ()) for p in exact.get(n, ())})
        paths = paths or _nearest(line, users, exact) or _nearest(line, operands, exact)
        if graph is not None and line in matmuls:
            paths = _merged_into(graph, paths)
        if paths:
            out[line] = paths
    return out, matmuls


_MATMUL_OPCODES = ("dot", "convolution")


def _matmul_lines(priced: InstructionCosts, fusions: Iterable[HloFusion]) -> set[int]:
    """The priced lines that compute a matmul: a dot or convolution, or a fusion holding one (the
    custom fusions XLA:CPU makes of dots, a TPU's convolution fusions)."""
    holding = {f.line for f in fusions if any(i.opcode in _MATMUL_OPCODES for i in f.instructions)}
    return {row[0] for row, opcode in zip(priced.rows, priced.opcodes, strict=False) if opcode in _MATMUL_OPCODES or row[0] in holding}


def _nearest(line: int, step: dict[int, list[int]], exact: dict[int, list[str]]) -> list[str]:
    """The equations named by the nearest lines reached from `line` along `step` (breadth first)."""
    seen, frontier = {line}, [line]
    while frontier:
        found = sorted({p for n in frontier for p in exact.get(n, ()) if n != line})
        if found:
            return found
        frontier = [m for n in frontier for m in step.get(n, ()) if m not in seen]
        seen.update(frontier)
    return []


_MATMULS = ("dot_general", "conv_general_dilated")


def _merged_into(graph: Graph, paths: list[str]) -> list[str]:
    """`paths` with a transpose replaced by the dot_general (or convolution) that feeds it, when no
    path is a matmul already: XLA merged the two and kept the transpose's name."""
    try:
        nodes = [resolve(graph, p) for p in paths]
    except (KeyError, IndexError):
        return paths
    if not nodes or any(node.label in _MATMULS for _, node in nodes):
        return paths
    out = []
    for path, (body, node) in zip(paths, nodes, strict=True):
        src = next((e.src for e in body.edges if e.dst == node.id and e.dst_port == 0), None) if node.label == "transpose" else None
        feeder = next((n for n in body.nodes if n.id == src), None) if src is not None else None
        prefix = path[: len(path) - len(node.id)]
        out.append(prefix + feeder.id if feeder is not None and feeder.label in _MATMULS else path)
    return sorted(set(out))


def per_equation(cost: HloCost, exact: dict[int, list[str]]) -> tuple[dict[str, Cost], Cost]:
    """Each equation's share of the instructions it made (an instruction several equations made,
    fused or merged, is split evenly among them), and what no equation claims. `exact`: the
    equations to credit per line (`claimants`)."""
    out: dict[str, Cost] = {}
    unclaimed = Cost()
    for line, c in cost.by_line.items():
        paths = exact.get(line) or []
        if not paths:
            unclaimed = unclaimed + c
            continue
        share = c.times(1.0 / len(paths))
        for p in paths:
            out[p] = out.get(p, Cost()) + share
    return out, unclaimed


def compiled_rows(
    found: list[CostRow], text: str, exact: dict[int, list[str]], priced: InstructionCosts | None = None, graph: Graph | None = None
) -> tuple[list[CostRow], Cost, HloCost]:
    """`found` (the per-primitive rows) with FLOPs and transcendentals from the compiled program
    instead (each counted as XLA ran it, in its fusions, and as often as it ran: a loop body times
    its trip count), the bytes kept unfused; what no equation made; and the compiled program's cost."""
    cost = hlo_cost(text, priced)
    shares, unclaimed = per_equation(cost, claimants(text, exact, priced, graph))
    out = [
        CostRow(r.path, r.node, Cost(s.flops, s.transcendentals, r.cost.bytes), 1.0, r.note)
        for r in found
        for s in (shares.get(r.path, Cost()),)
    ]
    rowed = {r.path for r in found}
    for path, share in shares.items():  # a loop's own instructions (its counter, a hoisted sum): a row for the loop
        if path in rowed:
            continue
        try:
            node = resolve(graph, path)[1] if graph is not None else None
        except (KeyError, IndexError, ValueError):
            node = None
        if node is None:
            unclaimed = unclaimed + share
        else:
            out.append(CostRow(path, node, Cost(share.flops, share.transcendentals), 1.0))
    return out, unclaimed, cost


def op_seconds(text: str, op_times: dict[str, float], exact: dict[int, list[str]]) -> tuple[dict[str, float], float]:
    """Each equation's share of the measured time of the instructions it made (a fusion's time
    shared among the equations of everything fused into it), and the seconds the profile gave to
    the program's instructions at all (per run)."""
    from jaxscope.ir.hlo_module import parse_hlo

    lines = {m.group(1): n for n, line in enumerate(text.splitlines(), 1) if (m := INSTRUCTION.match(line))}
    fusions = parse_hlo(text).fusions
    out: dict[str, float] = {}
    seen = 0.0
    for name, seconds in op_times.items():
        at = lines.get(name)
        if at is None:
            continue  # the runtime's own events: execute, buffers, Python
        seen += seconds
        fusion = fusions.get(name)
        owned = {at, *(i.line for i in fusion.instructions)} if fusion is not None else {at}
        paths = sorted({p for n in owned for p in exact.get(n, ())})
        for p in paths:
            out[p] = out.get(p, 0.0) + seconds / len(paths)
    return out, seen
