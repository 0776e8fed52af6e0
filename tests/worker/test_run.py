"""The `run` op on real jax, in-process: jit vs eager agreement, FMA drift, NaN origins, inputs, devices."""

from __future__ import annotations

import io
import os
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxscope.runtime import protocol
from jaxscope.schema.codec import to_jsonable
from jaxscope.schema.graph import resolve
from jaxscope.schema.run import RunRequest, RunResult, run_result_from_jsonable
from jaxscope.schema.trace import FunctionRef, TraceRequest
from jaxscope.worker.runs.compare import compare_arrays, compare_leaf, max_ulp
from jaxscope.worker.runs.inputs import generate
from jaxscope.worker.runs.run import run_function
from jaxscope.worker.trace import Prepared, TraceError, prepare, run_trace
from tests.conftest import line_in

CORPUS = os.path.join(os.path.dirname(__file__), "corpus", "run_cases.py")


def run(name: str, args: str, phases: list[str] | None = None, **kw: object) -> RunResult:
    request = RunRequest(FunctionRef(qualname=name, path=CORPUS), args=args, repeats=3, **kw)  # type: ignore[arg-type]
    return run_function(request, (phases.append if phases is not None else lambda p: None))


def line_of(marker: str) -> int:
    return line_in(pathlib.Path(CORPUS), f"# {marker}")


def test_exact_agreement_times_and_phases():
    phases: list[str] = []
    result = run("add", "f32[8], f32[8]", phases)
    assert result.ok and "exactly" in result.verdict and not result.explanation
    (leaf,) = result.leaves
    assert (leaf.path, leaf.shape, leaf.dtype, leaf.size) == ("", (8,), "float32", 8)
    assert leaf.exact and leaf.max_abs == 0 and leaf.max_ulp == 0 and leaf.n_diff == 0
    assert (leaf.rtol, leaf.atol) == (1e-5, 1e-6)
    assert len(leaf.jit_preview) == 6 and leaf.jit_preview == leaf.eager_preview
    assert result.compile_s > 0 and result.first_call_s > 0 and len(result.steady_runs) == 3
    assert result.steady_s == sorted(result.steady_runs)[1] and result.eager_s > 0 and result.eager_first_s > 0
    assert phases == ["load", "inputs", "trace", "compile", "run", "eager", "compare"]
    assert result.device is not None and result.device.name == "cpu:0" and result.device.default
    assert [d.name for d in result.devices] == ["cpu:0"]
    assert [(i.path, i.aval) for i in result.inputs] == [("x", "f32[8]"), ("y", "f32[8]")]
    assert result.input_source == "seed 0" and not result.nan_searched and result.first_nan is None


def test_integer_pytree_outputs_are_exact():
    result = run("int_ops", "i32[64], i32[64]")
    assert result.ok
    assert [lf.path for lf in result.leaves] == ["['max']", "['prod']", "['sum']"]
    for leaf in result.leaves:
        assert leaf.dtype == "int32" and leaf.exact and (leaf.rtol, leaf.atol) == (0.0, 0.0) and leaf.max_ulp is None
        assert all(-64 <= int(v) <= 64 for v in leaf.jit_preview)  # inputs in [-8, 8)


def test_fma_contraction_is_small_nonzero_and_allclose():
    result = run("fma", "f32[4096], f32[4096], f32[4096]")
    (leaf,) = result.leaves
    assert leaf.n_diff > 0, "XLA:CPU contracts x*y+z into an FMA under jit"
    assert leaf.allclose and result.ok
    assert 0 < leaf.max_abs <= 1e-6 and leaf.max_ulp and leaf.max_ulp > 0
    assert leaf.worst_index and len(leaf.worst_index) == 1
    assert "FMA" in result.explanation and "within tolerance" in result.verdict


def test_algebraic_simplification_log_exp():
    """What jit and eager give is JAX's and XLA's (XLA 0.10 rewrites log(exp(x)) to x; later ones may
    not): jaxscope reports exactly the difference JAX's own jit and eager calls show."""

    result = run("log_exp", "f32[256]")
    (leaf,) = result.leaves
    (x,), _ = _inputs("log_exp", "f32[256]")
    jitted, eager = np.asarray(jax.jit(lambda v: jax.numpy.log(jax.numpy.exp(v)))(x)), np.asarray(jax.numpy.log(jax.numpy.exp(x)))
    assert leaf.allclose and leaf.max_abs is not None and leaf.max_abs <= 1e-6
    assert leaf.n_diff == int(np.sum(jitted != eager))  # on jax 0.10, > 0: jit rewrote log(exp(x)) to x


def test_user_tolerances_turn_small_drift_into_a_failure():
    result = run("fma", "f32[4096], f32[4096], f32[4096]", rtol=0.0, atol=0.0)
    (leaf,) = result.leaves
    assert not leaf.allclose and not result.ok and (leaf.rtol, leaf.atol) == (0.0, 0.0)
    assert "DIFFER" in result.verdict
    (cause,) = result.causes  # named as the noise it is, but the user's own tolerances do not accept it
    assert cause.kind == "noise" and not cause.explained and "--rtol/--atol" in cause.evidence[-1]


