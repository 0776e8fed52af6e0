"""Exceptions from user code -> structured ErrorInfo with the user's line and a hint."""

from __future__ import annotations

import re

from jaxscope.schema.errors import JaxscopeError
from jaxscope.schema.trace import ErrorInfo, ErrorKind
from jaxscope.worker.userframes import innermost_location, user_frames

_TRACER_ERRORS = {
    "TracerBoolConversionError": (
        "Python `if`/`while`/`and`/`or` needs a concrete bool, but this value is traced. "
        "Stage it with `jax.lax.cond` / `jax.lax.while_loop` / `jnp.where`, or make the argument static "
        "(pass a Python value instead of an array spec)."
    ),
    "TracerIntegerConversionError": (
        "A traced value was used as a Python int (e.g. `range(x)` or indexing a list). Use `jax.lax.fori_loop`, "
        "or make the argument static."
    ),
    "ConcretizationTypeError": (
        "A concrete value was needed (e.g. `int(x)`, `float(x)`, a shape) but the value is traced. "
        "Make the argument static or restructure with `jax.lax` control flow."
    ),
    "TracerArrayConversionError": (
        "A traced array was converted to NumPy (`np.asarray(x)`, a NumPy function on a jax array). Use `jax.numpy`."
    ),
    "NonConcreteBooleanIndexError": (
        "Boolean-mask indexing gives a data-dependent shape, which jit cannot trace. Use `jnp.where(mask, x, 0)` "
        "or the `size=` argument of `jnp.nonzero`."
    ),
    "UnexpectedTracerError": (
        "A tracer escaped its trace (a side effect stored it, e.g. in a global). Return values instead of storing them."
    ),
    "KeyReuseError": "A PRNG key was used twice. Split it with `jax.random.split` and use each key once.",
}


class TraceError(JaxscopeError):
    """A failure the worker replies with (the user's code raised while tracing, lowering or
    running): its ErrorInfo says what, where, whose, and a hint of what to change."""

    def __init__(self, info: ErrorInfo) -> None:
        super().__init__(info.message)
        self.info = info


_ARGUMENT = re.compile(r"depends on the value of the argument (\S+?)\.?(?:\s|$)")


def classify(exc: BaseException, phase: str) -> ErrorInfo:
    """Turn an exception raised while running user code into an ErrorInfo."""
    name = type(exc).__name__
    message = str(exc) or name
    kind: ErrorKind
    hint = ""
    if isinstance(exc, SystemExit):
        kind, message = "exit", f"user code called sys.exit({exc.code!r})"
    elif isinstance(exc, KeyboardInterrupt):
        kind, message = "cancelled", "interrupted"
    elif isinstance(exc, MemoryError):
        kind, message = "memory", "the worker ran out of memory (it has a memory cap)"
    elif chip_held(message):
        kind, message = "device-busy", CHIP_HELD
    elif isinstance(exc, RecursionError):
        kind = "user-code"
        hint = "Unbounded recursion in the traced code."
    elif name in _TRACER_ERRORS:
        kind, hint = "tracer", _TRACER_ERRORS[name]
    elif isinstance(exc, TypeError) and "concrete values" in message:
        kind, hint = "tracer", _TRACER_ERRORS["ConcretizationTypeError"]
    elif isinstance(exc, TypeError) and "immutable" in message:
        kind = "user-code"
        hint = "JAX arrays are immutable: write `x = x.at[i].set(y)` (or `.add`, `.min`, ...) and use the new array."
    elif "which is not a valid JAX type" in message:
        kind = "user-code"
        hint = "jaxscope traces functions that return arrays or pytrees (dicts/lists/tuples) of arrays."
    elif phase == "load":
        kind = "import"
        if isinstance(exc, ImportError):
            import sys

            hint = f"The worker runs {sys.executable}; install the missing package into that environment."
    else:
        kind = "user-code"
    argument = ""
    if kind == "tracer":
        m = _ARGUMENT.search(message)
        argument = m.group(1) if m else ""
    return ErrorInfo(
        kind=kind,
        message=_first_paragraphs(message),
        phase=phase,
        exc_type=name,
        location=innermost_location(exc.__traceback__),
        traceback=tuple(user_frames(exc.__traceback__)),
        hint=hint,
        argument=argument,
    )


CHIP_HELD = (
    "The TPU is held by another program (a TPU admits one process at a time): close that program (a notebook, a "
    "training run, another jaxscope) or run on the CPU alone (JAX_PLATFORMS=cpu; in the window, Run: Backends: CPU only)."
)


def chip_held(message: str) -> bool:
    """libtpu's refusal of a second process: its lockfile (`/tmp/libtpu_lockfile`) is taken."""
    text = message.lower()
    return "libtpu" in text and ("lockfile" in text or "already in use" in text)


def _first_paragraphs(message: str, limit: int = 4000) -> str:
    # JAX messages end with long links sections; keep them but cap runaway messages.
    return message if len(message) <= limit else message[: limit - 1] + "…"
