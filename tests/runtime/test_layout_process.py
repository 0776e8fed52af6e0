"""LayoutClient: compute_layout in a real worker process, with a time budget."""

from __future__ import annotations

import base64
import concurrent.futures
import dataclasses
import io
import json
import os
import threading
import time
from typing import Any

import numpy as np
import pytest

from jaxscope.layout import engine as layout
from jaxscope.layout import wire
from jaxscope.layout.engine import compute_layout, compute_tenths
from jaxscope.layout.preview import Region
from jaxscope.layout.wire import LayoutError, layout_from_wire, layout_to_wire, layout_wire_lines
from jaxscope.runtime import layout_server, protocol
from jaxscope.runtime.layout_client import LayoutClient
from jaxscope.runtime.layout_server import serve
from jaxscope.schema.codec import dumps, from_jsonable, loads, to_jsonable
from jaxscope.schema.expansion import expanded_to_depth
from jaxscope.schema.graph import Body, Edge, Graph, Node, SourceLoc
from jaxscope.schema.graph_wire import graph_to_wire
from jaxscope.schema.layout import Layout
from jaxscope.schema.layout_tables import NodeTable
from tests.conftest import chain_with_owner
from tests.graphs import mk_body, mk_graph, sample_graph


def chain_graph(n: int) -> Graph:
    nodes = [Node("in0", "input", "x", ("f32[8]",))]
    edges = []
    for k in range(n):
        nodes.append(Node(f"e{k}", "eqn", "sin", ("f32[8]",), ("f32[8]",)))
        edges.append(Edge("in0" if k == 0 else f"e{k - 1}", f"e{k}"))
        if k > 3 and k % 3 == 0:
            edges.append(Edge(f"e{k - 3}", f"e{k}", 0, 1))
    body = Body("b0", "chain", tuple(nodes), tuple(edges), n, n)
    return Graph("chain", {"b0": body})


@pytest.fixture(scope="module")
def client():
    with LayoutClient() as c:
        yield c


def test_wire_codecs_match_serialize():
    g = sample_graph()
    node = Node("e0", "eqn", "add", ("f32[2]",), ("f32[2]",), (("k", "v"),), SourceLoc("f.py", 3, 4), "jit(f)")
    g2 = Graph("f", {"b0": Body("b0", "t", (node,), (Edge("e0", "e0", 0, 1, "f32[2]"),), 1, 1)})
    for graph in (g, g2):
        text = dumps(graph)
        assert json.loads(text) == to_jsonable(graph)
        assert loads(Graph, text) == graph == from_jsonable(Graph, json.loads(text))
    sparse = to_jsonable(g2)  # keys missing (an older writer): defaults, as from_jsonable does
    node_data = sparse["bodies"]["b0"]["nodes"][0]
    del node_data["detail"], node_data["source"]["end_col"], node_data["params"]
    assert loads(Graph, json.dumps(sparse)) == from_jsonable(Graph, sparse)
    lay = compute_layout(g, expanded_to_depth(g, 2), engine="layered")
    assert loads(Layout, dumps(lay)) == lay == Layout.from_json(dumps(lay))
    assert layout_from_wire(layout_to_wire(lay)) == lay
    assert layout_from_wire(lay.to_json()) == lay  # the generic form is read too


@pytest.mark.parametrize("direction", ["TB", "LR"])
def test_the_wire_carries_whole_tenths_and_reads_back_the_very_layout(direction):
    g = sample_graph()
    expanded = expanded_to_depth(g, 2)
    rows = compute_tenths(g, expanded, direction=direction)
    header, *chunks = layout_wire_lines(rows)
    sent = [json.loads(c)["nodes"] for c in chunks if "nodes" in c]
    assert [p for c in sent for p in c["paths"]] == rows.nodes.paths
    boxes = [v for c in sent for v in np.frombuffer(base64.b64decode(c["boxes"]), dtype=c["dtype"]).tolist()]
    assert boxes == rows.nodes.boxes.reshape(-1).tolist()  # whole tenths, as bytes
    read = layout_from_wire("\n".join([header, *chunks]))
    assert read == compute_layout(g, expanded, direction=direction)
    assert isinstance(read.nodes, NodeTable) and read.nodes.paths == rows.nodes.paths


