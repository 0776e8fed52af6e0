"""Each equation's own lines in each text, as tables: equation path -> its 1-based lines in the
jaxpr, the StableHLO or the compiled HLO. What `jaxscope links` prints and what the JSON export
carries (beside the texts the lines are of), so another tool needs no jaxscope to follow them."""

from __future__ import annotations

from typing import Any

from jaxscope.ir.jaxpr_order import equations
from jaxscope.ir.linking import JaxprLinks
from jaxscope.schema.graph import Graph

STAGES = ("jaxpr", "stablehlo", "compiled")


def jaxpr_lines(graph: Graph, links: JaxprLinks) -> dict[str, list[int]]:
    """Every equation (per call site) with lines: all lines of its printed equation (a `cond`'s
    branches included, as the jaxpr prints them inside it)."""
    out = {}
    for path, _node in equations(graph):
        lines = links.all_lines_for_node(path)
        if lines:
            out[path] = lines
    return out


def ir_lines(exact: dict[int, list[str]]) -> dict[str, list[int]]:
    """The worker's line -> equations (`hlo_marks.from_wire`) the other way round; a fused or
    merged instruction is a line of every equation it holds."""
    out: dict[str, list[int]] = {}
    for line, paths in sorted(exact.items()):
        for path in paths:
            out.setdefault(path, []).append(line)
    return out


def export_entry(text: str, lines: dict[str, list[int]]) -> dict[str, Any]:
    """One stage of the JSON export's ``links``: the text and each equation's lines in it."""
    return {"text": text, "lines": lines}
