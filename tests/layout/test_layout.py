"""The layout engine: per-body layouts composed into one Layout (jaxscope.layout.engine)."""

from __future__ import annotations

import random

import pytest

from jaxscope.layout import body as layout_body
from jaxscope.layout import dot as dot_layout
from jaxscope.layout import engine as layout
from jaxscope.layout.engine import compute_layout, visible_count
from jaxscope.layout.labels import node_size
from jaxscope.layout.layered import layered_layout, longest_path_ranks
from jaxscope.schema.expansion import auto_expanded, expanded_to_depth
from jaxscope.schema.graph import Body, resolve
from jaxscope.schema.layout import Layout
from tests.graphs import mk_body, mk_graph, sample_graph

ENGINES = ["layered", "dot"]  # pygraphviz is a declared dependency: without it the dot cases fail


def visible_instances(graph, expanded, body_id=None, prefix=""):
    """(prefix, body) for every visible body instance."""
    body = graph.bodies[body_id or graph.root]
    yield prefix, body
    for node in body.nodes:
        if prefix + node.id in expanded and node.subgraphs:
            for i, ref in enumerate(node.subgraphs):
                yield from visible_instances(graph, expanded, ref.body, f"{prefix}{node.id}:{i}/")


def real(path):
    return path.partition("#")[0]


def body_of(path):
    return path.rpartition("/")[0]


def overlap(a, b, eps=0.05):
    return abs(a.x - b.x) < (a.w + b.w) / 2 - eps and abs(a.y - b.y) < (a.h + b.h) / 2 - eps


def check_invariants(graph, expanded, lay: Layout):
    expanded = set(expanded)
    by_path = {n.path: n for n in lay.nodes}
    assert len(by_path) == len(lay.nodes), "duplicate NodeBox paths"
    clusters = {c.path: c for c in lay.clusters}
    assert len(clusters) == len(lay.clusters)

    # Every visible node exactly once (stub copies aside); expanded owners are clusters instead.
    want = set()
    for prefix, body in visible_instances(graph, expanded):
        for node in body.nodes:
            path = prefix + node.id
            if path in expanded and node.subgraphs:
                for i in range(len(node.subgraphs)):
                    assert f"{path}:{i}" in clusters
            else:
                want.add(path)
    # A stubbed input/constant is drawn only as its per-use copies (path#k), never also as itself;
    # but a sub-graph's input is, where the edges from outside land.
    originals = {n.path for n in lay.nodes if "#" not in n.path}
    stubbed = {real(n.path) for n in lay.nodes if "#" in n.path}
    assert all("/" in p and resolve(graph, p)[1].kind == "input" for p in originals & stubbed)
    assert originals | stubbed == want
    assert visible_count(graph, expanded) == len(want)
    for path in want:  # sizes come from labels.node_size
        _, node = resolve(graph, path)
        w, h = node_size(node)
        box = by_path.get(path) or by_path[f"{path}#0"]
        assert box.w == pytest.approx(w, abs=0.06) and box.h == pytest.approx(h, abs=0.06)

    # No two boxes of one body overlap, nor a box and a cluster of that body.
    groups: dict[str, list] = {}
    for n in lay.nodes:
        groups.setdefault(body_of(n.path), []).append(n)
    for c in lay.clusters:
        groups.setdefault(body_of(c.path), []).append(NodeLike(c.path, c.x + c.w / 2, c.y + c.h / 2, c.w, c.h))
    for members in groups.values():
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                assert not overlap(a, b), (a, b)

    # Clusters contain their nodes and their sub-clusters; all inside the drawing.
    for n in lay.nodes:
        assert 0 <= n.x - n.w / 2 and n.x + n.w / 2 <= lay.width + 0.05
        assert 0 <= n.y - n.h / 2 and n.y + n.h / 2 <= lay.height + 0.05
        owner = body_of(n.path)
        while owner:
            c = clusters[owner]
            assert c.x - 0.05 <= n.x - n.w / 2 and n.x + n.w / 2 <= c.x + c.w + 0.05, (n, c)
            assert c.y - 0.05 <= n.y - n.h / 2 and n.y + n.h / 2 <= c.y + c.h + 0.05, (n, c)
            owner = body_of(owner)
    for c in lay.clusters:
        parent = body_of(c.path)
        assert c.depth == c.path.count("/") + 1
        if parent:
            p = clusters[parent]
            assert p.x <= c.x and c.x + c.w <= p.x + p.w + 0.05 and p.y <= c.y and c.y + c.h <= p.y + p.h + 0.05

    # Edges: cubic chains that start and end on their boxes.
    def box_of(path):
        if path in by_path:
            return by_path[path]
        c = clusters[path]
        return NodeLike(path, c.x + c.w / 2, c.y + c.h / 2, c.w, c.h)

    for e in lay.edges:
        assert len(e.points) >= 4 and (len(e.points) - 1) % 3 == 0
        for (x, y), path in ((e.points[0], e.src), (e.points[-1], e.dst)):
            b = box_of(path)
            assert abs(x - b.x) <= b.w / 2 + 2.5 and abs(y - b.y) <= b.h / 2 + 2.5, (e, b)

    # Every edge of every visible body is drawn.
    drawn = {(e.src, e.dst) for e in lay.edges}
    for prefix, body in visible_instances(graph, expanded):
        for edge in body.edges:
            src, dst = prefix + edge.src, prefix + edge.dst
            src_exp = src in expanded and resolve(graph, src)[1].subgraphs
            dst_exp = dst in expanded and resolve(graph, dst)[1].subgraphs
            ok = any(
                (s.startswith(src + ":") if src_exp else real(s) == src) and (d.startswith(dst + ":") if dst_exp else d == dst)
                for s, d in drawn
            )
            assert ok, (prefix, edge)


