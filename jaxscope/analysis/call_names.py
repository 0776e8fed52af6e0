"""Names for the groups that come from calls rather than scopes: a module method named by the
attribute path of the module it ran on (``encoder.layers[2].attn``, as nnx and equinox users
write it), a library's wrappers folded away, and calls of one equation dissolved into their
caller.

Name stacks name linen modules; nnx and equinox modules leave only their methods' frames
(``EncoderBlock.__call__`` four times). The parameters a call reads say which module it ran on:
the longest path its floating-point inputs of one argument share (``model.encoder.layers[2].attn.
query.kernel`` and ``...attn.out.bias`` -> ``encoder.layers[2].attn``), relative to its caller's.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from jaxscope.schema.graph import Body, Node

Key = tuple[str, ...]

# calls libraries make around the user-facing one, named by neither what the user wrote nor what it
# does: optax wraps every transform of a chain in `with_extra_args_support`
WRAPPERS = frozenset({"with_extra_args_support"})

_TOKEN = re.compile(r"\[[^\]]*\]|\.\w+|^\w+")  # "params['w'][0].mu" -> "params", "['w']", "[0]", ".mu"
_FLOAT = re.compile(r"^(f|bf)\d")  # a parameter's dtype: f32[...], bf16[...]
_NUMBER = re.compile(r" #\d+$")


def methods(nodes: Iterable[Node]) -> frozenset[str]:
    """The display names (`_function`'s) of the methods in the equations' frames: ``Linear.__call__``
    but not a closure ``train_step.<locals>.loss_fn``, whose display also has a dot."""
    return frozenset(f.function for n in nodes for f in n.frames if "." in f.function and "<locals>" not in f.function)


def module_path(label: str) -> tuple[str, ...]:
    """The module a parameter belongs to: its path without the leaf (and without nnx's ``.value``)."""
    tokens = _TOKEN.findall(label)
    if tokens and tokens[-1] == ".value":
        tokens.pop()
    return tuple(tokens[:-1])


def name_by_attributes(keys: dict[str, Key], top: Body, skip: set[str], method_names: frozenset[str]) -> None:
    """Rename, in `keys`, each method call's part by the attribute path of the module it ran on, the
    forward and backward calls alike (their parts below the pass are the same). A call reading no
    parameter, or all of its caller's (``ViT.__call__`` reads the whole model), keeps its name; so
    do the traced function's own calls and calls two siblings would share a name with."""
    params = {
        n.id: module_path(n.label)
        for n in top.nodes
        if n.kind == "input" and n.avals and _FLOAT.match(n.avals[0]) and len(_TOKEN.findall(n.label)) > 1
    }
    reads: dict[Key, list[tuple[str, ...]]] = defaultdict(list)
    for e in top.edges:
        if e.src in params and e.dst in keys and e.dst not in skip:
            k = keys[e.dst]
            for d in range(2, len(k) + 1):
                reads[k[1:d]].append(params[e.src])
    prefix: dict[Key, tuple[str, ...]] = {path: _common(paths) for path, paths in reads.items()}
    renamed: dict[Key, str] = {}
    for path in sorted(reads, key=len):
        base = _NUMBER.sub("", path[-1]).split(": ", 1)[-1]
        if len(path) < 2 or base not in method_names:  # (the step's own calls are its phases: the
            # optimizer's update reads every parameter and moment, of no one module)
            continue
        own = prefix[path]
        above = next((prefix[path[:d]] for d in range(len(path) - 1, 0, -1) if path[:d] in renamed), own[:1])
        rel = own[len(above) :] if own[: len(above)] == above else own[1:]
        if rel:
            renamed[path] = _written(rel)
    by_parent: dict[Key, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path, name in renamed.items():
        by_parent[path[:-1]][name].add(path[-1])
    clashes = {(parent, name) for parent, names in by_parent.items() for name, olds in names.items() if len(olds) > 1}
    renamed = {p: name for p, name in renamed.items() if (p[:-1], name) not in clashes}
    if not renamed:
        return
    for node_id, k in keys.items():
        if node_id not in skip and len(k) > 1:
            keys[node_id] = (k[0], *(renamed.get(k[1 : d + 1], part) for d, part in enumerate(k[1:], 1)))


def _common(paths: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The longest path the reads of the most-read argument share (a conv reads the model's kernel
    and bias, and the batch's images: it ran on ``model.patch_embeddings``)."""
    roots: dict[str, int] = defaultdict(int)
    paths = list(dict.fromkeys(paths))  # each module once: both passes read a conv's images
    for p in paths:
        roots[p[0] if p else ""] += 1
    root = max(roots, key=lambda r: roots[r])
    paths = [p for p in paths if (p[0] if p else "") == root]
    first = paths[0]
    n = len(first)
    for p in paths[1:]:
        n = min(n, len(p))
        while n and p[:n] != first[:n]:
            n -= 1
    return first[:n]


def _written(tokens: tuple[str, ...]) -> str:
    """``(".encoder", ".layers", "[0]")`` -> ``encoder.layers[0]``; ``("['blocks']",)`` -> ``blocks``."""
    out = ""
    for t in tokens:
        if t.startswith("['") or t.startswith('["'):
            t = "." + t[2:-2]
        out += t
    return out.lstrip(".")


def dissolve_singles(keys: dict[str, Key], skip: set[str]) -> None:
    """A call of one equation (a `RngStream.__call__` around one `random_fold_in`) is no structure:
    its equation goes where its caller's do."""
    count: dict[Key, int] = defaultdict(int)
    for node_id, k in keys.items():
        if node_id not in skip:
            for d in range(2, len(k) + 1):
                count[k[:d]] += 1
    for node_id, k in keys.items():
        if node_id in skip:
            continue
        d = next((d for d in range(2, len(k) + 1) if count[k[:d]] < 2), 0)
        if d:
            keys[node_id] = k[: d - 1] if d > 2 else ()
