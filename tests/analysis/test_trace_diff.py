"""The structural diff of two traces (issue 36) on hand-made graphs: matched by what equations are
and where their operands come from, never by ids or lines; the union drawing keeps both sides."""

from __future__ import annotations

from dataclasses import replace

from jaxscope.analysis.diff_view import REMOVED, report, union
from jaxscope.analysis.trace_diff import diff
from jaxscope.schema.graph import Graph, SourceLoc
from tests.graphs import mk_body, mk_graph


def _lines(graph: Graph, shift: int) -> Graph:
    """Every equation's source line moved by `shift` (an edit above the function)."""
    body = graph.top
    nodes = tuple(
        replace(n, source=SourceLoc("f.py", 10 + i + shift, function="f")) if n.kind == "eqn" else n for i, n in enumerate(body.nodes)
    )
    return replace(graph, bodies={**graph.bodies, body.id: replace(body, nodes=nodes)})


def test_same_program_with_lines_moved_is_identical() -> None:
    g = mk_graph(mk_body("b0", 2, [("mul", ["in0", "in1"]), ("tanh", ["e0"]), ("add", ["e1", "in0"])], ["e2"]))
    d = diff(_lines(g, 0), _lines(g, 7))
    assert d.identical and d.counts() == {"matched": 3, "added": 0, "removed": 0, "changed": 0}


def test_an_inserted_equation_is_added_and_its_reader_changed() -> None:
    a = mk_graph(mk_body("b0", 2, [("mul", ["in0", "in1"]), ("tanh", ["e0"]), ("add", ["e1", "in0"])], ["e2"]))
    # B: an exp between mul and tanh; every later id moved by one
    b = mk_graph(mk_body("b0", 2, [("mul", ["in0", "in1"]), ("exp", ["e0"]), ("tanh", ["e1"]), ("add", ["e2", "in0"])], ["e3"]))
    d = diff(a, b)
    assert d.added == ("e1",) and d.removed == ()
    assert [(c.a, c.b) for c in d.changed] == [("e1", "e2")]  # tanh now reads exp
    assert "operand 0 from exp (e1)" in d.changed[0].what[0]
    assert d.summary() == "matched 2, added 1, removed 0, changed 1"


def test_a_flag_that_swaps_a_branch_removes_and_adds() -> None:
    a = mk_graph(mk_body("b0", 1, [("sin", ["in0"]), ("tanh", ["e0"]), ("mul", ["e1", "in0"])], ["e2"]))
    b = mk_graph(mk_body("b0", 1, [("sin", ["in0"]), ("max", ["e0"]), ("mul", ["e1", "in0"])], ["e2"]))
    d = diff(a, b)
    assert d.removed == ("e1",) and d.added == ("e1",) and len(d.same) == 1 and len(d.changed) == 1
    text = "\n".join(report(a, b, d))
    assert "removed (in A only): 1 equation" in text and "added (in B only): 1 equation" in text
    assert text.endswith("matched 1, added 1, removed 1, changed 1")


def test_repeated_layers_pair_by_dataflow_not_by_position() -> None:
    """Three alike per-argument updates in A, the first one gone in B: the two left pair with their
    own arguments' updates (a positional match would shift them by one)."""
    chain = lambda k: [("mul", [f"in{k}", f"in{k}"]), ("add", [f"e{2 * k}", f"in{k}"])]  # noqa: E731
    a = mk_body("b0", 3, [*chain(0), *chain(1), *chain(2)], ["e1", "e3", "e5"])
    a = replace(a, nodes=tuple(replace(n, label=f"w{n.id[2:]}") if n.kind == "input" else n for n in a.nodes))
    b_eqns = [("mul", ["in0", "in0"]), ("add", ["e0", "in0"]), ("mul", ["in1", "in1"]), ("add", ["e2", "in1"])]
    b = mk_body("b0", 2, b_eqns, ["e1", "e3"])
    b = replace(b, nodes=tuple(replace(n, label=f"w{int(n.id[2:]) + 1}") if n.kind == "input" else n for n in b.nodes))
    d = diff(mk_graph(a), mk_graph(b))
    assert d.removed == ("e0", "e1") and d.added == () and not d.changed
    assert d.b_of["e2"] == "e0" and d.b_of["e5"] == "e3"
    assert d.inputs == ("- argument w0 f32[4]",)


