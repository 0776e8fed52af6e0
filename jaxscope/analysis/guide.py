"""Tutorial guides: a file's module docstring, with "show me" links into its traced graph.

A tutorial writes links as ``[text](show:QUERY)``, where QUERY is a graph search (a primitive, an
input name, a shape, or ``:12`` for a source line; see analysis.graph_query). The guide is plain
data: the app renders it, the tests check that every link finds something.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from jaxscope.analysis.graph_query import SearchIndex
from jaxscope.schema.graph import Graph, Node
from jaxscope.targets.discover import DiscoveryError, discover_file

# Linear even on junk: the text holds no "[" and the query stops at the next link's "](show:", so
# a failed try never rescans the rest of a paragraph ("[" * 40_000 took seconds; CommonMark, too,
# takes the innermost "[" of "[a [b](...)" as the link's start).
_LINK = re.compile(r"\[([^\[\]\n]+)\]\(show:((?:[^)\n\]]|\](?!\(show:))+)\)")
_CODE = re.compile(r"`([^`\n]+)`")
# the order a learner takes them in; other files follow alphabetically
TEACHING_ORDER = ("basics", "jit_tracing", "hidden_state", "immutability", "train_step", "prng", "control_flow", "transformer", "sharding")
MAX_SEARCH_NODES = 200_000


@dataclass(frozen=True, slots=True)
class Span:
    """A run of paragraph text: plain, `code`, or a link (`query` set)."""

    text: str
    code: bool = False
    query: str = ""


@dataclass(frozen=True, slots=True)
class Guide:
    title: str
    paragraphs: tuple[tuple[Span, ...], ...]

    def links(self) -> list[tuple[str, str]]:
        """(text, query) of every show-me link, in reading order."""
        return [(s.text, s.query) for p in self.paragraphs for s in p if s.query]


@dataclass(frozen=True, slots=True)
class Example:
    path: str
    name: str  # file stem
    title: str
    summary: str  # the first sentence of "What it teaches"


def parse_guide(docstring: str) -> Guide:
    """Title (the first line) and paragraphs (blank-line separated, lines joined) with their spans."""
    lines = docstring.strip().splitlines()
    if not lines:
        return Guide("", ())
    paragraphs = []
    for block in re.split(r"\n\s*\n", "\n".join(lines[1:]).strip()):
        text = " ".join(ln.strip() for ln in block.splitlines()).strip()
        if text:
            paragraphs.append(tuple(_spans(text)))
    return Guide(lines[0].strip(), tuple(paragraphs))


def _spans(text: str) -> Iterator[Span]:
    pos = 0
    for m in _LINK.finditer(text):
        yield from _code_spans(text[pos : m.start()])
        yield Span(m.group(1).strip("`"), code=m.group(1).startswith("`"), query=m.group(2).strip())
        pos = m.end()
    yield from _code_spans(text[pos:])


def _code_spans(text: str) -> Iterator[Span]:
    pos = 0
    for m in _CODE.finditer(text):
        if m.start() > pos:
            yield Span(text[pos : m.start()])
        yield Span(m.group(1), code=True)
        pos = m.end()
    if pos < len(text):
        yield Span(text[pos:])


def all_nodes(graph: Graph, limit: int = MAX_SEARCH_NODES) -> Iterator[tuple[str, Node]]:
    """Every node at every occurrence (``e4:1/e0``...), collapsed or not, up to `limit` nodes."""
    stack = [("", graph.root)]
    count = 0
    while stack:
        prefix, body_id = stack.pop()
        for node in graph.bodies[body_id].nodes:
            count += 1
            if count > limit:
                return
            yield f"{prefix}{node.id}", node
            for index, ref in enumerate(node.subgraphs):
                stack.append((f"{prefix}{node.id}:{index}/", ref.body))


def find(graph: Graph, query: str) -> list[str]:
    """Paths of every node that `query` matches anywhere in the graph, in sub-graphs too."""
    return SearchIndex(all_nodes(graph)).search(query)


def list_examples(directory: str) -> list[Example]:
    """The tutorials in `directory`, in teaching order; files that do not parse are skipped."""
    found = []
    for path in glob.glob(os.path.join(directory, "*.py")):
        try:
            info = discover_file(path)
        except DiscoveryError:
            continue
        name = os.path.splitext(os.path.basename(path))[0]
        found.append(Example(path, name, info.doc or name, _summary(info.docstring)))
    rank = {name: i for i, name in enumerate(TEACHING_ORDER)}
    return sorted(found, key=lambda e: (rank.get(e.name, len(rank)), e.name))


def _summary(docstring: str) -> str:
    m = re.search(r"What it teaches:\s*(.+?[.!?])(\s|$)", " ".join(docstring.split()))
    return _CODE.sub(r"\1", _LINK.sub(r"\1", m.group(1))) if m else ""
