"""Would jit retrace? Asked of real JAX in-process (worker.retrace)."""

from __future__ import annotations

import pathlib

import pytest

from jaxscope.analysis.retrace import RetraceRequest, RetraceResult
from jaxscope.schema.trace import FunctionRef
from jaxscope.worker.retrace import run_retrace
from jaxscope.worker.trace import TraceError

BASICS = str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "basics.py")
PARAMS = "{'w1': f32[4,8], 'b1': f32[8], 'w2': f32[8,3], 'b2': f32[3]}"


def retrace(before: str, after: str) -> RetraceResult:
    return run_retrace(RetraceRequest(FunctionRef("predict", BASICS), before, after), lambda p: None)


def test_same_call_is_a_cache_hit() -> None:
    result = retrace(f"{PARAMS}, f32[16,4]", f"{PARAMS}, f32[16,4]")
    assert not result.retraced and result.reasons == () and result.jax_says == ""


def test_new_shape_retraces_the_function_and_its_nested_jit() -> None:
    result = retrace(f"{PARAMS}, f32[16,4]", f"{PARAMS}, f32[32,4]")
    assert result.retraced and result.checked_by_jax
    assert [r.text() for r in result.reasons] == ["`x`: shape changed: f32[16,4] → f32[32,4]"]
    assert "for predict defined at" in result.jax_says and "now f32[32,4] and before f32[16,4]" in result.jax_says
    assert "for layer defined at" in result.jax_says  # the nested @jax.jit retraced too
    assert "<frozen" not in result.jax_says


def test_static_value_change_retraces() -> None:
    result = retrace(f"{PARAMS}, f32[16,4], use_bias=True", f"{PARAMS}, f32[16,4], use_bias=False")
    assert result.retraced and [r.kind for r in result.reasons] == ["static value"]


def test_static_vs_traced_is_not_run_through_one_jit() -> None:
    result = retrace(f"{PARAMS}, f32[16,4], use_bias=True", f"{PARAMS}, f32[16,4], use_bias=bool[]")
    assert result.retraced and not result.checked_by_jax
    assert [r.kind for r in result.reasons] == ["static vs traced"]


def test_a_failing_second_call_is_an_error_with_its_phase() -> None:
    with pytest.raises(TraceError) as info:
        retrace(f"{PARAMS}, f32[16,4]", f"{PARAMS}, f32[16,5]")
    assert info.value.info.phase == "trace (after)"
