"""A fast O(V+E) layered layout in pure Python, for bodies too big for dot.

Sugiyama-lite: longest-path layers (sources pulled down next to their first consumer), a few
barycenter ordering sweeps (down, up, ...), then x coordinates that pull each node towards its
neighbours while keeping the layer's order and a minimum gap (the average of a left-to-right and a
right-to-left greedy pass, both feasible, so the average is too), and y from the layer heights.
No virtual nodes, no edge routing: edges are drawn afterwards as single cubics.

Everything works on integer node indices and lists, and only ever sorts by numeric keys with the
current order as the tie-breaker (a stable sort), so the result depends on the input order alone
(no hash order).
50k nodes take a few tenths of a second.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import sub

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
    queue = [i for i in range(n) if indeg[i] == 0]
    done = 0  # nodes processed
    scan = 0  # lowest index that may still be unprocessed (cycle breaking)
    while True:
        push = queue.append
        for u in queue:  # a list iterator sees the items appended while it runs: a FIFO queue
            r = rank[u] + 1
            for v in succ[u]:
                if rank[v] < r:
                    rank[v] = r
                d = indeg[v] - 1
                indeg[v] = d
                if d == 0:
                    push(v)
        done += len(queue)
        if done >= n:
            break
        # Queued nodes have indeg <= 0 (a forced one may go negative), the others > 0, and the
        # queue is drained here: so indeg > 0 is exactly "not processed yet".
        while indeg[scan] <= 0:
            scan += 1
        indeg[scan] = 0  # break a cycle here
        queue = [scan]
    rank_of = rank.__getitem__
    for u, vs in enumerate(succ):
        if vs and not has_pred[u]:
            rank[u] = max(0, min(map(rank_of, vs)) - 1)
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
    _order(layers, pred, succ, n, sweeps)
    widths = [w for w, _ in sizes]
    xs, offsets = _pack(layers, widths, n, node_gap)
    _pull(layers, offsets, pred, succ, widths, xs, sweeps, node_gap)
    ys = _ys(layers, [h for _, h in sizes], n, layer_gap)
    min_x = min(map(sub, xs, [w / 2 for w in widths]))
    if min_x:
        xs = [x - min_x for x in xs]
    return xs, ys


def _order(layers: list[list[int]], pred: list[list[int]], succ: list[list[int]], n: int, sweeps: int) -> None:
    """Each layer's order, in place: barycenter sweeps, down by predecessors and up by successors."""
    # Layers are reordered in place, so these views stay valid; one-node layers never move.
    busy = [layer for layer in layers if len(layer) > 1]
    down_layers = busy if len(layers[0]) < 2 else busy[1:]
    up_layers = [layer for layer in reversed(layers[:-1]) if len(layer) > 1]

    # Initial order: a DFS-ish order is better than index order for chains; index order is fine
    # here because the builder emits equations in program order. Positions are ints: the
    # barycenters are means of small ints, exact as floats too, so the order is the same.
    pos = [0] * n
    for layer in busy:
        for i, u in enumerate(layer):
            pos[u] = i
    pos_of = pos.__getitem__
    key = [0.0] * n  # barycenter of each node in the layer being sorted

    for s in range(sweeps):
        down = s % 2 == 0
        nbrs = pred if down else succ
        for layer in down_layers if down else up_layers:
            if len(layer) == 2:  # the commonest multi-node layer (a node and a stub): no sort needed
                u, v = layer
                ps, qs = nbrs[u], nbrs[v]
                ku = sum(map(pos_of, ps)) / len(ps) if ps else pos[u]
                kv = sum(map(pos_of, qs)) / len(qs) if qs else pos[v]
                if kv < ku:
                    layer[0], layer[1] = v, u
                    pos[v], pos[u] = 0, 1
                continue
            for u in layer:
                ps = nbrs[u]
                if not ps:
                    key[u] = pos[u]
                elif len(ps) == 1:
                    key[u] = pos[ps[0]]
                else:
                    key[u] = sum(map(pos_of, ps)) / len(ps)
            layer.sort(key=key.__getitem__)  # stable: ties keep the current order
            for i, u in enumerate(layer):
                pos[u] = i


def _pack(layers: list[list[int]], widths: list[float], n: int, node_gap: float) -> tuple[list[float], list[list[float]]]:
    """Each layer packed, centred on 0 (xs), and per layer of 3+ nodes each node's packed offset
    from the first (fixed once ordered)."""
    xs = [0.0] * n  # a one-node layer packs to exactly 0.0
    # Per layer of 3+ nodes, each node's packed offset from the first (fixed once ordered).
    offsets: list[list[float]] = [[] for _ in range(len(layers))]
    for li, layer in enumerate(layers):
        if len(layer) < 2:
            continue
        total = sum([widths[u] for u in layer]) + node_gap * (len(layer) - 1)
        cx = -total / 2
        for u in layer:
            w = widths[u]
            xs[u] = cx + w / 2
            cx += w + node_gap
        if len(layer) > 2:
            offs = offsets[li] = [0.0]
            off = 0.0
            prev_w = widths[layer[0]]
            for u in layer[1:]:
                w = widths[u]
                off += (prev_w + w) / 2 + node_gap
                prev_w = w
                offs.append(off)
    return xs, offsets


