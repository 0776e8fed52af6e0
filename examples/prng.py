"""PRNG keys: split, fold_in, and a reused key.

What it teaches: JAX has no hidden global random state. A key is an explicit value, and the
same key always gives the same numbers. To get fresh randomness, derive new keys:
`jax.random.split(key)` makes independent keys, and `jax.random.fold_in(key, n)` mixes a number
(a step or a layer index) into a key. Each key should be consumed once. Using one key for two
draws, as `reused_key` does, traces and runs without error, but the two "random" arrays are
identical: jaxscope flags it. `fixed_key` splits first.

What to look at: in `sample`, [line 25](show::25) is a [random_split](show:random_split)
of one key into three, then a `slice` and `squeeze` per new key; the first one is returned, so
the caller can carry on from it. The traced `step` is mixed in by a
[random_fold_in](show:random_fold_in). Each draw is a [random_bits](show:random_bits) deep
inside the `normal` and `bernoulli` sub-graphs, and each one starts from a different key.

Try: trace `reused_key`: both `random_bits` read the same key input; in `fixed_key` they read
the two halves of a `random_split`.
"""

import jax
import jax.numpy as jnp


def sample(key, x, step):
    key, noise_key, drop_key = jax.random.split(key, 3)
    drop_key = jax.random.fold_in(drop_key, step)  # a different mask for every step
    noise = 0.1 * jax.random.normal(noise_key, x.shape)
    keep = jax.random.bernoulli(drop_key, 0.9, x.shape)
    return jnp.where(keep, x + noise, 0.0) / 0.9, key


def reused_key(key, x):
    a = jax.random.normal(key, x.shape)
    b = jax.random.normal(key, x.shape)  # same key: b is identical to a
    return x + (a - b)  # always exactly x


def fixed_key(key, x):
    key_a, key_b = jax.random.split(key)
    a = jax.random.normal(key_a, x.shape)
    b = jax.random.normal(key_b, x.shape)
    return x + (a - b)


JAXSCOPE_ARGS = {
    "sample": "key[], f32[4,8], i32[]",
    "reused_key": "key[], f32[4,8]",
    "fixed_key": "key[], f32[4,8]",
}
JAXSCOPE_MAIN = "sample"

if __name__ == "__main__":
    key, x = jax.random.key(0), jnp.ones((2, 3))
    print(reused_key(key, x))  # all ones: a - b == 0
    print(fixed_key(key, x))
    y, key = sample(key, x, 1)
    print(y)
