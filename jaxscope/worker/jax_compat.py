"""Every version-sensitive touch of JAX internals, in one place (tested against jax 0.10.x).

Public: `jax.extend.core` types. Semi-public: jaxlib `Traceback.raw_frames()` and
`code_addr2location`, which give column-precise frames without JAX's private `user_frame`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.extend.core as jex
import jax.extend.source_info_util as jsu

from jaxscope.about import PACKAGE_DIR
from jaxscope.schema.graph import SourceLoc
from jaxscope.worker.userframes import library_of

# Keep jaxscope's frames out of JAX's own user-frame logic (HLO/MLIR locations, cache-miss
# explanations). Must happen before the first trace: JAX caches user frames by content.
jsu.register_exclusion(PACKAGE_DIR)

ClosedJaxpr = jex.ClosedJaxpr
Jaxpr = jex.Jaxpr
Literal = jex.Literal
DropVar = jex.DropVar


_LEAVES = frozenset({int, float, bool, str, bytes, complex, type(None)})  # params that hold no jaxpr


def subjaxprs(params: dict[str, Any]) -> list[tuple[str, Any, list[Any]]]:
    """(param path, open Jaxpr, consts) for every sub-jaxpr in an equation's params, in order.

    Called once per equation: plain scalars (most params, and the ints of shape tuples) are
    skipped without a call, which halves the graph build's time in here."""
    found: list[tuple[str, Any, list[Any]]] = []
    leaves = _LEAVES

    def visit(path: str, value: Any) -> None:
        if isinstance(value, ClosedJaxpr):
            found.append((path, value.jaxpr, list(value.consts)))
        elif isinstance(value, Jaxpr):  # remat2, shard_map, reduce_window carry open jaxprs
            found.append((path, value, []))
        elif isinstance(value, tuple) and hasattr(value, "_fields"):  # e.g. _LinearSolveTuple
            for name, sub in zip(value._fields, value, strict=True):
                if type(sub) not in leaves:
                    visit(f"{path}.{name}", sub)
        elif isinstance(value, (tuple, list)):
            for i, sub in enumerate(value):
                if type(sub) not in leaves:
                    visit(f"{path}[{i}]", sub)
        elif isinstance(value, dict):
            for k, sub in value.items():
                if type(sub) not in leaves:
                    visit(f"{path}[{k!r}]", sub)

    for key in sorted(params):
        value = params[key]
        if type(value) not in leaves:
            visit(key, value)
    return found


def all_equations(jaxpr: Any) -> Iterator[Any]:
    """Every equation of an open `jaxpr` and of its sub-jaxprs, each distinct body walked once."""
    seen: set[int] = set()
    stack = [jaxpr]
    while stack:
        body = stack.pop()
        if id(body) in seen:
            continue
        seen.add(id(body))
        for eqn in body.eqns:
            yield eqn
            stack.extend(sub for _, sub, _ in subjaxprs(eqn.params))


def is_opaque(value: Any) -> bool:
    """Callables and lazily traced functions in params: shown by name, never stringified."""
    if hasattr(value, "call_wrapped"):  # WrappedFun is not callable()
        return True
    return callable(value) and not isinstance(value, jax.sharding.Mesh)


Chain = tuple[tuple[SourceLoc, ...], SourceLoc | None]  # (user and library frames outermost first, the innermost user frame)


class ChainCache:
    """One per walk. Tracebacks hash and compare by their frames in C, so the equations of one
    line (and of one line in a loop) cost one dict lookup; equal chains are one tuple."""

    def __init__(self) -> None:
        self.by_traceback: dict[Any, Chain] = {}
        self.locs: dict[tuple[int, int], SourceLoc] = {}  # (id(code), lasti): the codes live as long as the jaxpr
        self.chains: dict[tuple[SourceLoc, ...], Chain] = {}


_NO_CHAIN: Chain = ((), None)


