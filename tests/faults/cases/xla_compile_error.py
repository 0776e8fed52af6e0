"""Traces and lowers fine; XLA refuses to compile it (no handler for this custom call on any platform)."""

import jax


def f(x):
    return jax.ffi.ffi_call("jaxscope_no_such_target", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
