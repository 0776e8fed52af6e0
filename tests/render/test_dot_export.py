"""DOT export: deterministic, read back by pygraphviz with every label and position intact."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pygraphviz as pgv
import pytest

from jaxscope.layout import labels
from jaxscope.render.dot import render_dot
from jaxscope.render.sanitize import clean_text, dot_escape
from jaxscope.render.styles import family, get_theme
from jaxscope.schema.graph import resolve
from jaxscope.schema.layout import Layout
from tests.conftest import HOSTILE, check_golden

NS = "{http://www.w3.org/2000/svg}"


def read_back(escaped: str) -> str:
    """What pygraphviz returns for a label we wrote (the DOT parser unescapes quotes)."""
    return escaped.replace('\\"', '"')


def expected_label(graph, path: str) -> str:
    node = resolve(graph, path.partition("#")[0])[1]
    return read_back("\\n".join(dot_escape(line) for line in labels.node_lines(node)))


def test_dot_golden(sample):
    graph, layout = sample
    check_golden("sample_light.dot", render_dot(graph, layout))


def test_deterministic_and_theme_dependent(sample):
    graph, layout = sample
    assert render_dot(graph, layout) == render_dot(graph, layout)
    light, dark = render_dot(graph, layout, theme="light"), render_dot(graph, layout, theme="dark")
    assert light != dark
    assert f'bgcolor="{get_theme("dark").background}"' in dark
    with pytest.raises(ValueError, match="transparent"):
        render_dot(graph, layout, theme="nope")


def test_pygraphviz_reads_it_back(sample):
    graph, layout = sample
    text = render_dot(graph, layout)
    assert text.startswith('digraph "predict" {')
    agraph = pgv.AGraph(string=text)
    assert agraph.is_directed()
    paths = [b.path for b in layout.nodes]
    for box in layout.nodes:
        node = agraph.get_node(box.path)
        assert node.attr["label"] == expected_label(graph, box.path)
        x, y = node.attr["pos"].rstrip("!").split(",")
        assert float(x) == pytest.approx(box.x, abs=0.05)
        assert float(y) == pytest.approx(layout.height - box.y, abs=0.05)  # y up in DOT
        assert float(node.attr["width"]) * 72 == pytest.approx(box.w, abs=0.05)
        fam = family(resolve(graph, box.path.partition("#")[0])[1])
        assert node.attr["fillcolor"] == get_theme("light").style(fam).fill
    assert set(paths) <= {str(n) for n in agraph.nodes()}
    assert agraph.number_of_edges() == len(layout.edges)
    (cluster,) = agraph.subgraphs()
    assert cluster.name == "cluster_e0:0"
    assert cluster.graph_attr["label"] == "jit(layer)"
    inside = {str(n) for n in cluster.nodes()}
    assert {"e0:0/in0", "e0:0/e0", "e0:0/out0"} <= inside and "e1" not in inside
    unrouted = [e for e in agraph.edges() if e.attr.get("style") == "dashed"]
    assert [(str(e[0]), str(e[1])) for e in unrouted] == [("e3", "e5")]


def test_nop_reproduces_the_layout_and_dot_relays_it(sample):
    graph, layout = sample
    agraph = pgv.AGraph(string=render_dot(graph, layout))
    agraph.layout(prog="nop")  # = neato -n: keep our positions
    for box in layout.nodes:
        x, y = agraph.get_node(box.path).attr["pos"].rstrip("!").split(",")
        assert (float(x), float(y)) == pytest.approx((box.x, layout.height - box.y), abs=0.6)
    (cluster,) = agraph.subgraphs()
    c = layout.clusters[0]
    bb = [float(v) for v in cluster.graph_attr["bb"].split(",")]
    assert bb == pytest.approx([c.x, layout.height - c.y - c.h, c.x + c.w, layout.height - c.y], abs=0.6)
    fresh = pgv.AGraph(string=render_dot(graph, layout))
    fresh.layout(prog="dot")
    svg = fresh.draw(format="svg").decode("utf-8")
    assert "jit(layer)" in svg and "dot_general" in svg


def test_without_layout_the_top_body_is_flat(sample):
    graph, _ = sample
    text = render_dot(graph, None)
    assert "pos=" not in text and "subgraph" not in text
    agraph = pgv.AGraph(string=text)
    assert sorted(str(n) for n in agraph.nodes()) == sorted(n.id for n in graph.top.nodes)
    assert agraph.number_of_edges() == len(graph.top.edges)
    assert agraph.get_node("e0").attr["label"] == "jit layer\\nf32[16,8]"
    assert agraph.get_node("e0").attr["peripheries"] == "2"  # it owns a collapsed sub-graph


def test_transparent_theme_has_no_current_color(sample):
    graph, layout = sample
    text = render_dot(graph, layout, theme="transparent")
    assert "currentColor" not in text
    assert 'bgcolor="transparent"' in text
    t = get_theme("transparent")
    agraph = pgv.AGraph(string=text)
    assert agraph.get_node("e1").attr["fillcolor"] == t.style("linalg").fill + "29"  # #rrggbbaa
    assert agraph.node_attr["fontcolor"] == t.ink


def test_edges_to_a_cluster_end_at_an_invisible_anchor(sample):
    graph, layout = sample
    from jaxscope.schema.layout import EdgePath

    extra = EdgePath("in0", "e0:0", ((70.0, 49.0), (70.0, 55.0), (200.0, 56.0), (200.0, 62.0)))
    layout = Layout(layout.width, layout.height, layout.nodes, (*layout.edges, extra), layout.clusters)
    agraph = pgv.AGraph(string=render_dot(graph, layout))
    anchor = agraph.get_node("e0:0")
    assert anchor.attr["style"] == "invis"
    assert "e0:0" in {str(n) for n in agraph.subgraphs()[0].nodes()}
    edge = agraph.get_edge("in0", "e0:0")
    assert edge.attr["lhead"] == "cluster_e0:0"
    agraph.layout(prog="nop")  # every node has a position
    agraph.layout(prog="dot")


def test_hostile_names_survive_graphviz(hostile):
    graph, layout = hostile
    text = render_dot(graph, layout)
    text.encode("utf-8")
    for bad in ("\x00", "\x01", "\u202e"):
        assert bad not in text
    agraph = pgv.AGraph(string=text)
    assert agraph.name == clean_text(graph.function)
    for box in layout.nodes:
        assert agraph.get_node(box.path).attr["label"] == expected_label(graph, box.path)
    (cluster,) = agraph.subgraphs()
    assert cluster.graph_attr["label"] == read_back(dot_escape(layout.clusters[0].title))
    agraph.layout(prog="nop")
    svg = agraph.draw(format="svg").decode("utf-8")
    texts = [t.text for t in ET.fromstring(svg.encode("utf-8")).iter(NS + "text")]
    for s in HOSTILE:
        assert labels.ellipsize(clean_text(s)) in texts, s  # rendered literally: no \N, no HTML
    assert clean_text(layout.clusters[0].title) in texts
