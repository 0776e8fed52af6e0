"""The benchmark workloads: user files written to a temp dir, with their argument specs.

Each workload is a plain Python file like a user would write (nothing from jaxscope imported),
traced through jaxscope with the spec text in `Workload.args` (core.argspec notation), and by the
bare `jax.make_jaxpr` script of `bare_script` with the same abstract arguments.

Families (all train steps: forward + backward + update, every argument abstract):

* ``mlp``      unrolled MLP: `relu(h @ w + b)` per layer in a Python loop, MSE, `jax.grad`, SGD.
* ``gpt``      GPT-style decoder in plain jax.numpy (layer norm, causal multi-head attention with
               softmax, GELU MLP, tied embeddings, cross-entropy), L blocks unrolled in Python,
               `jax.value_and_grad`, SGD.
* ``gpt_scan`` the same model with the block parameters stacked and `lax.scan` over 4 groups of
               k blocks (the scan body holds k unrolled blocks): a small top level, big scan
               bodies (forward scan + transposed backward scan).
* ``gpt_jit``  the same model with each block a `jax.jit` function: jit-structured code, where
               JAX traces the block once and reuses its jaxpr (the issue's "jit-structured" target).

Sizes are tuned so the total equation count (sub-jaxprs included) is about 1k, 10k and 50k.
"""

from __future__ import annotations

import os
import re
import textwrap
from dataclasses import dataclass

SIZES = ("1k", "10k", "50k")

# family -> size -> the size parameter (layers, or blocks per scan body)
PARAMS: dict[str, dict[str, int]] = {
    "mlp": {"1k": 50, "10k": 500, "50k": 2500},
    "gpt": {"1k": 3, "10k": 38, "50k": 190},
    "gpt_scan": {"1k": 3, "10k": 34, "50k": 170},
    "gpt_jit": {"1k": 4, "10k": 40, "50k": 199},
}
FAMILIES = tuple(PARAMS)
KIND = {"mlp": "unrolled", "gpt": "unrolled", "gpt_scan": "scan", "gpt_jit": "jit-structured"}

MLP_SOURCE = """
import jax, jax.numpy as jnp

def warm(x):
    return jnp.sin(x) * 2.0

def train_step(params, x, y):
    def loss(params):
        h = x
        for w, b in zip(params["w"], params["b"]):
            h = jax.nn.relu(h @ w + b)
        return jnp.mean((h - y) ** 2)
    grads = jax.grad(loss)(params)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)
"""

GPT_COMMON = """
import math
import jax, jax.numpy as jnp
from jax import lax

N_HEADS = 4

def warm(x):
    return jnp.sin(x) * 2.0

def layernorm(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * lax.rsqrt(var + 1e-5) * g + b

def attention(p, x):
    B, T, D = x.shape
    dh = D // N_HEADS
    qkv = x @ p["wqkv"] + p["bqkv"]
    q, k, v = jnp.split(qkv, 3, axis=-1)
    heads = lambda t: t.reshape(B, T, N_HEADS, dh).transpose(0, 2, 1, 3)
    q, k, v = heads(q), heads(k), heads(v)
    att = (q @ k.swapaxes(-1, -2)) / math.sqrt(dh)
    mask = jnp.tril(jnp.ones((T, T), bool))
    att = jnp.where(mask, att, -1e9)
    att = jax.nn.softmax(att, axis=-1)
    y = (att @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
    return y @ p["wo"] + p["bo"]

def mlp(p, x):
    return jax.nn.gelu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]

def block(p, x):
    x = x + attention(p, layernorm(x, p["ln1_g"], p["ln1_b"]))
    return x + mlp(p, layernorm(x, p["ln2_g"], p["ln2_b"]))

def head_loss(params, x, targets):
    x = layernorm(x, params["lnf_g"], params["lnf_b"])
    logp = jax.nn.log_softmax(x @ params["wte"].T, axis=-1)
    return -jnp.take_along_axis(logp, targets[..., None], axis=-1).mean()

def sgd(params, grads):
    return jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads)
"""

GPT_UNROLLED = """
def loss(params, tokens, targets):
    x = params["wte"][tokens] + params["wpe"][None]
    for p in params["blocks"]:
        x = block(p, x)
    return head_loss(params, x, targets)

def train_step(params, tokens, targets):
    l, g = jax.value_and_grad(loss)(params, tokens, targets)
    return sgd(params, g), l
"""

