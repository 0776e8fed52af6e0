"""A fast O(V+E) layered layout in pure Python, for bodies too big for dot.

Sugiyama-lite: longest-path layers (sources pulled down next to their first consumer), a few
barycenter ordering sweeps (down, up, ...), then x coordinates that pull each node towards its
neighbours while keeping the layer's order and a minimum gap (the average of a left-to-right and a
right-to-left greedy pass, both feasible, so the average is too), and y from the layer heights.
No virtual nodes, no edge routing: edges are drawn afterwards as single cubics.

Everything works on integer node indices and lists, and only ever sorts by numeric keys with the
index as the tie-breaker, so the result depends on the input order alone (no hash order).
50k nodes take a few tenths of a second.
"""

from __future__ import annotations

from collections.abc import Sequence

LAYER_GAP = 28.0  # px between the bottom of one layer and the top of the next
NODE_GAP = 18.0  # px between neighbours in a layer


def longest_path_ranks(n: int, edges: Sequence[tuple[int, int]]) -> list[int]:
    """Longest-path rank of each node (sources 0), then each source moved down next to its
    nearest consumer (rank = min(consumer ranks) - 1), as dot's network simplex would.

    Cycles (never produced by a jaxpr, but tolerated) are broken by forcing the lowest-index
    node left over; its remaining in-edges then point upwards.
    """
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for u, v in edges:
        if u != v:
            succ[u].append(v)
            indeg[v] += 1
    has_pred = [d > 0 for d in indeg]
    rank = [0] * n
    done = [False] * n
    order = [i for i in range(n) if indeg[i] == 0]
    head = 0
    scan = 0  # lowest index that may still be unprocessed (cycle breaking)
    while True:
        while head < len(order):
            u = order[head]
            head += 1
            done[u] = True
            r = rank[u] + 1
            for v in succ[u]:
                if rank[v] < r:
                    rank[v] = r
                indeg[v] -= 1
                if indeg[v] == 0:
                    order.append(v)
        if head >= n:
            break
        while done[scan] or indeg[scan] <= 0:
            scan += 1
        indeg[scan] = 0  # break a cycle here
        order.append(scan)
    for u in range(n):
        if not has_pred[u] and succ[u]:
            rank[u] = max(0, min(rank[v] for v in succ[u]) - 1)
    return rank


