"""The cause of every difference of a run, judged from its evidence (pure: no jax).

An output beyond its tolerance is judged in this order, the first that holds naming its cause:

1. **trace-time**: a second trace of the call changed an equation that feeds it (a value read at
   trace time), or jit agrees with the traced program replayed op by op while the eager Python
   run does not (the function computes something else when it runs). Real: the run fails.
2. **precision**: with every matmul at `highest` the output is within tolerance. Explained.
3. **noise**: jit is no further from the float64 reference than eager is, with PyTorch's criterion
   (`torch._dynamo.utils.same` with `fp64_ref`: RMSE against float64 at most `multiplier` times
   eager's, plus a tenth of the tolerance); named with the equation that cancels where one feeds
   the output. Explained.
4. **unexplained**: anything else (jit further from float64 than eager, or no evidence ran). Real.

Against a reference device the order is precision, device arithmetic (the program computes
transcendentals, whose device implementations round differently: named, not accepted), then
unexplained.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace

from jaxscope.schema.graph import SourceLoc
from jaxscope.schema.run import Cause, Evidence, LeafComparison, Site

NOISE_MULTIPLIER = 2.0  # torch._dynamo.utils.same: 2.0, 3.0 for bfloat16, 10.0 for fewer than 1000 elements
LOW_PRECISION_MULTIPLIER = 3.0
SMALL_MULTIPLIER = 10.0
SMALL = 1000

TRACE_TIME_FIX = (
    "pass the value as an argument (randomness as a jax.random key), or keep Python state out of the "
    "function: take it in and return the new state"
)
PRECISION_FIX = (
    "if the difference matters, pass precision=jax.lax.Precision.HIGHEST to these operations, or run the "
    "step under jax.default_matmul_precision('highest')"
)
NOISE_FIX = (
    "nothing to fix in jit: both runs are rounding noise of a value that is ~0; if the noise matters, "
    "compute it where it does not cancel (e.g. in float64, or leave the parameter out of the update)"
)


def judge(leaves: Sequence[LeafComparison], evidence: Evidence | None, strict: bool = False) -> list[Cause]:
    """One Cause per kind of difference among the outputs beyond tolerance, real ones first.

    `strict`: the user gave the tolerances (--rtol/--atol), asking for agreement to them: causes
    are named, and none is accepted."""
    ev = evidence or Evidence()
    far = [lf for lf in leaves if lf.kind == "array" and not lf.allclose and lf.nonfinite_mismatch == 0]
    groups: dict[str, list[LeafComparison]] = {}
    for leaf in far:
        groups.setdefault(_kind(leaf, ev), []).append(leaf)
    causes = [_cause(kind, group, ev) for kind, group in groups.items()]
    causes += _device_causes(ev)
    if strict:
        note = "your --rtol/--atol ask for agreement to that tolerance: a named cause does not excuse it"
        causes = [replace(c, explained=False, evidence=(*c.evidence, note)) if c.explained else c for c in causes]
    return sorted(causes, key=lambda c: (c.explained, c.kind))


def _kind(leaf: LeafComparison, ev: Evidence) -> str:
    if leaf.path in ev.replay_differs or any(leaf.path in s.feeds for s in ev.retrace_sites):
        return "trace-time"
    highest = next((h for h in ev.highest if h.path == leaf.path), None)
    if highest is not None and highest.allclose:
        return "precision"
    if noise_holds(leaf):
        return "noise"
    return "unexplained"


def multiplier(leaf: LeafComparison) -> float:
    """How many times eager's distance to float64 jit may be (PyTorch's accuracy check's rule)."""
    if leaf.size < SMALL:
        return SMALL_MULTIPLIER
    low = (leaf.compute or leaf.dtype) in ("bfloat16", "float16") or leaf.dtype.startswith("float8")
    return LOW_PRECISION_MULTIPLIER if low else NOISE_MULTIPLIER


def noise_holds(leaf: LeafComparison) -> bool:
    """Whether jit is no less accurate than eager against the float64 reference (within the rule)."""
    ref = leaf.reference
    if ref is None or ref.jit_rmse is None or ref.eager_rmse is None:
        return False
    return ref.jit_rmse <= multiplier(leaf) * ref.eager_rmse + leaf.atol / 10.0


