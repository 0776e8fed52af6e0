"""The primitive table: one entry per primitive, the numbers it reads, and those numbers' way
through the wire form and saved traces (a file from before them reads its numbers once)."""

from __future__ import annotations

import gzip
import json
import pathlib
from dataclasses import replace

import pytest

from jaxscope.render.styles import FAMILIES
from jaxscope.schema.graph import Body, Graph, Node
from jaxscope.schema.graph_wire import graph_from_wire, graph_to_wire
from jaxscope.schema.primitives import PRIMITIVES, body_title, primitive, read_numbers
from jaxscope.schema.trace import TraceResult
from jaxscope.schema.trace_file import DocumentError, TraceDocument, decode, encode

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"


def test_every_entry_has_a_family_the_themes_colour() -> None:
    assert {entry.family for entry in PRIMITIVES.values()} <= set(FAMILIES)
    assert primitive("random_something_new").family == "random"
    assert primitive("reduce_window_avg").family == "reduction"
    assert primitive("no_such_primitive") == primitive("another_one")  # a bare entry: no cost, no numbers
    assert primitive("no_such_primitive").cost == "free"


def test_numbers_are_read_from_the_params_jax_gives_and_never_guessed() -> None:
    dot = {"dimension_numbers": (((2,), (1,)), ((0,), (0,))), "precision": None}
    assert dict(read_numbers("dot_general", dot)) == {
        "lhs_contracting": (2,),
        "rhs_contracting": (1,),
        "lhs_batch": (0,),
        "rhs_batch": (0,),
    }
    assert read_numbers("dot_general", {"dimension_numbers": "(((2,), (1,)), ((), ()))"}) == ()  # a text: not read
    assert read_numbers("integer_pow", {"y": True}) == ()  # a bool is no exponent
    assert read_numbers("while", {"cond_nconsts": 0, "body_nconsts": 2}) == (("body_nconsts", (2,)), ("cond_nconsts", (0,)))
    assert read_numbers("sin", {"accuracy": None}) == ()


def test_sub_programs_are_titled_by_their_primitive() -> None:
    assert body_title("cond", "branches[1]", 1, 2, {}) == "cond branch 1 (true)"
    assert body_title("cond", "branches[2]", 2, 3, {}) == "switch branch 2"
    assert body_title("scan", "jaxpr", 0, 1, {"length": 6}) == "scan body (length 6)"
    assert body_title("custom_vjp_call", "call_jaxpr", 0, 1, {}) == "custom_vjp"
    assert body_title("new_higher_order", "body", 0, 1, {}) == "new_higher_order body"


def _without_numbers(wire: dict) -> dict:
    """The same graph as wire form 2 wrote it: 11-item nodes, no numbers."""
    old = json.loads(json.dumps(wire))
    old["wire"] = 2
    for body in old["bodies"].values():
        body["nodes"] = [row[:11] for row in body["nodes"]]
    return old


@pytest.mark.parametrize("name", ["basics_predict", "scan"])
def test_a_graph_in_wire_form_2_reads_its_numbers_from_its_texts(name: str) -> None:
    graph = TraceResult.from_json((FIXTURES / f"{name}.json").read_text(encoding="utf-8")).graph
    assert any(n.numbers for b in graph.bodies.values() for n in b.nodes)
    assert graph_from_wire(_without_numbers(graph_to_wire(graph))) == graph


def test_a_convolution_in_wire_form_2_reads_its_window_too() -> None:
    params = (
        ("dimension_numbers", "ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))"),
        ("feature_group_count", "2"),
        ("lhs_dilation", "(1, 2)"),
        ("padding", "((1, 2), (0, 1))"),
        ("rhs_dilation", "(2, 1)"),
        ("window_strides", "(2, 1)"),
    )
    conv = Node("e0", "eqn", "conv_general_dilated", params=params)
    back = graph_from_wire(_without_numbers(graph_to_wire(Graph("f", {"b0": _body(conv)}))))
    assert dict(back.top.nodes[0].numbers) == {
        "lhs_spec": (0, 3, 1, 2),
        "rhs_spec": (3, 2, 0, 1),
        "out_spec": (0, 3, 1, 2),
        "padding": (1, 2, 0, 1),
        "window_strides": (2, 1),
        "lhs_dilation": (1, 2),
        "rhs_dilation": (2, 1),
        "feature_group_count": (2,),
    }


