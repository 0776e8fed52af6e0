"""A big re-layout's part shown ahead of the whole (`core.layout_preview`): the view's preview
scene, the controller's `layout_preview`, and the window that asks for it when a cluster is
toggled. Real layouts, a real layout process for the controller."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QPoint, Qt

from jaxscope.layout.body import to_layout
from jaxscope.layout.engine import compute_layout, compute_tenths
from jaxscope.layout.preview import Region, region_part
from jaxscope.qt.app.controller import Controller
from jaxscope.qt.app.prepared import PreparedLayout
from jaxscope.qt.graph.view import QtGraphView
from jaxscope.runtime.layout_client import LayoutClient
from jaxscope.schema.graph import Graph
from jaxscope.schema.layout import Layout
from tests.conftest import chain_with_owner


def on_screen(view: QtGraphView, x: float, y: float) -> QPoint:
    return view.mapFromScene(x, y)


def view_at_owner(qtbot: Any, graph: Graph, layout: Layout, owner: str) -> QtGraphView:
    """A view of `layout` at zoom 1, the owner's box in the middle."""
    view = QtGraphView()
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    qtbot.waitExposed(view)
    view.set_graph(graph, layout)
    view.set_scale(1.0)
    view.centre_at(view.scene_node_rect(owner).center())
    return view


def toggle_anchor(view: QtGraphView, qtbot: Any, owner: str) -> list[str]:
    """Double-click `owner` as a user would: the view keeps where it was and asks for the toggle."""
    asked: list[str] = []
    view.toggle_cluster_requested.connect(asked.append)
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.mapFromScene(view.scene_node_rect(owner).center()))
    return asked


def test_a_preview_stands_in_front_at_the_place_the_whole_layout_takes(qtbot):
    graph, owner = chain_with_owner()
    cache: dict = {}
    before = to_layout(compute_tenths(graph, (), cache=cache))
    view = view_at_owner(qtbot, graph, before, owner)
    far = "e10"  # selected, and far outside what the view shows
    view.select_paths([owner, far, "e1197"], center=False)
    corner = on_screen(view, *view.scene_node_rect(owner).topLeft().toTuple())
    assert view.preview_region(owner) is None  # a toggle from a menu or a script: the view keeps no place
    assert toggle_anchor(view, qtbot, owner) == [owner]
    region = view.preview_region(owner)
    assert region is not None and region.owner == owner
    grown = compute_tenths(graph, [owner], cache=cache)
    part_t = region_part(grown, region)
    assert part_t is not None
    part, whole = to_layout(part_t), to_layout(grown)

    view.show_preview(graph, part)
    assert view.previewing and view.node_count == len(part.nodes) < len(whole.nodes) // 10
    cluster = next(c for c in whole.clusters if c.path == f"{owner}:0")
    assert on_screen(view, cluster.x, cluster.y) == corner  # the owner's corner stays put, as it will
    assert view.selected_paths() == [owner, far, "e1197"]  # the view's state as it was
    drawn = {view.model.nodes[i].path for i in view.view_state.selected}
    assert drawn == {"e1197"}  # the owner is a cluster now; e10 is not in the part
    view.viewport().grab()

    view.set_graph(graph, whole, keep_view=True)  # the whole layout
    assert not view.previewing and view.node_count == len(whole.nodes)
    assert on_screen(view, cluster.x, cluster.y) == corner
    assert view.selected_paths() == [far, "e1197"]  # the owner is drawn as its cluster now
    assert (id(graph), id(before)) in view.scenes.kept  # the scene before is kept for a collapse, the preview is not
    assert all(not b.preview for b in view.scenes.kept.values())


def test_a_failed_layout_puts_the_scene_before_the_preview_back(qtbot):
    graph, owner = chain_with_owner()
    before = compute_layout(graph, ())
    view = view_at_owner(qtbot, graph, before, owner)
    toggle_anchor(view, qtbot, owner)
    region = view.preview_region(owner)
    part_t = region_part(compute_tenths(graph, [owner]), region)
    view.show_preview(graph, to_layout(part_t))
    assert view.previewing
    view.set_theme("dark")  # while the preview is shown: the scene put back is drawn as the view is now
    view.select_paths(["e1199"], center=False)
    view.end_preview()
    assert not view.previewing and view.scenes.shown.layout is before and view.node_count == len(before.nodes)
    assert view.view_state.palette.theme.name == "dark" and view.backgroundBrush().color().lightness() < 128
    assert {view.model.nodes[i].path for i in view.view_state.selected} == {"e1199"}
    assert view.scene() is view.scenes.shown.scene
    view.viewport().grab()
    view.end_preview()  # nothing in front: nothing to do
    assert view.scenes.shown.layout is before
    # a preview is only for the graph shown, after a toggle of it
    other, _ = chain_with_owner(2500)
    view.show_preview(other, to_layout(part_t))
    assert not view.previewing


class _NoWorker:
    def close(self) -> None:
        pass


def test_the_controller_hands_on_a_big_layouts_part_before_the_whole(qtbot):
    graph, owner = chain_with_owner()
    before = compute_layout(graph, ())
    box = next(b for b in before.nodes if b.path == owner)
    region = Region(owner, box.x - box.w / 2, box.y - box.h / 2, box.x - 450, box.y - 350, box.x + 450, box.y + 350)
    layouts = LayoutClient()
    prepared: list[Layout] = []

    class Scenes:
        def prepare_graph(self, graph: Graph) -> None:
            pass

        def model_for(self, graph: Graph, layout: Layout, line_colours: object = None) -> str:
            prepared.append(layout)
            return f"model of {len(layout.nodes)}"

    controller = Controller(worker=_NoWorker(), layouts=layouts, scenes=Scenes())  # type: ignore[arg-type]
    events: list[tuple[str, Layout, object]] = []
    held: list[int] = []

    def shown(p: PreparedLayout) -> None:
        events.append(("preview", p.layout, p.model))
        time.sleep(0.05)  # painting it: the whole layout is not read meanwhile (the GIL is the GUI thread's)
        held.append(len(prepared))

    controller.layout_preview.connect(shown)
    controller.layout_finished.connect(lambda p: events.append(("whole", p.layout, p.model)))
    try:
        with qtbot.waitSignal(controller.layout_finished, timeout=60000):
            controller.layout(graph, frozenset({owner}), region=region)
        assert [e[0] for e in events] == ["preview", "whole"]
        (_, part, part_model), (_, whole, whole_model) = events
        assert part_model == f"model of {len(part.nodes)}" and whole_model == f"model of {len(whole.nodes)}"
        assert prepared == [part, whole]  # both prepared off the GUI thread
        assert held == [1]
        assert {b.path for b in part.nodes} < {b.path for b in whole.nodes}
        # one asked without a region, and a layout at hand (expanding again): no preview
        events.clear()
        with qtbot.waitSignal(controller.layout_finished, timeout=60000):
            controller.layout(graph, frozenset())
        with qtbot.waitSignal(controller.layout_finished, timeout=60000):
            controller.layout(graph, frozenset({owner}), region=region)
        assert [e[0] for e in events] == ["whole", "whole"]
    finally:
        controller.close()
        layouts.close()
