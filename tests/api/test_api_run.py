"""`jaxscope.run` from Python (issue 56): the causes come back as data, errors as JaxscopeError with their code."""

from __future__ import annotations

import pathlib

import pytest

import jaxscope
from jaxscope.schema.run import RunResult

CORPUS = pathlib.Path(__file__).resolve().parents[1] / "worker" / "corpus" / "run_cases.py"


def test_run_returns_the_causes_as_data() -> None:
    result = jaxscope.run(f"{CORPUS}::adam_zero_bias", repeats=1, reference="f64")
    assert isinstance(result, RunResult) and result.ok and result.request.reference == "f64"
    (cause,) = result.causes
    assert (cause.kind, cause.explained, cause.outputs) == ("noise", True, ("[0]['bk']",))
    assert cause.sites[0].primitive == "reduce_sum" and cause.sites[0].source is not None
    assert all(lf.reference is not None for lf in result.leaves if lf.kind == "array")


def test_run_refuses_what_it_cannot_run() -> None:
    with pytest.raises(jaxscope.JaxscopeError, match="no device 'tpu'") as info:
        jaxscope.run(f"{CORPUS}::add", args_spec="f32[4], f32[4]", reference="tpu", repeats=0)
    assert info.value.code == 2
    with pytest.raises(ValueError, match="one of default, high, highest"):
        jaxscope.run(f"{CORPUS}::add", args_spec="f32[4], f32[4]", precision="fast")
    with pytest.raises(TypeError, match="target string"):
        jaxscope.run(print)  # type: ignore[arg-type]
