"""Exact IR links from equation marks (ir.hlo_marks), on hand-written texts; real lowerings: tests/worker/test_hlo_exact.py."""

from __future__ import annotations

import pytest

from jaxscope.ir import hlo_marks as hm


@pytest.mark.parametrize(
    ("marked", "plain"),
    [
        ("jit(f)/_jxs0_3_/sin", "jit(f)/sin"),
        ("jit(f)/jvp(MLP)/block1/_jxs0_12_/dot_general", "jit(f)/jvp(MLP)/block1/dot_general"),
        (
            "jit(f)/transpose(jvp(_jxs0_135_))/mul;jit(f)/transpose(jvp(_jxs0_134_))/broadcast_in_dim",
            "jit(f)/transpose(jvp())/mul;jit(f)/transpose(jvp())/broadcast_in_dim",
        ),
        ("jit(f)/_jxs0_5_/jit(g)/_jxs1_0_/cos", "jit(f)/jit(g)/cos"),
        ("jit(f)/jvp(MLP/_jxs0_2_)", "jit(f)/jvp(MLP)"),
        ("no marks at all", "no marks at all"),
    ],
)
def test_strip_leaves_the_name_jax_would_have_written(marked: str, plain: str) -> None:
    assert hm.strip(marked) == plain


def test_chains_are_outer_first_and_one_per_merged_op() -> None:
    assert hm.chains_of("jit(f)/_jxs0_5_/jit(g)/_jxs1_0_/cos") == [((0, 5), (1, 0))]
    assert hm.chains_of("a/_jxs0_1_/mul;a/_jxs0_2_/add;a/b") == [((0, 1),), ((0, 2),)]
    assert hm.chains_of("jit(f)/sin") == []


PLAIN = """#loc2 = loc("scatter-add")
module @jit_f {
  func.func public @main(%arg0: tensor<8xf32> loc("x")) -> (tensor<8xf32>) {
    %0 = stablehlo.sine %arg0 : tensor<8xf32> loc(#loc3)
    %1 = call @g(%0) : (tensor<8xf32>) -> tensor<8xf32> loc(#loc4)
    %2 = stablehlo.add %1, %1 : tensor<8xf32> loc(#loc5)
    return %2 : tensor<8xf32> loc(#loc)
  } loc(#loc)
  func.func private @g(%arg0: tensor<8xf32> loc(unknown)) -> tensor<8xf32> {
    %0 = stablehlo.cosine %arg0 : tensor<8xf32> loc(#loc6)
    return %0 : tensor<8xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc1 = loc("f.py":3:0)
#loc3 = loc("jit(f)/sin"(#loc1))
#loc4 = loc("jit(f)/jit(g)"(#loc1))
#loc5 = loc("jit(f)/add"(#loc1))
#loc6 = loc("jit(f)/jit(g)/cos"(#loc1))
"""

MARKED = """#loc2 = loc("scatter-add")
module @jit_f {
  func.func public @main(%arg0: tensor<8xf32> loc("x")) -> (tensor<8xf32>) {
    %0 = stablehlo.sine %arg0 : tensor<8xf32> loc(#loc13)
    %1 = call @g(%0) : (tensor<8xf32>) -> tensor<8xf32> loc(#loc14)
    %2 = stablehlo.add %1, %1 : tensor<8xf32> loc(#loc17)
    return %2 : tensor<8xf32> loc(#loc)
  } loc(#loc)
  func.func private @g(%arg0: tensor<8xf32> loc(unknown)) -> tensor<8xf32> {
    %0 = stablehlo.cosine %arg0 : tensor<8xf32> loc(#loc16)
    return %0 : tensor<8xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc1 = loc("f.py":3:0)
#loc13 = loc("jit(f)/_jxs0_0_/sin"(#loc1))
#loc14 = loc("jit(f)/_jxs0_1_/jit(g)"(#loc1))
#loc15 = loc("jit(f)/_jxs0_2_/add"(#loc1))
#loc16 = loc("jit(f)/_jxs1_0_/cos"(#loc1))
#loc17 = loc(fused[#loc15, #loc1])
"""


