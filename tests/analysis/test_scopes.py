"""Scopes read from JAX's name stacks (strings as flax linen, named_scope and vmap write them)."""

from __future__ import annotations

from jaxscope.analysis.graph_query import SearchIndex
from jaxscope.analysis.scopes import matches, read_scope, split_top
from jaxscope.schema.graph import Node, SourceLoc


def test_transformations_are_read_not_kept_as_names() -> None:
    fwd = read_scope("jvp(Deep)/block1/proj")
    bwd = read_scope("transpose(jvp(Deep))/block1/proj")
    assert fwd.parts == bwd.parts == ("Deep", "block1", "proj")
    assert (fwd.pass_, bwd.pass_) == ("forward", "backward")
    assert read_scope("").parts == () and read_scope("").pass_ == ""
    v = read_scope("jvp(vmap(eqx.nn.Linear))")
    assert v.parts == ("eqx.nn.Linear",) and v.transforms == {"jvp", "vmap"}
    assert read_scope("remat(attn)/softmax").parts == ("attn", "softmax") and "remat" in read_scope("remat(attn)").transforms
    assert read_scope("f(x)/g").parts == ("f(x)", "g")  # a name with parentheses that is no transformation stays
    assert split_top("a(b/c)/d") == ["a(b/c)", "d"]


def test_scope_queries_match_whole_components_or_a_word() -> None:
    assert matches("transpose(jvp(Deep))/block1/proj", "block1/proj")
    assert matches("jvp(Deep)/block1/proj", "Block1")
    assert not matches("jvp(Deep)/block12/proj", "block1/proj")
    assert not matches("jvp(Deep)/block1/proj2", "block1/proj")
    assert not matches("", "block1")


def test_search_finds_equations_by_scope() -> None:
    loc = SourceLoc("/home/u/block1/train.py", 3)
    nodes = [
        ("e0", Node("e0", "eqn", "dot_general", ("f32[4,8]",), name_stack="jvp(Deep)/block1/proj", source=loc)),
        ("e1", Node("e1", "eqn", "dot_general", ("f32[4,8]",), name_stack="transpose(jvp(Deep))/block1/proj")),
        ("e2", Node("e2", "eqn", "dot_general", ("f32[4,8]",), name_stack="jvp(Deep)/block2/proj")),
    ]
    index = SearchIndex(nodes)
    assert index.search("block1/proj") == ["e0", "e1"]
    assert index.search("block1") == ["e0", "e1"]
    assert index.search("block2") == ["e2"]
    assert index.search("home/u") == ["e0"]  # a file path still finds its nodes
