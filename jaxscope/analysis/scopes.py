"""The model structure in JAX's name stacks: module paths, and the transformations around them.

A flax linen step's equations carry name stacks such as ``jvp(Deep)/block1/proj`` (the forward
pass) and ``transpose(jvp(Deep))/block1/proj`` (its backward pass); ``jax.named_scope`` and
``jax.named_call`` add their names the same way, ``vmap(...)``/``remat(...)`` wrap what they
transformed. Read here once, so search, grouping and pairing agree on what a scope is.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from jaxscope.schema.graph import Graph

# wrappers JAX writes around a name stack component for the transformation applied there
TRANSFORMS = frozenset({
    "jvp", "transpose", "vmap", "remat", "checkpoint", "pmap", "jit", "pjit", "custom_jvp", "custom_vjp",
    "shard_map", "xmap", "vjp", "linearize", "grad", "scan", "while", "cond",
})  # fmt: skip


@dataclass(frozen=True, slots=True)
class Scope:
    """A name stack read: the module path without transformations, the pass and the marks."""

    parts: tuple[str, ...]  # ("Deep", "block1", "proj")
    transforms: frozenset[str]  # {"transpose", "jvp"}

    @property
    def path(self) -> str:
        return "/".join(self.parts)

    @property
    def pass_(self) -> str:
        """ "backward" under `transpose(...)`, "forward" under `jvp(...)`, "" outside differentiation."""
        if "transpose" in self.transforms:
            return "backward"
        if "jvp" in self.transforms or "linearize" in self.transforms:
            return "forward"
        return ""


def split_top(stack: str) -> list[str]:
    """``transpose(jvp(Deep))/block1/proj`` -> its components, splitting only at top-level slashes."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(stack):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        elif ch == "/" and depth == 0:
            parts.append(stack[start:i])
            start = i + 1
    parts.append(stack[start:])
    return [p for p in parts if p]


@functools.lru_cache(maxsize=65536)
def read_scope(name_stack: str) -> Scope:
    """The scope of a name stack (a program has few distinct ones: cached)."""
    parts: list[str] = []
    transforms: set[str] = set()
    for component in split_top(name_stack):
        for inner in _peel(component, transforms):
            parts.append(inner)
    return Scope(tuple(parts), frozenset(transforms))


def _peel(component: str, transforms: set[str]) -> list[str]:
    """``transpose(jvp(Deep))`` -> ["Deep"], noting the transformations; ``jvp(Deep/x)`` -> ["Deep", "x"]."""
    while component.endswith(")"):
        head, paren, inner = component.partition("(")
        if not paren or head not in TRANSFORMS:
            break
        transforms.add(head)
        component = inner[:-1]
    return split_top(component) if "/" in component else ([component] if component else [])


def matches(name_stack: str, query: str) -> bool:
    """True when `query` (``block1``, ``block1/up``, case-insensitive) is a run of the scope's path:
    ``block1/up`` finds ``transpose(jvp(M))/block1/up/dot`` and ``jvp(M)/block1/up`` alike."""
    if not name_stack:
        return False
    path = "/" + read_scope(name_stack).path.casefold() + "/"
    want = query.strip().strip("/").casefold()
    return bool(want) and ("/" + want + "/" in path or (want in path and "/" not in want))


# ---------------------------------------------------------------------------- forward and backward


def pairs(equations: Sequence[tuple[str, str, object]]) -> dict[str, list[str]]:
    """Backward equation -> the forward equations it transposes, and forward -> backward: the same
    scope and the same source frame (JAX's transpose keeps the source of the equation it came
    from). Given as (path, name stack, source key) in program order."""
    forward: dict[tuple[str, object], list[str]] = {}
    for path, stack, source in equations:
        scope = read_scope(stack)
        if scope.pass_ == "forward" and source is not None:
            forward.setdefault((scope.path, source), []).append(path)
    out: dict[str, list[str]] = {}
    for path, stack, source in equations:
        scope = read_scope(stack)
        if scope.pass_ != "backward" or source is None:
            continue
        found = forward.get((scope.path, source), [])
        if found:
            out[path] = list(found)
            for f in found:
                out.setdefault(f, []).append(path)
    return out


def graph_pairs(graph: Graph) -> dict[str, list[str]]:
    """`pairs` of the top level of `graph` (where `jax.grad` puts both passes)."""
    rows: list[tuple[str, str, object]] = []
    for node in graph.top.nodes:
        if node.kind == "eqn":
            inner = node.frames[-1] if node.frames else None
            key = (node.source.file, node.source.line, node.source.col, inner) if node.source is not None else None
            rows.append((node.id, node.name_stack, key))
    return pairs(rows)
