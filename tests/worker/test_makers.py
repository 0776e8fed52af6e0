"""Makers, in-process on real jax with real flax, optax and equinox: inputs of any pytree."""

from __future__ import annotations

import os
import re

import jax
import pytest

from jaxscope.schema.run import RunRequest
from jaxscope.schema.trace import FunctionRef, TraceRequest
from jaxscope.worker.hlo import run_hlo
from jaxscope.worker.makers import combine, partition
from jaxscope.worker.runs.run import run_function
from jaxscope.worker.trace import TraceError, run_trace
from tests.conftest import MODELS as CORPUS_MODELS
from tests.conftest import load_models

MODELS = str(CORPUS_MODELS)


def trace(name: str, inputs: str = "@file", **kw: object):
    request = TraceRequest(FunctionRef(qualname=name, path=MODELS), inputs=inputs, **kw)  # type: ignore[arg-type]
    return run_trace(request, lambda p: None)


def maker(name: str) -> str:
    return f"{MODELS}::{name}"


def equations(text: str) -> list[str]:
    """The jaxpr's equation lines without their source comments."""
    return [re.sub(r"\s+#.*$", "", line).rstrip() for line in text.splitlines()]


def test_linen_optax_train_step_matches_make_jaxpr():
    result = trace("train_step")
    ref = load_models()
    expected = jax.make_jaxpr(ref.train_step)(*ref.make_train_inputs())
    assert equations(result.jaxpr_text) == equations(expected.pretty_print(source_info=True, name_stack=False, use_color=False))
    assert result.input_source == "JAXSCOPE_INPUTS['train_step'] in models.py"
    paths = {leaf.path: leaf.aval for leaf in result.inputs}
    assert paths["params['params']['block1']['kernel']"] == "f32[4,16]"
    assert paths["opt_state[1][0].count"] == "i32[]"  # optax's ScaleByAdamState, a namedtuple
    assert "params['params']['block1']['kernel']" in result.arg_names


def test_nnx_graphdef_and_state():
    result = trace("nnx_forward")
    leaves = {leaf.path: leaf.aval for leaf in result.inputs}
    assert leaves["x"] == "f32[2,4]" and any(p.startswith("state") and a == "f32[4,8]" for p, a in leaves.items())
    inputs = [n.label for n in result.graph.top.nodes if n.kind == "input"]
    assert "x" in inputs and any(label.startswith("state") for label in inputs), inputs


def test_equinox_module_function_leaves_are_static():
    result = trace("eqx_predict", maker("make_eqx_inputs"))
    static = {leaf.path: leaf.preview for leaf in result.inputs if leaf.aval == "static"}
    assert "model.activation" in static and "gelu" in static["model.activation"][0]
    assert any(n.label == "dot_general" for body in result.graph.bodies.values() for n in body.nodes)  # vmap'd matmuls


@pytest.mark.parametrize(
    ("name", "maker_name", "expected"),
    [
        ("scaled", "make_kwargs", ["x", "scale"]),  # a dict: keywords; a Python float is static
        ("scaled", "make_args_kwargs", ["x", "scale"]),  # (args, kwargs); a NumPy scalar is traced
        ("one", "make_one", ["x"]),  # one value: the one argument
    ],
)
def test_return_forms(name, maker_name, expected):
    result = trace(name, maker(maker_name))
    assert sorted(leaf.path for leaf in result.inputs) == sorted(expected)
    traced = [leaf.path for leaf in result.inputs if leaf.aval != "static"]
    assert sorted(result.arg_names) == sorted(traced)  # JAX orders keywords by name


def test_maker_runs_under_eval_shape():
    result = trace("one", maker("make_huge"))  # 160 GB for real
    assert [leaf.aval for leaf in result.inputs] == ["f32[200000,200000]"]


def test_untraceable_maker_is_called_for_real():
    result = trace("one", maker("make_numpy_only"))
    assert [leaf.aval for leaf in result.inputs] == ["f32[3]"]


def test_abstract_inputs_kept_per_file_version():
    os.environ.pop("JAXSCOPE_TEST_MAKER_CALLS", None)
    trace("one", maker("make_counted"))
    trace("one", maker("make_counted"))
    run_hlo(
        __import__("jaxscope.schema.hlo", fromlist=["HloRequest"]).HloRequest(
            FunctionRef(qualname="one", path=MODELS), inputs=maker("make_counted")
        ),
        lambda p: None,
    )
    assert os.environ.pop("JAXSCOPE_TEST_MAKER_CALLS") == "1"


def test_run_uses_the_makers_values():
    request = RunRequest(FunctionRef(qualname="train_step", path=MODELS), inputs="@file", repeats=1)
    result = run_function(request, lambda p: None)
    assert result.ok and result.input_source == "JAXSCOPE_INPUTS['train_step'] in models.py"
    assert any(leaf.path == "batch['x']" and leaf.preview[:2] == ("1", "1") for leaf in result.inputs)


@pytest.mark.parametrize(
    ("inputs", "kind", "words"),
    [
        (maker("make_raises"), "user-code", ["make_raises() in models.py raised ValueError", "no data here"]),
        (maker("make_strings"), "spec", ["x is an array of dtype <U1"]),
        (maker("make_too_many"), "spec", ["make_too_many() in models.py returned", "cannot take"]),
        (maker("no_such_maker"), "not-found", ["maker ", "no function 'no_such_maker'"]),
        # issue 46, 10: JAX's ValueError and RecursionError on these read as jaxscope's faults, or crashed the worker
        (maker("make_mixed_keys"), "spec", ["make_mixed_keys() in models.py returned a dict ([0])", "cannot sort, of types int, str"]),
        (maker("make_self_reference"), "spec", ["make_self_reference() in models.py returned", "[0][1] contains itself"]),
        (maker("make_exits"), "exit", ["make_exits() in models.py raised SystemExit"]),  # was "during trace"
        (maker("make_deep"), "spec", ["make_deep() in models.py returned a value nested more than 200 levels deep"]),
        ("@file", "spec", ["JAXSCOPE_INPUTS has no entry for 'one'", "'train_step'"]),
    ],
)
def test_bad_makers_say_what_and_where(inputs, kind, words):
    with pytest.raises(TraceError) as err:
        trace("one", inputs)
    info = err.value.info
    assert info.kind == kind and info.phase in ("inputs", "load"), info
    for word in words:
        assert word in info.message, info.message
    if kind == "user-code":
        assert info.location is not None and info.location.file == MODELS


def test_partition_and_combine_round_trip():
    tree = {"w": jax.numpy.ones(2), "act": jax.nn.relu, "n": 3, "none": None, "ws": [jax.numpy.zeros(1), "tag"]}
    dynamic, static = partition(tree)
    assert jax.tree.leaves(dynamic)[0].shape == (2,) and static["act"] is jax.nn.relu and dynamic["n"] is None
    assert combine(dynamic, static)["ws"][1] == "tag" and combine(dynamic, static)["none"] is None


def test_64_bit_inputs_narrowed_are_said():
    """Issue 37.9: f64/i64 specs and float64 NumPy values became 32-bit with no word (x64 is off)."""
    from jaxscope.worker.trace import prepare

    result = trace("one", maker("make_f64"))
    assert any("make_f64()[0]: float64 -> float32" in w and "--x64" in w for w in result.warnings), result.warnings
    prep = prepare(FunctionRef(qualname="scaled", path=MODELS), "f64[3], scale=i64[]", lambda p: None)
    (warning,) = prep.warnings
    assert "argument 0: float64 -> float32" in warning and "scale: int64 -> int32" in warning
