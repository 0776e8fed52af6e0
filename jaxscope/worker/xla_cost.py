"""The compiled program priced by XLA's own cost model, instruction by instruction (issue 57).

XLA's `cost_analysis()` gives one total; jaxscope needs each instruction's share, to hand it to the
equations that made it. Rather than a second, hand-written copy of XLA's rules (which went wrong
on TPU layouts, padded convolutions, fusions without metadata), each instruction is priced by XLA
itself: the text is read by XLA's parser (`hlo_module_from_text`: any backend's layouts, tiles and
memory spaces), and every instruction of the computations that run as such (the entry, loop bodies
and conditions, branches, called computations) is made into a module of its own, its operands
turned into parameters and the computations it calls (a fusion's body, a reduction's region)
copied along, and priced with `hlo_module_cost_analysis`: XLA's per-instruction figure, exactly as
it counts that instruction inside the program (its FLOPs, transcendentals and bytes accessed).

The figures come back by the line of the instruction in the text (the text jaxscope shows), with
how often each computation runs per run of the program (a loop body its `known_trip_count`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jaxscope.schema.hlo import InstructionCosts
from jaxscope.worker import jax_compat as jc

# instructions that cost nothing of their own here: data plumbing, or control flow priced through
# the computations it runs (XLA's own analysis adds those computations' instructions)
_FREE = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "bitcast", "while", "conditional", "call", "after-all"})
_ASYNC_TAIL = ("-done", "-update")  # the end of an async pair (`slice-done`): its `-start` holds the work
_CONTROL = frozenset({"while", "conditional", "call"})  # they run the computations they call as such
_CALLS = (
    "calls", "to_apply", "body", "condition", "branch_computations", "true_computation", "false_computation",
    "scatter", "select", "comparator", "called_computations",
)  # fmt: skip
MAX_INSTRUCTIONS = 50_000  # a program of more is priced whole only (its per-instruction figures are left out)


@dataclass
class Priced:
    """XLA's figures per instruction line (flops, transcendentals, bytes accessed), how often each
    line's computation runs per run, and what could not be priced (with why)."""

    by_line: dict[int, tuple[float, float, float]] = field(default_factory=dict)
    runs: dict[int, float] = field(default_factory=dict)  # line -> runs of its computation per program run
    opcodes: dict[int, str] = field(default_factory=dict)
    edges: list[tuple[int, int]] = field(default_factory=list)  # (operand line, user line)
    unknown_trips: int = 0  # while loops whose trip count XLA did not know (their bodies counted once)
    failures: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Instr:
    line: int
    name: str
    shape: str
    opcode: str
    operands: tuple[str, ...]
    text: str  # the instruction as printed, without its metadata
    calls: tuple[str, ...]  # computations it calls
    trips: float | None  # a while loop's known trip count
    root: bool = False


def price(text: str, client: Any, loop_trips: Mapping[int, float] | None = None) -> Priced:
    """XLA's per-instruction figures for the compiled HLO `text`, by the cost model of `client`'s
    backend (see the module docstring); `loop_trips`: the trip count JAX gave the while loop on a
    line (a scan's length) where XLA's text gives none (a TPU's compiled scans carry none)."""
    out = Priced()
    blocks, entry = _computations(text)
    if not entry:
        out.failures.append("no ENTRY computation in the text")
        return out
    runs = _runs(blocks, entry, out, loop_trips or {})
    if sum(len(blocks[c]) for c in runs) > MAX_INSTRUCTIONS:
        out.failures.append(f"more than {MAX_INSTRUCTIONS:,} instructions: priced whole only")
        return out
    shapes = {i.name: i.shape for instrs in blocks.values() for i in instrs}
    cache: dict[str, tuple[float, float, float]] = {}
    lines = {i.name: i.line for instrs in blocks.values() for i in instrs}
    for comp, times in runs.items():
        for ins in blocks[comp]:
            out.edges += [(lines[o], ins.line) for o in ins.operands if lines.get(o) and ins.line]
            if ins.opcode in _FREE or ins.opcode.endswith(_ASYNC_TAIL):
                continue
            try:
                module = _one_instruction(ins, shapes, blocks)
                if module not in cache:
                    cache[module] = _figures(jc.hlo_cost(module, client))
                out.by_line[ins.line] = cache[module]
                out.runs[ins.line] = times
                out.opcodes[ins.line] = ins.opcode
            except Exception as exc:  # XLA refused the module: said, not guessed
                if len(out.failures) < 20:
                    out.failures.append(f"line {ins.line} ({ins.opcode}): {type(exc).__name__}: {str(exc)[:160]}")
    return out


