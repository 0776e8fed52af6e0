"""What the partitioner did, read from a compiled text: collectives, replica groups, argument shardings."""

from __future__ import annotations

from jaxscope.analysis.partition import argument_shardings, box_notes, collectives, short_groups, short_sharding
from jaxscope.schema.graph import Body, Edge, Graph, Node

TEXT = "\n".join(
    [
        "HloModule jit_step",
        "ENTRY %main.3 (x: f32[8,16], w: f32[16,8]) -> f32[] {",
        '  %param = f32[8,16]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}, metadata={op_name="x"}',
        '  %param.1 = f32[16,8]{1,0} parameter(0), sharding={replicated}, metadata={op_name="w"}',
        '  %fusion = f32[] fusion(%param, %param.1), kind=kLoop, calls=%f, metadata={op_name="jit(step)/reduce_sum"}',
        "  %all-reduce = f32[] all-reduce(%fusion), channel_id=1, replica_groups=mesh['axis_0'=4,'axis_1'=1] {'axis_0'}, "
        'to_apply=%r, metadata={op_name="jit(step)/reduce_sum"}',
        "  ROOT %ag = f32[32,8]{1,0} all-gather-start(%fusion), replica_groups={{0,1},{2,3}}, dimensions={0}",
        "}",
    ]
)


def test_collectives_and_shardings_are_read_as_people_say_them() -> None:
    found = collectives(TEXT)
    assert [(c.line, c.opcode, c.shape) for c in found] == [(6, "all-reduce", "f32[]"), (7, "all-gather", "f32[32,8]")]
    assert found[0].describe() == "all-reduce f32[] 4 B over axis_0=4"
    assert short_groups("{{0,1},{2,3}}") == "2 groups of 2" and short_groups("{{0,1,2,3}}") == "4 devices"
    assert short_sharding("{devices=[4,1]<=[4]}") == "tiled 4×1" and short_sharding("{replicated}") == "replicated"
    assert short_sharding("{devices=[1,2,2]<=[4] last_tile_dim_replicate}") == "tiled 1×2, 2 copies"
    # jax 0.11 prints named shardings (and jax 0.12 none in the text: `HloResult.shardings` brings them)
    assert short_sharding("{mesh['data'=4], [{'data'}, {}]}") == "tiled 4×1"
    assert short_sharding("{mesh['data'=2,'model'=2], [{'data'}, {}]}") == "tiled 2×1, 2 copies"
    assert short_sharding("{mesh['data'=4], [{}, {}]}") == "replicated"
    line = "  %p = f32[8,16]{1,0} parameter(0), sharding={mesh['data'=4], [{'data'}, {}]}, metadata={op_name=\"x\"}"
    assert argument_shardings(line) == {"x": "tiled 4×1, f32[8,16] each"}
    assert argument_shardings(line.replace(", sharding={mesh['data'=4], [{'data'}, {}]}", ""), {"x": "{devices=[4,1]<=[4]}"}) == {
        "x": "tiled 4×1, f32[8,16] each"
    }
    assert argument_shardings(TEXT) == {"x": "tiled 4×1, f32[8,16] each", "w": "replicated, f32[16,8] each"}
    from jaxscope.analysis.partition import output_shapes

    assert output_shapes(TEXT) == ["f32[]"]
    assert output_shapes("ENTRY %m (p: f32[4]) -> (f32[16,16], s32[]) {") == ["f32[16,16]", "s32[]"]


def test_the_graph_carries_them_on_the_equations_they_came_from() -> None:
    top = Body(
        "b0",
        "step",
        (
            Node("in0", "input", "x", avals=("f32[32,16]",)),
            Node("in1", "input", "w", avals=("f32[16,8]",)),
            Node("e0", "eqn", "reduce_sum", avals=("f32[]",)),
            Node("out0", "output", "y"),
        ),
        (Edge("in0", "e0"), Edge("in1", "e0", 0, 1), Edge("e0", "out0")),
        1,
        1,
    )
    graph = Graph("step", {"b0": top}, "b0")
    notes, count = box_notes(graph, TEXT, {6: ["e0"]})
    assert count == 2 and notes["e0"] == "all-reduce f32[] 4 B over axis_0=4"
    assert notes["in0"].startswith("tiled 4×1") and notes["in1"].startswith("replicated") and "out0" not in notes
    assert graph.top is top  # drawn beside the graph, never written into it


def test_a_device_holding_part_of_a_value_is_said_on_its_equation() -> None:
    from jaxscope.analysis.partition import shard_shapes

    text = "\n".join(
        ["ENTRY %m () -> f32[8,8] {", '  %dot = f32[8,8]{1,0} dot(%a, %b), metadata={op_name="x"}', "  %t = f32[32,8]{1,0} tanh(%dot)", "}"]
    )
    avals = {"e0": "f32[32,8]", "e1": "f32[32,8]"}
    assert shard_shapes(text, {2: ["e0"], 3: ["e1"]}, avals) == {"e0": "f32[8,8]"}  # e1: the whole array, nothing to say
    assert shard_shapes(text, {2: ["e0", "e1"]}, avals) == {}  # an instruction of two equations: whose part?
