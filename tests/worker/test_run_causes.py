"""Verdicts by cause on real jax (issue 56): noise named by its cancellation, trace-time reads named by
their line, a float64 reference of a flax + optax step, each output's tolerance by its own dtype chain."""

from __future__ import annotations

import os
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from jaxscope.analysis.runs.verdicts import format_run
from jaxscope.schema.run import RunRequest, RunResult, run_result_from_jsonable
from jaxscope.schema.trace import FunctionRef
from jaxscope.worker.runs.compare import output_computes
from jaxscope.worker.runs.reference import run_reference
from jaxscope.worker.runs.retrace_diff import retrace_sites
from jaxscope.worker.runs.run import run_function
from tests.conftest import MODELS, line_in

CORPUS = os.path.join(os.path.dirname(__file__), "corpus", "run_cases.py")


def run(name: str, args: str = "", path: str = CORPUS, **kw: object) -> RunResult:
    request = RunRequest(FunctionRef(qualname=name, path=path), args=args, repeats=1, **kw)  # type: ignore[arg-type]
    return run_function(request, lambda p: None)


def line_of(marker: str) -> int:
    return line_in(pathlib.Path(CORPUS), f"# {marker}", ending=True)


def test_adam_noise_of_an_exactly_zero_gradient_is_explained_and_named() -> None:
    result = run("adam_zero_bias", inputs="@file")
    bias = next(lf for lf in result.leaves if lf.path == "[0]['bk']")
    assert not bias.allclose, "precondition: jit and eager differ beyond tolerance on the key bias's update"
    assert result.ok, result.verdict
    (cause,) = result.causes
    assert cause.kind == "noise" and cause.explained and cause.outputs == ("[0]['bk']",)
    site = cause.sites[0]
    assert site.primitive == "reduce_sum" and "[0]['bk']" in site.feeds and "digits cancel" in site.detail
    assert site.source is not None and site.source.line == line_in(pathlib.Path(CORPUS), 'params["bk"]  # a key bias')
    ref = bias.reference
    assert ref is not None and ref.dtype == "float64" and ref.jit_rmse is not None and ref.eager_rmse is not None
    assert ref.jit_rmse <= 10 * ref.eager_rmse  # both are noise around the float64 value
    assert result.evidence is not None and any("float64" in r for r in result.evidence.runs)
    assert "explained as noise" in result.verdict and "cause: noise, explained" in format_run(result)
    assert run_result_from_jsonable(__import__("json").loads(result.to_json())) == result


@pytest.mark.parametrize(("name", "use"), [("trace_time_numpy", "numpy-use"), ("trace_time_counter", "counter-use")])
def test_a_value_read_at_trace_time_fails_and_names_its_line(name: str, use: str) -> None:
    result = run(name, "f32[16]")
    assert not result.ok
    (cause,) = result.causes
    assert cause.kind == "trace-time" and not cause.explained and cause.outputs == ("",)
    assert cause.sites and cause.sites[0].source is not None and cause.sites[0].source.line == line_of(use)
    assert result.evidence is not None and result.evidence.replay_differs == ("",)  # jit is the traced program; eager is not
    said = {"trace_time_numpy": "`np.random.normal` ran at trace time", "trace_time_counter": "`_counter.count` changed while tracing"}
    assert [s.detail for s in result.evidence.trace_calls] == [said[name]]
    assert "argument" in cause.fix


def test_no_evidence_runs_when_nothing_differs_and_none_when_switched_off() -> None:
    agree = run("add", "f32[8], f32[8]")
    assert agree.ok and agree.evidence is None and agree.causes == ()
    off = run("trace_time_numpy", "f32[16]", evidence=False)
    assert not off.ok and off.evidence is None
    assert [c.kind for c in off.causes] == ["unexplained"] and "no evidence ran" in off.causes[0].evidence[-1]


def test_reference_f64_on_a_flax_optax_train_step() -> None:
    result = run("train_step", path=str(MODELS), inputs="@file", reference="f64")
    assert result.ok and result.evidence is not None
    assert result.evidence.runs == ("a float64 reference of the traced program on cpu:0",)
    arrays = [lf for lf in result.leaves if lf.kind == "array"]
    assert arrays and all(lf.reference is not None for lf in arrays)
    loss = next(lf for lf in arrays if lf.path == "[2]")
    assert loss.reference is not None and loss.reference.jit_rmse is not None and loss.reference.jit_rmse < 1e-5
    assert "against the reference" in format_run(result) and "made on the host cpu:0" in format_run(result)


