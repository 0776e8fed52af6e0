"""The runs that name the cause of a jit/eager difference, and what each showed (issue 56).

They run only when they are needed: when an output differs beyond its tolerance (and the request
allows evidence), or when the user asked for a reference. Each answers one question:

- *replay*: the traced program evaluated one equation at a time has eager's arithmetic without
  the Python around it. Jit agreeing with it while the eager Python run does not means the
  function computes something else when it runs than when it was traced (trace-time behaviour).
- *retrace*: a second trace of the same call giving another program (a constant or literal that
  changed) names the line that reads a value at trace time (numpy's random numbers, a counter).
- *float64*: the traced program in float64 on the CPU (worker.reference): which of jit and eager
  is nearer the truth, and which equations cancel (|result| << sum of |terms|).
- *precision*: jit and eager again with every matmul at `highest`: a difference that goes away
  there is the matmul precision of the device.
- *device*: jit on a reference device with the same host-made inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import jax
import numpy as np

from jaxscope.schema.run import F64, Evidence, LeafComparison, ReferenceCheck, RunRequest, Site
from jaxscope.worker import jax_compat as jc
from jaxscope.worker.runs.compare import _leaves, as_host, compare_arrays, compare_outputs, output_paths, preview
from jaxscope.worker.runs.inputs import list_devices, pick_device, place
from jaxscope.worker.runs.reference import Reference, digits_kept, run_reference
from jaxscope.worker.runs.replay import flat_dynamic, replay_outputs
from jaxscope.worker.runs.retrace_diff import retrace_sites

MATMULS = frozenset({"dot_general", "conv_general_dilated", "ragged_dot_general"})
TRANSCENDENTALS = frozenset(
    {"exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "erf", "erfc", "erf_inv", "sin", "cos", "tan", "atan2",
     "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "pow", "rsqrt", "sqrt", "cbrt", "lgamma", "digamma"}
)  # fmt: skip
MAX_SITES = 8
MIN_CANCELLED = 0.5  # a cancellation in fewer of an equation's elements is not named (LayerNorm's x - mean has a few)


@dataclass
class Runs:
    """What `worker.run` has in hand after jit and eager ran: enough to run them again."""

    request: RunRequest
    prep: Any  # worker.trace.Prepared
    jitted: Any
    closed: Any  # the traced ClosedJaxpr
    args: list[Any]
    kwargs: dict[str, Any]
    device: Any
    out: Any  # jit's outputs
    eager: Any  # eager's outputs
    leaves: list[LeafComparison]
    computes: dict[str, str]  # each output's dtype chain (`compare.output_computes`), by path
    call_eager: Callable[[], Any]  # the eager run again, on the run's device
    trace_calls: tuple[Site, ...] = ()  # host random numbers or clock read, state changed, while tracing


def gather(runs: Runs, phase: Callable[[str], None]) -> tuple[Evidence | None, list[LeafComparison]]:
    """(the evidence, the leaves with their float64 reference checks) for one run."""
    req = runs.request
    far = {lf.path for lf in runs.leaves if lf.kind == "array" and not lf.allclose}
    explain = req.evidence and bool(far)
    if not explain and not req.reference:
        return None, runs.leaves
    phase("evidence")
    closed = runs.closed
    paths = _program_paths(runs)
    flat = flat_dynamic(runs.args, runs.kwargs, runs.prep.static_argnums, runs.prep.static_argnames)
    ev: dict[str, Any] = {"runs": [], "failures": []}
    if paths is None or len(flat) != len(closed.jaxpr.invars):
        ev["failures"].append("the outputs or inputs do not line up with the traced program's: no replay, retrace or reference")
        return Evidence(runs=(), failures=tuple(ev["failures"])), runs.leaves
    leaves = runs.leaves
    if explain:
        ev["trace_calls"] = list(runs.trace_calls)
        _attempt(ev, "the traced program replayed one equation at a time", lambda: _replay(runs, closed, flat, paths, far, ev))
        _attempt(ev, "a second trace of the same call", lambda: _retrace(runs, closed, paths, ev))
    if req.reference == F64 or explain:
        reference = _attempt(ev, "a float64 reference of the traced program on cpu:0", lambda: run_reference(closed, flat))
        if reference is not None:
            leaves = _with_reference(runs, leaves, reference, paths)
            ev["reference"] = "the traced program in float64 on cpu:0, from the same input values"
            ev["cancellations"] = _cancellations(reference, paths, far or {lf.path for lf in leaves})
            if reference.kept:
                kept = ", ".join(f"{k} ({why})" for k, why in sorted(reference.kept.items()))
                ev["failures"].append(f"the float64 reference ran these at the program's own precision: {kept}")
    sites = _sites(closed)
    if explain and sites["matmuls"] and (runs.device.platform != "cpu" or req.precision not in ("", "highest")):
        ev["matmuls"] = sites["matmuls"]
        ev["highest"] = _attempt(ev, "jit and eager with every matmul at precision highest", lambda: _highest(runs))
    if req.reference and req.reference != F64:
        _attempt(ev, f"jit on {req.reference}", lambda: _device(runs, sites, ev))
    if (explain or ev.get("device_leaves")) and sites["transcendentals"]:
        ev["transcendentals"] = sites["transcendentals"]
    return _evidence(ev), leaves


def _attempt(ev: dict[str, Any], what: str, call: Callable[[], Any]) -> Any:
    """Run one evidence run; a failure is said, never raised (the comparison itself stands)."""
    try:
        result = call()
    except Exception as exc:
        ev["failures"].append(f"{what} failed: {type(exc).__name__}: {str(exc)[:200]}")
        return None
    ev["runs"].append(what)
    return result


def _evidence(ev: dict[str, Any]) -> Evidence:
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in ev.items() if v is not None}
    return Evidence(**fields)


def _program_paths(runs: Runs) -> list[str] | None:
    """The output path of each of the traced program's outputs, or None when they do not line up."""
    paths = output_paths(runs.out)
    return paths if len(paths) == len(runs.closed.jaxpr.outvars) else None


