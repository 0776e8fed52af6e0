"""`jaxscope run` end to end (real worker): the table, JSON, exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from tests.conftest import cli_in_process as jaxscope

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = str(ROOT / "tests" / "worker" / "corpus" / "run_cases.py")


def test_table_for_agreeing_outputs():
    out = jaxscope("run", f"{CASES}::fma", "--args", "f32[512], f32[512], f32[512]", "--device", "cpu:0", "--seed", "3", "--repeats", "2")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "device: cpu:0" in text and "inputs (seed 3; made on the host cpu:0, placed on cpu:0):" in text
    header = next(ln for ln in text.splitlines() if ln.startswith("output"))
    assert header.split()[:4] == ["output", "shape", "dtype", "max"]
    row = next(ln for ln in text.splitlines() if ln.startswith("out "))
    assert "[512]" in row and "float32" in row and "yes (rtol 1e-05, atol 1e-06)" in row
    assert "compile" in text and "median of 2" in text and "OK: jit and eager agree" in text


def test_json_and_exit_1_for_nan():
    out = jaxscope("run", f"{CASES}::log_neg", "--args", "f32[16]", "--json")
    assert out.returncode == 1, out.stderr
    data = json.loads(out.stdout)
    assert data["ok"] is False and data["leaves"][0]["jit_nan"] > 0
    assert data["first_nan"]["path"] == "e1" and data["first_nan"]["primitive"] == "log"
    assert data["first_nan"]["source"]["file"] == CASES
    assert data["devices"][0]["name"] == "cpu:0"


def test_exit_1_for_tolerance_and_2_for_bad_device():
    out = jaxscope("run", f"{CASES}::fma", "--args", "f32[512], f32[512], f32[512]", "--rtol", "0", "--atol", "0", "--repeats", "1")
    assert out.returncode == 1, out.stderr
    assert "FAIL: jit and eager DIFFER" in out.stdout and "NO (rtol 0, atol 0)" in out.stdout
    out = jaxscope("run", f"{CASES}::add", "--args", "f32[2], f32[2]", "--device", "tpu:0")
    assert out.returncode == 2, out.stderr
    assert "no device 'tpu:0'" in out.stderr and "available: cpu:0" in out.stderr


def test_simulated_cpu_devices():
    out = jaxscope("run", f"{CASES}::add", "--args", "f32[2], f32[2]", "--cpu-devices", "3", "--device", "cpu:2", "--repeats", "1")
    assert out.returncode == 0, out.stderr
    assert "device: cpu:2 (cpu)" in out.stdout and "other devices: cpu:0 (cpu), cpu:1 (cpu)" in out.stdout
    out = jaxscope("run", f"{CASES}::add", "--cpu-devices", "0")
    assert out.returncode == 2 and "--cpu-devices: CPU device count must be between 1 and 64, got 0" in out.stderr
    assert "Traceback (most recent call last)" not in out.stderr


def test_help_states_exit_codes():
    out = jaxscope("run", "--help")
    assert out.returncode == 0
    assert "--device" in out.stdout and "--seed" in out.stdout and "holds NaN" in out.stdout


def test_xla_compile_error_names_the_phase_and_xla_message():
    case = ROOT / "tests" / "faults" / "cases" / "xla_compile_error.py"
    out = jaxscope("run", f"{case}::f", "--args", "f32[3]")
    assert out.returncode == 3, out.stderr
    assert "error during compile" in out.stderr and "No FFI handler registered for jaxscope_no_such_target" in out.stderr
    assert "XLA could not compile the program" in out.stderr


def test_hang_is_a_timeout_and_device_oom_is_a_memory_error(tmp_path):
    out = jaxscope("run", f"{CASES}::hangs", "--args", "i32[1]", "--timeout", "3")
    assert out.returncode == 4, out.stderr
    assert "the run phase ran past its 3 s limit" in out.stderr
    case = tmp_path / "oom.py"
    case.write_text("import jax.numpy as jnp\n\ndef big(x):\n    return jnp.zeros((2**40,), jnp.float32) + x\n")
    out = jaxscope("run", f"{case}::big", "--args", "f32[]")
    assert out.returncode == 3, out.stderr
    assert "memory error during run" in out.stderr and "RESOURCE_EXHAUSTED" in out.stderr


def test_per_equation_table() -> None:
    out = jaxscope("run", f"{CASES}::fma", "--args", "f32[512], f32[512], f32[512]", "--per-equation", "--repeats", "1")
    assert out.returncode == 0, out.stderr
    assert "per equation (jit vs eager" in out.stdout and "fusing across equations" in out.stdout


MESH = str(ROOT / "tests" / "worker" / "corpus" / "mesh_programs.py")


def test_a_program_on_a_mesh_runs_on_simulated_devices_or_the_environments_xla_flags():
    """Issue 35.1: the inputs follow the program's shardings (they were all put on one device: "incompatible
    devices"), and `run` keeps XLA_FLAGS's own device count as export, jaxpr and hlo do."""
    for target in (f"{MESH}::step", f"{MESH}::total"):
        out = jaxscope("run", target, "--cpu-devices", "4", "--repeats", "1")
        assert out.returncode == 0 and "OK: jit and eager agree" in out.stdout, out.stdout + out.stderr
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    flagged = subprocess.run(
        [sys.executable, "-m", "jaxscope", "run", f"{MESH}::total", "--repeats", "1"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
        env=env,
    )
    assert flagged.returncode == 0, flagged.stdout + flagged.stderr
    pinned = jaxscope("run", f"{MESH}::total", "--cpu-devices", "4", "--device", "cpu:0")
    assert pinned.returncode not in (0, 1) and "argument x" in pinned.stderr and "[0, 1, 2, 3]" in pinned.stderr
    assert "different devices" in pinned.stderr  # the hint says what to do
    traced = jaxscope("jaxpr", f"{MESH}::total", "--cpu-devices", "4")  # every command that traces takes it
    assert traced.returncode == 0 and "psum" in traced.stdout, traced.stderr


def test_export_sharding_draws_the_mesh_axis_and_the_all_reduce_xla_inserted(tmp_path):
    """Issue 35's check: `export --sharding` of the data-parallel program shows its sharding's mesh axis and
    the all-reduce XLA inserted, as visible labels."""
    out = tmp_path / "mesh.svg"
    run = jaxscope("export", f"{MESH}::step", "--cpu-devices", "4", "--sharding", "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert "1 collective in the compiled program" in run.stderr
    texts = [t.replace("&apos;", "'") for t in re.findall(r">([^<>]+)</text>", out.read_text(encoding="utf-8"))]
    assert any("P('data', None) @ data=4" in t for t in texts)
    assert any(t.startswith("⇄ all-reduce") and "=4" in t for t in texts)
    assert any(t.startswith("⇄ tiled 4×1") for t in texts)


def test_every_command_that_traces_takes_the_device_and_its_count():
    """--device and --cpu-devices are options of the target, for every command that traces or compiles."""
    missing = jaxscope("jaxpr", f"{CASES}::fma", "--args", "f32[4], f32[4], f32[4]", "--device", "cpu:3")
    assert missing.returncode == 2 and "no device 'cpu:3'" in missing.stderr and "cpu:0" in missing.stderr
    there = jaxscope(
        "hlo", f"{CASES}::fma", "--args", "f32[4], f32[4], f32[4]", "--device", "cpu:3", "--cpu-devices", "4", "--stage", "compiled"
    )
    assert there.returncode == 0 and "HloModule" in there.stdout, there.stderr


SHARDED = """
import jax
from jax.sharding import NamedSharding, PartitionSpec as P

MESH = jax.make_mesh((4,), ("data",))


def _step(x, w):
    return (x @ w).sum()


step = jax.jit(_step, in_shardings=(NamedSharding(MESH, P("data", None)), NamedSharding(MESH, P())))
JAXSCOPE_ARGS = {"step": "f32[32,16], f32[16,8]"}
"""


@pytest.mark.same_jax
def test_a_jitted_target_keeps_its_in_shardings(tmp_path):
    """Issue 47, 2: `jax.jit(f, in_shardings=...)` unwrapped to its body kept the shardings out: the
    program drawn and compiled was replicated. Now its arguments are sharded as JAX's own lowering has them."""
    source = tmp_path / "sharded.py"
    source.write_text(SHARDED)
    ours = jaxscope("hlo", f"{source}::step", "--cpu-devices", "4", "--stage", "compiled")
    assert ours.returncode == 0, ours.stderr
    oracle = f"import jax, runpy; m = runpy.run_path({str(source)!r}); s = jax.ShapeDtypeStruct\n"
    oracle += "print(m['step'].lower(s((32, 16), 'float32'), s((16, 8), 'float32')).compile().as_text())"
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    theirs = subprocess.run([sys.executable, "-c", oracle], capture_output=True, text=True, timeout=180, env=env)
    assert theirs.returncode == 0, theirs.stderr

    def params(text: str) -> list[str]:
        return sorted(re.sub(r", metadata=\{[^}]*\}", "", line).strip() for line in text.splitlines() if " parameter(" in line)

    assert params(ours.stdout) == params(theirs.stdout)
    assert "f32[8,16]" in "".join(params(ours.stdout))  # a quarter of x's 32 rows per device


def test_exit_codes_follow_the_cause_of_a_difference():
    """Issue 56: noise explained with its evidence exits 0; a value read at trace time exits 1 naming its line."""
    noise = jaxscope("run", f"{CASES}::adam_zero_bias", "--repeats", "1")
    assert noise.returncode == 0, noise.stdout[-3000:] + noise.stderr
    assert "OK: 1 of 12 outputs differ beyond tolerance, explained as noise" in noise.stdout
    assert re.search(r"cause: noise, explained: out\[0\]\['bk'\]: rounding noise of a cancellation at e\d+ reduce_sum", noise.stdout)
    numpy = jaxscope("run", f"{CASES}::trace_time_numpy", "--args", "f32[16]", "--repeats", "1")
    assert numpy.returncode == 1 and "cause: trace-time, NOT explained" in numpy.stdout
    line = next(i for i, text in enumerate(pathlib.Path(CASES).read_text().splitlines(), 1) if text.endswith("# numpy-random"))
    assert f"run_cases.py:{line}: `np.random.normal` ran at trace time" in numpy.stdout
    models = str(ROOT / "tests" / "worker" / "corpus" / "models.py")
    ref = jaxscope("run", f"{models}::train_step", "--reference", "f64", "--repeats", "1", "--json")
    assert ref.returncode == 0, ref.stderr
    data = json.loads(ref.stdout)
    assert data["request"]["reference"] == "f64" and data["evidence"]["runs"] == ["a float64 reference of the traced program on cpu:0"]
    assert all(leaf["reference"] is not None for leaf in data["leaves"] if leaf["kind"] == "array")
    bad = jaxscope("run", f"{CASES}::add", "--args", "f32[4], f32[4]", "--reference", "tpu:0")
    assert bad.returncode == 2 and "no device 'tpu:0'" in bad.stderr
