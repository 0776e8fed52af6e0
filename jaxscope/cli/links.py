"""`jaxscope links`: every equation and its own lines in the printed jaxpr, as a table for scripts."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from jaxscope.cli.common import add_target, trace_target

HEADER = "path\tprimitive\tscope\tsource\tlines"


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "links",
        help="each equation (per call site) and its own lines in the text `jaxscope jaxpr` prints",
        description="One tab-separated line per equation, top level and every sub-jaxpr per call site: its path "
        "(as the SVG's data-path), primitive, scope (name stack), user source file:line, and the comma-separated "
        "1-based numbers of its lines in the text `jaxscope jaxpr` prints for the same target and inputs.",
    )
    add_target(p)
    p.add_argument("--stage", choices=("jaxpr",), default="jaxpr",
                   help="the text the lines are of (StableHLO and compiled HLO: not yet, see the README)")


def run(opts: argparse.Namespace) -> int:
    from jaxscope.ir import linking
    from jaxscope.ir.jaxpr_order import equations

    result = trace_target(opts, jaxpr_text=True)
    text = result.jaxpr_text.rstrip("\n") + "\n"
    links = linking.jaxpr_links(result.graph, text)
    if not links.exact:
        print("jaxscope: warning: this jaxpr's text did not line up with its equations; lines are by printed location",
              file=sys.stderr)
    out = [HEADER]
    for path, node in equations(result.graph):
        lines: list[int] = []
        for head in links.lines_for_node(path):
            lines += links.equation_lines(head)
        source = f"{node.source.file}:{node.source.line}" if node.source is not None else "-"
        out.append("\t".join((path, node.label.split("(", 1)[0], node.name_stack or "-", source, ",".join(map(str, sorted(lines))) or "-")))
    sys.stdout.write("\n".join(out) + "\n")
    return 0
