"""Example inputs from a *maker*: a Python function of the user's that returns the call's arguments.

A maker returns a tuple of positional arguments, a dict of keyword arguments, or ``(args, kwargs)``
(also the older ``{"args": ..., "kwargs": ...}``); one value that is none of these (an array, a
module) is the one argument. Where a value could be read two ways, the reading that binds to the function's signature
wins. It may take one parameter, the seed (``run --seed``). Values are any pytree: arrays,
``jax.ShapeDtypeStruct``, dicts/lists/tuples/namedtuples, dataclasses, optax states, flax
``FrozenDict``/nnx ``State``/``GraphDef``, equinox modules, Python scalars.

Leaves that are arrays (jax, numpy, ``ShapeDtypeStruct``) are traced; every other leaf is static,
as ``equinox.filter_jit`` treats them: the function is traced through a wrapper that puts the
static leaves back in place, so they need not be hashable and may sit anywhere in a pytree.

For tracing only shapes and dtypes matter, so the maker first runs under ``jax.eval_shape``: a
model's init costs no FLOPs and no memory. A maker that is not traceable (it converts to NumPy, or
branches on values) is called for real. `run` calls it for real, and runs on its values. A worker
keeps the abstract values per file version, unless they hold classes of the user's file (the file
is executed anew for each request, and its classes with it).
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import jax
import numpy as np

from jaxscope.schema.trace import FILE_INPUTS, ErrorInfo, FunctionRef, InputLeaf
from jaxscope.targets.discover import INPUTS_VAR
from jaxscope.targets.target import TargetError, parse_target
from jaxscope.worker import jax_compat as jc
from jaxscope.worker.errors import TraceError, classify
from jaxscope.worker.load import LoadError, find_function, load_module
from jaxscope.worker.userframes import user_modules

Tree = Any


def is_array(leaf: Any) -> bool:
    """Traced leaves: jax and numpy arrays, NumPy scalars, ShapeDtypeStructs. Python scalars are static."""
    return isinstance(leaf, (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct))


def traceable_dtype(dtype: np.dtype[Any]) -> bool:
    """A dtype JAX traces: numbers (bfloat16, float8, int4 and the other ml_dtypes too, whose NumPy
    kind is 'V' like a void's) and booleans; not text, objects, voids or records."""
    return bool(jax.numpy.issubdtype(dtype, np.number) or jax.numpy.issubdtype(dtype, np.bool_))


def partition(tree: Tree) -> tuple[Tree, Tree]:
    """(arrays with None for the static leaves, static leaves with None for the arrays)."""
    return (jax.tree.map(lambda x: x if is_array(x) else None, tree), jax.tree.map(lambda x: None if is_array(x) else x, tree))


def combine(dynamic: Tree, static: Tree) -> Tree:
    """`partition`'s inverse: each position from whichever of the two holds it."""
    return jax.tree.map(lambda d, s: s if d is None else d, dynamic, static, is_leaf=lambda x: x is None)


@dataclass
class Made:
    """A maker's call for one function, split into traced (abstract) and static parts."""

    label: str  # "make_inputs() in train.py", for messages and the run's input source
    maker: Any
    args: list[Any]  # traced parts: ShapeDtypeStruct leaves, None where a leaf is static
    kwargs: dict[str, Any]
    static_args: list[Any]  # static parts: None where a leaf is traced
    static_kwargs: dict[str, Any]
    leaves: tuple[InputLeaf, ...]  # every leaf, traced or static, for display
    warnings: tuple[str, ...] = ()
    names: tuple[str, ...] = ()  # the arguments' names: the positional ones, then the keywords
    stateful: tuple[str, ...] = ()  # those that hold nnx graph nodes: their state after the call is an output (`holds_graph_nodes`)

    def wrap(self, target: Any) -> Any:
        """`target` taking the traced parts only; named and signed as `target` (JAX's argument names)."""
        statics, static_kwargs, stateful = self.static_args, self.static_kwargs, self.stateful
        positional = self.names[: len(statics)]

        @functools.wraps(target)
        def call(*args: Any, **kwargs: Any) -> Any:
            full = [combine(a, s) for a, s in zip(args, statics, strict=True)]
            full_kwargs = {k: combine(v, static_kwargs[k]) for k, v in kwargs.items()}
            out = target(*full, **full_kwargs)
            if not stateful:
                return out
            values = {**dict(zip(positional, full)), **full_kwargs}  # as nnx.jit: the state of every graph node after the call
            return out, {name: partition(values[name])[0] for name in stateful}

        return call

    def concrete(self, seed: int) -> tuple[Made, list[Any], dict[str, Any]]:
        """The maker called for real (for `run`): these inputs (their static leaves too: an optax
        transform's closures, an nnx graph definition are new objects at every call, so the
        eval_shape call's would never compare equal) and their traced parts, once every array leaf
        is where and what the traced program takes; else the first that is not is named."""
        value = readable(_call(self.maker, self.label, seed), self.label)
        args, kwargs = as_call(value, None, self.label, len(self.args), set(self.kwargs))
        dyn_args, static_args = partition(args)
        dyn_kwargs, static_kwargs = partition(kwargs)
        traced, real = _array_leaves((self.args, self.kwargs)), _array_leaves((dyn_args, dyn_kwargs))
        if traced != real:
            path = next((p for p in {**traced, **real} if traced.get(p) != real.get(p)), "?")
            raise _spec(
                f"{self.label} returned other arrays when called for real than under jax.eval_shape: "
                f"{path} was {traced.get(path, 'absent')}, is {real.get(path, 'absent')}"
            )
        return replace(self, static_args=list(static_args), static_kwargs=dict(static_kwargs)), dyn_args, dyn_kwargs


_CACHE: dict[tuple[Any, ...], Made] = {}


def make(module: Any, function: FunctionRef, inputs: str, target: Any) -> Made:
    """The inputs `inputs` names for `function` (loaded from `module`), abstract; TraceError on any fault."""
    maker, label = find_maker(module, function, inputs)
    code = getattr(inspect.unwrap(maker), "__code__", None)
    key = (inputs, function, _stamp(function.path), _stamp(code.co_filename if code is not None else None))
    if key in _CACHE:
        cached = _CACHE[key]
        return replace(cached, maker=maker)
    value, narrow = abstract_call(maker, label)
    args, kwargs = as_call(value, target, label)
    made = split(label, args, kwargs, target, maker=maker)
    if narrow:
        name = f"{getattr(maker, '__name__', 'maker')}()"
        made.warnings = (*made.warnings, narrowing_warning([name + n for n in narrow]))
    if not _holds_user_classes(value):
        _CACHE[key] = made
    return made


def find_maker(module: Any, function: FunctionRef, inputs: str) -> tuple[Any, str]:
    """The maker callable and its label: the file's JAXSCOPE_INPUTS entry, or PATH.py::NAME / module:NAME."""
    if inputs == FILE_INPUTS:
        where = os.path.basename(function.path) if function.path else function.module
        table = getattr(module, INPUTS_VAR, None)
        if not isinstance(table, dict):
            raise _spec(f"{where} has no {INPUTS_VAR} dict (function name -> maker)")
        short = function.qualname.rsplit(".", 1)[-1]
        maker = table.get(function.qualname, table.get(short))
        if maker is None:
            raise _spec(f"{where}'s {INPUTS_VAR} has no entry for {function.qualname!r} (it has: {', '.join(map(repr, table)) or 'none'})")
        label = f"{INPUTS_VAR}[{function.qualname!r}] in {where}"
    else:
        try:
            ref = parse_target(inputs)
        except TargetError as exc:
            raise _spec(f"bad maker reference {inputs!r}: {exc}") from None
        same = bool(ref.path) and bool(function.path) and os.path.abspath(ref.path) == os.path.abspath(function.path)
        try:
            owner = module if same else load_module(ref)
            maker = find_function(owner, ref)
        except LoadError as exc:
            raise TraceError(replace(exc.info, phase="inputs", message=f"maker {inputs}: {exc.info.message}")) from None
        label = f"{ref.qualname}() in {os.path.basename(ref.path) if ref.path else ref.module}"
    if not callable(maker):
        raise _spec(f"{label} is a {type(maker).__name__}, not a function that returns the inputs")
    return maker, label


def _stamp(path: Any) -> tuple[Any, ...]:
    try:
        st = os.stat(path)
    except (OSError, TypeError, ValueError):
        return (path,)
    return (path, st.st_mtime_ns, st.st_size, st.st_ino)


def _takes_seed(maker: Any) -> bool:
    try:
        inspect.signature(maker).bind(0)
    except (TypeError, ValueError):
        return False
    return True


def _call(maker: Any, label: str, seed: int) -> Any:
    """The maker's value; its exception becomes the user's error, named after the maker."""
    try:
        return maker(seed) if _takes_seed(maker) else maker()
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        info = classify(exc, "inputs")
        hint = info.hint or "the maker that gives the example inputs failed: fix it, or give the inputs another way"
        raise TraceError(replace(info, message=f"{label} raised {info.exc_type}: {info.message}", hint=hint)) from None


def abstract_call(maker: Any, label: str) -> tuple[Any, list[str]]:
    """The maker's value with every array abstract: under `jax.eval_shape` when it traces, else for
    real; and its leaves that JAX narrows to 32 bits (`narrowed`), which eval_shape does silently."""
    box: list[Any] = []

    def shapes() -> Any:
        dynamic, static = partition(readable(_call(maker, label, 0), label))  # sys.exit too becomes the maker's error
        box[:] = [static, narrowed(dynamic)]
        return dynamic

    try:
        return combine(jax.eval_shape(shapes), box[0]), box[1]
    except Exception:  # not traceable (NumPy conversions, value branches, ...): call it for real
        pass
    value = readable(_call(maker, label, 0), label)
    return jax.tree.map(_abstract, value, is_leaf=is_array), narrowed(value)


MAX_TREE_DEPTH = 200  # a model's pytree is a few dozen levels deep


def readable(value: Any, label: str) -> Any:
    """`value` once its lists, tuples and dicts are known to form a tree JAX can read: none contains
    itself, none is nested past MAX_TREE_DEPTH, every dict's keys sort (JAX sorts them). Each fault
    is the maker's, with where in its value (JAX raised ValueError or RecursionError, which read
    as jaxscope's own faults, or crashed the worker)."""
    on_path: set[int] = set()
    stack: list[tuple[Any, str, int] | int] = [(value, "", 0)]  # an int: leave that container
    while stack:
        item = stack.pop()
        if isinstance(item, int):
            on_path.discard(item)
            continue
        node, where, depth = item
        if type(node) not in (list, tuple, dict) and not (isinstance(node, tuple) and hasattr(node, "_fields")):
            continue
        at = where or "its value"
        if id(node) in on_path:
            raise _spec(f"{label} returned a value in which {at} contains itself: JAX reads inputs as a tree, give each branch once")
        if depth > MAX_TREE_DEPTH:
            raise _spec(f"{label} returned a value nested more than {MAX_TREE_DEPTH} levels deep (at {at[:120]}…)")
        if isinstance(node, dict):
            try:
                sorted(node)
            except TypeError:
                kinds = ", ".join(sorted({type(k).__name__ for k in node}))
                raise _spec(f"{label} returned a dict ({at}) whose keys JAX cannot sort, of types {kinds}: give keys of one type") from None
        on_path.add(id(node))
        stack.append(id(node))
        pairs = node.items() if isinstance(node, dict) else enumerate(node)
        stack.extend((v, f"{where}[{k!r}]", depth + 1) for k, v in pairs)
    return value


def narrowed(tree: Tree, prefix: str = "") -> list[str]:
    """`PATH: float64 -> float32` for each array leaf whose dtype JAX narrows (64-bit types while its
    x64 mode is off: jit would trace them as 32-bit without a word)."""
    out: list[str] = []
    for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        if not is_array(leaf):
            continue
        try:
            canonical = jax.dtypes.canonicalize_dtype(leaf.dtype)
        except Exception:  # not a JAX dtype at all: `split` refuses it with its path
            continue
        if canonical != leaf.dtype:
            out.append(f"{prefix}{jax.tree_util.keystr(path)}: {leaf.dtype} -> {canonical}")
    return out


def narrowing_warning(items: list[str]) -> str:
    shown = ", ".join(items[:6]) + (f" and {len(items) - 6} more" if len(items) > 6 else "")
    return (
        f"64-bit types are traced as 32-bit, as JAX does while its x64 mode is off: {shown}; "
        "to keep them: --x64 on the command line, Trace → 64-bit Mode in the window"
    )


def _abstract(leaf: Any) -> Any:
    if not is_array(leaf) or isinstance(leaf, jax.ShapeDtypeStruct):
        return leaf
    if isinstance(leaf, np.ndarray) and not traceable_dtype(leaf.dtype):
        return leaf  # refused by `split`, which names its path
    aval = jax.typeof(leaf)
    sharding = getattr(leaf, "sharding", None)
    keep = sharding is not None and len(getattr(sharding, "device_set", ())) > 1  # one device: not part of the program
    return jax.ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type, sharding=sharding if keep else None)


