"""The program that compiles (issue 47): what jaxscope traces, lowers and runs is the program JAX
compiles for the user's call, checked against JAX's own lowering of the same decorated step."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import jax

from jaxscope.schema.hlo import HloRequest
from jaxscope.schema.run import RunRequest
from jaxscope.schema.trace import FunctionRef, TraceRequest
from jaxscope.worker.hlo import run_hlo
from jaxscope.worker.runs.run import run_function
from jaxscope.worker.trace import run_trace

CORPUS = Path(__file__).parent / "corpus"


def ref(file: str, name: str) -> FunctionRef:
    return FunctionRef(qualname=name, path=str(CORPUS / file))


def module(file: str):
    return module_at(CORPUS / file)


def module_at(path: Path):
    spec = importlib.util.spec_from_file_location(f"loaded_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    found = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(found)
    return found


def test_an_nnx_step_lowers_to_the_program_nnx_jit_compiles():
    """The optimizer's and BatchNorm's in-place updates are outputs, as nnx.jit makes them: the
    backward pass and the update are not dead code (before: 5 dot_generals of JAX's 15)."""
    nnx_step = module("nnx_step.py")
    theirs = nnx_step.train_step.lower(*nnx_step.make_inputs()).as_text().count("stablehlo.dot_general")
    ours = run_hlo(HloRequest(ref("nnx_step.py", "train_step"), inputs="@file"), lambda p: None)
    assert ours.text.count("stablehlo.dot_general") == theirs > 10  # the forward alone has 5
    traced = run_trace(TraceRequest(ref("nnx_step.py", "train_step"), inputs="@file"), lambda p: None)
    assert traced.arg_names[:1] == ("model.blocks[0].down.bias.value",)  # the body's inputs, by parameter
    assert traced.result_paths[0] == "result"
    assert "optimizer.opt_state[0].count.value (new)" in traced.result_paths
    assert "model.blocks[0].norm.mean.value (new)" in traced.result_paths  # BatchNorm statistics


def test_an_nnx_step_runs_and_compares_the_state_after_the_call():
    """Before: `returned another structure when called for real than under jax.eval_shape` (the
    optax transform's closures are new objects at every call of the maker)."""
    result = run_function(RunRequest(ref("nnx_step.py", "train_step"), inputs="@file", repeats=1), lambda p: None)
    assert result.ok, result.verdict
    paths = [leaf.path for leaf in result.leaves]
    assert "[0]" in paths and any(p.startswith("[1]['optimizer'].opt_state") for p in paths)
    assert 0 < result.eager_s < result.eager_first_s  # issue 47, 8: eager's steady state, not its first run (compiling each primitive)


def test_a_filter_jit_step_draws_its_body():
    traced = run_trace(TraceRequest(ref("eqx_step.py", "step"), inputs="@file"), lambda p: None)
    top = [n.label for n in traced.graph.top.nodes if n.kind == "eqn"]
    assert len(top) > 5 and top != ["jit"]
    assert traced.arg_names[0].startswith("model.layers[0]")


def test_bf16_parameters_from_a_maker_trace_and_run_with_bf16_tolerance():
    """ml_dtypes have NumPy kind 'V': bf16 leaves were refused as void. An f32 output of bf16
    arithmetic is compared with bf16's tolerance, and the table says why."""
    traced = run_trace(TraceRequest(ref("bf16_conv.py", "grad_step"), inputs="@file"), lambda p: None)
    assert any(leaf.aval.startswith("bf16[3,3,3,8]") for leaf in traced.inputs)
    result = run_function(RunRequest(ref("bf16_conv.py", "f32_out"), inputs="@file", repeats=1), lambda p: None)
    assert result.ok
    assert all("tolerance of bfloat16: this output is computed through bfloat16" in leaf.note for leaf in result.leaves)
    assert jax.numpy.bfloat16  # the suite's jax has ml_dtypes


def test_flops_count_loop_trips():
    """Issue 47, 7: XLA's cost analysis counts a loop body once (a scanned RNN's gradient: 9.7k of
    ~106k). The compiled program's instructions are counted as often as they run, by XLA's own
    `known_trip_count`: within 15 % of XLA's count for the same program unrolled in Python."""
    from jaxscope.analysis.hlo_cost import hlo_cost

    spec = "{'w': f32[16,16], 'u': f32[8,16]}, f32[12,4,8]"
    scan = run_hlo(HloRequest(ref("scan_rnn.py", "grad_rnn"), spec, "compiled"), lambda p: None)
    unrolled = run_hlo(HloRequest(ref("scan_rnn.py", "grad_unrolled"), spec, "compiled"), lambda p: None)
    counted = hlo_cost(scan.text)
    assert counted.once.flops == scan.cost["flops"]  # XLA's own count, reproduced
    assert counted.uncounted == 0 and counted.total.flops > 5 * counted.once.flops
    assert abs(counted.total.flops / unrolled.cost["flops"] - 1) < 0.15
    assert hlo_cost(unrolled.text).total.flops == unrolled.cost["flops"]  # no loop: the same as XLA's


def test_a_step_that_keeps_its_update_to_itself_is_said_to_compute_nothing(tmp_path):
    """Issue 47, 6: the update written into a Python dict and only the loss returned: most of the
    program is dead (jit drops it), said as a warning naming the equations and the likely cause."""
    source = tmp_path / "step.py"
    source.write_text(
        "import jax\nimport jax.numpy as jnp\n\nSTATE = {}\n\n\ndef step(w, x):\n"
        "    loss, g = jax.value_and_grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w)\n"
        "    STATE['w'] = w - 0.1 * g\n    return loss\n"
    )
    traced = run_trace(TraceRequest(FunctionRef("step", str(source)), args="f32[8,8], f32[4,8]"), lambda p: None)
    (found,) = [d for d in traced.diagnostics if d.kind == "dead-code"]
    assert found.severity == "warning" and "compute nothing the function returns: jit drops them" in found.title
    assert "return only the loss?" in found.detail and found.nodes
    assert {traced.graph.top.nodes[[n.id for n in traced.graph.top.nodes].index(p)].label for p in found.nodes} >= {"dot_general"}


def test_a_jitted_target_keeps_its_donation(tmp_path):
    """Issue 47, 2: `jax.jit(step, donate_argnums=0)`: the program lowered aliases the donated input
    to an output, as JAX's own lowering of the same wrapper does; `run` (which calls it twice) says it keeps them."""
    source = tmp_path / "step.py"
    source.write_text("import jax\n\n\ndef _step(w, g):\n    return w - 0.1 * g\n\n\nstep = jax.jit(_step, donate_argnums=0)\n")
    mod = module_at(source)
    theirs = mod.step.lower(jax.ShapeDtypeStruct((4, 4), "float32"), jax.ShapeDtypeStruct((4, 4), "float32")).as_text()
    ours = run_hlo(HloRequest(FunctionRef("step", str(source)), "f32[4,4], f32[4,4]"), lambda p: None).text
    assert "tf.aliasing_output = 0" in theirs and "tf.aliasing_output = 0" in ours
    result = run_function(RunRequest(FunctionRef("step", str(source)), "f32[4,4], f32[4,4]", repeats=2), lambda p: None)
    assert result.ok and any("donates inputs" in w for w in result.warnings)


def test_autodiffs_leftovers_are_said_as_such_not_as_state_left_behind(tmp_path):
    """Issue 60.5: a step that returns only the gradient leaves the forward pass's loss unread: those
    dead equations are autodiff's (under jvp), said as nothing to fix, not blamed on in-place state."""
    source = tmp_path / "step.py"
    source.write_text(
        "import jax\nimport jax.numpy as jnp\n\n\ndef step(w, x):\n"
        "    return jax.grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2) + jnp.sum(jnp.sin(w) ** 2))(w)\n"
    )
    traced = run_trace(TraceRequest(FunctionRef("step", str(source)), args="f32[8,8], f32[4,8]"), lambda p: None)
    (found,) = [d for d in traced.diagnostics if d.kind == "dead-code"]
    assert found.severity == "info" and "autodiff's forward-pass leftovers" in found.title, found.title
    assert "in place" not in found.detail and found.fix.startswith("nothing to fix")
