"""Every tutorial in examples/: traced, laid out and exported, its guide links resolve, and what it
teaches is asserted on the real trace (in-process worker code, real jax and Graphviz)."""

from __future__ import annotations

import functools
import pathlib
import re
import xml.etree.ElementTree as ET

import pytest

from jaxscope.analysis.guide import find, list_examples, parse_guide
from jaxscope.analysis.retrace import RetraceRequest
from jaxscope.layout.engine import compute_layout
from jaxscope.render.svg import render_svg
from jaxscope.schema.expansion import auto_expanded
from jaxscope.schema.trace import FunctionRef, TraceRequest, TraceResult
from jaxscope.targets.discover import default_function, discover_file
from jaxscope.worker.retrace import run_retrace
from jaxscope.worker.trace import TraceError, run_trace
from tests.conftest import line_in

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
FILES = sorted(EXAMPLES.glob("*.py"))


@functools.cache
def trace(name: str, function: str, args: str | None = None) -> TraceResult:
    path = str(EXAMPLES / f"{name}.py")
    if args is None:
        args = discover_file(path).example_args[function]
    return run_trace(TraceRequest(FunctionRef(function, path), args), lambda p: None)


def failure(name: str, function: str) -> TraceError:
    path = str(EXAMPLES / f"{name}.py")
    with pytest.raises(TraceError) as info:
        run_trace(TraceRequest(FunctionRef(function, path), discover_file(path).example_args[function]), lambda p: None)
    return info.value


def line_of(name: str, fragment: str) -> int:
    return line_in(EXAMPLES / f"{name}.py", fragment, unique=True)


def labels(result: TraceResult) -> list[str]:
    return [n.label for b in result.graph.bodies.values() for n in b.nodes if n.kind == "eqn"]


def test_teaching_order_and_summaries() -> None:
    examples = list_examples(str(EXAMPLES))
    assert [e.name for e in examples][:9] == [
        "basics",
        "jit_tracing",
        "hidden_state",
        "immutability",
        "train_step",
        "prng",
        "control_flow",
        "transformer",
        "sharding",
    ]
    assert all(e.title and e.summary for e in examples), [(e.name, e.title, e.summary) for e in examples if not e.summary]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_function_with_inputs_traces_and_broken_ones_fail_at_their_line(path: pathlib.Path) -> None:
    info = discover_file(str(path))
    assert info.main and default_function(info) is not None, "every tutorial names its main function"
    assert info.example_args, "every tutorial carries its own inputs"
    for function in info.example_args:
        if function.startswith("broken_"):
            exc = failure(path.stem, function)
            assert exc.info.location is not None and exc.info.location.file == str(path)
            assert exc.info.hint, function
        else:
            result = trace(path.stem, function)
            assert result.graph.top.total_eqns > 0, function


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_main_function_exports_and_every_guide_link_finds_nodes(path: pathlib.Path) -> None:
    info = discover_file(str(path))
    result = trace(path.stem, info.main)
    layout = compute_layout(result.graph, auto_expanded(result.graph))
    ET.fromstring(render_svg(result.graph, layout))  # well-formed SVG
    guide = parse_guide(info.docstring)
    assert guide.title == info.doc
    links = guide.links()
    assert len(links) >= 2, "a tutorial shows at least two things"
    for text, query in links:
        assert find(result.graph, query), f"link [{text}](show:{query}) finds nothing in {info.main}"


# ---------------------------------------------------------------- what each tutorial claims


def test_control_flow_static_if_python_loop_and_staged_cond() -> None:
    off = trace("control_flow", "step", "f32[4,8], f32[8,8], training=False, n_layers=2")
    flow = off.flow.file(str(EXAMPLES / "control_flow.py"))
    assert flow.construct_at(line_of("control_flow", "if training:"), "if").verdict == "else taken"
    assert flow.construct_at(line_of("control_flow", "for _ in range(n_layers)"), "for").count == 2
    assert labels(off).count("tanh") == 2 and "cond" in labels(off)
    on = trace("control_flow", "step")
    assert labels(on).count("tanh") == 3
    exc = failure("control_flow", "broken_traced_if")
    assert exc.info.exc_type == "TracerBoolConversionError" and "lax.cond" in exc.info.hint
    assert exc.info.location.line == line_of("control_flow", "if x.sum() > 0:")
    assert "cond" in labels(trace("control_flow", "staged_if"))
    assert labels(trace("control_flow", "python_loop")).count("sin") == 4  # unrolled
    assert labels(trace("control_flow", "scan_loop")).count("sin") == 1  # one staged body
    assert "scan" in labels(trace("control_flow", "scan_loop"))
    assert "while" in labels(trace("control_flow", "newton_sqrt"))


