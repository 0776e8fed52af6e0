"""Compare jitted with eager outputs, leaf by leaf, on the host with NumPy.

Errors are measured only where both values are finite (a NaN would poison every maximum and is
not valid JSON); NaN/Inf are counted separately, and a position that is NaN/Inf in one output but
not the same way in the other is a mismatch. ULP distance maps each float's bits onto a line of
ordered integers (sign-magnitude to two's complement), so -0 and +0 are 0 ULP apart.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any, TypedDict

import jax
import jax.numpy as jnp
import numpy as np

from jaxscope.analysis.runs.verdicts import default_tolerances
from jaxscope.schema.run import LeafComparison
from jaxscope.worker import jax_compat as jc

PREVIEW = 6
_SIGNED: dict[int, type[np.signedinteger[Any]]] = {2: np.int16, 4: np.int32, 8: np.int64}


def output_computes(jaxpr: Any) -> list[str]:
    """Per output of the open `jaxpr`, the float dtype of least precision that any equation on its
    way computes in ("" where none is lower than float32). An f32 output of bf16 arithmetic
    carries bf16's error and is compared with bf16's tolerance; an f32 output beside it that no
    bf16 reaches keeps float32's."""
    worst: dict[int, str] = {}
    for eqn in jaxpr.eqns:
        own = _lower("", *(_float_name(v) for v in eqn.outvars))
        for sub in (s for _, s, _ in jc.subjaxprs(eqn.params)):
            own = _lower(own, *(_float_name(v) for e in jc.all_equations(sub) for v in e.outvars))
        own = _lower(own, *(worst.get(id(v), "") for v in eqn.invars if not isinstance(v, jc.Literal)))
        for var in eqn.outvars:
            worst[id(var)] = own
    return [("" if isinstance(v, jc.Literal) else worst.get(id(v), "")) for v in jaxpr.outvars]


def _float_name(var: Any) -> str:
    name = getattr(getattr(getattr(var, "aval", None), "dtype", None), "name", "")
    return name if name.startswith(("float", "bfloat")) else ""


def _lower(*names: str) -> str:
    """The least precise of float dtype names ("" counts as float32 or better)."""
    worst, worst_rtol = "", default_tolerances("float32")[0]
    for name in names:
        if name and default_tolerances(name)[0] > worst_rtol:
            worst, worst_rtol = name, default_tolerances(name)[0]
    return worst


def output_paths(out: Any) -> list[str]:
    """The pytree paths of `out`'s array leaves, in the order of the traced program's outputs."""
    return [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(out)[0]]


def compare_outputs(
    jit_out: Any, eager_out: Any, rtol: float | None, atol: float | None, computes: dict[str, str] | None = None
) -> list[LeafComparison]:
    """One LeafComparison per output leaf, matched by pytree path (None leaves and Python numbers
    included); a float output more precise than its `computes[path]` (`output_computes`) takes
    that dtype's tolerance."""
    a = _leaves(jit_out)
    b = _leaves(eager_out)
    out: list[LeafComparison] = []
    for path in dict.fromkeys([*a, *b]):
        if path not in b:
            out.append(LeafComparison(path, kind="missing", allclose=False, note="only in the jitted output (the pytrees differ)"))
        elif path not in a:
            out.append(LeafComparison(path, kind="missing", allclose=False, note="only in the eager output (the pytrees differ)"))
        else:
            out.append(compare_leaf(path, a[path], b[path], rtol, atol, (computes or {}).get(path, "")))
    return out


def _leaves(tree: Any) -> dict[str, Any]:
    flat, _ = jax.tree_util.tree_flatten_with_path(tree, is_leaf=lambda x: x is None)
    return {jax.tree_util.keystr(p): v for p, v in flat}


def as_host(value: Any) -> tuple[np.ndarray | None, str]:
    """(NumPy array, note) for an array-like leaf; (None, why) for anything else."""
    if isinstance(value, jax.Array):
        if jnp.issubdtype(value.dtype, jax.dtypes.prng_key):
            return np.asarray(jax.random.key_data(value)), "PRNG key: its key data is compared"
        return np.asarray(value), ""
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value), ""
    if isinstance(value, (bool, int, float, complex)):
        return np.asarray(value), f"a Python {type(value).__name__}"
    return None, ""


def compare_leaf(path: str, jit_value: Any, eager_value: Any, rtol: float | None, atol: float | None, compute: str = "") -> LeafComparison:
    """Compare one pair of leaves; non-arrays get a note instead of numbers."""
    if jit_value is None and eager_value is None:
        return LeafComparison(path, kind="none", note="None (no array to compare)")
    a, note_a = as_host(jit_value)
    b, note_b = as_host(eager_value)
    if a is None or b is None:
        same = _safe_equal(jit_value, eager_value)
        what = f"not an array: jit gave {type(jit_value).__name__}, eager gave {type(eager_value).__name__}"
        return LeafComparison(path, kind="other", allclose=same, note=what + ("" if same else "; they differ"))
    notes = [n for n in (note_a and f"jit gave {note_a}", note_b and f"eager gave {note_b}") if n]
    if a.dtype != b.dtype and note_b.startswith("a Python"):
        notes[-1] += f" (compared as {a.dtype.name})"
        b = b.astype(a.dtype)
    elif a.dtype != b.dtype:
        notes.append(f"dtypes differ: jit {a.dtype.name}, eager {b.dtype.name}; compared in {a.dtype.name}")
        try:
            b = b.astype(a.dtype)
        except (TypeError, ValueError):
            return LeafComparison(path, shape=a.shape, dtype=a.dtype.name, size=int(a.size), allclose=False, note="; ".join(notes))
    d_rtol, d_atol = default_tolerances(a.dtype.name)
    lowered = bool(compute) and a.dtype.kind in "fc" and default_tolerances(compute)[0] > d_rtol
    if lowered and rtol is None:
        d_rtol, d_atol = default_tolerances(compute)
        notes.append(f"tolerance of {compute}: this output is computed through {compute}")
    leaf = compare_arrays(path, a, b, d_rtol if rtol is None else rtol, d_atol if atol is None else atol, "; ".join(notes))
    return replace(leaf, compute=compute if lowered else "")


