"""What a box says of a program on a mesh: a sharding constraint's spec and mesh, a shard_map's specs."""

from __future__ import annotations

from jaxscope.layout.labels import mesh_text, node_lines
from jaxscope.schema.graph import Node


def test_a_sharding_constraint_shows_its_spec_on_its_mesh() -> None:
    sharding = "NamedSharding(mesh=Mesh('data': 4, 'model': 2, axis_types=(Auto, Auto)), spec=P('data', None), memory_kind=device)"
    node = Node("e0", "eqn", "sharding_constraint", avals=("f32[32,16]",), params=(("sharding", sharding),))
    assert node_lines(node) == ["sharding_constraint", "P('data', None) @ data=4,model=2", "f32[32,16]"]
    smap = Node(
        "e1",
        "eqn",
        "shard_map",
        avals=("f32[]",),
        params=(("in_specs", "(P('data',),)"), ("mesh", "Mesh('data': 4, axis_types=(Auto,))"), ("out_specs", "(P(),)")),
    )
    assert node_lines(smap)[1] == "(P('data',),)→(P(),) @ data=4"
    assert mesh_text("no mesh here") == ""
    psum = Node("e2", "eqn", "psum", avals=("f32[]",), params=(("axes", "('data',)"),))
    assert node_lines(psum)[0] == "psum axes=('data',)"
