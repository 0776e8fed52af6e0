"""The one drawer (issue 61.2): a request's decorations keyed by program path land on the drawn
boxes, each request runs under its own budget in one layout process, a layout given is drawn as it
is, and a page keeps its links by program path (the page finds a box's equation by dropping its
groups). Real layouts: the layout process, dot and the layered engine, on a trace recorded on a TPU."""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from jaxscope.analysis.scope_view import ScopedGraph, for_window
from jaxscope.drawer import Drawer
from jaxscope.drawing import Categorised, Decorations, DrawOptions, DrawRequest, Measured
from jaxscope.ir.link_tables import export_entry
from jaxscope.saved_traces import load

SAVED = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "tpu" / "vit_step.jaxscope"


@pytest.fixture(scope="module")
def vit():
    graph = load(str(SAVED)).trace.graph
    view = for_window(graph)
    deep = next(n.id for n in graph.top.nodes if n.kind == "eqn" and view.to_view(n.id).count("/") >= 2)
    return graph, view, deep


def _real(drawn: str) -> str:
    """The page's own `realPath` (viewer.js): a drawn path with its groups dropped."""
    return "/".join(p for p in drawn.split("/") if not re.fullmatch(r"g\d+", p.split(":")[0]))


def test_decorations_by_program_path_land_on_the_drawn_boxes(vit, tmp_path):
    graph, view, deep = vit
    drawn = view.to_view(deep)
    assert drawn != deep  # the equation sits in groups
    text = "line one\nline two\nline three\n"
    decorations = Decorations(
        fill=Measured("flops", {deep: 5.0}, "FLOPs per equation"),
        notes={deep: "f32[8] per device"},
        links={"jaxpr": export_entry(text, {deep: [2]})},
        sources={"model.py": "x = 1\n"},
    )
    with Drawer() as drawer:
        drawing = drawer.draw(DrawRequest(view, DrawOptions(), decorations, page=True))
    assert drawing.overlay is not None
    owners = [drawn.rsplit("/", k)[0].rsplit(":", 1)[0] for k in range(1, drawn.count("/") + 1)]
    assert drawing.overlay.values[drawn] == 5.0 and all(drawing.overlay.values[o] == 5.0 for o in owners)  # each group holding it
    assert (drawn, "f32[8] per device") in drawing.layout.annotations
    page = tmp_path / "vit.html"
    assert drawing.write(str(page)) == "html"
    data = json.loads(re.search(r'id="jaxscope-data">(.*?)</script>', page.read_text(encoding="utf-8"), re.S).group(1))
    assert data["stages"]["jaxpr"]["lines"] == {deep: [2]} and _real(drawn) == deep  # found from the drawn box
    assert data["stages"]["jaxpr"]["text"] == {"2": "line two"}


def test_json_keeps_the_program_paths_and_a_flat_view_draws_them(vit, tmp_path):
    graph, _view, deep = vit
    flat = ScopedGraph(graph, {}, graph)
    request = DrawRequest(flat, DrawOptions(grouping="flat"), Decorations(links={"jaxpr": export_entry("a\nb\n", {deep: [1]})}))
    with Drawer() as drawer:
        drawing = drawer.draw(request)
    out = tmp_path / "vit.json"
    assert drawing.write(str(out)) == "json"
    assert json.loads(out.read_text(encoding="utf-8"))["links"]["jaxpr"]["lines"] == {deep: [1]}


def test_each_request_runs_under_its_own_budget_in_one_layout_process(vit):
    _graph, view, _deep = vit
    with Drawer() as drawer:
        hurried = drawer.draw(DrawRequest(view, DrawOptions(layout_budget=0.0001)))
        patient = drawer.draw(DrawRequest(view, DrawOptions(layout_budget=30.0)))
        again = drawer.draw(DrawRequest(view, DrawOptions(), layout=patient.layout))  # a layout given: drawn as it is
    assert hurried.layout.engine == "layered" and any("budget" in note for note in hurried.layout.notes)
    assert patient.layout.engine == "dot" and again.layout is patient.layout


def test_a_page_needs_its_bodies_and_a_stream_only_what_the_window_opens(vit, tmp_path):
    _graph, view, _deep = vit
    with Drawer() as drawer:
        drawing = drawer.draw(DrawRequest(view))
        with pytest.raises(ValueError, match="every body"):
            drawing.write(str(tmp_path / "a.html"))
        assert drawer.stream(DrawOptions(collapse=1)) is None and drawer.stream(DrawOptions(expand=("block",))) is None
        assert drawer.stream(DrawOptions(grouping="scopes")) is None
        with pytest.raises(ValueError, match="top to bottom"):
            drawer.draw(DrawRequest(view, DrawOptions(direction="LR"), page=True))


def test_categories_colour_a_group_by_what_its_equations_share(vit):
    graph, view, deep = vit
    drawn = view.to_view(deep)
    members = view.real_paths([drawn.rsplit("/", 1)[0].rsplit(":", 1)[0]])  # the innermost group's equations
    status = {p: "removed" for p in members} | {n.id: "same" for n in graph.top.nodes if n.id not in members}
    overlay = Categorised("diff", status, {"added": "#0f0", "removed": "#f00", "changed": "#fa0"}).overlay(view)
    group = drawn.rsplit("/", 1)[0].rsplit(":", 1)[0]
    assert overlay.colour(group) == "#f00" and overlay.colour(drawn) == "#f00"
