"""Pure rules and text for run-vs-eager: default tolerances, the verdict, the terminal table.

Kept out of the worker so the CLI, the app and tests share one wording, and so the verdict of a
saved RunResult can be recomputed without JAX.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from jaxscope.schema.graph import SourceLoc
from jaxscope.schema.run import Cause, DeviceInfo, EqnDivergence, LeafComparison, RunResult

# (rtol, atol) for jit vs eager. Looser than bitwise on purpose: XLA reorders float arithmetic, so a
# few ULP (and more where a result cancels towards 0) are expected; rtol is ~10-100 ULP of the type.
_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-12, 1e-14),
    "complex128": (1e-12, 1e-14),
    "float32": (1e-5, 1e-6),
    "complex64": (1e-5, 1e-6),
    "float16": (1e-2, 1e-3),
    "bfloat16": (5e-2, 1e-2),
}

SMALL_DIFF_EXPLANATION = (
    "XLA fuses and reorders floating-point arithmetic under jit (FMA contraction of a*b+c, reassociated "
    "reductions, algebraic simplification such as log(exp(x)) -> x), while eager runs one rounded "
    "operation at a time; differences of a few ULP are expected (more where a result cancels towards 0)."
)
LARGE_DIFF_EXPLANATION = (
    "These differences are larger than reordering usually explains: look for ill-conditioned arithmetic "
    "(cancellation, long sums of large values), reduced matmul precision on GPU/TPU "
    "(jax.default_matmul_precision), or code that behaves differently when traced (globals read at trace "
    "time, Python side effects, PRNG keys)."
)


def default_tolerances(dtype: str) -> tuple[float, float]:
    """(rtol, atol) for comparing jit with eager outputs of `dtype`; exact for ints, bools, keys."""
    if dtype in _TOLERANCES:
        return _TOLERANCES[dtype]
    if dtype.startswith("float8") or dtype.startswith("float4") or dtype.startswith("float6"):
        return (0.25, 0.1)
    return (0.0, 0.0)


def verdict(leaves: Sequence[LeafComparison], causes: Sequence[Cause] = ()) -> tuple[bool, str, str]:
    """(ok, one-line verdict, explanation) for compared output leaves and the causes judged for
    them (analysis.runs.causes): a difference explained as noise or precision is accepted."""
    arrays = [lf for lf in leaves if lf.kind == "array"]
    far = [lf for lf in leaves if not lf.allclose]
    nan = [lf for lf in leaves if lf.has_nan]
    inf = [lf for lf in leaves if lf.nonfinite and not lf.has_nan]
    near = [lf for lf in arrays if lf.allclose and not lf.exact]
    accepted = {p for c in causes if c.explained and c.between == "jit and eager" for p in c.outputs}
    real = [lf for lf in far if lf.path not in accepted]
    across = [c for c in causes if c.between != "jit and eager" and not c.explained]
    ok = not real and not nan and not across
    parts: list[str] = []
    if real:
        where = ", ".join(_name(lf) for lf in real[:4]) + (" ..." if len(real) > 4 else "")
        parts.append(f"jit and eager DIFFER beyond tolerance in {len(real)} of {len(leaves)} outputs: {where}")
    if len(real) < len(far):
        kinds = sorted({c.kind for c in causes if c.explained and c.between == "jit and eager"})
        parts.append(f"{len(far) - len(real)} of {len(leaves)} outputs differ beyond tolerance, explained as {' and '.join(kinds)}")
    if not far and near:
        ulps = [lf.max_ulp for lf in near if lf.max_ulp is not None]
        most = f", up to {max(ulps)} ULP" if ulps else ""
        parts.append(f"jit and eager agree within tolerance ({len(near)} of {len(arrays)} arrays differ slightly{most})")
    elif not far and arrays:
        every, plural = "all " if len(arrays) > 1 else "", "s" if len(arrays) != 1 else ""
        parts.append(f"jit and eager agree exactly on {every}{len(arrays)} output array{plural}")
    elif not far:
        parts.append("no array outputs to compare")
    for cause in across:
        parts.append(f"{cause.between} differ: {cause.kind}")
    if nan:
        counts = ", ".join(f"{_name(lf)} (jit {lf.jit_nan}, eager {lf.eager_nan})" for lf in nan[:4])
        parts.append(f"NaN in outputs: {counts}")
    if inf:
        parts.append("Inf in outputs: " + ", ".join(_name(lf) for lf in inf[:4]))
    explanation = ""
    if real and not causes and any(lf.nonfinite_mismatch == 0 for lf in real):
        explanation = LARGE_DIFF_EXPLANATION
    elif near and not far:
        explanation = SMALL_DIFF_EXPLANATION
    return ok, "; ".join(parts), explanation


def _name(leaf: LeafComparison) -> str:
    return "out" + leaf.path


def fmt_float(value: float | None) -> str:
    """Short scientific text for errors and tolerances; '-' when absent, '0' when exactly 0."""
    if value is None:
        return "-"
    if value == 0:
        return "0"
    return f"{value:.3g}"


def fmt_seconds(seconds: float) -> str:
    """Seconds as a readable duration (µs, ms or s)."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def device_line(dev: DeviceInfo) -> str:
    """`cpu:0 (cpu)`, with memory where the backend reports it."""
    text = f"{dev.name} ({dev.kind or dev.platform})"
    if dev.bytes_limit:
        text += f", {dev.bytes_limit / 2**30:.1f} GiB"
    return text