class NodeLike:
    def __init__(self, path, x, y, w, h):
        self.path, self.x, self.y, self.w, self.h = path, x, y, w, h

    def __repr__(self):
        return f"Box({self.path}, {self.x}, {self.y}, {self.w}, {self.h})"


# ------------------------------------------------------------------------------- invariants


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("direction", ["TB", "LR"])
@pytest.mark.parametrize("depth", [0, 1, 2])
def test_invariants(engine, direction, depth):
    g = sample_graph()
    expanded = expanded_to_depth(g, depth)
    lay = compute_layout(g, expanded, engine=engine, direction=direction)
    check_invariants(g, expanded, lay)
    assert lay.engine == engine


def test_partial_and_nested_expansion():
    inner = mk_body("b2", 1, [("sin", ["in0"])], ["e0"])
    blk = mk_body("b1", 2, [("mul", ["in0", "in1"]), ("jit", ["e0"], [("jit(inner)", "b2", "jaxpr")])], ["e1"])
    root = mk_body(
        "b0", 2, [("jit", ["in0", "in1"], [("jit(blk)", "b1", "jaxpr")]), ("jit", ["e0", "in1"], [("jit(blk)", "b1", "jaxpr")])], ["e1"]
    )
    g = mk_graph(root, blk, inner)
    for expanded in [{"e0"}, {"e0", "e0:0/e1"}, {"e0", "e1", "e1:0/e1"}, {"e0:0/e1"}, {"bogus", "e0:7/e1", "e1"}]:
        lay = compute_layout(g, expanded)
        check_invariants(g, expanded, lay)
    lay = compute_layout(g, {"e0", "e0:0/e1"})
    assert {c.path: c.depth for c in lay.clusters} == {"e0:0": 1, "e0:0/e1:0": 2}
    assert {c.title for c in lay.clusters} == {"jit(blk)", "jit(inner)"}


def test_collapsed_vs_expanded_counts():
    g = sample_graph()
    collapsed = compute_layout(g)
    assert {real(n.path) for n in collapsed.nodes} == {n.id for n in g.top.nodes}
    assert not collapsed.clusters
    assert visible_count(g, ()) == len(g.top.nodes)
    full = expanded_to_depth(g, 1)
    assert full == {"e1", "e2", "e4", "e5"}
    lay = compute_layout(g, full)
    paths = {n.path for n in lay.nodes}
    assert not paths & full  # an expanded owner is drawn as its clusters only
    assert {c.path for c in lay.clusters} == {"e1:0", "e2:0", "e4:0", "e4:1", "e5:0", "e5:1"}
    extra = sum(len(g.bodies[r.body].nodes) for o in full for r in g.top.nodes[_idx(g.top, o)].subgraphs)
    assert visible_count(g, full) == len(g.top.nodes) - len(full) + extra


def _idx(body, node_id):
    return next(k for k, n in enumerate(body.nodes) if n.id == node_id)


def test_reused_body_is_translated_copy():
    g = sample_graph()
    lay = compute_layout(g, {"e1", "e2"})
    a = {n.path[len("e1:0/") :]: n for n in lay.nodes if n.path.startswith("e1:0/")}
    b = {n.path[len("e2:0/") :]: n for n in lay.nodes if n.path.startswith("e2:0/")}
    assert a.keys() == b.keys() and len(a) == len(g.bodies["b1"].nodes)
    ca, cb = (next(c for c in lay.clusters if c.path == p) for p in ("e1:0", "e2:0"))
    dx, dy = cb.x - ca.x, cb.y - ca.y
    for k in a:
        assert (b[k].x - a[k].x, b[k].y - a[k].y) == pytest.approx((dx, dy), abs=1e-6)
    ea = {(e.src[5:], e.dst[5:]): e.points for e in lay.edges if e.src.startswith("e1:0/") and e.dst.startswith("e1:0/")}
    eb = {(e.src[5:], e.dst[5:]): e.points for e in lay.edges if e.src.startswith("e2:0/") and e.dst.startswith("e2:0/")}
    assert ea.keys() == eb.keys() and ea
    for k, pts in ea.items():
        assert [c + d for x, y in pts for c, d in ((x, dx), (y, dy))] == pytest.approx([c for p in eb[k] for c in p], abs=1e-6)