def test_stablehlo_lines_take_the_marks_of_the_same_line_in_the_marked_text() -> None:
    chains = hm.stablehlo_chains(PLAIN, MARKED)
    assert chains == {4: [((0, 0),)], 5: [((0, 1),)], 6: [((0, 2),)], 10: [((1, 0),)]}  # line 6: through the fused loc


def test_stablehlo_texts_that_differ_beyond_locations_are_not_linked() -> None:
    assert hm.stablehlo_chains(PLAIN, MARKED.replace("stablehlo.add", "stablehlo.subtract")) is None
    assert hm.stablehlo_chains(PLAIN, MARKED.replace("  } loc(#loc)\n", "", 1)) is None
    # a location alias more (a cumsum's reduce_window names its own): the ops are paired in order all the same
    assert hm.stablehlo_chains(PLAIN, "#loc9 = loc(unknown)\n" + MARKED) == hm.stablehlo_chains(PLAIN, MARKED)


def test_compiled_chains_read_op_name_metadata() -> None:
    text = (
        'ENTRY %main {\n  %p = f32[8] parameter(0), metadata={op_name="x"}\n'
        '  %f = f32[8] fusion(%p), kind=kLoop, metadata={op_name="jit(f)/_jxs0_0_/sin;jit(f)/_jxs0_2_/add"}\n}'
    )
    assert hm.compiled_chains(text) == {3: [((0, 0),), ((0, 2),)]}


# body 0: e0 sin, e1 jit -> body 1, e2 add, e3 jit -> body 1 again (shared), e4 cond -> bodies 2 and 3
STRUCTURE = {0: {0: (), 1: (1,), 2: (), 3: (1,), 4: (2, 3)}, 1: {0: ()}, 2: {0: (), 1: ()}, 3: {0: ()}}


def test_a_chain_names_its_call_site_and_a_shared_body_names_all() -> None:
    sites = hm.call_sites(STRUCTURE)
    assert sorted(sites[(1, 0)]) == ["e1:0/e0", "e3:0/e0"]
    assert hm.resolve(((0, 3), (1, 0)), STRUCTURE, sites) == ["e3:0/e0"]
    assert sorted(hm.resolve(((1, 0),), STRUCTURE, sites)) == ["e1:0/e0", "e3:0/e0"]  # a StableHLO func body
    assert hm.resolve(((0, 4), (3, 0)), STRUCTURE, sites) == ["e4:1/e0"]
    assert hm.resolve(((0, 2),), STRUCTURE, sites) == ["e2"]


def test_line_paths_merge_and_round_trip_the_wire() -> None:
    lines = hm.line_paths({7: [((0, 0),), ((0, 2),), ((0, 0),)], 9: [((0, 1), (1, 0))]}, STRUCTURE)
    assert lines == {7: ["e0", "e2"], 9: ["e1:0/e0"]}
    assert hm.from_wire(hm.to_wire(lines)) == lines
    with pytest.raises(ValueError, match="malformed"):
        hm.from_wire({"paths": ["e0"], "lines": [[1, [5]]]})


def test_a_private_functions_arguments_named_after_its_marked_caller_still_line_up() -> None:
    """jax 0.12.1 names a private function's arguments after the equation that calls it, so the marked
    text's argument locations carry its mark; the line is the same op all the same."""
    plain = PLAIN.replace("@g(%arg0: tensor<8xf32> loc(unknown))", '@g(%arg0: tensor<8xf32> loc("jit(f)"(#loc1)))')
    marked = MARKED.replace("@g(%arg0: tensor<8xf32> loc(unknown))", '@g(%arg0: tensor<8xf32> loc("jit(f)/_jxs0_1_"(#loc1)))')
    chains = hm.stablehlo_chains(plain, marked)
    assert chains is not None and chains[4] == [((0, 0),)] and chains[10] == [((1, 0),)]
    assert hm.stablehlo_chains(plain, marked.replace('"jit(f)/_jxs0_1_"', '"jit(h)/_jxs0_1_"')) is None  # more than a mark: not