GPT_JIT = """
jit_block = jax.jit(block)

def loss(params, tokens, targets):
    x = params["wte"][tokens] + params["wpe"][None]
    for p in params["blocks"]:
        x = jit_block(p, x)
    return head_loss(params, x, targets)

def train_step(params, tokens, targets):
    l, g = jax.value_and_grad(loss)(params, tokens, targets)
    return sgd(params, g), l
"""

GPT_SCAN = """
def loss(params, tokens, targets):
    x = params["wte"][tokens] + params["wpe"][None]

    def body(x, group):  # group: the stacked parameters of k blocks
        for i in range(group["w1"].shape[0]):
            x = block(jax.tree.map(lambda a: a[i], group), x)
        return x, None

    x, _ = lax.scan(body, x, params["blocks"])
    return head_loss(params, x, targets)

def train_step(params, tokens, targets):
    l, g = jax.value_and_grad(loss)(params, tokens, targets)
    return sgd(params, g), l
"""

# GPT dimensions: d_model 64, 4 heads, sequence 16, vocabulary 128, batch 2; MLP width 16, batch 8
D, SEQ, VOCAB, BATCH = 64, 16, 128, 2
BLOCK_SHAPES = {
    "ln1_g": (D,), "ln1_b": (D,), "wqkv": (D, 3 * D), "bqkv": (3 * D,), "wo": (D, D), "bo": (D,),
    "ln2_g": (D,), "ln2_b": (D,), "w1": (D, 4 * D), "b1": (4 * D,), "w2": (4 * D, D), "b2": (D,),
}  # fmt: skip
SCAN_GROUPS = 4


@dataclass(frozen=True)
class Workload:
    family: str
    size: str
    n: int  # layers, or blocks per scan body
    source: str
    args: str  # core.argspec text
    function: str = "train_step"

    @property
    def name(self) -> str:
        return f"{self.family}-{self.size}"

    @property
    def kind(self) -> str:
        return KIND[self.family]

    def describe(self) -> str:
        if self.family == "gpt_scan":
            return f"gpt_scan {SCAN_GROUPS}x{self.n}"
        return f"{self.family} {self.n}"

    def write(self, directory: str) -> str:
        path = os.path.join(directory, f"bench_{self.family}_{self.size}.py")
        with open(path, "w") as fh:
            fh.write(self.source)
        return path


def _f32(shape: tuple[int, ...]) -> str:
    return "f32[" + ",".join(str(s) for s in shape) + "]"


def _block_spec(lead: tuple[int, ...] = ()) -> str:
    return "{" + ", ".join(f"'{k}': {_f32(lead + s)}" for k, s in BLOCK_SHAPES.items()) + "}"


def make(family: str, size: str) -> Workload:
    n = PARAMS[family][size]
    if family == "mlp":
        ws = ", ".join(["f32[16,16]"] * n)
        bs = ", ".join(["f32[16]"] * n)
        args = f"{{'w': [{ws}], 'b': [{bs}]}}, f32[8,16], f32[8,16]"
        return Workload(family, size, n, MLP_SOURCE, args)
    if family == "gpt_scan":
        blocks = _block_spec((SCAN_GROUPS, n))
        tail = GPT_SCAN
    else:
        blocks = "[" + ", ".join([_block_spec()] * n) + "]"
        tail = GPT_JIT if family == "gpt_jit" else GPT_UNROLLED
    params = f"{{'wte': f32[{VOCAB},{D}], 'wpe': f32[{SEQ},{D}], 'lnf_g': f32[{D}], 'lnf_b': f32[{D}], 'blocks': {blocks}}}"
    args = f"{params}, i32[{BATCH},{SEQ}], i32[{BATCH},{SEQ}]"
    return Workload(family, size, n, GPT_COMMON + tail, args)


GPT_SCOPED = """
def loss(params, tokens, targets):
    x = params["wte"][tokens] + params["wpe"][None]
    for i, p in enumerate(params["blocks"]):
        with jax.named_scope(f"block{i}"):  # as flax names its modules: one scope per block
            x = block(p, x)
    return head_loss(params, x, targets)

def train_step(params, tokens, targets):
    l, g = jax.value_and_grad(loss)(params, tokens, targets)
    return sgd(params, g), l
"""


SCOPED_200K = 760  # blocks of the 200k-equation scoped GPT: the window opens it collapsed (issue 33.7)


