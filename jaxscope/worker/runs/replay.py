"""Replaying a jaxpr one equation at a time, on the run's device: where the first NaN/Inf is made,
and where jit and eager part ways.

First NaN: the loop mirrors `jax.core.eval_jaxpr` (bind each primitive under its equation context),
checking every output as it goes; the answer is the first equation whose outputs hold NaN/Inf while
its inputs hold none. A call-like equation (nested `jit`, `custom_jvp`, `checkpoint`...) is searched
inside, so the answer points at the user's line, not at the wrapper. Node paths match the graph
ids of `to_graph` ("e4", "e2:0/e1").

Divergence: the jaxpr is replayed by one Python function that binds each equation and returns every
floating output (nested calls replayed inside, with their own graph paths). That function is run
once under `jax.jit` (one flat program with every intermediate as an output) and once under
`jax.disable_jit()`. Materialising the intermediates keeps XLA from fusing across them, so the error
measured here is a slightly tamer version of the real one; it still shows where the difference
starts and grows.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxscope.schema.graph import SourceLoc
from jaxscope.schema.primitives import primitive
from jaxscope.schema.run import EqnDivergence, NanOrigin
from jaxscope.worker import jax_compat as jc
from jaxscope.worker.runs.compare import preview


def counts(value: Any) -> tuple[int, int, int]:
    """(NaN, +Inf, -Inf) counts of an array value; zeros for ints, bools, keys and tokens."""
    dtype = getattr(value, "dtype", None)
    if dtype is None or not jnp.issubdtype(dtype, jnp.inexact):
        return 0, 0, 0
    x = np.asarray(value)
    if np.iscomplexobj(x):
        return int(np.count_nonzero(np.isnan(x))), int(np.count_nonzero(np.isinf(x))), 0
    x = x.astype(np.float64)
    return int(np.count_nonzero(np.isnan(x))), int(np.count_nonzero(np.isposinf(x))), int(np.count_nonzero(np.isneginf(x)))


def _bad(value: Any) -> bool:
    return any(counts(value))


def bind_params(eqn: Any) -> tuple[list[Any], dict[str, Any]]:
    """(sub-functions, params) to bind `eqn` with; `get_bind_params` changed shape across versions."""
    got = eqn.primitive.get_bind_params(eqn.params)
    if isinstance(got, tuple) and len(got) == 2 and isinstance(got[1], dict):
        return list(got[0]), got[1]
    return [], got


def bind_eqn(eqn: Any, invals: list[Any]) -> list[Any]:
    """The outputs of `eqn` applied to `invals` (bound under its own context), always as a list."""
    subfuns, params = bind_params(eqn)
    with eqn.ctx.manager:
        outs = eqn.primitive.bind(*subfuns, *invals, **params)
    return list(outs) if eqn.primitive.multiple_results else [outs]


def find_first_nonfinite(closed: Any, flat_args: list[Any]) -> NanOrigin | None:
    """The first NaN/Inf origin when evaluating `closed` (a ClosedJaxpr) on `flat_args`, or None."""
    jaxpr = closed.jaxpr
    for i, (var, value) in enumerate(zip(jaxpr.constvars, closed.consts, strict=True)):
        if _bad(value):
            return _origin(f"c{i}", "", None, value, var, (), "a captured constant already holds NaN/Inf")
    for i, (var, value) in enumerate(zip(jaxpr.invars, flat_args, strict=True)):
        if _bad(value):
            return _origin(f"in{i}", "", None, value, var, (), "this input already holds NaN/Inf")
    return _search(jaxpr, list(closed.consts), flat_args, "", jc.ChainCache())


def _search(jaxpr: Any, consts: list[Any], args: list[Any], prefix: str, cache: jc.ChainCache) -> NanOrigin | None:
    env: dict[int, Any] = {}

    def read(atom: Any) -> Any:
        return atom.val if isinstance(atom, jc.Literal) else env[id(atom)]

    for var, value in zip(jaxpr.constvars, consts, strict=True):
        env[id(var)] = value
    for var, value in zip(jaxpr.invars, args, strict=True):
        env[id(var)] = value
    for i, eqn in enumerate(jaxpr.eqns):
        invals = [read(v) for v in eqn.invars]
        outs = bind_eqn(eqn, invals)
        for var, value in zip(eqn.outvars, outs, strict=True):
            if not isinstance(var, jc.DropVar):
                env[id(var)] = value
        bad = [k for k, value in enumerate(outs) if _bad(value)]
        if not bad or any(_bad(v) for v in invals):
            continue
        path = f"{prefix}e{i}"
        inner = _step_into(eqn, invals, path, cache)
        if inner is not None:
            return inner
        k = bad[0]
        detail = f"its inputs are finite; output {k} of {len(outs)}" if len(outs) > 1 else "its inputs are finite"
        if jc.subjaxprs(eqn.params) and not primitive(eqn.primitive.name).call:
            detail += f" (the NaN/Inf arises inside this {eqn.primitive.name}; its inner equations were not searched)"
        return _origin(path, eqn.primitive.name, jc.eqn_chain(eqn, cache)[1], outs[k], eqn.outvars[k], eqn.invars, detail)
    return None


def callee(eqn: Any) -> tuple[Any, list[Any]] | None:
    """(jaxpr, consts) of a call-like equation whose body takes exactly its operands, else None."""
    if not primitive(eqn.primitive.name).call:
        return None
    subs = jc.subjaxprs(eqn.params)
    if len(subs) != 1:
        return None
    _, sub, consts = subs[0]
    if len(sub.invars) != len(eqn.invars) or len(sub.constvars) != len(consts):
        return None
    return sub, list(consts)


def _step_into(eqn: Any, invals: list[Any], path: str, cache: jc.ChainCache) -> NanOrigin | None:
    body = callee(eqn)
    if body is None:
        return None
    sub, consts = body
    try:
        return _search(sub, consts, invals, f"{path}:0/", cache)
    except Exception:  # an inner evaluation we cannot replay: the outer equation is the answer
        return None


def _origin(path: str, primitive: str, source: SourceLoc | None, value: Any, var: Any, invars: Any, detail: str) -> NanOrigin:
    nan, pos, neg = counts(value)
    return NanOrigin(
        path=path,
        primitive=primitive,
        source=source,
        nan=nan,
        posinf=pos,
        neginf=neg,
        out_aval=jc.aval_str(var.aval),
        in_avals=tuple(jc.aval_str(v.aval) for v in invars),
        detail=detail,
    )


def flat_dynamic(args: list[Any], kwargs: dict[str, Any], static_argnums: tuple[int, ...], static_argnames: tuple[str, ...]) -> list[Any]:
    """The concrete values in the order of the traced jaxpr's invars (jit flattens (args, kwargs))."""
    dyn_args = tuple(a for i, a in enumerate(args) if i not in static_argnums)
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_argnames}
    return jax.tree.leaves((dyn_args, dyn_kwargs))


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
    cache = jc.ChainCache()
    return tuple(_compare(path, eqn, var, a, b, cache) for (path, eqn, var), a, b in zip(picked, jitted, eager, strict=True))