def eqn_chain(eqn: Any, cache: ChainCache) -> Chain:
    """The user's frames that emitted `eqn` and the libraries' frames under the innermost of them,
    outermost first (train.py:42 -> flax/linen/linear.py:287), and that innermost user frame (the
    equation's source), with exact columns."""
    tb = getattr(eqn.source_info, "traceback", None)
    if tb is None:
        return _NO_CHAIN
    found = cache.by_traceback.get(tb)
    if found is not None:
        return found
    codes, lastis = tb.raw_frames()  # innermost first
    frames: list[SourceLoc] = []
    in_user = False  # past the innermost user frame: libraries' frames above it (flax's apply plumbing) are left out
    for code, lasti in zip(codes, lastis, strict=True):
        library = library_of(code.co_filename)
        if library is None or (library and in_user):
            continue
        in_user = in_user or not library
        loc = cache.locs.get((id(code), lasti))
        if loc is None:
            line, col, end_line, end_col = type(tb).code_addr2location(code, lasti)
            loc = cache.locs[(id(code), lasti)] = SourceLoc(
                code.co_filename, line, max(col, 0), end_line, max(end_col, 0), code.co_qualname, library
            )
        frames.append(loc)
    frames.reverse()
    chain = tuple(frames)
    found = cache.chains.get(chain)
    if found is None:
        user = next((f for f in reversed(chain) if not f.library), None)  # None: only library code (a jax.nn call of JAX's own)
        found = cache.chains[chain] = (chain, user)
    cache.by_traceback[tb] = found
    return found


def eqn_frames(eqn: Any) -> tuple[tuple[Any, int], ...] | None:
    """(code, lasti) of every frame that emitted `eqn`, innermost first; None without a traceback."""
    tb = getattr(eqn.source_info, "traceback", None)
    if tb is None:
        return None
    return tuple(zip(*tb.raw_frames(), strict=True))


def name_stack(eqn: Any) -> str:
    return str(getattr(eqn.source_info, "name_stack", ""))


def func_name_of(jaxpr: Any) -> str:
    info = getattr(jaxpr, "debug_info", None)
    return getattr(info, "func_name", "") or ""


def aval_str(aval: Any) -> str:
    try:
        return aval.str_short(short_dtypes=True)
    except Exception:  # tokens, opaque avals
        return str(aval)


def scan_counts(params: dict[str, Any]) -> tuple[int, int] | None:
    """(consts, carry) of a `scan` equation: `num_consts`/`num_carry` in jax 0.10 and 0.11; jax 0.12
    keeps flat trees instead (`ft_in`: consts, carry, xs). None where neither says."""
    if "num_consts" in params:
        consts, carry = params.get("num_consts"), params.get("num_carry")
        return (consts, carry) if isinstance(consts, int) and isinstance(carry, int) else None
    try:
        groups = params["ft_in"].elts
        return len(list(groups[0].vals)), len(list(groups[1].vals))
    except (KeyError, AttributeError, IndexError, TypeError):
        return None


def input_shardings(compiled: Any, closed: Any) -> dict[str, str]:
    """Each argument's sharding in the compiled program, as XLA prints one (`{devices=[4,1]<=[4]}`),
    by the argument's name in the traced program: jax 0.10 and 0.11 write these into the compiled
    text's parameters, jax 0.12 does not. Private (`_to_xla_hlo_sharding`); {} where it moved."""
    try:
        names = closed.jaxpr.debug_info.arg_names or ()
        flat = jax.tree.leaves(compiled.input_shardings, is_leaf=lambda x: isinstance(x, jax.sharding.Sharding))
        if len(flat) != len(names) or len(flat) != len(closed.in_avals):
            return {}
        return {
            name: str(s._to_xla_hlo_sharding(aval.ndim)) for name, s, aval in zip(names, flat, closed.in_avals) if len(s.device_set) > 1
        }
    except Exception:  # a JAX whose internals moved: the text's own shardings, where it has them
        return {}