def test_prng_reuse_is_diagnosed_and_the_fix_is_clean() -> None:
    (reuse,) = [d for d in trace("prng", "reused_key").diagnostics if d.kind == "key-reuse"]
    reused_at = line_of("prng", "b = jax.random.normal(key, x.shape)  # same key")
    assert {loc.line for loc in reuse.locations} == {reused_at - 1, line_of("prng", "# same key")}
    for function in ("sample", "fixed_key"):
        assert not [d for d in trace("prng", function).diagnostics if d.kind == "key-reuse"], function
    assert {"random_split", "random_fold_in"} <= set(labels(trace("prng", "sample")))


def test_immutability_updates_are_scatters() -> None:
    found = set(labels(trace("immutability", "update")))
    assert {"scatter", "scatter-add", "dynamic_update_slice"} <= found
    exc = failure("immutability", "broken_inplace")
    assert "immutable" in exc.info.message and ".at[" in exc.info.hint


def test_hidden_state_constant_literal_and_trace_time_print() -> None:
    result = trace("hidden_state", "forward")
    kinds = {d.kind: d for d in result.diagnostics}
    assert "`SCALE`" in kinds["captured-constant"].title
    assert "`OFFSET` = 1.0" in kinds["captured-scalar"].title
    assert kinds["trace-print"].locations[0].line == line_of("hidden_state", 'print("tracing forward with"')
    assert "debug_print" in labels(result)
    assert not trace("hidden_state", "fixed_forward").diagnostics[1:]  # at most its own debug_print note


def test_train_step_threads_state_in_and_out() -> None:
    result = trace("train_step", "train_step")
    top = result.graph.top
    inputs = [n.label for n in top.nodes if n.kind == "input"]
    outputs = [n.label for n in top.nodes if n.kind == "output"]
    assert any(label.startswith("params") for label in inputs) and any(label.startswith("opt_state") for label in inputs)
    assert any(label.startswith("result[0]") for label in outputs) and any(label.startswith("result[1]") for label in outputs)
    assert len(outputs) == len([i for i in inputs if i.startswith(("params", "opt_state"))]) + 1  # new state + loss
    assert not [d for d in result.diagnostics if d.severity != "info"]


def test_jit_tracing_retraces_on_a_new_shape_only() -> None:
    path = str(EXAMPLES / "jit_tracing.py")
    args = discover_file(path).example_args["forward"]
    same = run_retrace(RetraceRequest(FunctionRef("forward", path), args, args), lambda p: None)
    assert not same.retraced
    shape = re.search(r"f32\[(\d+),", args).group(1)
    other = args.replace(f"f32[{shape},", f"f32[{int(shape) * 2},", 1)
    new = run_retrace(RetraceRequest(FunctionRef("forward", path), args, other), lambda p: None)
    assert new.retraced and [r.kind for r in new.reasons] == ["shape"]


def test_transformer_is_a_big_program() -> None:
    result = trace("transformer", "train_step")
    assert result.graph.top.total_eqns > 500
    assert labels(result).count("dot_general") >= 20


def test_sharding_names_its_mesh_and_spells_out_collectives() -> None:
    """On one device (as in CI) the mesh has one device per axis: the constraints still name their
    specs and axes, the shard_map its specs, and its psum is there (more devices: `export --sharding`)."""
    from jaxscope.layout.labels import node_lines

    data = trace("sharding", "data_parallel")
    (constraint,) = [n for n in data.graph.top.nodes if n.label == "sharding_constraint"]
    assert node_lines(constraint)[1].startswith("P('data', None) @ data=")
    grid = [node_lines(n)[1] for n in trace("sharding", "tensor_parallel").graph.top.nodes if n.label == "sharding_constraint"]
    assert any(text.startswith("P(None, 'model')") for text in grid) and any(text.startswith("P('model', None)") for text in grid)
    found = labels(trace("sharding", "per_device"))
    assert "shard_map" in found and any(label.startswith("psum") for label in found)
