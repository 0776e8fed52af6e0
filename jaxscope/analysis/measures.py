"""The measures a drawing can be coloured by, in one table: what each is called, what its scale
says, and what it needs (the graph alone, or a profiled run of the compiled program). The CLI's
`--overlay` choices, the Cost pane's list and the scales' captions are read from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxscope.analysis.cost import CostRow, rows
from jaxscope.analysis.device_time import bound, busy_share
from jaxscope.analysis.hlo_cost import op_seconds
from jaxscope.analysis.liveness import Liveness, liveness
from jaxscope.ir import hlo_marks
from jaxscope.schema.graph import Graph
from jaxscope.schema.hlo import HloResult


@dataclass(frozen=True, slots=True)
class Measure:
    name: str  # "flops"
    title: str  # "FLOPs": in a list of measures
    caption: str  # what the scale's values are
    needs: str = "graph"  # "graph": the trace alone; "profile": the compiled program run under the profiler


MEASURES: dict[str, Measure] = {
    m.name: m
    for m in (
        Measure("flops", "FLOPs", "FLOPs and transcendentals per equation (per primitive)"),
        Measure("bytes", "bytes moved", "bytes read and written per equation (unfused)"),
        Measure("memory", "memory in use", "bytes in use while each top-level equation runs"),
        Measure("time", "measured time", "measured seconds per run, per equation", needs="profile"),
    )
}
FROM_GRAPH = tuple(name for name, m in MEASURES.items() if m.needs == "graph")  # what a trace alone colours by
PROFILE_RUNS = 5  # the compiled program's runs under the profiler that "time" takes the median of


def measure(graph: Graph, name: str) -> dict[str, float]:
    """Each equation's value on a measure the graph alone gives (`FROM_GRAPH`), by path (dead and
    folded ones: 0)."""
    if name not in FROM_GRAPH:
        raise ValueError(f"unknown measure {name!r} of a graph alone: one of {', '.join(FROM_GRAPH)}")
    return measured(name, rows(graph) if name != "memory" else [], liveness(graph) if name == "memory" else None)


def measured(name: str, found: list[CostRow], live: Liveness | None) -> dict[str, float]:
    """`measure` from figures at hand: `rows` for "flops" and "bytes", the liveness for "memory"."""
    if name == "memory":
        assert live is not None
        return dict(zip(live.order, map(float, live.in_use)))
    return {r.path: (r.cost.flops + r.cost.transcendentals if name == "flops" else r.cost.bytes) for r in found}


def timed(compiled: HloResult) -> tuple[dict[str, float], str]:
    """The "time" measure of a compiled program run under the profiler (`HloRequest.profile`): each
    equation's seconds per run (a fusion's shared among what it fused), and the scale's caption
    with how much of the run the device (on the CPU: XLA's ops) was busy. ValueError says why there is none."""
    if compiled.exact is None:
        raise ValueError("measured time needs the compiled program's exact links, which this JAX does not give")
    values, seen = op_seconds(compiled.text, compiled.op_times, hlo_marks.from_wire(compiled.exact))
    if seen <= 0:
        raise ValueError("this backend's profile names none of the program's instructions (no per-op times)")
    share = busy_share(compiled, seen)
    where = f" on {compiled.device_kind or compiled.device}, device busy" if compiled.plane else ", XLA ops busy"
    return values, f"{MEASURES['time'].caption}{where} {100 * share:.1f} % of {1e3 * compiled.run_s:.3g} ms ({bound(share)})"
