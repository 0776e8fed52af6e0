"""The program's memory as the jaxpr sees it: which values are alive after each top-level equation,
run in program order. The inputs are alive from the start, a value from the equation that makes
it until its last reader, an output to the end; a higher-order equation (a scan, a jit) is one
step whose outputs appear at once (what its body holds meanwhile is not counted); the arguments
stay alive throughout, as the caller holds them (nothing is donated). XLA's own
figures (`memory_analysis()`: arguments, outputs, temporaries) come from the compiled program,
which fuses, reuses and donates buffers: this is what the program asks for, before that."""

from __future__ import annotations

from dataclasses import dataclass

from jaxscope.analysis.avals import aval_bytes
from jaxscope.analysis.scopes import read_scope
from jaxscope.schema.graph import Graph

Value = tuple[str, int]  # (producing node id, output port)


@dataclass(frozen=True, slots=True)
class Liveness:
    order: list[str]  # the top-level equations, in program order
    in_use: list[int]  # bytes in use while each runs: what is alive, what it reads and what it makes
    start: int  # bytes alive before the first: the arguments (and captured constants)
    peak: int
    peak_at: int  # index into `order` (-1: the inputs alone are the peak)
    alive_at_peak: list[tuple[Value, int]]  # the values alive then, with their bytes, biggest first
    residuals: list[tuple[Value, int]]  # values a forward-pass equation makes and a backward-pass one reads

    @property
    def residual_bytes(self) -> int:
        return sum(size for _, size in self.residuals)


def liveness(graph: Graph) -> Liveness:
    top = graph.top
    nodes = {n.id: n for n in top.nodes}
    eqns = [n for n in top.nodes if n.kind == "eqn"]
    index = {n.id: i for i, n in enumerate(eqns)}
    end = len(eqns)
    size: dict[Value, int] = {}
    last: dict[Value, int] = {}  # the index of a value's last reader (end: an output)
    readers: dict[Value, list[str]] = {}
    for n in top.nodes:
        if n.kind == "input" and n.avals:  # an argument: the caller holds it for the whole call
            size[(n.id, 0)], last[(n.id, 0)] = aval_bytes(n.avals[0]) or 0, end
    pass_of = {stack: read_scope(stack).pass_ for stack in {n.name_stack for n in eqns}}
    passes = {n.id: pass_of[n.name_stack] for n in eqns}
    held = {n.id for n in top.nodes if n.kind in ("eqn", "input", "const")}
    for e in top.edges:
        if e.src not in held:
            continue
        value = (e.src, e.src_port)
        if value not in size:
            src = nodes[e.src]
            aval = e.aval or (src.avals[e.src_port] if e.src_port < len(src.avals) else "")
            size[value] = aval_bytes(aval) or 0
        at = index.get(e.dst, end)  # an output (or anything not an equation) reads it at the end
        if at > last.get(value, -1):
            last[value] = at
        if passes.get(e.src) == "forward":  # who reads a forward value: is it a residual?
            readers.setdefault(value, []).append(e.dst)
    made_at = {v: (index[v[0]] if v[0] in index else -1) for v in size}
    born: dict[int, int] = {}
    died: dict[int, int] = {}
    start = 0
    for value, nbytes in size.items():
        i = made_at[value]
        if i < 0:
            start += nbytes
        else:
            born[i] = born.get(i, 0) + nbytes
        if i >= 0 and last[value] < end:  # freed once its last reader ran (never before it is made)
            j = max(last[value], i)
            died[j] = died.get(j, 0) + nbytes
    live, curve = start, []
    for i in range(end):
        live += born.get(i, 0)
        peak_here = live  # its outputs and inputs together, before the inputs it read last are freed
        live -= died.get(i, 0)
        curve.append(peak_here)
    peak, peak_at = start, -1
    for i, v in enumerate(curve):
        if v > peak:
            peak, peak_at = v, i
    alive = sorted(
        ((v, s) for v, s in size.items() if made_at[v] <= peak_at and (last[v] >= peak_at or last[v] == end)), key=lambda vs: -vs[1]
    )
    residuals = [
        (v, s) for v, s in size.items() if passes.get(v[0]) == "forward" and any(passes.get(r) == "backward" for r in readers.get(v, ()))
    ]
    return Liveness([n.id for n in eqns], curve, start, peak, peak_at, alive, residuals)
