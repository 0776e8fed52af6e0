"""`jaxscope links`: every equation and its own lines in the printed jaxpr, StableHLO or compiled
HLO, as a table for scripts."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from jaxscope.cli.common import CliError, add_target, trace_target

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
    p.add_argument("--stage", choices=("jaxpr", "stablehlo", "compiled"), default="jaxpr",
                   help="the text the lines are of: the jaxpr, the StableHLO, or the compiled HLO (a fused or merged "
                        "instruction is a line of every equation it holds)")


def run(opts: argparse.Namespace) -> int:
    from jaxscope.ir import linking
    from jaxscope.ir.jaxpr_order import equations

    result = trace_target(opts, jaxpr_text=opts.stage == "jaxpr")
    if opts.stage == "jaxpr":
        text = result.jaxpr_text.rstrip("\n") + "\n"
        links = linking.jaxpr_links(result.graph, text)
        if not links.exact:
            print("jaxscope: warning: this jaxpr's text did not line up with its equations; lines are by printed location",
                  file=sys.stderr)

        def lines_of(path: str) -> list[int]:
            return [n for head in links.lines_for_node(path) for n in links.equation_lines(head)]
    else:
        from jaxscope.cli.hlo import lower
        from jaxscope.ir import hlo_marks

        ir = lower(opts, opts.stage)
        if ir.exact is None:
            raise CliError(f"no exact links for the {opts.stage} text: this JAX ({ir.jax_version}) did not lower the marked program")
        own: dict[str, list[int]] = {}
        for n, paths in hlo_marks.from_wire(ir.exact).items():
            for p in paths:
                own.setdefault(p, []).append(n)

        def lines_of(path: str) -> list[int]:
            return own.get(path, [])
    out = [HEADER]
    for path, node in equations(result.graph):
        lines = lines_of(path)
        source = f"{node.source.file}:{node.source.line}" if node.source is not None else "-"
        out.append("\t".join((path, node.label.split("(", 1)[0], node.name_stack or "-", source, ",".join(map(str, sorted(lines))) or "-")))
    sys.stdout.write("\n".join(out) + "\n")
    return 0
