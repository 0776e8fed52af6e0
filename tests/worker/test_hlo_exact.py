"""Exact links through lowering on a real flax + optax train step with three identical blocks:
every equation (per call site) to its own StableHLO ops and compiled-HLO instructions (worker.hlo
marks, ir.hlo_marks), and the texts shown are JAX's own."""

from __future__ import annotations

import functools
import re
from collections import defaultdict

from jaxscope.ir import hlo_marks
from jaxscope.ir.hlo_links import fusions, hlo_links, stablehlo_links
from jaxscope.ir.jaxpr_order import equations
from jaxscope.schema.hlo import HloRequest, HloResult
from jaxscope.schema.trace import FILE_INPUTS, FunctionRef, TraceRequest, TraceResult
from jaxscope.worker.hlo import run_hlo
from jaxscope.worker.trace import run_trace
from tests.conftest import MODELS, load_models

REF = FunctionRef("deep_step", str(MODELS))


@functools.cache
def traced() -> TraceResult:
    return run_trace(TraceRequest(REF, inputs=FILE_INPUTS), lambda p: None)


@functools.cache
def lowered(stage: str) -> HloResult:
    return run_hlo(HloRequest(REF, stage=stage, inputs=FILE_INPUTS), lambda p: None)  # type: ignore[arg-type]


def own_lines(result: HloResult) -> dict[str, list[int]]:
    assert result.exact is not None
    out: dict[str, list[int]] = defaultdict(list)
    for n, paths in hlo_marks.from_wire(result.exact).items():
        for p in paths:
            out[p].append(n)
    return out


def ops(text: str) -> list[str]:
    return [re.sub(r"loc\(#loc\d+\)", "loc()", ln) for ln in text.split("\n") if not ln.startswith("#loc")]


def dot_generals() -> dict[str, str]:
    """Path -> scope of every dot_general of the train step (forward and backward of each block)."""
    found = {p: n.name_stack for p, n in equations(traced().graph) if n.label == "dot_general"}
    assert len(found) >= 12
    return found


def test_stablehlo_is_jaxs_own_text_and_each_dot_general_owns_its_ops() -> None:
    result = lowered("stablehlo")
    models = load_models()
    import jax

    plain = jax.jit(models.deep_step).lower(*models.make_deep_inputs()).as_text(debug_info=True)
    assert ops(result.text) == ops(plain)  # the location table differs only by the frames of who called jit
    lines, text = own_lines(result), result.text.split("\n")
    claimed: dict[int, str] = {}
    for path in dot_generals():
        assert lines[path], path
        for n in lines[path]:
            assert "dot_general" in text[n - 1], (path, text[n - 1])
            assert claimed.setdefault(n, path) == path, f"line {n} claimed by {claimed[n]} and {path}"
    paths = [p for p, _ in equations(traced().graph)]
    assert set(lines) <= set(paths)  # every mark resolved to an equation of the graph
    assert sum(1 for p in paths if lines.get(p)) >= 0.95 * len(paths)  # the rest lower to no op (x**1, same-type converts)


def test_compiled_text_is_unmarked_and_its_op_names_are_the_equations() -> None:
    result = lowered("compiled")
    assert "_jxs" not in result.text and "ENTRY" in result.text
    graph_nodes = dict(equations(traced().graph))
    exact = hlo_marks.from_wire(result.exact or {})
    text = result.text.split("\n")
    assert len(exact) > 300
    named, total = 0, 0
    for n, paths in exact.items():
        names = re.search(r'op_name="([^"]*)"', text[n - 1])
        assert names, text[n - 1]
        prims = {part.rsplit("/", 1)[-1] for part in names.group(1).split(";")}
        for p in paths:  # the numbering the worker marked with is the graph's own
            total += 1
            named += graph_nodes[p].label.split("(")[0] in {q.split("(")[0] for q in prims}
    # an instruction's op_name ends in the primitive that made it, except where a primitive lowers through
    # others (jax 0.12: one_minus_square, tanh's derivative, emits `sub`): the marks, not the names, link
    assert named / total > 0.95, (named, total)
    by_dot = {p: frozenset(own_lines(result).get(p, ())) for p in dot_generals()}
    scope_of = dot_generals()
    for a, la in by_dot.items():
        for b, lb in by_dot.items():
            if a < b and la and la == lb:
                assert scope_of[a] == scope_of[b], f"{a} and {b} share compiled lines across scopes"


def test_compiled_program_is_the_one_xla_makes_without_marks() -> None:
    """The marks live only in metadata: the instructions are those of the plain compile."""
    models = load_models()
    import jax

    plain = jax.jit(models.deep_step).lower(*models.make_deep_inputs()).compile().as_text()

    def instructions(text: str) -> list[str]:
        start = text.index("\n%") if "\n%" in text else 0
        return [re.sub(r", metadata=\{[^}]*\}", "", ln) for ln in text[start:].split("\n")]

    assert instructions(lowered("compiled").text) == instructions(plain)


def test_app_links_select_only_the_equations_own_lines() -> None:
    """What the window uses: a backward dot_general marks only its lines, a line names only its equation."""
    graph = traced().graph
    hlo = lowered("stablehlo")
    links = stablehlo_links(graph, hlo.text, hlo.ops, hlo.exact)
    backward = next(p for p, s in dot_generals().items() if s.startswith("transpose(") and "block2" in s)
    lines = links.lines_for_nodes([backward])
    assert lines and all(links.nodes_for_line(n) == [backward] for n in lines)
    compiled = lowered("compiled")
    clinks, fused = hlo_links(graph, compiled.text, compiled.ops, compiled.exact)
    found = fusions(fused, clinks, str(MODELS))
    assert found and any(len(f.nodes) > 1 for f in found)  # a fusion names every equation it holds
    for f in found:
        for p in f.nodes:
            assert p in dict(equations(graph))


def test_equations_carry_their_user_and_library_frames() -> None:
    """Each equation knows the user's frames and the library's under them (flax, optax), outermost first."""
    nodes = dict(equations(traced().graph))
    forward = next(p for p, s in dot_generals().items() if not s.startswith("transpose(") and "block1" in s)
    frames = nodes[forward].frames
    assert frames[0].library == "" and frames[0].function == "deep_step"  # the traced function, outermost
    assert frames[-1].library == "flax" and frames[-1].file.endswith("linear.py")  # where the op was emitted
    assert nodes[forward].source == next(f for f in reversed(frames) if not f.library)  # the innermost user frame
    assert not any("/jax/" in f.file or f.file.endswith("jaxscope") for f in frames)  # JAX's own frames left out
    libraries = {f.library for n in nodes.values() for f in n.frames}
    assert {"", "flax", "optax"} <= libraries
    update = [n for n in nodes.values() if any(f.library == "optax" for f in n.frames)]
    assert update and all(n.source is not None for n in update)  # optax's update still names the user's line