def test_shape_and_params_changes_are_named() -> None:
    a = mk_graph(mk_body("b0", 1, [("reduce_sum", ["in0"], (), 1, (("axes", "(0,)"),))], ["e0"]))
    b = mk_graph(mk_body("b0", 1, [("reduce_sum", ["in0"], (), 1, (("axes", "(1,)"),))], ["e0"]))
    b = replace(b, bodies={"b0": replace(b.top, nodes=tuple(replace(n, avals=("f32[2]",)) if n.kind == "eqn" else n for n in b.top.nodes))})
    (change,) = diff(a, b).changed
    assert change.what == ("f32[4] → f32[2]", "axes=(0,) → (1,)")


def test_inside_a_jit_and_the_union_keeps_removed_nodes_wired() -> None:
    inner_a = mk_body("b1", 1, [("sin", ["in0"]), ("cos", ["e0"])], ["e1"])
    inner_b = mk_body("b1", 1, [("sin", ["in0"])], ["e0"])
    top = mk_body("b0", 1, [("jit", ["in0"], [("jit", "b1", "jaxpr")]), ("neg", ["e0"])], ["e1"])
    a, b = mk_graph(top, inner_a), mk_graph(top, inner_b)
    d = diff(a, b)
    assert d.removed == ("e0:0/e1",) and d.status_b() == {} and d.status_a() == {"e0:0/e1": "removed", "e0": "changed"}
    both = union(a, b, d)
    assert both.status[f"e0:0/{REMOVED}e1"] == "removed" and both.status["e0"] == "same"
    inner = both.graph.bodies[both.graph.top.nodes[1].subgraphs[0].body]
    assert {(e.src, e.dst) for e in inner.edges} >= {("e0", f"{REMOVED}e1"), (f"{REMOVED}e1", "out0")}
    assert both.graph.top.total_eqns == 4  # neg, jit, sin (both) and A's cos


def test_where_a_removed_equation_is_drawn_in_the_union() -> None:
    from jaxscope.analysis.diff_view import removed_path

    inner_a = mk_body("b1", 1, [("sin", ["in0"]), ("cos", ["e0"])], ["e1"])
    inner_b = mk_body("b1", 1, [("sin", ["in0"])], ["e0"])
    a = mk_graph(mk_body("b0", 1, [("neg", ["in0"]), ("jit", ["e0"], [("jit", "b1", "jaxpr")])], ["e1"]), inner_a)
    b = mk_graph(mk_body("b0", 1, [("jit", ["in0"], [("jit", "b1", "jaxpr")])], ["e0"]), inner_b)
    d = diff(a, b)
    assert d.b_of["e1"] == "e0" and removed_path(d, "e1:0/e1") == f"e0:0/{REMOVED}e1" and removed_path(d, "e0") == f"{REMOVED}e0"
    both = union(a, b, d)
    assert both.status[removed_path(d, "e1:0/e1")] == "removed" and both.status[removed_path(d, "e0")] == "removed"


def test_equations_of_a_library_jit_are_reported_at_the_line_that_called_it() -> None:
    """JAX cuts tracebacks at each traced function: the equations inside jnp.linalg.norm's jit have
    no frame of the user's, so the report names the jit's call site, not "-"."""
    at = SourceLoc("/home/u/mlp.py", 19, function="update")
    norm = mk_body("b1", 1, [("mul", ["in0", "in0"]), ("reduce_sum", ["e0"]), ("sqrt", ["e1"])], ["e2"])
    a = mk_graph(mk_body("b0", 1, [("neg", ["in0"])], ["e0"]))
    top = mk_body("b0", 1, [("neg", ["in0"]), ("jit", ["e0"], [("jit", "b1", "jaxpr")]), ("div", ["e0", "e1"])], ["e2"])
    top = replace(top, nodes=tuple(replace(n, source=at) if n.id in ("e1", "e2") else n for n in top.nodes))
    b = mk_graph(top, norm)
    d = diff(a, b)
    assert set(d.added) == {"e1", "e2", "e1:0/e0", "e1:0/e1", "e1:0/e2"}
    grouped = report(a, b, d)
    assert "  +    5  (top level)  mlp.py:19  jit, mul, reduce_sum, sqrt, div" in grouped
    every = [line for line in report(a, b, d, every=True) if line.startswith("  + e1:0/")]
    assert len(every) == 3 and all(line.endswith("mlp.py:19") for line in every)