def as_call(
    value: Any, target: Any, label: str, n_args: int | None = None, keywords: set[str] | None = None
) -> tuple[list[Any], dict[str, Any]]:
    """Read the maker's value as (args, kwargs): the first reading that binds to `target`'s signature
    (or, without one, matches `n_args`/`keywords`, or else is the natural one)."""
    readings: list[tuple[list[Any], dict[str, Any]]] = []
    if isinstance(value, dict) and value and set(value) <= {"args", "kwargs"}:
        readings.append((list(value.get("args", ())), dict(value.get("kwargs", {}))))
    if isinstance(value, (tuple, list)) and len(value) == 2 and isinstance(value[0], (tuple, list)) and _str_keyed(value[1]):
        readings.append((list(value[0]), dict(value[1])))
    if isinstance(value, (tuple, list)):
        readings.append((list(value), {}))
    elif _str_keyed(value):
        readings.append(([], dict(value)))
    else:
        readings.append(([value], {}))
    if n_args is not None:
        return next((r for r in readings if len(r[0]) == n_args and set(r[1]) == keywords), readings[0])
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return readings[0]
    for args, kwargs in readings:
        try:
            sig.bind(*args, **kwargs)
        except TypeError:
            continue
        return args, kwargs
    args, kwargs = readings[0]
    try:
        sig.bind(*args, **kwargs)
    except TypeError as exc:
        name = getattr(target, "__qualname__", getattr(target, "__name__", "the function"))
        given = ", ".join([*(f"<{type(a).__name__}>" for a in args), *(f"{k}=<{type(v).__name__}>" for k, v in kwargs.items())])
        raise _spec(f"{label} returned ({given}), which {name}{sig} cannot take: {exc}") from None
    raise AssertionError("unreachable")  # pragma: no cover


