"""Small hand-made graphs for the tests of every package (no jax needed)."""

from __future__ import annotations

from jaxscope.schema.graph import Body, Edge, Graph, Node, SubgraphRef


def mk_body(bid, n_in, eqns, outs, consts=0, title=""):
    """A Body from a compact description.

    eqns: (label, operands, subgraphs=(), n_out=1, params=()); integer params (a while's const
    counts) are given as numbers, as the worker sends them (`Node.numbers`). An operand is a node id, with
    ``.k`` for output port k ("e1.1"); subgraphs are (role, body id, param) triples.
    Node ids follow the tracer: c0.., in0.., e0.., out0..
    """
    nodes, edges = [], []
    nodes += [Node(f"c{i}", "const", f"c{i}", ("f32[4]",)) for i in range(consts)]
    nodes += [Node(f"in{i}", "input", f"x{i}", ("f32[4]",)) for i in range(n_in)]

    def src(op):
        s, _, port = op.partition(".")
        return s, int(port) if port else 0

    for k, eq in enumerate(eqns):
        label, ops, subs, n_out, params = tuple(eq) + ((), 1, ())[len(eq) - 2 :]
        for port, op in enumerate(ops):
            s, sp = src(op)
            edges.append(Edge(s, f"e{k}", sp, port, "f32[4]"))
        refs = tuple(SubgraphRef(role, body, param) for role, body, param in subs)
        numbers = tuple((key, (int(value),)) for key, value in params if value.isdigit())
        avals, in_avals = ("f32[4]",) * n_out, ("f32[4]",) * len(ops)
        nodes.append(Node(f"e{k}", "eqn", label, avals, in_avals, tuple(params), subgraphs=refs, numbers=numbers))
    for i, op in enumerate(outs):
        s, sp = src(op)
        nodes.append(Node(f"out{i}", "output", f"out{i}", ("f32[4]",)))
        edges.append(Edge(s, f"out{i}", sp, 0, "f32[4]"))
    return Body(bid, title or bid, tuple(nodes), tuple(edges), len(eqns), len(eqns))


def mk_graph(*bodies):
    return Graph("f", {b.id: b for b in bodies}, bodies[0].id)


def sample_graph():
    """Top level calls block b1 twice (jit), then a cond (b2 false, b3 true) and a while."""
    blk = mk_body("b1", 2, [("mul", ["in0", "in1"]), ("sin", ["e0"])], ["e1"])
    false = mk_body("b2", 1, [("neg", ["in0"])], ["e0"])
    true = mk_body("b3", 1, [("cos", ["in0"]), ("exp", ["e0"])], ["e1"])
    wbody = mk_body("b4", 3, [("add", ["in0", "in1"]), ("mul", ["e0", "in2"])], ["e1", "in2"])
    wcond = mk_body("b5", 2, [("lt", ["in1", "in0"])], ["e0"])
    root = mk_body(
        "b0",
        3,
        [
            ("add", ["in0", "in1"]),
            ("jit", ["e0", "in2"], [("jit(blk)", "b1", "jaxpr")]),
            ("jit", ["e1", "in2"], [("jit(blk)", "b1", "jaxpr")]),
            ("gt", ["e2", "in0"]),
            ("cond", ["e3", "e2"], [("cond branch 0 (false)", "b2", "branches[0]"), ("cond branch 1 (true)", "b3", "branches[1]")]),
            (
                "while",
                ["in1", "e4", "in0"],
                [("while body", "b4", "body_jaxpr"), ("while cond", "b5", "cond_jaxpr")],
                2,
                (("body_nconsts", "1"), ("cond_nconsts", "0")),
            ),
            ("mul", ["e5", "e5.1"]),
        ],
        ["e6"],
    )
    return mk_graph(root, blk, false, true, wbody, wcond)
