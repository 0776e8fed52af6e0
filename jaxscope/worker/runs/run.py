"""The `run` request: the function jitted on one device vs eagerly, same inputs, compared per leaf.

Jit: trace, lower and compile are timed separately after `jax.clear_caches()` (a cached executable
would report a compile time of 0), then a first call and `repeats` steady calls, each until
`block_until_ready`. Eager: the same Python function under `jax.disable_jit()` on the same device;
its first run compiles every primitive once, so a warm run is timed as well. When an output holds
NaN/Inf (or the request asks), the jaxpr is replayed equation by equation to find where it starts.

Phases (for the client's time limits): load, inputs, trace, compile, run, eager, compare, nan.
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import jax

from jaxscope.analysis.runs.causes import judge
from jaxscope.analysis.runs.verdicts import verdict
from jaxscope.schema.run import F64, PRECISIONS, EqnDivergence, Evidence, NanOrigin, RunRequest, RunResult
from jaxscope.schema.trace import ErrorInfo
from jaxscope.worker import jax_compat
from jaxscope.worker.diagnose import TraceWatch, trace_calls
from jaxscope.worker.errors import classify
from jaxscope.worker.makers import combine
from jaxscope.worker.runs.compare import compare_outputs, output_computes, output_paths
from jaxscope.worker.runs.evidence import Runs, gather
from jaxscope.worker.runs.inputs import describe, generate, list_devices, pick_device, place
from jaxscope.worker.runs.replay import find_first_nonfinite, flat_dynamic, per_equation
from jaxscope.worker.trace import Phase, Prepared, TraceError, prepare, runtime_failure, trace_failure

T = TypeVar("T")

EAGER_REPEAT_LIMIT_S = 2.0  # repeat the eager run (warm) only when one run is at most this long
EAGER_REPEATS = 3


def run_function(request: RunRequest, phase: Phase) -> RunResult:
    """Run one request; raise TraceError (with a classified ErrorInfo) on any failure."""
    prep = prepare(request.function, request.args, phase, request.inputs)
    devices = list_devices()
    device, device_info = pick_device(request.device, devices)
    warnings: list[str] = list(prep.warnings)

    if request.precision and request.precision not in PRECISIONS:
        raise TraceError(
            ErrorInfo(kind="spec", phase="device", message=f"no matmul precision {request.precision!r}; one of {', '.join(PRECISIONS)}")
        )
    if request.reference and request.reference != F64:
        pick_device(request.reference, devices)  # an unknown reference device is the user's error, said before running
    phase("inputs")
    prep, given = _made_inputs(request, prep, device, device_info)
    args, kwargs = given.args, given.kwargs

    jit = _jit_runs(request, prep, device, args, kwargs, phase, warnings)
    jitted, traced, out, watch = jit.jitted, jit.traced, jit.out, jit.watch

    phase("eager")
    eager, eager_first, warm = _eager_runs(request, prep, device, args, kwargs)

    phase("compare")
    paths, chains = output_paths(out), output_computes(traced.jaxpr.jaxpr)
    computes = dict(zip(paths, chains, strict=True)) if len(paths) == len(chains) else {}
    leaves = compare_outputs(out, eager, request.rtol, request.atol, computes)
    runs = Runs(
        request,
        prep,
        jitted,
        traced.jaxpr,
        args,
        kwargs,
        device,
        out,
        eager,
        leaves,
        computes,
        lambda: prep.call(*args, **kwargs),
        trace_calls(watch, prep.target),
    )
    with jax_compat.matmul_precision(request.precision):
        evidence, leaves = gather(runs, phase)
    causes = judge(leaves, evidence, strict=request.rtol is not None or request.atol is not None)
    ok, text, explanation = verdict(leaves, causes)

    first_nan, searched, divergence = _replays(request, prep, device, traced.jaxpr, args, kwargs, leaves, evidence, phase, warnings)
    return RunResult(
        request=request,
        device=device_info,
        devices=tuple(info for _, info in devices),
        inputs=given.inputs,
        input_source=given.source,
        trace_s=jit.trace_s,
        lower_s=jit.lower_s,
        compile_s=jit.compile_s,
        first_call_s=jit.first_call,
        steady_s=statistics.median(jit.steady) if jit.steady else 0.0,
        steady_runs=jit.steady,
        eager_first_s=eager_first,
        eager_s=statistics.median(warm),
        leaves=tuple(leaves),
        ok=ok,
        verdict=text,
        explanation=explanation,
        first_nan=first_nan,
        nan_searched=searched,
        divergence=divergence,
        evidence=evidence,
        causes=tuple(causes),
        inputs_made=given.made_where,
        warnings=tuple(warnings),
        jax_version=jax.__version__,
    )


@dataclass(frozen=True)
class _Inputs:
    """The run's inputs: made once on the host, placed on the device asked for, described."""

    args: Any
    kwargs: dict[str, Any]
    source: str  # the maker's label, or the seed
    made_where: str
    inputs: Any  # describe(): each leaf's path, aval and first values


