"""Search and dataflow cones over a real fixture graph, without Qt."""

from __future__ import annotations

import pathlib

import pytest

from jaxscope.analysis.graph_query import Dataflow, SearchIndex
from jaxscope.layout.engine import compute_layout
from jaxscope.schema.graph import resolve
from jaxscope.schema.trace import TraceResult

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def drawn():
    result = TraceResult.from_json((FIXTURES / "basics_predict.json").read_text())
    graph = result.graph
    layout = compute_layout(graph, frozenset(), engine="layered")
    bases = list(dict.fromkeys(b.path.partition("#")[0] for b in layout.nodes))
    return graph, layout, bases


def test_search_by_primitive_shape_and_line(drawn):
    graph, _, bases = drawn
    index = SearchIndex((b, resolve(graph, b)[1]) for b in bases)
    dots = index.search("DOT_GENERAL")
    assert [resolve(graph, p)[1].label for p in dots] == ["dot_general"]  # the other one is inside jit(layer)
    line = resolve(graph, dots[0])[1].source.line
    assert dots[0] in index.search(f":{line}") and dots[0] in index.search(f"line {line}")
    assert dots[0] in index.search(f"basics.py:{line}")
    assert index.search("f32[16,3]") and not index.search("   ")


def test_dataflow_cones(drawn):
    graph, layout, bases = drawn
    flow = Dataflow(bases, ((e.src.partition("#")[0], e.dst.partition("#")[0]) for e in layout.edges))
    out = next(b for b in bases if resolve(graph, b)[1].kind == "output")
    up, down = flow.cones(out, "up")
    assert out in up and down == set()
    assert any(resolve(graph, p)[1].label == "dot_general" for p in up)
    assert flow.cones("nope", "both") == (set(), set())
    with pytest.raises(ValueError):
        flow.cones(out, "sideways")


def test_free_text_does_not_match_the_file_path() -> None:
    from jaxscope.analysis.graph_query import SearchIndex
    from jaxscope.schema.graph import Node, SourceLoc

    loc = SourceLoc("/home/x/train_step.py", 12)
    index = SearchIndex([("e0", Node("e0", "eqn", "mul", ("f32[3]",), source=loc)), ("in0", Node("in0", "input", "x", ("f32[3]",)))])
    assert index.search("x") == ["in0"]
    assert index.search("step") == []
    assert index.search("train_step.py") == ["e0"]
    assert index.search("train_step.py:12") == ["e0"]