def _body(*nodes: Node) -> Body:
    return Body("b0", "f", nodes, (), len(nodes), len(nodes))


def _saved(numbers: object) -> bytes:
    """A saved trace whose first equation's numbers are `numbers` (in wire form)."""
    trace = TraceResult.from_json((FIXTURES / "basics_predict.json").read_text(encoding="utf-8"))
    blob = encode(TraceDocument(trace, None, None, None, {}, "2026-12-07T00:00:00Z", "0.1.0"))
    data = json.loads(gzip.decompress(blob))
    rows = data["trace"]["graph"]["bodies"]["b0"]["nodes"]
    k = next(i for i, row in enumerate(rows) if row[1] == "eqn")
    rows[k][11] = numbers
    return gzip.compress(json.dumps(data).encode())


def test_a_saved_trace_keeps_its_numbers_and_refuses_bad_ones() -> None:
    assert any(n.numbers == (("y", (3,)),) for n in decode(_saved(["y", [3]]), "x.jaxscope").trace.graph.top.nodes)
    for bad, said in [
        (["y", ["3"]], "numbers are not (name, up to 64 integers) pairs"),
        (["y"], "numbers are not"),
        (["y", [1 << 70]], "numbers are not"),
        (["y", list(range(65))], "numbers are not"),
    ]:
        with pytest.raises(DocumentError, match=r"x\.jaxscope is damaged: trace\.graph\.bodies\['b0'\]\.nodes\[\d+\]\[11\]") as caught:
            decode(_saved(bad), "x.jaxscope")
        assert said in str(caught.value)


def test_numbers_survive_a_saved_trace() -> None:
    trace = TraceResult.from_json((FIXTURES / "basics_predict.json").read_text(encoding="utf-8"))
    top = trace.graph.top
    nodes = tuple(replace(n, numbers=(("y", (-2,)),)) if n.kind == "eqn" else n for n in top.nodes)
    graph = Graph(trace.graph.function, {**trace.graph.bodies, top.id: replace(top, nodes=nodes)}, trace.graph.root)
    doc = TraceDocument(replace(trace, graph=graph), None, None, None, {}, "2026-12-07T00:00:00Z", "0.1.0")
    assert decode(encode(doc)).trace.graph == graph


def test_a_pooling_in_wire_form_2_reads_its_window() -> None:
    pool = Node("e0", "eqn", "reduce_window_sum", params=(("padding", "((0, 0), (1, 1))"), ("window_dimensions", "(1, 3)")))
    back = graph_from_wire(_without_numbers(graph_to_wire(Graph("f", {"b0": _body(pool)}))))
    assert back.top.nodes[0].numbers == (("window_dimensions", (1, 3)),)


def test_a_hostile_wire_2_text_gives_no_numbers_and_raises_nothing() -> None:
    from jaxscope.schema.graph_wire import wire2_numbers

    assert wire2_numbers("dot_general", ["dimension_numbers", "(([1e999], [0]), ([], []))"]) == []
    assert wire2_numbers("reduce_window_sum", ["window_dimensions", "(1e999,)"]) == []
    assert wire2_numbers("reduce_window_sum", ["window_dimensions", f"({10**30},)"]) == []  # past wire 3's bound
    assert wire2_numbers("integer_pow", ["y", "9" * 400]) == []


def test_a_readable_graph_from_before_numbers_reads_them_from_its_texts() -> None:
    """`export --format json` files written before `Node.numbers` (no "numbers" key): their dots
    and while loops are priced and wired as a new file's."""
    from jaxscope.schema.codec import to_jsonable
    from jaxscope.schema.graph_wire import graph_from_readable

    graph = TraceResult.from_json((FIXTURES / "basics_predict.json").read_text(encoding="utf-8")).graph
    old = to_jsonable(graph)
    for body in old["bodies"].values():
        for node in body["nodes"]:
            node.pop("numbers", None)
    assert graph_from_readable(old) == graph
    assert graph_from_readable(to_jsonable(graph)) == graph
