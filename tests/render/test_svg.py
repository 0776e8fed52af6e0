"""The SVG writer (goldens, structure, determinism, hostile text) and `core.export` for the
text formats (svg, dot, json). Raster formats are tested in tests/qt/test_raster.py.

Regenerate the goldens after an intended change with
``JAXSCOPE_UPDATE_GOLDENS=1 .venv/bin/python -m pytest tests/render`` and review the diff.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

from jaxscope.exporter import FORMATS, export, read_json, resolve_format, to_json
from jaxscope.layout import labels
from jaxscope.layout.engine import compute_layout
from jaxscope.render.sanitize import clean_text, xml_attr, xml_text
from jaxscope.render.styles import FAMILIES, family, family_title
from jaxscope.render.svg import JOIN_PARTS, TITLE_BAND, NodeIndex, node_tooltip, render_svg, svg_parts
from jaxscope.schema.graph import Body, Edge, Graph, Node, resolve
from jaxscope.schema.layout import ClusterBox, EdgePath, Layout, NodeBox
from tests.conftest import HOSTILE, build_sample, check_golden, two_chains

NS = "{http://www.w3.org/2000/svg}"
TESTS = pathlib.Path(__file__).resolve().parents[1]


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg.encode("utf-8"))


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(NS + "g") if cls in (g.get("class") or "").split()]


def own_title(el: ET.Element) -> str:
    t = el.find(NS + "title")
    return t.text if t is not None and t.text else ""


# ---------------------------------------------------------------------------- goldens


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("sample_light.svg", {"theme": "light", "title": "predict(params, x)", "legend": True}),
        ("sample_dark.svg", {"theme": "dark"}),
        ("sample_transparent.svg", {"theme": "transparent", "legend": True}),
    ],
)
def test_svg_goldens(sample, name, options):
    graph, layout = sample
    check_golden(name, render_svg(graph, layout, **options))


def test_a_big_document_comes_in_bounded_slices():
    """Written a slice at a time (short GIL holds) and joined as it goes (a bounded peak)."""
    n = 5000
    nodes = tuple(Node(f"e{i}", "eqn", "sin", avals=("f32[8]",)) for i in range(n))
    edges = tuple(Edge(f"e{i}", f"e{i + 1}") for i in range(n - 1))
    graph = Graph("chain", {"b0": Body("b0", "chain", nodes, edges, n, n)})
    layout = compute_layout(graph, frozenset(), engine="layered")
    slices = svg_parts(graph, layout)
    assert len(slices) > 1 and all(part.endswith("\n") for part in slices)
    assert max(part.count("\n") for part in slices) <= 4 * JOIN_PARTS  # JOIN_PARTS elements, of up to 4 lines each
    assert "".join(slices) == render_svg(graph, layout)
    parse("".join(slices))


def test_a_document_keeps_none_of_its_strings(sample):
    """The escape caches serve one document; kept, they held ~100 MB after a 50k-node export."""
    graph, layout = sample
    svg = render_svg(graph, layout)
    assert xml_text.cache_info().currsize == 0 and xml_attr.cache_info().currsize == 0
    assert svg == render_svg(graph, layout)  # and the next document is the same without them


# ---------------------------------------------------------------------------- structure


def test_root_element(sample):
    graph, layout = sample
    svg = render_svg(graph, layout)
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg" ')
    root = parse(svg)
    assert root.tag == NS + "svg"
    assert root.get("width") == "540.0" and root.get("height") == "916.0"
    assert root.get("viewBox") == "0 0 540.0 916.0"
    assert root.get("font-family") == labels.FONT_FAMILY
    assert float(root.get("font-size")) == labels.FONT_SIZE
    background = root.find(NS + "rect")
    assert background is not None and background.get("class") == "background"
    assert background.get("fill") == "#ffffff"


def test_element_order_is_clusters_edges_titles_nodes(sample):
    graph, layout = sample
    root = parse(render_svg(graph, layout))
    (graph_group,) = groups(root, "graph")
    order = [g.get("class") for g in graph_group.findall(NS + "g")]
    assert order == ["clusters", "edges", "cluster-titles", "nodes"]


def test_nodes_in_layout_order_with_their_label_lines(sample):
    graph, layout = sample
    root = parse(render_svg(graph, layout))
    nodes = groups(root, "node")
    assert [g.get("data-path") for g in nodes] == [b.path for b in layout.nodes]
    for g, box in zip(nodes, layout.nodes, strict=True):
        node = resolve(graph, box.path.partition("#")[0])[1]
        assert [t.text for t in g.findall(NS + "text")] == labels.node_lines(node)
        assert family(node) in g.get("class").split()
        for t in g.findall(NS + "text"):
            assert t.get("text-anchor") == "middle" and float(t.get("x")) == pytest.approx(box.x, abs=0.05)


def test_stub_copy_is_drawn_like_its_original(sample):
    graph, layout = sample
    root = parse(render_svg(graph, layout))
    by_path = {g.get("data-path"): g for g in groups(root, "node")}
    stub, original = by_path["in3#0"], by_path["in3"]
    assert [t.text for t in stub.findall(NS + "text")] == ["params['w2']", "f32[8,3]"]
    assert own_title(stub) == own_title(original)


def test_tooltips_carry_primitive_params_avals_and_source(sample):
    graph, layout = sample
    root = parse(render_svg(graph, layout))
    by_path = {g.get("data-path"): g for g in groups(root, "node")}
    tip = own_title(by_path["e0:0/e0"])
    assert tip.startswith("dot_general  (Linear algebra)")
    assert "in:  f32[16,4], f32[4,8]" in tip and "out: f32[16,8]" in tip
    assert "dimension_numbers=(([1], [0]), ([], []))" in tip
    assert "at /home/user/project/model.py:20 in layer" in tip
    assert "scope: jit(layer)" in tip
    assert "module global `scale`" in own_title(by_path["c0"])
    assert own_title(by_path["in0"]).startswith("x  (input)\nf32[16,4]")


def test_raster_svg_leaves_out_tooltips_on_request(sample):
    graph, layout = sample
    full = render_svg(graph, layout)
    bare = render_svg(graph, layout, tooltips=False)
    assert "<title>" in full and "<title>" not in bare and bare.count("<text") == full.count("<text")


def test_shapes_tell_node_kinds_apart(sample):
    graph, layout = sample
    root = parse(render_svg(graph, layout))
    by_path = {g.get("data-path"): g for g in groups(root, "node")}
    box = next(b for b in layout.nodes if b.path == "in0")
    (pill,) = by_path["in0"].findall(NS + "rect")
    assert float(pill.get("rx")) == pytest.approx(box.h / 2, abs=0.05)
    (out,) = by_path["out0"].findall(NS + "rect")
    assert float(out.get("stroke-width")) > float(pill.get("stroke-width"))
    (const,) = by_path["c0"].findall(NS + "rect")
    assert const.get("stroke-dasharray")
    assert by_path["e2.l1"].find(NS + "ellipse") is not None and by_path["e2.l1"].find(NS + "rect") is None
    (plain,) = by_path["e1"].findall(NS + "rect")
    assert float(plain.get("rx")) < float(pill.get("rx"))


def test_collapsed_owner_has_a_card_behind_it(sample):
    graph, layout = sample
    w, h = labels.node_size(resolve(graph, "e0")[1])
    collapsed = Layout(width=200.0, height=100.0, nodes=(NodeBox("e0", 100.0, 50.0, w, h),), edges=())
    root = parse(render_svg(graph, collapsed))
    (owner,) = groups(root, "node")
    assert len(owner.findall(NS + "rect")) == 2
    assert [t.text for t in owner.findall(NS + "text")] == ["jit layer", "f32[16,8]"]


def test_edges_paths_and_arrowheads(sample):
    graph, layout = sample
    root = parse(render_svg(graph, layout))
    edges = groups(root, "edge")
    assert len(edges) == len(layout.edges)
    for g, e in zip(edges, layout.edges, strict=True):
        assert (g.get("data-src"), g.get("data-dst")) == (e.src, e.dst)
        line, arrow = g.findall(NS + "path")
        assert line.get("d").startswith(f"M{e.points[0][0]:.1f},{e.points[0][1]:.1f} C")
        tip = arrow.get("d").split()[0]
        assert tip == f"M{e.points[-1][0]:.1f},{e.points[-1][1]:.1f}"  # the arrow tip is the path's end
        assert own_title(g) == e.aval
        assert ("unrouted" in g.get("class")) == (not e.routed)
        assert (g.get("stroke-dasharray") is not None) == (not e.routed)


def test_clusters_sorted_by_depth_with_titles(sample):
    graph, layout = sample
    inner = ClusterBox("e0:0/e1:0", "inner & <deep>", 30.0, 200.0, 160.0, 60.0, depth=2)
    layout = dataclasses.replace(layout, clusters=(inner, *layout.clusters))
    root = parse(render_svg(graph, layout))
    clusters = groups(root, "cluster")
    assert [c.get("data-path") for c in clusters] == ["e0:0", "e0:0/e1:0"]
    fills = [c.find(NS + "rect").get("fill") for c in clusters]
    assert fills[0] != fills[1]  # darker with depth
    (titles,) = groups(root, "cluster-titles")
    assert [t.text for t in titles.findall(NS + "text")] == ["jit(layer)", "inner & <deep>"]


def test_long_cluster_title_is_cut_to_the_box(sample):
    graph, layout = sample
    c = ClusterBox("e0:0", "a very long title " * 10, 10.0, 10.0, 120.0, 80.0)
    root = parse(render_svg(graph, dataclasses.replace(layout, clusters=(c,))))
    (titles,) = groups(root, "cluster-titles")
    text = titles.find(NS + "text").text
    assert text.endswith("…") and len(text) * labels.CHAR_W <= c.w
    assert own_title(groups(root, "cluster")[0]) == c.title  # the full title on hover


def test_numbers_have_one_decimal(sample):
    graph, layout = sample
    svg = render_svg(graph, layout, title="t", legend=True)
    for attr in re.findall(r' (?:x|y|cx|cy|rx|ry|width|height|d|transform)="([^"]*)"', svg):
        for number in re.findall(r"-?\d+(?:\.\d+)?", attr):
            assert re.fullmatch(r"-?\d+\.\d", number), (attr, number)
    assert "-0.0" not in svg


def test_coordinates_just_below_zero_are_written_0_0(sample):
    """-0.04 rounds to "-0.0" in %.1f: every coordinate (boxes, labels, curves, arrowheads) says 0.0."""
    graph, layout = sample
    box = layout.nodes[0]
    moved = dataclasses.replace(box, x=box.w / 2 - 0.04, y=box.h / 2 - 0.04)
    edge = dataclasses.replace(layout.edges[0], points=((-0.04, -0.03), (-0.02, 10.0), (5.0, 20.0), (-0.01, 30.0)))
    svg = render_svg(graph, dataclasses.replace(layout, nodes=(moved, *layout.nodes[1:]), edges=(edge, *layout.edges[1:])))
    assert "-0.0" not in svg
    assert 'x="0.0" y="0.0" width' in svg and 'd="M0.0,0.0 C0.0,10.0 ' in svg


def test_legend_lists_only_present_families_in_order(sample):
    graph, layout = sample
    root = parse(render_svg(graph, layout, legend=True))
    (legend,) = groups(root, "legend")
    captions = [t.text for t in legend.findall(NS + "text")]
    present = {family(resolve(graph, b.path.partition("#")[0])[1]) for b in layout.nodes}
    assert captions == [family_title(f) for f in FAMILIES if f in present]
    assert "Random" not in captions
    plain = parse(render_svg(graph, layout))
    assert not groups(plain, "legend")
    assert float(root.get("height")) > float(plain.get("height"))


def test_title_band(sample):
    graph, layout = sample
    root = parse(render_svg(graph, layout, title="My <model>"))
    assert own_title(root) == "My <model>"
    assert float(root.get("height")) == pytest.approx(layout.height + TITLE_BAND)
    (band,) = [t for t in root.findall(NS + "text") if t.get("class") == "title"]
    assert band.text == "My <model>"
    (graph_group,) = groups(root, "graph")
    assert graph_group.get("transform") == f"translate(0.0,{TITLE_BAND:.1f})"


def test_themes_differ_and_transparent_uses_current_color(sample):
    graph, layout = sample
    svgs = {t: render_svg(graph, layout, theme=t) for t in ("light", "dark", "transparent")}
    assert len(set(svgs.values())) == 3
    dark = parse(svgs["dark"])
    assert dark.find(NS + "rect").get("fill") == "#16191e"
    transparent = parse(svgs["transparent"])
    assert all(r.get("class") != "background" for r in transparent.iter(NS + "rect"))
    assert 'fill="currentColor"' in svgs["transparent"] and 'stroke="currentColor"' in svgs["transparent"]
    assert "currentColor" not in svgs["light"] and "currentColor" not in svgs["dark"]
    with pytest.raises(ValueError, match="light"):
        render_svg(graph, layout, theme="neon")


def test_unknown_paths_and_empty_layouts_do_not_break(sample):
    graph, _ = sample
    odd = Layout(
        width=100.0,
        height=60.0,
        nodes=(NodeBox("zz9:3/q", 50.0, 30.0, 80.0, 24.0),),
        edges=(EdgePath("a", "b", ((1.0, 1.0),)), EdgePath("a", "b", ((5.0, 5.0), (5.0, 5.0)))),
    )
    root = parse(render_svg(graph, odd))
    (node,) = groups(root, "node")
    assert [t.text for t in node.findall(NS + "text")] == ["zz9:3/q"]
    empty = parse(render_svg(graph, Layout(width=0.0, height=0.0, nodes=(), edges=())))
    assert float(empty.get("width")) >= 1 and float(empty.get("height")) >= 1


def test_node_index_matches_resolve(sample, hostile):
    for graph, layout in (sample, hostile):
        index = NodeIndex(graph)
        for box in layout.nodes:
            assert index.get(box.path) is resolve(graph, box.path.partition("#")[0])[1]
    graph, _ = sample
    assert NodeIndex(graph).get("e0:7/e1") is None and NodeIndex(graph).get("nope") is None
    assert NodeIndex(graph).get("e0:0/e9") is None and NodeIndex(graph).get("e0:x/e1") is None


def test_big_graph_renders_quickly():
    n = 5000
    nodes = tuple(Node(f"e{i}", "eqn", "add", avals=("f32[8]",)) for i in range(n))
    edges = tuple(Edge(f"e{i}", f"e{i + 1}") for i in range(n - 1))
    graph = Graph("big", {"b0": Body("b0", "big", nodes, edges, n, n)})
    boxes = tuple(NodeBox(f"e{i}", 50.0, 20.0 + 40.0 * i, 60.0, 32.0) for i in range(n))
    paths = tuple(EdgePath(f"e{i}", f"e{i + 1}", ((50.0, 36.0 + 40 * i), (50.0, 44.0 + 40 * i))) for i in range(n - 1))
    layout = Layout(100.0, 40.0 * n + 20, boxes, paths)
    start = time.perf_counter()
    svg = render_svg(graph, layout, legend=True)
    assert time.perf_counter() - start < 5.0
    assert svg.count('class="node ') == n


def test_long_title_is_cut_in_the_band_but_kept_in_the_tooltip(sample):
    graph, layout = sample
    title = "t" * 500
    root = parse(render_svg(graph, layout, title=title))
    assert own_title(root) == title
    (band,) = [t for t in root.findall(NS + "text") if t.get("class") == "title"]
    assert len(band.text) == 120
    assert float(root.get("width")) < 2000


def test_node_tooltip_function(sample):
    graph, _ = sample
    node = resolve(graph, "e4")[1]
    tip = node_tooltip(node, "e4")
    assert tip.splitlines()[0] == "reduce_max  (Reduction)"
    assert "axes=(1,)" in tip and tip.endswith("path: e4")


# ---------------------------------------------------------------------------- hostile text


def test_hostile_strings_stay_literal_and_valid(hostile):
    graph, layout = hostile
    svg = render_svg(graph, layout, title=HOSTILE[0] + HOSTILE[1], legend=True)
    svg.encode("utf-8")  # no lone surrogates
    root = parse(svg)  # valid XML
    assert not any(el.tag.endswith("script") for el in root.iter())
    for bad in ("\x00", "\x01", "\u202e", "\x85", "<script", "<b>"):
        assert bad not in svg
    texts = [t.text or "" for t in root.iter(NS + "text")]
    for s in HOSTILE:
        assert labels.ellipsize(clean_text(s)) in texts, s
    titles = "\n".join(t.text or "" for t in root.iter(NS + "title"))
    assert clean_text("L" * 300) in titles  # the full text lives in the tooltip
    assert own_title(root) == clean_text(HOSTILE[0] + HOSTILE[1])
    paths = [g.get("data-path") for g in groups(root, "node")]
    assert paths == [b.path for b in layout.nodes]
    assert any(g.get("data-src") == HOSTILE[0] for g in groups(root, "edge"))


# ---------------------------------------------------------------------------- determinism


def test_render_is_deterministic_across_processes(sample):
    graph, layout = sample
    here = render_svg(graph, layout, theme="dark", title="t", legend=True)
    assert here == render_svg(graph, layout, theme="dark", title="t", legend=True)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from conftest import build_sample; from jaxscope.render.svg import render_svg;"
        "g, l = build_sample(); sys.stdout.write(render_svg(g, l, theme='dark', title='t', legend=True))"
    )
    for seed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONIOENCODING": "utf-8"}
        proc = subprocess.run(
            [sys.executable, "-c", code, str(TESTS)], capture_output=True, text=True, encoding="utf-8", env=env, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == here


def test_svg_module_does_not_import_qt_or_graphviz():
    code = (
        "import sys, jaxscope.render.svg, jaxscope.exporter, jaxscope.render.dot;"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pygraphviz', 'jax')];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ---------------------------------------------------------------------------- export (text formats)


def test_resolve_format():
    assert resolve_format("a/b.SVG") == "svg"
    assert resolve_format("g.gv") == "dot"
    assert resolve_format("g.txt", "json") == "json"
    assert resolve_format("g.svg", "PNG") == "png"
    for bad in ("g.txt", "noext", "g.jpeg"):
        with pytest.raises(ValueError) as err:
            resolve_format(bad)
        assert all(f in str(err.value) for f in FORMATS)
    with pytest.raises(ValueError, match="svg"):
        resolve_format("g.svg", "bmp")


def test_export_svg_dot_json(sample, tmp_path):
    graph, layout = sample
    assert export(graph, layout, str(tmp_path / "g.svg"), theme="dark", title="T", legend=True) == "svg"
    assert (tmp_path / "g.svg").read_text(encoding="utf-8") == render_svg(graph, layout, theme="dark", title="T", legend=True)
    assert export(graph, layout, str(tmp_path / "g.dot")) == "dot"
    assert (tmp_path / "g.dot").read_text(encoding="utf-8").startswith('digraph "predict" {')
    assert export(graph, layout, str(tmp_path / "out.data"), fmt="json") == "json"
    text = (tmp_path / "out.data").read_text(encoding="utf-8")
    data = json.loads(text)
    assert set(data) == {"schema_version", "graph", "layout", "links"} and data["links"] == {}
    assert text == json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    assert read_json(text) == (graph, layout)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.dot", "g.svg", "out.data"]  # no temp files left


def test_export_errors_leave_no_files(sample, tmp_path):
    graph, layout = sample
    target = tmp_path / "g.svg"
    target.write_text("old")
    with pytest.raises(ValueError, match="theme"):
        export(graph, layout, str(target), theme="neon")
    with pytest.raises(ValueError, match="svg"):
        export(graph, layout, str(tmp_path / "g.bmp"))
    with pytest.raises(ValueError, match="layout"):
        export(graph, None, str(target))
    with pytest.raises(OSError):
        export(graph, layout, str(tmp_path / "missing-dir" / "g.svg"))
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.svg"]


def test_export_replaces_atomically_and_keeps_permissions(sample, tmp_path):
    graph, layout = sample
    target = tmp_path / "g.svg"
    target.write_text("old")
    os.chmod(target, 0o640)
    export(graph, layout, str(target))
    assert target.read_text(encoding="utf-8").startswith("<svg")
    assert target.stat().st_mode & 0o777 == 0o640
    fresh = tmp_path / "new.svg"
    export(graph, layout, str(fresh))
    mask = os.umask(0)
    os.umask(mask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~mask


def test_json_export_without_layout_and_with_hostile_text(hostile, tmp_path):
    graph, layout = hostile
    text = to_json(graph, None)
    text.encode("utf-8")  # a lone surrogate is written as a \\ud800 escape, not raw
    assert "\\ud800" in text and "函数" in text
    back, none = read_json(text)
    assert back == graph and none is None
    export(graph, layout, str(tmp_path / "h.json"))
    assert read_json((tmp_path / "h.json").read_bytes()) == (graph, layout)
    with pytest.raises(ValueError, match="newer"):
        read_json(json.dumps({"schema_version": 999, "graph": {}, "layout": None}))


def test_sample_fixture_is_stable():
    a, b = build_sample(), build_sample()
    assert a == b


# ---------------------------------------------------------------------------- long edges


def _path_points(d: str) -> list[list[tuple[float, float]]]:
    """The subpaths of an SVG path's d (M/C/L only), as point lists."""
    parts: list[list[tuple[float, float]]] = []
    for cmd, body in re.findall(r"([MCL])([^MCL]*)", d):
        nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", body)]
        pts = list(zip(nums[::2], nums[1::2]))
        if cmd == "M":
            parts.append(pts)
        else:
            parts[-1] += pts
    return parts


