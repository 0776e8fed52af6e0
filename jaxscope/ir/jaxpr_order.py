"""The exact jaxpr text line of every equation, per call site, by program order.

JAX's printer writes a program's equations in order, each sub-jaxpr where its equation's params
are (inline), except bodies used more than once, which it hoists to the top as
``let name = { lambda ... } in`` and names from the equation (``jit[name=f jaxpr=_f]``). The
graph holds the same equations in the same order (`to_graph`: ``e{i}``, sub-graphs in the order
of `jax_compat.subjaxprs`, which is the printer's sorted-params order). Walking both together,
every equation gets its own head line, checked by its primitive: block1's forward `dot_general` and
block2's, or a forward and a backward one on the same source line, are told apart, and library
equations (whose printed location is in site-packages) link as well as the user's.

An equation without outputs (`debug_print`) is printed without a location comment, so it has no
head line to take; it is skipped. If anything else does not line up (a printer this walk does not
know), the walk gives up and returns nothing: `linking.JaxprLinks` then links by printed location.
"""

from __future__ import annotations

import re

from jaxscope.schema.graph import Graph, Node

_DEF = re.compile(r"let (?P<name>\S+) = \{ lambda")
_REF = re.compile(r"(?P<key>[A-Za-z_]\w*)=(?P<name>[A-Za-z_][\w.]*)")
_NAME = re.compile(r"[A-Za-z_][\w.]*")


class _MismatchError(Exception):
    """The text and the graph part ways: no exact links for this program."""


def regions(text_lines: list[str], heads: list[int]) -> dict[str, list[int]]:
    """Head lines (ascending) of each hoisted body by its name, and of the main jaxpr under ""."""
    out: dict[str, list[int]] = {"": []}
    starts: list[tuple[int, str]] = []
    for number, line in enumerate(text_lines, 1):
        if line.startswith("let "):
            m = _DEF.match(line)
            if m:
                starts.append((number, m.group("name")))
        elif line.startswith("{ lambda"):
            starts.append((number, ""))
    if not starts:
        starts = [(1, "")]
    k = 0
    for head in heads:
        while k + 1 < len(starts) and starts[k + 1][0] <= head:
            k += 1
        out.setdefault(starts[k][1], []).append(head)
    return out


def equations(graph: Graph) -> list[tuple[str, Node]]:
    """Every equation node with its path, per call site, in program (printing) order."""
    out: list[tuple[str, Node]] = []

    def visit(body_id: str, prefix: str, depth: int) -> None:
        body = graph.bodies.get(body_id)
        if body is None or depth > 200:
            return
        for node in sorted((n for n in body.nodes if n.kind == "eqn"), key=_order):
            out.append((prefix + node.id, node))
            for index, ref in enumerate(node.subgraphs):
                visit(ref.body, f"{prefix}{node.id}:{index}/", depth + 1)

    visit(graph.root, "", 0)
    return out


def _order(node: Node) -> int:
    return int(node.id[1:]) if node.id[1:].isdigit() else -1


def _base(label: str) -> str:
    """A node's label as its primitive prints: "jit(layer)" -> "jit"."""
    return label.split("(", 1)[0].split("[", 1)[0]


def exact_lines(graph: Graph, text: str, primitives: dict[int, str], owner: dict[int, int]) -> dict[str, int]:
    """Equation path (as in the SVG's data-path, per call site) -> its head line in `text`, or {}.
    `primitives`: head line -> printed primitive; `owner`: continuation line -> head line
    (`linking.jaxpr_equations`)."""
    lines = text.split("\n")
    heads = sorted(primitives)
    by_name = regions(lines, heads)
    more: dict[int, list[int]] = {}
    for line, head in owner.items():
        more.setdefault(head, []).append(line)
    exact: dict[str, int] = {}

    def eqn_text(head: int) -> str:
        return " ".join(lines[n - 1] for n in (head, *sorted(more.get(head, ()))))

    def named(node: Node, param: str, head: int) -> str | None:
        """The hoisted body's name this sub-jaxpr is printed as, or None when it is inline."""
        body_text = eqn_text(head)
        key, _, rest = param.partition("[")
        if not rest:
            return next((m.group("name") for m in _REF.finditer(body_text) if m.group("key") == key and m.group("name") in by_name), None)
        at = body_text.find(f"{key}=(")
        if at < 0:
            return None
        index = int(rest.rstrip("]")) if rest.rstrip("]").isdigit() else -1
        names = [n for n in _NAME.findall(body_text[at + len(key) + 2 :].split(")", 1)[0]) if n in by_name]
        return names[index] if 0 <= index < len(names) else None

    def walk(body_id: str, prefix: str, seq: list[int], pos: int, depth: int = 0) -> int:
        if depth > 200:
            raise _MismatchError
        body = graph.bodies.get(body_id)
        if body is None:
            raise _MismatchError
        eqns = sorted((n for n in body.nodes if n.kind == "eqn"), key=_order)
        for node in eqns:
            if pos >= len(seq) or primitives[seq[pos]] != _base(node.label):
                if not node.avals and not node.subgraphs:
                    continue  # no outputs (`debug_print[...] c`): printed with no location comment, no head to take
                raise _MismatchError
            head = seq[pos]
            pos += 1
            exact[prefix + node.id] = head
            for index, ref in enumerate(node.subgraphs):
                inner = f"{prefix}{node.id}:{index}/"
                name = named(node, ref.param, head) if ref.param else None
                if name is not None:
                    if walk(ref.body, inner, by_name[name], 0, depth + 1) != len(by_name[name]):
                        raise _MismatchError
                else:
                    pos = walk(ref.body, inner, seq, pos, depth + 1)
        return pos

    try:
        if walk(graph.root, "", by_name[""], 0) != len(by_name[""]):
            return {}
    except _MismatchError:
        return {}
    return exact