def _made_inputs(request: RunRequest, prep: Prepared, device: Any, device_info: Any) -> tuple[Prepared, _Inputs]:
    """The inputs of every run, made once on the host, so every device and reference sees the same
    bits; `prep` with the maker's own static leaves when a maker made them."""
    made = prep.made
    host = jax.devices("cpu")[0]
    with jax.default_device(host):
        if made is not None:
            made, args, kwargs = made.concrete(request.seed)
            prep = replace(prep, made=made)  # these values' own static leaves
            source = made.label
        else:
            args, kwargs = _guard(lambda: generate(prep, request.seed), "inputs")
            source = f"seed {request.seed}"
    placed = ""
    if request.device:  # asked for one device: the inputs go there; else they follow the program (a mesh's shardings)
        args, kwargs = _guard(functools.partial(place, prep, args, kwargs, device), "inputs")
        placed = f", placed on {device_info.name}"
    if made is not None:
        full = [combine(a, s) for a, s in zip(args, made.static_args, strict=True)]
        full_kwargs = {k: combine(v, made.static_kwargs[k]) for k, v in kwargs.items()}
        inputs = describe(prep.target, full, full_kwargs, set(), set())
    else:
        inputs = describe(prep.target, args, kwargs, set(prep.static_argnums), set(prep.static_argnames))
    return prep, _Inputs(args, kwargs, source, f"made on the host {host.platform}:{host.id}{placed}", inputs)


@dataclass(frozen=True)
class _JitRun:
    """The jitted side: the trace (and what the Python did meanwhile), its phases' times, its outputs."""

    jitted: Any
    traced: Any
    watch: TraceWatch
    out: Any
    trace_s: float
    lower_s: float
    compile_s: float
    first_call: float
    steady: tuple[float, ...]


def _jit_runs(
    request: RunRequest, prep: Prepared, device: Any, args: Any, kwargs: dict[str, Any], phase: Phase, warnings: list[str]
) -> _JitRun:
    """Trace, lower, compile and call the jitted function on `device`, timing each phase."""
    jax.clear_caches()  # honest compile time, and eager's first run compiles each primitive anew
    phase("trace")
    jitted = prep.jit(donate=False)  # called again with the same inputs: nothing donated
    if {"donate_argnums", "donate_argnames"} & set(jax_compat.jit_options(prep.fn)):
        warnings.append(
            "the decorator donates inputs (donate_argnums); run does not, as it calls the program "
            "again with the same inputs: the traced and lowered program has the donation"
        )
    precision = jax_compat.matmul_precision(request.precision)
    with jax.default_device(device), precision:  # the default device is part of jit's cache key: same for every call
        t0 = time.perf_counter()
        watch = TraceWatch(prep.target)  # what the Python did at trace time, the evidence of a trace-time cause
        try:
            with watch:
                traced = jitted.trace(*args, **kwargs)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise trace_failure(exc, "trace") from None
        t1 = time.perf_counter()
        phase("compile")
        lowered = _guard(traced.lower, "compile")
        t2 = time.perf_counter()
        _guard(lowered.compile, "compile")
        t3 = time.perf_counter()

        phase("run")
        out, first_call = _timed(lambda: jitted(*args, **kwargs), "run")
        steady = tuple(_timed(lambda: jitted(*args, **kwargs), "run")[1] for _ in range(max(request.repeats, 0)))
    return _JitRun(jitted, traced, watch, out, t1 - t0, t2 - t1, t3 - t2, first_call, steady)


