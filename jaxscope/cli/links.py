"""`jaxscope links`: every equation and its own lines in the printed jaxpr, StableHLO or compiled
HLO, as a table for scripts."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from jaxscope.cli.common import TargetOptions, add_target, warn

HEADER = "path\tprimitive\tscope\tsource\tlines"


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "links",
        help="each equation (per call site) and its own lines in the text `jaxscope jaxpr` (or `hlo`) prints",
        description="One tab-separated line per equation, top level and every sub-jaxpr per call site: its path "
        "(as the SVG's data-path), primitive, scope (name stack), user source file:line, and the comma-separated "
        "1-based numbers of its lines in the text `jaxscope jaxpr` (or `jaxscope hlo --stage S`) prints for the "
        "same target and inputs; '-' where it has none (compiled: XLA removed it, or folded it into a constant).",
    )
    add_target(p)
    p.add_argument(
        "--stage",
        choices=("jaxpr", "stablehlo", "compiled"),
        default="jaxpr",
        help="the text the lines are of: the jaxpr, the StableHLO, or the compiled HLO (a fused or merged "
        "instruction is a line of every equation it holds)",
    )


def run(opts: argparse.Namespace) -> int:
    from jaxscope.ir.jaxpr_order import equations
    from jaxscope.stages import stage_lines

    target = TargetOptions.of(opts)
    result = target.trace(jaxpr_text=opts.stage == "jaxpr")
    _text, lines = stage_lines(target.stage(), result, opts.stage, warn)
    out = [HEADER]
    for path, node in equations(result.graph):
        source = f"{node.source.file}:{node.source.line}" if node.source is not None else "-"
        own = ",".join(map(str, lines.get(path, ()))) or "-"
        out.append("\t".join((path, node.label.split("(", 1)[0], node.name_stack or "-", source, own)))
    sys.stdout.write("\n".join(out) + "\n")
    return 0
