"""Record, on a machine with an accelerator, what jaxscope reads there, for the tests that replay
it on a CPU (`tests/fixtures/tpu/`, read by `tests/analysis/test_tpu_fixtures.py`).

    python3 tests/device/record_fixtures.py OUTDIR [save xla profile precision]

Writes, for the programs of `tests/device/models.py`:
  NAME.jaxscope     `jaxscope save --time --run` (the ViT step without --run): the trace, the compiled text with XLA's prices of
                    the device, its memory analysis, the measured time from the device's profile, a run
  xla.json          per program, JAX's own answers beside jaxscope's: the compiled text,
                    `cost_analysis()`, `memory_analysis()`, the device and its kind
  profile.json.gz   the profile of 5 runs of `mlp_loss` (metadata and the device planes' events)
  precision.json    `mlp_loss` jitted and eager at default and `highest` matmul precision on the
                    device and on the CPU, from the same inputs made once on the host

The jaxscope commands run first, one at a time, then this process opens the chip itself: a TPU
admits one process at a time."""

from __future__ import annotations

import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models.py")
PROGRAMS = ("vit_step", "mlp_loss", "scan_layers")


def save_documents(out: str) -> None:
    for name in PROGRAMS:
        t = time.perf_counter()
        run = [] if name == "vit_step" else ["--run"]  # its run's evidence (a float64 replay of 2,455 equations) takes minutes
        done = subprocess.run(
            [sys.executable, "-m", "jaxscope", "save", f"{MODELS}::{name}", "-o", os.path.join(out, f"{name}.jaxscope"), "--time", *run],
            capture_output=True,
            text=True,
            timeout=400,
        )
        print(f"save {name}: exit {done.returncode} in {time.perf_counter() - t:.1f} s\n{done.stdout}{done.stderr[-3000:]}", flush=True)


def xla_answers(out: str) -> None:
    import jax
    import models

    device = jax.devices()[0]
    found = {}
    for name, fn, make in (("mlp_loss", models.mlp_loss, models.make_mlp), ("scan_layers", models.scan_layers, models.make_scan)):
        compiled = jax.jit(fn).lower(*make()).compile()
        cost = compiled.cost_analysis()
        cost = cost[0] if isinstance(cost, (list, tuple)) else cost
        memory = compiled.memory_analysis()
        found[name] = {
            "text": compiled.as_text(),
            "cost": {k: float(v) for k, v in (cost or {}).items()},
            "memory": {k: int(getattr(memory, k)) for k in dir(memory) if k.endswith("_in_bytes")} if memory is not None else {},
        }
    meta = {"jax": jax.__version__, "device": f"{device.platform}:{device.id}", "device_kind": device.device_kind}
    with open(os.path.join(out, "xla.json"), "w") as fh:
        json.dump({"meta": meta, "programs": found}, fh, indent=1)
    print(f"xla.json: {meta}", flush=True)


def profile(out: str) -> None:
    import jax
    import models

    args = models.make_mlp()
    jitted = jax.jit(models.mlp_loss)
    jax.block_until_ready(jitted(*args))
    folder = tempfile.mkdtemp(prefix="jaxscope-record-")
    with jax.profiler.trace(folder, create_perfetto_trace=True):
        for _ in range(5):
            jax.block_until_ready(jitted(*args))
    events = []
    for path in glob.glob(f"{folder}/**/*.trace.json.gz", recursive=True):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            events += json.load(fh).get("traceEvents", [])
    planes = {e.get("pid") for e in events if e.get("ph") == "M" and str(e.get("args", {}).get("name", "")).startswith("/device:")}
    kept = [e for e in events if e.get("ph") == "M" or e.get("pid") in planes]
    with gzip.open(os.path.join(out, "profile.json.gz"), "wt", encoding="utf-8") as fh:
        json.dump({"traceEvents": kept, "runs": 5, "text": jitted.lower(*args).compile().as_text()}, fh)
    print(f"profile.json.gz: {len(kept)} of {len(events)} events, device planes {sorted(map(str, planes))}", flush=True)


def precision(out: str) -> None:
    import jax
    import models
    import numpy as np

    cpu = jax.devices("cpu")[0]
    with jax.default_device(cpu):
        host = models.make_mlp()
    found = {}
    for where, device in (("device", jax.devices()[0]), ("cpu", cpu)):
        args = jax.device_put(host, device)
        for level in ("default", "highest"):
            with jax.default_matmul_precision(level):
                jit = float(jax.jit(models.mlp_loss)(*args))
                with jax.disable_jit():
                    eager = float(models.mlp_loss(*args))
            found[f"{where}/{level}"] = {"jit": jit, "eager": eager}
    found["inputs_sum"] = float(np.sum(np.asarray(host[1])))
    with open(os.path.join(out, "precision.json"), "w") as fh:
        json.dump(found, fh, indent=1)
    print(f"precision.json: {found}", flush=True)


def main() -> int:
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    steps = sys.argv[2:] or ["save", "xla", "profile", "precision"]
    os.makedirs(out, exist_ok=True)
    sys.path.insert(0, HERE)
    if "save" in steps:
        save_documents(out)
        time.sleep(2)  # the last worker lets the chip go
    for name, step in (("xla", xla_answers), ("profile", profile), ("precision", precision)):
        if name in steps:
            step(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
