"""`jaxscope cost`: where a program's FLOPs, bytes and memory go, per equation, source line, scope
(module and pass) or XLA fusion, beside XLA's own totals for the compiled program."""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jaxscope.cli.common import CliError, TargetOptions, add_target

if TYPE_CHECKING:
    from jaxscope.analysis.cost import Cost, CostRow
    from jaxscope.analysis.hlo_cost import HloCost
    from jaxscope.analysis.liveness import Liveness
    from jaxscope.schema.graph import Graph
    from jaxscope.schema.hlo import HloResult

BY = ("equation", "line", "scope", "primitive", "fusion")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "cost",
        help="where the FLOPs, bytes and memory of a function go: per equation, line, scope or fusion, with totals",
        description="FLOPs, transcendentals and bytes of every equation, computed from its primitive and shapes (as "
        "XLA's cost analysis counts an unfused op), summed per row; the memory the program's values hold, equation "
        "by equation (peak, and what is alive there); beside XLA's cost and memory analysis of the compiled program.",
    )
    add_target(p)
    p.add_argument(
        "--by",
        choices=BY,
        default="scope",
        help="the rows: equations, source lines, scopes (module and pass), primitives, or XLA's fusions (compiles the program)",
    )
    p.add_argument("--depth", type=int, default=0, metavar="N", help="with --by scope: the first N levels of the scope only")
    p.add_argument("--top", type=int, default=25, metavar="N", help="the N costliest rows (0: all)")
    p.add_argument("--no-xla", action="store_true", help="skip compiling for XLA's own figures")
    p.add_argument(
        "--time",
        action="store_true",
        help="also run the compiled program 5 times under the profiler: each row's measured time and FLOP/s, and how much of "
        "the step the device was busy (on an accelerator, from its own clocks)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")


@dataclass(frozen=True)
class _Figures:
    """What `cost` prints, as JSON or tables: the rows by `--by`, the totals, memory and XLA's own."""

    graph: Graph
    found: list[CostRow]  # per equation (the compiled program's figures where XLA priced it)
    model: Cost  # per primitive, from each equation's shapes
    total: Cost
    live: Liveness
    xla: HloResult | None
    unclaimed: Cost | None  # XLA's own instructions (None: no compiled figures)
    compiled: HloCost | None
    rows: list[tuple[str, Cost]]  # sorted: the dearest first
    seconds: dict[str, float]  # row -> measured seconds per run (--time)
    seen: float  # the measured share of the step (--time)

    @property
    def notes(self) -> list[str]:
        return sorted({r.note for r in self.found if r.note})


def run(opts: argparse.Namespace) -> int:
    if opts.by == "fusion" and opts.no_xla:
        raise CliError("--by fusion needs the compiled program: drop --no-xla")
    figures = _figures(opts)
    if opts.json:
        json.dump(_json(figures, opts), sys.stdout)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n".join(_text(figures, opts)) + "\n")
    return 0


def _figures(opts: argparse.Namespace) -> _Figures:
    from jaxscope.analysis import cost as costs
    from jaxscope.analysis.liveness import liveness
    from jaxscope.analysis.measures import PROFILE_RUNS

    target = TargetOptions.of(opts)
    result = target.trace(jaxpr_text=False, diagnose=False)
    graph = result.graph
    found = costs.rows(graph)
    model = total = costs.total(graph, found)
    live = liveness(graph)
    if opts.time and opts.no_xla:
        raise CliError("--time measures the compiled program: drop --no-xla")
    xla = None if opts.no_xla else _compiled(target, PROFILE_RUNS if opts.time else 0)
    unclaimed = compiled = None
    if xla is not None and xla.exact is not None:  # per instruction of the compiled program, as XLA counts
        from jaxscope.analysis.hlo_cost import compiled_rows
        from jaxscope.ir import hlo_marks

        found, unclaimed, compiled = compiled_rows(found, xla.text, hlo_marks.from_wire(xla.exact), xla.priced, graph)
        total = costs.Cost(compiled.total.flops, compiled.total.transcendentals, model.bytes)
    table = _table(found, opts, xla, graph)
    seconds: dict[str, float] = {}
    seen = 0.0
    if opts.time and xla is not None and xla.exact is not None:
        from jaxscope.analysis.hlo_cost import op_seconds
        from jaxscope.ir import hlo_marks

        per_path, seen = op_seconds(xla.text, xla.op_times, hlo_marks.from_wire(xla.exact))
        clocked = [costs.CostRow(r.path, r.node, costs.Cost(per_path.get(r.path, 0.0)), 1.0, r.note) for r in found]
        seconds = {k: c.flops for k, c in _table(clocked, opts, xla, graph, xla.op_times).items()}
    if unclaimed is not None and opts.by != "fusion" and (unclaimed.flops or unclaimed.transcendentals):
        table["(XLA's own instructions: no equation made them)"] = unclaimed
    rows = sorted(table.items(), key=lambda kv: (-seconds.get(kv[0], 0.0), -(kv[1].flops + kv[1].transcendentals), -kv[1].bytes, kv[0]))
    return _Figures(graph, found, model, total, live, xla, unclaimed, compiled, rows, seconds, seen)


