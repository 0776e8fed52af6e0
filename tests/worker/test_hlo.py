"""StableHLO and compiled HLO from real jax, linked to the graph (worker.hlo + core.hlo_links)."""

from __future__ import annotations

import functools
import os
import re

import pytest

from jaxscope.ir import linking
from jaxscope.ir.hlo_links import fusions, hlo_links, stablehlo_links
from jaxscope.schema.hlo import HloRequest, HloResult
from jaxscope.schema.trace import FunctionRef, TraceRequest, TraceResult
from jaxscope.worker.hlo import run_hlo
from jaxscope.worker.trace import TraceError, run_trace

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "hlo_cases.py")
ARGS = {"structured": "f32[8]", "fusable": "f32[1024]"}


@functools.cache
def traced(fn: str) -> TraceResult:
    return run_trace(TraceRequest(FunctionRef(fn, CASES), ARGS[fn]), lambda p: None)


@functools.cache
def ir(fn: str, stage: str) -> HloResult:
    return run_hlo(HloRequest(FunctionRef(fn, CASES), ARGS[fn], stage), lambda p: None)  # type: ignore[arg-type]


def line(marker: str) -> int:
    with open(CASES) as fh:
        return next(i for i, t in enumerate(fh, 1) if t.rstrip().endswith(f"# {marker}"))


def test_every_equation_has_stablehlo_lines_and_back() -> None:
    graph = traced("structured").graph
    links = stablehlo_links(graph, ir("structured", "stablehlo").text)
    sources = linking.node_sources(graph)
    assert len(sources) > 15
    for path in sources:  # nested jit, cond branches, while cond/body, scan body included
        assert links.lines_for_nodes([path]), path
    text = ir("structured", "stablehlo").text.splitlines()
    located = [n for n in range(1, len(text) + 1) if links.source_for_line(n)]
    assert located
    for n in located:
        assert links.nodes_for_line(n), (n, text[n - 1])
    # the two calls of the jitted helper reach its body's lines
    assert {links.source_for_line(n)[1] for n in links.lines_for_source(CASES, line("inner-line"))} == {line("inner-line")}


def test_compiled_hlo_links_and_cost() -> None:
    result = ir("structured", "compiled")
    assert "HloModule" in result.text and "ENTRY" in result.text
    assert result.cost.get("flops", 0) > 0 and "transcendentals" in result.cost
    assert result.memory.get("argument_size_in_bytes") == 32.0  # f32[8]
    assert "compiled in" in result.summary()
    links, _fused = hlo_links(traced("structured").graph, result.text)
    assert links.lines_for_source(CASES, line("scan-body"))


def test_one_line_fuses_into_one_loop_fusion() -> None:
    graph = traced("fusable").graph
    links, fused = hlo_links(graph, ir("fusable", "compiled").text)
    found = fusions(fused, links, CASES)
    assert len(found) == 1
    (fusion,) = found
    labels = linking.node_labels(graph)
    assert fusion.kind == "kLoop"
    assert sorted(labels[p] for p in fusion.nodes) == ["add", "mul", "sin"]
    assert fusion.source_lines == (line("fused-line"),)


def test_stablehlo_keeps_user_locations_and_not_jaxscope_frames() -> None:
    text = ir("structured", "stablehlo").text
    assert "hlo_cases.py" in text
    assert re.search(r"#loc\d* = loc\(.*hlo_cases\.py\":" + str(line("cond-line")), text)


def test_a_failing_function_fails_in_its_phase() -> None:
    with pytest.raises(TraceError) as info:
        run_hlo(HloRequest(FunctionRef("structured", CASES), "f32[8], f32[8]"), lambda p: None)
    assert info.value.info.kind == "spec"


def test_ir_line_colours_are_made_once_per_file() -> None:
    graph = traced("structured").graph
    links = stablehlo_links(graph, ir("structured", "stablehlo").text)
    index = links.colour_index(CASES)
    assert index and index == links.line_colours(linking.line_colours(graph, CASES), CASES)
    assert links.colour_index(CASES) is index  # made once: the IR thread makes it, the GUI reads it
    assert links.colour_index("elsewhere.py") == {}


def test_the_worker_sends_the_stablehlo_op_map_of_the_graph_it_traced_last() -> None:
    from jaxscope.ir.hlo_links import ops_from_wire, ops_to_wire, stablehlo_ops

    request = TraceRequest(FunctionRef("structured", CASES), ARGS["structured"])
    graph = run_trace(request, lambda p: None).graph  # this worker's last trace
    done = run_hlo(HloRequest(request.function, request.args, "stablehlo"), lambda p: None)
    expected = stablehlo_ops(graph, done.text)
    assert done.ops is not None and "op_map" in done.timings
    assert ops_from_wire(done.ops) == expected and any(frame for _, frame in expected.values())
    links = stablehlo_links(graph, done.text, done.ops)
    nodes = list(linking.node_sources(graph))
    assert links.lines_for_nodes(nodes) == stablehlo_links(graph, done.text).lines_for_nodes(nodes)
    assert ops_from_wire(ops_to_wire(expected)) == expected
    # lowering a function other than the last trace: no map (the window parses the text itself)
    other = run_hlo(HloRequest(FunctionRef("fusable", CASES), ARGS["fusable"], "stablehlo"), lambda p: None)
    assert other.ops is None