def instruction_costs(text: str, device: Any, loop_trips: Mapping[int, float] | None = None) -> InstructionCosts:
    """`price` as plain data for an HloResult: the rows by line, the backend that priced them.

    A backend whose plugin prices no single instruction (a TPU's PJRT C API: "does not support
    GetHloCostAnalysis") has the text priced by XLA's CPU cost model instead, which counts the same
    FLOPs from the same shapes (on a TPU v5e: the sum within 1e-6 of the TPU's `cost_analysis()`):
    `InstructionCosts.model` says so."""
    try:
        priced = price(text, device.client, loop_trips)
        model = ""
        if not priced.by_line and any("GetHloCostAnalysis" in f for f in priced.failures) and device.platform != "cpu":
            import jax

            priced, model = price(text, jax.devices("cpu")[0].client, loop_trips), "cpu"
    except Exception as exc:  # a text XLA's parser refuses (a JAX whose printer moved on): said, not guessed
        return InstructionCosts(backend=str(device.platform), failures=(f"{type(exc).__name__}: {str(exc)[:200]}",))
    lines = sorted(priced.by_line)
    rows = tuple((line, *priced.by_line[line], priced.runs.get(line, 1.0)) for line in lines)
    opcodes = tuple(priced.opcodes.get(line, "") for line in lines)
    platform = str(device.platform)
    return InstructionCosts(rows, opcodes, tuple(priced.edges), platform, priced.unknown_trips, tuple(priced.failures), model)


def _figures(cost: dict[str, float]) -> tuple[float, float, float]:
    return float(cost.get("flops", 0.0)), float(cost.get("transcendentals", 0.0)), float(cost.get("bytes accessed", 0.0))


def _runs(blocks: dict[str, list[_Instr]], entry: str, out: Priced, loop_trips: Mapping[int, float]) -> dict[str, float]:
    """How often each computation that runs as such runs per run of the program: the entry once,
    a while loop's body and condition its trip count times its caller's, a branch or a called
    computation as its caller (fusion bodies and regions are priced with the instruction calling them)."""
    runs: dict[str, float] = {entry: 1.0}
    stack = [entry]
    while stack:
        comp = stack.pop()
        for ins in blocks.get(comp, []):
            if ins.opcode not in _CONTROL:
                continue
            factor = 1.0
            if ins.opcode == "while":
                trips = ins.trips if ins.trips is not None else loop_trips.get(ins.line)
                factor = trips if trips is not None else 1.0
                out.unknown_trips += trips is None
            for callee in ins.calls:
                if callee in blocks:
                    runs[callee] = runs.get(callee, 0.0) + runs[comp] * factor
                    stack.append(callee)
    return runs


def _one_instruction(ins: _Instr, shapes: dict[str, str], blocks: dict[str, list[_Instr]]) -> str:
    """A module whose entry computes `ins` alone on parameters of its operands' shapes, with every
    computation it calls (and they call) copied along."""
    params = [f"  %jaxscope.p{k} = {shapes[name]} parameter({k})" for k, name in enumerate(ins.operands)]
    renamed = _rename_operands(ins.text, ins.opcode, len(ins.operands))
    called: list[str] = []
    todo = list(ins.calls)
    while todo:
        name = todo.pop()
        if name in called or name not in blocks:
            continue
        called.append(name)
        todo.extend(c for i in blocks[name] for c in i.calls)
    bodies = [_block_text(name, blocks[name]) for name in reversed(called)]
    entry = "\n".join(["ENTRY %jaxscope.entry {", *params, f"  ROOT {renamed}", "}"])
    return "\n\n".join(["HloModule jaxscope_one", *bodies, entry]) + "\n"


def _block_text(name: str, instrs: list[_Instr]) -> str:
    lines = [f"%{name} {{"]
    for ins in instrs:
        lines.append(("  ROOT " if ins.root else "  ") + ins.text)
    return "\n".join([*lines, "}"])