def _str_keyed(value: Any) -> bool:
    return type(value) is dict and all(isinstance(k, str) for k in value)


def split(
    label: str,
    args: list[Any],
    kwargs: dict[str, Any],
    target: Any,
    *,
    maker: Any = None,
    static_argnums: Iterable[int] = (),
    static_argnames: Iterable[str] = (),
) -> Made:
    """The call (args, kwargs) split into traced and static parts; `static_argnums`/`static_argnames`
    make whole arguments static (as `jax.jit`'s). A leaf JAX cannot trace is refused with its path."""
    forced = set(static_argnums) | set(static_argnames)
    names = _arg_names(target, args, kwargs)
    leaves: list[InputLeaf] = []
    for key, name, value in zip([*range(len(args)), *kwargs], names, [*args, *kwargs.values()], strict=True):
        if key in forced:
            leaves.append(InputLeaf(name, "static", (_short_repr(value),)))
            continue
        for path, leaf in jax.tree_util.tree_flatten_with_path(value)[0]:
            where = name + jax.tree_util.keystr(path)
            if not is_array(leaf):
                leaves.append(InputLeaf(where, "static", (_short_repr(leaf),)))
                continue
            if isinstance(leaf.dtype, np.dtype) and not traceable_dtype(leaf.dtype):
                raise _spec(
                    f"{label}: {where} is an array of dtype {leaf.dtype}, which JAX cannot trace; "
                    "give numbers (or make it a Python value, which is static)"
                )
            text = jc.aval_str(jax.core.ShapedArray(leaf.shape, leaf.dtype))
            leaves.append(InputLeaf(where, text, size=int(np.prod(leaf.shape, dtype=np.int64))))
    dyn_args, static_args = zip(*(_part(a, i in forced) for i, a in enumerate(args)), strict=True) if args else ((), ())
    dyn_kwargs = {k: _part(v, k in forced) for k, v in kwargs.items()}
    stateful = tuple(name for name, value in zip(names, [*args, *kwargs.values()]) if holds_graph_nodes(value))
    return Made(
        label=label,
        maker=maker,
        names=tuple(names),
        stateful=stateful,
        args=list(dyn_args),
        kwargs={k: d for k, (d, _) in dyn_kwargs.items()},
        static_args=list(static_args),
        static_kwargs={k: s for k, (_, s) in dyn_kwargs.items()},
        leaves=tuple(leaves),
    )