def test_a_malformed_op_map_costs_only_itself() -> None:
    from jaxscope.ir.hlo_links import ops_from_wire, ops_to_wire, stablehlo_ops

    graph = traced("structured").graph
    text = ir("structured", "stablehlo").text
    good = ops_to_wire(stablehlo_ops(graph, text))
    for bad in ({}, {**good, "rows": good["rows"][:-1]}, {**good, "files": []}, {**good, "prims": None}):
        with pytest.raises(ValueError):
            ops_from_wire(bad)
        assert stablehlo_links(graph, text, bad).lines_for_nodes(["e0"]) == stablehlo_links(graph, text).lines_for_nodes(["e0"])


def test_the_worker_sends_the_compiled_hlo_op_map_and_fusions() -> None:
    from jaxscope.ir.hlo_links import hlo_ops, hlo_ops_from_wire

    request = TraceRequest(FunctionRef("fusable", CASES), ARGS["fusable"])
    graph = run_trace(request, lambda p: None).graph  # this worker's last trace
    done = run_hlo(HloRequest(request.function, request.args, "compiled"), lambda p: None)
    ops, fused = hlo_ops(graph, done.text)
    assert done.ops is not None and hlo_ops_from_wire(done.ops) == (ops, fused)
    assert fused and any(frame for _, frame in ops.values())
    sent_links, sent_fused = hlo_links(graph, done.text, done.ops)
    assert fusions(sent_fused, sent_links, CASES) == fusions(*reversed(hlo_links(graph, done.text)), CASES)
    no_fusions = {k: v for k, v in done.ops.items() if k != "fusions"}
    for bad in ({**done.ops, "fusions": [["f", "kLoop", 3]]}, {**done.ops, "fusions": None}, no_fusions):
        with pytest.raises(ValueError):
            hlo_ops_from_wire(bad)
        assert hlo_links(graph, done.text, bad)[1] == fused  # a malformed map costs only itself


def test_fusions_sort_each_path_once_and_take_an_equation_by_line_and_primitive(monkeypatch) -> None:
    """An unrolled loop's fusions each name the same thousands of equations: their natural sort
    keys are made once per path, not once per fusion (~40 ms of the IR thread at 1k equations)."""
    graph = traced("fusable").graph
    links, fused = hlo_links(graph, ir("fusable", "compiled").text)
    (name, kind, at, lines) = fused[0]
    many = [(f"{name}.{k}", kind, at, lines) for k in range(50)]  # fifty kernels of the same lines
    keyed: list[str] = []
    real = linking.natural_key
    monkeypatch.setattr(linking, "natural_key", lambda p: keyed.append(p) or real(p))
    found = fusions(many, links, CASES)
    assert len(found) == 50 and all(f.nodes == found[0].nodes for f in found)
    assert sorted(keyed) == sorted(set(keyed)) == sorted(found[0].nodes)
    labels = linking.node_labels(graph)
    for n in lines:
        assert all(labels[p] == links.primitive_of(n) for p in links.nodes_for_line(n)), n


def test_one_target_is_lowered_and_compiled_once_for_every_stage_and_run(tmp_path) -> None:
    """Issue 61.2: the StableHLO text, the compiled text and a profiled run of one target (what
    `export --links jaxpr,stablehlo,compiled --overlay time` asks) share one lowering and one
    executable in the worker; an edit of the file makes them anew."""
    from jaxscope.worker import program

    source = tmp_path / "step.py"
    source.write_text("import jax.numpy as jnp\n\ndef f(x):\n    return jnp.tanh(x @ x.T).sum()\n")
    ref = FunctionRef("f", str(source))
    phases: list[str] = []
    stable = run_hlo(HloRequest(ref, "f32[16,16]", "stablehlo"), phases.append)
    made = program._LAST[0]
    compiled = run_hlo(HloRequest(ref, "f32[16,16]", "compiled"), phases.append)
    executable = made.compiled
    timed = run_hlo(HloRequest(ref, "f32[16,16]", "compiled", profile=2), phases.append)
    assert program._LAST == [made] and made.compiled is executable is not None
    assert phases.count("lower") == 1 and phases.count("compile") == 1 and "profile" in phases, phases
    assert "stablehlo" in stable.text and timed.text == compiled.text and timed.run_s > 0
    source.write_text(source.read_text() + "\n# edited\n")
    os.utime(source, ns=(made.key[-1][0][0] + 10**9, made.key[-1][0][0] + 10**9))
    run_hlo(HloRequest(ref, "f32[16,16]", "compiled"), phases.append)
    assert program._LAST[0] is not made and phases.count("compile") == 2
