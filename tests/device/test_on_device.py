"""`make test-device`: jaxscope on the accelerator itself (a TPU), run there by hand (CI has none).

Each command opens the chip (6-11 s); a TPU admits one process at a time, so these run one after
another in one pytest process that never opens the chip itself."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models.py")


def jaxscope(*args: str, timeout: float = 400) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "jaxscope", *args], capture_output=True, text=True, timeout=timeout)
    print(f"$ jaxscope {' '.join(args)}  -> exit {done.returncode}\n{done.stdout[-4000:]}{done.stderr[-2000:]}")
    return done


def test_run_names_the_tpu_and_calls_its_matmul_rounding_precision() -> None:
    done = jaxscope("run", f"{MODELS}::mlp_loss")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^device: tpu:0 \(TPU v\d", done.stdout, re.M), done.stdout
    assert re.search(r"^OK: ", done.stdout, re.M)  # jit and eager round alike on the chip, or differ by its precision


def test_cost_time_reads_the_device_plane_and_says_where_the_step_goes() -> None:
    done = jaxscope("cost", f"{MODELS}::mlp_loss", "--time", "--by", "line", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    time_ = data["time"]
    assert time_["plane"].startswith("/device:TPU:0") and time_["device_kind"].startswith("TPU")
    assert 0 < time_["device_busy_s"] <= time_["run_s"] * 1.05 and 0 < time_["busy_share"] <= 1.05
    timed = [r for r in data["rows"] if r.get("seconds", 0) > 0]
    assert timed and any("flops_per_s" in r for r in timed)
    # the TPU's plugin prices no single instruction: XLA's CPU cost model does, to the TPU's own total
    assert abs(data["total"]["flops"] - data["xla"]["cost"]["flops"]) <= 1e-6 * data["xla"]["cost"]["flops"]
    text = jaxscope("cost", f"{MODELS}::vit_step", "--time", "--by", "scope", "--top", "12")
    busy = r"^measured: device busy [\d.]+ % of [\d.]+ ms per run .*TPU v\d.*/device:TPU:0\): (host|device)-bound"
    assert re.search(busy, text.stdout, re.M)
    assert re.search(r"^compiled \(TPU v\d[^)]* HBM, XLA's memory analysis\): arguments", text.stdout, re.M)
    assert "% of peak" in text.stdout


def test_libraries_on_pythonpath_are_not_the_users(tmp_path) -> None:
    """The TPU image has JAX on PYTHONPATH, outside site-packages: none of its lines is the user's."""
    done = jaxscope("cost", f"{MODELS}::vit_step", "--by", "line", "--no-xla", "--top", "0", "--json")
    assert done.returncode == 0, done.stderr
    names = [r["name"] for r in json.loads(done.stdout)["rows"]]
    assert names and all(n.startswith("models.py:") or n.startswith("(") for n in names), names
    saved = jaxscope("save", f"{MODELS}::mlp_loss", "-o", str(tmp_path / "m.jaxscope"), "--no-compile")
    assert saved.returncode == 0 and "1 source file;" in saved.stdout, saved.stdout


def _holder(seconds: float) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import jax, time; jax.devices(); print('held', flush=True); time.sleep({seconds})"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_a_chip_held_by_another_program_is_said_in_one_sentence() -> None:
    holder = _holder(60)
    try:
        done = jaxscope("jaxpr", f"{MODELS}::mlp_loss", timeout=120)
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 4, done.stdout + done.stderr
    assert "The TPU is held by another program" in done.stderr and "Traceback" not in done.stderr
    time.sleep(3)


def test_a_chip_let_go_soon_is_waited_for() -> None:
    holder = _holder(4)
    try:
        done = jaxscope("jaxpr", f"{MODELS}::mlp_loss", timeout=120)
    finally:
        holder.wait()
    assert done.returncode == 0, done.stderr


def test_an_export_with_every_link_opens_the_chip_once(tmp_path) -> None:
    t = time.perf_counter()
    done = jaxscope("export", f"{MODELS}::mlp_loss", "-o", str(tmp_path / "m.html"), "--links", "jaxpr,stablehlo,compiled")
    assert done.returncode == 0, done.stderr
    print(f"export with links: {time.perf_counter() - t:.1f} s")
