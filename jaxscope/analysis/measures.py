"""The measures a drawing can be coloured by, in one table: what each is called, what its scale
says, and what it needs (the graph alone, or a profiled run of the compiled program). The CLI's
`--overlay` choices, the Cost pane's list and the scales' captions are read from here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from jaxscope.analysis.cost import CostRow, rows
from jaxscope.analysis.device_time import bound, busy_share
from jaxscope.analysis.hlo_cost import op_seconds
from jaxscope.analysis.liveness import Liveness, liveness
from jaxscope.ir import hlo_marks
from jaxscope.schema.graph import Graph
from jaxscope.schema.hlo import HloResult

Needs = Literal["graph", "profile"]  # the trace alone; the compiled program run under the profiler
PROFILE_RUNS = 5  # the compiled program's runs under the profiler that "time" takes the median of


@dataclass
class MeasureData:
    """What a measure's values are read from: the graph's cost rows and liveness (each made when
    first read, or given as the caller has them) or a profiled compiled run."""

    graph: Graph | None = None
    compiled: HloResult | None = None  # (run with `HloRequest.profile`)
    found: list[CostRow] | None = None
    live: Liveness | None = None

    def cost_rows(self) -> list[CostRow]:
        if self.found is None:
            assert self.graph is not None, "a measure of the graph needs the graph"
            self.found = rows(self.graph)
        return self.found

    def liveness(self) -> Liveness:
        if self.live is None:
            assert self.graph is not None, "a measure of the graph needs the graph"
            self.live = liveness(self.graph)
        return self.live


# A measure's values by (program) path and its scale's caption; ValueError says why there are none.
Values = Callable[[MeasureData], tuple[dict[str, float], str]]


@dataclass(frozen=True, slots=True)
class Measure:
    name: str  # "flops"
    title: str  # "FLOPs": in a list of measures
    caption: str  # what the scale's values are
    values: Values
    needs: Needs = "graph"


def _flops(data: MeasureData) -> tuple[dict[str, float], str]:
    return {r.path: r.cost.flops + r.cost.transcendentals for r in data.cost_rows()}, MEASURES["flops"].caption


def _bytes(data: MeasureData) -> tuple[dict[str, float], str]:
    return {r.path: r.cost.bytes for r in data.cost_rows()}, MEASURES["bytes"].caption


def _memory(data: MeasureData) -> tuple[dict[str, float], str]:
    live = data.liveness()
    return dict(zip(live.order, map(float, live.in_use))), MEASURES["memory"].caption


def _time(data: MeasureData) -> tuple[dict[str, float], str]:
    """Each equation's seconds per run of a compiled program run under the profiler (a fusion's
    shared among what it fused), and the scale's caption with how much of the run the device (on
    the CPU: XLA's ops) was busy."""
    compiled = data.compiled
    if compiled is None or compiled.run_s <= 0:
        raise ValueError("measured time needs the compiled program run under the profiler")
    if compiled.exact is None:
        raise ValueError("measured time needs the compiled program's exact links, which this JAX does not give")
    values, seen = op_seconds(compiled.text, compiled.op_times, hlo_marks.from_wire(compiled.exact))
    if seen <= 0:
        raise ValueError("this backend's profile names none of the program's instructions (no per-op times)")
    share = busy_share(compiled, seen)
    where = f" on {compiled.device_kind or compiled.device}, device busy" if compiled.plane else ", XLA ops busy"
    return values, f"{MEASURES['time'].caption}{where} {100 * share:.1f} % of {1e3 * compiled.run_s:.3g} ms ({bound(share)})"


# Adding a measure is one entry: its values function says how it is read, `needs` what it takes.
MEASURES: dict[str, Measure] = {
    m.name: m
    for m in (
        Measure("flops", "FLOPs", "FLOPs and transcendentals per equation (per primitive)", _flops),
        Measure("bytes", "bytes moved", "bytes read and written per equation (unfused)", _bytes),
        Measure("memory", "memory in use", "bytes in use while each top-level equation runs", _memory),
        Measure("time", "measured time", "measured seconds per run, per equation", _time, needs="profile"),
    )
}


def measure(graph: Graph, name: str) -> dict[str, float]:
    """Each equation's value on a measure the graph alone gives, by path (dead and folded ones: 0)."""
    found = MEASURES.get(name)
    if found is None or found.needs != "graph":
        raise ValueError(
            f"unknown measure {name!r} of a graph alone: one of {', '.join(n for n, m in MEASURES.items() if m.needs == 'graph')}"
        )
    return found.values(MeasureData(graph))[0]
