"""The one program a worker lowers and compiles for all the requests of a command or a window
(issue 61.2): `export --links jaxpr,stablehlo,compiled --overlay time` asks for the StableHLO text,
the compiled text with its prices, and a profiled run of the same target, and each request before
this lowered and compiled it anew (three compiles of a train step). The last program is kept,
with what has been made of it so far; another target, other inputs, another device, or its file
changed on disk makes it anew."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from jaxscope.ir import hlo_marks
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.hlo import HloRequest, InstructionCosts
from jaxscope.schema.trace import FunctionRef
from jaxscope.worker import jax_compat
from jaxscope.worker.trace import Phase, Prepared, prepare, runtime_failure, trace_failure


@dataclass
class Program:
    """A target traced for lowering, lowered with its equations marked, and what was made of it:
    the plain lowering, the executable, their texts as `worker.hlo` read them."""

    key: tuple[Any, ...]
    prep: Prepared
    traced: Any
    marked: Any | None  # None: marking failed (a JAX whose internals moved); links by location only
    structure: hlo_marks.Structure | None
    scans: dict[tuple[int, int], int]  # each rolled scan's length, by its marks (`mark_equations`)
    timings: dict[str, float] = field(default_factory=dict)  # what making it took, once
    plain: Any | None = None
    compiled: Any | None = None
    cost_before: dict[str, float] | None = None  # XLA's cost analysis of the lowering (`worker.hlo` fills these)
    stablehlo: MadeText | None = None
    compiled_text: MadeText | None = None


@dataclass(frozen=True)
class MadeText:
    """An IR text made of the program once, with what was read of it: each line's equations (the
    exact links, on the wire), for the compiled text each instruction priced, and what it took."""

    text: str
    exact: dict[str, Any] | None
    priced: InstructionCosts | None
    seconds: dict[str, float]


_LAST: list[Program] = []


def program(request: HloRequest, phase: Phase) -> Program:
    """The program of `request`'s target, lowered (the last one again when it is the same)."""
    key = (request.function, request.args, request.inputs, request.device, _stamps(request.function, request.inputs))
    if _LAST and _LAST[0].key == key:
        return _LAST[0]
    _LAST.clear()  # (the last program's executable goes before the next is made)
    prep = prepare(request.function, request.args, phase, request.inputs)
    phase("lower")
    t0 = time.perf_counter()
    try:
        with gc_paused():  # as for the trace (`run_trace`): tracing and lowering leave no cycles
            traced = prep.jit().trace(*prep.args, **prep.kwargs)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise trace_failure(exc, "lower") from None
    t1 = time.perf_counter()
    scans: dict[tuple[int, int], int] = {}
    marked, structure = marked_lowering(traced, scans)
    made = Program(key, prep, traced, marked, structure, scans, {"lower": t1 - t0, "marks": time.perf_counter() - t1})
    _LAST.append(made)
    return made


def plain_lowering(p: Program) -> Any:
    """The program lowered as JAX lowers it (StableHLO's text is this one's)."""
    if p.plain is None:
        t = time.perf_counter()
        try:
            p.plain = p.traced.lower()
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise trace_failure(exc, "lower") from None
        p.timings["lower"] += time.perf_counter() - t
    return p.plain


def executable(p: Program, phase: Phase) -> Any:
    """The compiled program: the marked lowering's (its text names each equation), or the plain
    one's where XLA refuses the marked one (the marks are then no use: `structure` goes)."""
    if p.compiled is None:
        phase("compile")
        t = time.perf_counter()
        try:
            p.compiled = (p.marked if p.marked is not None else plain_lowering(p)).compile()
        except Exception:  # XLA's own error, from the plain program: the marks are not to blame
            try:
                p.compiled, p.structure = plain_lowering(p).compile(), None
            except BaseException as exc:
                if isinstance(exc, KeyboardInterrupt):
                    raise
                raise runtime_failure(exc, "compile") from None
        p.timings["compile"] = time.perf_counter() - t
    return p.compiled


def _stamps(function: FunctionRef, inputs: str) -> tuple[tuple[int, int], ...]:
    """When and how big the target's file and its maker's file are: an edit makes the program anew."""
    paths = [function.path, inputs.rsplit("::", 1)[0] if "::" in inputs else ""]
    out = []
    for path in paths:
        try:
            st = os.stat(path) if path else None
        except OSError:
            st = None
        out.append((st.st_mtime_ns, st.st_size) if st is not None else (0, 0))
    return tuple(out)


def marked_lowering(traced: Any, scans: dict[tuple[int, int], int]) -> tuple[Any, hlo_marks.Structure | None]:
    """The program lowered with every equation marked, and its body structure; (None, None) if
    that fails (a JAX whose internals moved): the text is then linked by source location only."""
    try:
        with gc_paused():
            closed, structure = mark_equations(traced.jaxpr, scans)
            return jax_compat.with_jaxpr(traced, closed).lower(), structure
    except Exception:
        return None, None


def mark_equations(closed: Any, scans: dict[tuple[int, int], int] | None = None) -> tuple[Any, dict[int, dict[int, tuple[int, ...]]]]:
    """A copy of `closed` whose equations' name stacks end in their mark, and its structure; each
    rolled scan's length by its mark into `scans` (the trip count of the while loop it becomes).

    Bodies are numbered in the order `to_graph` numbers them (first visit, depth first, sub-jaxprs
    in `jax_compat.subjaxprs` order), so a mark names the graph's own ``b{n}``/``e{i}``. A body
    used twice is marked once and stays one object, so JAX lowers it to one function as before."""
    numbers: dict[int, int] = {}
    done: dict[int, Any] = {}  # id(open jaxpr) -> its marked copy
    closed_done: dict[int, Any] = {}  # id(ClosedJaxpr) -> its marked copy: shared bodies stay shared
    keep: list[Any] = []  # ids stay unique only while the objects live
    structure: dict[int, dict[int, tuple[int, ...]]] = {}

    def swap(value: Any) -> Any:
        if isinstance(value, jax_compat.ClosedJaxpr):
            got = closed_done.get(id(value))
            if got is None:
                keep.append(value)
                got = closed_done[id(value)] = jax_compat.ClosedJaxpr(done[id(value.jaxpr)], value.consts)
            return got
        if isinstance(value, jax_compat.Jaxpr):
            return done[id(value)]
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return type(value)(*map(swap, value))
        if isinstance(value, (tuple, list)):
            return type(value)(map(swap, value))
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        return value

    def mark(jaxpr: Any) -> None:
        if id(jaxpr) in numbers:
            return
        body = numbers[id(jaxpr)] = len(numbers)
        keep.append(jaxpr)
        eqns = structure[body] = {}
        new = []
        for i, eqn in enumerate(jaxpr.eqns):
            subs = jax_compat.subjaxprs(eqn.params)
            for _path, sub, _consts in subs:
                mark(sub)
            eqns[i] = tuple(numbers[id(sub)] for _path, sub, _consts in subs)
            if scans is not None and eqn.primitive.name == "scan" and eqn.params.get("unroll", 1) == 1:
                scans[(body, i)] = int(eqn.params["length"])
            params = {k: swap(v) for k, v in eqn.params.items()} if subs else eqn.params
            info = eqn.source_info
            stack = info.name_stack.extend(hlo_marks.mark_name(body, i))
            new.append(eqn.replace(params=params, source_info=info.replace(name_stack=stack)))
        done[id(jaxpr)] = jaxpr.replace(eqns=new)

    mark(closed.jaxpr)
    return jax_compat.ClosedJaxpr(done[id(closed.jaxpr)], closed.consts), structure