def _part(value: Any, static: bool) -> tuple[Tree, Tree]:
    return (None, value) if static else partition(value)


def _arg_names(target: Any, args: list[Any], kwargs: dict[str, Any]) -> list[str]:
    """Parameter names of the positional arguments (by the signature), then the keywords."""
    fallback = [f"arg{i}" for i in range(len(args))]
    try:
        sig = inspect.signature(target)
        bound = sig.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return fallback + list(kwargs)
    names: list[str] = []
    for name, param in sig.parameters.items():
        if name not in bound.arguments or name in kwargs:
            continue
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            names += [f"{name}[{i}]" for i in range(len(bound.arguments[name]))]
        elif param.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            names.append(name)
    return (names if len(names) == len(args) else fallback) + list(kwargs)


def _short_repr(value: Any, limit: int = 80) -> str:
    try:
        text = repr(value)
    except Exception as exc:  # a user object whose repr raises is still a static leaf
        text = f"<{type(value).__name__}: repr failed: {type(exc).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _holds_user_classes(value: Any) -> bool:
    """True when a node or leaf of `value` is an instance of a class of the user's own files."""
    names = {m.__name__ for m in user_modules()}
    leaves = jax.tree.leaves(value)
    types = {type(leaf) for leaf in leaves}
    stack: list[Any] = [jax.tree.structure(value)]  # PyTreeDefs (their methods are not in jax's stubs)
    while stack:
        node = stack.pop()
        data = node.node_data()
        if data is not None:
            types.add(data[0])
        stack.extend(node.children())
    return any(getattr(t, "__module__", None) in names for t in types)


