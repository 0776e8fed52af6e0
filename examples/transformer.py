"""A small transformer: a realistic train step of about 600 equations.

What it teaches: a whole training step is still one pure function, traced once. The model is
plain jax.numpy: layer norm, causal multi-head attention with a softmax, an MLP with gelu, and
residual connections, in two blocks. The Python `for` over the layer list is unrolled while
tracing, so the block's equations appear twice in the forward pass, and twice more, reversed
and transposed, in the backward pass that `jax.value_and_grad` adds. The parameters are a pytree
(a dict holding a list of per-layer dicts), and `train_step` returns the new one.

What to look at: the projections and the attention scores are
[dot_general](show:dot_general)s (the scores with a head batch dimension); the
[softmax on line 41](show::41) is a reduce_max/exp/reduce_sum chain, forward and backward; the
token lookup `params["embed"][tokens]` is a [gather](show:gather), and its gradient a
scatter-add. [Line 90](show::90) is the SGD update: one `mul` and one `sub` per parameter leaf.
Library helpers that are jitted themselves (`jnp.where`, `jnp.tril`, `log_softmax`) stay
nested `jit` clusters.

Try: add a third layer dict to the inputs (the loop unrolls once more), or change the
sequence length from 16 to 64 (in `pos`, `tokens` and `targets`): the same program, bigger shapes.
"""

import jax
import jax.numpy as jnp
from jax import lax


def layer_norm(x, scale, bias, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + eps) * scale + bias


def attention(x, p, n_heads):
    seq, d = x.shape
    head_dim = d // n_heads
    q, k, v = jnp.split(x @ p["wqkv"], 3, axis=-1)  # each [seq, d]
    q, k, v = (t.reshape(seq, n_heads, head_dim).transpose(1, 0, 2) for t in (q, k, v))
    scores = jnp.einsum("hqd,hkd->hqk", q, k) / jnp.sqrt(head_dim)
    causal = jnp.tril(jnp.ones((seq, seq), dtype=bool))
    scores = jnp.where(causal, scores, -1e9)  # a position sees only itself and the past
    weights = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("hqk,hkd->hqd", weights, v)
    return out.transpose(1, 0, 2).reshape(seq, d) @ p["wo"]


def mlp(x, p):
    return jax.nn.gelu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


def block(x, p, n_heads):
    x = x + attention(layer_norm(x, p["ln1_scale"], p["ln1_bias"]), p, n_heads)
    return x + mlp(layer_norm(x, p["ln2_scale"], p["ln2_bias"]), p)


def forward(params, tokens, n_heads=4):
    x = params["embed"][tokens] + params["pos"]  # [seq, d_model]
    for p in params["layers"]:  # unrolled: one copy of the block per layer
        x = block(x, p, n_heads)
    x = layer_norm(x, params["ln_f_scale"], params["ln_f_bias"])
    return x @ params["embed"].T  # logits [seq, vocab], tied to the embedding


def loss(params, tokens, targets):
    logp = jax.nn.log_softmax(forward(params, tokens), axis=-1)
    return -jnp.take_along_axis(logp, targets[:, None], axis=-1).mean()


def init(key, vocab=64, seq=16, d_model=32, d_mlp=128, n_layers=2):
    keys = iter(jax.random.split(key, 2 + 4 * n_layers))

    def dense(n_in, n_out):
        return jax.random.normal(next(keys), (n_in, n_out)) / jnp.sqrt(n_in)

    layer = lambda: {  # noqa: E731 - a lambda keeps the example short
        "ln1_scale": jnp.ones(d_model), "ln1_bias": jnp.zeros(d_model),
        "wqkv": dense(d_model, 3 * d_model), "wo": dense(d_model, d_model),
        "ln2_scale": jnp.ones(d_model), "ln2_bias": jnp.zeros(d_model),
        "w1": dense(d_model, d_mlp), "b1": jnp.zeros(d_mlp),
        "w2": dense(d_mlp, d_model), "b2": jnp.zeros(d_model),
    }
    return {
        "embed": dense(vocab, d_model), "pos": dense(seq, d_model) * 0.1,
        "layers": [layer() for _ in range(n_layers)],
        "ln_f_scale": jnp.ones(d_model), "ln_f_bias": jnp.zeros(d_model),
    }


