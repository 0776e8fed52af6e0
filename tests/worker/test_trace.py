"""The worker's trace on real jax, in-process (fast): primitives, clusters, source lines."""

from __future__ import annotations

import os
import pathlib

import jax
import numpy as np
import pytest

from jaxscope.ir import linking
from jaxscope.schema.graph import Graph
from jaxscope.schema.trace import FunctionRef, TraceRequest, TraceResult
from jaxscope.worker.trace import TraceError, run_trace
from tests.conftest import line_in

CORPUS = os.path.join(os.path.dirname(__file__), "corpus", "higher_order.py")


def trace(name: str, args: str, path: str = CORPUS) -> TraceResult:
    return run_trace(TraceRequest(FunctionRef(qualname=name, path=path), args=args), lambda phase: None)


def all_nodes(graph: Graph):
    for body in graph.bodies.values():
        yield from body.nodes


def primitives(graph: Graph) -> set[str]:
    return {n.label for n in all_nodes(graph) if n.kind == "eqn"}


def roles(graph: Graph) -> list[str]:
    return sorted(ref.role for n in all_nodes(graph) for ref in n.subgraphs)


def line_of(text: str) -> int:
    return line_in(pathlib.Path(CORPUS), text)


@pytest.mark.parametrize(
    ("name", "args", "prims", "expected_roles"),
    [
        ("uses_cond", "f32[3], f32[3]", {"cond", "mul", "sub"}, ["cond branch 0 (false)", "cond branch 1 (true)"]),
        ("uses_switch", "i32[], f32[3]", {"cond", "sin", "cos", "tanh"}, ["switch branch 0", "switch branch 1", "switch branch 2"]),
        ("uses_while", "f32[3]", {"while", "lt", "mul"}, ["while body", "while cond"]),
        ("uses_scan", "f32[5,3]", {"scan", "add", "mul"}, ["scan of body (length 5)"]),
        ("uses_fori_static", "f32[3]", {"scan", "sin"}, ["scan body (length 5)"]),
        ("uses_nested_jit", "f32[3]", {"jit", "exp"}, ["jit(_inner)", "jit(_inner)"]),
        ("uses_custom_jvp", "f32[3]", {"custom_jvp_call", "log1p"}, ["custom_jvp"]),
        ("uses_custom_vjp", "f32[3]", {"custom_vjp_call"}, ["custom_vjp"]),
        ("uses_checkpoint", "f32[3]", {"remat2", "sin"}, ["checkpoint"]),
        ("uses_shard_map", "f32[4]", {"shard_map", "mul"}, ["shard_map"]),
    ],
)
def test_higher_order_primitives_become_clusters(name, args, prims, expected_roles):
    result = trace(name, args)
    graph = result.graph
    assert prims <= primitives(graph)
    assert roles(graph) == sorted(expected_roles)
    for ref in (r for n in all_nodes(graph) for r in n.subgraphs):
        assert ref.body in graph.bodies and ref.body != graph.root
    assert graph.top.total_eqns >= graph.top.n_eqns
    assert "{ lambda" in result.jaxpr_text


def test_loop_bodies_name_their_consts_carry_and_slices():
    """Inside a scan body the inputs say what they are (in0…in3 said nothing) and the outputs what they
    become outside (the function's results here), the title its length."""
    graph = trace("uses_scan", "f32[5,3]").graph
    (scan,) = [n for n in graph.top.nodes if n.label == "scan"]
    body = graph.bodies[scan.subgraphs[0].body]
    assert body.title == "scan of body (length 5)"  # named by the function scanned
    assert [n.label for n in body.nodes if n.kind == "input"] == ["carry", "x: xs"]  # a slice of the argument xs
    assert [n.label for n in body.nodes if n.kind == "output"] == ["carry: result[0]", "y: result[1]"]  # and what they become
    graph = trace("uses_while", "f32[3]").graph
    (loop,) = [n for n in graph.top.nodes if n.label == "while"]
    for ref in loop.subgraphs:
        inputs = [n.label for n in graph.bodies[ref.body].nodes if n.kind == "input"]
        assert inputs and all(label.startswith(("carry", "const")) for label in inputs), (ref.role, inputs)


def test_shared_jit_body_is_stored_once():
    graph = trace("uses_nested_jit", "f32[3]").graph
    jit_nodes = [n for n in graph.top.nodes if n.label == "jit"]
    assert len(jit_nodes) == 2
    assert jit_nodes[0].subgraphs[0].body == jit_nodes[1].subgraphs[0].body
    inner = graph.bodies[jit_nodes[0].subgraphs[0].body]
    assert graph.top.total_eqns == graph.top.n_eqns + 2 * inner.total_eqns