def _eager_runs(request: RunRequest, prep: Prepared, device: Any, args: Any, kwargs: dict[str, Any]) -> tuple[Any, float, list[float]]:
    """The function run eagerly on `device`: its outputs, its first run's time, and its warm runs'."""
    with jax.disable_jit(), jax.default_device(device), jax_compat.matmul_precision(request.precision):
        eager, eager_first = _timed(lambda: prep.call(*args, **kwargs), "eager")
        # steady against steady: the first eager run compiles every primitive (a speed-up of 47281x
        # compared it with jit's steady state); a slow program gets one warm run, a fast one a few
        repeats = EAGER_REPEATS if eager_first <= EAGER_REPEAT_LIMIT_S else 1
        warm = [_timed(lambda: prep.call(*args, **kwargs), "eager")[1] for _ in range(repeats)]
    return eager, eager_first, warm


def _replays(
    request: RunRequest,
    prep: Prepared,
    device: Any,
    closed: Any,
    args: Any,
    kwargs: dict[str, Any],
    leaves: list[Any],
    evidence: Evidence | None,
    phase: Phase,
    warnings: list[str],
) -> tuple[NanOrigin | None, bool, tuple[EqnDivergence, ...]]:
    """The program replayed equation by equation where asked or needed: the first NaN/Inf (and
    whether it was looked for), and each equation's jit-against-eager difference."""
    first_nan: NanOrigin | None = None
    searched = request.find_nan or any(lf.nonfinite for lf in leaves)
    if searched:
        phase("nan")
        first_nan = _replay("first-NaN search", find_first_nonfinite, None, device, prep, closed, args, kwargs, warnings)
        if first_nan is None and any(lf.jit_nan or lf.jit_posinf or lf.jit_neginf for lf in leaves):
            warnings.append(
                "no equation made NaN/Inf when evaluated one by one: the compiled program makes them (fusion or simplification)"
            )
    divergence: tuple[EqnDivergence, ...] = ()
    if request.per_equation:
        phase("divergence")
        divergence = _replay("per-equation comparison", per_equation, (), device, prep, closed, args, kwargs, warnings)
        divergence = _noted(divergence, evidence)
    return first_nan, searched, divergence


def _noted(divergence: tuple[EqnDivergence, ...], evidence: Evidence | None) -> tuple[EqnDivergence, ...]:
    """Each equation with what the evidence says of it: a cancellation, a value read at trace time."""
    if evidence is None:
        return divergence
    notes = {s.path: "trace-time: " + s.detail for s in evidence.retrace_sites}
    notes.update({s.path: "cancels: " + s.detail for s in evidence.cancellations if s.path not in notes})
    return tuple(replace(d, note=notes[d.path]) if d.path in notes else d for d in divergence)


def _timed(call: Callable[[], Any], phase: str) -> tuple[Any, float]:
    """(result, seconds) of `call` until its outputs are ready on the device."""
    t0 = time.perf_counter()
    result = _guard(lambda: jax.block_until_ready(call()), phase)
    return result, time.perf_counter() - t0


def _guard(call: Callable[[], Any], phase: str) -> Any:
    """Run `call`; any failure becomes a TraceError for `phase` (device OOM as kind "memory")."""
    try:
        return call()
    except TraceError:
        raise
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise runtime_failure(exc, phase) from None


def _replay(
    what: str,
    search: Callable[[Any, list[Any]], T],
    default: T,
    device: Any,
    prep: Prepared,
    closed: Any,
    args: list[Any],
    kwargs: dict[str, Any],
    warnings: list[str],
) -> T:
    """Run `search(closed, flat inputs)` on `device` (a replay of the program); a failure is a warning, not an error."""
    flat = flat_dynamic(args, kwargs, prep.static_argnums, prep.static_argnames)
    if len(flat) != len(closed.jaxpr.invars):
        warnings.append(f"{what} skipped: {len(flat)} input leaves for {len(closed.jaxpr.invars)} jaxpr inputs")
        return default
    try:
        with jax.default_device(device):
            return search(closed, flat)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        info = classify(exc, what)
        warnings.append(f"{what} failed: {info.exc_type}: {info.message}")
        return default