def train_step(params, tokens, targets, lr=0.05):
    value, grads = jax.value_and_grad(loss)(params, tokens, targets)
    new_params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
    return new_params, value


JAXSCOPE_ARGS = {
    "train_step": "{'embed': f32[64,32], 'pos': f32[16,32], 'layers': ["
    "{'ln1_scale': f32[32], 'ln1_bias': f32[32], 'wqkv': f32[32,96], 'wo': f32[32,32], "
    "'ln2_scale': f32[32], 'ln2_bias': f32[32], 'w1': f32[32,128], 'b1': f32[128], "
    "'w2': f32[128,32], 'b2': f32[32]}, "
    "{'ln1_scale': f32[32], 'ln1_bias': f32[32], 'wqkv': f32[32,96], 'wo': f32[32,32], "
    "'ln2_scale': f32[32], 'ln2_bias': f32[32], 'w1': f32[32,128], 'b1': f32[128], "
    "'w2': f32[128,32], 'b2': f32[32]}], "
    "'ln_f_scale': f32[32], 'ln_f_bias': f32[32]}, i32[16], i32[16], lr=0.05",
    "loss": "{'embed': f32[64,32], 'pos': f32[16,32], 'layers': ["
    "{'ln1_scale': f32[32], 'ln1_bias': f32[32], 'wqkv': f32[32,96], 'wo': f32[32,32], "
    "'ln2_scale': f32[32], 'ln2_bias': f32[32], 'w1': f32[32,128], 'b1': f32[128], "
    "'w2': f32[128,32], 'b2': f32[32]}, "
    "{'ln1_scale': f32[32], 'ln1_bias': f32[32], 'wqkv': f32[32,96], 'wo': f32[32,32], "
    "'ln2_scale': f32[32], 'ln2_bias': f32[32], 'w1': f32[32,128], 'b1': f32[128], "
    "'w2': f32[128,32], 'b2': f32[32]}], "
    "'ln_f_scale': f32[32], 'ln_f_bias': f32[32]}, i32[16], i32[16]",
    "forward": "{'embed': f32[64,32], 'pos': f32[16,32], 'layers': ["
    "{'ln1_scale': f32[32], 'ln1_bias': f32[32], 'wqkv': f32[32,96], 'wo': f32[32,32], "
    "'ln2_scale': f32[32], 'ln2_bias': f32[32], 'w1': f32[32,128], 'b1': f32[128], "
    "'w2': f32[128,32], 'b2': f32[32]}, "
    "{'ln1_scale': f32[32], 'ln1_bias': f32[32], 'wqkv': f32[32,96], 'wo': f32[32,32], "
    "'ln2_scale': f32[32], 'ln2_bias': f32[32], 'w1': f32[32,128], 'b1': f32[128], "
    "'w2': f32[128,32], 'b2': f32[32]}], "
    "'ln_f_scale': f32[32], 'ln_f_bias': f32[32]}, i32[16], n_heads=4",
    "block": "f32[16,32], {'ln1_scale': f32[32], 'ln1_bias': f32[32], 'wqkv': f32[32,96], "
    "'wo': f32[32,32], 'ln2_scale': f32[32], 'ln2_bias': f32[32], 'w1': f32[32,128], "
    "'b1': f32[128], 'w2': f32[128,32], 'b2': f32[32]}, 4",
    "attention": "f32[16,32], {'wqkv': f32[32,96], 'wo': f32[32,32]}, 4",
    "mlp": "f32[16,32], {'w1': f32[32,128], 'b1': f32[128], 'w2': f32[128,32], 'b2': f32[32]}",
    "layer_norm": "f32[16,32], f32[32], f32[32]",
    "init": "key[]",
}
JAXSCOPE_MAIN = "train_step"

if __name__ == "__main__":
    params = init(jax.random.key(0))
    tokens = jax.random.randint(jax.random.key(1), (16,), 0, 64)
    targets = jnp.roll(tokens, -1)  # learn to predict the next token of one fixed sequence
    step = jax.jit(train_step)
    for i in range(101):
        params, value = step(params, tokens, targets)
        if i % 25 == 0:
            print(f"step {i}: loss {value:.3f}")
