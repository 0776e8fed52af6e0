"""What the compiled program costs, instruction by instruction, read from its HLO text and handed to
the equations each instruction came from (the exact links): the per-equation figures that add up
to XLA's own `cost_analysis()` of the compiled program, fusion's recomputations included, which
the per-primitive model (`analysis.cost`) cannot see. Counted as XLA counts: a dot 2·M·N·K, an
elementwise op one per element (a transcendental one in `transcendentals`), a reduce one per
element folded in, data movement nothing; a reduction's region is priced through its reduce."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from jaxscope.analysis.cost import Cost, CostRow

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
    r"^\s*(?:ROOT\s+)?%([\w.\-]+)\s*=\s*(\([^=]*?\)|[\w\[\],{}:]+?)\s+([\w\-]+)\((.*)$"
)
_SHAPE = re.compile(r"^[a-z]+\d*\[([0-9,]*)\]")
_REGION = re.compile(r"\b(?:to_apply|select|scatter|comparator)=%([\w.\-]+)")
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


def hlo_cost(text: str) -> HloCost:
    """Each instruction line's cost times the loop trips around it, their sum, and XLA's own sum
    (every instruction once); the regions of reduces are priced through them."""
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
    return HloCost(by_line, total, once, unknown)


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
        rhs = shapes.get(operands[1], ())
        return Cost(2.0 * out * max(math.prod(rhs) // max(rhs[-1] if rhs else 1, 1), 1))
    return Cost()


def per_equation(cost: HloCost, exact: dict[int, list[str]]) -> tuple[dict[str, Cost], Cost]:
    """Each equation's share of the instructions it made (an instruction several equations made,
    fused or merged, is split evenly among them), and what no equation claims."""
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


def compiled_rows(found: list[CostRow], text: str, exact: dict[int, list[str]]) -> tuple[list[CostRow], Cost, HloCost]:
    """`found` (the per-primitive rows) with FLOPs and transcendentals from the compiled program
    instead (each counted as XLA ran it, in its fusions, and as often as it ran: a loop body times
    its trip count), the bytes kept unfused; what no equation made; and the compiled program's cost."""
    cost = hlo_cost(text)
    shares, unclaimed = per_equation(cost, exact)
    out = [
        CostRow(r.path, r.node, Cost(s.flops, s.transcendentals, r.cost.bytes), 1.0, r.note)
        for r in found
        for s in (shares.get(r.path, Cost()),)
    ]
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
