"""The compiled program priced by XLA's own cost model per instruction (issue 57): the sum over the
instructions equals XLA's `cost_analysis()` of the whole program, on random convolutions, pooling,
cumulative sums, attention; a loop body is counted its trip count times; StableHLO links work for
every program a corpus of primitives lowers."""

from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax

from jaxscope.analysis.hlo_cost import hlo_cost
from jaxscope.schema.hlo import HloRequest
from jaxscope.schema.trace import FunctionRef
from jaxscope.worker.hlo import run_hlo
from jaxscope.worker.xla_cost import instruction_costs, price


def priced_against_xla(f, *args):
    compiled = jax.jit(f).lower(*args).compile()
    text = compiled.as_text()
    priced = price(text, jax.devices()[0].client)
    assert priced.failures == [], priced.failures
    xla = compiled.cost_analysis()
    xla = xla[0] if isinstance(xla, list) else xla
    ours = [sum(v[k] for v in priced.by_line.values()) for k in range(3)]
    return ours, (xla.get("flops", 0.0), xla.get("transcendentals", 0.0), xla.get("bytes accessed", 0.0)), priced, text


@settings(max_examples=25, deadline=None)
@given(
    stride=st.integers(1, 3),
    pad=st.tuples(st.integers(0, 3), st.integers(0, 3)),
    lhs_dilation=st.integers(1, 2),
    rhs_dilation=st.integers(1, 3),
    groups=st.sampled_from((1, 2)),
    size=st.integers(7, 15),
    grad=st.booleans(),
)
def test_random_convolutions_sum_to_xlas_count(stride, pad, lhs_dilation, rhs_dilation, groups, size, grad):
    def conv(x, k):
        y = lax.conv_general_dilated(
            x, k, (stride, stride), (pad, pad), (lhs_dilation, lhs_dilation), (rhs_dilation, rhs_dilation), feature_group_count=groups
        )
        return (y * y).sum()

    f = jax.grad(conv, argnums=(0, 1)) if grad else conv
    ours, xla, _, _ = priced_against_xla(f, jnp.ones((2, 4, size, size + 2)), jnp.ones((6, 4 // groups, 3, 2)))
    assert ours[0] == xla[0] and ours[1] == xla[1]


@pytest.mark.parametrize(
    "name",
    ["pooling_grad", "cumsum", "attention_grad", "sort_topk", "while_free"],
)
def test_programs_without_loops_sum_to_xlas_count_exactly(name):
    programs = {
        "pooling_grad": (
            jax.grad(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME").sum()),
            (jnp.ones((2, 9, 9, 3)),),
        ),
        "cumsum": (lambda x: jnp.cumsum(x, axis=0) + jnp.cumprod(x, axis=1).sum(), (jnp.ones((64, 32)),)),
        "attention_grad": (
            jax.grad(lambda q, k, v: (jax.nn.softmax(q @ k.T / 4.0) @ v).sum(), argnums=(0, 1, 2)),
            (jnp.ones((32, 16)), jnp.ones((32, 16)), jnp.ones((32, 16))),
        ),
        "sort_topk": (lambda x: lax.top_k(x, 4)[0].sum() + jnp.sort(x, axis=0).sum(), (jnp.ones((16, 8)),)),
        "while_free": (lambda x: jnp.tanh(x @ x.T).mean(axis=0) * jnp.exp(x).sum(), (jnp.ones((8, 24)),)),
    }
    f, args = programs[name]
    ours, xla, _, _ = priced_against_xla(f, *args)
    assert ours[:2] == list(xla[:2])  # FLOPs and transcendentals: XLA's, exactly
    assert abs(ours[2] - xla[2]) <= 0.01 * xla[2]  # bytes: XLA also counts a few of the entry's tuple and copies


def test_a_loop_body_counts_its_trips_and_xlas_figure_is_the_body_once():
    def body(c, x):
        return jnp.tanh(c @ x), None

    f = lambda c, xs: lax.scan(body, c, xs)[0].sum()  # noqa: E731
    ours, xla, priced, text = priced_against_xla(f, jnp.ones((8, 8)), jnp.ones((6, 8, 8)))
    assert ours[0] == xla[0]  # every instruction once: XLA's own count
    assert {r for r in priced.runs.values()} >= {1.0, 6.0} and priced.unknown_trips == 0
    costs = instruction_costs(text, jax.devices()[0])
    counted = hlo_cost(text, costs)
    looped = sum(flops * (runs - 1) for _, flops, _, _, runs in costs.rows)
    assert counted.once.flops == xla[0] and counted.total.flops == xla[0] + looped and looped > 0
    assert counted.source == "xla" and costs.backend == "cpu"


CORPUS = """import jax
import jax.numpy as jnp
from jax import lax


def f(x, i):
    y = jnp.cumsum(x, axis=0) * jnp.cumprod(x, axis=1) + lax.cummax(x, axis=0)
    y = y + lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "SAME") + jax.nn.relu(x) + lax.erf(x)
    y = y + jnp.sort(x, axis=1) + lax.top_k(x, 4)[0].sum() + jnp.argsort(x, axis=0).astype(jnp.float32)
    y = y + lax.cond(i > 0, jnp.sin, jnp.cos, x) + lax.scan(lambda c, r: (c + r, c * r), x[0], x)[1]
    y = y + lax.fori_loop(0, 3, lambda k, c: c * 1.5, x) + lax.conv(x[None, None], x[None, None, :3, :3], (1, 1), "SAME")[0, 0]
    return y.at[i].set(1.0) @ x.T
"""


@pytest.mark.parametrize("stage", ["stablehlo", "compiled"])
def test_every_program_of_a_corpus_of_primitives_is_linked_exactly(tmp_path: pathlib.Path, stage: str):
    """Issue 57.6: a program with cumsum or cumprod lowered, but its StableHLO had no exact links."""
    (tmp_path / "prims.py").write_text(CORPUS)
    result = run_hlo(HloRequest(FunctionRef("f", str(tmp_path / "prims.py")), "f32[16,16], i32[]", stage), lambda p: None)  # type: ignore[arg-type]
    assert result.exact is not None
    if stage == "compiled":
        assert result.priced is not None and result.priced.rows and result.priced.failures == ()
        assert sum(r[1] for r in result.priced.rows) == result.cost["flops"]


def test_a_tpus_tiled_layouts_and_memory_spaces_are_read_and_priced():
    """Issue 57.1: the text pattern rejected TPU layouts (`{1,0:T(8,128)S(1)}`): 0 FLOPs on a TPU. XLA's
    parser reads any backend's layouts; the same program with TPU tiles prices as XLA counts it."""
    import re

    f = lambda x, w: jnp.tanh(x @ w).sum()  # noqa: E731
    compiled = jax.jit(f).lower(jnp.ones((16, 128)), jnp.ones((128, 256))).compile()
    tpu = re.sub(r"\{1,0\}", "{1,0:T(8,128)}", compiled.as_text())
    tpu = re.sub(r"(f32\[16,256\])\{1,0:T\(8,128\)\}", r"\1{1,0:T(8,128)S(1)}", tpu)
    assert "T(8,128)S(1)" in tpu
    priced = price(tpu, jax.devices()[0].client)
    assert priced.failures == [] and sum(v[0] for v in priced.by_line.values()) == compiled.cost_analysis()["flops"]


ATTENTION = """import jax
import jax.numpy as jnp


def attn(p, x):
    q, k, v = x @ p["q"], x @ p["k"], x @ p["v"]
    s = jax.nn.softmax(q @ k.T / 4.0, axis=-1)
    return ((s @ v) @ p["o"]).sum()


def step(p, x):
    return jax.grad(attn)(p, x)
"""


def test_every_dot_general_of_an_attention_step_has_its_compiled_lines_and_its_flops(tmp_path: pathlib.Path):
    """Issue 57.4: a dot merged with the transpose after it kept the transpose's name: the dot_general
    showed 0 FLOPs and no compiled line, and a transpose carried a quarter of the step's FLOPs."""
    from jaxscope.analysis import cost
    from jaxscope.analysis.hlo_cost import compiled_rows, merged_links
    from jaxscope.ir import hlo_marks
    from jaxscope.schema.graph import resolve
    from jaxscope.schema.trace import TraceRequest
    from jaxscope.worker.trace import run_trace

    (tmp_path / "attn.py").write_text(ATTENTION)
    ref = FunctionRef("step", str(tmp_path / "attn.py"))
    args = "{'q': f32[16,16], 'k': f32[16,16], 'v': f32[16,16], 'o': f32[16,16]}, f32[32,16]"
    graph = run_trace(TraceRequest(ref, args), lambda p: None).graph
    hlo = run_hlo(HloRequest(ref, args, "compiled"), lambda p: None)
    exact = hlo_marks.from_wire(hlo.exact)
    linked = {p for paths in merged_links(hlo.text, exact, hlo.priced, graph).values() for p in paths}
    dots = [p for p in (r.path for r in cost.rows(graph)) if resolve(graph, p)[1].label == "dot_general"]
    found = [r for r in cost.rows(graph) if not r.note]  # dead equations (XLA drops them) aside
    live_dots = [r.path for r in found if r.path in dots]
    assert len(live_dots) >= 14 and set(live_dots) <= linked, sorted(set(live_dots) - linked)
    rows, unclaimed, counted = compiled_rows(found, hlo.text, exact, hlo.priced, graph)
    assert counted.total.flops == hlo.cost["flops"] and unclaimed.flops == 0
    assert all(r.cost.flops == 0 for r in rows if resolve(graph, r.path)[1].label == "transpose")
    assert all(r.cost.flops > 0 for r in rows if r.path in live_dots)


def test_an_nnx_step_with_dropout_is_priced_whole_with_its_loops():
    """Issue 57.5: jax 0.12 puts the threefry loops of Dropout inside an XLA `call`: they were lost (below
    even XLA's body-once count); and instructions with control predecessors would not price alone."""
    from jaxscope.schema.trace import FILE_INPUTS

    path = pathlib.Path(__file__).parent / "corpus" / "nnx_dropout.py"
    hlo = run_hlo(HloRequest(FunctionRef("step", str(path)), "", "compiled", inputs=FILE_INPUTS), lambda p: None)
    assert hlo.priced is not None and hlo.priced.failures == ()
    counted = hlo_cost(hlo.text, hlo.priced)
    assert counted.once.flops == hlo.cost["flops"] and counted.total.flops >= counted.once.flops