def layered_layout(
    sizes: Sequence[tuple[float, float]],
    edges: Sequence[tuple[int, int]],
    *,
    ranks: Sequence[int] | None = None,
    order_edges: Sequence[tuple[int, int]] | None = None,
    sweeps: int = 4,
    layer_gap: float = LAYER_GAP,
    node_gap: float = NODE_GAP,
) -> tuple[list[float], list[float]]:
    """Centres (xs, ys) for boxes of `sizes` (w, h), flowing top to bottom, top-left at (0, 0).

    `ranks` defaults to `longest_path_ranks(len(sizes), edges)`. `order_edges` (default: `edges`)
    are the edges that pull nodes together in the ordering and x passes; pass the short edges only
    so that long ones do not drag nodes across the drawing.
    """
    n = len(sizes)
    if n == 0:
        return [], []
    if ranks is None:
        ranks = longest_path_ranks(n, edges)
    pull = edges if order_edges is None else order_edges
    pred: list[list[int]] = [[] for _ in range(n)]
    succ: list[list[int]] = [[] for _ in range(n)]
    for u, v in pull:
        if u != v:
            succ[u].append(v)
            pred[v].append(u)

    n_layers = max(ranks) + 1
    layers: list[list[int]] = [[] for _ in range(n_layers)]
    for u in range(n):
        layers[ranks[u]].append(u)

    # Initial order: a DFS-ish order is better than index order for chains; index order is fine
    # here because the builder emits equations in program order.
    pos = [0.0] * n
    for layer in layers:
        for i, u in enumerate(layer):
            pos[u] = float(i)

    for s in range(sweeps):
        down = s % 2 == 0
        nbrs = pred if down else succ
        rng = range(1, n_layers) if down else range(n_layers - 2, -1, -1)
        for li in rng:
            layer = layers[li]
            m = len(layer)
            if m < 2:
                continue
            if m == 2:  # the commonest multi-node layer (a node and a stub): no sort needed
                u, v = layer
                ps, qs = nbrs[u], nbrs[v]
                ku = sum([pos[p] for p in ps]) / len(ps) if ps else pos[u]
                kv = sum([pos[q] for q in qs]) / len(qs) if qs else pos[v]
                if kv < ku:
                    layers[li] = [v, u]
                    pos[v], pos[u] = 0.0, 1.0
                continue
            keys = []
            for i, u in enumerate(layer):
                ps = nbrs[u]
                if ps:
                    tot = 0.0
                    for p in ps:
                        tot += pos[p]
                    keys.append((tot / len(ps), i, u))
                else:
                    keys.append((pos[u], i, u))
            keys.sort()
            layers[li] = layer = [k[2] for k in keys]
            for i, u in enumerate(layer):
                pos[u] = float(i)

    # x: pack each layer, centred on 0, then pull towards neighbours.
    widths = [w for w, _ in sizes]
    xs = [0.0] * n
    for layer in layers:
        total = sum(widths[u] for u in layer) + node_gap * (len(layer) - 1)
        cx = -total / 2
        for u in layer:
            xs[u] = cx + widths[u] / 2
            cx += widths[u] + node_gap
    # Sources (stub copies, literals, inputs) weigh little, so a chain stays straight and the
    # stub beside it moves aside instead of pushing the chain over by half a box every layer.
    light = [not pred[u] for u in range(n)]
    for s in range(sweeps):
        down = s % 2 == 0
        nbrs = pred if down else succ
        rng = range(n_layers) if down else range(n_layers - 1, -1, -1)
        for li in rng:
            layer = layers[li]
            if len(layer) == 1:
                u = layer[0]
                ps = nbrs[u]
                if ps:
                    tot = 0.0
                    for p in ps:
                        tot += xs[p]
                    xs[u] = tot / len(ps)
                continue
            if len(layer) == 2:  # closed form of _place_layer for two nodes
                u, v = layer
                ps, qs = nbrs[u], nbrs[v]
                if ps:
                    want_u, wu = sum([xs[p] for p in ps]) / len(ps), float(len(ps))
                else:
                    want_u, wu = xs[u], 0.5
                if qs:
                    want_v, wv = sum([xs[q] for q in qs]) / len(qs), float(len(qs))
                else:
                    want_v, wv = xs[v], 0.5
                if light[u]:
                    wu *= 0.02
                if light[v]:
                    wv *= 0.02
                sep = (widths[u] + widths[v]) / 2 + node_gap
                if want_v - want_u >= sep:
                    xs[u], xs[v] = want_u, want_v
                else:
                    y = (wu * want_u + wv * (want_v - sep)) / (wu + wv)
                    xs[u], xs[v] = y, y + sep
                continue
            _place_layer(layer, nbrs, xs, widths, light, node_gap)
    # y from layer heights; shift so the top-left corner is (0, 0).
    ys = [0.0] * n
    top = 0.0
    for layer in layers:
        if not layer:
            continue
        lh = max(sizes[u][1] for u in layer)
        mid = top + lh / 2
        for u in layer:
            ys[u] = mid
        top += lh + layer_gap
    min_x = min(xs[u] - widths[u] / 2 for u in range(n))
    if min_x:
        xs = [x - min_x for x in xs]
    return xs, ys


def _place_layer(
    layer: list[int], nbrs: list[list[int]], xs: list[float], widths: list[float], light: list[bool], gap: float
) -> None:
    """Weighted least squares x for one layer: each node pulled to the mean x of its neighbours,
    order and minimum gaps kept. With offsets o_i (the packed distance from the first node),
    y_i = x_i - o_i must be non-decreasing: weighted isotonic regression, pool-adjacent-violators.
    """
    # blocks on a stack: [sum of weights, sum of weight * target, number of nodes]
    bw: list[float] = []
    bz: list[float] = []
    bn: list[int] = []
    offs = []
    off = 0.0
    prev_w = 0.0
    for i, u in enumerate(layer):
        if i:
            off += (prev_w + widths[u]) / 2 + gap
        prev_w = widths[u]
        offs.append(off)
        ps = nbrs[u]
        if ps:
            tot = 0.0
            for p in ps:
                tot += xs[p]
            want = tot / len(ps)
            w = float(len(ps))
        else:
            want = xs[u]
            w = 0.5
        if light[u]:
            w *= 0.02
        z = want - off
        wsum, zsum, cnt = w, w * z, 1
        while bw and bz[-1] * wsum > zsum * bw[-1]:  # mean(top) > mean(new): merge
            wsum += bw.pop()
            zsum += bz.pop()
            cnt += bn.pop()
        bw.append(wsum)
        bz.append(zsum)
        bn.append(cnt)
    i = 0
    for wsum, zsum, cnt in zip(bw, bz, bn):
        y = zsum / wsum
        for _ in range(cnt):
            xs[layer[i]] = y + offs[i]
            i += 1