def jit_options(fn: Any) -> dict[str, Any]:
    """What a `jax.jit(...)` wrapper was made with besides its function, as `jax.jit`'s keyword
    arguments ({} for anything else): `donate_argnums`/`donate_argnames` (the program aliases those
    inputs to outputs) and `in_shardings`/`out_shardings` where given (it is partitioned by them).
    Private (`_jit_info`, jax 0.10-0.12): absent elsewhere, nothing is carried over."""
    info = getattr(fn, "_jit_info", None)
    out: dict[str, Any] = {}
    for key in ("donate_argnums", "donate_argnames"):
        value = getattr(info, key, ())
        if isinstance(value, tuple) and value:
            out[key] = value
    for key in ("in", "out"):
        treedef, leaves = getattr(info, f"{key}_shardings_treedef", None), getattr(info, f"{key}_shardings_leaves", None)
        if treedef is not None and isinstance(leaves, tuple) and any(type(leaf).__name__ != "UnspecifiedValue" for leaf in leaves):
            out[f"{key}_shardings"] = treedef.unflatten(leaves)
    return out


def with_jaxpr(traced: Any, closed: Any) -> Any:
    """A `jax.stages.Traced` like `traced` (same arguments, shardings, names) for another ClosedJaxpr
    of the same signature: lowering it does not trace again. Semi-private (`Traced._params`)."""
    args = (traced._meta_tys_flat, dict(traced._params, jaxpr=closed), traced._in_tree, traced.out_tree, traced._consts)
    if hasattr(traced, "_fun_sourceinfo"):  # jax 0.12: Traced(..., fun_sourceinfo)
        return type(traced)(*args, traced._fun_sourceinfo)
    return type(traced)(*args)  # jax 0.10, 0.11


def enable_x64() -> Any:
    """A context in which JAX makes float64 arrays (`jax.enable_x64(True)`: jax 0.10-0.12; the
    config update before)."""
    state = getattr(jax, "enable_x64", None)
    if state is not None and callable(state):
        return state(True)
    from jax.experimental import enable_x64 as legacy  # type: ignore[attr-defined]

    return legacy()


def matmul_precision(name: str) -> Any:
    """A context in which every matmul and convolution without its own precision runs at `name`
    ("default", "high", "highest"); nothing for ""."""
    import contextlib

    return jax.default_matmul_precision(name) if name else contextlib.nullcontext()


def hlo_module_from_text(text: str) -> Any:
    """XLA's own parse of an HLO text (`jaxlib._hlo.hlo_module_from_text`, private: jax 0.10-0.12)."""
    import importlib

    return importlib.import_module("jaxlib._hlo").hlo_module_from_text(text)


def hlo_cost(module_text: str, client: Any) -> dict[str, float]:
    """XLA's HloCostAnalysis of a whole module given as text (`xla_client._xla.hlo_module_cost_analysis`,
    private: jax 0.10-0.12), by `client`'s backend (a device's `.client`): flops, transcendentals, bytes accessed."""
    from jax._src.lib import xla_client

    return dict(xla_client._xla.hlo_module_cost_analysis(client, hlo_module_from_text(module_text)))


def open_backends(held: Callable[[str], bool], wait_s: float) -> Exception | None:
    """Open JAX's backends, waiting up to `wait_s` while an accelerator is `held` by another process
    (a TPU admits one: the process before may still be closing); the last refusal, or None.

    JAX keeps the backends that opened before one failed (`xla_bridge._backends`): a later call
    would then run on the CPU without a word. They are forgotten, so each later call fails alike."""
    from jax._src import xla_bridge

    deadline = time.monotonic() + wait_s
    while True:
        try:
            jax.devices()
            return None
        except RuntimeError as exc:
            with xla_bridge._backend_lock:
                xla_bridge._backends.clear()
                xla_bridge._default_backend = None
            if not held(str(exc)) or time.monotonic() >= deadline:
                return exc
            time.sleep(0.5)