def test_sub_layouts_are_cached(monkeypatch):
    blk = mk_body("b1", 1, [("sin", ["in0"]), ("cos", ["e0"])], ["e1"])
    eqns = [("jit", ["in0" if k == 0 else f"e{k - 1}"], [("jit(blk)", "b1", "jaxpr")]) for k in range(50)]
    g = mk_graph(mk_body("b0", 1, eqns, ["e49"]), blk)
    calls = []
    real_layout_body = layout.Context._layout_body

    def spy(self, body, children, base):
        calls.append(body.id)
        return real_layout_body(self, body, children, base)

    monkeypatch.setattr(layout.Context, "_layout_body", spy)
    expanded = expanded_to_depth(g, 1)
    cache: dict = {}
    lay = compute_layout(g, expanded, cache=cache)
    assert sorted(calls) == ["b0", "b1"]
    assert len(lay.clusters) == 50
    calls.clear()
    again = compute_layout(g, expanded, cache=cache)  # a caller-kept cache: nothing to lay out
    assert calls == [] and again == lay
    compute_layout(g, expanded - {"e3"}, cache=cache)
    assert calls == ["b0"]


def owners(graph, expanded=frozenset(), body_id=None, prefix=""):
    """Paths of every owner that can be expanded in the visible part of `graph`."""
    for node in graph.bodies[body_id or graph.root].nodes:
        if node.subgraphs:
            yield prefix + node.id
            if prefix + node.id in expanded:
                for i, ref in enumerate(node.subgraphs):
                    yield from owners(graph, expanded, ref.body, f"{prefix}{node.id}:{i}/")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("direction", ["TB", "LR"])
def test_layouts_grown_from_the_last_one_keep_the_invariants(engine, direction):
    g = sample_graph()
    rnd = random.Random(7)
    cache: dict = {}
    expanded: frozenset = frozenset()
    for _ in range(40):  # expand and collapse one owner at a time, as a user does
        path = rnd.choice(sorted(owners(g, expanded)))
        expanded = expanded ^ {path}
        check_invariants(g, expanded, compute_layout(g, expanded, engine=engine, direction=direction, cache=cache))


@pytest.mark.parametrize("engine", ENGINES)
def test_expanding_grows_the_drawing_in_place(engine, monkeypatch):
    # A chain of 12 jit calls; expanding one leaves every other box where it was relative to the
    # rest (above and left of it: not moved at all), and no engine places the top level again.
    blk = mk_body("b1", 1, [("sin", ["in0"]), ("cos", ["e0"]), ("tan", ["e1"])], ["e2"])
    eqns = [("jit", ["in0" if k == 0 else f"e{k - 1}", "in1"], [("jit(blk)", "b1", "jaxpr")]) for k in range(12)]
    g = mk_graph(mk_body("b0", 2, eqns, ["e11"]), blk)
    cache: dict = {}
    before = {n.path: n for n in compute_layout(g, engine=engine, cache=cache).nodes}
    placed = []
    real_place = layout.Context.place
    monkeypatch.setattr(layout.Context, "place", lambda self, name, *a: placed.append(name) or real_place(self, name, *a))
    grown = compute_layout(g, {"e5"}, engine=engine, cache=cache)
    assert placed == ["b1"]  # the block, once; the top level grew from its last drawing
    check_invariants(g, {"e5"}, grown)
    after = {n.path: n for n in grown.nodes if "/" not in n.path}
    assert after.keys() == before.keys() - {"e5"}
    owner = before["e5"]
    for path, a in after.items():
        b = before[path]
        if b.y + b.h / 2 <= owner.y - owner.h / 2:  # wholly above the expanded box: in its row
            assert a.y == b.y
            if b.x - b.w / 2 < owner.x - owner.w / 2:  # and left of it too: untouched
                assert a.x == b.x
        assert a.y - b.y >= 0 and a.x - b.x >= 0  # nothing moves up or left
    for p, q in zip(sorted(before), sorted(before)[1:]):  # order kept in both directions
        if p in after and q in after:
            assert (before[p].y < before[q].y) <= (after[p].y < after[q].y)
            assert (before[p].x < before[q].x) <= (after[p].x < after[q].x)
    cluster = next(c for c in grown.clusters if c.path == "e5:0")
    assert (cluster.x, cluster.y) == pytest.approx((owner.x - owner.w / 2, owner.y - owner.h / 2), abs=0.11)
    # Collapsing it again is the first drawing (cached); a fresh cache places everything anew.
    assert {n.path: n for n in compute_layout(g, engine=engine, cache=cache).nodes} == before
    placed.clear()
    assert compute_layout(g, {"e5"}, engine=engine) == compute_layout(g, {"e5"}, engine=engine)
    assert placed == ["b1", "b0", "b1", "b0"]


