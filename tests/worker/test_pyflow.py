"""Recording Python control flow while tracing (worker.pyflow + core.flow), in-process."""

from __future__ import annotations

import json
import os
import re
import sys

import pytest

from jaxscope.schema.flow import RECORDING_STOPPED, Construct, FileFlow
from jaxscope.schema.trace import FunctionRef, TraceRequest, TraceResult
from jaxscope.worker import pyflow
from jaxscope.worker.pyflow import Recorder
from jaxscope.worker.trace import TraceError, run_trace

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
CASES = os.path.join(HERE, "flow_cases.py")
HELPERS = os.path.join(HERE, "flow_helpers.py")


def trace(name: str, args: str, record_flow: bool = True, path: str = CASES) -> TraceResult:
    request = TraceRequest(FunctionRef(qualname=name, path=path), args=args, record_flow=record_flow)
    return run_trace(request, lambda phase: None)


def line(marker: str, path: str = CASES) -> int:
    with open(path) as fh:
        found = [i for i, text in enumerate(fh, 1) if re.search(rf"# {marker}(\s|$)", text) and not text.lstrip().startswith("#")]
    assert len(found) == 1, (marker, found)
    return found[0]


def file_flow(result: TraceResult, path: str = CASES) -> FileFlow:
    assert result.flow is not None
    f = result.flow.file(path)
    assert f is not None, [x.path for x in result.flow.files]
    return f


def construct_of(report, marker: str, kind: str | None = None, path: str = CASES) -> Construct:  # type: ignore[no-untyped-def]
    c = report.file(path).construct_at(line(marker, path), kind)
    assert c is not None, marker
    return c


def construct(result: TraceResult, marker: str, kind: str | None = None, path: str = CASES) -> Construct:
    c = file_flow(result, path).construct_at(line(marker, path), kind)
    assert c is not None, marker
    return c


@pytest.mark.parametrize(
    ("mode", "if_verdict", "elif_verdict", "ran", "not_ran"),
    [
        ("'tanh'", "body taken", "never reached", "BODY_TANH", ("BODY_RELU", "BODY_ELSE")),
        ("'relu'", "else taken", "body taken", "BODY_RELU", ("BODY_TANH", "BODY_ELSE")),
        ("'gelu'", "else taken", "else taken", "BODY_ELSE", ("BODY_TANH", "BODY_RELU")),
    ],
)
def test_if_elif_else_on_a_static_argument(mode, if_verdict, elif_verdict, ran, not_ran):
    result = trace("branches", f"f32[3], {mode}")
    assert construct(result, "IF_MODE").verdict == if_verdict
    assert construct(result, "IF_MODE").kind == "if"
    elif_ = construct(result, "ELIF_MODE")
    assert (elif_.kind, elif_.verdict) == ("elif", elif_verdict)
    f = file_flow(result)
    assert f.hits(line(ran)) == 1
    for marker in not_ran:
        assert f.hits(line(marker)) == 0


@pytest.mark.parametrize(
    ("a", "b", "outer", "inner"),
    [
        ("True", "True", "body taken", "body taken"),
        ("True", "False", "body taken", "else taken"),
        ("False", "True", "else taken", "never reached"),
    ],
)
def test_nested_if(a, b, outer, inner):
    result = trace("nested", f"f32[3], {a}, {b}")
    assert construct(result, "OUTER_IF").verdict == outer
    assert construct(result, "INNER_IF").verdict == inner


@pytest.mark.parametrize("n", [0, 1, 5])
def test_for_range_counts_unrolled_layers(n):
    result = trace("layers", f"f32[3], {n}")
    c = construct(result, "FOR_LAYERS", "for")
    assert (c.verdict, c.count, c.per_call) == ("unrolled", n, (n,))
    assert file_flow(result).hits(line("FOR_LAYERS_BODY")) == n
    assert sum(1 for node in result.graph.top.nodes if node.label == "tanh") == n


def test_while_on_a_python_counter():
    c = construct(trace("counter", "f32[3]"), "WHILE_K", "while")
    assert (c.verdict, c.count, c.test) == ("unrolled", 4, "k < 4")


def test_conditional_expression_in_a_lambda_is_line_level_only():
    for flag in ("True", "False"):
        c = construct(trace("lambda_ifexp", f"f32[3], {flag}"), "LAMBDA_IFEXP", "ifexp")
        assert c.verdict == "line ran"  # branches share a line: not guessed


def test_helper_in_another_module_called_with_different_statics():
    result = trace("helpers", "f32[3]")
    outer = construct(result, "HELPERS_FOR", "for")
    assert (outer.count, outer.per_call) == (3, (3,))
    helper_if = construct(result, "HELPER_IF", "if", path=HELPERS)
    assert helper_if.verdict == "both taken"  # i = 0, 2 even; i = 1 odd
    assert helper_if.count == 3
    loop = construct(result, "HELPER_FOR", "for", path=HELPERS)
    assert loop.verdict == "unrolled"
    assert loop.count == 3
    assert loop.per_call == (0, 1, 2)
    f = file_flow(result, HELPERS)
    assert (f.hits(line("HELPER_EVEN", HELPERS)), f.hits(line("HELPER_ODD", HELPERS))) == (2, 1)


