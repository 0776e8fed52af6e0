"""QtGraphView on real trace results (tests/fixtures) and on a synthetic 20k-node graph, headless."""

from __future__ import annotations

import collections
import gc
import os
import pathlib
import random

import numpy as np
import pytest
from PySide6 import QtCore
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QImage, QWheelEvent
from PySide6.QtWidgets import QApplication

from jaxscope.layout.engine import compute_layout
from jaxscope.qt.graph.scene_items import TEXT_LOD, TINY_PX, EdgeTileItem, NodeTileItem
from jaxscope.qt.graph.tooltips import tooltip_html
from jaxscope.qt.graph.view import QtGraphView
from jaxscope.render.svg import NodeIndex, node_tooltip
from jaxscope.schema.expansion import auto_expanded
from jaxscope.schema.graph import Body, Edge, Graph, Node, SourceLoc
from jaxscope.schema.layout import Layout
from jaxscope.schema.trace import TraceResult
from tests.conftest import two_chains

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
NAMES = ("basics_predict", "basics_loss", "cond", "scan")


def load(name: str) -> Graph:
    return TraceResult.from_json((FIXTURES / f"{name}.json").read_text(encoding="utf-8")).graph


def laid_out(name: str, expanded: frozenset[str] | None = None) -> tuple[Graph, Layout]:
    graph = load(name)
    return graph, compute_layout(graph, auto_expanded(graph) if expanded is None else expanded)


@pytest.fixture
def make_view(qtbot):
    def make(graph: Graph, layout: Layout, theme: str = "light") -> QtGraphView:
        view = QtGraphView()
        qtbot.addWidget(view)
        view.resize(1100, 800)
        view.set_graph(graph, layout, theme)
        view.show()
        qtbot.waitExposed(view)
        view.fit_all()
        return view

    return make


def centre_of(view: QtGraphView, path: str) -> QPoint:
    rect = view.scene_node_rect(path)
    assert rect is not None, path
    return view.mapFromScene(rect.center())


def node_tiles(view: QtGraphView) -> list[NodeTileItem]:
    return [item for item in view.scene().items() if isinstance(item, NodeTileItem)]


# --------------------------------------------------------------------------- building


@pytest.mark.parametrize("name", NAMES)
def test_every_box_is_drawn(make_view, name):
    graph, layout = laid_out(name)
    view = make_view(graph, layout)
    assert view.node_count == len(layout.nodes)
    view.grab()
    assert sum(tile.painted for tile in node_tiles(view)) == len(layout.nodes)
    assert view.zoom() >= TEXT_LOD  # small fixtures fit at full detail: text is drawn
    for box in layout.nodes:
        rect = view.scene_node_rect(box.path)
        assert rect is not None and abs(rect.center().x() - box.x) < 1e-6 and abs(rect.center().y() - box.y) < 1e-6
    assert view.scene_node_rect("no-such-node") is None


def test_empty_layout(make_view):
    graph = Graph("empty", {"b0": Body("b0", "empty", (), (), 0, 0)})
    view = make_view(graph, Layout(16.0, 16.0, (), ()))
    assert view.node_count == 0 and view.search("x") == [] and view.dataflow_cone("x", "up") == set()
    view.zoom_in()
    assert not view.grab().isNull()


def test_items_are_batched(make_view):
    graph, layout = laid_out("basics_loss")
    view = make_view(graph, layout)
    tiles = [item for item in view.scene().items() if isinstance(item, (NodeTileItem, EdgeTileItem))]
    assert len(tiles) < 10 < len(layout.nodes)
    assert len(view.scene().items()) == len(tiles) + 5  # clusters, titles, two tile layers, the overview


def test_stub_copies_select_together(make_view, sample, qtbot):
    graph, layout = sample  # has "in3" and its stub copy "in3#0"
    view = make_view(graph, layout)
    with qtbot.waitSignal(view.selection_changed) as blocker:
        view.select_paths(["in3#0"])
    assert blocker.args == [["in3"]]
    assert view.selected_paths() == ["in3"]
    tooltip = view.tooltip_at(centre_of(view, "in3#0"))
    assert tooltip == node_tooltip(NodeIndex(graph).get("in3"), "in3")


# --------------------------------------------------------------------------- selection


def test_select_paths_emits_and_centres(make_view, qtbot):
    graph, layout = laid_out("basics_predict")
    view = make_view(graph, layout)
    view.set_scale(2.0)
    view.centerOn(0, 0)
    with qtbot.waitSignal(view.selection_changed) as blocker:
        view.select_paths(["e12", "e0:0/e1", "nope"])
    assert blocker.args == [["e12", "e0:0/e1"]]
    assert view.selected_paths() == ["e12", "e0:0/e1"]
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    for path in ("e12", "e0:0/e1"):
        assert visible.contains(view.scene_node_rect(path))
    with qtbot.assertNotEmitted(view.selection_changed):
        view.select_paths(["e12", "e0:0/e1"])  # no change, no signal
    with qtbot.waitSignal(view.selection_changed) as blocker:
        view.clear_selection()
    assert blocker.args == [[]]


def test_revealing_a_few_nodes_of_a_fitted_big_graph_zooms_in_to_read_them(make_view):
    """A search or guide link on a big graph fitted at a tiny zoom: its matches are shown readable,
    not as dots at that zoom; a view zoomed in already is only moved."""
    graph = two_chains(400)
    view = make_view(graph, compute_layout(graph, frozenset()))
    assert view.zoom() < TEXT_LOD
    view.select_paths(["l200", "l201", "l202"])
    assert view.zoom() >= TEXT_LOD
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    assert all(visible.contains(view.scene_node_rect(p)) for p in ("l200", "l201", "l202"))
    view.set_scale(2.0)
    view.select_paths(["l10"])
    assert view.zoom() == 2.0


def test_click_selects_ctrl_adds_empty_clears(make_view, qtbot):
    graph, layout = laid_out("basics_predict")
    view = make_view(graph, layout)
    with qtbot.waitSignal(view.selection_changed) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=centre_of(view, "e3"))
    assert blocker.args == [["e3"]]
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier, pos=centre_of(view, "e0:0/e0"))
    assert view.selected_paths() == ["e3", "e0:0/e0"]
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, pos=centre_of(view, "e4"))
    assert view.selected_paths() == ["e3", "e0:0/e0", "e4"]
    qtbot.mouseClick(
        view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier, pos=centre_of(view, "e3")
    )  # Ctrl toggles
    assert view.selected_paths() == ["e0:0/e0", "e4"]
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(3, 3))  # empty corner
    assert view.selected_paths() == []
    view.select_paths(["e4"])
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert view.selected_paths() == []


def test_drag_pans_without_selecting(make_view, qtbot):
    graph, layout = laid_out("basics_predict")
    view = make_view(graph, layout)
    start = centre_of(view, "e3")
    before = view.mapToScene(view.viewport().rect().center())
    qtbot.mousePress(view.viewport(), Qt.MouseButton.LeftButton, pos=start)
    for k in range(1, 6):
        qtbot.mouseMove(view.viewport(), start + QPoint(20 * k, 10 * k))
    qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=start + QPoint(100, 50))
    after = view.mapToScene(view.viewport().rect().center())
    assert view.selected_paths() == []
    assert abs((before - after).x()) > 20 and abs((before - after).y()) > 10


def test_double_click_collapsed_owner_requests_toggle(make_view, qtbot):
    graph, layout = laid_out("basics_predict", frozenset())
    jit = next(box.path for box in layout.nodes if NodeIndex(graph).get(box.path).label == "jit")
    view = make_view(graph, layout)
    with qtbot.waitSignal(view.toggle_cluster_requested) as blocker:
        qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=centre_of(view, jit))
    assert blocker.args == [jit] and jit.startswith("e")
    assert "double-click to expand" in view.tooltip_at(centre_of(view, jit))

    # the window re-lays out and calls back with keep_view: the owner's clusters appear where it was
    where = view.mapFromScene(view.scene_node_rect(jit).topLeft())
    expanded = compute_layout(graph, frozenset([jit]))
    view.set_graph(graph, expanded, "light", keep_view=True)
    cluster = next(c for c in expanded.clusters if c.path == f"{jit}:0")
    now = view.mapFromScene(QPointF(cluster.x, cluster.y))
    assert (now - where).manhattanLength() <= 2
    # the double-click placed the view, on a view never moved since it opened too: a resize
    # (a dock shown, the window resized) keeps the place, it no longer refits the drawing
    scale = view.zoom()
    view.resize(view.width() + 60, view.height() + 40)
    qtbot.wait(10)
    assert view.zoom() == scale
    assert (view.mapFromScene(QPointF(cluster.x, cluster.y)) - now).manhattanLength() <= 60