def _safe_equal(x: Any, y: Any) -> bool:
    try:
        return bool(x == y)
    except Exception:
        return False


class _Common(TypedDict):
    """The LeafComparison fields every outcome of `compare_arrays` shares."""

    path: str
    shape: tuple[int, ...]
    dtype: str
    size: int
    rtol: float
    atol: float


def compare_arrays(path: str, a: np.ndarray, b: np.ndarray, rtol: float, atol: float, note: str = "") -> LeafComparison:
    """Errors, ULP, NaN/Inf counts and the allclose verdict for two arrays of one dtype."""
    base: _Common = {
        "path": path,
        "shape": tuple(int(s) for s in a.shape),
        "dtype": a.dtype.name,
        "size": int(a.size),
        "rtol": rtol,
        "atol": atol,
    }
    if a.shape != b.shape:
        shape_note = f"shapes differ: jit {a.shape}, eager {b.shape}"
        return LeafComparison(**base, allclose=False, note="; ".join(filter(None, [note, shape_note])))
    inexact = bool(jnp.issubdtype(a.dtype, jnp.inexact))
    complex_ = bool(jnp.issubdtype(a.dtype, jnp.complexfloating))
    wide = np.complex128 if complex_ else np.float64
    x, y = a.astype(wide), b.astype(wide)
    counts_a, counts_b = _nonfinite_counts(x), _nonfinite_counts(y)
    finite = np.isfinite(x) & np.isfinite(y)
    same_nonfinite = (np.isnan(x) & np.isnan(y)) | ((x == y) & ~np.isfinite(x))
    mismatch = int(np.count_nonzero(~finite & ~same_nonfinite))
    diff_mask = (x != y) & ~(np.isnan(x) & np.isnan(y))
    err = np.where(finite, np.abs(x - y), 0.0)
    max_abs = max_rel = None
    worst: tuple[int, ...] = ()
    ok_close = True
    if finite.any():
        tiny = float(jnp.finfo(a.dtype).tiny) if inexact else 1.0
        rel = err / np.maximum(np.abs(np.where(finite, y, 1.0)), tiny)
        max_abs, max_rel = _clamp(float(np.max(err))), _clamp(float(np.max(rel)))
        if max_abs:
            worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(err)), a.shape))
        ok_close = bool(np.all(err[finite] <= atol + rtol * np.abs(y[finite])))
    ulp = max_ulp(a, b, finite) if inexact and not complex_ else None
    return LeafComparison(
        **base,
        max_abs=max_abs,
        max_rel=max_rel,
        max_ulp=ulp,
        n_diff=int(np.count_nonzero(diff_mask)),
        worst_index=worst,
        nonfinite_mismatch=mismatch,
        allclose=ok_close and mismatch == 0,
        jit_nan=counts_a[0],
        jit_posinf=counts_a[1],
        jit_neginf=counts_a[2],
        eager_nan=counts_b[0],
        eager_posinf=counts_b[1],
        eager_neginf=counts_b[2],
        jit_preview=preview(a),
        eager_preview=preview(b),
        note=note,
    )


def _clamp(value: float) -> float:
    return value if np.isfinite(value) else sys.float_info.max


def _nonfinite_counts(x: np.ndarray) -> tuple[int, int, int]:
    if not np.iscomplexobj(x) and not np.issubdtype(x.dtype, np.floating):
        return 0, 0, 0
    return int(np.count_nonzero(np.isnan(x))), int(np.count_nonzero(np.isposinf(x.real))), int(np.count_nonzero(np.isneginf(x.real)))


def ordered_bits(x: np.ndarray) -> np.ndarray:
    """Float bits as int64 on one ordered line: adjacent floats differ by 1, -0 == +0 == 0."""
    signed = _SIGNED[x.dtype.itemsize]
    i = np.ascontiguousarray(x).view(signed).astype(np.int64)
    magnitude = i & np.int64(np.iinfo(signed).max)
    return np.where(i < 0, -magnitude, magnitude)


def max_ulp(a: np.ndarray, b: np.ndarray, where: np.ndarray | None = None) -> int | None:
    """The largest ULP distance between same-dtype floats `a` and `b` (at `where`); None if nowhere."""
    if a.dtype.itemsize not in _SIGNED:
        return None
    oa, ob = ordered_bits(a), ordered_bits(b)
    if where is not None:
        oa, ob = oa[where], ob[where]
    if oa.size == 0:
        return None
    ua, ub = oa.view(np.uint64), ob.view(np.uint64)
    dist = np.where(oa >= ob, ua - ub, ub - ua)  # wraps modulo 2**64: exact for any two int64s
    return int(dist.max())


def preview(x: np.ndarray, n: int = PREVIEW) -> tuple[str, ...]:
    """The first `n` values (flattened) as short strings."""
    flat = np.ravel(x)[:n]
    if x.dtype == np.bool_ or np.issubdtype(x.dtype, np.integer):
        return tuple(str(v) for v in flat.tolist())
    if np.iscomplexobj(flat):
        return tuple(f"{complex(v):.4g}" for v in flat.tolist())
    return tuple(f"{float(v):.6g}" for v in flat.astype(np.float64).tolist())