def test_a_trimmed_cache_keeps_every_bodys_base(monkeypatch):
    """A long session's cache is bounded (`layout.trim`): the oldest body layouts go, the bases
    stay, so the next expand still grows the top level instead of placing it anew."""
    blk = mk_body("b1", 1, [("sin", ["in0"]), ("cos", ["e0"])], ["e1"])
    eqns = [("jit", ["in0" if k == 0 else f"e{k - 1}"], [("jit(blk)", "b1", "jaxpr")]) for k in range(12)]
    g = mk_graph(mk_body("b0", 1, eqns, ["e11"]), blk)
    cache: dict = {}
    for k in range(12):
        compute_layout(g, {f"e{k}"}, engine="layered", cache=cache)
    bases = {key: v for key, v in cache.items() if len(key) == 2}
    assert {key[1] for key in bases} == {"b0", "b1"} and len(cache) > 12
    layout.trim(cache, limit=8)
    assert len(cache) <= 8 // 2 + len(bases) and all(cache[key] is v for key, v in bases.items())
    layout.trim(cache, limit=100)  # under the limit: nothing goes
    kept = dict(cache)
    assert cache == kept
    placed = []
    real_place = layout.Context.place
    monkeypatch.setattr(layout.Context, "place", lambda self, name, *a: placed.append(name) or real_place(self, name, *a))
    grown = compute_layout(g, {"e5", "e6"}, engine="layered", cache=cache)
    assert placed == [] and grown == compute_layout(g, {"e5", "e6"}, engine="layered", cache=dict(bases))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_collapse_gives_its_room_back(engine):
    # Layouts grow from the body's last placement by an engine (the base), not from the last one
    # shown: after expanding e5 and collapsing it again, expanding e7 draws what expanding e7
    # right away draws, with no room left where e5's clusters were.
    blk = mk_body("b1", 1, [("sin", ["in0"]), ("cos", ["e0"]), ("tan", ["e1"])], ["e2"])
    eqns = [("jit", ["in0" if k == 0 else f"e{k - 1}", "in1"], [("jit(blk)", "b1", "jaxpr")]) for k in range(12)]
    g = mk_graph(mk_body("b0", 2, eqns, ["e11"]), blk)
    walked: dict = {}
    for expanded in ((), {"e5"}, (), {"e7"}):
        after_walk = compute_layout(g, expanded, engine=engine, cache=walked)
    direct: dict = {}
    compute_layout(g, engine=engine, cache=direct)
    assert after_walk == compute_layout(g, {"e7"}, engine=engine, cache=direct)


def test_many_owners_changed_at_once_are_placed_anew(monkeypatch):
    monkeypatch.setattr(layout_body, "GROW_MAX", 3)
    g = sample_graph()
    cache: dict = {}
    compute_layout(g, cache=cache)
    placed = []
    real_place = layout.Context.place
    monkeypatch.setattr(layout.Context, "place", lambda self, name, *a: placed.append(name) or real_place(self, name, *a))
    expanded = expanded_to_depth(g, 1)  # four owners of the top level at once
    check_invariants(g, expanded, compute_layout(g, expanded, cache=cache))
    assert "b0" in placed


@pytest.mark.parametrize("engine", ENGINES)
def test_warm_lays_out_the_collapsed_sub_graphs_ahead(engine, monkeypatch):
    g = sample_graph()
    cache: dict = {}
    compute_layout(g, {"e1"}, engine=engine, cache=cache)
    # Still collapsed and visible: e2's block (the same body as e1's, already laid out), the cond's
    # two branches and the while's body and cond; smallest first.
    assert list(layout.lay_out_ahead(g, {"e1"}, cache, engine=engine)) == ["b2", "b3", "b5", "b4"]
    assert list(layout.lay_out_ahead(g, {"e1"}, cache, engine=engine)) == []  # nothing left
    placed = []
    real_place = layout.Context.place
    monkeypatch.setattr(layout.Context, "place", lambda self, name, *a: placed.append(name) or real_place(self, name, *a))
    warmed = compute_layout(g, {"e1", "e4", "e5"}, engine=engine, cache=cache)
    assert placed == []  # the clusters were ready, and the parent grew
    check_invariants(g, {"e1", "e4", "e5"}, warmed)
    # What laying out ahead cached is what laying out on demand caches.
    fresh: dict = {}
    compute_layout(g, {"e1", "e4"}, engine=engine, cache=fresh)
    assert fresh[(("TB", 4, layout.DOT_MAX_NODES, engine), "b2", ())] == cache[(("TB", 4, layout.DOT_MAX_NODES, engine), "b2", ())]


