"""One mark per source line: what tracing did with it (shared by `jaxscope explain` and the source pane).

`line_marks` combines a file's recorded line hits and constructs (`schema.flow`) with the graph's
equations (`ir.linking.nodes_by_line`) and the file's AST:

- "emitted": equations came from this line;
- "python": the line ran while tracing but emitted nothing;
- "not-taken": the body of a branch (or loop) that did not run;
- "never": a statement never reached although its function ran;
- "staged": equations traced into staged control flow (lax.cond/switch branches, while/scan bodies).

Pure: no jax, no Qt.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jaxscope.schema.files import MAX_SOURCE_BYTES, read_text
from jaxscope.schema.flow import STAGED_ROLE_PREFIXES, Construct, FileFlow, normalized_path
from jaxscope.targets.discover import FunctionInfo, bind_call, parse_source

if TYPE_CHECKING:
    from jaxscope.schema.graph import Graph
    from jaxscope.targets.argspec import CallSpec

KINDS = ("emitted", "python", "not-taken", "never", "staged", "error")  # "error": where a trace failed

_STAGED_WHY = {
    "cond branch": "traced by lax.cond: both branches are staged",
    "switch branch": "traced by lax.switch: every branch is staged",
    "while": "traced by lax.while_loop/fori_loop: the body is staged (traced once)",
    "scan body": "traced by lax.scan (or fori_loop with static bounds): the body is staged (traced once)",
}


@dataclass(frozen=True, slots=True)
class LineMark:
    line: int
    kind: str  # one of KINDS
    eqns: int = 0  # equations emitted by this line (all sub-graphs included)
    hits: int = 0  # times the line ran while tracing
    badge: str = ""  # "×3" on a loop header unrolled 3 times, "×0,1,2" per call
    why: str = ""  # one sentence, for constructs and not-taken/never/staged lines


def line_marks(
    flow: FileFlow,
    graph: Graph,
    file: str,
    static_values: dict[str, str] | None = None,
    *,
    source: str | None = None,
) -> dict[int, LineMark]:
    """line -> LineMark for every line of `file` that has something to say; unmarked lines are absent.

    `static_values`: parameter name -> repr of its static value in the call; an `if NAME:` /
    `if not NAME:` on such a parameter names the value in `why`. `source`: the file's text (read
    from `file` when None). A source that does not parse gives marks from hits and equations only.
    """
    from jaxscope.ir.linking import nodes_by_line

    if source is None:
        try:
            source = read_text(file, MAX_SOURCE_BYTES)
        except OSError:
            source = ""
    eqns = {ln: len(paths) for ln, paths in nodes_by_line(graph, file).items()}
    hits = dict(flow.line_hits)
    staged = _staged_roles(graph, file)
    for ln in flow.staged_lines:
        staged.setdefault(ln, "")
    try:
        tree: ast.Module | None = _around(parse_source(source), {*hits, *eqns, *(c.line for c in flow.constructs)})
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # RecursionError: nested too deeply to parse
        tree = None
    text_lines = source.splitlines()

    def code_line(ln: int) -> bool:
        if not 0 < ln <= len(text_lines):
            return False
        stripped = text_lines[ln - 1].strip()
        return bool(stripped) and not stripped.startswith("#")

    def active(ln: int) -> bool:
        return hits.get(ln, 0) > 0 or eqns.get(ln, 0) > 0

    nodes = _construct_nodes(tree) if tree is not None else {}
    whys, badges = _construct_notes(flow, nodes, static_values or {})
    # not-taken spans: bodies of branches / loops that did not run
    not_taken: dict[int, str] = {}
    for c in flow.constructs:
        node = nodes.get((c.line, c.col))
        for span, why in _untaken_spans(c, node):
            for ln in range(span[0], span[1] + 1):
                if code_line(ln) and not active(ln):
                    not_taken.setdefault(ln, why)
    never = _never_reached(tree, active) if tree is not None else set()

    out: dict[int, LineMark] = {}
    for ln in sorted(set(hits) | set(eqns) | set(staged) | set(not_taken) | never):
        n_eqns, n_hits = eqns.get(ln, 0), hits.get(ln, 0)
        notes = list(whys.get(ln, []))
        if ln in staged and (n_eqns or n_hits):
            kind = "staged"
            if staged[ln] and _STAGED_WHY[staged[ln]] not in notes:
                notes.append(_STAGED_WHY[staged[ln]])
        elif n_eqns:
            kind = "emitted"
        elif n_hits:
            kind = "python"
        elif ln in not_taken:
            kind = "not-taken"
            notes.append(not_taken[ln])
        elif ln in never:
            kind = "never"
            notes.append("never reached while tracing")
        else:
            continue
        out[ln] = LineMark(ln, kind, n_eqns, n_hits, badges.get(ln, ""), "; ".join(notes))
    return out


def _construct_notes(
    flow: FileFlow, nodes: dict[tuple[int, int], ast.AST], static_values: dict[str, str]
) -> tuple[dict[int, list[str]], dict[int, str]]:
    """Each construct's line: why it went as it did, and an unrolled loop's trip counts (×N)."""
    whys: dict[int, list[str]] = {}
    badges: dict[int, str] = {}
    for c in flow.constructs:
        text = _construct_why(c, nodes.get((c.line, c.col)), static_values)
        if text:
            whys.setdefault(c.line, []).append(text)
        if c.kind in ("for", "while") and c.verdict == "unrolled":
            badges[c.line] = "×" + (",".join(map(str, c.per_call)) if len(c.per_call) > 1 else str(c.count))
    return whys, badges


def _never_reached(tree: ast.Module, active: Callable[[int], bool]) -> set[int]:
    """The statements of a function that ran, none of whose lines ran while tracing."""
    never: set[int] = set()
    for func_stmts in _function_statements(tree):
        if not any(active(ln) for s in func_stmts for ln in range(s.lineno, (s.end_lineno or s.lineno) + 1)):
            continue  # the function never ran
        for s in func_stmts:
            if not any(active(ln) for ln in range(s.lineno, (s.end_lineno or s.lineno) + 1)):
                never.add(s.lineno)
    return never


# ------------------------------------------------------------------------------ helpers


def _staged_roles(graph: Graph, file: str) -> dict[int, str]:
    """line -> the role prefix of the outermost staged sub-graph its equations are in."""
    want = normalized_path(file)
    out: dict[int, str] = {}
    seen: set[tuple[str, str]] = set()
    stack: list[tuple[str, str]] = [(graph.root, "")]
    while stack:
        body_id, role = stack.pop()
        if (body_id, role) in seen or body_id not in graph.bodies:
            continue
        seen.add((body_id, role))
        for node in graph.bodies[body_id].nodes:
            src = node.source
            if role and node.kind == "eqn" and src is not None and src.line and normalized_path(src.file) == want:
                for ln in range(src.line, max(src.end_line, src.line) + 1):
                    out.setdefault(ln, role)
            for ref in node.subgraphs:
                sub = role or next((p for p in STAGED_ROLE_PREFIXES if ref.role.startswith(p)), "")
                stack.append((ref.body, sub))
    return out


def _around(tree: ast.Module, lines: set[int]) -> ast.Module:
    """`tree` with only the top-level statements that hold one of `lines` (a hit, an equation, a
    construct): the rest can have no mark, and walking it cost seconds in a file of a million
    statements (the same marks, a fraction of the walk)."""
    wanted = sorted(lines)
    kept = []
    for stmt in tree.body:
        k = bisect.bisect_left(wanted, stmt.lineno)
        if k < len(wanted) and wanted[k] <= (stmt.end_lineno or stmt.lineno):
            kept.append(stmt)
    return ast.Module(body=kept, type_ignores=[])


def _construct_nodes(tree: ast.AST) -> dict[tuple[int, int], ast.AST]:
    kinds = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.IfExp, ast.Match)
    return {(n.lineno, n.col_offset): n for n in ast.walk(tree) if isinstance(n, kinds)}


def _span(stmts: list[ast.stmt]) -> tuple[int, int]:
    first = stmts[0]
    decos = getattr(first, "decorator_list", None)
    start = decos[0].lineno if decos else first.lineno
    return start, max(s.end_lineno or s.lineno for s in stmts)


def _head(c: Construct) -> str:
    if c.kind in ("if", "elif"):
        return f"`{c.kind} {c.test}:`"
    if c.kind == "for":
        return f"`for {c.test}:`"
    if c.kind == "while":
        return f"`while {c.test}:`"
    if c.kind == "match":
        return f"`match {c.test}:`"
    if c.kind == "ifexp":
        return f"`… if {c.test} else …`"
    return f"`{c.test}`"


def _untaken_spans(c: Construct, node: ast.AST | None) -> list[tuple[tuple[int, int], str]]:
    head = _head(c)
    if isinstance(node, ast.If) and c.kind in ("if", "elif"):
        if c.verdict == "body taken" and node.orelse:
            return [(_span(node.orelse), f"branch not taken ({head} was true)")]
        if c.verdict == "else taken":
            return [(_span(node.body), f"branch not taken ({head} was false)")]
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and c.verdict == "unrolled" and c.count == 0:
        return [(_span(node.body), f"loop body never ran ({head} ran 0 times)")]
    if isinstance(node, ast.IfExp) and c.verdict in ("body taken", "else taken"):
        other = node.orelse if c.verdict == "body taken" else node.body
        return [((other.lineno, other.end_lineno or other.lineno), f"branch not taken ({head})")]
    if isinstance(node, ast.Match) and c.verdict in ("body taken", "both taken", "else taken"):
        return [(_span(case.body), f"case not taken ({head})") for case in node.cases]  # lines that ran are skipped
    return []


_NAME_TEST = re.compile(r"^(not\s+)?([A-Za-z_]\w*)$")


def _static_note(c: Construct, static_values: dict[str, str]) -> str:
    m = _NAME_TEST.match(c.test)
    if not m or m.group(2) not in static_values:
        return ""
    name, value = m.group(2), static_values[m.group(2)]
    try:
        truth = bool(ast.literal_eval(value))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return f"`{name}` was {value}, static"
    test_true = truth != bool(m.group(1))
    if test_true != (c.verdict == "body taken"):
        return ""  # the name was rebound before the test: the call's value says nothing
    return f"`{name}` was {value}, static"


def _construct_why(c: Construct, node: ast.AST | None, static_values: dict[str, str]) -> str:
    head = _head(c)
    if c.kind in ("boolop", "comprehension"):
        return ""
    if c.verdict == "staged":
        return f"{head} — traced inside staged control flow, not a Python branch"
    if c.kind in ("for", "while"):
        if c.verdict == "unrolled":
            if len(c.per_call) > 1:
                return f"{head} — loop unrolled {c.count} times over {len(c.per_call)} calls ({', '.join(map(str, c.per_call))})"
            return f"{head} — loop unrolled {c.count} time{'s' if c.count != 1 else ''}"
        if c.verdict == "never reached":
            return f"{head} — never reached"
        return f"{head} — {c.verdict}" + (f" ({c.detail})" if c.detail else "")
    if c.verdict in ("body taken", "else taken"):
        note = _static_note(c, static_values) if c.kind in ("if", "elif") else ""
        detail = note or c.detail
        return f"{head} — {c.verdict}" + (f" ({detail})" if detail else "")
    return f"{head} — {c.verdict}" + (f" ({c.detail})" if c.detail else "")


def _function_statements(tree: ast.Module) -> list[list[ast.stmt]]:
    """For each function (def/async def), the statements whose innermost function it is.
    Docstrings and statements without bytecode (global/nonlocal) are left out."""
    out: list[list[ast.stmt]] = []

    def visit_block(stmts: list[ast.stmt], acc: list[ast.stmt] | None) -> None:
        for i, s in enumerate(stmts):
            is_doc = i == 0 and isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)
            if acc is not None and not is_doc and not isinstance(s, (ast.Global, ast.Nonlocal)):
                acc.append(s)
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                own: list[ast.stmt] = []
                out.append(own)
                visit_block(s.body, own)
                continue
            if isinstance(s, ast.ClassDef):
                visit_block(s.body, None)
                continue
            for field in ("body", "orelse", "finalbody"):
                visit_block(getattr(s, field, []) or [], acc)
            for h in getattr(s, "handlers", []) or []:
                visit_block(h.body, acc)
            for case in getattr(s, "cases", []) or []:
                visit_block(case.body, acc)

    visit_block(tree.body, None)
    return out


def static_values(fn: FunctionInfo, call: CallSpec) -> dict[str, str]:
    """Parameter name -> repr of its static value in the call (Python literals and unpassed defaults)."""
    from jaxscope.targets import argspec

    bound = bind_call(fn, call)
    out = {name: repr(spec.value) for name, spec in bound.items() if isinstance(spec, argspec.StaticValue)}
    for p in fn.params:
        if p.name not in bound and p.default is not None and p.kind not in ("var_positional", "var_keyword"):
            out[p.name] = p.default
    return out
