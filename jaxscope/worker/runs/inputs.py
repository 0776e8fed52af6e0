"""Devices and concrete inputs for the `run` op.

Inputs are generated from the abstract specs and a seed with one `jax.random` key per array leaf
(split from `jax.random.key(seed)` in argument order), so the same seed gives the same inputs on
every device and every run: normal floats, ints in [-8, 8) (unsigned [0, 16)), fair bools,
new-style PRNG keys for `key[...]` specs, and random bits for `u32[..., 2]` (raw keys).

A maker's inputs (worker.makers) run as the maker gives them instead.
"""

from __future__ import annotations

import inspect
from typing import Any

import jax
import jax.numpy as jnp

from jaxscope.schema.run import DeviceInfo
from jaxscope.schema.trace import ErrorInfo, InputLeaf
from jaxscope.worker import jax_compat as jc
from jaxscope.worker.makers import is_array
from jaxscope.worker.runs.compare import as_host, preview
from jaxscope.worker.trace import Prepared, TraceError

_ALIASES = {"cuda": "gpu", "rocm": "gpu"}


def list_devices() -> list[tuple[Any, DeviceInfo]]:
    """Every device of every initialised backend, the default device first."""
    default = jax.devices()[0]
    found: list[Any] = list(jax.devices())
    try:
        import jax.extend.backend as jb

        for platform in jb.backends():
            try:
                found += [d for d in jax.devices(platform) if d not in found]
            except RuntimeError:
                pass
    except Exception:  # a backend that fails to list costs its devices, not the run
        pass
    return [(d, _info(d, d == default)) for d in found]


def _info(device: Any, default: bool) -> DeviceInfo:
    stats: dict[str, Any] = {}
    try:
        stats = device.memory_stats() or {}
    except Exception:  # CPU raises or returns None; some plugins raise
        pass
    return DeviceInfo(
        name=f"{device.platform}:{device.id}",
        platform=device.platform,
        id=int(device.id),
        kind=str(getattr(device, "device_kind", "")),
        process_index=int(getattr(device, "process_index", 0)),
        bytes_limit=stats.get("bytes_limit"),
        bytes_in_use=stats.get("bytes_in_use"),
        default=default,
    )


def pick_device(name: str, devices: list[tuple[Any, DeviceInfo]]) -> tuple[Any, DeviceInfo]:
    """The device called `name` ("cpu:0", "gpu", "" for the default); a spec error lists the others."""
    wanted = name.strip().lower()
    platform, _, index = wanted.partition(":")
    platform = _ALIASES.get(platform, platform)
    for device, info in devices:
        if not wanted and info.default:
            return device, info
        if platform == info.platform and (not index or index == str(info.id)):
            return device, info
    names = ", ".join(info.name for _, info in devices)
    raise TraceError(
        ErrorInfo(
            kind="spec",
            phase="device",
            message=f"no device {name!r} in this worker; available: {names}",
            hint="pick one of the available devices (e.g. --device cpu:0); more CPU devices need a worker "
            "started with XLA_FLAGS=--xla_force_host_platform_device_count=N",
        )
    )


def default_device(name: str) -> Any:
    """A context in which device `name` is JAX's default (nothing for "": JAX's own); a spec error
    names the devices there are."""
    import contextlib

    return jax.default_device(pick_device(name, list_devices())[0]) if name else contextlib.nullcontext()


def place(prep: Prepared, args: list[Any], kwargs: dict[str, Any], device: Any) -> tuple[list[Any], dict[str, Any]]:
    """Commit every traced argument to `device` (jit runs where its committed inputs live); statics as they are."""
    placed = [a if i in prep.static_argnums else jax.device_put(a, device) for i, a in enumerate(args)]
    return placed, {k: v if k in prep.static_argnames else jax.device_put(v, device) for k, v in kwargs.items()}


def generate(prep: Prepared, seed: int) -> tuple[list[Any], dict[str, Any]]:
    """Concrete values for every traced leaf of `prep`'s abstract arguments; statics kept."""
    dynamic = [a for i, a in enumerate(prep.args) if i not in prep.static_argnums]
    dynamic += [v for k, v in prep.kwargs.items() if k not in prep.static_argnames]
    n = len(jax.tree.leaves(dynamic))
    keys = iter(jax.random.split(jax.random.key(seed), max(n, 1)))

    def gen(leaf: Any) -> Any:
        return sample(next(keys), leaf) if isinstance(leaf, jax.ShapeDtypeStruct) else leaf

    args = [a if i in prep.static_argnums else jax.tree.map(gen, a) for i, a in enumerate(prep.args)]
    kwargs = {k: v if k in prep.static_argnames else jax.tree.map(gen, v) for k, v in prep.kwargs.items()}
    return args, kwargs


def sample(key: Any, spec: jax.ShapeDtypeStruct) -> jax.Array:
    """One leaf from its own key: see the module docstring for the distributions."""
    shape, dtype = tuple(spec.shape), spec.dtype
    if jnp.issubdtype(dtype, jax.dtypes.prng_key):
        return key if shape == () else jax.random.split(key, shape)
    if dtype == jnp.bool_:
        return jax.random.bernoulli(key, 0.5, shape)
    if jnp.issubdtype(dtype, jnp.inexact):
        if jnp.dtype(dtype).itemsize < 2:  # float8 and smaller: sample wider, then round
            return jax.random.normal(key, shape, jnp.float32).astype(dtype)
        return jax.random.normal(key, shape, dtype)
    if jnp.issubdtype(dtype, jnp.unsignedinteger):
        if dtype == jnp.uint32 and shape[-1:] == (2,):
            return jax.random.bits(key, shape, jnp.uint32)
        return jax.random.randint(key, shape, 0, 16, dtype)
    if jnp.issubdtype(dtype, jnp.integer):
        return jax.random.randint(key, shape, -8, 8, dtype)
    raise TypeError(f"cannot generate inputs of dtype {dtype}")


def aval_of(x: Any) -> str:
    try:
        return jc.aval_str(jax.typeof(x))
    except Exception:
        return type(x).__name__


def describe(target: Any, args: list[Any], kwargs: dict[str, Any], statics: set[int], static_names: set[str]) -> tuple[InputLeaf, ...]:
    """The concrete inputs, labelled by parameter name and pytree path, for display."""
    try:
        names = list(inspect.signature(target).bind(*args, **kwargs).arguments)
    except (TypeError, ValueError):
        names = [f"arg{i}" for i in range(len(args))] + list(kwargs)
    values = [*args, *kwargs.values()]
    if len(names) != len(values):  # *args / **kwargs parameters: label by position instead
        names = [f"arg{i}" for i in range(len(args))] + list(kwargs)
    static = [i in statics for i in range(len(args))] + [k in static_names for k in kwargs]
    out: list[InputLeaf] = []
    for name, value, is_static in zip(names, values, static, strict=False):
        if is_static:
            out.append(InputLeaf(name, "static", (repr(value)[:60],)))
            continue
        for path, leaf in jax.tree_util.tree_flatten_with_path(value)[0]:
            if not is_array(leaf):  # a maker's static leaf
                out.append(InputLeaf(name + jax.tree_util.keystr(path), "static", (repr(leaf)[:60],)))
                continue
            host, _ = as_host(leaf)
            size = int(host.size) if host is not None else 0
            out.append(InputLeaf(name + jax.tree_util.keystr(path), aval_of(leaf), preview(host) if host is not None else (), size))
    return tuple(out)
