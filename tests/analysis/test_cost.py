"""Per-equation cost and liveness on hand-made graphs whose figures are known by hand."""

from __future__ import annotations

from jaxscope.analysis.cost import DEAD, FOLDED, UNREAD, Cost, by_key, leaf_cost, rows, total
from jaxscope.analysis.hlo_cost import hlo_cost, per_equation
from jaxscope.analysis.liveness import liveness
from jaxscope.schema.graph import Body, Edge, Graph, Node, SubgraphRef


def _eqn(
    node_id: str,
    label: str,
    ins: tuple[str, ...],
    outs: tuple[str, ...],
    numbers: tuple[tuple[str, tuple[int, ...]], ...] = (),
    stack: str = "",
    subgraphs: tuple[SubgraphRef, ...] = (),
) -> Node:
    return Node(node_id, "eqn", label, avals=outs, in_avals=ins, numbers=numbers, name_stack=stack, subgraphs=subgraphs)


def test_a_matmul_costs_2mnk_and_moves_its_operands_and_result() -> None:
    dot = _eqn("e0", "dot_general", ("f32[8,16]", "f32[16,32]"), ("f32[8,32]",), (("lhs_contracting", (1,)), ("rhs_contracting", (0,))))
    assert leaf_cost(dot) == Cost(2 * 8 * 32 * 16, 0, 4 * (8 * 16 + 16 * 32 + 8 * 32))
    batched = _eqn("e0", "dot_general", ("f32[4,8,16]", "f32[4,16,32]"), ("f32[4,8,32]",), (("lhs_batch", (0,)), ("lhs_contracting", (2,))))
    assert leaf_cost(batched).flops == 2 * 4 * 8 * 32 * 16
    same = (("padding", (1, 1, 1, 1)), ("window_strides", (1, 1)), ("lhs_dilation", (1, 1)), ("rhs_dilation", (1, 1)))
    specs = (("lhs_spec", (0, 1, 2, 3)), ("rhs_spec", (0, 1, 2, 3)), ("out_spec", (0, 1, 2, 3)))
    conv = _eqn("e0", "conv_general_dilated", ("f32[2,3,10,10]", "f32[4,3,3,3]"), ("f32[2,4,10,10]",), specs + same)
    # per spatial axis 10 outputs × 3 taps, less the 2 that fall on the padding: 28 (XLA's count)
    assert leaf_cost(conv).flops == 2 * (2 * 4) * 3 * 28 * 28


def test_elementwise_transcendental_and_reduction_ops_count_as_xla_counts_them() -> None:
    assert leaf_cost(_eqn("e0", "add", ("f32[4,8]", "f32[4,8]"), ("f32[4,8]",))).flops == 32
    tanh = leaf_cost(_eqn("e0", "tanh", ("f32[4,8]",), ("f32[4,8]",)))
    assert (tanh.flops, tanh.transcendentals) == (0, 32)
    assert leaf_cost(_eqn("e0", "reduce_sum", ("f32[4,8]",), ("f32[4]",), ())).flops == 28
    assert leaf_cost(_eqn("e0", "integer_pow", ("f32[8]",), ("f32[8]",), (("y", (3,)),))).flops == 16
    assert leaf_cost(_eqn("e0", "integer_pow", ("f32[8]",), ("f32[8]",), (("y", (1,)),))).flops == 0
    assert leaf_cost(_eqn("e0", "reshape", ("f32[4,8]",), ("f32[32]",))).flops == 0


