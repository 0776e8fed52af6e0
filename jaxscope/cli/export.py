"""`jaxscope export`: trace a function and write its graph (svg, png, pdf, dot, json, or an interactive html page)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from jaxscope.analysis.measures import MEASURES
from jaxscope.cli.common import CliError, TargetOptions, add_target, output_file, warn
from jaxscope.layout.edge_shape import LONG_EDGES

if TYPE_CHECKING:
    from jaxscope.drawing import DrawOptions, Measured
    from jaxscope.schema.graph import Graph


def add_parser(sub: Any) -> None:
    p = sub.add_parser("export", help="trace a function and write its graph (svg, png, pdf, dot, json, html)")
    add_target(p)
    p.add_argument("-o", "--output", type=output_file, required=True, metavar="FILE", help="output file; the suffix picks the format")
    p.add_argument("--format", choices=["svg", "png", "pdf", "dot", "json", "html"], default=None)
    p.add_argument("--theme", choices=["light", "dark", "transparent"], default="light")
    p.add_argument("--dpi", type=int, default=96, help="PNG resolution (96 = 1 px per layout px)")
    p.add_argument(
        "--collapse",
        type=int,
        default=None,
        metavar="DEPTH",
        help="expand nested sub-graphs down to DEPTH levels (0 = all collapsed); default: automatic",
    )
    p.add_argument(
        "--expand",
        action="append",
        default=[],
        metavar="SCOPE",
        help="also draw this group open, with the groups on the way to it: its title (block1, 'flax: Optimizer.update') or "
        "the end of its way (CNN.__call__/block1); repeat for more",
    )
    p.add_argument("--direction", choices=["TB", "LR"], default="TB")
    p.add_argument("--legend", action="store_true", help="add a legend of node colours")
    p.add_argument(
        "--highlight",
        default="",
        metavar="QUERY",
        help="outline the nodes a graph search matches: a primitive, an input name, a scope (block1, block1/up), :LINE or LINE",
    )
    p.add_argument(
        "--layout-budget", type=float, default=5.0, metavar="S", help="seconds Graphviz may take before the fast layered layout is used"
    )
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--flat",
        action="store_true",
        help="draw the program's own structure, ungrouped (by default a model is drawn as the window draws it: "
        "grouped by module per pass, forward and backward apart, opened to its repeated blocks)",
    )
    group.add_argument(
        "--scopes",
        action="store_true",
        help="group any program by its calls and scopes, even a small plain function the window draws flat; "
        "--collapse N then opens N levels of groups",
    )
    p.add_argument(
        "--links",
        default=None,
        metavar="STAGES",
        help="JSON and HTML: the texts whose lines each equation is linked to (an HTML page shows them on a click), "
        "comma-separated from jaxpr, stablehlo, compiled (as `jaxscope links` prints them); default jaxpr; 'none' for none",
    )
    p.add_argument(
        "--overlay",
        choices=tuple(MEASURES),
        default=None,
        help="colour the boxes by a measure, with its scale: " + ", ".join(m.title for m in MEASURES.values()) + " (per equation; "
        "time runs the compiled program under the profiler)",
    )
    p.add_argument(
        "--sharding",
        action="store_true",
        help="compile for the devices and add what XLA's partitioner decided: each argument's sharding and the "
        "collectives it inserted (all-reduce, all-gather, ...), on the equations they come from",
    )
    p.add_argument(
        "--long-edges",
        choices=LONG_EDGES,
        default="auto",
        help="draw edges longer than 1200 x 800 px as their two ends: auto (where there are 64 or more, "
        "as the window does), ends (always) or whole (never)",
    )


def link_stages(links: str | None, fmt: str, output: str) -> list[str]:
    """The stages `--links` names (JSON and HTML; jaxpr by default)."""
    from jaxscope.ir.link_tables import STAGES

    if fmt not in ("json", "html"):
        if links is not None:
            raise CliError(f"--links goes with JSON or HTML output, not {fmt or output}")
        return []
    asked = [s.strip() for s in (links if links is not None else "jaxpr").split(",") if s.strip()]
    if asked == ["none"]:
        return []
    unknown = [s for s in asked if s not in STAGES]
    if unknown:
        raise CliError(f"--links: unknown stage {unknown[0]!r}; use some of {', '.join(STAGES)}, or none")
    return list(dict.fromkeys(asked))


def _fill(target: TargetOptions, name: str | None, real: Graph) -> Measured | None:
    """`--overlay`: each equation's value on the measure; a measure that needs a profile runs the
    compiled program under the profiler (`jaxscope cost --time`)."""
    if name is None:
        return None
    from jaxscope.analysis.measures import MEASURES, PROFILE_RUNS, MeasureData
    from jaxscope.drawing import Measured
    from jaxscope.stages import lower

    wanted = MEASURES[name]
    try:
        run = lower(target.stage(), "compiled", PROFILE_RUNS) if wanted.needs == "profile" else None
        values, caption = wanted.values(MeasureData(real, run))
    except ValueError as exc:
        raise CliError(f"--overlay {name}: {exc}") from None
    return Measured(name, values, caption)


def _partitioned(target: TargetOptions, graph: Graph) -> dict[str, str]:
    """`--sharding`: the compiled program's collectives and argument shardings, for the boxes."""
    from jaxscope.analysis.partition import notes_of
    from jaxscope.stages import lower

    try:
        notes, count = notes_of(graph, lower(target.stage(), "compiled"))
    except ValueError as exc:
        raise CliError(f"--sharding: {exc}") from None
    print(f"jaxscope: {count} collective{'s' if count != 1 else ''} in the compiled program", file=sys.stderr)
    return notes