def scoped(size: str) -> Workload:
    """The unrolled GPT with a `jax.named_scope` per block: the scoped export's workload (issue 33),
    not one of the families every stage runs on; also at "200k" (the big open's memory)."""
    if size == "200k":
        blocks = "[" + ", ".join([_block_spec()] * SCOPED_200K) + "]"
        params = f"{{'wte': f32[{VOCAB},{D}], 'wpe': f32[{SEQ},{D}], 'lnf_g': f32[{D}], 'lnf_b': f32[{D}], 'blocks': {blocks}}}"
        return Workload("gpt_scoped", size, SCOPED_200K, GPT_COMMON + GPT_SCOPED, f"{params}, i32[{BATCH},{SEQ}], i32[{BATCH},{SEQ}]")
    w = make("gpt", size)
    return Workload("gpt_scoped", size, w.n, GPT_COMMON + GPT_SCOPED, w.args)


def all_workloads(sizes: tuple[str, ...] = SIZES, families: tuple[str, ...] = FAMILIES) -> list[Workload]:
    """In size order (small first), so a quick look at the output comes early."""
    return [make(f, s) for s in sizes for f in families]


DEFAULT_SKIP = {"gpt_jit-1k", "gpt_jit-10k"}  # gpt_jit is there for the jit-structured 50k target


def select(only: list[str] | None, quick: bool) -> list[Workload]:
    """`--only mlp` (a family), `--only gpt-10k` (one workload), `--only 10k` (a size); `--quick`: 1k.
    Without --only: every workload but gpt_jit at 1k and 10k (ask for them by name or family)."""
    sizes = ("1k",) if quick else SIZES
    chosen = all_workloads(sizes)
    if only:
        return [w for w in chosen if any(o in (w.family, w.size, w.name) for o in only)]
    return [w for w in chosen if w.name not in DEFAULT_SKIP]


# ------------------------------------------------------------------------------- bare make_jaxpr

_ARRAY = re.compile(r"\b(f32|i32)\[([0-9,]*)\]")


def python_args(args: str) -> str:
    """The spec text as a Python expression of `jax.ShapeDtypeStruct`s (named `S`), e.g.
    ``{'w': [f32[16,16]]}, f32[8,16]`` -> ``({'w': [S((16,16), 'float32')]}, S((8,16), 'float32'),)``."""
    dtypes = {"f32": "float32", "i32": "int32"}
    return "(" + _ARRAY.sub(lambda m: f"S(({m.group(2)}{',' if m.group(2) else ''}), '{dtypes[m.group(1)]}')", args) + ",)"


BARE_SCRIPT = textwrap.dedent("""
    import sys, time, json
    t_start = time.perf_counter()
    import importlib.util, jax, jax.numpy as jnp
    import_s = time.perf_counter() - t_start
    path, fn_name, args_expr, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    spec = importlib.util.spec_from_file_location("bench_user", path)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    S = jax.ShapeDtypeStruct
    args = eval(args_expr)
    if reps == 0:  # the "bare Python process" of the export comparison: no warm-up, one call
        closed = jax.make_jaxpr(getattr(m, fn_name))(*args)
        print(json.dumps({"eqns": len(closed.jaxpr.eqns)}))
        raise SystemExit(0)
    jax.make_jaxpr(lambda x: jnp.sin(x) + 1)(1.0)  # warm: JAX's one-off first-trace cost is not measured
    times = []
    for _ in range(reps):
        jax.clear_caches()
        t = time.perf_counter()
        closed = jax.make_jaxpr(getattr(m, fn_name))(*args)
        times.append(time.perf_counter() - t)
    def count(j):
        n = 0
        for e in j.eqns:
            n += 1
            for v in e.params.values():
                for x in (v if isinstance(v, (tuple, list)) else (v,)):
                    sub = getattr(x, "jaxpr", x)
                    if hasattr(sub, "eqns") and hasattr(sub, "invars"):
                        n += count(sub)
        return n
    print(json.dumps({"times": times, "top": len(closed.jaxpr.eqns), "total": count(closed.jaxpr), "import_s": import_s}))
""")
"""`python -c BARE_SCRIPT path function python_args(args) reps`: JAX imported and warmed, then `reps`
timed `jax.make_jaxpr` calls (caches cleared before each, as jaxscope's worker does). With reps 0:
import, one make_jaxpr, exit (the reference for `jaxscope export`)."""