def nonfinite_text(nan: int, pos: int, neg: int) -> str:
    """``2 NaN 1 +Inf``, or ``-`` when all counts are zero."""
    bits = [f"{n} {what}" for n, what in ((nan, "NaN"), (pos, "+Inf"), (neg, "-Inf")) if n]
    return " ".join(bits) or "-"


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def format_run(result: RunResult) -> str:
    """The comparison as plain text: inputs, one row per output leaf, value previews, times, verdict."""
    lines = _call_lines(result)
    lines += _output_lines(result)
    lines += _time_lines(result)
    lines += reference_lines(result)
    lines += device_lines(result)
    lines += ["", ("OK: " if result.ok else "FAIL: ") + result.verdict]
    if result.explanation:
        lines.append(result.explanation)
    lines += cause_lines(result)
    if result.first_nan is not None:
        lines += ["", "first NaN/Inf: " + nan_line(result)]
    elif result.nan_searched:
        lines += ["", "first NaN/Inf: no equation produced NaN/Inf when evaluated one by one"]
    if result.divergence:
        lines += _divergence_lines(result)
    for w in result.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def _call_lines(result: RunResult) -> list[str]:
    """What ran where: the call, its device and the others, and its inputs."""
    req = result.request
    call = f"{req.function.display()}({req.args})"
    lines = [f"run {call}"]
    if result.device is not None:
        lines.append(f"device: {device_line(result.device)}")
    others = [d for d in result.devices if result.device is None or d.name != result.device.name]
    if others:
        lines.append("other devices: " + ", ".join(device_line(d) for d in others))
    made = f"; {result.inputs_made}" if result.inputs_made else ""
    precision = f"; every matmul at precision {req.precision}" if req.precision else ""
    lines.append(f"inputs ({result.input_source or f'seed {req.seed}'}{made}{precision}):")
    rows = []
    for leaf in result.inputs:
        if leaf.aval == "static":
            rows.append([f"  {leaf.path}", "static", "= " + "".join(leaf.preview)])
        else:
            more = ", ..." if leaf.size > len(leaf.preview) else ""
            rows.append([f"  {leaf.path}", leaf.aval, f"[{', '.join(leaf.preview)}{more}]"])
    lines += _table(rows) if rows else ["  (none)"]
    lines.append("")
    return lines


def _output_lines(result: RunResult) -> list[str]:
    """One row per output leaf (its differences, non-finite counts, allclose), notes, values."""
    head = ["output", "shape", "dtype", "max abs", "max rel", "ULP", "diff", "jit NaN/Inf", "eager NaN/Inf", "allclose"]
    rows = [head]
    for lf in result.leaves:
        if lf.kind != "array":
            rows.append([_name(lf), "-", lf.dtype or "-", "-", "-", "-", "-", "-", "-", "yes" if lf.allclose else "NO"])
            continue
        tol = f"(rtol {fmt_float(lf.rtol)}, atol {fmt_float(lf.atol)})"
        rows.append(
            [
                _name(lf),
                str(list(lf.shape)),
                lf.dtype,
                fmt_float(lf.max_abs),
                fmt_float(lf.max_rel),
                "-" if lf.max_ulp is None else str(lf.max_ulp),
                f"{lf.n_diff}/{lf.size}",
                nonfinite_text(lf.jit_nan, lf.jit_posinf, lf.jit_neginf),
                nonfinite_text(lf.eager_nan, lf.eager_posinf, lf.eager_neginf),
                ("yes " if lf.allclose else "NO ") + tol,
            ]
        )
    lines = _table(rows)
    notes = [f"  {_name(lf)}: {lf.note}" for lf in result.leaves if lf.note]
    if notes:
        lines += ["", "notes:", *notes]
    previews = [lf for lf in result.leaves if lf.kind == "array" and (lf.jit_preview or lf.eager_preview)]
    if previews:
        lines += ["", "values (first few, flattened):"]
        for lf in previews:
            lines.append(f"  {_name(lf)}  jit:   [{', '.join(lf.jit_preview)}]")
            lines.append(f"  {' ' * len(_name(lf))}  eager: [{', '.join(lf.eager_preview)}]")
    lines.append("")
    return lines


def _time_lines(result: RunResult) -> list[str]:
    """The jitted run's phases and steady time, eager's, and the speed-up."""
    steady = f"steady {fmt_seconds(result.steady_s)} (median of {len(result.steady_runs)})" if result.steady_runs else "steady -"
    lines = [
        f"jit:   trace {fmt_seconds(result.trace_s)}, lower {fmt_seconds(result.lower_s)}, "
        f"compile {fmt_seconds(result.compile_s)}, first call {fmt_seconds(result.first_call_s)}, {steady}",
        f"eager: steady {fmt_seconds(result.eager_s)} (first run {fmt_seconds(result.eager_first_s)}, compiling each primitive)",
    ]
    if result.eager_s and result.steady_s:
        lines.append(f"speed-up of jit over eager (steady against steady): {result.eager_s / result.steady_s:.1f}x")
    return lines