def test_precision_is_applied_and_checked() -> None:
    result = run("add", "f32[8], f32[8]", precision="highest")
    assert result.ok and result.request.precision == "highest" and "precision highest" in format_run(result)
    with pytest.raises(Exception, match="no matmul precision"):
        run("add", "f32[8], f32[8]", precision="fastest")


def test_each_output_keeps_its_own_dtype_chain() -> None:
    closed = jax.make_jaxpr(lambda x: (x.astype(jnp.bfloat16) * 2, x * 3.0, (x.astype(jnp.bfloat16) * 2).astype(jnp.float32)))(jnp.ones(4))
    assert output_computes(closed.jaxpr) == ["bfloat16", "", "bfloat16"]
    result = run("mixed_outputs", "f32[64]")
    f32 = next(lf for lf in result.leaves if lf.path == "[1]")
    assert (f32.rtol, f32.compute) == (1e-5, "")  # not bf16's tolerance, though the function holds a bf16 array


def _f64(x: np.ndarray, i: int) -> list[np.ndarray]:
    """`staged` by hand in NumPy float64."""
    y = x.copy()
    y[i] += 1.5
    z = y * 2 if x[0] > 0 else y + 1
    carry, ys = 0.0, []
    for v in z:
        carry, ys = carry + v, [*ys, carry * v]
    w = carry
    for _ in range(3):
        w = w * 1.5
    return [np.cumsum(ys), np.float64(w), np.maximum(z, 0.0), np.float64(x.sum() + 1e8 - 1e8)]


def staged(x, i):
    y = x.at[i].add(1.5)
    z = lax.cond(x[0] > 0, lambda a: a * 2, lambda a: a + 1, y)
    carry, ys = lax.scan(lambda c, v: (c + v, c * v), 0.0, z)
    _, w = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 1.5), (0, carry))
    return jnp.cumsum(ys), w, jax.nn.relu(z).astype(jnp.bfloat16), x.sum() + 1e8 - 1e8


def test_the_float64_reference_is_the_traced_program_in_float64() -> None:
    x = jnp.asarray([0.1, 0.7, -1.3, 2.9], jnp.float32)
    closed = jax.make_jaxpr(staged)(x, 1)
    ref = run_reference(closed, [x, jnp.int32(1)])
    expected = _f64(np.asarray(x, np.float64), 1)
    assert [o.dtype.name for o in ref.outputs] == ["float64"] * 4 and ref.kept == {}
    for got, want in zip(ref.outputs, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-7)  # 2.4 + 1e8 rounds in float64 too
    assert float(staged(x, 1)[3]) == 0.0 and abs(ref.outputs[3] - 2.4) < 1e-6  # float32 loses x.sum() in 1e8
    (sub,) = [p for p, (frac, digits, _, _) in zip(ref.probes, ref.stats, strict=True) if p.eqn.primitive.name == "sub" and frac == 1]
    assert ref.out_bits[3] & sub.bit and not ref.out_bits[0] & sub.bit  # the cancellation feeds the last output only


def test_the_reference_keeps_bit_level_primitives_at_their_own_precision() -> None:
    x = jnp.asarray([1.0, 2.0], jnp.float32)
    closed = jax.make_jaxpr(lambda v: lax.bitcast_convert_type(v, jnp.int32))(x)
    ref = run_reference(closed, [x])
    assert ref.outputs[0].tolist() == np.asarray(x).view(np.int32).tolist() and "bitcast_convert_type" in ref.kept


def test_a_second_trace_names_the_equation_that_changed() -> None:
    state = {"n": 1.0}

    def f(x):
        state["n"] += 1.0
        return jnp.sin(x) * state["n"], jnp.cos(x)

    first = jax.make_jaxpr(f)(jnp.ones(3))
    jax.clear_caches()  # else the second make_jaxpr is the first's cached trace
    second = jax.make_jaxpr(f)(jnp.ones(3))
    (site,) = retrace_sites(first, second, ["[0]", "[1]"])
    assert site.primitive == "mul" and site.feeds == ("[0]",) and "2.0 then 3.0" in site.detail
    assert retrace_sites(first, first, ["[0]", "[1]"]) == []