def _rename_operands(text: str, opcode: str, count: int) -> str:
    """`text` with its operand list's names replaced by the parameters' (in order)."""
    head, _, rest = text.partition(f" {opcode}(")
    args, tail = _balanced(rest)
    parts = _split_top(args)
    if len(parts) != count:
        raise ValueError(f"{len(parts)} operands printed, {count} read")
    new = ", ".join(_replace_name(p, f"%jaxscope.p{k}") for k, p in enumerate(parts))
    return f"{head} {opcode}({new}){tail}"


def _replace_name(operand: str, new: str) -> str:
    at = operand.rfind("%")
    return operand[:at] + new if at >= 0 else new


def _balanced(rest: str) -> tuple[str, str]:
    """(the text up to the `)` closing an already-open `(`, what follows it)."""
    depth = 1
    for k, ch in enumerate(rest):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0:
            return rest[:k], rest[k + 1 :]
    raise ValueError("unbalanced operand list")


def _split_top(args: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(args):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(args[start:k].strip())
            start = k + 1
    last = args[start:].strip()
    return [*parts, last] if last or parts else []


def _computations(text: str) -> tuple[dict[str, list[_Instr]], str]:
    """Each computation's instructions (read through XLA's parser: the module must parse) and the
    entry's name; each instruction with its line in `text`."""
    module = jc.hlo_module_from_text(text)
    lines: dict[str, int] = {}
    roots: set[str] = set()
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        body = stripped.removeprefix("ROOT ")
        if body.startswith("%") and " = " in body:
            name = body[1:].split(" = ", 1)[0]
            lines.setdefault(name, number)
            if body is not stripped:
                roots.add(name)
    blocks: dict[str, list[_Instr]] = {}
    for comp in module.computations():
        blocks[comp.name] = [_read(i, lines, roots) for i in comp.instructions()]
    entry = next((line.split()[1].lstrip("%") for line in text.split("\n") if line.startswith("ENTRY ")), "")
    return blocks, entry


def _read(ins: Any, lines: dict[str, int], roots: set[str]) -> _Instr:
    text = _without_metadata(ins.to_string())
    name, _, rest = text.partition(" = ")
    shape, opcode = _shape_and_opcode(rest)
    calls: list[str] = []
    for key in _CALLS:
        for value in _attribute(rest, key):
            calls.extend(v.strip().lstrip("%") for v in value.strip("{}").split(",") if v.strip())
    trips = None
    config = "".join(_attribute(rest, "backend_config"))
    if '"known_trip_count"' in config:
        digits = config.split('"known_trip_count"', 1)[1].split('"n":"', 1)[-1].split('"', 1)[0]
        trips = float(digits) if digits.isdigit() else None
    operands = tuple(o.name for o in ins.operands())
    bare = name.lstrip("%")
    return _Instr(lines.get(bare, 0), bare, shape, opcode, operands, text, tuple(calls), trips, bare in roots)


def _shape_and_opcode(rest: str) -> tuple[str, str]:
    """`f32[4,4]{1,0} dot(...)` -> (`f32[4,4]{1,0}`, `dot`); a tuple shape `(f32[2], s32[])` whole."""
    if rest.startswith("("):
        inner, after = _balanced(rest[1:])
        shape, after = f"({inner})", after.lstrip()
    else:
        shape, _, after = rest.partition(" ")
    return shape, after.split("(", 1)[0]


def _attribute(rest: str, key: str) -> list[str]:
    """The values of `key=` attributes in an instruction's text (a `{...}` value whole)."""
    found, at = [], 0
    while (at := rest.find(f", {key}=", at)) >= 0:
        start = at + len(key) + 3
        if rest[start : start + 1] == "{":
            value, _ = _balanced(rest[start + 1 :])
            found.append("{" + value + "}")
        else:
            end = rest.find(",", start)
            found.append(rest[start : end if end >= 0 else len(rest)])
        at = start
    return found


def _without_metadata(text: str) -> str:
    """The instruction without what only the whole module means: its metadata (stack frame ids into
    the module's tables) and its control predecessors (instructions of its computation)."""
    for key in (", metadata={", ", control-predecessors={"):
        at = text.find(key)
        if at >= 0:
            _, tail = _balanced(text[at + len(key) :])
            text = text[:at] + tail
    return text