def test_an_edge_ends_at_its_arrowheads_base_and_the_arrow_is_drawn_at_the_tip():
    """`edge_shape.arrowed`, what the SVG writer and the window's items both draw: the curve stops
    one arrow length short of the target (its last control point moved along, so the tangent
    holds) where the edge is longer than two arrows; the arrowhead's tip is the target."""
    from jaxscope.layout.edge_shape import ARROW_LEN, ARROW_W, arrowed

    cubic = [(10.0, 0.0), (10.0, 40.0), (10.0, 60.0), (10.0, 100.0)]
    pts, arrow = arrowed(cubic)
    assert pts == [(10.0, 0.0), (10.0, 40.0), (10.0, 60.0 - ARROW_LEN), (10.0, 100.0 - ARROW_LEN)]
    assert arrow == ((10.0, 100.0), (10.0 - ARROW_W / 2, 100.0 - ARROW_LEN), (10.0 + ARROW_W / 2, 100.0 - ARROW_LEN))
    assert cubic[-1] == (10.0, 100.0)  # the caller's points are not changed
    short = [(0.0, 0.0), (0.0, 2 * ARROW_LEN)]
    assert arrowed(short)[0] == short and arrowed(short)[1][0] == short[-1]  # no room: the stroke runs to the tip
    polyline = [(0.0, 0.0), (50.0, 0.0), (50.0, 50.0)]  # a polyline: only its last point moves
    assert arrowed(polyline)[0] == [(0.0, 0.0), (50.0, 0.0), (50.0, 50.0 - ARROW_LEN)]
    assert arrowed([(5.0, 5.0), (5.0, 5.0)]) == ([(5.0, 5.0), (5.0, 5.0)], None)  # no direction: no arrow

    graph = two_chains()
    layout = compute_layout(graph)
    drawn = re.findall(r'<path d="(M[^"]*)"/>\n<path class="arrow" d="([^"]*)"', render_svg(graph, layout, long_edges="whole"))
    assert len(drawn) == len(layout.edges) > 0
    for e, (curve, head) in zip(layout.edges, drawn):
        pts, arrow = arrowed(e.points)
        assert _path_points(curve) == [[(round(x, 1), round(y, 1)) for x, y in pts]]
        assert _path_points(head) == [[(round(x, 1), round(y, 1)) for x, y in arrow]]