def _pull(
    layers: list[list[int]],
    offsets: list[list[float]],
    pred: list[list[int]],
    succ: list[list[int]],
    widths: list[float],
    xs: list[float],
    sweeps: int,
    node_gap: float,
) -> None:
    """Each box pulled towards its neighbours, in place: sweeps down and up, layers kept packed."""
    # Sources (stub copies, literals, inputs) weigh little, so a chain stays straight and the
    # stub beside it moves aside instead of pushing the chain over by half a box every layer.
    light = [not ps for ps in pred]
    w_down = _pull_weights(pred, light)
    w_up = _pull_weights(succ, light)
    for s in range(sweeps):
        down = s % 2 == 0
        nbrs, wts = (pred, w_down) if down else (succ, w_up)
        for layer, offs in zip(layers, offsets) if down else zip(reversed(layers), reversed(offsets)):
            m = len(layer)
            if m == 1:
                u = layer[0]
                ps = nbrs[u]
                if len(ps) == 1:
                    xs[u] = xs[ps[0]] + 0.0  # == (0.0 + x) / 1, the mean below
                elif ps:
                    tot = 0.0
                    for p in ps:
                        tot += xs[p]
                    xs[u] = tot / len(ps)
            elif m == 2:  # closed form of _place_layer for two nodes
                u, v = layer
                ps, qs = nbrs[u], nbrs[v]
                want_u = sum([xs[p] for p in ps]) / len(ps) if ps else xs[u]
                want_v = sum([xs[q] for q in qs]) / len(qs) if qs else xs[v]
                wu, wv = wts[u], wts[v]
                sep = (widths[u] + widths[v]) / 2 + node_gap
                if want_v - want_u >= sep:
                    xs[u], xs[v] = want_u, want_v
                else:
                    y = (wu * want_u + wv * (want_v - sep)) / (wu + wv)
                    xs[u], xs[v] = y, y + sep
            elif m:
                _place_layer(layer, offs, nbrs, wts, xs)


def _ys(layers: list[list[int]], heights: list[float], n: int, layer_gap: float) -> list[float]:
    """Each box's centre y: its layer's middle, layers stacked from the top with `layer_gap`."""
    # y from layer heights; shift so the top-left corner is (0, 0).
    ys = [0.0] * n
    top = 0.0
    for layer in layers:
        if not layer:
            continue
        lh = heights[layer[0]] if len(layer) == 1 else max([heights[u] for u in layer])
        mid = top + lh / 2
        for u in layer:
            ys[u] = mid
        top += lh + layer_gap
    return ys


def _pull_weights(nbrs: list[list[int]], light: list[bool]) -> list[float]:
    """Each node's weight in the x passes: its neighbour count (0.5 with none), x0.02 if light.
    Fixed for the whole layout, so computed once per direction."""
    return [(float(len(ps)) if ps else 0.5) * (0.02 if is_light else 1.0) for ps, is_light in zip(nbrs, light)]


def _place_layer(layer: list[int], offs: list[float], nbrs: list[list[int]], wts: list[float], xs: list[float]) -> None:
    """Weighted least squares x for one layer: each node pulled to the mean x of its neighbours,
    order and minimum gaps kept. With offsets o_i (`offs`, the packed distance from the first
    node), y_i = x_i - o_i must be non-decreasing: weighted isotonic regression,
    pool-adjacent-violators.
    """
    # blocks on a stack: [sum of weights, sum of weight * target, number of nodes]
    bw: list[float] = []
    bz: list[float] = []
    bn: list[int] = []
    for u, off in zip(layer, offs):
        ps = nbrs[u]
        if len(ps) == 1:
            want = xs[ps[0]] + 0.0  # == (0.0 + x) / 1, the mean below
        elif ps:
            tot = 0.0
            for p in ps:
                tot += xs[p]
            want = tot / len(ps)
        else:
            want = xs[u]
        wsum = wts[u]
        zsum = wsum * (want - off)
        cnt = 1
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
        if cnt == 1:
            xs[layer[i]] = y + offs[i]
            i += 1
            continue
        for j in range(i, i + cnt):
            xs[layer[j]] = y + offs[j]
        i += cnt