def _json(f: _Figures, opts: argparse.Namespace) -> dict[str, Any]:
    """The figures as one JSON object (`cost --json`)."""
    live, total, model, xla = f.live, f.total, f.model, f.xla
    return {
        "by": opts.by,
        "rows": [
            {
                "name": k,
                "flops": c.flops,
                "transcendentals": c.transcendentals,
                "bytes": c.bytes,
                **({"seconds": f.seconds.get(k, 0.0)} if opts.time else {}),
                **({"flops_per_s": c.flops / f.seconds[k]} if f.seconds.get(k, 0.0) > 0 else {}),
            }
            for k, c in f.rows
        ],
        "total": {"flops": total.flops, "transcendentals": total.transcendentals, "bytes": total.bytes},
        "source": "compiled" if f.unclaimed is not None else "primitive",
        "per_primitive": {"flops": model.flops, "transcendentals": model.transcendentals, "bytes": model.bytes},
        "memory": {
            "peak_live_bytes": live.peak,
            "peak_after": _peak_where(f.graph, live.order, live.peak_at),
            "argument_bytes": live.start,
            "in_use": live.in_use,
            "order": live.order,
            "residual_bytes": live.residual_bytes,
            "residuals": len(live.residuals),
        },
        "xla": {"cost": xla.cost, "lowered_cost": xla.lowered_cost, "memory": xla.memory} if xla is not None else None,
        "notes": f.notes,
        "time": _time_json(xla, f.seen) if opts.time and xla is not None else None,
    }


def _text(f: _Figures, opts: argparse.Namespace) -> list[str]:
    """The figures as tables: the rows asked for, then the totals, memory and XLA's own figures."""
    from jaxscope.analysis.device_time import achieved

    shown = f.rows[: opts.top] if opts.top > 0 else f.rows
    width = max((len(k) for k, _ in shown), default=10)
    width = min(max(width, len(opts.by)), 90)
    grand = (f.total.flops + f.total.transcendentals) or 1.0
    kind = f.xla.device_kind if f.xla is not None else ""
    lines = [
        f"{opts.by:<{width}}  {'flops':>10}  {'transc.':>9}  {'bytes':>10}  {'share':>6}"
        + ("  time (ms/run)  achieved" if opts.time else "")
    ]
    for name, c in shown:
        share = 100.0 * (c.flops + c.transcendentals) / grand
        spent = f.seconds.get(name, 0.0)
        timed = f"  {1e3 * spent:>13.3f}  {achieved(c.flops, spent, kind)}".rstrip() if opts.time else ""
        figures = f"{_n(c.flops):>10}  {_n(c.transcendentals):>9}  {_n(c.bytes):>10}  {share:5.1f}%{timed}"
        lines.append(f"{elided(name, width):<{width}}  {figures}")
    if len(shown) < len(f.rows):
        lines.append(f"... {len(f.rows) - len(shown)} more rows (--top 0 for all)")
    return lines + _totals(f, opts.time)