def test_warm_leaves_big_dot_runs_out(monkeypatch):
    g = sample_graph()
    assert list(layout.lay_out_ahead(g, (), {}, engine="dot", dot_items=1)) == []
    assert list(layout.lay_out_ahead(g, (), {}, dot_items=1, dot_max_nodes=1)) == ["b2", "b3", "b5", "b1", "b4"]  # layered
    monkeypatch.setattr(layout, "AHEAD_DOT_S", 0.0)  # every dot run is "slow": no second one
    assert list(layout.lay_out_ahead(g, (), {}, engine="dot")) == ["b2"]


# ------------------------------------------------------------------------------- stubs, long edges


@pytest.mark.parametrize("engine", ENGINES)
def test_fanout_inputs_are_stubbed(engine):
    # in0 feeds 4 equations (stubbed), in1 feeds 2 (not), c0 feeds 3 (stubbed).
    body = mk_body(
        "b0",
        2,
        [("sin", ["in0"]), ("cos", ["in0", "c0"]), ("add", ["e0", "in0", "c0"]), ("mul", ["e2", "in0", "in1", "c0"]), ("neg", ["in1"])],
        ["e3", "e4"],
        consts=1,
    )
    g = mk_graph(body)
    lay = compute_layout(g, engine=engine)
    check_invariants(g, (), lay)
    paths = [n.path for n in lay.nodes]
    assert sorted(p for p in paths if p.startswith("in0")) == ["in0#0", "in0#1", "in0#2", "in0#3"]  # no unused original
    assert sorted(p for p in paths if p.startswith("c0")) == ["c0#0", "c0#1", "c0#2"]
    assert [p for p in paths if p.startswith("in1")] == ["in1"]
    by_src = {}
    for e in lay.edges:
        by_src.setdefault(e.src, []).append(e.dst)
    assert by_src["in0#0"] == ["e0"] and by_src["in0#1"] == ["e1"] and by_src["in0#2"] == ["e2"] and by_src["in0#3"] == ["e3"]
    assert "in0" not in by_src and sorted(by_src["in1"]) == ["e3", "e4"]
    boxes = {n.path: n for n in lay.nodes}
    for k, consumer in enumerate(["e0", "e1", "e2", "e3"]):  # each copy sits right above its consumer
        stub, dst = boxes[f"in0#{k}"], boxes[consumer]
        assert stub.y < dst.y and dst.y - stub.y < 2 * (stub.h + dst.h)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_sub_graph_input_with_stub_copies_is_still_drawn(engine):
    # The block's in0 feeds three equations (stubbed); the edge from outside lands on in0 itself.
    blk = mk_body("b1", 1, [("sin", ["in0"]), ("cos", ["in0"]), ("tan", ["in0"]), ("add", ["e0", "e1"])], ["e3", "e2"])
    g = mk_graph(mk_body("b0", 1, [("neg", ["in0"]), ("jit", ["e0"], [("jit(blk)", "b1", "jaxpr")], 2)], ["e1", "e1.1"]), blk)
    lay = compute_layout(g, {"e1"}, engine=engine)
    check_invariants(g, {"e1"}, lay)
    paths = {n.path for n in lay.nodes}
    assert {"e1:0/in0", "e1:0/in0#0", "e1:0/in0#1", "e1:0/in0#2"} <= paths
    assert [e.dst for e in lay.edges if e.src == "e0"] == ["e1:0/in0"]