def test_nan_counts_and_first_nan_equation():
    phases: list[str] = []
    result = run("log_neg", "f32[64]", phases)
    (leaf,) = result.leaves
    negatives = sum(1 for v in np.asarray(_inputs("log_neg", "f32[64]")[0][0]) if v < 0)
    assert negatives > 0 and leaf.jit_nan == leaf.eager_nan == negatives
    assert leaf.allclose and leaf.nonfinite_mismatch == 0 and leaf.max_abs is not None
    assert not result.ok and "NaN in outputs" in result.verdict
    origin = result.first_nan
    assert origin is not None and (origin.path, origin.primitive) == ("e1", "log")
    assert origin.source is not None and origin.source.line == line_of("nan-line") and origin.source.file == CORPUS
    assert origin.nan == negatives and origin.out_aval == "f32[64]"
    assert phases[-1] == "nan" and result.nan_searched
    graph = run_trace(TraceRequest(FunctionRef("log_neg", CORPUS), "f32[64]"), lambda p: None).graph
    assert resolve(graph, origin.path)[1].label == "log"


def test_zero_over_zero():
    result = run("zero_div", "f32[5]")
    assert result.leaves[0].jit_nan == 5 and result.leaves[0].max_abs is None
    assert result.first_nan is not None and (result.first_nan.path, result.first_nan.primitive) == ("e2", "div")


def test_first_nan_inside_nested_jit_uses_graph_paths():
    result = run("nested_nan", "f32[6]")
    origin = result.first_nan
    assert origin is not None and (origin.path, origin.primitive) == ("e1:0/e1", "sqrt")
    assert origin.source is not None and origin.source.line == line_of("inner-sqrt")
    graph = run_trace(TraceRequest(FunctionRef("nested_nan", CORPUS), "f32[6]"), lambda p: None).graph
    assert resolve(graph, origin.path)[1].label == "sqrt"


def test_find_nan_on_request_with_finite_outputs():
    result = run("add", "f32[4], f32[4]", find_nan=True)
    assert result.ok and result.nan_searched and result.first_nan is None


def test_pytree_paths_and_non_array_outputs():
    result = run("pytree_out", "f32[4,3], {'w': f32[3,2], 'b': f32[2]}")
    assert [lf.path for lf in result.leaves] == ["['h']", "['stats'][0]", "['stats'][1]"]
    assert [lf.shape for lf in result.leaves] == [(4, 2), (), ()]
    assert [i.path for i in result.inputs] == ["x", "params['b']", "params['w']"]
    result = run("returns_none", "f32[3]")
    kinds = [(lf.path, lf.kind) for lf in result.leaves]
    assert kinds == [("[0]", "none"), ("[1]", "array"), ("[2]", "array")]
    assert result.ok and "None" in result.leaves[0].note and "Python float" in result.leaves[2].note


def test_statics_keys_bools_and_unsigned_inputs():
    result = run("scaled", "f32[3], 2")
    assert result.ok and result.inputs[1].aval == "static" and result.inputs[1].preview == ("2",)
    result = run("with_key", "key[], f32[3]")
    assert result.ok and result.inputs[0].aval.startswith("key<")
    assert run("bool_and_uint", "bool[16], u32[16]").ok


def _inputs(name: str, args: str, seed: int = 0) -> tuple[list, dict]:
    prep: Prepared = prepare(FunctionRef(name, CORPUS), args, lambda p: None)
    return generate(prep, seed)


