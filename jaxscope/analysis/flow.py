"""What Python control flow did while JAX traced: line hits mapped onto the user's AST.

The worker records which user lines ran during a trace (`jaxscope.worker.pyflow`); `analyse`
turns one file's hits into `Construct`s (an `if` whose body was taken, a `for` unrolled 3 times,
...), and `mark_staged` marks the lines whose equations live inside staged control flow
(`lax.cond` branches, `while`/`scan` bodies): JAX runs *every* branch function of a `lax.cond` at
trace time, so a line hit there says nothing about a Python branch being taken.

Pure: no jax, no Qt. Line-level only: where two alternatives share one line (`a if c else b`,
`x and y`, a one-line `if c: s`) the verdict is "line ran", never a guess.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from jaxscope.schema.flow import (
    STAGED_ROLE_PREFIXES,
    Construct,
    ConstructKind,
    FileFlow,
    FlowReport,
    Verdict,
    normalized_path,
)
from jaxscope.schema.graph import Graph
from jaxscope.targets.discover import parse_source

Hits = Callable[[int], int]  # line -> times a 'line' event fired there


class _Make(Protocol):
    """`analyse`'s Construct maker: file and position come from the node."""

    def __call__(
        self,
        node: ast.stmt | ast.expr,
        kind: ConstructKind,
        verdict: Verdict,
        *,
        detail: str = "",
        test: str = "",
        count: int = 0,
        per_call: tuple[int, ...] = (),
    ) -> Construct: ...