def test_long_edges_are_drawn_as_their_two_ends_where_the_window_would(sample):
    """An export draws edges longer than 1200 x 800 px as their first and last 48 px, as the window
    does, where there are 64 or more (`long_edges="auto"`); "ends" always, "whole" never; the arrow
    stays at the target."""
    from jaxscope.layout.edge_shape import LONG_H, LONG_W, PARTIAL_MIN, STUB_LEN, long_edge_ids
    from jaxscope.layout.wire import layout_from_wire, layout_to_wire

    graph = two_chains()
    layout = compute_layout(graph, frozenset(), engine="layered")
    long = long_edge_ids(layout.edges)
    assert len(long) >= PARTIAL_MIN and long == long_edge_ids(layout_from_wire(layout_to_wire(layout)).edges)
    for j, e in enumerate(layout.edges):
        xs, ys = [p[0] for p in e.points], [p[1] for p in e.points]
        assert (j in long) == (max(xs) - min(xs) > LONG_W or max(ys) - min(ys) > LONG_H)

    def drawn(svg: str) -> list[list[list[tuple[float, float]]]]:
        return [_path_points(g.findall(NS + "path")[0].get("d")) for g in groups(parse(svg), "edge")]

    whole, auto = drawn(render_svg(graph, layout, long_edges="whole")), drawn(render_svg(graph, layout))
    assert all(len(parts) == 1 for parts in whole)
    assert {j for j, parts in enumerate(auto) if len(parts) == 2} == set(long)
    for j in long:
        (head, tail), e = auto[j], layout.edges[j]
        assert head[0] == pytest.approx(e.points[0], abs=0.06)
        assert all(math.dist(p, e.points[0]) <= 1.5 * STUB_LEN for p in head)
        assert all(math.dist(p, e.points[-1]) <= 1.5 * STUB_LEN for p in tail)  # it ends at the arrow's base
    assert auto == drawn(render_svg(graph, layout, long_edges="ends"))
    small_graph, small_layout = sample
    few = long_edge_ids(small_layout.edges)
    assert len(few) < PARTIAL_MIN
    assert drawn(render_svg(small_graph, small_layout)) == drawn(render_svg(small_graph, small_layout, long_edges="whole"))
    with pytest.raises(ValueError, match="long_edges must be one of auto, ends, whole"):
        render_svg(graph, layout, long_edges="some")


def test_an_overview_png_draws_long_edges_as_their_ends_too(tmp_path):
    from PySide6.QtGui import QImage

    graph = two_chains()
    layout = compute_layout(graph, frozenset(), engine="layered")
    inked = {}
    for mode in ("whole", "auto"):
        out = tmp_path / f"{mode}.png"
        export(graph, layout, str(out), dpi=16, long_edges=mode)  # labels far too small: the overview painter
        image = QImage(str(out))
        background = image.pixelColor(0, 0)
        inked[mode] = sum(image.pixelColor(x, y) != background for x in range(image.width()) for y in range(image.height()))
    assert 0 < inked["auto"] < inked["whole"]