def test_re_layouts_that_keep_the_view_do_not_creep(make_view, qtbot):
    """Expanding and collapsing again and again (or re-laying out) leaves the drawing exactly where
    it was: the view is restored to the device px, not rounded down each time."""
    graph, layout = laid_out("basics_predict", frozenset())
    jit = next(box.path for box in layout.nodes if NodeIndex(graph).get(box.path).label == "jit")
    expanded = compute_layout(graph, frozenset([jit]))
    view = make_view(graph, layout)
    view.set_scale(0.37)  # scene px are not whole device px
    view.centerOn(QPointF(101.3, 77.7))
    start = view.grab().toImage()
    where = view.mapFromScene(view.scene_node_rect(jit).topLeft())
    for _ in range(5):  # toggled by a double-click: the owner is the anchor
        qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=centre_of(view, jit))
        view.set_graph(graph, expanded, "light", keep_view=True)
        cluster = next(c for c in expanded.clusters if c.path == f"{jit}:0")
        assert view.mapFromScene(QPointF(cluster.x, cluster.y)) == where
        title = view.mapFromScene(QPointF(cluster.x + 12, cluster.y + 8))
        qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=title)
        view.set_graph(graph, layout, "light", keep_view=True)
        assert view.mapFromScene(view.scene_node_rect(jit).topLeft()) == where
    for _ in range(5):  # no anchor: the view's centre is kept
        view.set_graph(graph, expanded, "light", keep_view=True)
        view.set_graph(graph, layout, "light", keep_view=True)
    assert differing_pixels(start, view.grab().toImage()) == 0


def test_double_click_cluster_title_and_plain_node(make_view, qtbot):
    graph, layout = laid_out("cond")
    view = make_view(graph, layout)
    cluster = next(c for c in layout.clusters if c.path.endswith(":1"))
    title = view.mapFromScene(QPointF(cluster.x + 12, cluster.y + 8))
    assert "double-click to collapse" in view.tooltip_at(title)
    with qtbot.waitSignal(view.toggle_cluster_requested) as blocker:
        qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=title)
    assert blocker.args == [cluster.path.rpartition(":")[0]]
    with qtbot.waitSignal(view.node_activated) as blocker:
        qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=centre_of(view, "e0"))
    assert blocker.args == ["e0"]


def test_keep_view_keeps_zoom_and_selection(make_view, qtbot):
    graph, layout = laid_out("basics_predict")
    view = make_view(graph, layout)
    view.select_paths(["e3", "e0:0/e1"])
    view.set_scale(1.7)
    view.centerOn(view.scene_node_rect("e3").center())
    collapsed = compute_layout(graph, frozenset())
    with qtbot.waitSignal(view.selection_changed) as blocker:  # e0:0/e1 is gone
        view.set_graph(graph, collapsed, "light", keep_view=True)
    assert blocker.args == [["e3"]]
    assert view.zoom() == pytest.approx(1.7)
    view.set_graph(graph, layout, "light")  # a fresh view: fitted, nothing selected
    assert view.selected_paths() == []
    assert view.mapToScene(view.viewport().rect()).boundingRect().contains(view.content_rect())


def test_keep_view_keeps_search_and_highlight(make_view):
    graph, layout = laid_out("basics_predict")
    view = make_view(graph, layout)
    assert view.search("add") == ["e3", "e0:0/e2"]
    view.next_match()
    view.next_match()
    view.highlight_dataflow("out0", "up")
    view.set_graph(graph, compute_layout(graph, frozenset()), "light", keep_view=True)
    assert view.match_count == 1 and view.current_match_index == -1  # e0:0/e2 is inside the collapsed jit
    assert view.highlighted and "e0" in view.dataflow_cone("out0", "up")
    view.next_match()
    view.set_graph(graph, layout, "light", keep_view=True)
    assert view.match_count == 2 and view.current_match_index == 0 and view.highlighted
    view.set_graph(graph, layout, "light")
    assert view.match_count == 0 and not view.highlighted


def test_collapse_then_expand_again_shows_the_kept_scene(make_view):
    graph, layout = laid_out("basics_predict")
    view = make_view(graph, layout)
    first = view.scene()
    view.select_paths(["e3"])
    view.set_graph(graph, compute_layout(graph, frozenset()), "light", keep_view=True)
    assert view.scene() is not first
    view.set_theme("dark")
    view.set_graph(graph, layout, "dark", keep_view=True)  # the same Layout object: no rebuild
    assert view.scene() is first and view.selected_paths() == ["e3"]
    assert all(item.state.palette.background == view.view_state.palette.background for item in node_tiles(view))
    assert view.view_state.palette.background is not None and view.view_state.palette.background.lightness() < 128
    other, other_layout = laid_out("cond")
    view.set_graph(other, other_layout, "dark")
    view.set_graph(graph, layout, "dark")  # another graph came between: the kept scenes are gone
    assert view.scene() is not first and view.node_count == len(layout.nodes)


def test_values_between_the_same_two_boxes_are_drawn_as_one_curve():
    from jaxscope.qt.graph.scene_model import build_model
    from jaxscope.schema.layout import EdgePath

    graph, layout = laid_out("basics_predict")
    e = layout.edges[0]
    twins = (e, EdgePath(e.src, e.dst, e.points, e.routed, "f32[9]"), EdgePath(e.src, e.dst, e.points, not e.routed, e.aval))
    long_curve = ((0.0, 0.0), (0.0, 3000.0), (900.0, 3000.0), (900.0, 6000.0))
    far = tuple(EdgePath(e.src, e.dst, long_curve, True, a) for a in ("f32[1]", "f32[2]"))
    model = build_model(graph, Layout(1000.0, 6000.0, layout.nodes, twins + far, (), layout.engine, ()))
    drawn = sorted(j for ids, _ in model.edge_tiles for j in ids) + sorted(model.long_edges)
    assert drawn == [0, 2, 3]  # the twin is not drawn again; a dashed (unrouted) one on the same track is
    assert np.isnan(model.edge_box[[1, 4]]).all() and len(model.edges) == 5


