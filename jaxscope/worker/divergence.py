"""Where jit and eager part ways: every intermediate, computed both ways, compared.

The jaxpr is replayed by one Python function that binds each equation and returns every floating
output; nested `jit` calls (and other call-like equations) are replayed inside, so their
equations get their own graph paths ("e2:0/e1"). That function is run once under `jax.jit` (one
flat program with every intermediate as an output) and once under `jax.disable_jit()`.
Materialising the intermediates keeps XLA from fusing across them, so the error measured here is
a slightly tamer version of the real one; it still shows where the difference starts and grows.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxscope.schema.graph import SourceLoc
from jaxscope.schema.run import EqnDivergence
from jaxscope.worker import jax_compat as jc
from jaxscope.worker.compare import preview
from jaxscope.worker.first_nan import bind_eqn, callee

MAX_EQNS = 5000  # one output per equation: beyond this the program doubles in size for little insight

Picked = list[tuple[str, Any, Any]]  # (graph path, equation, the output compared)


def per_equation(closed: Any, flat_args: list[Any]) -> tuple[EqnDivergence, ...]:
    """One entry per equation with a floating output, in program order (on the default device)."""
    picked: Picked = []

    def program(*args: Any) -> list[Any]:
        picked.clear()
        outs: list[Any] = []
        _replay(closed.jaxpr, list(closed.consts), list(args), "", picked, outs)
        return outs

    jitted = jax.block_until_ready(jax.jit(program)(*flat_args))
    with jax.disable_jit():
        eager = jax.block_until_ready(program(*flat_args))
    cache: dict[Any, SourceLoc | None] = {}
    return tuple(_compare(path, eqn, var, a, b, cache) for (path, eqn, var), a, b in zip(picked, jitted, eager, strict=True))


def _replay(jaxpr: Any, consts: list[Any], args: list[Any], prefix: str, picked: Picked, outs: list[Any]) -> list[Any]:
    env: dict[int, Any] = {}

    def read(atom: Any) -> Any:
        return atom.val if isinstance(atom, jc.Literal) else env[id(atom)]

    for var, value in [*zip(jaxpr.constvars, consts, strict=True), *zip(jaxpr.invars, args, strict=True)]:
        env[id(var)] = value
    for i, eqn in enumerate(jaxpr.eqns):
        invals = [read(v) for v in eqn.invars]
        path = f"{prefix}e{i}"
        body = callee(eqn)
        if body is not None:
            results = _replay(body[0], body[1], invals, f"{path}:0/", picked, outs)
        else:
            results = bind_eqn(eqn, invals)
            floating = next((k for k, v in enumerate(eqn.outvars) if _floating(v)), None)
            if floating is not None and len(picked) < MAX_EQNS:
                picked.append((path, eqn, eqn.outvars[floating]))
                outs.append(results[floating])
        for var, value in zip(eqn.outvars, results, strict=True):
            if not isinstance(var, jc.DropVar):
                env[id(var)] = value
    return [read(v) for v in jaxpr.outvars]


def _floating(var: Any) -> bool:
    return not isinstance(var, jc.DropVar) and jnp.issubdtype(getattr(var.aval, "dtype", np.int32), jnp.inexact)


def _compare(path: str, eqn: Any, var: Any, a: Any, b: Any, cache: dict[Any, SourceLoc | None]) -> EqnDivergence:
    x, y = np.asarray(a).astype(np.float64), np.asarray(b).astype(np.float64)
    finite = np.isfinite(x) & np.isfinite(y)
    diff = np.abs(x - y)[finite]
    max_abs = float(np.max(diff)) if diff.size else 0.0
    denom = np.maximum(np.abs(y[finite]), np.finfo(np.float32).tiny)
    max_rel = float(np.max(diff / denom)) if diff.size else 0.0
    mismatch = int(np.count_nonzero(np.isfinite(x) != np.isfinite(y)))
    return EqnDivergence(path, eqn.primitive.name, jc.eqn_source(eqn, cache), jc.aval_str(var.aval), max_abs, max_rel,
                         mismatch, preview(np.asarray(a)), preview(np.asarray(b)))
