"""Purity and state diagnostics on real traces (worker.diagnose + core.diagnostics), in-process."""

from __future__ import annotations

import os
import re

import pytest

from jaxscope.schema.graph import resolve
from jaxscope.schema.trace import Diagnostic, FunctionRef, TraceRequest, TraceResult
from jaxscope.worker.trace import run_trace

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "purity_cases.py")


def trace(name: str, args: str, record_flow: bool = True) -> TraceResult:
    return run_trace(TraceRequest(FunctionRef(qualname=name, path=CASES), args=args, record_flow=record_flow), lambda p: None)


def line(marker: str) -> int:
    with open(CASES) as fh:
        found = [i for i, text in enumerate(fh, 1) if re.search(rf"# {marker}(\s|$)", text)]
    assert len(found) == 1, marker
    return found[0]


def of_kind(result: TraceResult, kind: str) -> list[Diagnostic]:
    return [d for d in result.diagnostics if d.kind == kind]


def lines(d: Diagnostic) -> set[int]:
    return {loc.line for loc in d.locations if loc.file == CASES}


@pytest.mark.parametrize("record", [True, False])
def test_global_arrays_are_named_constants_with_size_lines_and_nodes(record: bool) -> None:
    result = trace("reads_globals", "f32[4]", record_flow=record)
    consts = {d.title.split("`")[1]: d for d in of_kind(result, "captured-constant")}
    assert set(consts) == {"SCALE", "TABLE"}
    assert "f32[4], 16 B" in consts["SCALE"].title
    assert "f32[4,256], 4.0 KiB" in consts["TABLE"].title
    assert line("scale-read") in lines(consts["SCALE"])
    assert line("gain-read") in lines(consts["TABLE"])
    for d in consts.values():
        kinds = {resolve(result.graph, p)[1].kind for p in d.nodes}
        assert kinds == {"const", "eqn"}, d.nodes
    scalars = of_kind(result, "captured-scalar")
    assert [d.title for d in scalars] == ["global `GAIN` = 0.5 is baked into the program"]
    assert lines(scalars[0]) == {line("gain-read")}


def test_closure_array_is_named() -> None:
    result = trace("closure", "f32[4]")
    (d,) = of_kind(result, "captured-constant")
    assert "`bias` (f32[4], 16 B)" in d.title
    assert line("closure-read") in lines(d)


def test_trace_time_print_is_attributed_to_its_line_and_debug_print_is_not() -> None:
    result = trace("prints", "f32[3]")
    (d,) = of_kind(result, "trace-print")
    assert lines(d) == {line("trace-print")}
    assert "tracing, x = JitTracer(float32[3])" in d.title
    assert "jax.debug.print" in d.fix
    assert any(node.label == "debug_print" for node in result.graph.top.nodes)


def test_globals_rebound_and_mutated_while_tracing() -> None:
    result = trace("mutates", "f32[3]")
    changed = {d.title: d for d in of_kind(result, "global-changed")}
    assert set(changed) == {"global `COUNT` was rebound while tracing", "global `HISTORY` was mutated in place while tracing"}
    assert line("rebind") in lines(changed["global `COUNT` was rebound while tracing"])
    assert line("mutate") in lines(changed["global `HISTORY` was mutated in place while tracing"])


def test_leaked_tracer_is_an_error_at_its_line() -> None:
    result = trace("leaks", "f32[3]")
    (d,) = of_kind(result, "leaked-tracer")
    assert d.severity == "error" and "`LEAK`" in d.title
    assert line("leak") in lines(d)
    assert result.diagnostics[0] is d  # errors first
    assert not of_kind(result, "global-changed")  # the leak is not reported twice


def test_key_reuse_names_both_uses() -> None:
    result = trace("key_reuse", "key[], f32[3]")
    (d,) = of_kind(result, "key-reuse")
    assert "`key`" in d.title
    assert lines(d) == {line("use-1"), line("use-2")}
    assert len(d.nodes) == 2


def test_clean_functions_have_no_diagnostics() -> None:
    assert trace("clean", "f32[2,3], f32[3,4]").diagnostics == ()
    assert not of_kind(trace("key_split", "key[], f32[3]"), "key-reuse")


def test_a_request_without_diagnostics_skips_them() -> None:
    """`jaxscope export` asks for none: the graph alone, no diagnose time."""
    request = TraceRequest(FunctionRef(qualname="reads_globals", path=CASES), args="f32[4]", diagnose=False)
    result = run_trace(request, lambda p: None)
    assert result.diagnostics == () and "diagnose" not in result.timings
    assert trace("reads_globals", "f32[4]").diagnostics  # the same function has some when asked


def test_diagnostics_survive_json() -> None:
    result = trace("reads_globals", "f32[4]")
    again = TraceResult.from_json(result.to_json())
    assert again.diagnostics == result.diagnostics


@pytest.mark.parametrize(
    ("name", "title", "marker"),
    [
        ("counts_in_a_dict", "`_tally['calls']` changed while tracing", "dict-item"),
        ("counts_in_an_object", "`_steps.n` changed while tracing", "attr-store"),
        ("counts_in_a_closure", "`n` changed while tracing", "nonlocal-store"),
    ],
)
def test_a_counter_kept_outside_the_arguments_is_flagged(name: str, title: str, marker: str) -> None:
    (found,) = of_kind(trace(name, "f32[4]"), "trace-time-state")
    assert found.title == title and found.severity == "warning"
    assert line(marker) in lines(found) and "state in, new state out" in found.fix


def test_host_random_numbers_read_at_trace_time_are_flagged_by_line() -> None:
    found = {d.title: d for d in of_kind(trace("host_random", "f32[4]"), "trace-time-call")}
    assert set(found) == {"`np.random.rand` ran at trace time", "`random.random` ran at trace time"}
    assert lines(found["`np.random.rand` ran at trace time"]) == {line("np-rand")}
    assert lines(found["`random.random` ran at trace time"]) == {line("py-random")}
    import random

    import numpy as np

    assert not hasattr(np.random.rand, "__wrapped__") and not hasattr(random.random, "__wrapped__")  # restored


def test_a_pure_function_with_a_key_is_not_flagged() -> None:
    result = trace("pure_key", "f32[4], key[]")
    assert not of_kind(result, "trace-time-state") and not of_kind(result, "trace-time-call")