def test_inputs_are_deterministic_per_seed_and_typed():
    spec = "f32[16], i8[16], u8[16], bool[64], u32[3,2]"
    params = "x, a, b, c, d"
    a0, _ = _inputs_for(params, spec, 0)
    a1, _ = _inputs_for(params, spec, 0)
    b0, _ = _inputs_for(params, spec, 1)
    for x, y in zip(a0, a1, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert not np.array_equal(np.asarray(a0[0]), np.asarray(b0[0]))
    x, i8, u8, b, raw = (np.asarray(v) for v in a0)
    assert x.dtype == np.float32 and i8.dtype == np.int8 and u8.dtype == np.uint8 and b.dtype == np.bool_ and raw.dtype == np.uint32
    assert i8.min() >= -8 and i8.max() < 8 and u8.max() < 16 and 0 < b.sum() < 64
    assert raw.max() > 2**16  # raw key words: random bits, not small ints
    same = run("fma", "f32[32], f32[32], f32[32]", seed=7)
    again = run("fma", "f32[32], f32[32], f32[32]", seed=7)
    other = run("fma", "f32[32], f32[32], f32[32]", seed=8)
    assert same.inputs == again.inputs and same.leaves[0].jit_preview == again.leaves[0].jit_preview
    assert same.inputs != other.inputs


def _inputs_for(params: str, spec: str, seed: int) -> tuple[list, dict]:
    from jaxscope.worker.trace import bind, parse_call

    ns: dict = {}
    exec(f"def f({params}):\n    return 0\n", ns)
    prep = bind(ns["f"], parse_call(spec), "f")
    return generate(prep, seed)


def test_file_inputs_convention():
    result = run("given", "", seed=1, inputs="@file")
    assert result.input_source == "JAXSCOPE_INPUTS['given'] in run_cases.py"
    assert result.inputs[0].preview == ("1", "2", "3", "4") and result.inputs[1].preview == ("3",)
    assert result.leaves[0].jit_preview == ("3", "6", "9", "12") and result.ok


def test_bad_device_lists_available():
    with pytest.raises(TraceError) as err:
        run("add", "f32[2], f32[2]", device="gpu:3")
    assert err.value.info.kind == "spec" and "available: cpu:0" in err.value.info.message


def test_runtime_exception_is_a_clear_error():
    with pytest.raises(TraceError) as err:
        run("fails_at_run", "f32[3]")
    info = err.value.info
    assert info.kind == "user-code" and info.phase == "run" and "boom at run time" in info.message
    assert "Traceback" not in info.message


def test_result_survives_strict_json():
    result = run("log_neg", "f32[8]")
    wire = protocol.read(io.BytesIO(protocol.dumps({"result": to_jsonable(result)})))["result"]
    back = run_result_from_jsonable(wire)
    assert back == result


def test_ulp_math_by_hand():
    one = np.float32(1.0)
    assert max_ulp(np.array([one]), np.array([np.nextafter(one, np.float32(2))])) == 1
    assert max_ulp(np.array([0.0], np.float32), np.array([-0.0], np.float32)) == 0
    tiny = np.float32(1e-45)  # the smallest subnormal: -tiny and +tiny are 2 ULP apart
    assert max_ulp(np.array([tiny]), np.array([-tiny])) == 2
    big = np.finfo(np.float64).max
    assert max_ulp(np.array([big]), np.array([-big])) == 2 * 0x7FEFFFFFFFFFFFFF
    bf = np.asarray(jnp.array([1.0, 2.0], jnp.bfloat16))
    assert max_ulp(bf, np.asarray(jnp.array([1.0078125, 2.0], jnp.bfloat16))) == 1
    leaf = compare_arrays("", np.array([1.0, np.nan], np.float32), np.array([1.0, 2.0], np.float32), 1e-5, 1e-6)
    assert leaf.nonfinite_mismatch == 1 and not leaf.allclose and leaf.jit_nan == 1 and leaf.eager_nan == 0
    leaf = compare_leaf("", "a", "a", None, None)
    assert leaf.kind == "other" and leaf.allclose


@pytest.mark.slow
def test_device_setup_restarts_the_worker_with_simulated_cpu_devices():
    from jaxscope.runtime.devices import device_env
    from jaxscope.runtime.worker_client import WorkerClient

    ready: list[dict] = []
    with WorkerClient(spare=False, on_ready=ready.append) as client:
        assert [d["name"] for d in client.worker_info()["devices"]] == ["cpu:0"]  # listed before any request
        client.reconfigure(device_env(2))
        assert [d["name"] for d in client.worker_info()["devices"]] == ["cpu:0", "cpu:1"]
        request = RunRequest(FunctionRef("add", CORPUS), "f32[4], f32[4]", device="cpu:1", repeats=1)
        result = client.submit("run", request, run_result_from_jsonable).result(timeout=120)
        assert (result.device.name, len(result.devices), result.ok) == ("cpu:1", 2, True)
    assert [len(m["devices"]) for m in ready] == [1, 2]


def test_per_equation_divergence_locates_where_jit_and_eager_part() -> None:
    result = run("log_exp", "f32[64]", per_equation=True)
    by_prim = {d.primitive: d for d in result.divergence}
    assert [d.path for d in result.divergence] == ["e0", "e1"]
    assert by_prim["exp"].max_abs == 0.0  # the same exp both ways
    assert by_prim["log"].source is not None and by_prim["log"].source.line == 21
    assert len(by_prim["exp"].jit_preview) == 6 and by_prim["exp"].jit_preview == by_prim["exp"].eager_preview
    exact = run("int_ops", "i32[8], i32[8]", per_equation=True)
    assert exact.divergence == ()  # no floating intermediates to compare
    assert run("log_exp", "f32[64]").divergence == ()  # only on request
    nested = run("nested_nan", "f32[8]", per_equation=True)  # inside the nested jit: its own graph paths
    assert [(d.path, d.primitive) for d in nested.divergence] == [("e0", "abs"), ("e1:0/e0", "sub"), ("e1:0/e1", "sqrt"), ("e2", "mul")]
    assert nested.divergence[2].source.line == line_of("inner-sqrt") and nested.divergence[2].nonfinite_mismatch == 0
