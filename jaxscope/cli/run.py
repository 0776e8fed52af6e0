"""`jaxscope run`: the function jitted on a device vs eagerly, as a table or JSON. No jax import here.

Exit codes: 0 jit and eager agree within tolerance, or differ only by causes explained with evidence
(rounding noise, matmul precision), and no output holds NaN; 1 a difference is real or unexplained
(a value read at trace time, jit further from float64 than eager, device arithmetic) or an output
holds NaN; 2-5 as for every command (bad usage, user code, timeout, crash).
"""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING, Any

from jaxscope.cli.common import CliError, TargetOptions, add_target
from jaxscope.schema.run import F64, PRECISIONS
from jaxscope.session import resolve_call, worker_job

if TYPE_CHECKING:
    from jaxscope.schema.run import RunResult

RUN_EPILOG = (
    "When an output differs beyond its tolerance, run names the cause with its evidence: it replays the "
    "traced program and traces it again (a value read at trace time), runs it in float64 on the CPU "
    "(rounding noise: jit no further from float64 than eager, and the equation that cancels) and, on an "
    "accelerator, at matmul precision highest. "
    "exit status: 0 when every output agrees within tolerance or differs by rounding noise or matmul "
    "precision (explained) and none holds NaN; 1 when a difference is real or unexplained, or an output "
    "holds NaN; 2 bad usage or arguments (including an unknown --device or --reference); 3 the function "
    "failed; 4 timeout; 5 worker crash or jaxscope bug."
)


def add_parser(sub: Any) -> None:
    """Register `run` on the sub-command parsers of `jaxscope`."""
    p: argparse.ArgumentParser = sub.add_parser(
        "run",
        help="run the function jitted and eagerly on the same inputs; compare outputs and times",
        description="Run FILE::FUNC jitted on a device and eagerly (jax.disable_jit) with the same generated "
        "inputs; print per-output errors (max abs/rel, ULP), NaN/Inf counts, allclose verdicts and timings.",
        epilog=RUN_EPILOG,
    )
    add_target(p)
    p.add_argument("--backends", choices=("all", "cpu"), default="all", help="backends the worker starts (cpu: hide GPUs/TPUs)")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated inputs (default 0)")
    p.add_argument("--repeats", type=int, default=10, metavar="N", help="steady-state jitted runs; the median is shown (default 10)")
    p.add_argument("--rtol", type=float, default=None, help="relative tolerance for every output (default: by dtype)")
    p.add_argument("--atol", type=float, default=None, help="absolute tolerance for every output (default: by dtype)")
    p.add_argument(
        "--per-equation",
        action="store_true",
        help="compare every intermediate (nested jits included), jit vs eager, to see where they part",
    )
    p.add_argument(
        "--reference",
        default="",
        metavar="f64|DEVICE",
        help="also run a reference: f64 (the traced program in float64 on the CPU: which of jit and eager is nearer "
        "the truth) or a device (e.g. --device gpu --reference cpu: jit there too, on the same host-made inputs)",
    )
    p.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="",
        help="matmul and convolution precision for the runs (jax.default_matmul_precision; default: JAX's)",
    )
    p.add_argument(
        "--no-evidence",
        dest="evidence",
        action="store_false",
        help="on a difference, do not run what names its cause (replay, second trace, float64, precision)",
    )
    p.add_argument("--find-nan", action="store_true", help="locate the first equation making NaN/Inf even if the outputs are finite")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")


def run(opts: argparse.Namespace) -> int:
    """Submit a `run` request to a one-off worker; print the comparison; 0 ok, 1 differences or NaN."""
    import sys
    from dataclasses import asdict

    from jaxscope.analysis.runs.verdicts import format_run

    if opts.repeats < 0:
        raise CliError("--repeats must be 0 or more")
    for name in ("rtol", "atol"):
        value = getattr(opts, name)
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise CliError(f"--{name} must be a finite number >= 0")
    target = TargetOptions.of(opts)
    doc = target.saved
    if doc is not None:
        if doc.run is None:
            raise CliError(f"{opts.target} holds no run (save it with --run): running needs the function's code")
        print(f"jaxscope: the run saved in {opts.target} ({doc.created or 'undated'})", file=sys.stderr)
        result = doc.run
    else:
        result = _run(target, opts)
    if opts.json:
        print(json.dumps(asdict(result), sort_keys=True, indent=1))
    else:
        print(format_run(result))
    return 0 if result.ok else 1


def _reference(text: str) -> str:
    """`f64` (any case, or float64) or a device name as the worker takes it ("cpu", "gpu:1")."""
    value = text.strip().lower()
    if value in ("f64", "float64"):
        return F64
    platform, _, index = value.partition(":")
    if value and (not platform.isidentifier() or (index and not index.isdigit())):
        raise CliError(f"--reference {text!r}: give f64 or a device such as cpu, gpu or tpu:0")
    return value


def _run(target: TargetOptions, opts: argparse.Namespace) -> RunResult:
    """The run the command line asks for (`opts`: the run's own options) in a worker."""
    from jaxscope.runtime.worker_client import DEFAULT_TIMEOUTS
    from jaxscope.schema.run import RunRequest, run_result_from_jsonable

    env = target.env()  # a bad --cpu-devices is said before the target is looked at
    ref, args, inputs = resolve_call(target.target, target.args, target.inputs)
    timeouts = {phase: target.timeout for phase in DEFAULT_TIMEOUTS if phase != "startup"} if target.timeout else None
    request = RunRequest(
        function=ref,
        args=args,
        inputs=inputs,
        device=target.device,
        seed=opts.seed,
        repeats=opts.repeats,
        rtol=opts.rtol,
        atol=opts.atol,
        find_nan=opts.find_nan,
        per_equation=opts.per_equation,
        reference=_reference(opts.reference),
        precision=opts.precision,
        evidence=opts.evidence,
    )
    result: RunResult = worker_job("run", request, run_result_from_jsonable, timeouts, target.debug, env, target.python)
    return result