def _train_step(layers: int) -> Graph:
    """A train step as jax orders it: the layers forward, the head, the layers backward (last first),
    then one update per parameter, the head's last (as a params dict flattens `blocks` before `emb`)."""
    eqns: list[tuple[str, list[str]]] = []
    scopes: list[str] = []

    def eq(label: str, ops: list[str], scope: str = "") -> str:
        eqns.append((label, ops))
        scopes.append(scope)
        return f"e{len(eqns) - 1}"

    emb = f"in{layers + 1}"
    h, acts = "in0", []
    for k in range(layers):
        acts.append(h)
        h = eq("tanh", [eq("mul", [h, f"in{k + 1}"], f"layer{k}")], f"layer{k}")
    eq("reduce_sum", [eq("mul", [h, emb])])
    ct, grads = eq("mul", [h, h]), {}
    grads[layers] = eq("mul", [ct, h])
    for k in reversed(range(layers)):
        grads[k] = eq("mul", [ct, acts[k]], f"transpose(jvp(layer{k}))")
        ct = eq("mul", [ct, f"in{k + 1}"], f"transpose(jvp(layer{k}))")
    new = [eq("sub", [f"in{k + 1}", eq("mul", [grads[k], grads[k]])]) for k in range(layers + 1)]
    body = mk_body("b0", layers + 2, eqns, new)
    labels = {f"in{k + 1}": f"w{k}" for k in range(layers)} | {emb: "emb"}
    nodes = tuple(
        replace(n, name_stack=scopes[int(n.id[1:])]) if n.kind == "eqn" else replace(n, label=labels.get(n.id, n.label)) for n in body.nodes
    )
    return mk_graph(replace(body, nodes=nodes))


def test_a_layer_inserted_into_a_train_step_is_added_and_nothing_else_moves() -> None:
    """Its backward comes first and its update last but one: the layers after it backward and every
    other update pair with their own (a pairing by order alone would give the head's update to the
    new layer's)."""
    a, b = _train_step(2), _train_step(3)
    d = diff(a, b)
    added = len(b.top.nodes) - len(a.top.nodes) - 2  # the new layer's equations: all but its input and output
    assert d.removed == () and len(d.added) == added
    # changed: what read layer 1's output (the head, the loss's cotangent and the head's gradient) now
    # reads layer 2's, and layer 1's backward reads layer 2's; nothing else
    assert [(c.a, c.b) for c in d.changed] == [("e4", "e6"), ("e6", "e8"), ("e7", "e9"), ("e8", "e12"), ("e9", "e13")]
    assert all(len(c.what) == 1 and c.what[0].startswith("operand") for c in d.changed)
    assert d.b_of["e16"] == "e22" and d.b_of["e17"] == "e23"  # the head's update, not the new layer's


def test_two_functions_of_one_file_differ_by_their_work_not_their_names() -> None:
    """Issue 60.5: `diff f.py::step_a f.py::step_b`, two versions of a step: the traced functions'
    and their helpers' names (`mlp_a` -> `mlp_b`) are no change; what changed is the tanh become a
    relu and a scale (13 equations the same, 5 fed otherwise), not every equation."""
    import json

    from tests.conftest import CORPUS, run_cli

    corpus = CORPUS / "two_steps.py"
    done = run_cli("diff", f"{corpus}::step_a", f"{corpus}::step_b", "--json")
    assert done.returncode == 1, done.stderr  # the programs differ
    found = json.loads(done.stdout)
    assert found["matched"] >= 10 and found["changed"] <= 6, found
    assert "function mlp_a" not in run_cli("diff", f"{corpus}::step_a", f"{corpus}::step_b").stdout
