"""The judge of run differences on evidence given as data (no jax): the order of causes, PyTorch's
float64 criterion, precision from the TPU's measured numbers (shared/research/tpu-facts.md), devices."""

from __future__ import annotations

from jaxscope.analysis.runs.causes import judge, multiplier, noise_holds
from jaxscope.analysis.runs.verdicts import verdict
from jaxscope.schema.graph import SourceLoc
from jaxscope.schema.run import Evidence, LeafComparison, ReferenceCheck, Site


def leaf(path: str, jit: float, eager: float, *, ref: float | None = None, size: int = 1, dtype: str = "float32") -> LeafComparison:
    """A scalar-like output compared as compare_arrays would (rtol 1e-5, atol 1e-6 for float32)."""
    err = abs(jit - eager)
    check = None if ref is None else ReferenceCheck(abs(jit - ref), abs(eager - ref), abs(jit - ref), abs(eager - ref), abs(ref), "float64")
    return LeafComparison(
        path, shape=(size,), dtype=dtype, size=size, max_abs=err, max_rel=err / abs(eager), n_diff=int(err > 0),
        allclose=err <= 1e-6 + 1e-5 * abs(eager), rtol=1e-5, atol=1e-6, reference=check,
    )  # fmt: skip


# The nnx ViT step's loss on a TPU v5e (tpu-facts.md): default precision, then highest, then the CPU.
TPU_DEFAULT = leaf("[0]", 3.0399609, 3.0396502, ref=3.0376217)
TPU_HIGHEST = leaf("[0]", 3.0376120, 3.0376120)
DOT = Site("e12", "dot_general", SourceLoc("vit.py", 40), "", ("[0]",))


def test_tpu_matmul_precision_is_named_and_accepted() -> None:
    assert not TPU_DEFAULT.allclose and TPU_HIGHEST.allclose
    ev = Evidence(runs=("precision",), highest=(TPU_HIGHEST,), matmuls=(DOT,))
    (cause,) = judge([TPU_DEFAULT], ev)
    assert cause.kind == "precision" and cause.explained and cause.sites == (DOT,)
    assert "precision=jax.lax.Precision.HIGHEST" in cause.fix and "at highest" in cause.evidence[0]
    ok, text, _ = verdict([TPU_DEFAULT], [cause])
    assert ok and "explained as precision" in text
    # without the precision run the same numbers are judged against float64: both near, the noise rule holds
    assert judge([TPU_DEFAULT], Evidence(runs=("f64",)))[0].kind == "noise"


def test_trace_time_comes_before_every_other_cause() -> None:
    out = leaf("", 1.0, 2.0, ref=1.0)
    assert noise_holds(out)  # jit equals the reference: the float64 rule alone would accept it
    site = Site("e0", "mul", SourceLoc("f.py", 9), "a constant captured at trace time changed", ("",))
    for ev in (Evidence(runs=("r",), retrace_sites=(site,)), Evidence(runs=("r",), replay_differs=("",))):
        (cause,) = judge([out], ev)
        assert cause.kind == "trace-time" and not cause.explained
        assert not verdict([out], [cause])[0]


def test_the_float64_rule_is_pytorchs() -> None:
    worse = leaf("", 1.1, 1.0000001, ref=1.0, size=5000)
    assert multiplier(worse) == 2.0 and not noise_holds(worse)
    (cause,) = judge([worse], Evidence(runs=("f64",)))
    assert cause.kind == "unexplained" and "jit 0.1" in cause.evidence[0] and not verdict([worse], [cause])[0]
    assert multiplier(leaf("", 1, 1, size=10)) == 10.0 and multiplier(leaf("", 1, 1, size=5000, dtype="bfloat16")) == 3.0
    assert judge([worse], None)[0].evidence[-1].startswith("no evidence ran")


def test_user_tolerances_accept_no_cause() -> None:
    (cause,) = judge([TPU_DEFAULT], Evidence(runs=("p",), highest=(TPU_HIGHEST,)), strict=True)
    assert cause.kind == "precision" and not cause.explained and not verdict([TPU_DEFAULT], [cause])[0]


def test_a_reference_device_differs_by_precision_or_by_arithmetic() -> None:
    a, b = leaf("[0]", 3.0399609, 3.0376217), leaf("[1]", 0.51, 0.5)
    exp = Site("e3", "exp", SourceLoc("f.py", 3))
    ev = Evidence(runs=("d",), device="cpu:0", device_leaves=(a, b), device_highest=(TPU_HIGHEST, b), transcendentals=(exp,))
    causes = judge([], ev)
    assert [(c.kind, c.explained, c.outputs) for c in causes] == [("device", False, ("[1]",)), ("precision", True, ("[0]",))]
    assert all(c.between == "the run's device and cpu:0" for c in causes)
    ok, text, _ = verdict([], causes)
    assert not ok and "differ: device" in text
