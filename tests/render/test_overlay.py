"""The overlay: a measure's colour per box on a log scale, owners shown with what they hold, and
its scale drawn over the graph."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from jaxscope.layout.engine import compute_layout
from jaxscope.render.overlay import RAMP, ZERO, Overlay, human, ramp, with_owners
from jaxscope.render.svg import render_svg
from jaxscope.schema.graph import Body, Edge, Graph, Node


def test_values_go_on_a_log_scale_and_owners_hold_their_parts() -> None:
    o = Overlay("flops", {"a": 10.0, "b": 1000.0, "c": 0.0})
    assert (o.low, o.high) == (10.0, 1000.0) and abs(o.position(100.0) - 0.25) < 1e-9  # half the decades: a quarter of the colour
    assert o.colour("a") == RAMP[0] and o.colour("b") == RAMP[-1] and o.colour("c") == ZERO and o.colour("x") is None
    assert ramp(0.5) not in (RAMP[0], RAMP[-1])
    assert with_owners({"g0:0/e1": 2.0, "g0:0/e5:0/e2": 3.0}) == {"g0:0/e1": 2.0, "g0:0/e5:0/e2": 3.0, "g0": 5.0, "g0:0/e5": 3.0}
    assert with_owners({"g0:0/e1": 2.0, "g0:0/e2": 3.0}, peak=True)["g0"] == 3.0


def test_the_svg_fills_boxes_by_value_and_names_the_measure() -> None:
    body = Body(
        "b0",
        "f",
        (
            Node("in0", "input", "x", avals=("f32[8]",)),
            Node("e0", "eqn", "sin", avals=("f32[8]",)),
            Node("e1", "eqn", "mul", avals=("f32[8]",)),
            Node("out0", "output", "y"),
        ),
        (Edge("in0", "e0"), Edge("e0", "e1"), Edge("e1", "out0")),
        2,
        2,
    )
    graph = Graph("f", {"b0": body}, "b0")
    layout = compute_layout(graph, (), engine="layered")
    svg = render_svg(graph, layout, overlay=Overlay("flops", {"e0": 8.0, "e1": 800.0}, "FLOPs per equation"))
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    fills = {g.get("data-path"): g.find(f"{ns}rect").get("fill") for g in root.iter(f"{ns}g") if g.get("class", "").startswith("node ")}
    assert fills["e0"] == RAMP[0] and fills["e1"] == RAMP[-1] and fills["in0"] not in RAMP
    scale = next(g for g in root.iter(f"{ns}g") if g.get("class") == "overlay-scale")
    caption = "".join(t.text or "" for t in scale.iter(f"{ns}text"))
    assert caption.startswith("FLOPs per equation: 8 … 800")
    assert float(scale.get("transform").split(",")[1].rstrip(")")) < min(
        float(g.get("transform", "translate(0,0)").split(",")[1].rstrip(")")) for g in root.iter(f"{ns}g") if g.get("class") == "graph"
    )


def test_scale_ends_read_with_si_prefixes_from_nanoseconds_to_gigaflops() -> None:

    assert [human(v) for v in (0.0, 8.06e-9, 2.59e-5, 0.004, 0.5, 512.0, 14500.0, 3.2e9)] == [
        "0",
        "8.06n",
        "25.9µ",
        "4m",
        "500m",
        "512",
        "14.5k",
        "3.2G",
    ]