def test_source_lines_point_at_user_code():
    graph = trace("uses_custom_jvp", "f32[3]").graph
    top = {n.label: n for n in graph.top.nodes if n.kind == "eqn"}
    assert top["mul"].source is not None
    assert top["mul"].source.file == CORPUS
    assert top["mul"].source.line == line_of("return softplus(x) * 2.0")
    assert top["mul"].source.function == "uses_custom_jvp"
    inner_body = graph.bodies[top["custom_jvp_call"].subgraphs[0].body]
    log1p = next(n for n in inner_body.nodes if n.label == "log1p")
    assert log1p.source.line == line_of("jnp.log1p(jnp.exp(x))")
    for node in all_nodes(graph):  # never a jaxscope or jax frame
        if node.source is not None:
            assert "site-packages" not in node.source.file and "/jaxscope/" not in node.source.file


def test_global_constant_is_named():
    graph = trace("uses_global_constant", "f32[4]").graph
    consts = [n for n in graph.top.nodes if n.kind == "const"]
    assert [c.label for c in consts] == ["SCALE"]
    literals = [n for n in graph.top.nodes if n.kind == "literal"]
    assert "3.0" in [lit.label for lit in literals]


def test_pytree_names_and_edges():
    result = trace("pytree_in_out", "{'w': f32[4,2], 'b': f32[2]}, f32[8,4]")
    top = result.graph.top
    inputs = [n.label for n in top.nodes if n.kind == "input"]
    outputs = [n.label for n in top.nodes if n.kind == "output"]
    assert inputs == ["params['b']", "params['w']", "x"]
    assert outputs == ["result['norm']", "result['out']"]
    ids = {n.id for n in top.nodes}
    for edge in top.edges:
        assert edge.src in ids and edge.dst in ids
    dot = next(n for n in top.nodes if n.label == "dot_general")
    assert dot.avals == ("f32[8,2]",)
    assert dot.in_avals == ("f32[8,4]", "f32[4,2]")


def test_static_arguments_and_decorated_jit():
    graph = trace("decorated", "f32[3], n=3").graph
    assert [n.label for n in graph.top.nodes if n.kind == "eqn"] == ["sin", "sin", "sin"]
    graph = trace("decorated", "f32[3], n=1").graph
    assert [n.label for n in graph.top.nodes if n.kind == "eqn"] == ["sin"]


def test_grad_random_and_effects_trace():
    assert "tanh" in primitives(trace("uses_grad", "f32[3]").graph)
    assert {"random_split", "random_bits"} <= primitives(trace("uses_random", "key[]").graph)
    assert "debug_print" in primitives(trace("uses_debug_print", "f32[2]").graph)


def test_result_round_trips_through_json():
    result = trace("uses_cond", "f32[3], f32[3]")
    again = TraceResult.from_json(result.to_json())
    assert again == result


@pytest.mark.parametrize(
    ("name", "args", "kind", "fragment"),
    [
        ("uses_cond", "f32[3]", "spec", "cannot be called"),
        ("missing_function", "", "not-found", "has no function 'missing_function'"),
        ("uses_cond", "f32[3], [1, 2]", "spec", "hashable"),
    ],
)
def test_trace_failures_are_structured(name, args, kind, fragment):
    with pytest.raises(TraceError) as err:
        trace(name, args)
    assert err.value.info.kind == kind
    assert fragment in err.value.info.message + err.value.info.hint


def test_jaxpr_text_comes_later_from_the_same_trace_or_a_new_one():
    from jaxscope.worker.trace import run_jaxpr_text

    request = TraceRequest(FunctionRef(qualname="uses_scan", path=CORPUS), args="f32[5]", jaxpr_text=False)
    result = run_trace(request, lambda p: None)
    assert result.jaxpr_text == "" and "jaxpr_text" not in result.timings
    phases: list[str] = []
    printed = run_jaxpr_text(request, phases.append)
    assert phases == ["print"]  # the last trace, printed: no new trace
    assert printed.text == trace("uses_scan", "f32[5]").jaxpr_text and "scan[" in printed.text
    other = TraceRequest(FunctionRef(qualname="uses_scan", path=CORPUS), args="f32[7]", jaxpr_text=False)
    phases.clear()
    again = run_jaxpr_text(other, phases.append)  # not the last trace: traced anew
    assert "trace" in phases and "f32[7]" in again.text
    for done in (printed, again):  # with its line map, so the GUI process need not parse the text
        assert done.equations is not None
        assert linking.equations_from_wire(done.equations) == linking.jaxpr_equations(done.text)


