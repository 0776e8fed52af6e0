"""Fuzz the new inputs of this release: maker references (`--inputs`, the API's inputs=) and what a
maker may return. A parse, a trace, or a clear error (SessionError / TraceError), never another
exception. Derandomized and bounded like test_fuzz_parsers (JAXSCOPE_FUZZ_SCALE for a longer hunt)."""

from __future__ import annotations

import os
import pathlib

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from jaxscope.session import SessionError, maker_ref, resolve_call
from jaxscope.worker import makers
from jaxscope.worker.errors import TraceError

SCALE = float(os.environ.get("JAXSCOPE_FUZZ_SCALE", "1"))
ROOT = pathlib.Path(__file__).resolve().parents[2]
BASICS = str(ROOT / "examples" / "basics.py")


def fuzz(n: int) -> settings:
    return settings(
        max_examples=max(1, round(n * SCALE)),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


NASTY = st.text(alphabet="\"'\\:;/.,()[]{}<>=@#\x00\t\n é中😀abcxyz_019", max_size=40)
REFS = st.one_of(
    NASTY,
    st.builds(lambda a, b: f"{a}::{b}", st.sampled_from([BASICS, "nowhere.py", "", "/", BASICS + "x"]), NASTY),
    st.builds(lambda a, b: f"{a}:{b}", NASTY, NASTY),
)


@pytest.mark.timeout(120)
@fuzz(300)
@given(REFS)
@example("")
@example("::")
@example(f"{BASICS}::")
@example("a.b:")
@example(":f")
@example("\x00.py::f")
def test_maker_references_parse_or_say_why(text):
    try:
        ref = maker_ref(text)
    except SessionError as exc:
        assert str(exc)
        return
    assert "::" in ref or ":" in ref


@pytest.mark.timeout(120)
@fuzz(100)
@given(REFS, st.one_of(st.none(), st.just("f32[3]")))
def test_resolve_call_with_any_inputs(text, args):
    try:
        ref, spec, inputs = resolve_call(f"{BASICS}::predict", args, text)
    except SessionError as exc:
        assert str(exc) and exc.code == 2
        return
    assert ref.qualname == "predict" and spec == "" and inputs


# What a maker may return: pytrees of arrays of many dtypes, Python values, functions, None.
ARRAYS = st.builds(
    lambda dtype, shape: np.zeros(shape, dtype=dtype),
    st.sampled_from(["float32", "float64", "int8", "uint64", "bool", "complex64", "float16", "object", "<U3", "S2", "V4"]),
    st.lists(st.integers(0, 3), max_size=3).map(tuple),
)
LEAVES = st.one_of(
    ARRAYS,
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=5),
    st.none(),
    st.booleans(),
    st.just(np.sin),
    st.just(jax.ShapeDtypeStruct((2,), np.float32)),
    st.builds(object),
)
TREES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=8,
)


def _takes_anything(*args, **kwargs):
    return [leaf for leaf in jax.tree.leaves((args, kwargs)) if hasattr(leaf, "shape")]


@pytest.mark.timeout(300)
@fuzz(120)
@given(TREES)
@example({"args": (np.zeros(2),), "kwargs": {"n": 3}})
@example(((np.zeros(2),), {"": np.zeros(1)}))
@example(np.zeros((2,), dtype=object))
def test_any_maker_value_traces_or_is_refused_clearly(value):
    try:
        abstract, _ = makers.abstract_call(lambda: value, "make() in fuzz.py")
        args, kwargs = makers.as_call(abstract, _takes_anything, "make() in fuzz.py")
        made = makers.split("make() in fuzz.py", args, kwargs, _takes_anything)
        jax.jit(made.wrap(_takes_anything)).trace(*made.args, **made.kwargs)
    except TraceError as exc:
        assert exc.info.message and exc.info.kind in ("spec", "user-code")