def test_lax_cond_branches_are_staged_not_taken():
    result = trace("staged_cond", "f32[3]")
    f = file_flow(result)
    true_line, false_line = line("COND_TRUE"), line("COND_FALSE")
    assert f.hits(true_line) == 1 and f.hits(false_line) == 1  # JAX traced both branch functions
    assert {true_line, false_line} <= set(f.staged_lines)
    assert line("COND_CALL") not in f.staged_lines  # the cond equation itself is top level
    for c in f.constructs:
        if c.line in (true_line, false_line):
            assert "taken" not in c.verdict


def test_record_flow_false_changes_nothing_else():
    on = trace("layers", "f32[3], 3")
    off = trace("layers", "f32[3], 3", record_flow=False)
    assert off.flow is None and on.flow is not None
    assert on.graph == off.graph
    assert on.jaxpr_text == off.jaxpr_text


def test_flow_survives_json():
    result = trace("helpers", "f32[3]")
    back = TraceResult.from_json(result.to_json())
    assert back.flow == result.flow
    data = json.loads(result.to_json())
    del data["flow"], data["request"]["record_flow"]  # a result written before flow existed
    old = TraceResult.from_json(json.dumps(data))
    assert old.flow is None and old.request.record_flow is True


def test_recorder_restores_the_previous_trace_function_even_on_errors():
    before = sys.gettrace()

    def other(frame, event, arg):  # a pre-existing tracer (a debugger, coverage) must come back
        return None

    sys.settrace(other)
    try:
        with pytest.raises(ZeroDivisionError):
            with Recorder():
                1 / 0  # noqa: B018 - raises inside the recording on purpose
        assert sys.gettrace() is other
    finally:
        sys.settrace(before)


def test_trace_errors_propagate_and_the_recorder_is_removed():
    before = sys.gettrace()
    with pytest.raises(TraceError) as info:
        trace("bad_if", "f32[3]")
    assert info.value.info.kind == "tracer"
    assert info.value.info.location is not None and info.value.info.location.line == line("BAD_IF")
    assert sys.gettrace() is before


def test_a_trace_past_the_call_budget_goes_on_unrecorded(monkeypatch):
    """A program that makes more Python calls than the budget while traced is big: the recorder
    stops (tracing under a trace function is ~2.5x slower), and the result has no flow, a warning
    that says why, and the same graph. (Under sys.monitoring a process sees JAX's calls once, so
    the budget here is one the first call already spends.)"""
    monkeypatch.setattr(pyflow, "CALL_BUDGET", 300 if sys.version_info < (3, 12) else 0)
    before = sys.gettrace()
    result = trace("layers", "f32[3], 3")
    assert sys.gettrace() is before
    assert result.flow is None and result.warnings[0].startswith(RECORDING_STOPPED)
    assert result.graph == trace("layers", "f32[3], 3", record_flow=False).graph
    monkeypatch.setattr(pyflow, "CALL_BUDGET", 10**9)
    assert trace("layers", "f32[3], 3").flow is not None and not trace("layers", "f32[3], 3").warnings


CORPUS = [
    ("branches", "f32[3], 'relu'"),
    ("nested", "f32[3], 1, 0"),
    ("layers", "f32[3], 3"),
    ("counter", "f32[3]"),
    ("lambda_ifexp", "f32[3], True"),
    ("helpers", "f32[3]"),
    ("staged_cond", "f32[3]"),
    ("calls_of_every_kind", "f32[3]"),
]


@pytest.mark.skipif(not hasattr(sys, "monitoring"), reason="sys.monitoring is Python 3.12+")
def test_the_monitoring_recorder_sees_what_the_trace_recorder_sees(monkeypatch):
    """Both recorders give the same hits per call, so the same report: generators (a call per
    resume), recursion, an exception raised and caught in user code, lambdas, helpers in another
    file. The monitoring one leaves sys.settrace alone and its tool id free."""
    from jaxscope.worker import trace as trace_mod

    assert isinstance(Recorder(), pyflow.MonitorRecorder)
    reports = {}
    for kind in (pyflow.TraceRecorder, Recorder):
        monkeypatch.setattr(trace_mod, "Recorder", kind)
        reports[kind] = [trace(name, args).flow for name, args in CORPUS]
    for (name, _), by_trace, by_monitor in zip(CORPUS, *reports.values()):
        assert by_trace is not None and by_monitor is not None, name
        assert (by_monitor.files, by_monitor.user_calls, by_monitor.line_events) == (
            by_trace.files,
            by_trace.user_calls,
            by_trace.line_events,
        ), name
    every = reports[Recorder][-1]
    assert construct_of(every, "GEN_LOOP").kind == "for" and line("HANDLED") in dict(every.file(CASES).line_hits)
    assert all(sys.monitoring.get_tool(t) is None for t in pyflow._TOOL_IDS)


@pytest.mark.skipif(not hasattr(sys, "monitoring"), reason="sys.monitoring is Python 3.12+")
def test_with_no_monitoring_tool_id_free_the_trace_recorder_is_used():
    taken = [t for t in pyflow._TOOL_IDS if sys.monitoring.get_tool(t) is None]
    for t in taken:
        sys.monitoring.use_tool_id(t, "someone else")
    try:
        assert isinstance(Recorder(), pyflow.TraceRecorder)
    finally:
        for t in taken:
            sys.monitoring.free_tool_id(t)
    assert isinstance(Recorder(), pyflow.MonitorRecorder)
