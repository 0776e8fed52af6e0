"""The traced program in float64 on the CPU: the reference a jit/eager difference is judged against.

The reference is the *same program* JAX traced, not the Python function traced again under
`jax_enable_x64`: tracing again would change what the program does (a dropout mask drawn as
float64 takes other random bits; an explicit `astype(float32)` stays float32). So the closed
jaxpr is interpreted equation by equation with every floating value promoted (bf16, f16, f32 to
float64; complex64 to complex128), inside `jax.jit` under x64, which gives one XLA program on the
CPU. Dtype params follow (`convert_element_type`'s `new_dtype`, a dot's `preferred_element_type`);
loops and conditionals are staged again around interpreted bodies (`lax.scan`, `lax.while_loop`,
`lax.switch`); calls (`jit`, `custom_jvp_call`, `checkpoint`...) are interpreted inline. An
equation that cannot run promoted (`bitcast_convert_type`, a callback, an unknown higher-order
primitive) runs at its own precision on values cast back to its own dtypes, and is named in
`kept`: the reference is then float64 everywhere but there.

Beside the outputs, each additive equation at the top level and inside calls (add, sub, sums,
dots, convolutions, cumulative sums) is probed for cancellation: where |result| is at the
rounding level of the sum of |terms| in the program's own precision, the program's result is
rounding noise. Which outputs each probed equation feeds is tracked as bitsets while interpreting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxscope.schema.primitives import primitive
from jaxscope.worker import jax_compat as jc
from jaxscope.worker.runs.replay import bind_eqn, bind_params, callee

MAX_PROBES = 4000  # cancellation probes per program (two scalars each)
_IDENTITY = frozenset({"sharding_constraint", "mesh_cast", "device_put", "optimization_barrier"})
_KEEP = frozenset({"bitcast_convert_type", "pure_callback", "io_callback", "debug_callback", "shard_map", "pallas_call"})
_SCATTERS = {
    "scatter-add": lax.scatter_add,
    "scatter_add": lax.scatter_add,
    "scatter-sub": lax.scatter_sub,
    "scatter_sub": lax.scatter_sub,
    "scatter-mul": lax.scatter_mul,
    "scatter_mul": lax.scatter_mul,
    "scatter-min": lax.scatter_min,
    "scatter_min": lax.scatter_min,
    "scatter-max": lax.scatter_max,
    "scatter_max": lax.scatter_max,
}
_DTYPE_PARAMS = ("new_dtype", "preferred_element_type", "dtype")
# Σ|terms| of an additive equation: the same primitive applied to the absolute values of its operands
_ADDITIVE = frozenset({"add", "add_any", "sub", "reduce_sum", "dot_general", "conv_general_dilated", "cumsum"})


def wide(dtype: Any) -> Any:
    """The float64 counterpart of a floating or complex dtype; any other dtype as it is."""
    dt = np.dtype(dtype)
    if jnp.issubdtype(dt, jnp.complexfloating):
        return np.dtype(np.complex128)
    if jnp.issubdtype(dt, jnp.floating):
        return np.dtype(np.float64)
    return dt


def promote(value: Any) -> Any:
    """`value` with its floating dtype widened (arrays, NumPy scalars, JAX's typed literals; plain
    Python numbers as they are: they are weakly typed and follow their operands)."""
    dtype = getattr(value, "dtype", None)
    if dtype is None or type(value) in (bool, int, float, complex):
        return value
    try:
        target = wide(dtype)
    except TypeError:  # a PRNG key's extended dtype
        return value
    if target == np.dtype(dtype):
        return value
    if isinstance(value, (np.ndarray, np.generic, float, int, complex)):  # literals: TypedNdArray, TypedFloat
        return np.array(value, dtype=target, subok=False)
    return jnp.asarray(value, target)


@dataclass
class Probe:
    """One equation probed for cancellation: its graph path, its primitive, the bit of its outputs."""

    path: str
    eqn: Any
    bit: int


@dataclass
class _State:
    probes: list[Probe] = field(default_factory=list)
    stats: list[Any] = field(default_factory=list)  # per probe: (fraction cancelled, digits lost, |result| max, Σ|terms| max)
    kept: dict[str, str] = field(default_factory=dict)  # primitive -> why it ran at its own precision
    out_bits: list[int] = field(default_factory=list)  # per program output, the probes upstream of it


def float64_program(closed: Any) -> tuple[Any, _State]:
    """(function of the flat inputs giving (outputs, probe stats, output bitsets), its state).

    Call the function under `jax.jit` with x64 enabled; read `state.probes` after tracing."""
    state = _State()

    def program(*args: Any) -> tuple[list[Any], list[Any]]:
        state.probes.clear()
        state.stats.clear()
        consts = [promote(c) for c in closed.consts]
        outs, _ = _interpret(closed.jaxpr, consts, [promote(a) for a in args], "", state, [0] * len(args), True)
        return outs, state.stats

    return program, state


@dataclass
class Reference:
    """The float64 reference's outputs (host arrays, in the program's output order) and what it saw."""

    outputs: list[np.ndarray]
    probes: list[Probe]
    stats: np.ndarray  # (probes, 4): see `_cancellation`
    out_bits: list[int]
    kept: dict[str, str]


def run_reference(closed: Any, flat_args: list[Any]) -> Reference:
    """Run the traced program `closed` in float64 on the CPU on the host values of `flat_args`."""
    cpu = jax.devices("cpu")[0]
    program, state = float64_program(closed)
    host = [jax.device_put(a, cpu) if _is_key(a) else np.asarray(a) for a in flat_args]
    with jc.enable_x64(), jax.default_device(cpu):
        outs, stats = jax.jit(program)(*host)
        outputs = [np.asarray(jax.random.key_data(o)) if _is_key(o) else np.asarray(o) for o in outs]
        table = np.asarray([[float(v) for v in row] for row in stats], dtype=np.float64).reshape(len(stats), 4)
    return Reference(outputs, list(state.probes), table, list(state.out_bits), dict(state.kept))


def _is_key(value: Any) -> bool:
    dtype = getattr(value, "dtype", None)
    return dtype is not None and jnp.issubdtype(dtype, jax.dtypes.prng_key)


def _interpret(
    jaxpr: Any, consts: list[Any], args: list[Any], prefix: str, state: _State, in_bits: list[int], probing: bool
) -> tuple[list[Any], list[int]]:
    env: dict[int, Any] = {}
    bits: dict[int, int] = {}

    def read(atom: Any) -> Any:
        return promote(atom.val) if isinstance(atom, jc.Literal) else env[id(atom)]

    def bit(atom: Any) -> int:
        return 0 if isinstance(atom, jc.Literal) else bits.get(id(atom), 0)

    for var, value in zip(jaxpr.constvars, consts, strict=True):
        env[id(var)] = value
    for var, value, b in zip(jaxpr.invars, args, in_bits, strict=True):
        env[id(var)], bits[id(var)] = value, b
    for i, eqn in enumerate(jaxpr.eqns):
        invals = [read(v) for v in eqn.invars]
        upstream = 0
        for v in eqn.invars:
            upstream |= bit(v)
        path = f"{prefix}e{i}"
        outs, inner = _equation(eqn, invals, path, state, [bit(v) for v in eqn.invars], probing)
        if inner is not None:
            out_bits = inner
        else:
            if probing and eqn.primitive.name in _ADDITIVE and _floating(eqn) and len(state.probes) < MAX_PROBES:
                probe = Probe(path, eqn, 1 << len(state.probes))
                state.probes.append(probe)
                state.stats.append(_cancellation(eqn, invals, outs[0]))
                upstream |= probe.bit
            out_bits = [upstream] * len(outs)
        for var, value, b in zip(eqn.outvars, outs, out_bits, strict=True):
            if not isinstance(var, jc.DropVar):
                env[id(var)], bits[id(var)] = value, b
    out_bits = [bit(v) for v in jaxpr.outvars]
    if not prefix:
        state.out_bits = out_bits
    return [read(v) for v in jaxpr.outvars], out_bits


def _equation(
    eqn: Any, invals: list[Any], path: str, state: _State, in_bits: list[int], probing: bool
) -> tuple[list[Any], list[int] | None]:
    """The equation's promoted outputs, and its outputs' probe bits when it was interpreted inside."""
    name = eqn.primitive.name
    if name in _IDENTITY and len(invals) == len(eqn.outvars):
        return list(invals), None
    body = callee(eqn) if primitive(name).call else None
    if body is not None:
        sub, consts = body
        return _interpret(sub, [promote(c) for c in consts], invals, f"{path}:0/", state, in_bits, probing)
    staged = _STAGED.get(name)
    if staged is not None:
        try:
            return staged(eqn, invals, path, state), None
        except Exception as exc:  # a body that does not stage in float64 (or a JAX whose params moved)
            return _own_precision(eqn, invals, state, f"{type(exc).__name__}: {str(exc)[:120]}"), None
    if name in _SCATTERS:
        return _scatter(eqn, invals), None
    if name in _KEEP or jc.subjaxprs(eqn.params):
        return _own_precision(eqn, invals, state, f"{name} has no float64 form here"), None
    try:
        outs = _bind_promoted(eqn, invals)
    except Exception as exc:  # a primitive that refuses float64 operands
        return _own_precision(eqn, invals, state, f"{type(exc).__name__}: {str(exc)[:120]}"), None
    if not _matches(eqn, outs):
        return _own_precision(eqn, invals, state, "its float64 form has other shapes"), None
    return outs, None


def _scatter(eqn: Any, invals: list[Any]) -> list[Any]:
    """A combining scatter made again by its public function: its combiner (`update_jaxpr`) is
    typed for the program's own dtype and would not lower on float64 operands."""
    p = eqn.params
    operand, indices, updates = invals
    scatter: Any = _SCATTERS[eqn.primitive.name]
    with eqn.ctx.manager:
        out = scatter(
            operand,
            indices,
            updates,
            p["dimension_numbers"],
            indices_are_sorted=p["indices_are_sorted"],
            unique_indices=p["unique_indices"],
            mode=p["mode"],
        )
    return [out]


