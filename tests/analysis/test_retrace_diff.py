"""Why jit would retrace: the structural diff of two calls (core.retrace)."""

from __future__ import annotations

import pytest

from jaxscope.analysis.retrace import Reason, RetraceRequest, RetraceResult, diff_calls
from jaxscope.schema.trace import FunctionRef
from jaxscope.targets.argspec import parse_call
from jaxscope.targets.discover import discover_source

FN = discover_source("def f(x, params, n=2, *, mode='relu'):\n    return x\n").get("f")


def diff(a: str, b: str) -> list[Reason]:
    return diff_calls(FN, parse_call(a), parse_call(b))


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("f32[3], {'w': f32[2]}", "f32[3], {'w': f32[2]}", []),
        ("f32[3], {'w': f32[2]}", "f32[4], {'w': f32[2]}", [Reason("x", "shape", "f32[3]", "f32[4]")]),
        ("f32[3], {'w': f32[2]}", "bf16[3], {'w': f32[2]}", [Reason("x", "dtype", "f32[3]", "bf16[3]")]),
        (
            "f32[3], {'w': f32[2]}",
            "f32[3], {'w': i32[5]}",
            [Reason("params['w']", "dtype", "f32[2]", "i32[5]"), Reason("params['w']", "shape", "f32[2]", "i32[5]")],
        ),
        ("f32[3], {'w': f32[2]}", "f32[3], {'w': f32[2], 'b': f32[2]}", [Reason("params", "structure", "keys {'w'}", "keys {'w', 'b'}")]),
        ("f32[3], [f32[2]]", "f32[3], [f32[2], f32[2]]", [Reason("params", "structure", "1 items", "2 items")]),
        ("f32[3], [f32[2]]", "f32[3], {'w': f32[2]}", [Reason("params", "structure", "[f32[2]]", "{'w': f32[2]}")]),
        ("f32[3], f32[2], 3", "f32[3], f32[2], 4", [Reason("n", "static value", "3", "4")]),
        ("f32[3], f32[2], 3", "f32[3], f32[2], 3.0", [Reason("n", "static value", "3", "3.0")]),  # jit tells 3 and 3.0 apart
        ("f32[3], f32[2], 3", "f32[3], f32[2], i32[]", [Reason("n", "static vs traced", "3", "i32[]")]),
        ("f32[3], f32[2]", "f32[3], f32[2], mode='tanh'", [Reason("mode", "missing", "(default)", "'tanh'")]),
        ("f32[3], f32[2], mode='tanh'", "f32[3], f32[2], mode='tanh'", []),
    ],
)
def test_diff(a: str, b: str, expected: list[Reason]) -> None:
    assert diff(a, b) == expected


def test_without_signature_arguments_are_numbered() -> None:
    assert diff_calls(None, parse_call("f32[3], 1"), parse_call("f32[3], 2")) == [Reason("arg1", "static value", "1", "2")]


def test_summary_says_the_verdict_and_each_reason() -> None:
    result = RetraceResult(
        RetraceRequest(FunctionRef("f", "m.py"), "f32[3]", "f32[4]"),
        True,
        (Reason("x", "shape", "f32[3]", "f32[4]"),),
        jax_says="TRACING CACHE MISS:\n  different input types",
    )
    text = result.summary()
    assert text.splitlines()[0] == "jit would RETRACE: (f32[3]) → (f32[4])"
    assert "  - `x`: shape changed: f32[3] → f32[4]" in text
    assert "JAX says:\n  TRACING CACHE MISS:" in text
    hit = RetraceResult(RetraceRequest(FunctionRef("f", "m.py"), "f32[3]", "f32[3]"), False)
    assert hit.summary() == "jit would reuse the trace (cache hit): (f32[3]) → (f32[3])"
