"""Python values -> ``--args`` text, so a call made in Python can be replayed in a worker or the app.

`jaxscope.show(fn, x, training=True)` opens the app on ``file.py::fn --args 'f32[8,4], training=True'``
and ``jaxscope.export("file.py::fn", x, ...)`` traces in a worker: both need the arguments as text.
Arrays (anything with a shape and a dtype, e.g. a jax or numpy array or a ``jax.ShapeDtypeStruct``)
become their jaxpr notation, spec strings (``"f32[8,4]"``) are kept, other literals are written with
`repr` and so become static. No jax import: dtypes are read by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from jaxscope.schema.errors import JaxscopeError
from jaxscope.targets import argspec

_LITERALS = (bool, int, float, complex, str, bytes, type(None))


class ArgValueError(JaxscopeError, TypeError):
    """A value that has no ``--args`` form (a custom object, an unhashable static...). Remedy: give
    the inputs by a maker (`inputs="file.py::make_inputs"`)."""


def dtype_name(dtype: Any) -> str:
    """The canonical argspec dtype name (``float32``, ``bfloat16``, ``key``) of a numpy/jax dtype."""
    name = str(getattr(dtype, "name", dtype))
    if name.startswith("key<"):  # typed PRNG keys: key<fry>, key<rbg>, ...
        return "key"
    if name not in argspec.DTYPES:
        raise ArgValueError(f"dtype {name!r} has no spec form (known: {', '.join(argspec.SHORT_TO_LONG)})")
    return argspec.DTYPES[name]


def value_spec(value: Any, where: str = "argument") -> argspec.Spec:
    """The spec of one value; ArgValueError (naming `where`) for what cannot be written as a spec."""
    if isinstance(value, str):
        try:
            spec = argspec.parse_spec(value)
        except argspec.SpecError:
            return argspec.StaticValue(value)
        return spec if argspec.contains_array(spec) else argspec.StaticValue(value)
    if hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, _LITERALS):
        return argspec.ArraySpec(dtype_name(value.dtype), tuple(int(d) for d in value.shape))
    if type(value) is dict:
        items = tuple((k, value_spec(v, f"{where}[{k!r}]")) for k, v in value.items())
        if not all(isinstance(k, _LITERALS) for k, _ in items):
            raise ArgValueError(f"{where}: dict keys must be literals")
        if any(argspec.contains_array(s) for _, s in items):
            return argspec.DictSpec(items)
        return argspec.StaticValue(value)
    if type(value) in (list, tuple):
        specs = tuple(value_spec(v, f"{where}[{i}]") for i, v in enumerate(value))
        if any(argspec.contains_array(s) for s in specs):
            return argspec.TupleSpec(specs) if type(value) is tuple else argspec.ListSpec(specs)
        return argspec.StaticValue(value)
    if isinstance(value, _LITERALS):
        return argspec.StaticValue(value)
    raise ArgValueError(
        f"{where} is a {type(value).__qualname__}, which has no --args form: pass arrays, dicts/lists/tuples of them, or Python literals"
    )


def call_text(args: Iterable[Any] = (), kwargs: Mapping[str, Any] | None = None) -> str:
    """The ``--args`` text for a call; it parses back (`argspec.parse_call`) to the same specs."""
    call = argspec.CallSpec(
        args=tuple(value_spec(v, f"argument {i}") for i, v in enumerate(args)),
        kwargs=tuple((k, value_spec(v, f"argument {k!r}")) for k, v in (kwargs or {}).items()),
    )
    text = argspec.format_call(call)
    try:
        argspec.parse_call(text)
    except argspec.SpecError as exc:  # e.g. a float nan, whose repr is not a literal
        raise ArgValueError(f"the arguments cannot be written as --args ({text!r}): {exc}") from None
    return text
