"""The "make this argument static" fix for tracer errors, as a rewrite of the call-argument text.

A tracer error says which argument's value Python needed (`n` in ``for i in range(n)``). When that
argument is a traced scalar, passing a Python value instead makes jit treat it as static, which
is what `static_argnums` does: the value is baked in and each new value retraces.
"""

from __future__ import annotations

from jaxscope.targets import argspec
from jaxscope.targets.discover import FunctionInfo, bind_call

_DEFAULTS = {"bool": "True", "float": "1.0", "int": "1", "uint": "1", "complex": "1j"}


def static_suggestion(fn: FunctionInfo, args: str, param: str) -> str | None:
    """A literal to offer for `param` if it is a traced scalar in `args`: its default, else by dtype.

    None when the fix does not apply: unknown parameter, a pytree path, or a non-scalar array
    (arrays are not hashable, so they cannot be static: the fix there is `lax.cond` & co.).
    """
    try:
        spec = bind_call(fn, argspec.parse_call(args)).get(param)
    except argspec.SpecError:
        return None
    if not isinstance(spec, argspec.ArraySpec) or spec.shape != () or spec.dtype == "key":
        return None
    default = next((p.default for p in fn.params if p.name == param), None)
    if default is not None:
        try:
            if isinstance(argspec.parse_spec(default), argspec.StaticValue):
                return default
        except argspec.SpecError:
            pass
    family = "float" if spec.dtype == "bfloat16" else spec.dtype.rstrip("0123456789")
    return _DEFAULTS.get(family, "1")


def make_static(fn: FunctionInfo, args: str, param: str, value: str) -> str:
    """`args` with `param` given the Python literal `value`; raises SpecError on a bad value."""
    literal = argspec.parse_spec(value)
    if not isinstance(literal, argspec.StaticValue):
        raise argspec.SpecError(f"{value!r} is an array spec, not a Python value", value, None)
    call = argspec.parse_call(args)
    positional = [p.name for p in fn.params if p.kind in ("positional_only", "positional")]
    new_args = list(call.args)
    index = positional.index(param) if param in positional else -1
    if 0 <= index < len(new_args):
        new_args[index] = literal
        kwargs = call.kwargs
    else:
        kwargs = tuple((k, literal if k == param else s) for k, s in call.kwargs)
        if param not in dict(call.kwargs):
            kwargs += ((param, literal),)
    return argspec.format_call(argspec.CallSpec(tuple(new_args), kwargs))
