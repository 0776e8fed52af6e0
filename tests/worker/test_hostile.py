"""Hostile strings from user code through trace, graph, layout, SVG, DOT and JSON: valid and faithful."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

from jaxscope.exporter import to_json
from jaxscope.layout.engine import compute_layout
from jaxscope.render.dot import render_dot
from jaxscope.render.svg import render_svg
from jaxscope.schema.expansion import auto_expanded
from jaxscope.schema.trace import FunctionRef, TraceRequest
from jaxscope.worker.trace import run_trace

CORPUS = os.path.join(os.path.dirname(__file__), "corpus", "hostile.py")
KEY = '<b>k</b>\\N"'
SHOWN = "<b>k</b>\\\\N"  # JAX names pytree inputs with repr(key): the backslash is doubled


def test_hostile_strings_stay_valid_and_faithful():
    args = f"{{{KEY!r}: f32[2], '\\x00nul': f32[2]}}, mode='</svg>\\\\l'"
    result = run_trace(TraceRequest(FunctionRef(qualname="hostile", path=CORPUS), args=args), lambda p: None)
    graph = result.graph
    inputs = [n.label for n in graph.top.nodes if n.kind == "input"]
    assert any(SHOWN in label for label in inputs), inputs
    stacks = {n.name_stack for n in graph.top.nodes if n.kind == "eqn"}
    assert any("<script>" in s for s in stacks) and any("</svg>\\l" in s for s in stacks)
    layout = compute_layout(graph, auto_expanded(graph))
    for theme in ("light", "dark", "transparent"):
        svg = render_svg(graph, layout, theme=theme, legend=True)
        root = ET.fromstring(svg)  # valid XML despite NUL, \x01, markup
        assert "<script>" not in svg
        text = "".join(root.itertext())
        assert SHOWN in text  # faithful: the escaped text reads back as written
        assert "\u202e" not in svg
    dot = render_dot(graph, layout)
    import pygraphviz

    agraph = pygraphviz.AGraph(string=dot)
    labels = [agraph.get_node(n).attr.get("label", "") for n in agraph.nodes()]
    assert any("k</b>" in (label or "") for label in labels)
    data = json.loads(to_json(graph, layout))
    assert any(SHOWN in n["label"] for n in data["graph"]["bodies"]["b0"]["nodes"])