def _host(value: Any) -> np.ndarray | None:
    return as_host(value)[0]


def _replay(runs: Runs, closed: Any, flat: list[Any], paths: list[str], far: set[str], ev: dict[str, Any]) -> None:
    with jax.default_device(runs.device):
        replayed = replay_outputs(closed, flat)
    jit, eager = _leaves(runs.out), _leaves(runs.eager)
    tol = {lf.path: (lf.rtol, lf.atol) for lf in runs.leaves}
    differs, detail = [], []
    for path, value in zip(paths, replayed, strict=True):
        if path not in far:
            continue
        p, j, e = _host(value), _host(jit.get(path)), _host(eager.get(path))
        if p is None or j is None or e is None or p.shape != j.shape or p.shape != e.shape:
            continue
        rtol, atol = tol[path]
        to_jit = compare_arrays(path, j, p.astype(j.dtype), rtol, atol)
        to_eager = compare_arrays(path, e, p.astype(e.dtype), rtol, atol)
        if to_jit.allclose and not to_eager.allclose:
            differs.append(path)
            detail.append(
                f"out{path}: the traced program replayed op by op is {_fmt(to_jit.max_abs)} from jit and "
                f"{_fmt(to_eager.max_abs)} from the eager Python run"
            )
    ev["replay_differs"], ev["replay_detail"] = differs, detail


def _retrace(runs: Runs, closed: Any, paths: list[str], ev: dict[str, Any]) -> None:
    jax.clear_caches()  # a cached trace would be the first one again
    with jax.default_device(runs.device):
        second = runs.jitted.trace(*runs.args, **runs.kwargs).jaxpr
    ev["retrace_sites"] = retrace_sites(closed, second, paths)


def _with_reference(runs: Runs, leaves: list[LeafComparison], ref: Reference, paths: list[str]) -> list[LeafComparison]:
    jit, eager = _leaves(runs.out), _leaves(runs.eager)
    by_path = dict(zip(paths, ref.outputs, strict=True))
    out = []
    for leaf in leaves:
        r = by_path.get(leaf.path)
        j, e = _host(jit.get(leaf.path)), _host(eager.get(leaf.path))
        if leaf.kind != "array" or r is None or j is None or e is None or not (r.shape == j.shape == e.shape):
            out.append(leaf)
            continue
        out.append(replace(leaf, reference=reference_check(j, e, r)))
    return out


def reference_check(jit: np.ndarray, eager: np.ndarray, ref: np.ndarray) -> ReferenceCheck:
    """How far `jit` and `eager` are from `ref` (RMSE and max abs over positions finite in all three)."""
    if jit.dtype.kind not in "fc" or ref.dtype.kind not in "fc":
        same = bool(np.array_equal(jit, ref)), bool(np.array_equal(eager, ref))
        return ReferenceCheck(0.0 if same[0] else None, 0.0 if same[1] else None, dtype=ref.dtype.name, preview=preview(ref))
    wide = np.complex128 if ref.dtype.kind == "c" or jit.dtype.kind == "c" else np.float64
    r, j, e = ref.astype(wide), jit.astype(wide), eager.astype(wide)
    finite = np.isfinite(r) & np.isfinite(j) & np.isfinite(e)
    if not finite.any():
        return ReferenceCheck(dtype=ref.dtype.name, preview=preview(ref))
    dj, de = np.abs(j - r)[finite], np.abs(e - r)[finite]
    return ReferenceCheck(
        jit_rmse=_finite(math.sqrt(float(np.mean(dj**2)))),
        eager_rmse=_finite(math.sqrt(float(np.mean(de**2)))),
        jit_max_abs=_finite(float(np.max(dj))),
        eager_max_abs=_finite(float(np.max(de))),
        reference_max=_finite(float(np.max(np.abs(r[finite])))),
        dtype=ref.dtype.name,
        preview=preview(ref),
    )