def _totals(f: _Figures, timed: bool) -> list[str]:
    """The lines under the table: totals, the memory peak and what is alive there, XLA's figures."""
    from jaxscope.analysis.device_time import busy_line, peak_flops, rate
    from jaxscope.analysis.measures import PROFILE_RUNS

    graph, live, total, model, xla, compiled = f.graph, f.live, f.total, f.model, f.xla, f.compiled
    lines = [
        "",
        f"total flops: {total.flops:.0f}" + _mesh_note(xla, total.flops, compiled is not None),
        f"total transcendentals: {total.transcendentals:.0f}",
        f"bytes accessed (every equation unfused): {total.bytes:.0f}",
        _flops_line(xla, compiled, model) if compiled is not None else NO_COMPILED_LINE,
        f"peak live bytes: {live.peak}",
        f"  at: {_peak_where(graph, live.order, live.peak_at)}; arguments {live.start} bytes, held throughout",
        f"  alive there: {_alive(graph, live.alive_at_peak)}",
        f"  by scope: {_alive_by(graph, live.alive_at_peak, 'scope')}",
        f"  by line: {_alive_by(graph, live.alive_at_peak, 'line')}",
    ]
    if live.residuals:
        lines.append(f"residuals (forward values the backward pass reads): {len(live.residuals)} values, {live.residual_bytes} bytes")
    if xla is not None and xla.memory:
        lines.append(_memory_line(xla, live.peak))
    if xla is not None:
        lines.append(_xla_line(xla, total, model))
        if compiled is not None and compiled.once.flops != compiled.total.flops:
            lines.append(
                f"  XLA's cost analysis counts a loop body once; counted as often as it runs: {total.flops:.0f} flops"
                f" ({total.flops / (compiled.once.flops or 1):.1f}x XLA's {compiled.once.flops:.0f})"
            )
        if compiled is not None and compiled.uncounted:
            lines.append(f"  {compiled.uncounted} while loop(s) of unknown trip count: their bodies counted once")
    lines += [f"note: {sum(r.note == n for r in f.found)} equations {_note(n, compiled is not None)}" for n in f.notes]
    if timed and xla is not None:
        lines.append(busy_line(xla, f.seen, PROFILE_RUNS))
        kind = xla.device_kind
        if xla.plane and peak_flops(kind):
            peak = rate(peak_flops(kind))
            lines.append(f"achieved: a row's compiled FLOPs over its measured time, against the {kind}'s dense bf16 peak of {peak}")
    return lines


def _compiled(target: TargetOptions, profile: int) -> HloResult:
    from jaxscope.stages import lower

    return lower(target.stage(), "compiled", profile)


def _table(
    found: list[CostRow], opts: argparse.Namespace, xla: HloResult | None, graph: Graph, op_times: dict[str, float] | None = None
) -> dict[str, Cost]:
    """The rows of the --by asked for (with `op_times`, a fusion's measured seconds in `flops`)."""
    from jaxscope.analysis import cost as costs

    if opts.by == "fusion":
        assert xla is not None
        return _by_fusion(found, xla, op_times)
    if opts.by == "equation":
        return {f"{r.path} {r.node.label}" + (f" ×{r.runs:g}" if r.runs != 1 else ""): r.cost for r in found}
    return costs.by_key(found, opts.by, opts.depth, graph)


NO_COMPILED_LINE = "flops: per primitive, from each equation's shapes (--no-xla, or no exact links)"


def _note(note: str, compiled: bool) -> str:
    """A row note as it holds for the figures shown: with the compiled program's prices a while
    loop's equations are counted as often as XLA's known trip count says, not once."""
    if compiled and note == "in a while loop: counted once":
        return "in a while loop: counted as often as it runs (XLA's known trip count) in the compiled figures"
    return note


def _mesh_note(xla: HloResult | None, flops: float, compiled: bool) -> str:
    """`(per device, of 4: 8708 over the mesh)` for a partitioned program's compiled count."""
    devices = _partitions(xla) if xla is not None and compiled else 1
    return f" (per device, of {devices}: {flops * devices:.0f} over the mesh)" if devices > 1 else ""