def _bind_promoted(eqn: Any, invals: list[Any]) -> list[Any]:
    subfuns, params = bind_params(eqn)
    for key in _DTYPE_PARAMS:
        value = params.get(key)
        if value is not None:
            try:
                params = {**params, key: wide(value)}
            except TypeError:
                pass
    with eqn.ctx.manager:
        outs = eqn.primitive.bind(*subfuns, *invals, **params)
    return list(outs) if eqn.primitive.multiple_results else [outs]


def _matches(eqn: Any, outs: list[Any]) -> bool:
    for var, value in zip(eqn.outvars, outs, strict=True):
        shape = getattr(var.aval, "shape", None)
        if shape is not None and tuple(getattr(value, "shape", ())) != tuple(shape):
            return False
    return True


def _own_precision(eqn: Any, invals: list[Any], state: _State, why: str) -> list[Any]:
    """Run `eqn` on operands cast back to its own dtypes, then widen its outputs."""
    state.kept.setdefault(eqn.primitive.name, why)
    own = []
    for var, value in zip(eqn.invars, invals, strict=True):
        dtype = getattr(var.aval, "dtype", None)
        cast = dtype is not None and getattr(value, "dtype", None) is not None and np.dtype(value.dtype) != np.dtype(dtype)
        own.append(jnp.asarray(value, dtype) if cast else value)
    return [promote(v) for v in bind_eqn(eqn, own)]


