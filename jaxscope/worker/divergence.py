"""Where jit and eager part ways: every top-level intermediate, computed both ways, compared.

The jaxpr is re-emitted with every equation's outputs as program outputs and run once under
`jax.jit` and once under `jax.disable_jit()`. Materialising the intermediates keeps XLA from
fusing across them, so the error measured here is a slightly tamer version of the real one; it
still shows where the difference starts and how it grows downstream.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import ClosedJaxpr, jaxpr_as_fun

from jaxscope.core.run_model import EqnDivergence
from jaxscope.worker import jax_compat as jc
from jaxscope.worker.compare import preview

MAX_EQNS = 5000  # one output per equation: beyond this the program doubles in size for little insight


def per_equation(closed: Any, flat_args: list[Any]) -> tuple[EqnDivergence, ...]:
    """One entry per top-level equation with floating outputs, in program order (on the default device)."""
    jaxpr = closed.jaxpr
    picked: list[tuple[int, Any]] = []
    for i, eqn in enumerate(jaxpr.eqns[:MAX_EQNS]):
        for var in eqn.outvars:
            if not isinstance(var, jc.DropVar) and jnp.issubdtype(getattr(var.aval, "dtype", np.int32), jnp.inexact):
                picked.append((i, var))
                break
    if not picked:
        return ()
    wide = ClosedJaxpr(jc.with_outputs(jaxpr, [v for _, v in picked], [f"e{i}" for i, _ in picked]), closed.consts)
    fn = jaxpr_as_fun(wide)
    jitted = jax.block_until_ready(jax.jit(fn)(*flat_args))
    with jax.disable_jit():
        eager = jax.block_until_ready(fn(*flat_args))
    cache: dict[Any, Any] = {}
    out = []
    for (i, var), a, b in zip(picked, jitted, eager, strict=True):
        x, y = np.asarray(a).astype(np.float64), np.asarray(b).astype(np.float64)
        finite = np.isfinite(x) & np.isfinite(y)
        diff = np.abs(x - y)[finite]
        max_abs = float(diff.max()) if diff.size else 0.0
        denom = np.maximum(np.abs(y[finite]), np.finfo(np.float32).tiny)
        max_rel = float((diff / denom).max()) if diff.size else 0.0
        mismatch = int(np.count_nonzero(np.isfinite(x) != np.isfinite(y)))
        eqn = jaxpr.eqns[i]
        out.append(EqnDivergence(f"e{i}", eqn.primitive.name, jc.eqn_source(eqn, cache), jc.aval_str(var.aval), max_abs, max_rel,
                                 mismatch, preview(np.asarray(a)), preview(np.asarray(b))))
    return tuple(out)