def _flops_line(xla: HloResult | None, compiled: HloCost, model: Cost) -> str:
    """Whose prices the compiled program's FLOPs are, and how they are counted."""
    priced = xla.priced if xla is not None else None
    whose = (
        f"priced by XLA's cost model ({priced.backend}) instruction by instruction"
        if compiled.source == "xla" and priced is not None and not priced.model
        else f"priced by XLA's {priced.model} cost model instruction by instruction (the {priced.backend} plugin prices whole "
        f"programs only; the same FLOPs from the same shapes: compare XLA compiled below)"
        if compiled.source == "xla" and priced is not None
        else "counted by jaxscope's rules over the text (this compiled text was saved without XLA's prices; convolutions "
        "with windows left out)"
    )
    failed = f"; {len(priced.failures)} instruction(s) XLA would not price alone" if priced is not None and priced.failures else ""
    return (
        f"flops: per instruction of the compiled program, {whose}, each as often as it runs (a loop body times its trip count),"
        f" shared among the equations that made each{failed}; per primitive, before XLA: {model.flops:.0f}"
    )


def _time_json(xla: HloResult, seen: float) -> dict[str, Any]:
    """The profile's figures: the run's wall time, the instructions' time, and the device's busy share."""
    from jaxscope.analysis.device_time import busy_share, peak_flops

    return {
        "run_s": xla.run_s,
        "per_op_s": seen,
        "device": xla.device,
        "device_kind": xla.device_kind,
        "plane": xla.plane,
        "device_busy_s": xla.device_s,
        "busy_share": busy_share(xla, seen),
        "peak_flops_per_s": peak_flops(xla.device_kind) or None,
    }


def _memory_line(xla: HloResult, peak: int) -> str:
    """XLA's memory analysis of the compiled program beside the jaxpr's liveness: what the device
    holds (HBM on an accelerator) for its arguments, outputs, temporaries and code."""
    from jaxscope.analysis.avals import format_bytes

    where = f"{xla.device_kind or xla.device} HBM" if xla.device and not xla.device.startswith("cpu") else "host memory"
    parts = [
        f"{label} {format_bytes(int(xla.memory[key]))}"
        for key, label in (
            ("argument_size_in_bytes", "arguments"),
            ("output_size_in_bytes", "outputs"),
            ("alias_size_in_bytes", "aliased (donated)"),
            ("temp_size_in_bytes", "temporaries"),
            ("generated_code_size_in_bytes", "code"),
        )
        if key in xla.memory and (xla.memory[key] or key not in ("alias_size_in_bytes", "generated_code_size_in_bytes"))
    ]
    per = f" per device, of {_partitions(xla)}" if _partitions(xla) > 1 else ""
    return f"compiled ({where}{per}, XLA's memory analysis): " + ", ".join(parts) + f"; the jaxpr's live peak above: {format_bytes(peak)}"


def _by_fusion(found: list[CostRow], xla: HloResult, op_times: dict[str, float] | None = None) -> dict[str, Cost]:
    """Each kernel of the compiled program as XLA prices it: a fusion with the instructions in it,
    and an instruction that does work outside every fusion (a convolution, a dot) on its own, each
    with its equations (by the compiled text's exact links, or the neighbours that claim it) and
    their bytes."""
    from jaxscope.analysis.cost import Cost
    from jaxscope.analysis.hlo_cost import claimants, hlo_cost
    from jaxscope.ir import hlo_marks
    from jaxscope.ir.hlo_module import parse_hlo

    if xla.exact is None:
        raise CliError(f"no exact links for the compiled text: this JAX ({xla.jax_version}) did not lower the marked program")
    exact = claimants(xla.text, hlo_marks.from_wire(xla.exact), xla.priced)
    priced = hlo_cost(xla.text, xla.priced).by_line
    module = parse_hlo(xla.text)
    bytes_of = {r.path: r.cost.bytes for r in found}
    out: dict[str, Cost] = {}
    inside: set[int] = set()

    def row(key: str, name: str, lines: set[int]) -> None:
        paths = {p for line in lines for p in exact.get(line, ())}
        work = sum((priced[n] for n in lines if n in priced), Cost())
        moved = sum(bytes_of.get(p, 0.0) for p in paths)
        out[f"{key}, {len(paths)} eqns)"] = (
            Cost(op_times.get(name, 0.0)) if op_times is not None else Cost(work.flops, work.transcendentals, moved)
        )

    for name, fusion in module.fusions.items():
        lines = {fusion.line, *(i.line for i in fusion.instructions)}
        inside |= lines
        row(f"{name} ({fusion.kind or 'fusion'}", name, lines)
    for line, cost in priced.items():
        instr = module.instructions.get(line)
        if line not in inside and instr is not None and (cost.flops or cost.transcendentals):
            row(f"{instr.name} ({instr.opcode}", instr.name, {line})
    return out