def _cause(kind: str, group: list[LeafComparison], ev: Evidence) -> Cause:
    outputs = tuple(lf.path for lf in group)
    names = _names(outputs)
    if kind == "trace-time":
        sites = tuple(s for s in ev.retrace_sites if set(s.feeds) & set(outputs))
        lines = [f"{where(s)}: {s.detail}" for s in sites]
        lines += [f"{_loc(s.source)}: {s.detail}" if s.source is not None else s.detail for s in ev.trace_calls]
        lines += [d for d in ev.replay_detail if any(d.startswith(f"out{p}:") for p in outputs)]
        if any(p in ev.replay_differs for p in outputs):
            lines.append("jit runs the program as traced; the Python function run eagerly computes something else")
        at = f" at {where(sites[0])}" if sites else ""
        return Cause(kind, False, outputs, f"{names}: a value read at trace time{at}", tuple(lines), sites, TRACE_TIME_FIX)
    if kind == "precision":
        lines = []
        for lf in group:
            high = next(h for h in ev.highest if h.path == lf.path)
            lines.append(f"out{lf.path}: max rel {fmt(lf.max_rel)} at the default precision, {fmt(high.max_rel)} at highest")
        sites = ev.matmuls
        return Cause(kind, True, outputs, f"{names}: matmul precision (gone at precision highest)", tuple(lines), sites, PRECISION_FIX)
    if kind == "noise":
        sites = tuple(s for s in ev.cancellations if set(s.feeds) & set(outputs))[:3]
        lines = [_reference_line(lf) for lf in group]
        lines += [f"cancellation at {where(s)}: {s.detail}" for s in sites]
        summary = f"{names}: rounding noise (jit is as near the float64 result as eager)"
        if sites:
            summary = f"{names}: rounding noise of a cancellation at {where(sites[0])}"
        return Cause(kind, True, outputs, summary, tuple(lines), sites, NOISE_FIX)
    lines = [_reference_line(lf) for lf in group if lf.reference is not None]
    if not ev.runs:
        lines.append("no evidence ran (run with evidence on, or with --reference f64, to name a cause)")
    elif not lines:
        lines.append("the float64 reference could not be compared for these outputs")
    fix = "look at the equations where jit and eager part (--per-equation)"
    return Cause("unexplained", False, outputs, f"{names}: differ beyond tolerance, no cause found", tuple(lines), (), fix)


def _device_causes(ev: Evidence) -> list[Cause]:
    far = [lf for lf in ev.device_leaves if lf.kind == "array" and not lf.allclose]
    if not far:
        return []
    between = f"the run's device and {ev.device}"
    precision = [lf for lf in far if any(h.path == lf.path and h.allclose for h in ev.device_highest)]
    rest = [lf for lf in far if lf not in precision]
    causes = []
    if precision:
        names = _names(tuple(lf.path for lf in precision))
        lines = tuple(f"out{lf.path}: max rel {fmt(lf.max_rel)} at the default precision, within tolerance at highest" for lf in precision)
        causes.append(
            Cause(
                "precision",
                True,
                tuple(lf.path for lf in precision),
                f"{names}: matmul precision",
                lines,
                ev.matmuls,
                PRECISION_FIX,
                between,
            )
        )
    if rest and ev.transcendentals:
        names = _names(tuple(lf.path for lf in rest))
        lines = tuple(f"out{lf.path}: max rel {fmt(lf.max_rel)}, {lf.max_ulp or '-'} ULP" for lf in rest)
        lines += tuple(f"{where(s)}: {s.primitive}" for s in ev.transcendentals)
        summary = f"{names}: device arithmetic (transcendentals round differently on each device)"
        fix = "compare against a float64 reference (--reference f64) to see which device is nearer the truth"
        causes.append(Cause("device", False, tuple(lf.path for lf in rest), summary, lines, ev.transcendentals, fix, between))
    elif rest:
        names = _names(tuple(lf.path for lf in rest))
        lines = tuple(f"out{lf.path}: max rel {fmt(lf.max_rel)}" for lf in rest)
        causes.append(
            Cause("unexplained", False, tuple(lf.path for lf in rest), f"{names}: differ between devices", lines, (), "", between)
        )
    return causes


def _reference_line(leaf: LeafComparison) -> str:
    ref = leaf.reference
    if ref is None:
        return f"out{leaf.path}: no float64 reference"
    nearer = "jit" if (ref.jit_rmse or 0) < (ref.eager_rmse or 0) else "eager" if (ref.eager_rmse or 0) < (ref.jit_rmse or 0) else "neither"
    return (
        f"out{leaf.path}: float64 values up to {fmt(ref.reference_max)}; RMSE from them: jit {fmt(ref.jit_rmse)}, "
        f"eager {fmt(ref.eager_rmse)} ({nearer} nearer; jit may be {multiplier(leaf):g}x eager's)"
    )


def _names(outputs: tuple[str, ...]) -> str:
    shown = ", ".join(f"out{p}" for p in outputs[:3])
    return shown + (f" and {len(outputs) - 3} more" if len(outputs) > 3 else "")


def where(site: Site) -> str:
    """`e12 reduce_sum (model.py:42)`: an equation as evidence names it."""
    loc = f" ({_loc(site.source)})" if site.source is not None else ""
    return f"{site.path} {site.primitive}{loc}".replace("  ", " ").strip()


def _loc(source: SourceLoc) -> str:
    return f"{os.path.basename(source.file)}:{source.line}"


def fmt(value: float | None) -> str:
    """Short scientific text; '-' when absent, '0' when exactly 0."""
    if value is None:
        return "-"
    return "0" if value == 0 else f"{value:.3g}"