@pytest.mark.parametrize("engine", ENGINES)
def test_long_span_edges_are_unrouted(engine):
    eqns = [("sin", ["in0"])] + [("cos", [f"e{k}"]) for k in range(7)] + [("add", ["e7", "e0"]), ("mul", ["e8", "e6"])]
    g = mk_graph(mk_body("b0", 1, eqns, ["e9"]))
    lay = compute_layout(g, engine=engine, max_span=4)
    check_invariants(g, (), lay)
    routed = {(e.src, e.dst): e.routed for e in lay.edges}
    assert routed[("e0", "e8")] is False  # spans 8 ranks
    assert routed[("e6", "e9")] is True  # spans 3
    assert all(v for k, v in routed.items() if k != ("e0", "e8"))
    boxes = {n.path: n for n in lay.nodes}
    e = next(e for e in lay.edges if (e.src, e.dst) == ("e0", "e8"))
    src, dst = boxes["e0"], boxes["e8"]
    assert len(e.points) == 4
    assert e.points[0] == pytest.approx((src.x, src.y + src.h / 2), abs=0.11)
    assert e.points[-1] == pytest.approx((dst.x, dst.y - dst.h / 2), abs=0.11)
    everything = compute_layout(g, engine=engine, max_span=100)
    assert all(e.routed for e in everything.edges)


def test_long_span_left_out_of_dot(monkeypatch):
    seen = []
    real_run = layout.run_dot

    def spy(sizes, edges, **kw):
        seen.append(list(edges))
        return real_run(sizes, edges, **kw)

    monkeypatch.setattr(layout, "run_dot", spy)
    eqns = [("sin", ["in0"])] + [("cos", [f"e{k}"]) for k in range(7)] + [("add", ["e7", "e0"])]
    g = mk_graph(mk_body("b0", 1, eqns, ["e8"]))
    compute_layout(g, engine="dot")
    index = {n.id: k for k, n in enumerate(g.top.nodes)}
    assert (index["e0"], index["e8"]) not in seen[0]
    assert (index["e7"], index["e8"]) in seen[0]


# ------------------------------------------------------------------------------- cross-boundary edges


def test_cross_boundary_port_mapping():
    g = sample_graph()
    lay = compute_layout(g, {"e1", "e2", "e4", "e5"})
    edges = {(e.src, e.dst) for e in lay.edges}
    # jit: operand i -> input i, output i -> consumer.
    assert ("e0", "e1:0/in0") in edges and ("in2", "e1:0/in1") in edges
    assert ("e1:0/out0", "e2:0/in0") in edges
    # cond: the predicate goes to each branch's box; operand 1 to each branch's input 0.
    assert ("e3", "e4:0") in edges and ("e3", "e4:1") in edges
    assert ("e2:0/out0", "e4:0/in0") in edges and ("e2:0/out0", "e4:1/in0") in edges
    assert ("e4:0/out0", "e5:0/in1") in edges  # while operand 1 = first carry
    # while (body_nconsts=1, cond_nconsts=0): body takes [const, carry0, carry1], cond [carry0, carry1].
    assert ("in1", "e5:0/in0") in edges and ("e4:1/out0", "e5:0/in1") in edges
    assert any(s.startswith("in0") and d == "e5:0/in2" for s, d in edges)
    assert ("e4:0/out0", "e5:1/in0") in edges and any(s.startswith("in0") and d == "e5:1/in1" for s, d in edges)
    assert not any(d.startswith("e5:1") and s == "in1" for s, d in edges)
    # while outputs come from the body only: out0 = e1, out1 = in2 (passed through).
    assert ("e5:0/out0", "e6") in edges and ("e5:0/out1", "e6") in edges
    assert not any(s.startswith("e5:1/") and not d.startswith("e5:1/") for s, d in edges)


def test_unmapped_ports_attach_to_cluster_box():
    sub = mk_body("b1", 1, [("sin", ["in0"])], ["e0", "e0"])  # 1 input for 2 operands, 2 outputs for 1
    root = mk_body("b0", 2, [("custom", ["in0", "in1"], [("custom body", "b1", "fun")]), ("neg", ["e0"])], ["e1"])
    g = mk_graph(root, sub)
    lay = compute_layout(g, {"e0"})
    check_invariants(g, {"e0"}, lay)
    edges = {(e.src, e.dst) for e in lay.edges}
    assert ("in0", "e0:0") in edges and ("in1", "e0:0") in edges and ("e0:0", "e1") in edges
    c = lay.clusters[0]
    e = next(e for e in lay.edges if e.src == "e0:0")
    assert e.points[0] == pytest.approx((c.x + c.w / 2, c.y + c.h), abs=0.11)


# ------------------------------------------------------------------------------- engines


@pytest.mark.parametrize("engine", ENGINES)
def test_deterministic(engine):
    g = sample_graph()
    expanded = expanded_to_depth(g, 2)
    a = compute_layout(g, expanded, engine=engine)
    b = compute_layout(g, set(reversed(sorted(expanded))), engine=engine)
    assert a == b and a.to_json() == b.to_json()
    assert all(round(v, 1) == v for n in a.nodes for v in (n.x, n.y, n.w, n.h))
    assert all(round(v, 1) == v for e in a.edges for p in e.points for v in p)