def _divergence_lines(result: RunResult) -> list[str]:
    """The per-equation comparison, most divergent first, and the first equation to differ."""
    lines = ["", "per equation (jit vs eager, intermediates materialised), most divergent first:"]
    rows = [["equation", "primitive", "source", "aval", "max abs", "max rel", "evidence"]]
    for d in diverging(result)[:12]:
        rows.append([d.path, d.primitive, short_loc(d.source), d.aval, fmt_float(d.max_abs), fmt_float(d.max_rel), d.note[:70]])
    if len(rows) > 1:
        lines += _table(rows)
    else:
        lines.append(
            "  every intermediate agrees exactly"
            + (
                "; the output difference comes from XLA fusing across equations (e.g. FMA contraction),"
                " which materialising the intermediates prevents"
                if any(lf.n_diff for lf in result.leaves)
                else ""
            )
        )
    first = next((d for d in result.divergence if d.max_abs > 0 or d.nonfinite_mismatch), None)
    if first is not None:
        lines.append(f"first to differ: {first.path} {first.primitive}" + (f" ({short_loc(first.source)})" if first.source else ""))
    return lines


def reference_lines(result: RunResult) -> list[str]:
    """The outputs against the float64 reference, where one ran: which of jit and eager is nearer."""
    checked = [lf for lf in result.leaves if lf.reference is not None]
    if not checked:
        return []
    ev = result.evidence
    rows = [["output", "float64 max", "jit RMSE", "eager RMSE", "nearer"]]
    for lf in checked:
        ref = lf.reference
        assert ref is not None
        j, e = ref.jit_rmse, ref.eager_rmse
        nearer = "-" if j is None or e is None or j == e else "jit" if j < e else "eager"
        rows.append([_name(lf), fmt_float(ref.reference_max), fmt_float(j), fmt_float(e), nearer])
    return ["", f"against the reference ({ev.reference if ev is not None else 'float64'}):", *_table(rows)]


def device_lines(result: RunResult) -> list[str]:
    """Jit on the run's device against jit on the reference device, output by output."""
    ev = result.evidence
    if ev is None or not ev.device_leaves:
        return []
    here = result.device.name if result.device is not None else "the run's device"
    rows = [["output", "max abs", "max rel", "ULP", "allclose"]]
    for lf in ev.device_leaves:
        if lf.kind == "array":
            ulp = "-" if lf.max_ulp is None else str(lf.max_ulp)
            rows.append([_name(lf), fmt_float(lf.max_abs), fmt_float(lf.max_rel), ulp, "yes" if lf.allclose else "NO"])
    far = sum(1 for lf in ev.device_leaves if not lf.allclose)
    head = f"jit on {here} against jit on {ev.device} (the same host-made inputs): "
    head += f"{far} of {len(ev.device_leaves)} outputs differ beyond tolerance" if far else "every output within tolerance"
    return ["", head, *_table(rows)]


def cause_lines(result: RunResult) -> list[str]:
    """Each cause of a difference with its evidence and fix, and what ran to find them."""
    lines: list[str] = []
    for cause in result.causes:
        mark = "explained" if cause.explained else "NOT explained"
        between = "" if cause.between == "jit and eager" else f" (between {cause.between})"
        lines += ["", f"cause: {cause.kind}{between}, {mark}: {cause.summary}"]
        lines += [f"  {line}" for line in cause.evidence]
        if cause.fix:
            lines.append(f"  fix: {cause.fix}")
    ev = result.evidence
    if ev is not None and (ev.runs or ev.failures):
        lines += ["", "evidence runs: " + ("; ".join(ev.runs) or "none")]
        lines += [f"  not available: {f}" for f in ev.failures]
    return lines


def short_loc(source: SourceLoc | None) -> str:
    """`file.py:12`: the line with its file (two files' "line 11" were told apart by nothing)."""
    return f"{os.path.basename(source.file)}:{source.line}" if source is not None else "-"


def diverging(result: RunResult) -> list[EqnDivergence]:
    """Equations whose jit and eager outputs differ: those the evidence names (a cancellation, a
    value read at trace time: where a difference starts) first, then the largest relative error."""
    found = [d for d in result.divergence if d.max_abs > 0 or d.nonfinite_mismatch or d.note]
    return sorted(found, key=lambda d: (not d.note, -d.nonfinite_mismatch, -d.max_rel, -d.max_abs, d.path))


def nan_line(result: RunResult) -> str:
    """Where the first NaN/Inf came from, in one line."""
    origin = result.first_nan
    if origin is None:
        return ""
    where = f" at {origin.source.file}:{origin.source.line}" if origin.source else ""
    prim = f" {origin.primitive}" if origin.primitive else ""
    text = f"{origin.path}{prim}{where}"
    if origin.detail:
        text += f": {origin.detail}"
    return text