def test_a_worker_error_halfway_through_a_layout_fails_it_at_once(monkeypatch):
    """Chunks are written as they are encoded, after the "ok": an error line among them ends the
    read with the worker's message (rather than waiting out the line count)."""
    from jaxscope.layout import wire as lc

    monkeypatch.setattr(lc, "WIRE_ITEMS", 7)
    header, first, *_ = layout_to_wire(compute_layout(chain_graph(40))).splitlines()
    reader = lc.WireReader(header)
    reader.feed(first)
    with pytest.raises(LayoutError, match="MemoryError"):
        reader.feed(json.dumps({"id": 3, "ok": False, "error": "Traceback ...\nMemoryError"}))


def test_big_layouts_travel_in_chunks_and_come_back_whole(client, monkeypatch):
    from jaxscope.layout import wire as lc

    g = chain_graph(40)
    lay = compute_layout(g)
    monkeypatch.setattr(lc, "WIRE_ITEMS", 7)
    text = layout_to_wire(lay)
    lines = text.splitlines()
    assert len(lines) == 1 + -(-len(lay.nodes) // 7) + -(-len(lay.edges) // 7) and lc.wire_lines(lines[0]) == len(lines) - 1
    assert layout_from_wire(text) == lay
    assert client.layout(g) == lay  # through the worker process (its own WIRE_ITEMS)


def test_edges_along_one_curve_share_its_points_when_read(monkeypatch):
    import dataclasses

    from jaxscope.layout import wire as lc
    from jaxscope.schema.layout import EdgePath

    lay = compute_layout(chain_graph(10))
    e = lay.edges[3]
    twins = tuple(EdgePath(e.src, e.dst, tuple(e.points), e.routed, f"f32[{k}]") for k in range(3))
    lay = dataclasses.replace(lay, edges=lay.edges + twins)
    monkeypatch.setattr(lc, "WIRE_ITEMS", 4)  # the twins' original is in an earlier line
    back = layout_from_wire(layout_to_wire(lay))
    assert back == lay
    assert all(t.points is back.edges[3].points for t in back.edges[-3:])  # one tuple for the curve


def test_a_read_layouts_edges_are_columns_made_into_edge_paths_on_demand(monkeypatch):
    """The reader keeps the edges as columns (`EdgeTable`), the coordinates as one int array
    decoded from bytes: equal to the EdgePaths they stand for, each made when asked for and kept,
    serialised like a tuple; a malformed chunk is an error when read, not later when drawn."""
    import base64
    import dataclasses

    import numpy as np

    from jaxscope.layout import wire as lc
    from jaxscope.schema.layout import EdgePath
    from jaxscope.schema.layout_tables import EdgeTable

    lay = compute_layout(chain_graph(12))
    e = lay.edges[2]
    lay = dataclasses.replace(lay, edges=lay.edges + (EdgePath(e.src, e.dst, e.points[:1] + e.points, not e.routed, "f32[1]"),))
    monkeypatch.setattr(lc, "WIRE_ITEMS", 5)
    text = layout_to_wire(lay)
    chunk = json.loads(text.splitlines()[-1])["edges"]
    assert isinstance(chunk["pts"], str) and chunk["dtype"] == "<i4"  # bytes, not a list of numbers
    back = layout_from_wire(text)
    table = back.edges
    assert isinstance(table, EdgeTable) and len(table) == len(lay.edges) and table.pts.dtype == np.int64
    assert not table.made_rows()  # nothing made by reading
    assert table == lay.edges and lay.edges == table and tuple(table) == lay.edges and back == lay
    assert table != lay.edges[:-1] and table != lay.edges[:-1] + (lay.edges[0],)
    assert not table.made_rows()  # iterating keeps none
    assert list(back.nodes) == list(lay.nodes) and not back.nodes.made_rows()
    assert table[5] is table[5] and table[1:3] == lay.edges[1:3]
    assert table.ends() == [(x.src, x.dst) for x in lay.edges]
    assert [table.flat(j) for j in range(len(table))] == [tuple(round(v * 10) for p in x.points for v in p) for x in lay.edges]
    cubic, coords = table.cubics()
    assert cubic.tolist() == [j for j, x in enumerate(lay.edges) if len(x.points) == 4] and len(lay.edges[-1].points) == 5
    assert coords.tolist() == [[list(p) for p in lay.edges[j].points] for j in cubic]
    assert table.cut(2, 4) == lay.edges[2:4]
    moved = EdgeTable.concat([(table.cut(0, 2), "a/", 10, -20), (table.cut(2, 3), "", 0, 0)])
    assert [(moved.src[j], moved.flat(j)) for j in range(3)] == [
        ("a/" + table.src[j], tuple(v + (10 if k % 2 == 0 else -20) for k, v in enumerate(table.flat(j)))) for j in range(2)
    ] + [(table.src[2], table.flat(2))]
    assert to_jsonable(back) == to_jsonable(lay) and loads(Layout, dumps(back)) == lay
    header = text.splitlines()[0]
    good = {
        "src": ["e0"],
        "dst": ["e1"],
        "routed": [True],
        "aval": ["f32[8]"],
        "dtype": "<i4",
        "lens": base64.b64encode(np.array([8], "<i4").tobytes()).decode(),
        "pts": base64.b64encode(np.arange(8, dtype="<i4").tobytes()).decode(),
    }
    lc.WireReader(header).feed(json.dumps({"edges": good}))
    for bad, match in [
        ({k: v for k, v in good.items() if k != "aval"}, "keys"),
        ({**good, "dst": []}, "different lengths"),
        ({**good, "pts": base64.b64encode(np.arange(6, dtype="<i4").tobytes()).decode()}, "do not add up"),
        ({**good, "pts": "not base64!"}, "malformed"),
        ({**good, "dtype": "<f8"}, "dtype"),
    ]:
        with pytest.raises(LayoutError, match=match):
            lc.WireReader(header).feed(json.dumps({"edges": bad}))
    nodes = {"paths": ["e0", "e1"], "boxes": base64.b64encode(np.arange(8, dtype="<i4").tobytes()).decode(), "dtype": "<i4"}
    reader = lc.WireReader(header)
    reader.feed(json.dumps({"nodes": nodes}))
    assert reader.paths == ["e0", "e1"] and reader.boxes[0].tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    for bad, match in [({**nodes, "paths": ["e0"]}, "1 paths and 8 coordinates"), ({"paths": []}, "keys")]:
        with pytest.raises(LayoutError, match="node chunk.*" + match):
            lc.WireReader(header).feed(json.dumps({"nodes": bad}))


def test_round_trip_in_a_worker(client):
    g = sample_graph()
    kept: dict = {}  # the worker keeps a cache per graph: a layout grows from the body's last one
    for expanded in (frozenset(), expanded_to_depth(g, 1), {"e1"}, expanded_to_depth(g, 2)):
        assert client.layout(g, expanded, engine="layered") == compute_layout(g, expanded, engine="layered", cache=kept)
    assert client.layout(g, {"e1"}, direction="LR", max_span=2) == compute_layout(g, {"e1"}, direction="LR", max_span=2, cache=kept)
    other = chain_graph(30)  # a new graph object is sent; then the first one again
    assert client.layout(other) == compute_layout(other)
    assert client.layout(g) == compute_layout(g)


def test_submit_from_another_thread(client):
    g = sample_graph()
    box: dict = {}

    def work():
        box["futures"] = [client.submit(g, {"e1"}), client.submit(g, {"e2"})]

    t = threading.Thread(target=work)
    t.start()
    t.join()
    a, b = (f.result(timeout=60) for f in box["futures"])
    kept: dict = {}  # in the order they were sent: the second grows from the first
    assert a == compute_layout(g, {"e1"}, cache=kept) and b == compute_layout(g, {"e2"}, cache=kept)


def test_warming_between_requests_changes_no_answer(monkeypatch):
    # No idle wait: the worker lays out collapsed sub-graphs right after each answer, so requests
    # arrive while it warms. Every answer is still the layout of that history (ahead caches what
    # laying out on demand would), and requests are served.
    monkeypatch.setenv("JAXSCOPE_LAYOUT_IDLE_S", "0")
    g = sample_graph()
    kept: dict = {}
    walk = [frozenset(), {"e1"}, {"e1", "e4"}, {"e4"}, {"e4", "e5"}, {"e1", "e2", "e4", "e5"}, frozenset()]
    with LayoutClient() as warm_client:
        for k, expanded in enumerate(walk):
            if k % 2:
                time.sleep(0.3)  # let ahead finish now and then
            assert warm_client.layout(g, expanded) == compute_layout(g, expanded, cache=kept)


class _Sink:
    """A stdout for `serve` run on a thread (BytesIO has a fileno() that raises)."""

    def __init__(self) -> None:
        self.data = io.BytesIO()

    def write(self, b: bytes) -> None:
        self.data.write(b)

    def flush(self) -> None:
        pass


def test_the_layout_process_exits_by_itself_when_asked():
    c = LayoutClient()
    c.layout(sample_graph())
    process = c.process
    c.close()
    assert process is not None and process.returncode == 0  # not killed at the end of its grace period


def test_serve_ends_at_the_end_of_its_input_even_mid_graph():
    request = {"op": "layout", "id": 1, "has_graph": True, "graph_key": 1}
    out = _Sink()
    t = threading.Thread(target=serve, args=(io.BytesIO(json.dumps(request).encode() + b"\n"), out), daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive()
    reply = json.loads(out.data.getvalue().splitlines()[0])
    assert reply["id"] == 1 and not reply["ok"] and "the graph did not arrive" in reply["error"]


def test_a_failing_warm_step_only_stops_warming(monkeypatch):
    def broken(*args, **kwargs):
        raise RecursionError("boom")
        yield  # a generator, as `lay_out_ahead` is

    monkeypatch.setattr(layout, "lay_out_ahead", broken)
    monkeypatch.setattr(layout_server, "AHEAD_IDLE_S", 0.0)
    g = sample_graph()
    r, w = os.pipe()
    with os.fdopen(r, "rb") as stdin, os.fdopen(w, "wb") as feed:
        out = _Sink()
        t = threading.Thread(target=serve, args=(stdin, out), daemon=True)
        t.start()
        for rid in (1, 2):  # the second request comes after the failed step of laying out ahead
            header = {"op": "layout", "id": rid, "has_graph": rid == 1, "graph_key": 1, "expanded": [], "opts": {}}
            feed.write(json.dumps(header).encode() + b"\n")
            if rid == 1:
                feed.write(protocol.dumps({"graph": graph_to_wire(g)}))
            feed.flush()
            time.sleep(0.3)
        feed.write(b'{"op": "quit"}\n')
        feed.flush()
        t.join(10)
    assert not t.is_alive()
    replies = [json.loads(line) for line in out.data.getvalue().splitlines() if line.startswith(b'{"id"')]
    assert [m["id"] for m in replies if "ok" in m] == [1, 2] and all(m["ok"] for m in replies if "ok" in m)


def test_budget_falls_back_to_layered(client):
    g = chain_graph(300)
    lay = client.layout(g, engine="dot", budget_s=0.001)
    assert lay.engine == "layered"
    assert lay.notes[0] == "dot exceeded its 0.001 s budget; used the layered layout"
    plain = compute_layout(g, engine="layered")
    assert lay.nodes == plain.nodes and lay.edges == plain.edges
    assert client.layout(g, engine="dot") == compute_layout(g, engine="dot")  # a fresh worker serves on


def test_budget_counts_dot_time_only(client):
    g = chain_graph(3000)  # above dot_max_nodes: laid out by the layered engine, however long
    lay = client.layout(g, budget_s=0.001)
    assert lay == compute_layout(g)
    assert not any("budget" in note for note in lay.notes)


def test_cancel_kills_a_running_layout(client):
    slow = chain_graph(4000)
    future = client.submit(slow, engine="dot", budget_s=120)
    queued = client.submit(slow, engine="dot", budget_s=120)
    time.sleep(0.5)
    t0 = time.monotonic()
    client.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        future.result(timeout=30)
    assert time.monotonic() - t0 < 5
    assert queued.cancelled()
    g = sample_graph()
    assert client.layout(g) == compute_layout(g)


def test_errors_in_the_worker_are_raised(client):
    with pytest.raises(LayoutError, match="direction"):
        client.layout(sample_graph(), direction="BT")
    with pytest.raises(TypeError):
        client.submit(sample_graph(), colour="red")
    assert client.layout(sample_graph()) == compute_layout(sample_graph())


def test_dead_worker_falls_back_in_process(tmp_path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    g = mk_graph(mk_body("b0", 1, [("sin", ["in0"])], ["e0"]))
    with LayoutClient(python=str(fake)) as c:
        lay = c.layout(g)
    assert lay.engine == "layered"
    assert lay.notes[0].startswith("the layout worker failed (") and "exited (code 3)" in lay.notes[0]
    assert lay.nodes == compute_layout(g, engine="layered").nodes


def test_close_is_final():
    c = LayoutClient()
    c.close()
    c.close()
    with pytest.raises(RuntimeError):
        c.submit(sample_graph())


# ------------------------------------------------------------------------------- previews


def region_around(layout: Layout, owner: str, half_w: float = 600.0, half_h: float = 400.0) -> Region:
    """What a view centred on `owner`'s box shows (a `half_w` x `half_h` margin around it)."""
    box = next(b for b in layout.nodes if b.path == owner)
    ax, ay = box.x - box.w / 2, box.y - box.h / 2
    return Region(owner, ax, ay, box.x - half_w, box.y - half_h, box.x + half_w, box.y + half_h)


def test_a_regions_part_is_what_meets_the_rect_moved_with_the_toggled_owner():
    from jaxscope.layout.body import to_layout
    from jaxscope.layout.preview import PREVIEW_MIN, region_part

    graph, owner = chain_with_owner()
    cache: dict = {}
    before = to_layout(compute_tenths(graph, (), cache=cache))
    assert len(before.nodes) >= PREVIEW_MIN
    region = region_around(before, owner)
    grown = compute_tenths(graph, [owner], cache=cache)
    part = region_part(grown, region)
    assert part is not None
    whole = to_layout(grown)
    cluster = next(c for c in whole.clusters if c.path == f"{owner}:0")
    dx, dy = cluster.x - region.ax, cluster.y - region.ay  # where the owner's top-left went
    x0, y0, x1, y1 = region.x0 + dx, region.y0 + dy, region.x1 + dx, region.y1 + dy

    def meets(bx0: float, by0: float, bx1: float, by1: float) -> bool:
        return bx1 >= x0 and bx0 <= x1 and by1 >= y0 and by0 <= y1

    want = [b for b in whole.nodes if meets(b.x - b.w / 2, b.y - b.h / 2, b.x + b.w / 2, b.y + b.h / 2)]
    shown = to_layout(part)
    assert list(shown.nodes) == want and 0 < len(want) < len(whole.nodes) // 10
    assert {f"{owner}:0/e0", f"{owner}:0/e1"} <= {b.path for b in shown.nodes}  # the cluster's inside
    assert [c.path for c in shown.clusters] == [f"{owner}:0"]

    def edge_meets(e):
        xs, ys = [p[0] for p in e.points], [p[1] for p in e.points]
        return meets(min(xs), min(ys), max(xs), max(ys))

    assert list(shown.edges) == [e for e in whole.edges if edge_meets(e)]
    assert (shown.width, shown.height) == (whole.width, whole.height)  # the view's scroll range
    # nothing to gain: a small layout, or a rect showing most of the drawing
    small, small_owner = chain_with_owner(200)
    small_layout = to_layout(compute_tenths(small, ()))
    assert region_part(compute_tenths(small, [small_owner]), region_around(small_layout, small_owner)) is None
    everything = Region(owner, region.ax, region.ay, -10.0, -10.0, whole.width + 10, whole.height + 10)
    assert region_part(grown, everything) is None


def test_a_big_layout_sends_the_part_the_view_shows_ahead_of_the_whole(client):
    graph, owner = chain_with_owner()
    before = client.layout(graph, ())
    region = region_around(before, owner)
    seen: list[tuple[Layout, bool]] = []
    future = client.submit(graph, [owner], region=region, on_preview=lambda part: seen.append((part, future.done())))
    whole = future.result(timeout=60)
    assert len(seen) == 1
    part, done = seen[0]
    assert not done  # ahead of the whole
    boxes = {b.path: b for b in whole.nodes}
    assert 0 < len(part.nodes) < len(whole.nodes) // 10
    assert all(boxes[b.path] == b for b in part.nodes)  # the very boxes of the whole layout
    assert f"{owner}:0/e0" in {b.path for b in part.nodes}
    assert set(part.edges) <= set(whole.edges) and part.edges
    # no region, a region the layout process cannot read, a callback that raises: the layout as ever
    calls: list[Layout] = []
    assert client.submit(graph, (), on_preview=calls.append).result(timeout=60) == before
    assert client.submit(graph, [owner], region=None, on_preview=calls.append).result(timeout=60) == whole
    assert not calls

    def boom(part: Layout) -> None:
        raise RuntimeError("the view went away")

    again = client.submit(graph, (), region=region_around(before, owner), on_preview=boom).result(timeout=60)
    assert again == before


def test_a_malformed_region_or_a_failing_part_only_costs_the_preview(capsys, monkeypatch):
    from jaxscope.layout.preview import Region
    from jaxscope.runtime.layout_server import preview_lines

    graph, owner = chain_with_owner()
    grown = compute_tenths(graph, [owner])
    for bad in (None, [], ["e1", 1, 2], "x", [owner, "a", 0, 0, 1, 1, 1], [owner, True, 0, 0, 0, 1, 1]):
        assert preview_lines(grown, bad) == []
    with pytest.raises(ValueError):
        Region.from_json([1, 2])
    base = wire.layout_from_wire(wire.layout_to_wire(compute_layout(graph, ())))

    # a failing part costs only itself (its traceback goes to the layout process's stderr)
    def broken(t: Any, region: Any) -> None:
        raise IndexError("a bug in the preview")

    with monkeypatch.context() as m:
        m.setattr(layout_server, "region_part", broken)
        assert preview_lines(grown, region_around(base, owner).to_json()) == []
    assert "a bug in the preview" in capsys.readouterr().err
    # an owner the layout does not draw: the rect as it was
    lost = dataclasses.replace(region_around(base, owner), owner="e999999")
    assert preview_lines(grown, lost.to_json()) != []


def test_a_tables_iteration_converts_its_columns_a_block_at_a_time(monkeypatch):
    """An export walks every box and edge on a thread: the coordinates are converted to Python a
    block of rows at a time (one `tolist` of a 77k-edge table's 620k coordinates held the GIL
    30-60 ms, the GUI's stall), and the rows across block ends are the ones indexing gives."""
    import dataclasses

    import numpy as np

    import jaxscope.schema.layout_tables as lt
    from jaxscope.schema.layout import EdgePath

    lay = compute_layout(chain_graph(12))
    e = lay.edges[2]
    odd = EdgePath(e.src, e.dst, e.points[:1] + e.points, not e.routed, "f32[1]")
    lay = dataclasses.replace(lay, edges=lay.edges[:5] + (odd,) + lay.edges[5:])
    back = layout_from_wire(layout_to_wire(lay))
    monkeypatch.setattr(lt, "ITER_BLOCK", 4)
    sizes: list[int] = []
    real = np.ndarray.tolist

    class Spy(np.ndarray):
        def tolist(self):
            sizes.append(self.size)
            return real(self)

    table, start = back.edges, back.edges.start.tolist()
    table.pts = table.pts.view(Spy)
    back.nodes.boxes = back.nodes.boxes.view(Spy)
    walked = list(table)
    assert sizes == [start[min(k + 4, len(table))] - start[k] for k in range(0, len(table), 4)]  # a block at a time
    assert walked == [table[j] for j in range(len(table))] == list(lay.edges)
    sizes.clear()
    assert list(back.nodes) == list(lay.nodes)
    assert sizes == [4 * min(4, len(lay.nodes) - k) for k in range(0, len(lay.nodes), 4)]