def _text(node: ast.AST, limit: int = 80) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # very old/odd nodes; never fail an analysis for a label
        return ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_line(stmts: list[ast.stmt]) -> int:
    """The line a statement list's first line event is reported at (decorators come first)."""
    first = stmts[0]
    if isinstance(first, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and first.decorator_list:
        return first.decorator_list[0].lineno
    return first.lineno


def analyse(source: str, path: str, hits: dict[int, int], loop_calls: dict[int, list[int]] | None = None) -> FileFlow:
    """Map line hits (line -> times a 'line' event fired) onto the constructs of `source`.

    `loop_calls`: line -> hits of that line in each call of the function whose own code holds the
    line (same order for every line of one function); with it, loops report per-call counts.
    A source that does not parse gives only the raw hits.
    """
    line_hits = tuple(sorted((ln, n) for ln, n in hits.items() if n))
    try:
        tree = parse_source(source, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # RecursionError: nested too deeply to parse
        return FileFlow(path=path, line_hits=line_hits)
    lines = source.splitlines()
    out: list[Construct] = []
    elifs: set[int] = set()  # ids of If nodes that are elif clauses

    def h(line: int) -> int:
        return hits.get(line, 0)

    def mk(
        node: ast.stmt | ast.expr,
        kind: ConstructKind,
        verdict: Verdict,
        *,
        detail: str = "",
        test: str = "",
        count: int = 0,
        per_call: tuple[int, ...] = (),
    ) -> Construct:
        return Construct(
            file=path,
            line=node.lineno,
            end_line=node.end_lineno or node.lineno,
            kind=kind,
            verdict=verdict,
            detail=detail,
            test=test,
            count=count,
            per_call=per_call,
            col=node.col_offset,
        )

    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
                sub = node.orelse[0]
                if 0 < sub.lineno <= len(lines) and lines[sub.lineno - 1].lstrip().startswith("elif"):
                    elifs.add(id(sub))
            out.append(_if(node, "elif" if id(node) in elifs else "if", h, mk))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            out.append(_loop(node, h, loop_calls, mk))
        elif isinstance(node, ast.IfExp):
            out.append(_ifexp(node, h, mk))
        elif isinstance(node, ast.BoolOp):
            n = h(node.lineno)
            ops = {ast.And: "and", ast.Or: "or"}.get(type(node.op), "")
            detail = "" if n == 0 else f"`{ops}` line ran; which operands were evaluated is not recorded"
            out.append(mk(node, "boolop", "line ran" if n else "never reached", detail=detail, test=_text(node), count=n))
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            n = h(node.lineno)
            out.append(mk(node, "comprehension", "ran" if n else "never reached", test=_text(node), count=n))
        elif isinstance(node, ast.Match):
            out.append(_match(node, h, mk))
    out.sort(key=lambda c: (c.line, c.col, c.kind))
    return FileFlow(path=path, line_hits=line_hits, constructs=tuple(out))


def _if(node: ast.If, kind: ConstructKind, h: Hits, mk: _Make) -> Construct:
    test = h(node.lineno)
    body_line = _first_line(node.body)
    text = _text(node.test)
    if test == 0:
        return mk(node, kind, "never reached", test=text)
    if body_line == node.lineno:
        return mk(node, kind, "line ran", detail="body on the same line as the test", test=text, count=test)
    body = h(body_line)
    if node.orelse:
        else_line = _first_line(node.orelse)
        other = h(else_line)
        alt = "elif" if isinstance(node.orelse[0], ast.If) and len(node.orelse) == 1 and else_line == node.orelse[0].lineno else "else"
    else:
        other = max(test - body, 0)
        alt = "no else"
    if body and other:
        return mk(node, kind, "both taken", detail=f"body {body}x, {alt} {other}x", test=text, count=test)
    if body:
        return mk(node, kind, "body taken", detail=f"{body}x" if body > 1 else "", test=text, count=test)
    detail = {"elif": "fell through to the elif", "else": "else ran", "no else": "condition false (no else)"}[alt]
    return mk(node, kind, "else taken", detail=detail, test=text, count=test)


def _loop(node: ast.For | ast.AsyncFor | ast.While, h: Hits, loop_calls: dict[int, list[int]] | None, mk: _Make) -> Construct:
    kind: ConstructKind
    if isinstance(node, ast.While):
        kind, text = "while", _text(node.test)
    else:
        kind, text = "for", f"{_text(node.target)} in {_text(node.iter)}"
    header = h(node.lineno)
    if header == 0:
        return mk(node, kind, "never reached", test=text)
    body_line = _first_line(node.body)
    if body_line == node.lineno:
        return mk(node, kind, "line ran", detail="body on the same line as the header", test=text, count=header)
    # The first body line runs once per iteration, unless it is itself a loop header (which runs
    # once per inner iteration, plus once): then count from this loop's header (n + 1 per call,
    # exact unless the loop was left by break/return).
    nested_loop = isinstance(node.body[0], (ast.For, ast.AsyncFor, ast.While))
    per_call: tuple[int, ...] = ()
    if loop_calls and node.lineno in loop_calls:
        heads = loop_calls[node.lineno]
        bodies = loop_calls.get(body_line, [0] * len(heads))
        if nested_loop:
            per_call = tuple(max(hd - 1, 0) for hd in heads if hd > 0)
        else:
            per_call = tuple(b for hd, b in zip(heads, bodies, strict=False) if hd > 0)
        total = sum(per_call)
    elif nested_loop:
        total = -1  # unknown without per-call data
    else:
        total = h(body_line)
    if total < 0:
        return mk(node, kind, "line ran", detail="nested loop first in the body; iterations need per-call data", test=text, count=header)
    detail = f"{total} iteration{'s' if total != 1 else ''}"
    if len(per_call) > 1:
        detail += " over " + str(len(per_call)) + " calls (" + ", ".join(map(str, per_call)) + ")"
    return mk(node, kind, "unrolled", detail=detail, test=text, count=total, per_call=per_call)


def _ifexp(node: ast.IfExp, h: Hits, mk: _Make) -> Construct:
    test_line, body_line, else_line = node.test.lineno, node.body.lineno, node.orelse.lineno
    text = _text(node.test)
    n = h(node.lineno)
    if n == 0 and h(test_line) == 0:
        return mk(node, "ifexp", "never reached", test=text)
    if len({test_line, body_line, else_line}) == 3:  # each part on its own line: decidable
        b, o = h(body_line), h(else_line)
        if b and o:
            return mk(node, "ifexp", "both taken", test=text, count=h(test_line))
        if b:
            return mk(node, "ifexp", "body taken", test=text, count=h(test_line))
        if o:
            return mk(node, "ifexp", "else taken", test=text, count=h(test_line))
    return mk(
        node, "ifexp", "line ran", detail="branches share a line; which one ran is not recorded", test=text, count=max(n, h(test_line))
    )


def _match(node: ast.Match, h: Hits, mk: _Make) -> Construct:
    text = _text(node.subject)
    n = h(node.lineno)
    if n == 0:
        return mk(node, "match", "never reached", test=text)
    taken = []
    for i, case in enumerate(node.cases):
        first = _first_line(case.body)
        if first != case.pattern.lineno and h(first):
            taken.append(f"case {_text(case.pattern, 40)} ({h(first)}x)" if h(first) > 1 else f"case {_text(case.pattern, 40)}")
        elif first == case.pattern.lineno and h(first):
            return mk(node, "match", "line ran", detail=f"case {i} body on its pattern's line", test=text, count=n)
    if not taken:
        return mk(node, "match", "else taken", detail="no case matched", test=text, count=n)
    verdict: Verdict = "both taken" if len(taken) > 1 else "body taken"
    return mk(node, "match", verdict, detail="; ".join(taken), test=text, count=n)


# ------------------------------------------------------------------------------ staged lines


def staged_lines(graph: Graph) -> dict[str, set[int]]:
    """file -> lines of equations inside staged sub-graphs (cond/switch branches, while, scan),
    at any depth below one (a jit inside a cond branch is staged too)."""
    out: dict[str, set[int]] = {}
    seen: set[tuple[str, bool]] = set()
    stack = [(graph.root, False)]
    while stack:
        body_id, staged = stack.pop()
        if (body_id, staged) in seen or body_id not in graph.bodies:
            continue
        seen.add((body_id, staged))
        for node in graph.bodies[body_id].nodes:
            if staged and node.kind == "eqn" and node.source is not None and node.source.line:
                src = node.source
                out.setdefault(normalized_path(src.file), set()).update(range(src.line, max(src.end_line, src.line) + 1))
            for ref in node.subgraphs:
                stack.append((ref.body, staged or ref.role.startswith(STAGED_ROLE_PREFIXES)))
    return out


def mark_staged(flow: FlowReport, graph: Graph) -> FlowReport:
    """Fill `staged_lines` of each file from the graph; a construct that could only say "line ran"
    on such a line becomes "staged" (those lines ran because JAX traced every branch/body)."""
    by_file = staged_lines(graph)
    files = []
    for f in flow.files:
        lines = by_file.get(normalized_path(f.path), set())
        if not lines:
            files.append(f)
            continue
        constructs = tuple(
            replace(c, verdict="staged", detail="inside staged control flow (lax.cond/switch/while/scan): traced, not a Python branch")
            if c.verdict == "line ran" and c.line in lines
            else c
            for c in f.constructs
        )
        files.append(replace(f, constructs=constructs, staged_lines=tuple(sorted(lines))))
    return replace(flow, files=tuple(files))
