"""Notes on boxes (`Layout.annotations`: what XLA's partitioner did there) are drawn beside the
graph, never in it: the layout makes room for them, in this process and in the layout process,
and every renderer writes them as the box's last line."""

from __future__ import annotations

from jaxscope.layout.engine import compute_layout
from jaxscope.render.svg import render_svg
from jaxscope.runtime.layout_client import LayoutClient
from tests.graphs import sample_graph

NOTE = "all-reduce f32[8] 32 B over data=4"


def _box(layout, path):
    return next(b for b in layout.nodes if b.path == path)


def test_a_note_gets_room_on_its_box_and_the_graph_stays_as_it_is() -> None:
    graph = sample_graph()
    plain = compute_layout(graph, ())
    noted = compute_layout(graph, (), annotations=[("e0", NOTE)])
    assert graph == sample_graph()  # nothing written into the graph
    assert noted.annotations == (("e0", NOTE),) and plain.annotations == ()
    assert _box(noted, "e0").h > _box(plain, "e0").h and _box(noted, "e0").w > _box(plain, "e0").w
    assert _box(noted, "e3").h == _box(plain, "e3").h  # other boxes keep their size
    assert f"⇄ {NOTE}" in render_svg(graph, noted) and "⇄" not in render_svg(graph, plain)


def test_a_note_inside_an_opened_body_and_one_on_no_node() -> None:
    graph = sample_graph()
    owner = next(n.id for n in graph.top.nodes if n.subgraphs)
    inner = f"{owner}:0/e0"
    plain = compute_layout(graph, {owner})
    noted = compute_layout(graph, {owner}, annotations=[(inner, "tiled 4×1"), ("e99", "names no node")])
    assert _box(noted, inner).h > _box(plain, inner).h
    assert "⇄ tiled 4×1" in render_svg(graph, noted)


def test_the_layout_process_makes_the_same_room_and_hands_the_notes_back() -> None:
    graph = sample_graph()
    with LayoutClient() as layouts:
        remote = layouts.layout(graph, (), annotations=[("e0", NOTE)])
        again = layouts.layout(graph, ())  # the same graph, no notes: not the noted layout from its cache
    local = compute_layout(graph, (), annotations=[("e0", NOTE)])
    assert remote.annotations == (("e0", NOTE),) and again.annotations == ()
    assert (_box(remote, "e0").w, _box(remote, "e0").h) == (_box(local, "e0").w, _box(local, "e0").h)
    assert _box(again, "e0").h < _box(remote, "e0").h


def test_the_layout_process_lays_out_ahead_with_the_same_notes() -> None:
    """While idle, the layout process lays the collapsed clusters out ahead with the options of the
    layout it answered, notes included (they were refused there, after the answer)."""
    from jaxscope.layout.engine import lay_out_ahead

    graph, cache = sample_graph(), {}
    compute_layout(graph, (), cache=cache, annotations=[("e0", NOTE)])
    assert list(lay_out_ahead(graph, (), cache, annotations=[("e0", NOTE)]))  # the collapsed bodies, laid out