def test_auto_engine_uses_dot_up_to_the_limit():
    g = sample_graph()
    lay = compute_layout(g, dot_max_nodes=3)
    assert lay.engine == "layered" and any("dot's limit" in n for n in lay.notes)
    assert compute_layout(g).engine == "dot"
    mixed = compute_layout(g, {"e1"}, dot_max_nodes=8)  # top level 12 boxes, block 5
    assert mixed.engine == "dot+layered"


def test_dot_failure_falls_back(monkeypatch):
    def broken(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(layout, "run_dot", broken)
    monkeypatch.setattr(layout, "dot_available", lambda: True)
    g = sample_graph()
    lay = compute_layout(g, engine="dot")
    assert lay.engine == "layered" and any("dot failed" in n for n in lay.notes)
    check_invariants(g, (), lay)


def test_odd_spline_point_count_gives_straight_cubic(monkeypatch):
    g = mk_graph(mk_body("b0", 1, [("sin", ["in0"])], ["e0"]))

    def fake(sizes, edges, **kw):
        centres = [(50.0, 20.0 + 80.0 * k) for k in range(len(sizes))]
        return centres, {pair: [(1.0, 2.0), (3.0, 4.0), (5.0, 6.0)] for pair in edges}

    monkeypatch.setattr(layout, "run_dot", fake)
    monkeypatch.setattr(layout, "dot_available", lambda: True)
    lay = compute_layout(g, engine="dot")
    boxes = {n.path: n for n in lay.nodes}
    for e in lay.edges:
        assert len(e.points) == 4
        s, d = boxes[e.src], boxes[e.dst]
        assert e.points[0] == pytest.approx((s.x, s.y + s.h / 2), abs=0.11)
        assert e.points[-1] == pytest.approx((d.x, d.y - d.h / 2), abs=0.11)


def test_parse_plain_flips_y_and_scales():
    text = "\n".join(
        [
            "graph 1 2.0 1.5",
            'node n0 0.5 1.25 1 0.5 "" solid box black lightgrey',
            'node n1 0.5 0.25 1 0.5 "" solid box black lightgrey',
            "edge n0 n1 4 0.5 1 0.5 0.8 0.5 0.7 0.5 0.5 solid black",
            "stop",
        ]
    )
    centres, routes = dot_layout.parse_plain(text, 2)
    assert centres == [(36.0, 18.0), (36.0, 90.0)]
    assert routes[(0, 1)][0] == (36.0, 36.0) and routes[(0, 1)][-1] == (36.0, 72.0)


def test_dot_source_uses_generated_names_only():
    src = dot_layout.dot_source([(72.0, 36.0), (144.0, 36.0)], [(0, 1)], direction="LR")
    assert "n0 [width=1.0000, height=0.5000];" in src and "n1 -> n0" not in src and "n0 -> n1;" in src
    assert "rankdir=LR" in src and "nslimit=1" in src and "mclimit=0.1" in src


@pytest.mark.parametrize("engine", ENGINES)
def test_lr_flows_left_to_right(engine):
    g = mk_graph(mk_body("b0", 1, [("sin", ["in0"]), ("cos", ["e0"]), ("exp", ["e1"])], ["e2"]))
    lay = compute_layout(g, engine=engine, direction="LR")
    boxes = {n.path: n for n in lay.nodes}
    xs = [boxes[p].x for p in ("in0", "e0", "e1", "e2", "out0")]
    assert xs == sorted(xs) and len(set(xs)) == 5
    for e in lay.edges:
        s = boxes[e.src]
        assert e.points[0][0] == pytest.approx(s.x + s.w / 2, abs=2.5)


def test_bad_arguments():
    g = sample_graph()
    with pytest.raises(ValueError):
        compute_layout(g, direction="BT")
    with pytest.raises(ValueError):
        compute_layout(g, engine="neato")


def test_empty_sub_body():
    empty = Body("b1", "empty", (), (), 0, 0)
    root = mk_body("b0", 1, [("jit", ["in0"], [("jit(nothing)", "b1", "jaxpr")])], [])
    g = mk_graph(root, empty)
    lay = compute_layout(g, {"e0"})
    check_invariants(g, {"e0"}, lay)
    assert lay.clusters[0].w > 0 and lay.clusters[0].h > 0


# ------------------------------------------------------------------------------- layered engine


@pytest.mark.parametrize("direction", ["TB", "LR"])
def test_plain_edges_in_numpy_are_the_python_ones(direction, monkeypatch):
    """A big body's edges between plain boxes are computed in numpy (`layout_edges._plain_edges`)
    and those into or out of expanded owners in Python, spliced in order: the very rows the
    Python path alone gives, fresh and grown."""
    from jaxscope.layout import edges as layout_edges

    blk = mk_body("b1", 2, [("sin", ["in0"]), ("mul", ["e0", "in1"])], ["e1"])
    rnd = random.Random(3)
    eqns = []
    for k in range(120):
        ops = ["in0" if k == 0 else f"e{k - 1}", f"e{rnd.randrange(k)}" if k > 2 else "in1"]
        eqns.append(("jit", ops, [("jit(blk)", "b1", "jaxpr")]) if k % 7 == 3 else ("add", ops))
    g = mk_graph(mk_body("b0", 2, eqns, ["e119", "e50"]), blk)
    assert len(g.bodies["b0"].edges) >= layout_edges.VECTOR_MIN

    def layouts() -> list[Layout]:
        cache: dict = {}
        return [
            compute_layout(g, ex, engine="layered", direction=direction, cache=cache)
            for ex in (frozenset(), {"e3"}, {"e3", "e59", "e101"}, frozenset())
        ]

    fast = layouts()
    monkeypatch.setattr(layout_edges, "VECTOR_MIN", 10**9)
    assert fast == layouts()
    assert len(fast[2].edges) > len(fast[0].edges)  # the expanded owners' edges go into their clusters


def chainish(n, seed=0, n_in=20):
    rnd = random.Random(seed)
    edges = []
    for k in range(n_in, n):
        edges.append((k - 1, k) if k > n_in else (0, k))
        r = rnd.random()
        if r < 0.3 and k > n_in + 2:
            edges.append((rnd.randrange(max(n_in, k - 60), k - 1), k))
        elif r < 0.5:
            edges.append((rnd.randrange(n_in), k))
    return edges


def test_layered_50k_chainish():
    n = 50_000
    edges = chainish(n)
    sizes = [(44.0 + (k % 7) * 6.7, 38.0) for k in range(n)]
    ranks = longest_path_ranks(n, edges)
    xs, ys = layered_layout(sizes, edges, ranks=ranks)
    assert len(xs) == len(ys) == n
    assert all(ys[u] < ys[v] for u, v in edges)
    layers: dict[float, list[int]] = {}
    for k in range(n):
        layers.setdefault(ys[k], []).append(k)
    for members in layers.values():
        members.sort(key=xs.__getitem__)
        for a, b in zip(members, members[1:]):
            assert xs[b] - xs[a] >= (sizes[a][0] + sizes[b][0]) / 2 - 1e-6


def test_layered_small_properties():
    # ranks: longest path, sources pulled next to their first consumer
    edges = [(0, 1), (1, 2), (2, 3), (4, 3), (5, 5)]
    assert longest_path_ranks(6, edges) == [0, 1, 2, 3, 2, 0]
    # cycles are tolerated
    assert len(longest_path_ranks(3, [(0, 1), (1, 2), (2, 1)])) == 3
    xs, ys = layered_layout([(50.0, 30.0)] * 3, [(0, 1), (1, 2)])
    assert xs[0] == xs[1] == xs[2] and ys[0] < ys[1] < ys[2]
    assert layered_layout([], []) == ([], [])


# ------------------------------------------------------------------------------- expansion helpers


def test_expanded_to_depth_and_auto_expanded():
    inner = mk_body("b2", 1, [("sin", ["in0"])], ["e0"])
    blk = mk_body("b1", 2, [("mul", ["in0", "in1"]), ("jit", ["e0"], [("jit(inner)", "b2", "jaxpr")])], ["e1"])
    big = mk_body("b3", 1, [("sin", ["in0"])] + [("cos", [f"e{k}"]) for k in range(30)], ["e30"])
    root = mk_body(
        "b0",
        2,
        [("jit", ["in0", "in1"], [("jit(blk)", "b1", "jaxpr")]), ("jit", ["e0"], [("jit(big)", "b3", "jaxpr")])],
        ["e1"],
    )
    g = mk_graph(root, blk, inner, big)
    assert expanded_to_depth(g, 0) == frozenset()
    assert expanded_to_depth(g, 1) == {"e0", "e1"}
    assert expanded_to_depth(g, 2) == {"e0", "e1", "e0:0/e1"}
    assert expanded_to_depth(g, 9) == expanded_to_depth(g, 2)
    assert auto_expanded(g, max_visible=5) == frozenset()  # root alone has 5 nodes
    assert auto_expanded(g, max_visible=10) == {"e0"}  # +5 (block) fits, big (+33) does not
    assert auto_expanded(g, max_visible=12) == {"e0", "e0:0/e1"}  # then the inner jit (+2)
    assert auto_expanded(g, max_visible=1000) == expanded_to_depth(g, 2)
    for limit in (5, 10, 12, 50, 1000):
        assert visible_count(g, auto_expanded(g, limit)) <= limit