def _closed_fn(closed: Any, path: str, state: _State) -> Any:
    def run(*args: Any) -> list[Any]:
        outs, _ = _interpret(closed.jaxpr, [promote(c) for c in closed.consts], list(args), path, state, [0] * len(args), False)
        return outs

    return run


def _cond(eqn: Any, invals: list[Any], path: str, state: _State) -> list[Any]:
    branches = [_closed_fn(b, f"{path}:{k}/", state) for k, b in enumerate(eqn.params["branches"])]
    index, ops = invals[0], invals[1:]
    return list(lax.switch(index, [lambda *o, fn=fn: tuple(fn(*o)) for fn in branches], *ops))


def _while(eqn: Any, invals: list[Any], path: str, state: _State) -> list[Any]:
    p = eqn.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cconsts, bconsts, carry = invals[:nc], invals[nc : nc + nb], invals[nc + nb :]
    cond_fn = _closed_fn(p["cond_jaxpr"], f"{path}:0/", state)
    body_fn = _closed_fn(p["body_jaxpr"], f"{path}:1/", state)
    out = lax.while_loop(lambda c: cond_fn(*cconsts, *c)[0], lambda c: tuple(body_fn(*bconsts, *c)), tuple(carry))
    return list(out)


def _scan(eqn: Any, invals: list[Any], path: str, state: _State) -> list[Any]:
    p = eqn.params
    counts = jc.scan_counts(p)
    if counts is None:
        raise ValueError("this JAX's scan does not say its consts and carry")
    nconsts, ncarry = counts
    consts, carry, xs = invals[:nconsts], invals[nconsts : nconsts + ncarry], invals[nconsts + ncarry :]
    body = _closed_fn(p["jaxpr"], f"{path}:0/", state)

    def step(c: tuple[Any, ...], x: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        outs = body(*consts, *c, *x)
        return tuple(outs[:ncarry]), tuple(outs[ncarry:])

    final, ys = lax.scan(step, tuple(carry), tuple(xs), length=p["length"], reverse=p["reverse"])
    return [*final, *ys]


_STAGED = {"cond": _cond, "while": _while, "scan": _scan}


def _cancellation(eqn: Any, invals: list[Any], out: Any) -> Any:
    """(fraction of elements that cancel, the most digits lost, max |result|, max Σ|terms|) of one
    additive equation, as float64 scalars computed inside the reference program."""
    name = eqn.primitive.name
    absolute = [jnp.abs(v) if getattr(v, "dtype", None) is not None and jnp.issubdtype(v.dtype, jnp.inexact) else v for v in invals]
    if name == "sub":
        terms = absolute[0] + absolute[1]
    else:
        terms = _bind_promoted(eqn, absolute)[0]
    result = jnp.abs(out)
    result, terms = result.astype(jnp.float64), jnp.real(terms).astype(jnp.float64)
    noise = terms * _eps(eqn) * 4.0
    live = terms > 0
    cancelled = live & (result <= noise)
    n = jnp.maximum(jnp.sum(live), 1)
    # a float64 result of exactly 0 cancels every digit float64 has (16)
    digits = jnp.where(live, jnp.minimum(jnp.log10(jnp.maximum(terms, 1e-300) / jnp.maximum(result, 1e-300)), 16.0), 0.0)
    return jnp.sum(cancelled) / n, jnp.max(digits, initial=0.0), jnp.max(result, initial=0.0), jnp.max(terms, initial=0.0)


def _floating(eqn: Any) -> bool:
    dtype = getattr(eqn.outvars[0].aval, "dtype", None)
    return dtype is not None and jnp.issubdtype(dtype, jnp.inexact)


def _eps(eqn: Any) -> float:
    """The machine epsilon of the program's own precision for this equation's result."""
    dtype = getattr(eqn.outvars[0].aval, "dtype", None)
    if dtype is None or not jnp.issubdtype(dtype, jnp.floating):
        dtype = np.float32
    return float(jnp.finfo(dtype).eps)


def digits_kept(dtype: str) -> int:
    """Decimal digits a float dtype keeps (float32: 6, bfloat16: 2)."""
    try:
        return int(math.floor(-math.log10(float(jnp.finfo(np.dtype(dtype)).eps))))
    except TypeError:
        return 6
