"""What jaxscope read on a TPU v5e, replayed on the CPU from the fixtures `tests/device/record_fixtures.py`
recorded there (tests/fixtures/tpu/): the profile's device plane, the compiled texts priced as XLA
prices them, and saved traces that open here with their TPU figures intact."""

from __future__ import annotations

import gzip
import json
import pathlib
import re
import subprocess
import sys

import jax
import pytest

from jaxscope.analysis.hlo_cost import INSTRUCTION, hlo_cost
from jaxscope.saved_traces import load
from jaxscope.worker import jax_compat
from jaxscope.worker.profile import read_events
from jaxscope.worker.xla_cost import instruction_costs

TPU = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "tpu"
XLA = json.loads((TPU / "xla.json").read_text())


class _TpuPlugin:
    """A TPU device as far as pricing goes: its PJRT C API plugin refuses a single instruction (seen there)."""

    platform = "tpu"
    client = object()


_cpu_hlo_cost = jax_compat.hlo_cost


def _as_the_tpu_prices(module_text: str, client: object) -> dict[str, float]:
    if client is _TpuPlugin.client:
        raise RuntimeError("UNIMPLEMENTED: PJRT C API does not support GetHloCostAnalysis.")
    return _cpu_hlo_cost(module_text, client)


def jaxscope(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jaxscope", *args], capture_output=True, text=True, timeout=120)


def test_the_recording_is_of_a_tpu() -> None:
    assert XLA["meta"]["device"] == "tpu:0" and XLA["meta"]["device_kind"] == "TPU v5 lite"


def test_the_profiles_device_plane_times_the_compiled_instructions() -> None:
    with gzip.open(TPU / "profile.json.gz", "rt") as fh:
        recorded = json.load(fh)
    reading = read_events(recorded["traceEvents"], recorded["runs"])
    assert reading.plane == "/device:TPU:0" and reading.device_s > 0
    names = {m.group(1) for line in recorded["text"].splitlines() if (m := INSTRUCTION.match(line))}
    assert reading.op_times and set(reading.op_times) <= names, set(reading.op_times) - names
    assert sum(reading.op_times.values()) <= reading.device_s * 1.01  # the ops run inside the module's time
    convolutions = [n for n in reading.op_times if "convolution" in n or "fusion" in n]
    assert convolutions  # the matmuls (convolutions on a TPU) are among what the device timed


def test_a_host_only_profile_is_read_by_its_event_names() -> None:
    events = [
        {"ph": "X", "name": "fusion.3", "pid": 1, "tid": 2, "dur": 40.0},
        {"ph": "X", "name": "fusion.3", "pid": 1, "tid": 2, "dur": 20.0},
    ]
    reading = read_events(events, 2)
    assert reading.plane == "" and reading.device_s == 0 and reading.op_times == {"fusion.3": pytest.approx(30e-6)}


@pytest.mark.parametrize("name", sorted(XLA["programs"]))
def test_tpu_texts_are_priced_by_xlas_cpu_model_to_the_tpus_own_total(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The TPU's plugin prices no single instruction; XLA's CPU cost model prices the TPU's text,
    and the sum is the TPU's `cost_analysis()` (to a few FLOPs in a billion)."""
    program = XLA["programs"][name]
    monkeypatch.setattr(jax_compat, "hlo_cost", _as_the_tpu_prices)
    priced = instruction_costs(program["text"], _TpuPlugin())
    assert priced.backend == "tpu" and priced.model == "cpu" and priced.rows and not priced.failures
    assert hlo_cost(program["text"], priced).once.flops == pytest.approx(program["cost"]["flops"], rel=1e-6)


def test_the_texts_own_rules_read_tpu_layouts() -> None:
    """`f32[256,1024]{1,0:T(8,128)}`, `bf16[…]{…:T(8,128)(2,1)S(1)}`: a TPU's matmuls are convolutions."""
    program = XLA["programs"]["mlp_loss"]
    assert "T(8,128)" in program["text"] and " dot(" not in program["text"]
    assert hlo_cost(program["text"]).once.flops == program["cost"]["flops"]


def test_a_trace_saved_on_a_tpu_opens_here_with_its_tpu_figures() -> None:
    doc = load(str(TPU / "vit_step.jaxscope"))
    assert doc.compiled is not None and doc.compiled.device_kind == "TPU v5 lite" and doc.compiled.plane == "/device:TPU:0"
    done = jaxscope("cost", str(TPU / "vit_step.jaxscope"), "--time", "--by", "scope", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    time_ = data["time"]
    assert time_["device_kind"] == "TPU v5 lite" and time_["busy_share"] == pytest.approx(doc.compiled.device_s / doc.compiled.run_s)
    assert data["total"]["flops"] == pytest.approx(data["xla"]["cost"]["flops"], rel=1e-6)
    assert data["xla"]["memory"] == doc.compiled.memory and data["xla"]["memory"]["temp_size_in_bytes"] > 0
    blocks = [r for r in data["rows"] if re.search(r"blocks\[\d\]/attn", r["name"]) and r.get("flops_per_s")]
    assert blocks  # the attention of each block, with its achieved FLOP/s on the TPU
    text = jaxscope("cost", str(TPU / "vit_step.jaxscope"), "--time", "--top", "5")
    assert re.search(r"^measured: device busy [\d.]+ % of [\d.]+ ms per run .*TPU v5 lite, /device:TPU:0\): host-bound", text.stdout, re.M)
    assert re.search(r"^compiled \(TPU v5 lite HBM, XLA's memory analysis\): arguments 38\.0 MiB", text.stdout, re.M)
    assert "% of peak)" in text.stdout and "197 TFLOP/s" in text.stdout


def test_a_run_saved_on_a_tpu_names_its_device() -> None:
    done = jaxscope("run", str(TPU / "mlp_loss.jaxscope"))
    assert done.returncode == 0 and re.search(r"^device: tpu:0 \(TPU v5 lite\), 15\.7 GiB$", done.stdout, re.M), done.stdout


def test_the_tpus_default_matmul_precision_is_further_from_the_cpu_than_highest() -> None:
    """The f32 MLP's loss: at default precision the TPU's matmuls are bf16 passes (7.5e-6 from the
    CPU), at `highest` 1.4e-6; jit and eager round alike on the chip at either."""
    found = json.loads((TPU / "precision.json").read_text())
    cpu = found["cpu/default"]["jit"]
    default, highest = found["device/default"], found["device/highest"]
    assert default["jit"] == default["eager"] and highest["jit"] == highest["eager"]
    assert abs(highest["jit"] - cpu) < abs(default["jit"] - cpu) / 3
    assert found["cpu/highest"]["jit"] == cpu  # the CPU computes float32 matmuls in float32 at any precision


def test_a_tpu_scan_without_a_trip_count_is_counted_its_length_times(monkeypatch: pytest.MonkeyPatch) -> None:
    """A TPU's compiled scan is a while loop whose text gives no trip count: the scan's length, as
    JAX gave it (by the equation's mark on the while line), counts its body."""
    import jax.numpy as jnp

    from jaxscope.worker.hlo import trips_by_while_line
    from jaxscope.worker.program import mark_equations

    program = XLA["programs"]["scan_layers"]
    lines = program["text"].splitlines()
    (loop,) = [n for n, line in enumerate(lines, 1) if " while(" in line]
    monkeypatch.setattr(jax_compat, "hlo_cost", _as_the_tpu_prices)
    once = hlo_cost(program["text"], instruction_costs(program["text"], _TpuPlugin()))
    assert once.uncounted == 1
    counted = hlo_cost(program["text"], instruction_costs(program["text"], _TpuPlugin(), {loop: 6.0}))
    assert counted.uncounted == 0 and counted.once.flops == once.once.flops
    body = 2 * 128 * 256 * 256 + 2 * 128 * 256  # a layer's matmul, its relu and its sum, per trip
    assert counted.total.flops - once.total.flops == pytest.approx(5 * body, rel=0.01)

    ws, x = jnp.ones((6, 4, 4)), jnp.ones((2, 4))
    closed = jax.make_jaxpr(lambda ws, x: jax.lax.scan(lambda h, w: (h @ w, None), x, ws)[0])(ws, x)
    scans: dict[tuple[int, int], int] = {}
    mark_equations(closed, scans)
    assert list(scans.values()) == [6]
    assert trips_by_while_line({loop: [((0, 0),), ((0, 0),)], 7: [((0, 0), (1, 2))]}, {(0, 0): 6}) == {loop: 6.0}