def test_a_scan_costs_its_body_times_its_length_and_a_cond_its_dearest_branch() -> None:
    body = Body(
        "b1",
        "scan body",
        (
            Node("in0", "input", "c", avals=("f32[16]",)),
            _eqn("e0", "sin", ("f32[16]",), ("f32[16]",)),
            _eqn("e1", "mul", ("f32[16]", "f32[16]"), ("f32[16]",)),
        ),
        (),
        2,
        2,
    )
    cheap = Body("b2", "branch 0", (_eqn("e0", "neg", ("f32[16]",), ("f32[16]",)),), (), 1, 1)
    dear = Body(
        "b3",
        "branch 1",
        (_eqn("e0", "mul", ("f32[16]", "f32[16]"), ("f32[16]",)), _eqn("e1", "add", ("f32[16]", "f32[16]"), ("f32[16]",))),
        (),
        2,
        2,
    )
    top = Body(
        "b0",
        "f",
        (
            Node("in0", "input", "x", avals=("f32[16]",)),
            _eqn("e0", "scan", ("f32[16]",), ("f32[16]",), (("length", (10,)),), subgraphs=(SubgraphRef("scan body", "b1"),)),
            _eqn("e1", "cond", ("i32[]", "f32[16]"), ("f32[16]",), subgraphs=(SubgraphRef("b0", "b2"), SubgraphRef("b1", "b3"))),
            Node("out0", "output", "y"),
        ),
        (Edge("in0", "e0"), Edge("e0", "e1", 0, 1), Edge("e1", "out0")),
        2,
        25,
    )
    graph = Graph("f", {b.id: b for b in (top, body, cheap, dear)}, "b0")
    t = total(graph)
    assert (t.flops, t.transcendentals) == (10 * 16 + 2 * 16, 10 * 16)
    assert total(graph, rows(graph)) == t  # a cond: its dearest branch, not the rows' sum of both
    found = {r.path: r for r in rows(graph)}
    assert found["e0:0/e0"].runs == 10 and found["e0:0/e0"].cost.transcendentals == 160
    assert found["e1:1/e1"].note == "in a cond branch"


def test_dead_and_folded_equations_are_not_counted() -> None:
    top = Body(
        "b0",
        "f",
        (
            Node("in0", "input", "x", avals=("f32[8]",)),
            Node("e0.1", "literal", "1.0", avals=("f32[]",)),
            _eqn("e0", "mul", ("f32[8]", "f32[]"), ("f32[8]",)),  # x * 1.0: folded
            _eqn("e1", "sin", ("f32[8]",), ("f32[8]",)),  # read by nobody: dead
            _eqn("e2", "add", ("f32[8]", "f32[8]"), ("f32[8]",)),
            Node("out0", "output", "y"),
        ),
        (Edge("in0", "e0"), Edge("e0.1", "e0", 0, 1), Edge("in0", "e1"), Edge("e0", "e2"), Edge("in0", "e2", 0, 1), Edge("e2", "out0")),
        3,
        3,
    )
    graph = Graph("f", {"b0": top}, "b0")
    found = {r.path: r for r in rows(graph)}
    assert found["e0"].note == FOLDED and found["e1"].note == DEAD and found["e2"].note == ""
    assert total(graph) == Cost(8, 0, leaf_cost(top.nodes[4]).bytes) == total(graph, list(found.values()))  # summed from the rows alike
    assert by_key(list(found.values()), "primitive")["add"].flops == 8


def test_liveness_of_a_chain_peaks_where_the_biggest_values_meet() -> None:
    """x (4 KiB) -> a = big(x) 16 KiB -> b = small(a) 1 KiB -> y: after `big` x and a are alive
    (20 KiB); after `small` a is freed but x stays (an argument) with b (5 KiB)."""
    top = Body(
        "b0",
        "f",
        (
            Node("in0", "input", "x", avals=("f32[1024]",)),
            _eqn("e0", "big", ("f32[1024]",), ("f32[4096]",)),
            _eqn("e1", "small", ("f32[4096]",), ("f32[256]",)),
            Node("out0", "output", "y"),
        ),
        (Edge("in0", "e0", 0, 0, "f32[1024]"), Edge("e0", "e1", 0, 0, "f32[4096]"), Edge("e1", "out0", 0, 0, "f32[256]")),
        2,
        2,
    )
    live = liveness(Graph("f", {"b0": top}, "b0"))
    assert live.start == 4096
    assert live.in_use == [4096 + 16384, 4096 + 16384 + 1024]  # the step's peak: what it reads with what it makes
    assert live.peak == 4096 + 16384 + 1024 and live.peak_at == 1
    assert {v for v, _ in live.alive_at_peak} == {("in0", 0), ("e0", 0), ("e1", 0)}