def _peak_where(graph: Graph, order: list[str], at: int) -> str:
    if at < 0:
        return "the arguments alone"
    node = next(n for n in graph.top.nodes if n.id == order[at])
    where = f" ({node.source.file.rsplit('/', 1)[-1]}:{node.source.line})" if node.source is not None else ""
    return f"equation {at + 1} of {len(order)}, {node.id} {node.label}{where}"


def _alive(graph: Graph, alive: list[tuple[tuple[str, int], int]]) -> str:
    nodes = {n.id: n for n in graph.top.nodes}
    parts = []
    for (node_id, port), size in alive[:5]:
        n = nodes.get(node_id)
        parts.append(f"{n.label if n is not None else node_id}{f'[{port}]' if port else ''} {size} B")
    more = f" and {len(alive) - 5} more" if len(alive) > 5 else ""
    return ", ".join(parts) + more if parts else "nothing"


def elided(text: str, width: int) -> str:
    """`text` in at most `width` characters: a scope keeps its head and as much of its end as fits
    (``step.<lambda>/…/Block.__call__/Attn.__call__ · forward``): the innermost modules say which
    row it is; other text loses its middle."""
    if len(text) <= width:
        return text
    head = text.split("/", 1)[0] + "/…"
    if "/" in text and len(head) < width // 2:
        return head + text[len(text) - (width - len(head)) :]
    half = (width - 1) // 2
    return text[:half] + "…" + text[len(text) - (width - 1 - half) :]


def _alive_by(graph: Graph, alive: list[tuple[tuple[str, int], int]], key: str) -> str:
    """What is alive at the peak, summed by the scope (or line) of the equation that made each value."""
    from jaxscope.analysis.cost import key_of
    from jaxscope.analysis.module_keys import module_keys

    keys = module_keys(graph.top, graph.function)[0] if key == "scope" else {}  # named as the table's rows are
    nodes = {n.id: n for n in graph.top.nodes}
    sizes: dict[str, int] = {}
    held = 0
    for (node_id, _port), size in alive:
        node = nodes.get(node_id)
        if node is None or node.kind != "eqn":
            held += size  # the arguments
            continue
        name = key_of(node, key, 0, keys.get(node_id))
        sizes[name] = sizes.get(name, 0) + size
    parts = sorted(sizes.items(), key=lambda kv: -kv[1])
    shown = [f"{name} {size} B" for name, size in parts[:5]] + ([f"arguments {held} B"] if held else [])
    return ", ".join(shown) + (f" and {len(parts) - 5} more" if len(parts) > 5 else "")


def _xla_line(xla: HloResult, total: Cost, model: Cost) -> str:
    """XLA's figures: before it optimizes (every op once, as ours count), and compiled (fused: fewer
    bytes, and the ops fusion recomputes), and its memory analysis."""
    out = []
    devices = _partitions(xla)
    per = f" (per device, of {devices})" if devices > 1 else ""
    before = " (the whole program, before partitioning)" if devices > 1 else ""
    for label, cost, ours in ((f"XLA before optimizing{before}", xla.lowered_cost, model), (f"XLA compiled{per}", xla.cost, total)):
        flops = cost.get("flops")
        if flops is None:
            continue
        ratio = f" (ours {ours.flops / flops:.2f}x)" if flops else ""
        parts = [f"{label}: flops {flops:.0f}{ratio}"]
        if "transcendentals" in cost:
            parts.append(f"transcendentals {cost['transcendentals']:.0f}")
        if "bytes accessed" in cost:
            parts.append(f"bytes accessed {cost['bytes accessed']:.0f}")
        out.append("; ".join(parts))
    return "\n".join(out) or "XLA: no cost analysis on this backend"


def _partitions(xla: HloResult) -> int:
    """How many devices the compiled program runs on (its text's `num_partitions`; 1 when unsaid)."""
    found = re.search(r"num_partitions=(\d+)", xla.text.split("\n", 1)[0])
    return int(found.group(1)) if found else 1


def _n(v: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:.3g}{unit}"
    return f"{v:.0f}"