def _finite(value: float) -> float:
    return value if math.isfinite(value) else float(np.finfo(np.float64).max)


def _cancellations(ref: Reference, paths: list[str], wanted: set[str]) -> list[Site]:
    """The probed equations whose float64 result cancels, feeding the outputs in `wanted`: those
    that cancel in most of their elements and feed the fewest outputs first (the most specific)."""
    cache = jc.ChainCache()
    found = []
    for probe, (fraction, digits, result, terms) in zip(ref.probes, ref.stats, strict=True):
        dtype = str(getattr(probe.eqn.outvars[0].aval, "dtype", "float32"))
        if fraction < MIN_CANCELLED or digits < digits_kept(dtype):
            continue
        feeds = tuple(p for p, bits in zip(paths, ref.out_bits, strict=True) if bits & probe.bit)
        if not set(feeds) & wanted:
            continue
        detail = (
            f"{_fmt(result)} in float64 against terms of {_fmt(terms)}: {digits:.0f} digits cancel in "
            f"{fraction:.0%} of its elements, and {dtype} keeps {digits_kept(dtype)}"
        )
        site = Site(probe.path, probe.eqn.primitive.name, jc.eqn_chain(probe.eqn, cache)[1], detail, feeds)
        found.append((-float(fraction), len(feeds), -float(digits), site))
    found.sort(key=lambda t: t[:3])
    return [t[3] for t in found[:MAX_SITES]]


def _sites(closed: Any) -> dict[str, list[Site]]:
    """The matmuls and the transcendentals of the program (outer levels first), with their lines."""
    cache = jc.ChainCache()
    out: dict[str, list[Site]] = {"matmuls": [], "transcendentals": []}
    stack = [(closed.jaxpr, "")]
    while stack:
        jaxpr, prefix = stack.pop(0)
        for i, eqn in enumerate(jaxpr.eqns):
            name = eqn.primitive.name
            kind = "matmuls" if name in MATMULS else "transcendentals" if name in TRANSCENDENTALS else ""
            if kind and len(out[kind]) < MAX_SITES:
                out[kind].append(Site(f"{prefix}e{i}", name, jc.eqn_chain(eqn, cache)[1]))
            stack.extend((sub, f"{prefix}e{i}:{k}/") for k, (_, sub, _) in enumerate(jc.subjaxprs(eqn.params)))
    return out


def _highest(runs: Runs) -> list[LeafComparison]:
    with jc.matmul_precision("highest"), jax.default_device(runs.device):
        out = jax.block_until_ready(runs.jitted(*runs.args, **runs.kwargs))
        with jax.disable_jit():
            eager = jax.block_until_ready(runs.call_eager())
    return compare_outputs(out, eager, runs.request.rtol, runs.request.atol, runs.computes)


def _device(runs: Runs, sites: dict[str, list[Site]], ev: dict[str, Any]) -> None:
    other, info = pick_device(runs.request.reference, list_devices())
    ev["device"] = info.name
    placed = place(runs.prep, runs.args, runs.kwargs, other)
    with jc.matmul_precision(runs.request.precision), jax.default_device(other):
        theirs = jax.block_until_ready(runs.jitted(*placed[0], **placed[1]))
    leaves = compare_outputs(runs.out, theirs, runs.request.rtol, runs.request.atol, runs.computes)
    ev["device_leaves"] = leaves
    if sites["matmuls"] and any(not lf.allclose for lf in leaves):
        ev["matmuls"] = sites["matmuls"]
        with jc.matmul_precision("highest"):
            with jax.default_device(runs.device):
                ours = jax.block_until_ready(runs.jitted(*runs.args, **runs.kwargs))
            with jax.default_device(other):
                theirs = jax.block_until_ready(runs.jitted(*placed[0], **placed[1]))
        ev["device_highest"] = compare_outputs(ours, theirs, runs.request.rtol, runs.request.atol, runs.computes)


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return "0" if value == 0 else f"{value:.2g}"
