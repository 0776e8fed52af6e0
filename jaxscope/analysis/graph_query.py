"""Queries over a drawn graph that need no toolkit: search and dataflow cones.

Both work on *base* paths (stub copies `path#k` folded into their node), over what is visible in
one layout, so the Qt view, an export highlighter or a test can share them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import networkx as nx

from jaxscope.analysis import scopes
from jaxscope.schema.graph import Node

DIRECTIONS = ("up", "down", "both")

_LINE_QUERY = re.compile(r"^\s*(?::|line\s+)(\d+)\s*$", re.IGNORECASE)
_FILE_LINE_QUERY = re.compile(r"^\s*(\S.*?):(\d+)\s*$")


class SearchIndex:
    """Search drawn nodes by label, avals or scope (``block1``); ``block1/up`` a scope path (or a
    file path); ``:12``/``line 12`` match a line exactly, ``model.py`` or ``model.py:12`` the nodes
    from that file (or line)."""

    def __init__(self, nodes: Iterable[tuple[str, Node | None]]) -> None:
        self._keys: list[tuple[str, Node | None, str]] = []
        for base, node in nodes:
            if node is None:
                self._keys.append((base, None, base.casefold()))
                continue
            # the path is matched only through `file:line`: as free text, "x" or "step" would match
            # every node of /home/x/train_step.py
            self._keys.append((base, node, "\n".join([node.label, *node.avals, node.name_stack]).casefold()))

    def search(self, text: str) -> list[str]:
        """Base paths, in the order given, whose node matches `text` (case-insensitive)."""
        text = text.strip()
        if not text:
            return []
        line_only = _LINE_QUERY.match(text)
        file_line = _FILE_LINE_QUERY.match(text) if not line_only else None
        needle = text.casefold()
        file_only = not file_line and (needle.endswith(".py") or "/" in needle)
        matches = []
        for base, node, hay in self._keys:
            src = node.source if node is not None else None
            if line_only:
                hit = src is not None and src.line == int(line_only.group(1))
            elif file_line and src is not None and src.line == int(file_line.group(2)):
                hit = file_line.group(1).casefold() in src.file.casefold()
            elif file_only:
                hit = (src is not None and needle in src.file.casefold()) or (
                    node is not None and "/" in needle and scopes.matches(node.name_stack, text)
                )
            else:
                hit = needle in hay
            if hit:
                matches.append(base)
        return matches


class Dataflow:
    """Upstream/downstream cones over the visible dataflow (networkx does the traversal)."""

    def __init__(self, nodes: Iterable[str], edges: Iterable[tuple[str, str]]) -> None:
        self.dag = nx.DiGraph()
        self.dag.add_nodes_from(nodes)
        self.dag.add_edges_from(edges)

    def cones(self, path: str, direction: str = "both") -> tuple[set[str], set[str]]:
        """(up, down): what `path` depends on and what depends on it, each including `path`."""
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, not {direction!r}")
        base = path.partition("#")[0]
        if base not in self.dag:
            return set(), set()
        up = nx.ancestors(self.dag, base) | {base} if direction in ("up", "both") else set()
        down = nx.descendants(self.dag, base) | {base} if direction in ("down", "both") else set()
        return up, down
