"""StableHLO and compiled HLO from real jax, linked to the graph (worker.hlo + core.hlo_links)."""

from __future__ import annotations

import functools
import os
import re

import pytest

from jaxscope.core import linking
from jaxscope.core.hlo_links import fusions, hlo_links, stablehlo_links
from jaxscope.core.hlo_model import HloRequest, HloResult
from jaxscope.core.model import FunctionRef, TraceRequest, TraceResult

pytest.importorskip("jax")

from jaxscope.worker.hlo import run_hlo  # noqa: E402
from jaxscope.worker.trace import TraceFailed, run_trace  # noqa: E402

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
    links, _module = hlo_links(traced("structured").graph, result.text)
    assert links.lines_for_source(CASES, line("scan-body"))


def test_one_line_fuses_into_one_loop_fusion() -> None:
    graph = traced("fusable").graph
    links, module = hlo_links(graph, ir("fusable", "compiled").text)
    found = fusions(module, links, CASES)
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
    with pytest.raises(TraceFailed) as info:
        run_hlo(HloRequest(FunctionRef("structured", CASES), "f32[8], f32[8]"), lambda p: None)
    assert info.value.info.kind == "spec"


def test_ir_line_colours_are_made_once_per_file() -> None:
    graph = traced("structured").graph
    links = stablehlo_links(graph, ir("structured", "stablehlo").text)
    index = links.colour_index(CASES)
    assert index and index == links.line_colours(linking.line_colours(graph, CASES), CASES)
    assert links.colour_index(CASES) is index  # made once: the IR thread makes it, the GUI reads it
    assert links.colour_index("elsewhere.py") == {}