def test_scene_model_tiles_boxes_and_edges_by_their_centres():
    """The model's tiles (bucketed in numpy) against a plain reference: a box goes to the tile of its
    centre, an edge to the edge tile (twice as big each way) of its bounding box's centre, unless
    it is bigger than a box tile."""
    import random

    from jaxscope.qt.graph.scene_model import EDGE_TILE_H, EDGE_TILE_W, TILE_H, TILE_W, build_model
    from jaxscope.schema.layout import EdgePath, NodeBox

    graph, layout = laid_out("basics_predict")
    rng = random.Random(7)
    paths = [b.path for b in layout.nodes]
    boxes = tuple(NodeBox(rng.choice(paths), rng.uniform(50, 5000), rng.uniform(30, 3000), rng.uniform(20, 90), 30.0) for _ in range(300))
    cubic = lambda x, y, dx, dy: ((x, y), (x + dx / 3, y + dy / 3), (x + 2 * dx / 3, y + 2 * dy / 3), (x + dx, y + dy))  # noqa: E731
    edges = [
        EdgePath("a", "b", cubic(rng.uniform(0, 5000), rng.uniform(0, 3000), rng.uniform(-300, 300), rng.uniform(10, 400)))
        for _ in range(200)
    ]
    edges += [EdgePath("a", "b", ((10.0, 10.0),)), EdgePath("a", "b", cubic(0.0, 0.0, 3000.0, 50.0))]
    edges += [
        EdgePath("a", "c", ((100.0, 100.0), (130.0, 90.0), (160.0, 140.0), (200.0, 200.0), (260.0, 230.0), (250.0, 300.0), (300.0, 320.0)))
    ]
    model = build_model(graph, Layout(5100.0, 3100.0, boxes, tuple(edges), (), layout.engine, ()))

    want: dict[tuple[int, int], list[int]] = {}
    for i, b in enumerate(boxes):
        want.setdefault((int(b.x // TILE_W), int(b.y // TILE_H)), []).append(i)
    assert [list(model.node_tiles[model.tile_of[k]]) for k in sorted(want)] == [want[k] for k in sorted(want)]
    for k, ids in want.items():
        t = model.tile_of[k]
        r = model.node_bounds[t]
        assert r.left() == min(boxes[i].x - boxes[i].w / 2 for i in ids)
        assert r.bottom() == pytest.approx(max(boxes[i].y + boxes[i].h / 2 for i in ids))
        assert all(model.nodes[i].tile == t for i in ids)
    tiled: dict[tuple[int, int], list[int]] = {}
    for j, e in enumerate(edges):
        if len(e.points) < 2:
            assert np.isnan(model.edge_box[j]).all()
            continue
        xs, ys = [p[0] for p in e.points], [p[1] for p in e.points]
        assert model.edge_box[j].tolist() == [min(xs), min(ys), max(xs), max(ys)]
        if max(xs) - min(xs) > TILE_W or max(ys) - min(ys) > TILE_H:
            assert j in model.long_edges
        else:
            tiled.setdefault((int((min(xs) + max(xs)) / 2 // EDGE_TILE_W), int((min(ys) + max(ys)) / 2 // EDGE_TILE_H)), []).append(j)
    assert [ids for ids, _ in model.edge_tiles] == [tiled[k] for k in sorted(tiled)]
    assert list(model.long_edges) == [201]


# --------------------------------------------------------------------------- search


def test_search_cycles_through_matches(make_view, qtbot):
    graph, layout = laid_out("basics_predict")
    view = make_view(graph, layout)
    found = view.search("DOT_gen")
    assert found == ["e1", "e0:0/e0"]
    assert view.match_count == 2 and view.current_match_index == -1
    assert view.next_match() == "e1" and view.current_match_index == 0
    assert view.selected_paths() == ["e1"]
    assert view.next_match() == "e0:0/e0"
    assert view.next_match() == "e1"  # wraps
    assert view.previous_match() == "e0:0/e0"
    assert view.previous_match() == "e1"
    assert view.search("f32[16,3]")  # avals
    assert "in3" in view.search("w2")  # input names
    assert view.search("") == [] and view.match_count == 0 and view.next_match() is None
    assert view.search("no such thing") == []


def test_search_by_line(make_view):
    graph, layout = laid_out("basics_predict")
    view = make_view(graph, layout)
    index = NodeIndex(graph)
    at_28 = [b.path for b in layout.nodes if (n := index.get(b.path)).source is not None and n.source.line == 28]
    assert at_28
    assert view.search(":28") == at_28
    assert view.search("line 28") == at_28
    assert view.search("basics.py:28") == at_28
    assert view.search("other.py:28") == []
    assert view.search(":2") == []  # line numbers match exactly
    assert set(view.search("basics.py")) == {b.path for b in layout.nodes if index.get(b.path).source is not None}


# --------------------------------------------------------------------------- dataflow


def test_dataflow_cones(make_view):
    graph, layout = laid_out("basics_predict")
    view = make_view(graph, layout)
    up = view.dataflow_cone("out0", "up")
    producers = {e.src.partition("#")[0] for e in layout.edges if e.dst == "out0"}
    assert producers and producers <= up and "out0" in up
    assert {"e0:0/e0", "in4", "e12"} <= up  # through the expanded jit cluster, to the inputs
    assert view.dataflow_cone("out0", "down") == {"out0"}
    down = view.dataflow_cone("in4", "down")
    assert {"in4", "e0:0/e0", "out0"} <= down and "in0" not in down  # x reaches the output, not b1
    assert view.dataflow_cone("e4", "both") == view.dataflow_cone("e4", "up") | view.dataflow_cone("e4", "down")
    assert view.dataflow_cone("missing", "up") == set()
    with pytest.raises(ValueError):
        view.dataflow_cone("out0", "sideways")

    view.highlight_dataflow("e4", "up")
    assert view.highlighted
    cone = view.dataflow_cone("e4", "up")
    lit = {view.model.nodes[i].base for i in view.view_state.cone_nodes}
    assert lit == cone and "e12" not in lit
    assert not view.grab().isNull()
    view.clear_highlight()
    assert not view.highlighted


# --------------------------------------------------------------------------- zoom, fit, look


def test_fit_all_shows_everything(make_view, qtbot):
    graph, layout = laid_out("basics_loss")
    view = make_view(graph, layout)
    view.set_scale(3.0)
    view.centerOn(0, 0)
    qtbot.keyClick(view, Qt.Key.Key_F)
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    assert visible.contains(view.content_rect())
    assert visible.width() < 2 * view.content_rect().width() or visible.height() < 2 * view.content_rect().height()


def test_zoom_changes_the_transform(make_view, qtbot):
    graph, layout = laid_out("basics_predict")
    view = make_view(graph, layout)
    s = view.transform().m11()
    view.zoom_in()
    assert view.transform().m11() == pytest.approx(s * 1.25)
    view.zoom_out()
    assert view.transform().m11() == pytest.approx(s)
    qtbot.keyClick(view, Qt.Key.Key_Plus)
    assert view.transform().m11() > s
    qtbot.keyClick(view, Qt.Key.Key_0)
    assert view.transform().m11() == pytest.approx(s)

    # the wheel zooms around the cursor: the scene point under it stays put
    pos = centre_of(view, "e3")
    target = view.mapToScene(pos)
    event = QWheelEvent(
        QPointF(pos),
        QPointF(view.viewport().mapToGlobal(pos)),
        QPoint(0, 0),
        QPoint(0, 240),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(view.viewport(), event)
    assert view.transform().m11() > s * 1.3
    assert (view.mapFromScene(target) - pos).manhattanLength() <= 2


def test_tooltips_are_escaped(hostile, make_view):
    graph, layout = hostile
    view = make_view(graph, layout)
    text = view.tooltip_at(centre_of(view, "e0"))
    assert "<script>" in text  # plain text as the user wrote it ...
    shown = tooltip_html(text)
    assert "<script>" not in shown and "&lt;script&gt;" in shown  # ... but escaped for QToolTip
    assert shown.startswith("<pre>") and shown.endswith("</pre>")
    assert view.tooltip_at(QPoint(1, 1)) == ""
    assert not view.grab().isNull()


def test_line_colours_and_theme(make_view):
    graph, layout = laid_out("basics_predict")
    view = make_view(graph, layout)
    view.set_line_colours({"e3": "#ff0000", "e0:0/e1": "#00aa00", "nope": "#0000ff", "e4": "not a colour"})
    assert set(view.model.nodes[i].base for i in view.view_state.stripes) == {"e3", "e0:0/e1"}
    image = view.grab().toImage()
    rect = view.scene_node_rect("e3")
    inside = view.mapFromScene(QPointF(rect.left() + 2.5, rect.center().y()))
    red = image.pixelColor(inside * view.devicePixelRatioF())
    assert red.red() > 200 and red.green() < 80, red.name()
    assert view.backgroundBrush().color() == QColor("#ffffff")
    view.set_theme("dark")
    assert view.theme.name == "dark"
    assert view.backgroundBrush().color() == QColor("#16191e")
    assert not view.grab().isNull()
    view.set_line_colours({"e3#1": "#ff0000"})  # a stub copy's path stands for its base
    assert set(view.model.nodes[i].base for i in view.view_state.stripes) == {"e3"}
    assert all(c == QColor("#ff0000") for c in view.view_state.stripes.values())


SHOTS = os.environ.get("JAXSCOPE_SHOTS")  # a folder to keep the screenshots in, to look at them


@pytest.mark.parametrize("name", ("basics_predict", "cond"))
@pytest.mark.parametrize("theme", ("light", "dark"))
def test_screenshots(make_view, tmp_path, name, theme):
    graph, layout = laid_out(name)
    view = make_view(graph, layout, theme)
    out = pathlib.Path(SHOTS) if SHOTS else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}_{theme}.png"
    assert view.grab().save(str(path))
    image = QImage(str(path))
    assert not image.isNull()
    background = QColor("#ffffff" if theme == "light" else "#16191e")
    colours = {image.pixelColor(x, y).name() for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
    assert len(colours) > 20 and background.name() in colours  # a drawing, on the theme's page


# --------------------------------------------------------------------------- big graphs


def big_graph(n: int, seed: int = 0) -> Graph:
    """A synthetic dataflow of `n` equations with short and long edges."""
    rnd = random.Random(seed)
    prims = ("add", "mul", "dot_general", "tanh", "reduce_sum", "reshape", "exp", "sub")
    nodes = [Node(f"in{i}", "input", f"x{i}", avals=("f32[8,8]",)) for i in range(8)]
    ids = [node.id for node in nodes]
    edges = []
    for i in range(n):
        nodes.append(Node(f"e{i}", "eqn", prims[i % len(prims)], avals=("f32[8,8]",), source=SourceLoc("model.py", i % 500 + 1)))
        for port in range(1 if i % 3 else 2):
            edges.append(Edge(ids[max(0, len(ids) - 1 - int(rnd.expovariate(0.2)))], f"e{i}", 0, port))
        ids.append(f"e{i}")
    nodes.append(Node("out0", "output", "out", avals=("f32[8,8]",)))
    edges.append(Edge(ids[-1], "out0"))
    return Graph("big", {"b0": Body("b0", "big", tuple(nodes), tuple(edges), n, n)})


def differing_pixels(a: QImage, b: QImage) -> int:
    assert a.size() == b.size()
    fmt = QImage.Format.Format_ARGB32
    ca, cb = a.convertToFormat(fmt), b.convertToFormat(fmt)  # kept alive while their bits are read
    pa, pb = (np.frombuffer(img.constBits(), np.uint32, img.width() * img.height()) for img in (ca, cb))
    return int(np.count_nonzero(pa != pb))


@pytest.mark.slow
def test_big_graph_builds_and_renders(make_view):
    graph = big_graph(20_000)
    layout = compute_layout(graph, frozenset(), engine="layered")
    view = make_view(graph, layout)
    assert view.node_count == len(layout.nodes) > 20_000
    assert len(view.scene().items()) < len(layout.nodes) / 10  # batched
    frozen = gc.get_freeze_count()
    ahead = view.model_for(graph, compute_layout(graph, frozenset(), engine="layered"))  # as on the layout thread
    assert ahead is not None and gc.get_freeze_count() > frozen  # out of the collector's reach: no GUI-thread rescan
    assert any(isinstance(item, EdgeTileItem) and item.cull_each for item in view.scene().items())
    # fit-all: every tile is a few px, and the overview stands for them all
    view.select_paths(["e10000"], center=False)
    view.search(":17")
    items = view.scenes.shown.items
    overview = view.grab().toImage()
    assert items.overview.isVisible() and not any(layer.isVisible() for layer in items.layers)
    assert items.overview.painted == len(layout.nodes)
    items.set_scale(1e9)  # every tile shown, as zoomed in (the view's scale stays): they draw the same picture
    assert not items.overview.isVisible() and all(layer.isVisible() for layer in items.layers)
    tiles = view.grab().toImage()
    assert sum(tile.painted for tile in node_tiles(view)) == len(layout.nodes)
    assert differing_pixels(overview, tiles) <= 0.002 * overview.width() * overview.height()
    items.set_scale(view.zoom())
    items.overview.setVisible(False)  # neither: only the long edges are left
    assert differing_pixels(overview, view.grab().toImage()) > 1000
    items.overview.setVisible(True)
    for scale in (0.05, 0.2, 1.0):  # every level of detail; a tile of a box or two can be tiny at any
        view.set_scale(scale)
        view.centerOn(view.scene_node_rect("e10000").center())
        shown = view.grab().toImage()
        assert all(layer.isVisible() for layer in items.layers)
        tiles = [*node_tiles(view), *(t for t in view.scene().items() if isinstance(t, EdgeTileItem) and not t.cull_each)]
        tiny = [t for t in tiles if max(t.extent.width(), t.extent.height()) * scale < TINY_PX]
        assert all(t.isVisible() == (t not in tiny) for t in tiles)  # the overview stands for the tiny ones
        n_tiny = len([t for t in tiny if isinstance(t, NodeTileItem)])
        assert items.overview.count == n_tiny and items.overview.isVisible() == (n_tiny > 0)
        if scale == 0.05:  # some tiles tiny, some not: the overview and the tiles draw together
            assert 0 < n_tiny < len(node_tiles(view))
            # the overview outlines the selected boxes of its tiles only (the others' own tiles do)
            ov = items.overview
            node_tiles_ = view.model.node_tiles
            small, large = node_tiles_[ov.order[0]][0], node_tiles_[ov.order[-1]][0]
            view.select_paths([view.model.nodes[i].path for i in (small, large)], center=False)
            assert ov.within(ov.count) == {small}
            view.select_paths(["e10000"], center=False)
        items.set_scale(1e9)
        assert differing_pixels(shown, view.grab().toImage()) <= 0.002 * shown.width() * shown.height()
        items.set_scale(scale)
    assert view.path_at(centre_of(view, "e10000")) == "e10000"
    assert len(view.search(":17")) == 40
    view.highlight_dataflow("e10000", "both")
    view.fit_all()
    assert not view.grab().isNull()


def test_a_first_paint_that_shows_every_tile_as_a_blob_comes_before_the_tile_items(make_view, qtbot):
    """A big drawing seen whole paints every tile as a blob: `model_for` leaves the tile items for
    after that first paint (gpt-50k: ~6.5k items, 30-45 ms before it), which is the same picture;
    the view then makes them a few per event-loop turn, or all at once when a zoom shows them."""
    from jaxscope.qt.graph import view as graph_view

    graph = big_graph(6000)
    view = make_view(graph, compute_layout(graph, frozenset(), engine="layered"))
    view.resize(300, 220)
    view.fit_all()
    view.grab()
    assert view.scenes.shown.items.all_tiny(view.zoom()) and not view.scenes.shown.items.pending  # set_graph's own build: all made
    view.select_paths(["e3000"], center=False)
    grown = compute_layout(graph, frozenset(), engine="layered")  # another layout of the graph shown, as an expand
    model = view.model_for(graph, grown)
    items = view.scenes.ahead[-1][2]
    assert items.pending and items.node_items == [] and items.edge_items == [] and items.long_item is not None
    view.set_graph(graph, grown, keep_view=True, model=model)
    assert view.scenes.shown.items is items and items.pending
    first = view.grab().toImage()
    assert items.overview.painted == len(grown.nodes) and view.selected_paths() == ["e3000"]
    view.select_paths(["e10"], center=False)  # a tile not made yet: the overview outlines it
    view.select_paths(["e3000"], center=False)
    turns = 0
    while items.pending:
        view.make_pending_tiles()  # what each event-loop turn does
        turns += 1
    assert turns == -(-(len(model.node_tiles) + len(model.edge_tiles)) // graph_view.TILES_PER_TURN)
    assert [t.tile for t in items.node_items] == list(range(len(model.node_tiles)))
    assert [t.indices for t in items.edge_items] == [ids for ids, _ in model.edge_tiles]
    assert differing_pixels(first, view.grab().toImage()) == 0
    view.set_scale(0.05)  # the tiles themselves now
    view.centerOn(view.scene_node_rect("e3000").center())
    view.grab()
    assert all(layer.isVisible() for layer in items.layers) and any(t.painted for t in items.node_items)
    # zoomed in before the tiles were all made: the rest are made then
    view.fit_all()
    view.grab()
    again = compute_layout(graph, frozenset(), engine="layered")
    view.set_graph(graph, again, keep_view=True, model=view.model_for(graph, again))
    pending = view.scenes.shown.items
    assert pending.pending
    view.set_scale(1.0)
    assert not pending.pending and len(pending.node_items) == len(view.model.node_tiles)
    view.centerOn(view.scene_node_rect("e3000").center())
    view.grab()
    assert any(t.painted for t in pending.node_items) and view.path_at(centre_of(view, "e3000")) == "e3000"


def long_chain(prims: tuple[str, ...] = ("add",)) -> Graph:
    """400 steps, each also reading the value 30 steps back (long edges), primitives in turn."""
    nodes = [Node("in0", "input", "x", avals=("f32[8]",))]
    edges = []
    for i in range(400):
        nodes.append(Node(f"e{i}", "eqn", prims[i % len(prims)], avals=("f32[8]",)))
        edges.append(Edge(nodes[-2].id, f"e{i}", 0, 0))
        edges.append(Edge(f"e{i - 30}" if i >= 30 else "in0", f"e{i}", 0, 1))
    return Graph("long", {"b0": Body("b0", "long", tuple(nodes), tuple(edges), 400, 400)})


def test_tiles_get_their_bounds_and_blob_colours_from_the_model_and_a_warmed_model_paints_the_same(make_view):
    """The model (built off the GUI thread in the app) holds each node tile's bounds and commonest
    family, and `model_for` warms it for the first paint: the picture is the one a model built on
    the GUI thread paints."""
    graph = long_chain(("add", "mul", "exp", "add", "dot_general", "reduce_sum", "add"))
    layout = compute_layout(graph, frozenset(), engine="layered")
    view = make_view(graph, layout)
    model = view.model
    tiles = node_tiles(view)
    assert len(tiles) > 5 and model.long_edges
    for tile in tiles:
        union = model.nodes[tile.indices[0]].rect
        for i in tile.indices[1:]:
            union = union.united(model.nodes[i].rect)
        assert tile.extent == union
        counts = collections.Counter(model.nodes[i].fam for i in tile.indices)
        assert model.tile_families()[tile.tile] == counts.most_common(1)[0][0]
    assert len(set(model.tile_families())) > 1
    for scale in (view.zoom(), 0.02):  # fit-all, and every tile a blob
        view.set_scale(scale)
        cold = view.grab().toImage()
        again = compute_layout(graph, frozenset(), engine="layered")
        warmed = view.model_for(graph, again)
        assert warmed is not None and "tile_families" in warmed.made()
        assert view.long_edges_partial and not warmed.far_lines_made() & set(warmed.long_edges)  # drawn as their ends: nothing far off
        view.set_long_edges_whole(True)
        whole = view.model_for(graph, again)
        assert whole is not None and whole.far_lines_made() >= set(warmed.long_edges)  # whole: their far lines warmed
        view.set_long_edges_whole(False)
        view.set_graph(graph, again, keep_view=True, model=warmed)
        assert view.model is warmed
        assert differing_pixels(cold, view.grab().toImage()) == 0


def test_long_edges_are_culled_by_their_curve_quarters(make_view):
    """The long edges' item tests thousands of boxes in one numpy expression: the same edges as a
    `QRectF.intersects` per bounding box (far) or per quarter of the curve (nearer)."""
    graph = long_chain()
    view = make_view(graph, compute_layout(graph, frozenset(), engine="layered"))
    model = view.model
    item = next(i for i in view.scene().items() if isinstance(i, EdgeTileItem) and i.cull_each)
    assert len(item.indices) > 100

    def halves(c):
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = c
        a, b, d = ((x0 + x1) / 2, (y0 + y1) / 2), ((x1 + x2) / 2, (y1 + y2) / 2), ((x2 + x3) / 2, (y2 + y3) / 2)
        e, f = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2), ((b[0] + d[0]) / 2, (b[1] + d[1]) / 2)
        m = ((e[0] + f[0]) / 2, (e[1] + f[1]) / 2)
        return ((x0, y0), a, e, m), (m, f, d, (x3, y3))

    def bounds(j):
        x0, y0, x1, y1 = model.edge_box[j].tolist()
        return QtCore.QRectF(x0, y0, x1 - x0, y1 - y0)

    def quarter_rects(j):
        pts = model.edges[j].points
        if len(pts) != 4:
            return [bounds(j)]
        quarters = [q for half in halves(pts) for q in halves(half)]
        return [
            QtCore.QRectF(QPointF(min(p[0] for p in q), min(p[1] for p in q)), QPointF(max(p[0] for p in q), max(p[1] for p in q)))
            for q in quarters
        ]

    rnd = random.Random(1)
    width, height = view.content_rect().width(), view.content_rect().height()
    hits = 0
    for _ in range(60):
        w, h = rnd.choice([(1600, 1000), (30, 1000), (1600, 30)])
        area = QtCore.QRectF(rnd.uniform(0, width), rnd.uniform(0, height), w, h)
        far = {j for j in item.indices if bounds(j).intersects(area)}
        near = {j for j in far if any(q.intersects(area) for q in quarter_rects(j))}
        assert item.exposed_edges(area, quarters=False) == far
        assert item.exposed_edges(area, quarters=True) == near
        hits += len(near)
    assert hits > 0


def test_the_window_draws_an_edge_and_its_arrowhead_as_the_svg_export_does():
    """`edge_shapes` (the window's tiles) and the SVG writer both draw `edge_shape.arrowed`: the same
    curve end and the same triangle, for a cubic, a polyline and an edge too short to shorten."""
    from jaxscope.layout.edge_shape import arrowed
    from jaxscope.qt.graph.batch_item import edge_shapes

    for pts in (
        [(10.0, 0.0), (10.0, 40.0), (60.0, 60.0), (60.0, 100.0)],
        [(0.0, 0.0), (50.0, 0.0), (50.0, 50.0)],
        [(0.0, 0.0), (3.0, 4.0)],
    ):
        path, arrow = edge_shapes(pts)
        want, head = arrowed(pts)
        end = path.currentPosition()
        assert (end.x(), end.y()) == want[-1]
        assert path.elementCount() == len(want)
        assert arrow is not None and [(p.x(), p.y()) for p in arrow] == list(head)


def test_partial_edge_is_the_two_ends_of_the_curve_itself():
    from jaxscope.layout.edge_shape import partial_edge

    curve = ((0.0, 0.0), (0.0, 400.0), (300.0, 600.0), (300.0, 1000.0))

    def at(c, t):
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = c
        u = 1 - t
        return (
            u**3 * x0 + 3 * u * u * t * x1 + 3 * u * t * t * x2 + t**3 * x3,
            u**3 * y0 + 3 * u * u * t * y1 + 3 * u * t * t * y2 + t**3 * y3,
        )

    ends = partial_edge(curve, 48.0)
    assert ends is not None
    head, tail = ends
    t = 48.0 / np.hypot(300.0, 1000.0)
    assert head[0] == curve[0] and tail[-1] == curve[-1]
    for s in (0.0, 0.3, 0.5, 1.0):  # each end's own cubic runs along the original curve
        assert at(head, s) == pytest.approx(at(curve, s * t))
        assert at(tail, s) == pytest.approx(at(curve, 1 - t + s * t))
    assert partial_edge(((0.0, 0.0), (0.0, 30.0), (0.0, 60.0), (0.0, 100.0)), 48.0) is None  # short: drawn whole
    head, tail = partial_edge(((0.0, 0.0), (0.0, 500.0), (500.0, 500.0)), 48.0)  # a polyline: along its end segments
    assert head == [(0.0, 0.0), (0.0, 48.0)] and tail == [(452.0, 500.0), (500.0, 500.0)]


def test_long_edges_are_made_for_the_screen_only_and_draw_what_unculled_ones_draw(make_view, monkeypatch):
    """Filling its pixmap cache, Qt gives the long edges' item its whole bounding rect as exposed:
    the item makes and draws what lands on the pixmap only (a first paint at zoom 1 made the ends
    of every long edge of the drawing: 0.38 s at mlp-50k), and an edge drawn as its two ends is
    culled by the boxes of those. Zoomed in and panned about, it shows exactly what the same item
    shows culled by that whole rect and by each curve's quarters."""
    import jaxscope.qt.graph.edge_items as edge_items

    graph = two_chains(600, 40)
    layout = compute_layout(graph, frozenset(), engine="layered")
    culled, whole = make_view(graph, layout), make_view(graph, layout)
    item = culled.scenes.shown.items.long_item
    assert item is not None and item.partial
    on_device, exposed_edges = edge_items.on_device, edge_items.EdgeTileItem.exposed_edges

    def grab(view):
        reference = view is whole
        monkeypatch.setattr(edge_items, "on_device", (lambda painter, exposed: exposed) if reference else on_device)
        monkeypatch.setattr(
            edge_items.EdgeTileItem,
            "exposed_edges",
            (lambda item, area, quarters, ends=False: exposed_edges(item, area, quarters)) if reference else exposed_edges,
        )
        return view.grab().toImage()

    middle = culled.content_rect().center()
    for view in (culled, whole):
        view.zoom_to(1.0, middle)
    assert differing_pixels(grab(culled), grab(whole)) == 0
    made = item.shapes_made()
    assert 0 < made < len(item.indices) // 4
    assert whole.scenes.shown.items.long_item.shapes_made() > 3 * made
    for dy in (120, 370, -60, 800):
        for view in (culled, whole):
            bar = view.verticalScrollBar()
            bar.setValue(bar.value() + dy)
        assert differing_pixels(grab(culled), grab(whole)) == 0


def test_many_long_edges_are_drawn_as_their_ends_and_whole_where_selected_or_highlighted(make_view):
    """Hundreds of long curves across the drawing hid the boxes: they are drawn as their two ends,
    except those of the selected boxes and of a highlighted dataflow cone, or all with the switch."""
    from jaxscope.layout.edge_shape import PARTIAL_MIN

    graph = two_chains()
    view = make_view(graph, compute_layout(graph, frozenset(), engine="layered"))
    model, item = view.model, view.scenes.shown.items.long_item
    assert item is not None and len(item.indices) >= PARTIAL_MIN and view.long_edges_partial

    def whole() -> set[int]:
        return {j for (_, _, partial), js in item.groups().items() if not partial for j in js}

    assert whole() == set()
    assert not {"long_edges_at", "edge_ends"} & model.made()  # nothing selected: no per-edge map made (75 ms at 50k)
    j = item.indices[len(item.indices) // 2]
    src, dst = model.edge_ends()[j]
    x0, y0, x1, y1 = model.edge_box[j].tolist()
    view.zoom_to(1.0, QPointF((x0 + x1) / 2, (y0 + y1) / 2))  # mid-way along long edges: only their ends would show
    assert view.zoom() == 1.0 and view.mapToScene(view.viewport().rect().center()).y() == pytest.approx((y0 + y1) / 2, abs=1)
    partial_image = view.grab().toImage()
    at = view.mapFromScene(model.nodes[model.by_base[src][0]].rect.center())
    assert "drawn as" in view.tooltip_at(at) and "click the box" in view.tooltip_at(at)
    view.select_paths([src], center=False)
    assert j in whole() and all(src in model.edge_ends()[k] for k in whole())
    assert "drawn as" not in view.tooltip_at(at)  # shown whole now
    view.clear_selection()
    assert whole() == set()
    view.highlight_dataflow(dst, "up")
    assert j in whole() and whole() == {k for k in item.indices if k in view.view_state.cone_edges}
    view.clear_highlight()
    assert differing_pixels(partial_image, view.grab().toImage()) == 0

    view.set_long_edges_whole(True)
    assert not view.long_edges_partial and whole() == set(item.indices)
    assert differing_pixels(partial_image, view.grab().toImage()) > 0  # the item's pixmap cache was redrawn
    view.set_long_edges_whole(False)
    assert differing_pixels(partial_image, view.grab().toImage()) == 0

    # switched while the scene was kept (another layout shown): shown again, it is drawn whole, not from its old pixmap
    view.set_graph(graph, compute_layout(graph, frozenset(), engine="layered", max_span=2), keep_view=True)
    view.set_long_edges_whole(True)
    view.set_graph(graph, item.model.layout, keep_view=True)
    assert view.scenes.shown.items.long_item is item and not item.partial
    shown = view.grab().toImage()
    item.update()
    assert differing_pixels(shown, view.grab().toImage()) == 0 and differing_pixels(shown, partial_image) > 0
    view.set_long_edges_whole(False)
    view.set_graph(graph, other := compute_layout(graph, frozenset(), engine="layered", max_span=3), keep_view=True)
    view.set_theme("dark")  # and a theme switched meanwhile
    view.set_graph(graph, item.model.layout, "dark", keep_view=True)
    assert view.scenes.shown.items.long_item is item and other is not item.model.layout
    shown = view.grab().toImage()
    item.update()
    assert differing_pixels(shown, view.grab().toImage()) == 0

    few, layout = laid_out("scan")  # a handful of long edges at most: all whole
    view.set_graph(few, layout)
    assert not view.long_edges_partial


def test_a_scene_too_big_to_keep_is_freed_before_the_next_is_built(make_view, monkeypatch):
    """A 50k-box scene is tens of MB: the one shown goes at once, not when the event loop next
    runs, so that two are never alive together; a small one is kept to be shown again."""
    from jaxscope.qt.graph import scene_cache

    graph, layout = laid_out("cond")
    view = make_view(graph, layout)
    other = compute_layout(graph, frozenset())
    assert other is not layout and len(other.nodes) != len(layout.nodes)
    kept = view.scene()
    view.set_graph(graph, other, keep_view=True)
    assert kept.items()  # small enough: kept as it was
    view.set_graph(graph, layout, keep_view=True)
    assert view.scene() is kept  # shown again, not rebuilt

    monkeypatch.setattr(scene_cache, "KEPT_NODES", 0)
    old = view.scene()
    view.set_graph(graph, other, keep_view=True)
    assert view.scene() is not old and old.items() == []  # before any event was processed
    assert view.node_count == len(other.nodes) and not view.grab().isNull()


def test_a_scene_model_built_ahead_is_used_and_a_kept_scene_needs_none(make_view):
    """`model_for` (run on the layout client's thread by the app) builds what `set_graph` would;
    `set_graph` takes it only for its own graph and layout, and a layout whose scene is kept
    needs no model at all."""
    graph, layout = laid_out("basics_predict")
    view = make_view(graph, layout)
    other = compute_layout(graph, frozenset())  # the same graph, a second layout
    model = view.model_for(graph, other)
    assert model is not None and model.layout is other
    view.set_graph(graph, other, keep_view=True, model=model)
    assert view.model is model
    assert view.model_for(graph, layout) is None  # the first scene is kept: swapped back, not built
    stale = view.model_for(graph, compute_layout(graph, frozenset()))
    view.set_graph(graph, layout, keep_view=True, model=stale)  # another layout's model: not used
    assert view.model is not stale and view.model.layout is layout


def test_a_model_built_ahead_brings_the_stripes_of_the_colours_given(make_view):
    """The app passes its source-line colours to `model_for` on the layout thread, and the same
    dict to `set_graph`: the stripes are made there, once, and are what `set_line_colours` makes."""
    graph, layout = laid_out("basics_predict")
    view = make_view(graph, layout)
    colours = {"e3": "#ff0000", "e0:0/e1": "#00aa00", "nope": "#0000ff", "e4": "not a colour"}
    other = compute_layout(graph, frozenset(), engine="layered")
    model = view.model_for(graph, other, colours)
    assert model is not None and "stripes" in model.made()
    made = model.stripes(colours)  # the ones made ahead for this dict, not made again
    view.set_graph(graph, other, keep_view=True, model=model, line_colours=colours)
    assert view.view_state.stripes is made and {model.nodes[i].base for i in made} == {"e3"}  # e0 is collapsed
    view.set_line_colours(colours)  # a copy: made anew, alike
    assert view.view_state.stripes is not made and view.view_state.stripes == made


def test_a_model_built_ahead_makes_its_look_ups_only_for_what_carries_over(make_view):
    """The base path map (~9 ms at 72k boxes) is what carrying a selection, search or highlight
    over reads: `model_for` makes it only when one of them is set; otherwise the first look-up
    makes it, and a membership test needs no grouping of stub copies."""
    graph, layout = laid_out("basics_predict")
    view = make_view(graph, layout)
    other = compute_layout(graph, frozenset(), engine="layered")
    bare = view.model_for(graph, other)
    assert bare is not None and "by_base" not in bare.made() and "tile_families" in bare.made()
    base = bare.nodes[0].base
    assert base in bare.by_base and not bare.by_base.grouped  # a membership test groups nothing
    assert bare.by_base[base] == [i for i, r in enumerate(bare.nodes) if r.base == base]
    view.select_paths([base])
    third = compute_layout(graph, frozenset(), engine="layered")
    carried = view.model_for(graph, third)
    assert carried is not None and "by_base" in carried.made()
    assert carried.by_base.grouped or len(set(carried.bases)) == len(carried.bases)
    view.set_graph(graph, third, keep_view=True, model=carried)
    assert view.selected_paths() == [base]


def test_models_of_one_graph_share_their_resolved_paths(make_view):
    """An expand's model resolves only the boxes the view's model has not: it reuses the paths'
    nodes and families, and gets the records a fresh build gets; another graph's are not used."""
    from dataclasses import astuple

    from jaxscope.qt.graph.scene_model import build_model

    graph, collapsed = laid_out("cond", frozenset())
    _, grown = laid_out("cond")
    assert len(grown.nodes) > len(collapsed.nodes)
    view = make_view(graph, collapsed)
    resolved = view.model.resolved
    seen = dict(resolved)
    model = view.model_for(graph, grown)
    assert model is not None and model.resolved is resolved
    assert all(resolved[p] is r for p, r in seen.items()) and len(resolved) > len(seen)
    fresh = build_model(graph, grown)
    assert fresh.resolved is not resolved
    assert [astuple(r) for r in model.nodes] == [astuple(r) for r in fresh.nodes]
    owners = [r.path for r in view.model.nodes if r.owner]  # the cond, collapsed
    assert owners and all(resolved[p][4] for p in owners)
    other, other_layout = laid_out("scan")
    assert build_model(other, other_layout, resolved).resolved is not resolved


def test_a_far_paint_makes_no_records_and_a_record_is_its_box(make_view, qtbot):
    """`SceneModel.nodes` makes a box's record when first asked for: a fit-all paint of a big
    drawing (tiny tiles) asks for none, a zoomed-in one for the boxes it draws, and a record
    holds its box's corner, size, tile and node."""
    import dataclasses

    graph = big_graph(3000)
    body = graph.bodies["b0"]
    fan_out = tuple(Edge("in0", f"e{i}", 0, 2) for i in range(0, 3000, 40))  # input stubs: boxes sharing a base
    graph = Graph("big", {"b0": dataclasses.replace(body, edges=body.edges + fan_out)})
    layout = compute_layout(graph, engine="layered")
    view = make_view(graph, layout)
    model = view.model
    view.viewport().grab()
    assert sum(r is not None for r in model.nodes.made) == 0
    view.zoom_to(1.0)
    view.centerOn(model.nodes[len(layout.nodes) // 2].rect.center())
    view.viewport().grab()
    made = [i for i, r in enumerate(model.nodes.made) if r is not None]
    assert 1 < len(made) < len(layout.nodes) // 4
    nodes = {n.id: n for n in graph.top.nodes}
    for i in (0, made[-1], len(layout.nodes) - 1):
        rec, box = model.nodes[i], layout.nodes[i]
        assert (rec.path, rec.x, rec.y, rec.w, rec.h) == (box.path, box.x - box.w / 2, box.y - box.h / 2, box.w, box.h)
        assert rec.node is nodes[box.path.partition("#")[0]] and i in model.node_tiles[rec.tile]
        assert model.nodes[i] is rec
    by_base: dict[str, list[int]] = {}
    for i, box in enumerate(layout.nodes):
        by_base.setdefault(box.path.partition("#")[0], []).append(i)
    assert any("#" in box.path for box in layout.nodes)  # stub copies: several boxes to a base
    assert list(model.by_base.items()) == list(by_base.items())
    assert list(model.by_base.firsts()) == [(base, ids[0]) for base, ids in by_base.items()]
    assert "in0#0" not in model.by_base and "nowhere" not in model.by_base and model.by_base.get("nowhere") is None


def test_commonest_per_group_breaks_ties_as_a_counter_filled_in_order_does():
    """A tile's blob colour: its commonest family, ties to the one met first (counted in numpy)."""
    from jaxscope.qt.graph.scene_model import commonest, commonest_per_group

    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 60)
        groups = rng.randint(1, n)
        group = [rng.randrange(groups) for _ in range(n - groups)] + list(range(groups))
        rng.shuffle(group)
        values = [rng.choice("abc") for _ in range(n)]  # three values: many ties
        want = [commonest(collections.Counter(v for v, g in zip(values, group) if g == k)) for k in range(groups)]
        assert commonest_per_group(values, np.array(group), groups) == want
    assert commonest_per_group([], np.zeros(0, dtype=np.int64), 0) == []


def test_a_layout_read_from_the_wire_is_drawn_without_making_its_edges(make_view, qtbot):
    """A layout from the layout process keeps its edges as rows (`EdgeTable`): the model takes
    each edge's far line and `routed` from them, so a fit-all paint makes no EdgePath for the
    edges in tiles; both match the EdgePaths, repeats of one curve included."""
    import dataclasses

    from jaxscope.layout.wire import layout_from_wire, layout_to_wire
    from jaxscope.schema.layout import EdgePath
    from jaxscope.schema.layout_tables import EdgeTable

    graph, layout = laid_out("basics_loss")
    e = layout.edges[1]
    twins = (EdgePath(e.src, e.dst, e.points, e.routed, "f32[2]"), EdgePath(e.src, e.dst, e.points, not e.routed, "f32[3]"))
    layout = dataclasses.replace(layout, edges=layout.edges + twins)
    read = layout_from_wire(layout_to_wire(layout))
    assert isinstance(read.edges, EdgeTable) and read == layout
    view = make_view(graph, read)
    model = view.model
    assert model.edge_routed == [x.routed for x in layout.edges]
    assert model.edge_line.tolist() == [[*x.points[0], *x.points[-1]] for x in layout.edges]
    fresh = layout_from_wire(layout_to_wire(layout))  # drawn first at the far look (straight lines), unlike `read`
    far = QtGraphView()
    qtbot.addWidget(far)
    far.resize(1200, 900)
    far.set_graph(graph, fresh)
    far.zoom_to(0.1)
    before = fresh.edges.made_rows()
    far.show()
    qtbot.waitExposed(far)
    far.viewport().grab()
    tiled = {j for ids, _ in far.model.edge_tiles for j in ids}
    drawn = [item for item in far.scene().items() if isinstance(item, EdgeTileItem) and item.lines_made()]
    assert tiled and drawn and not (fresh.edges.made_rows() - before) & (tiled - {1})  # the paint made none


def test_the_items_made_ahead_with_a_model_are_the_scenes_and_take_the_current_theme(make_view):
    """`model_for` (the layout client's thread) also makes the scene's items, with a view state
    whose font waits for the GUI thread; `set_graph` shows exactly those, in the theme current
    then, and makes its own for any other model."""
    graph, layout = laid_out("cond")
    view = make_view(graph, layout)
    other = compute_layout(graph, frozenset())
    model = view.model_for(graph, other)
    [(made, state, items)] = view.scenes.ahead
    assert made is model and not state.font_made
    view.set_graph(graph, other, "dark", keep_view=True, model=model)  # the theme switched meanwhile
    assert view.scenes.shown.items is items and view.view_state is state and view.scenes.ahead == []
    assert set(view.scene().items()) >= set(items.items)
    assert state.palette.background is not None and state.palette.background.lightness() < 128
    view.viewport().grab()
    assert state.font_made  # made when text was first drawn
    third = compute_layout(graph, auto_expanded(graph), direction="LR")
    view.model_for(graph, third)
    view.set_graph(graph, compute_layout(graph, frozenset(), direction="LR"), keep_view=True)  # not the one made ahead
    assert view.scenes.ahead == []


def test_a_dropped_scenes_records_and_items_are_let_go_a_slice_per_event_loop_turn(make_view, qtbot, monkeypatch):
    """Replacing a big scene deletes its Qt items at once and lets go of its records and items'
    Python side over the next event-loop turns, a slice at a time, never all in one go."""
    from jaxscope.qt.graph import scene_cache

    monkeypatch.setattr(scene_cache, "RELEASE_SLICE", 50)
    graph = big_graph(400)
    view = make_view(graph, compute_layout(graph, engine="layered"))
    old_model, old_items = view.model, view.scenes.shown.items
    made = old_model.nodes.made  # the records made so far (None where none was asked for)
    sizes = [len(made)]
    other, other_layout = laid_out("cond")
    view.set_graph(other, other_layout)
    assert len(made) == sizes[0] > 400 and view.scene().items()  # nothing let go yet: the new scene is up
    for _ in range(200):
        QApplication.processEvents()
        sizes.append(len(made))
        if not view.scenes.releasing:
            break
    assert not view.scenes.releasing and made == [] and old_items.node_items == []
    steps = [a - b for a, b in zip(sizes, sizes[1:]) if a != b]
    assert len(steps) >= 400 // 50 and max(steps) <= 50  # a slice per turn
    assert view.node_count == len(other_layout.nodes) and not view.grab().isNull()


def test_a_new_graphs_model_comes_with_the_draw_lists_of_its_first_paint(qtbot):
    """`model_for` a graph other than the one shown (shown whole next) makes the draw lists of the
    tiles that are not tiny at the fit scale, off the GUI thread: the first paint makes none."""
    graph = big_graph(3000)
    layout = compute_layout(graph, engine="layered")
    view = QtGraphView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    qtbot.waitExposed(view)
    model = view.model_for(graph, layout)
    assert model is not None
    [(_, state, items)] = view.scenes.ahead
    groups = {t.tile: made for t in items.node_items if (made := t.groups_made()) is not None}
    lines = {id(t): t.lines_made() for t in items.edge_items if t.lines_made()}
    assert groups and lines  # some tiles are drawn batched, some edges as far lines
    view.set_graph(graph, layout, model=model)
    view.viewport().grab()
    assert {t.tile: made for t in items.node_items if (made := t.groups_made()) is not None} == groups
    assert all(t.groups_made() is groups[t.tile] for t in items.node_items if t.tile in groups)
    assert all(t.lines_made() == lines[id(t)] for t in items.edge_items if t.lines_made())
    assert any(t.painted for t in items.node_items if t.tile in groups)


def test_a_relayout_of_the_graph_shown_comes_with_the_draw_lists_of_what_the_view_shows(qtbot):
    """`model_for` another layout of the graph shown (a cluster toggled: the view keeps its scale,
    and a grown owner its corner) makes the draw lists of the tiles that meet the rect the last
    paint showed, at its scale, off the GUI thread; the first paint after it makes none."""
    graph = big_graph(3000)
    view = QtGraphView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    qtbot.waitExposed(view)
    view.set_graph(graph, compute_layout(graph, engine="layered"))
    view.set_scale(view.zoom() * 3)
    view.viewport().grab()
    assert view.last_paint is not None
    scale, seen = view.last_paint
    relaid = compute_layout(graph, engine="layered")  # another Layout of the same graph
    model = view.model_for(graph, relaid)
    assert model is not None
    [(_, state, items)] = view.scenes.ahead
    warmed = {t.tile for t in items.node_items if t.groups_made() is not None}
    big_enough = [t for t in items.node_items if max(t.extent.width(), t.extent.height()) * scale >= TINY_PX]
    shown = {t.tile for t in big_enough if t.extent.intersects(seen)}
    assert warmed == shown and 0 < len(warmed) < len(items.node_items)
    groups = {t.tile: t.groups_made() for t in items.node_items if t.tile in warmed}
    view.set_graph(graph, relaid, keep_view=True, model=model)
    view.viewport().grab()
    assert all(t.groups_made() is groups[t.tile] for t in items.node_items if t.tile in warmed)
    assert {t.tile for t in items.node_items if t.painted} <= warmed


def test_a_graphs_boxes_are_resolved_ahead_for_its_first_model(qtbot):
    """`prepare_graph` (the app calls it on the trace result's thread while the layout process lays
    the graph out) resolves the top-level boxes; the first model of that graph takes them over,
    once; a model of another graph does not."""
    graph, other = big_graph(300), big_graph(200, seed=1)
    layout = compute_layout(graph, engine="layered")
    view = QtGraphView()
    qtbot.addWidget(view)
    view.prepare_graph(graph)
    pre = view.scenes.prepared
    assert pre is not None and {n.id for n in graph.top.nodes} <= set(pre)
    assert view.model_for(other, compute_layout(other, engine="layered")).resolved is not pre  # type: ignore[union-attr]
    model = view.model_for(graph, layout)
    assert model is not None and model.resolved is pre and view.scenes.prepared is None
    assert [model.nodes[i].node for i in range(len(model.nodes))] == [
        next(n for n in graph.top.nodes if n.id == box.path.partition("#")[0]) for box in layout.nodes
    ]


def test_the_search_bar_counts_matches_and_walks_them(make_view, qtbot):
    """The persistent search box: a count as you type, Enter / Shift+Enter walk the matches, a
    scope query finds equations by module, and a new layout keeps the query."""
    from jaxscope.qt.panes.search_bar import SearchBar

    loc = SourceLoc("m.py", 1)
    nodes = (Node("in0", "input", "x", ("f32[8]",)),) + tuple(
        Node(
            f"e{i}",
            "eqn",
            "dot_general" if i % 2 else "tanh",
            ("f32[8]",),
            source=loc,
            name_stack=f"transpose(jvp(Net))/block{i % 3}/proj" if i >= 6 else f"jvp(Net)/block{i % 3}/proj",
        )
        for i in range(12)
    )
    edges = (Edge("in0", "e0"),) + tuple(Edge(f"e{i}", f"e{i + 1}") for i in range(11))
    graph = Graph("f", {"b0": Body("b0", "f", nodes, edges, 12, 12)})
    view = make_view(graph, compute_layout(graph, frozenset()))
    bar = SearchBar(view)
    qtbot.addWidget(bar)
    bar.field.setText("dot_general")
    assert bar.run() == 6 and bar.count.text() == "6 matches"
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    assert bar.count.text() == "1 of 6" and len(view.selected_paths()) == 1
    qtbot.keyClick(bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert bar.count.text() == "6 of 6"
    bar.field.setText("block1/proj")  # a scope: forward and backward alike
    qtbot.waitUntil(lambda: bar.count.text() == "4 matches", timeout=2000)  # searched once the typing paused
    view.set_graph(graph, compute_layout(graph, frozenset()), "light")
    bar.refresh()
    assert view.match_count == 4
    bar.field.setText("nothing like it")
    bar.run()
    assert bar.count.text() == "no match"


def test_a_graph_too_wide_to_read_whole_opens_at_its_top_left(qtbot):
    """A flat train step's top row of optimizer inputs is many screens wide: its first view is the
    top-left at a readable scale, where the program starts (its middle was a stretch of that row)."""
    from jaxscope.qt.graph.zoom_pan import READABLE

    n = 120
    nodes = [Node(f"in{i}", "input", f"optimizer.opt_state[{i}].mu", avals=("f32[16,16]",)) for i in range(n)]
    nodes += [Node(f"e{i}", "eqn", "mul", avals=("f32[16,16]",), in_avals=("f32[16,16]",)) for i in range(n)]
    edges = tuple(Edge(f"in{i}", f"e{i}", 0, 0, "f32[16,16]") for i in range(n))
    graph = Graph("step", {"b0": Body("b0", "step", tuple(nodes), edges, n, n)}, "b0")
    view = QtGraphView()
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    view.set_graph(graph, compute_layout(graph, ()), "light")
    view.fit_readable()
    seen, content = view.mapToScene(view.viewport().rect()).boundingRect(), view.content_rect()
    assert abs(view.zoom() - READABLE) < 1e-6
    assert seen.left() <= content.left() + 1 and seen.top() <= content.top() + 1  # its top-left corner on screen
