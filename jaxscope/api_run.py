"""`jaxscope.run`: a function jitted on a device against eager, with the causes of any difference, from
Python (issue 56). The same request, worker and judge as `jaxscope run`; the result is the data
(`RunResult`: `ok`, `verdict`, `causes` with their evidence, per-output `leaves`), not its text.

It takes a target string (``"file.py::func"``, a maker by ``inputs=``): the eager run and the reference
runs need the function's own file in a fresh worker. This module imports neither jax nor Qt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jaxscope.schema.run import RunResult


def run(
    target: str,
    *,
    args_spec: str | None = None,
    inputs: str | None = None,
    device: str = "",
    reference: str = "",
    precision: str = "",
    seed: int = 0,
    repeats: int = 10,
    rtol: float | None = None,
    atol: float | None = None,
    per_equation: bool = False,
    evidence: bool = True,
    timeout: float | None = None,
) -> RunResult:
    """Run `target` jitted on `device` and eagerly on the same host-made inputs and judge them.

    `reference`: ``"f64"`` (the traced program in float64 on the CPU) or a device (``"cpu"``);
    `precision`: ``"default"``, ``"high"`` or ``"highest"`` for every matmul. On a difference beyond
    tolerance the worker runs what names its cause (unless ``evidence=False``): `RunResult.causes`.
    Raises JaxscopeError (with the command line's exit code as `code`) when the run cannot be made."""
    from jaxscope.runtime.worker_client import DEFAULT_TIMEOUTS
    from jaxscope.schema.run import F64, PRECISIONS, RunRequest, run_result_from_jsonable
    from jaxscope.session import SessionError, resolve_call, worker_job

    if not isinstance(target, str):
        raise TypeError(f"run takes a target string ('file.py::func'), got {type(target).__qualname__}")
    if precision and precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r}: one of {', '.join(PRECISIONS)} (or '' for JAX's default)")
    timeouts = {phase: timeout for phase in DEFAULT_TIMEOUTS if phase != "startup"} if timeout else None
    try:
        function, args, maker = resolve_call(target, args_spec, inputs)
        request = RunRequest(
            function, args, maker, device, seed, repeats, rtol, atol, False, per_equation,
            F64 if reference.lower() in ("f64", "float64") else reference, precision, evidence,
        )  # fmt: skip
        result: RunResult = worker_job("run", request, run_result_from_jsonable, timeouts, False)
    except SessionError as exc:
        exc.raise_typed()
    return result
