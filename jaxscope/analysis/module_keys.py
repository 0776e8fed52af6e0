"""Where each top-level equation of a program goes in its grouped view (`scope_view.scoped`), and
what its groups are called: a scope's module path (linen, `jax.named_scope`), else the calls it
came through below the traced function, each call of a function told apart (`_split_calls`),
named by the module it ran on (nnx and equinox: `name_by_attributes`), placed under the call that
made it (`_under_callers`), with a library's wrappers folded and equations JAX traced apart placed
where what reads them is (`_detached`). `module_keys` is the whole rule; `jaxscope cost --by scope`
names its rows with it too; `Crossings` sorts a grouped level's edges by the groups they cross.

Name stacks name linen modules; nnx and equinox modules leave only their methods' frames
(``EncoderBlock.__call__`` four times). The parameters a call reads say which module it ran on:
the longest path its floating-point inputs of one argument share (``model.encoder.layers[2].attn.
query.kernel`` and ``...attn.out.bias`` -> ``encoder.layers[2].attn``), relative to its caller's.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from jaxscope.analysis.scopes import read_scope
from jaxscope.schema.graph import Body, Edge, Node
from jaxscope.schema.primitives import primitive

Key = tuple[str, ...]

# calls libraries make around the user-facing one, named by neither what the user wrote nor what it
# does: optax wraps every transform of a chain in `with_extra_args_support`
WRAPPERS = frozenset({"with_extra_args_support"})

_ROLE = re.compile(r"^\w+: ")  # a loop body's operand's role: "carry: ", "x8: "
PATH_TOKEN = re.compile(r"\[[^\]]*\]|\.\w+|^\w+")  # "params['w'][0].mu" -> "params", "['w']", "[0]", ".mu"
_FLOAT = re.compile(r"^(f|bf)\d")  # a parameter's dtype: f32[...], bf16[...]


def methods(nodes: Iterable[Node]) -> frozenset[str]:
    """The display names (`_function`'s) of the methods in the equations' frames: ``Linear.__call__``
    but not a closure ``train_step.<locals>.loss_fn``, whose display also has a dot."""
    return frozenset(f.function for n in nodes for f in n.frames if "." in f.function and "<locals>" not in f.function)


def value_path(label: str) -> str:
    """An input's pytree path without the role a loop's body gives it first ("x8: model.blocks.attn.qkv.weight")."""
    return _ROLE.sub("", label)


def module_path(label: str) -> tuple[str, ...]:
    """The module a parameter belongs to: its path without the leaf (and without nnx's ``.value``)."""
    tokens = PATH_TOKEN.findall(value_path(label))
    if tokens and tokens[-1] == ".value":
        tokens.pop()
    return tuple(tokens[:-1])


def name_by_attributes(keys: dict[str, Key], top: Body, skip: set[str], method_names: frozenset[str]) -> None:
    """Rename, in `keys`, each method call's part by the attribute path of the module it ran on, the
    forward and backward calls alike (their parts below the pass are the same). A call reading no
    parameter, or all of its caller's (``ViT.__call__`` reads the whole model), keeps its name; so
    do the traced function's own calls and calls two siblings would share a name with."""
    params = {
        n.id: _rng_owner(path) if not _FLOAT.match(n.avals[0]) else path
        for n in top.nodes
        if n.kind == "input" and n.avals and len(PATH_TOKEN.findall(value_path(n.label))) > 1
        for path in (module_path(n.label),)
        if _FLOAT.match(n.avals[0]) or _rng_owner(path)
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
        base = NUMBERED.sub("", path[-1]).split(": ", 1)[-1]
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


def _rng_owner(path: tuple[str, ...]) -> tuple[str, ...]:
    """The module an nnx random stream belongs to (``model.dropout.rngs.count`` -> ``model.dropout``):
    a Dropout reads no parameter, only its stream's key and count; () for any other non-float input."""
    return path[: path.index(".rngs")] if ".rngs" in path[1:] else ()


def _common(paths: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The longest path the reads of the most-read argument share (a conv reads the model's kernel
    and bias, and the batch's images: it ran on ``model.patch_embeddings``)."""
    roots: dict[str, int] = defaultdict(int)
    paths = list(dict.fromkeys(paths))  # each module once: both passes read a conv's images
    for p in paths:
        roots[p[0] if p else ""] += 1
    root = max(roots, key=lambda r: roots[r])
    return tuple(os.path.commonprefix([p for p in paths if (p[0] if p else "") == root]))


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


NUMBERED = re.compile(r" #\d+$")  # "layer #2": the second call of layer
_MODULE = re.compile(r"^[\w.\[\]#:-]+$")  # a module's or a named scope's name; not jnp.einsum's "bij,bjk->bik"
JAX_SCOPES = frozenset({"rematted_computation"})  # JAX's own names (a checkpoint's body): no module; its frames say where
# a class's dotted name, which equinox pushes as the scope of every call of its modules (all four
# `eqx.nn.Linear` calls share one): a tag of the class, not the module's place; its calls tell that
_CLASS_TAG = re.compile(r"^\w+(\.\w+)+$")


def group_key(node: Node, detached: bool = False, calls: list[tuple[str, int]] | None = None) -> tuple[Key, bool]:
    """Where an equation goes, and whether by a scope: its pass and module path; outside every
    scope, its pass and the calls it came through below the traced function, down to the user's
    function that emitted it (``loss / block / layernorm``), or to the library function that called
    the library line that did (``adamw_step / optax: chain.update_fn / ...``); () stays at the top.
    A library's own named call (an einsum's spec) is no module: its equation goes where its caller's do.
    `calls`: the node's `_calls`, when already read."""
    scope = read_scope(node.name_stack)
    parts = [p for p in scope.parts if _MODULE.match(p) and not _CLASS_TAG.match(p) and p not in JAX_SCOPES]
    if parts:
        return (scope.pass_ or "program", *parts), True
    names = [name for name, _ in (calls if calls is not None else _calls(node, 0 if detached else 1))]
    return ((scope.pass_ or "program", *names) if names else ()), False


def _calls(node: Node, start: int = 1) -> list[tuple[str, int]]:
    """The calls below the traced function an equation came through, each with its frame's index
    (`start` 0: a detached equation's, whose outermost frame is a call of its own: `_detached`)."""
    calls: list[tuple[str, int]] = []
    library, last = "", ""
    for i, f in enumerate(node.frames[start:], start):
        name = _library_call(f.function) if f.library else display_name(f.function)
        if f.library and (name.startswith("_") or name == last or name in WRAPPERS):
            continue  # a library's private wrapper or helper, or the same call again: folded into its caller
        last = name
        if f.library and f.library != library:
            name = f"{f.library}: {name}"
        library = f.library
        calls.append((name, i))
    return calls


def _library_call(qualname: str) -> str:
    """A library's call as its users know it: a closure by the function that made it
    (``scale_by_adam.<locals>.update_fn`` -> ``scale_by_adam``, the optax transform; flax's
    ``_check_grads_arg_passed.<locals>._check_grads_wrapper`` -> a private decorator, dropped)."""
    return qualname.split(".<locals>.", 1)[0]


@dataclass
class _Call:
    """One call being read by `_split_calls`: its caller's line, the furthest line of the called
    function reached so far, its number, where its first and latest equations came from, and its equations."""

    caller: int
    line: int
    number: int
    first: tuple[object, ...]  # (primitive, (line, col) of each frame down)
    last: tuple[object, ...] = ()
    members: set[str] = field(default_factory=set)
    span: int = 0  # a backward call: the last line of the expression it has gone back to


def _split_calls(eqns: list[Node], keys: dict[str, Key], edges: tuple[Edge, ...], calls_of: dict[str, list[tuple[str, int]]]) -> None:
    """Tell apart the calls of one function from one line (`for p in blocks: x = block(p, x)`):
    their equations have the same frames, so one call's end is seen where the called function's
    line goes back (forward in a backward pass, whose equations come in reverse), or where its
    first equation (its primitive, and the line and column of each frame down to the library's)
    comes again after others, reading what the call made: a block whose body is one line (`x +
    self.down(gelu(self.up(self.norm(x))))`); a loop inside one call (`tree.map` over the leaves)
    reads nothing of its last round.
    Each call of a function called more than once gets its number ("block #3"; a backward call
    the number of the forward one it transposes), so its equations form a group of their own, and
    identical calls are found as identical layers."""
    calls: dict[tuple[str, ...], _Call] = {}  # where a call is made -> the last call made there
    numbered: dict[str, tuple[str, ...]] = {}
    made: dict[tuple[str, ...], int] = defaultdict(int)  # how many calls of each
    reads: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        reads[e.dst].add(e.src)
    for n in eqns:
        key = keys[n.id]
        backward = key[0] == "backward"
        path: tuple[str, ...] = (key[0],)
        # a recurring first place starts a new call at the deepest level it is seen at: the loop's
        # (the levels above see it too, as their calls hold the loop)
        at_frame = [i for _, i in calls_of[n.id]]
        places = [(n.label, *((f.line, f.col) for f in n.frames[i:])) for i in at_frame]
        again = -1
        for d, name in enumerate(key[1:]):
            path = (*path, name)
            call = calls.get(path)
            if call is None:
                break
            at = places[d]
            # (a library's loop over its children, Sequential's or optax.chain's, is on one line: no block;
            # a transpose emits the same primitive from one line twice, for a bias's two cotangents)
            library = n.frames[at_frame[d]].library
            if not library and not backward and at == call.first and call.last != call.first and not reads[n.id].isdisjoint(call.members):
                again = d
            path = (*path[:-1], f"{name}\0{call.number}")
        path = (key[0],)
        for d, name in enumerate(key[1:]):
            frame = n.frames[at_frame[d]]
            caller, own, at = n.frames[max(at_frame[d] - 1, 0)].line if at_frame[d] else 0, frame.line, places[d]
            # (an expression over several lines, `f(\n x.astype(…))`, runs its inner part first: back to its
            # first line is no new call while the expression reaches the line the call is at)
            end = max(frame.end_line or own, own)
            call = calls.get((*path, name))
            # a backward pass reads a call's lines last to first: forward again past the expression it
            # has gone back into (`span`) is the next call's
            moved = call is not None and (own > max(call.line, call.span) if backward else end < call.line)
            site = (*path, name)
            if call is None or call.caller != caller or moved or d == again:
                made[site] += 1
                call = calls[site] = _Call(caller, own, made[site], at, span=end)
            if backward and own <= call.line:
                call.line, call.span = own, end
            elif not backward:
                call.line = max(own, call.line)
            call.last = at
            call.members.add(n.id)
            path = (*site[:-1], f"{name}\0{call.number}")
        numbered[n.id] = path
    for node_id, path in numbered.items():
        named = [path[0]]
        for d, part in enumerate(path[1:], 1):
            name, _, number = part.partition("\0")
            count = made[(*path[:d], name)]
            if count > 1:
                k = int(number)
                name = f"{name} #{count - k + 1 if path[0] == 'backward' else k}"
            named.append(name)
        keys[node_id] = tuple(named)


def display_name(qualname: str) -> str:
    """``chain.<locals>.update_fn`` -> ``chain.update_fn``: readable, still telling calls apart."""
    return qualname.replace(".<locals>", "")


def traced_function(top: Body, function: str = "") -> str:
    """The traced function's name as the frames give it: `function`'s (its last part) where an
    equation's outermost frame is it, else the outermost frame of most equations."""
    firsts: dict[str, int] = defaultdict(int)
    for n in top.nodes:
        if n.kind == "eqn" and n.frames:
            firsts[n.frames[0].function] += 1
    tail = function.rsplit(".", 1)[-1]
    named = [f for f in firsts if tail and (f == function or f.rsplit(".", 1)[-1] == tail)]
    return max(named or firsts, key=lambda f: firsts[f]) if firsts else ""


def detached_ids(top: Body, traced: str) -> frozenset[str]:
    """Equations whose frames do not start at the traced function: JAX traced their function
    apart (a `jax.checkpoint`'d layer: its forward equations carry the layer's frames alone) or
    moved them out of a loop's body (a LayerNorm's constants out of a `scan`)."""
    return frozenset(n.id for n in top.nodes if n.kind == "eqn" and n.frames and n.frames[0].function != traced)


def _detached(top: Body, keys: dict[str, Key], by_scope: set[str], detached: frozenset[str]) -> None:
    """Place each detached equation where what reads it is: out of a loop, inside the loop's group
    (never a group of its own); a checkpointed layer, as a call of its own under its reader's
    caller (``loss / layer #2``, its forward beside the loss that reads it)."""
    readers: dict[str, list[str]] = defaultdict(list)
    for e in top.edges:
        readers[e.src].append(e.dst)
    label = {n.id: n.label for n in top.nodes}
    base: dict[str, Key] = {}  # a detached equation -> the key its own calls hang under
    for n in reversed(top.nodes):  # readers first: a chain of them follows its last
        if n.id not in detached:
            continue
        reader = next((r for r in readers[n.id] if r in keys), None)
        if reader is None:
            continue
        under = base.get(reader, keys[reader])
        if primitive(label[reader]).loop or not keys[n.id] or reader in by_scope or n.id in by_scope:
            keys[n.id] = under if reader not in base else (*under, *keys[reader][len(under) :])
            (by_scope.add if reader in by_scope else by_scope.discard)(n.id)
            continue
        base[n.id] = under
        keys[n.id] = (*under, *keys[n.id][1:])


def _under_callers(
    top: Body, keys: dict[str, Key], by_scope: set[str], calls_of: dict[str, list[tuple[str, int]]], detached: frozenset[str]
) -> set[str]:
    """Put each scoped module under the call that made it: a linen model applied in `loss_fn` is a
    group inside loss_fn's, not its sibling. Its caller is the calls all of its equations came
    through (less the module's own method, ``Transformer.__call__`` for scope ``Transformer``), named
    as the calls' own groups are; returns the equations so placed."""
    attached = {n.id for n in top.nodes if n.frames and n.id not in detached}  # (`_detached` places the others)
    raw = {node_id: tuple(name for name, _ in calls) for node_id, calls in calls_of.items() if node_id in attached}
    common: dict[tuple[str, str], tuple[str, ...]] = {}
    for node_id in by_scope & raw.keys():
        k = keys[node_id]
        at = (k[0], k[1])
        common[at] = tuple(os.path.commonprefix([common[at], raw[node_id]])) if at in common else raw[node_id]
    named: dict[tuple[str, tuple[str, ...]], Key] = {}
    for node_id, calls in raw.items():
        k = keys.get(node_id, ())
        if node_id not in by_scope and k:
            for d in range(1, min(len(calls), len(k) - 1) + 1):
                named.setdefault((k[0], calls[:d]), k[: d + 1])
    heads: dict[tuple[str, str], list[str]] = defaultdict(list)  # (pass, top module) -> its equations
    for node_id in by_scope:
        k = keys[node_id]
        heads[(k[0], k[1])].append(node_id)
    placed = set()
    for (pass_, head), calls in common.items():
        if calls and calls[-1].split(": ", 1)[-1].startswith(f"{head}."):
            calls = calls[:-1]
        caller = named.get((pass_, calls)) if calls else None
        if caller is None:
            continue
        for node_id in heads[(pass_, head)]:
            keys[node_id] = (*caller, *keys[node_id][1:])
            placed.add(node_id)
    return placed


def module_keys(top: Body, function: str = "") -> tuple[dict[str, Key], set[str]]:
    """Where each top-level equation goes (`group_key`, calls told apart, named by the modules they
    ran on, placed under their callers), and which went by a scope: the groups of `scoped`, and the
    rows of ``jaxscope cost --by scope``, so both name a module alike."""
    keys, by_scope = {}, set()
    detached = detached_ids(top, traced_function(top, function))
    calls_of = {n.id: _calls(n, 0 if n.id in detached else 1) for n in top.nodes if n.kind == "eqn"}  # read once
    for n in top.nodes:
        if n.kind == "eqn":
            keys[n.id], scoped_here = group_key(n, calls=calls_of[n.id])
            if scoped_here:
                by_scope.add(n.id)
    eqns = [n for n in top.nodes if n.kind == "eqn" and n.id not in by_scope and keys[n.id]]
    _split_calls(eqns, keys, top.edges, calls_of)
    name_by_attributes(keys, top, by_scope, methods(n for n in top.nodes if n.kind == "eqn"))
    dissolve_singles(keys, by_scope)
    placed = _under_callers(top, keys, by_scope, calls_of, detached)
    heads: dict[str, set[str]] = defaultdict(set)  # pass -> its top modules
    for node_id in by_scope - placed:
        heads[keys[node_id][0]].add(keys[node_id][1])
    for node_id in by_scope - placed:  # a pass of many top modules (a named_scope per block) is a group of its own
        k = keys[node_id]
        if len(heads[k[0]]) > 1:
            keys[node_id] = (k[0], k[0], *k[1:])
    _detached(top, keys, by_scope, detached)
    _lone_numbers(keys)
    return keys, by_scope


def _lone_numbers(keys: dict[str, Key]) -> None:
    """A call numbered where no other call of its function sits beside it (``Stack.__call__ #1``, the
    second call in a pass whose first one held only equations placed elsewhere): its plain name, as
    the other pass names the same module."""
    variants: dict[tuple[str, ...], set[str]] = defaultdict(set)  # (pass and parents, function) -> its names there
    for k in keys.values():
        for d in range(1, len(k)):
            variants[(*k[:d], NUMBERED.sub("", k[d]))].add(k[d])
    lone = {place for place, names in variants.items() if len(names) == 1 and NUMBERED.search(next(iter(names)))}
    if not lone:
        return
    for node_id, k in keys.items():
        parts = list(k)
        for d in range(1, len(k)):
            if (*k[:d], NUMBERED.sub("", k[d])) in lone:
                parts[d] = NUMBERED.sub("", k[d])
        keys[node_id] = tuple(parts)


def rematerialized(top: Body) -> tuple[frozenset[str], frozenset[str]]:
    """What `jax.checkpoint` covers at the top level: the functions the backward pass's checkpoints
    run again (their bodies named `checkpoint of layer`, `analysis.body_names`), and the equations
    traced under a remat (a linen `nn.remat` module's name stack)."""
    names = {r.role.removeprefix("checkpoint of ") for n in top.nodes for r in n.subgraphs if r.role.startswith("checkpoint of ")}
    ids = {n.id for n in top.nodes if n.kind == "eqn" and read_scope(n.name_stack).transforms & {"remat", "checkpoint"}}
    return frozenset(names), frozenset(ids)


@dataclass
class Crossings:
    """A level's edges sorted by the groups they cross: those between boxes of the level (one per
    pair of boxes where a group is at an end), those inside each group (entering through its input
    box, leaving through its output box), each group's ports, the values a forward group keeps for
    the backward pass (its residuals), and each value's aval."""

    out_edges: list[Edge]
    inner_edges: dict[str, list[Edge]]
    ports_in: dict[str, dict[tuple[str, int], int]]
    ports_out: dict[str, dict[tuple[str, int], int]]
    residuals: dict[str, set[tuple[str, int]]]
    aval_of: dict[tuple[str, int], str]

    @classmethod
    def of(cls, edges: tuple[Edge, ...] | list[Edge], group_of: dict[str, str], pass_of: dict[str, str]) -> Crossings:
        out_edges: list[Edge] = []
        ports_in: dict[str, dict[tuple[str, int], int]] = defaultdict(dict)
        ports_out: dict[str, dict[tuple[str, int], int]] = defaultdict(dict)
        inner_edges: dict[str, list[Edge]] = defaultdict(list)
        seen_out: set[tuple[str | int, ...]] = set()
        residuals: dict[str, set[tuple[str, int]]] = defaultdict(set)  # forward group -> its values the backward pass reads
        aval_of: dict[tuple[str, int], str] = {}
        for e in edges:
            if e.aval:
                aval_of.setdefault((e.src, e.src_port), e.aval)
            gs, gd = group_of.get(e.src), group_of.get(e.dst)
            if gs is not None and gs == gd:
                inner_edges[gs].append(e)
                continue
            if gs is not None and gd is not None and pass_of[gs] == "forward" and pass_of[gd] == "backward":
                residuals[gs].add((e.src, e.src_port))
            src, src_port = e.src, e.src_port
            if gs is not None:  # leaves a group: through one of its outputs
                src_port = ports_out[gs].setdefault((e.src, e.src_port), len(ports_out[gs]))
                src = gs
            dst, dst_port = e.dst, e.dst_port
            if gd is not None:  # enters a group: through one of its inputs
                port = ports_in[gd].setdefault((e.src, e.src_port), len(ports_in[gd]))
                inner_edges[gd].append(Edge("in", e.dst, port, e.dst_port, e.aval))
                dst, dst_port = gd, port
            if gs is not None:
                inner_edges[gs].append(Edge(e.src, "out", e.src_port, src_port, e.aval))
            # a group's values go in and out of its one box (their ports map to no sub-graph input: the
            # layout ends them at its cluster), so one edge per pair of boxes draws them all; a
            # module reading 400 parameters drew 400 edges on one line, and dot laid out each
            mark = (src, dst) if gs is not None or gd is not None else (src, dst, src_port, dst_port)
            if mark not in seen_out:
                seen_out.add(mark)
                out_edges.append(Edge(src, dst, src_port, dst_port, e.aval))
        return cls(out_edges, inner_edges, ports_in, ports_out, residuals, aval_of)