def replay_outputs(closed: Any, flat_args: list[Any]) -> list[Any]:
    """The traced program's outputs evaluated one equation at a time (eagerly, nested calls
    stepped into): the same arithmetic as an eager run of a pure function, without its Python."""
    with jax.disable_jit():
        return list(jax.block_until_ready(_replay(closed.jaxpr, list(closed.consts), list(flat_args), "", None, [])))


def _replay(jaxpr: Any, consts: list[Any], args: list[Any], prefix: str, picked: Picked | None, outs: list[Any]) -> list[Any]:
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
            if floating is not None and picked is not None and len(picked) < MAX_EQNS:
                picked.append((path, eqn, eqn.outvars[floating]))
                outs.append(results[floating])
        for var, value in zip(eqn.outvars, results, strict=True):
            if not isinstance(var, jc.DropVar):
                env[id(var)] = value
    return [read(v) for v in jaxpr.outvars]


def _floating(var: Any) -> bool:
    return not isinstance(var, jc.DropVar) and jnp.issubdtype(getattr(var.aval, "dtype", np.int32), jnp.inexact)


def _compare(path: str, eqn: Any, var: Any, a: Any, b: Any, cache: jc.ChainCache) -> EqnDivergence:
    x, y = np.asarray(a).astype(np.float64), np.asarray(b).astype(np.float64)
    finite = np.isfinite(x) & np.isfinite(y)
    diff = np.abs(x - y)[finite]
    max_abs = float(np.max(diff)) if diff.size else 0.0
    denom = np.maximum(np.abs(y[finite]), np.finfo(np.float32).tiny)
    max_rel = float(np.max(diff / denom)) if diff.size else 0.0
    mismatch = int(np.count_nonzero(np.isfinite(x) != np.isfinite(y)))
    return EqnDivergence(
        path,
        eqn.primitive.name,
        jc.eqn_chain(eqn, cache)[1],
        jc.aval_str(var.aval),
        max_abs,
        max_rel,
        mismatch,
        preview(np.asarray(a)),
        preview(np.asarray(b)),
    )
