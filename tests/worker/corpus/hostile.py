"""Corpus: user-controlled strings that must survive trace -> graph -> DOT/SVG/JSON intact."""

import jax
import jax.numpy as jnp

NASTY = '<script>alert("x")</script> \\N \\l \\G & \' " \x00 \x01 \u202eevil 函数 😀 ' + "y" * 300


def hostile(tree, mode):
    with jax.named_scope(NASTY):
        out = {k: jnp.sin(v) for k, v in tree.items()}
    with jax.named_scope(mode):  # a static string argument
        return out, jnp.cos(out[sorted(out)[0]])
