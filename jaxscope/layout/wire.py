"""A Layout on the wire between the layout process and its client.

A Layout is mostly numbers: on the wire it goes as integer tenths of a px (`{"wire": 5, ...}`),
written straight from `compute_tenths`'s columns (`layout_tables`): the strings as lists, the
coordinates as base64 bytes, which the reader keeps as numpy arrays: 75k edges decode in ~10 ms
instead of ~0.1 s of JSON ints, and nothing is gathered again for the scene."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any, cast

import numpy as np
import orjson

from jaxscope.layout.body import cluster_boxes, from_layout
from jaxscope.layout.types import Tenths
from jaxscope.schema.codec import from_jsonable
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.errors import JaxscopeError
from jaxscope.schema.layout import Layout
from jaxscope.schema.layout_tables import EdgeTable, NodeTable

LAYOUT_OPTIONS = ("direction", "max_span", "dot_max_nodes", "engine", "annotations")


WIRE_VERSION = 5


WIRE_ITEMS = 3000  # nodes (or edges) per line: no single json.loads holds the GUI's GIL for long


_NODE_KEYS = {"paths", "boxes", "dtype"}


_EDGE_KEYS = {"src", "dst", "routed", "aval", "lens", "pts", "dtype"}


def layout_to_wire(layout: Layout) -> str:
    """Lines of JSON text for `layout`, whose coordinates are whole tenths of a px as
    `compute_layout` makes them (read them with `layout_from_wire`): a header that says how many
    lines follow, then the nodes and the edges in chunks."""
    with gc_paused():
        return "\n".join(layout_wire_lines(from_layout(layout)))


def layout_wire_lines(t: Tenths) -> Iterator[str]:
    """`layout_to_wire`'s lines for a layout in columns, each encoded when asked for: the worker
    writes a chunk while the client decodes the one before."""
    n_nodes, n_edges = len(t.nodes), len(t.edges)
    header = {
        "wire": WIRE_VERSION,
        "lines": -(-n_nodes // WIRE_ITEMS) + -(-n_edges // WIRE_ITEMS),
        "width": t.width,
        "height": t.height,
        "engine": t.engine,
        "notes": t.notes,
        "clusters": t.clusters,
    }
    yield _json_line(header)
    for i in range(0, n_nodes, WIRE_ITEMS):
        nodes = t.nodes.cut(i, min(i + WIRE_ITEMS, n_nodes))
        dtype = _int_type(nodes.boxes)
        yield _json_line({"nodes": {"paths": nodes.paths, "boxes": _b64(nodes.boxes, dtype), "dtype": dtype}})
    for i in range(0, n_edges, WIRE_ITEMS):
        part = t.edges.cut(i, min(i + WIRE_ITEMS, n_edges))
        dtype = _int_type(part.pts)
        yield _json_line(
            {
                "edges": {
                    "src": part.src,
                    "dst": part.dst,
                    "routed": part.routed,
                    "aval": part.aval,
                    "lens": _b64(np.diff(part.start), "<i4"),
                    "pts": _b64(part.pts, dtype),
                    "dtype": dtype,
                }
            }
        )


def _int_type(a: np.ndarray) -> str:
    """Little-endian int32 if every value of `a` fits, else int64."""
    return "<i4" if not a.size or (int(a.min()) >= -(2**31) and int(a.max()) < 2**31) else "<i8"


def _b64(a: np.ndarray, dtype: str) -> str:
    return base64.b64encode(a.astype(dtype).tobytes()).decode("ascii")


def _unb64(text: Any, dtype: Any) -> np.ndarray:
    if dtype not in ("<i4", "<i8"):
        raise ValueError(f"its dtype is {dtype!r}")
    return np.frombuffer(base64.b64decode(text, validate=True), dtype=dtype).astype(np.int64)


def _json_line(data: Any) -> str:
    """One wire line: only strings, bools and ints, so orjson encodes it (~6x faster than `json`)."""
    return orjson.dumps(data).decode("utf-8")


def wire_lines(header: str | bytes) -> int:
    """How many more lines belong to the layout whose first line is `header`."""
    try:
        data = json.loads(header)
    except ValueError:
        return 0
    return int(data.get("lines", 0)) if isinstance(data, dict) and data.get("wire") == WIRE_VERSION else 0


def layout_from_wire(text: str | bytes) -> Layout:
    """The Layout `layout_to_wire` wrote (or a plain `Layout.to_json` text)."""
    lines = text.splitlines()
    with gc_paused():
        reader = WireReader(lines[0] if lines else "null")
        for line in lines[1:]:
            reader.feed(line)
        return reader.layout()


class WireReader:
    """Decodes a layout's wire lines one at a time, as they arrive (see `layout_wire_lines`);
    call it with the cyclic GC paused."""

    def __init__(self, header: str | bytes) -> None:
        self.data = json.loads(header)
        self.compact = isinstance(self.data, dict) and self.data.get("wire") == WIRE_VERSION
        self.paths: list[str] = []
        self.boxes: list[np.ndarray] = []
        self.src: list[str] = []
        self.dst: list[str] = []
        self.routed: list[bool] = []
        self.aval: list[str] = []
        self.lens: list[np.ndarray] = []
        self.pts: list[np.ndarray] = []

    def feed(self, line: str | bytes) -> None:
        if not line.strip():
            return
        chunk = orjson.loads(line)  # ints and paths: ~1.6x json's speed here (not on the string-heavy graph)
        if "error" in chunk:  # the worker failed halfway through writing the layout
            raise LayoutError(str(chunk["error"]))
        nodes = chunk.get("nodes")
        if nodes is not None:
            self._feed_nodes(nodes)
        edges = chunk.get("edges")
        if edges is not None:
            self._feed_edges(edges)

    def _feed_nodes(self, nodes: Any) -> None:
        try:
            _check_keys(nodes, _NODE_KEYS)
            boxes = _unb64(nodes["boxes"], nodes["dtype"])
            if len(boxes) != 4 * len(nodes["paths"]):
                raise ValueError(f"it has {len(nodes['paths'])} paths and {len(boxes)} coordinates")
        except (ValueError, TypeError, KeyError) as exc:
            raise LayoutError(f"a node chunk of the layout is malformed: {exc}") from None
        self.paths += nodes["paths"]
        self.boxes.append(boxes.reshape(-1, 4))

    def _feed_edges(self, edges: Any) -> None:
        try:
            _check_keys(edges, _EDGE_KEYS)
            lens = _unb64(edges["lens"], "<i4")
            pts = _unb64(edges["pts"], edges["dtype"])
            n = len(lens)
            if not len(edges["src"]) == len(edges["dst"]) == len(edges["routed"]) == len(edges["aval"]) == n:
                raise ValueError("its columns have different lengths")
            if int(lens.sum()) != len(pts) or (lens % 2).any() or (lens < 0).any():
                raise ValueError("its point counts do not add up to its coordinates")
        except (ValueError, TypeError, KeyError) as exc:
            raise LayoutError(f"an edge chunk of the layout is malformed: {exc}") from None
        self.src += edges["src"]
        self.dst += edges["dst"]
        self.routed += edges["routed"]
        self.aval += edges["aval"]
        self.lens.append(lens)
        self.pts.append(pts)

    def layout(self) -> Layout:
        data = self.data
        if not self.compact:
            return cast(Layout, from_jsonable(Layout, data))  # decoded JSON: the generic form: `codec.dumps`, always one line
        lens = np.concatenate([np.zeros(0, dtype=np.int64), *self.lens])
        start = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(lens, out=start[1:])
        pts = np.concatenate([np.zeros(0, dtype=np.int64), *self.pts])
        boxes = np.concatenate([np.zeros((0, 4), dtype=np.int64), *self.boxes])
        edges = EdgeTable(self.src, self.dst, self.routed, self.aval, pts, start)
        return Layout(
            width=data["width"] / 10,
            height=data["height"] / 10,
            nodes=NodeTable(self.paths, boxes),  # type: ignore[arg-type]  # a table stands in for the tuple
            edges=edges,  # type: ignore[arg-type]  # a table stands in for the tuple
            clusters=cluster_boxes(data["clusters"]),
            engine=data["engine"],
            notes=tuple(data["notes"]),
        )


def _check_keys(chunk: Any, keys: set[str]) -> None:
    if not isinstance(chunk, dict) or set(chunk) != keys:
        raise ValueError(f"its keys are {sorted(chunk) if isinstance(chunk, dict) else type(chunk).__name__}")


class LayoutError(JaxscopeError, RuntimeError):
    """The layout process failed on a graph (compute_layout raised, or its answer broke the wire);
    the message holds its traceback. A bug of jaxscope's: report it with the graph's JSON export."""
