"""`jaxscope explain` end to end, on examples/control_flow.py (a real trace)."""

from __future__ import annotations

import json
import pathlib

from tests.conftest import cli_in_process as jaxscope
from tests.conftest import line_in

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "control_flow.py"
TARGET = f"{EXAMPLE}::step"


def line_of(fragment: str) -> int:
    return line_in(EXAMPLE, fragment, unique=True)


def row(out: str, ln: int) -> str:
    code = EXAMPLE.read_text().splitlines()[ln - 1].rstrip()
    rows = [r for r in out.splitlines() if r.endswith(f" {ln}  {code}")]
    assert len(rows) == 1, (ln, out)
    return rows[0]


def test_explain_annotates_the_source():
    out = jaxscope("explain", TARGET)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "×3" in row(text, line_of("for _ in range(n_layers)"))
    assert row(text, line_of("x = x * 0.9")).startswith("eqn ")
    assert row(text, line_of("x = lax.cond(")).startswith("stg ")
    assert "legend:" in text and "why:" in text
    assert "`if training:` — body taken (`training` was True, static)" in text


def test_explain_not_taken_and_json():
    out = jaxscope("explain", TARGET, "--args", "f32[4,8], f32[8,8], training=False, n_layers=2", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["file"] == str(EXAMPLE)
    marks = {m["line"]: m for m in data["lines"]}
    body = marks[line_of("x = x * 0.9")]
    assert body["kind"] == "not-taken"
    assert marks[line_of("for _ in range(n_layers)")]["badge"] == "×2"
    assert marks[line_of("x = lax.cond(")]["kind"] == "staged"
    assert "`training` was False" in marks[line_of("if training:")]["why"]
    assert set(body) == {"line", "kind", "eqns", "hits", "badge", "why"}


def test_explain_errors_use_exit_codes():
    out = jaxscope("explain", f"{EXAMPLE}::nope")
    assert out.returncode == 2
    assert "no function 'nope'" in out.stderr


def test_explain_lists_diagnostics(tmp_path) -> None:
    path = tmp_path / "impure.py"
    path.write_text("import jax.numpy as jnp\n\nW = jnp.ones(3)\n\n\ndef f(x):\n    print('tracing', x)\n    return x * W\n")
    out = jaxscope("explain", f"{path}::f", "--args", "f32[3]")
    assert out.returncode == 0, out.stderr
    text = out.stdout.split("diagnostics:", 1)[1]
    assert "`W` (f32[3], 12 B) is baked into the program as a constant  (line 8)" in text
    assert "print at line 7 ran while tracing" in text
    data = json.loads(jaxscope("explain", f"{path}::f", "--args", "f32[3]", "--json").stdout)
    assert {d["kind"] for d in data["diagnostics"]} == {"captured-constant", "trace-print"}


def test_tracer_error_suggests_static_args(tmp_path) -> None:
    path = tmp_path / "loop.py"
    path.write_text("def f(x, n):\n    for _ in range(n):\n        x = x + 1\n    return x\n")
    out = jaxscope("jaxpr", f"{path}::f", "--args", "f32[], i32[]")
    assert out.returncode == 3
    assert "2 |     for _ in range(n):" in out.stderr
    assert "try it static: --args 'f32[], 1'" in out.stderr


def test_retrace_verdict_and_reasons() -> None:
    basics = str(ROOT / "examples" / "basics.py") + "::predict"
    params = "{'w1': f32[4,8], 'b1': f32[8], 'w2': f32[8,3], 'b2': f32[3]}"
    out = jaxscope("retrace", basics, "--vs", f"{params}, f32[16,4], use_bias=False")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("jit would RETRACE")
    assert "`use_bias`: static value changed: True → False" in out.stdout
    data = json.loads(jaxscope("retrace", basics, "--vs", f"{params}, f32[16,4], use_bias=True", "--json").stdout)
    assert data["retraced"] is False and data["reasons"] == []
    bad = jaxscope("retrace", basics, "--vs", "f32[")
    assert bad.returncode == 2 and "bad --vs" in bad.stderr


def test_a_file_without_function_name_opens_its_main_function(tmp_path) -> None:
    out = jaxscope("export", str(ROOT / "examples" / "prng.py"), "-o", str(tmp_path / "prng.svg"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "prng.svg").read_text().startswith("<svg")
    several = tmp_path / "two.py"
    several.write_text("def f(x):\n    return x\n\n\ndef g(x):\n    return x\n")
    out = jaxscope("jaxpr", str(several))
    assert out.returncode == 2 and "several functions (f, g)" in out.stderr and "JAXSCOPE_MAIN" in out.stderr


def test_hlo_stablehlo_to_stdout_and_compiled_to_a_file(tmp_path) -> None:
    basics = str(ROOT / "examples" / "basics.py")
    out = jaxscope("hlo", basics)
    assert out.returncode == 0, out.stderr
    assert "stablehlo.dot_general" in out.stdout and "basics.py" in out.stdout
    target = tmp_path / "predict.hlo"
    out = jaxscope("hlo", basics, "--stage", "compiled", "-o", str(target))
    assert out.returncode == 0, out.stderr
    assert target.read_text().startswith("HloModule") and "flops" in out.stderr


def test_helpers_in_other_files_are_annotated_and_named_by_file(tmp_path):
    """Issue 32.3: explain listed "other user files that ran" by name only; their functions are now
    annotated like the main file's, and their notes say file:line."""
    (tmp_path / "helpers.py").write_text(
        "import jax.numpy as jnp\n\ndef act(x, training):\n    if training:\n        return jnp.tanh(x)\n    return x\n"
    )
    main = tmp_path / "main.py"
    main.write_text("import jax.numpy as jnp\nfrom helpers import act\n\ndef f(x, training=True):\n    return act(jnp.sin(x), training)\n")
    done = jaxscope("explain", f"{main}::f", "--args", "f32[3], training=True")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"── {tmp_path / 'helpers.py'} (ran while tracing)" in out
    assert "eqn 1   5          return jnp.tanh(x)" in out and "!       6      return x" in out
    assert "helpers.py:4  `if training:` — body taken" in out and "helpers.py:6  never reached" in out
    as_json = json.loads(jaxscope("explain", f"{main}::f", "--args", "f32[3], training=True", "--json").stdout)
    (other,) = as_json["other_files"]
    assert other["file"].endswith("helpers.py") and {m["line"] for m in other["lines"]} >= {4, 5, 6}


def test_an_autodiff_line_and_a_big_count_keep_the_columns() -> None:
    """Issue 60.5: `loss, grads = nnx.value_and_grad(loss_fn)(model)` made the whole backward pass,
    counted on the forward lines it transposes: it is marked `py ∇`, not "emitted nothing"; a line
    of 158 equations keeps its code in the column of one of 5."""
    from tests.conftest import CORPUS

    done = jaxscope("explain", f"{CORPUS / 'nnx_cnn_blocks.py'}::train_step")
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()
    grad = next(r for r in rows if "value_and_grad(loss_fn)(model)" in r)
    assert grad.startswith("py ∇"), grad
    big = next(r for r in rows if "return nnx.relu(self.bn(self.conv(x)))" in r)
    small = next(r for r in rows if "x = nnx.avg_pool(" in r)
    assert big.startswith("eqn 1") and len(big.split()[1]) >= 3 and small.startswith("eqn ") and len(small.split()[1]) == 1
    assert big.index("return nnx.relu") == small.index("x = nnx.avg_pool"), (big, small)  # both 8 spaces into a method