def options(opts: argparse.Namespace, fmt: str) -> DrawOptions:
    """The drawing the options ask for; JSON keeps the program's own structure (its paths are the
    program's), so it is drawn flat unless --scopes asks otherwise, which JSON refuses."""
    from jaxscope.drawing import DrawOptions, grouping_for

    try:
        return DrawOptions(
            theme=opts.theme,
            direction=opts.direction,
            collapse=opts.collapse,
            grouping=grouping_for(fmt, opts.scopes, opts.flat),
            legend=opts.legend,
            highlight=opts.highlight,
            long_edges=opts.long_edges,
            dpi=opts.dpi,
            layout_budget=opts.layout_budget,
            expand=tuple(opts.expand),
        ).check()
    except ValueError as exc:
        raise CliError(str(exc)) from None


def run(opts: argparse.Namespace) -> int:
    from jaxscope.drawer import Drawer
    from jaxscope.drawing import Decorations, DrawRequest, view_of
    from jaxscope.exporter import resolve_format
    from jaxscope.ir.link_tables import export_entry
    from jaxscope.saved_traces import snapshot
    from jaxscope.stages import stage_lines

    try:
        fmt = resolve_format(opts.output, opts.format)
    except ValueError:  # e.g. -o /dev/null: the exporter says so after the trace, as it always did
        fmt = ""
    if opts.overlay and fmt in ("json", "dot"):
        raise CliError(f"--overlay colours a drawing: use it with svg, png or pdf, not {fmt}")
    stages = link_stages(opts.links, fmt, opts.output)
    target = TargetOptions.of(opts)
    draw = options(opts, fmt)
    with Drawer() as drawer:
        # As in the app: the layout process starts now (while the worker imports jax) and lays out
        # the graph as the trace reply arrives; the notes of --sharding go in with the layout.
        doc = target.saved  # an HTML page's panel: a saved trace's own copies, else the files while they are as traced
        stream = drawer.stream(draw) if not opts.sharding and doc is None else None
        result = target.trace(jaxpr_text="jaxpr" in stages, diagnose=False, tap=stream.feed if stream is not None else None)
        decorations = Decorations(
            fill=_fill(target, opts.overlay, result.graph),
            notes=_partitioned(target, result.graph) if opts.sharding else {},
            links={stage: export_entry(*stage_lines(target.stage(), result, stage, warn)) for stage in stages},
            sources=(dict(doc.sources) if doc is not None else snapshot(result, warn)) if fmt == "html" else {},
        )
        try:
            drawing = drawer.draw(DrawRequest(view_of(result.graph, draw.grouping), draw, decorations, page=fmt == "html"), stream)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    try:
        fmt = drawing.write(opts.output, opts.format)
    except (ValueError, OSError) as exc:
        raise CliError(f"cannot write {opts.output}: {exc}") from None
    for note in drawing.notes(fmt):
        print(f"jaxscope: note: {note}", file=sys.stderr)
    top = drawing.graph.top
    print(f"wrote {opts.output} ({fmt}: {top.total_eqns} equations, {len(drawing.layout.nodes)} nodes drawn)")
    return 0