def _array_leaves(tree: Tree) -> dict[str, str]:
    """Each array leaf's path and type (`f32[8,16]`): what a jitted program takes of its inputs."""
    return {
        jax.tree_util.keystr(path): jc.aval_str(jax.core.ShapedArray(leaf.shape, leaf.dtype))
        for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]
        if is_array(leaf)
    }


def _spec(message: str) -> TraceError:
    return TraceError(ErrorInfo(kind="spec", phase="inputs", message=message))


# ------------------------------------------------------------------------------ nnx state after the call
# flax nnx's in-place updates as outputs, as `nnx.jit` traces them.
#
# An nnx train step updates its inputs in place (`optimizer.update(model, grads)`, BatchNorm
# statistics, RNG counts): Python side effects on the Module objects, not values the function
# returns. Traced as it is written, the jaxpr's outputs are the loss alone, and XLA removes the
# backward pass and the update as dead code (a ViT step lowered to 33 `dot_general`s where
# `train_step.lower(...)` of the same `@nnx.jit` step has 99). `nnx.jit` returns the state of every
# graph node of its arguments after the call beside the function's own outputs; so does the call
# jaxscope traces (`makers.Made.wrap`), each argument that holds graph nodes an output named after
# it. flax is imported only when the user's inputs came with it.


def state_output_name(path: str) -> str:
    """A result path of the call (`result[0]…`: the function's own; `result[1]['model']…`: an
    argument's state after it) as the user names it: `result…`, `model… (new)`."""
    if path.startswith("result[0]"):
        return "result" + path[len("result[0]") :]
    head, quote, rest = path.partition("['")
    name, _, tail = rest.partition("']")
    return f"{name}{tail} (new)" if head == "result[1]" and quote else path


def is_graph_node(x: Any) -> bool:
    """An nnx Module, Optimizer, Variable, Rngs... (False without flax.nnx loaded: none can exist)."""
    nnx = sys.modules.get("flax.nnx")
    if nnx is None:
        return False
    try:
        return bool(nnx.graph.is_graph_node(x)) or isinstance(x, nnx.Variable)
    except AttributeError:  # a flax without these names
        return False


def holds_graph_nodes(value: Any) -> bool:
    """Whether any nnx graph node is in the pytree `value`."""
    if "flax.nnx" not in sys.modules:
        return False
    return any(is_graph_node(leaf) for leaf in jax.tree_util.tree_leaves(value, is_leaf=is_graph_node))