def test_the_compiled_text_is_priced_per_instruction_and_shared_among_its_equations() -> None:
    text = "\n".join(
        [
            "HloModule jit_f",
            "%region_0.1 (a: f32[], b: f32[]) -> f32[] {",
            "  %a = f32[] parameter(0)",
            "  %b = f32[] parameter(1)",
            "  ROOT %add.9 = f32[] add(%a, %b)",  # a reduce's region: priced through the reduce
            "}",
            "ENTRY %main.3 (p0: f32[8,16], p1: f32[16,32]) -> f32[] {",
            "  %p0 = f32[8,16]{1,0} parameter(0)",
            "  %p1 = f32[16,32]{1,0} parameter(1)",
            "  %dot.1 = f32[8,32]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
            "  %exp.2 = f32[8,32]{1,0} exponential(%dot.1)",
            "  %c = f32[] constant(0)",
            "  ROOT %r = f32[] reduce(%exp.2, %c), dimensions={0,1}, to_apply=%region_0.1",
            "}",
        ]
    )
    cost = hlo_cost(text)
    assert cost.total == Cost(2 * 8 * 32 * 16 + (256 - 1), 256)
    shares, unclaimed = per_equation(cost, {10: ["e0"], 11: ["e1", "e2"]})  # exp made by two equations, the reduce by none
    assert shares["e0"].flops == 2 * 8 * 32 * 16 and shares["e1"].transcendentals == shares["e2"].transcendentals == 128
    assert unclaimed.flops == 255


def test_an_equation_whose_params_were_not_read_is_not_priced_and_says_so() -> None:
    """A dot without its contracting dimensions (a JAX that changed their form) gets no guessed
    FLOPs: its bytes, and a note on its row that the CLI and the Cost pane count."""
    dot = _eqn("e0", "dot_general", ("f32[8,16]", "f32[16,32]"), ("f32[8,32]",))
    sin = _eqn("e1", "sin", ("f32[8,32]",), ("f32[8,32]",))
    body = Body("b0", "f", (dot, sin, Node("out0", "output", "y")), (Edge("e0", "e1"), Edge("e1", "out0")), 2, 2)
    found = rows(Graph("f", {"b0": body}, "b0"))
    assert [(r.path, r.note) for r in found] == [("e0", UNREAD), ("e1", "")]
    assert found[0].own == Cost(0, 0, 4 * (8 * 16 + 16 * 32 + 8 * 32)) and found[1].own.transcendentals == 8 * 32


def test_an_aval_no_array_has_counts_as_unknown_and_nothing_overflows() -> None:
    """A damaged or hostile saved trace may hold avals of 400-digit or 64×10^17 dimensions: they are
    no array's (unknown size), so no count made of them overflows a float or raises."""
    from jaxscope.analysis.avals import aval_bytes, aval_elems, aval_shape

    huge = "f32[" + "9" * 400 + "]"
    wide = "f32[" + ",".join(["99999999999999999"] * 64) + "]"
    for aval in (huge, wide):
        assert aval_shape(aval) is None and aval_elems(aval) == 0 and aval_bytes(aval) is None
    assert aval_shape("bf16[8,128]") == (8, 128) and aval_bytes("bf16[8,128]") == 2048
    node = _eqn("e0", "sin", (huge,), (wide,))
    body = Body("b0", "f", (node, Node("out0", "output", "y")), (Edge("e0", "out0"),), 1, 1)
    assert total(Graph("f", {"b0": body}, "b0")) == Cost(0, 0, 0)
    assert liveness(Graph("f", {"b0": body}, "b0")).peak >= 0


def test_numbers_no_program_has_raise_nothing_and_price_nothing() -> None:
    """What a saved trace's check lets through (64 integers under 2^62 each) must not overflow a
    float or hang: a dot contracting one dimension 64 times, a window of 17 × 2^61, a convolution
    of a 65536-tap kernel on a 65536-fold dilated input."""
    dot = _eqn("e0", "dot_general", ("f32[4,70000]", "f32[70000,4]"), ("f32[4,4]",), (("lhs_contracting", (1,) * 64),))
    assert leaf_cost(dot).flops == 2 * 16 * 70000  # each dimension once
    pool = _eqn("e0", "reduce_window_sum", ("f32[8]",), ("f32[8]",), (("window_dimensions", (2**61,) * 17),))
    assert leaf_cost(pool) == Cost(0, 0, 64)
    window = (("padding", (0, 0)), ("window_strides", (1,)), ("lhs_dilation", (65536,)), ("rhs_dilation", (1,)))
    specs = (("lhs_spec", (0, 1, 2)), ("rhs_spec", (0, 1, 2)), ("out_spec", (0, 1, 2)))
    conv = _eqn("e0", "conv_general_dilated", ("f32[1,1,70000]", "f32[1,1,65536]"), ("f32[1,1,4000000]",), specs + window)
    assert leaf_cost(conv).flops >= 0  # counted in closed form: no 2^32-step loop