def test_the_collector_is_paused_while_jax_traces_and_back_after(tmp_path):
    """Tracing makes no cyclic garbage, and the collections rescanned the growing jaxpr (0.1-0.5 s
    of a 1 s trace at 10k equations): the worker pauses the collector while it loads the file and
    traces, failed or not, and only then."""
    import gc
    import sys

    path = tmp_path / "gc_probe.py"
    path.write_text(
        "import gc\nimport jax.numpy as jnp\n\nSEEN = [gc.isenabled()]\n\n"
        "def f(x):\n    SEEN.append(gc.isenabled())\n    return jnp.sin(x)\n\n"
        "def bad(x):\n    SEEN.append(gc.isenabled())\n    return undefined_name + x\n",
        encoding="utf-8",
    )
    assert gc.isenabled()
    result = run_trace(TraceRequest(FunctionRef(qualname="f", path=str(path)), args="f32[3]"), lambda phase: None)
    assert "sin" in primitives(result.graph)
    assert gc.isenabled() and sys.modules["gc_probe"].SEEN == [False, False]  # loading the file, tracing
    with pytest.raises(TraceError):
        run_trace(TraceRequest(FunctionRef(qualname="bad", path=str(path)), args="f32[3]"), lambda phase: None)
    assert gc.isenabled() and sys.modules["gc_probe"].SEEN == [False, False]  # the file is loaded afresh each time


def test_each_equation_gets_its_own_params_and_sub_jaxprs_though_they_are_made_once():
    """The builder makes the params' text and sub-jaxprs once per distinct (primitive, params):
    every equation must still get exactly what it alone would."""
    import jax.numpy as jnp
    from jax import lax

    from jaxscope.worker import jax_compat as jc
    from jaxscope.worker.to_graph import GraphBuilder, build_graph, params_text

    def f(x):
        a = jnp.sum(x, axis=0) + jnp.sum(x, axis=1) + jnp.sum(x, axis=0)
        b = lax.cond(a[0] > 0, jnp.sin, jnp.cos, a) + lax.cond(a[1] > 0, jnp.cos, jnp.sin, a)
        return jnp.where(x > 0, x, 0.5) * b

    closed = jax.make_jaxpr(f)(jnp.ones((3, 3)))
    graph = build_graph(closed, "f")
    eqns = {n.id: n for n in graph.top.nodes if n.kind == "eqn"}
    for i, eqn in enumerate(closed.jaxpr.eqns):
        node = eqns[f"e{i}"]
        assert node.params == params_text(eqn.primitive.name, eqn.params)
        assert [ref.param for ref in node.subgraphs] == [p for p, _, _ in jc.subjaxprs(eqn.params)]
    conds = [n for n in graph.top.nodes if n.label == "cond"]
    assert len(conds) == 2 and conds[0].subgraphs[0].body != conds[1].subgraphs[0].body  # sin/cos swapped
    builder = GraphBuilder({})
    texts = [builder.params("p", {"k": v})[1] for v in (1, True, 1.0, 1)]
    assert texts[0] != texts[1] != texts[2] and texts[3] is texts[0]  # equal values of other types print apart
    assert builder.params("p", {"k": np.arange(3)})[1] == (("k", "[0 1 2]"),)  # unhashable: not kept


def test_a_program_short_enough_for_one_line_is_printed_one_equation_per_line(tmp_path: pathlib.Path) -> None:
    """Issue 59.6: a 2-equation function printed on one line (its locations stacked after it) could not be
    linked, and every HTML export of it warned "this jaxpr's text did not line up with its equations"."""
    source = tmp_path / "two.py"
    source.write_text("import jax.numpy as jnp\n\n\ndef f(x):\n    return jnp.sin(x) * 2\n")
    result = run_trace(TraceRequest(FunctionRef(qualname="f", path=str(source)), args="f32[3]", jaxpr_text=True), lambda p: None)
    lines = result.jaxpr_text.rstrip("\n").split("\n")
    assert lines[0].endswith(" let") and "= sin a" in lines[1] and "= mul b" in lines[2], lines
    links = linking.jaxpr_links(result.graph, result.jaxpr_text)
    assert links.exact == {"e0": 2, "e1": 3}
