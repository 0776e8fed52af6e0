"""The compact graph form between processes: lossless, either form readable, sent in parts."""

from __future__ import annotations

import io
import json
import pathlib

import pytest

from jaxscope.runtime import protocol
from jaxscope.schema.codec import to_jsonable
from jaxscope.schema.graph import Body, Edge, Graph, Node, SourceLoc
from jaxscope.schema.graph_wire import WIRE_VERSION, graph_from_jsonable, graph_from_wire, graph_to_wire, to_wire_jsonable
from jaxscope.schema.trace import TraceResult, result_from_jsonable
from tests.conftest import build_hostile

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"


def fixture(name: str) -> TraceResult:
    return TraceResult.from_json((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["basics_predict", "cond", "scan"])
def test_wire_round_trip_is_lossless(name):
    graph = fixture(name).graph
    wire = json.loads(json.dumps(graph_to_wire(graph)))
    assert graph_from_wire(wire) == graph
    assert graph_from_jsonable(wire) == graph_from_jsonable(to_jsonable(graph)) == graph


def test_hostile_strings_survive():
    graph, _ = build_hostile()
    assert graph_from_wire(json.loads(json.dumps(graph_to_wire(graph)))) == graph


def test_a_trace_result_travels_with_its_graph_in_wire_form():
    result = fixture("cond")
    data = json.loads(json.dumps(to_wire_jsonable(result)))
    assert data["graph"]["wire"] == WIRE_VERSION and "sources" in data["graph"]
    assert result_from_jsonable(data) == result
    assert result_from_jsonable(to_jsonable(result)) == result  # the readable form still reads


def test_wire_is_smaller_and_sources_are_written_once():
    graph = fixture("basics_predict").graph
    wire = graph_to_wire(graph)
    located = [n.source for b in graph.bodies.values() for n in b.nodes if n.source is not None]
    assert len(wire["sources"]) == len(set(located)) < len(located)
    assert len(json.dumps(wire)) < len(json.dumps(to_jsonable(graph))) / 2


def test_frame_chains_are_written_once_and_come_back_equal():
    user = SourceLoc("/u/train.py", 42, 4, 42, 20, "loss")
    lib = SourceLoc("/v/site-packages/flax/linen/linear.py", 287, 8, 287, 40, "Dense.__call__", "flax")
    chain = (user, lib)
    nodes = tuple(Node(f"e{i}", "eqn", "dot_general", source=user, frames=chain) for i in range(3))
    graph = Graph("f", {"b0": Body("b0", "f", nodes + (Node("e3", "eqn", "sin"),), (), 4, 4)})
    wire = json.loads(json.dumps(graph_to_wire(graph)))
    assert wire["chains"] == [[0, 1]] and len(wire["sources"]) == 2
    back = graph_from_wire(wire)
    assert back == graph and back.top.nodes[0].frames[1].library == "flax" and back.top.nodes[3].frames == ()


def test_a_big_body_goes_in_parts():
    n = 5000
    nodes = tuple(Node(f"e{i}", "eqn", "sin", ("f32[8]",), ("f32[8]",), source=SourceLoc("m.py", i % 7 + 1)) for i in range(n))
    edges = tuple(Edge(f"e{i}", f"e{i + 1}", 0, 0, "f32[8]") for i in range(n - 1))
    graph = Graph("f", {"b0": Body("b0", "f", nodes, edges, n, n)})
    text = protocol.dumps({"graph": graph_to_wire(graph)})
    assert text.count(b"\n") > 5  # no single line (one json.loads, one GIL hold) holds the whole body
    assert graph_from_wire(protocol.read(io.BytesIO(text))["graph"]) == graph


def test_unknown_wire_version_is_refused():
    wire = graph_to_wire(fixture("cond").graph)
    with pytest.raises(ValueError, match="wire form"):
        graph_from_wire({**wire, "wire": 99})
