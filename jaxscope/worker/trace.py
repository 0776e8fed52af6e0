"""The `trace` request: load, build abstract arguments from specs, jit-trace, walk to a Graph."""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxscope.analysis.flow import mark_staged
from jaxscope.ir import linking
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.files import MAX_SOURCE_BYTES, digest, read_bytes
from jaxscope.schema.flow import RECORDING_STOPPED
from jaxscope.schema.graph import Graph
from jaxscope.schema.trace import Diagnostic, ErrorInfo, FunctionRef, JaxprText, TraceRequest, TraceResult
from jaxscope.schema.trace_file import user_files
from jaxscope.targets import argspec
from jaxscope.worker import jax_compat as jc
from jaxscope.worker import makers
from jaxscope.worker.diagnose import TraceWatch, diagnose
from jaxscope.worker.errors import TraceError, classify
from jaxscope.worker.load import SOURCE_HASHES, LoadError, find_function, load_module
from jaxscope.worker.makers import Made, state_output_name
from jaxscope.worker.pyflow import Recorder, Recording
from jaxscope.worker.to_graph import build_graph

Phase = Callable[[str], None]


def to_abstract(spec: argspec.Spec) -> Any:
    """An argspec tree -> the value passed to `trace`: ShapeDtypeStructs for arrays, literals as-is."""
    if isinstance(spec, argspec.ArraySpec):
        if spec.dtype == "key":
            return jax.ShapeDtypeStruct(spec.shape, jax.random.key(0).dtype)
        return jax.ShapeDtypeStruct(spec.shape, jnp.dtype(spec.dtype))
    if isinstance(spec, argspec.StaticValue):
        return spec.value
    if isinstance(spec, argspec.TupleSpec):
        return tuple(to_abstract(s) for s in spec.items)
    if isinstance(spec, argspec.ListSpec):
        return [to_abstract(s) for s in spec.items]
    if isinstance(spec, argspec.DictSpec):
        return {k: to_abstract(s) for k, s in spec.items}
    raise TypeError(f"unknown spec {spec!r}")


def unwrap(fn: Any) -> Any:
    """The Python function under `@jax.jit`, `@nnx.jit` or `@eqx.filter_jit`, so jaxscope decides
    what is static (a maker's non-array leaves, as `filter_jit` does) and the program drawn is the
    body, its inputs named by the parameters, not one `jit` box fed by every leaf. nnx.jit's in-place
    updates become outputs as it makes them (`makers.Made.wrap`)."""
    kind = (type(fn).__module__, type(fn).__name__)
    jitted = isinstance(fn, type(jax.jit(lambda: None))) or kind in _WRAPPERS
    if not jitted or not hasattr(fn, "__wrapped__"):
        return fn
    inner = fn.__wrapped__
    if kind != _FILTER_JIT:
        return inner

    @functools.wraps(inner)
    def body(*args: Any, **kwargs: Any) -> Any:  # as filter_jit: non-array outputs are returned as they are, not traced
        return makers.partition(inner(*args, **kwargs))[0]

    return body


_FILTER_JIT = ("equinox._jit", "_JitWrapper")
_WRAPPERS = {("flax.nnx.transforms.compilation", "JitWrapped"), _FILTER_JIT}


def constant_names(fn: Any) -> dict[int, str]:
    """id(value) -> Python name for arrays the function can see as globals or closure cells."""
    names: dict[int, str] = {}
    seen: set[int] = set()

    def add(mapping: dict[str, Any], prefix: str) -> None:
        for name, value in mapping.items():
            if isinstance(value, (jax.Array, np.ndarray)) and id(value) not in names:
                names[id(value)] = f"{prefix}{name}"

    def visit(f: Any) -> None:
        f = inspect.unwrap(f) if callable(f) else f
        if id(f) in seen:
            return
        seen.add(id(f))
        globs = getattr(f, "__globals__", None)
        if isinstance(globs, dict):
            add(globs, "")
        freevars = getattr(getattr(f, "__code__", None), "co_freevars", ())
        for cell_name, cell in zip(freevars, getattr(f, "__closure__", None) or (), strict=False):
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if isinstance(value, (jax.Array, np.ndarray)):
                names.setdefault(id(value), cell_name)
            elif inspect.isfunction(value):
                visit(value)
        for attr in ("func", "__wrapped__"):  # functools.partial, decorators
            inner = getattr(f, attr, None)
            if inner is not None and callable(inner):
                visit(inner)

    visit(fn)
    return names


@dataclass
class Prepared:
    """A loaded function and its abstract arguments, ready for `jax.jit(...).trace`."""

    fn: Any  # as found in the module (maybe a jitted function)
    target: Any  # the Python function jaxscope traces
    args: list[Any]
    kwargs: dict[str, Any]
    static_argnums: tuple[int, ...]
    static_argnames: tuple[str, ...]
    load_s: float = 0.0
    made: Made | None = None  # the maker's inputs (then `args` hold only the traced parts)
    inputs_s: float = 0.0
    warnings: tuple[str, ...] = ()  # about the inputs (64-bit types narrowed)

    @property
    def call(self) -> Any:
        """What is jitted and run eagerly: `target`, or for a maker's inputs `target` taking their traced parts."""
        return self.target if self.made is None else self.made.wrap(self.target)

    def jit(self, fn: Any = None, donate: bool = True) -> Any:
        """`jax.jit` of the call as the user's decorator made it: its statics, its shardings (the outputs'
        where the call returns what the function does), and its donated inputs (`donate`: not where the
        same inputs are run again, by `run` and the profile)."""
        options = jc.jit_options(self.fn)
        dropped = (() if donate else ("donate_argnums", "donate_argnames")) + (("out_shardings",) if self.stateful else ())
        for key in dropped:  # out_shardings: the call returns the nnx state beside the function's outputs
            options.pop(key, None)
        return jax.jit(fn or self.call, static_argnums=self.static_argnums, static_argnames=self.static_argnames, **options)

    @property
    def stateful(self) -> bool:
        """The call returns the nnx state of its arguments after it beside the function's outputs (`makers.Made.wrap`)."""
        return self.made is not None and bool(self.made.stateful)


def prepare(function: FunctionRef, args_text: str, phase: Phase, inputs: str = "") -> Prepared:
    """Parse the specs (or call the maker `inputs`), load the user's module, check the arity; raise
    TraceError on any failure. With the collector paused, as for the trace: gpt_jit-50k's
    43k-character specs and its module took 0.07-0.14 s with it, 0.05-0.08 s without."""
    t0 = time.perf_counter()
    with gc_paused():
        call = None if inputs else parse_call(args_text)
        phase("load")
        try:
            module = load_module(function)
            fn = find_function(module, function)
        except LoadError as exc:
            raise TraceError(exc.info) from None
        if call is not None:
            prep = bind(fn, call, function.qualname)
            prep.load_s = time.perf_counter() - t0
            return prep
        load_s = time.perf_counter() - t0
        phase("inputs")
        target = unwrap(fn)
        made = makers.make(module, function, inputs, target)
        prep = Prepared(fn, target, made.args, made.kwargs, (), (), load_s=load_s, made=made, warnings=made.warnings)
    prep.inputs_s = time.perf_counter() - t0 - load_s
    return prep


def bind(fn: Any, call: argspec.CallSpec, qualname: str) -> Prepared:
    """The abstract arguments of `call` for an already loaded `fn` (no module reload: same function)."""
    target = unwrap(fn)
    args = [to_abstract(s) for s in call.args]
    kwargs = {k: to_abstract(s) for k, s in call.kwargs}
    _check_arity(target, args, kwargs, qualname, call.text)
    narrow = [n for i, a in enumerate(args) for n in makers.narrowed(a, f"argument {i}")]
    narrow += [n for k, v in kwargs.items() for n in makers.narrowed(v, k)]
    return Prepared(
        fn=fn,
        target=target,
        args=args,
        kwargs=kwargs,
        static_argnums=tuple(i for i, s in enumerate(call.args) if argspec.is_static(s)),
        static_argnames=tuple(k for k, s in call.kwargs if argspec.is_static(s)),
        warnings=(makers.narrowing_warning(narrow),) if narrow else (),
    )


def parse_call(args_text: str) -> argspec.CallSpec:
    """argspec.parse_call, failing as a TraceError of kind "spec"."""
    try:
        return argspec.parse_call(args_text)
    except argspec.SpecError as exc:
        raise TraceError(ErrorInfo(kind="spec", phase="args", message=str(exc))) from None


def trace_failure(exc: BaseException, phase: str = "trace") -> TraceError:
    """The TraceError for an exception raised by `jit(...).trace` (user code, or a bad static)."""
    if isinstance(exc, ValueError) and "static" in str(exc) and "hashable" in str(exc).lower():
        return TraceError(
            ErrorInfo(kind="spec", phase=phase, message=str(exc), hint="static arguments must be hashable: use a tuple, not a list or dict")
        )
    return TraceError(classify(exc, phase))


def runtime_failure(exc: BaseException, phase: str) -> TraceError:
    """Classify an exception from compiling or running; out-of-memory on the device gets its own hint."""
    failed = trace_failure(exc, phase)
    text = str(exc)
    if "Traceback (most recent call last)" in text:  # a host callback raised: keep its last line
        head, _, tail = text.partition("Traceback (most recent call last)")
        last = [ln for ln in tail.strip().splitlines() if ln.strip()][-1:]
        failed = TraceError(replace(failed.info, message=(head.rstrip(": \n") + ": " + "".join(last)).strip(": ")))
    if "RESOURCE_EXHAUSTED" in text or "out of memory" in text.lower():
        failed = TraceError(replace(failed.info, kind="memory", hint="the device ran out of memory: try smaller shapes or another device"))
    elif "incompatible devices" in text:  # JAX's message names the argument and both device sets
        failed = TraceError(
            replace(
                failed.info,
                hint="an input and the program's shardings are on different devices: place the "
                "inputs as the program's mesh needs (in the maker), give the program as many devices "
                "(--cpu-devices N), or leave --device out so the inputs follow the program",
            )
        )
    elif phase == "compile" and not failed.info.hint:
        failed = TraceError(replace(failed.info, hint="XLA could not compile the program"))
    return failed


def graph_of(closed: Any, name: str, fn: Any, stateful: bool = False) -> tuple[Graph, tuple[str, ...], tuple[str, ...]]:
    """The Graph of a traced ClosedJaxpr, with the argument names and result paths JAX recorded;
    `stateful`: the call returned (result, {argument: its nnx state after the call}) (`makers.holds_graph_nodes`),
    whose outputs are named `result…` and `model.blocks[0]… (new)`."""
    info = closed.jaxpr.debug_info
    arg_names = tuple(info.arg_names or ()) if info is not None else ()
    result_paths = tuple(info.result_paths or ()) if info is not None else ()
    if stateful:
        result_paths = tuple(state_output_name(p) for p in result_paths)
    return build_graph(closed, name, arg_names, result_paths, constant_names(fn)), arg_names, result_paths


_LAST: list[Any] = []  # (function, args), ClosedJaxpr and Graph of this worker's last trace


def last_graph(function: FunctionRef, args: str, inputs: str = "") -> Graph | None:
    """The graph of this worker's last trace, if it was of `function` with `args` (or the maker `inputs`)."""
    return _LAST[2] if _LAST and _LAST[0] == (function, args, inputs) else None


def jaxpr_text(closed: Any) -> str:
    """The jaxpr as `jax.make_jaxpr` prints it, with source lines, one equation per line: a program
    short enough to fit on one line is printed on one (`{ lambda ; a. let b = sin a; c = ... }`),
    with every equation's location stacked after it, which no line map can follow; printed a
    column narrower than that line, its equations go one per line and each stays whole."""
    text = closed.pretty_print(source_info=True, name_stack=False, use_color=False)
    code = text.split("\n", 1)[0].split(" # ", 1)[0].rstrip()
    if " let " in code and not code.endswith("let"):
        text = closed.pretty_print(source_info=True, name_stack=False, use_color=False, width=max(len(code) - 1, 20))
    return text


def run_jaxpr_text(request: TraceRequest, phase: Phase) -> JaxprText:
    """The printed jaxpr of the last trace when `request` asks for that one, else of a new trace."""
    if _LAST and _LAST[0] == (request.function, request.args, request.inputs):
        phase("print")
        t = time.perf_counter()
        text = jaxpr_text(_LAST[1])
        seconds = time.perf_counter() - t
    else:
        result = run_trace(replace(request, jaxpr_text=True, record_flow=False), phase)
        text, seconds = result.jaxpr_text, result.timings.get("jaxpr_text", 0.0)
    return JaxprText(request, text, seconds, linking.equations_to_wire(*linking.jaxpr_equations(text)))


def run_trace(request: TraceRequest, phase: Phase, on_graph: Callable[[Graph], None] | None = None) -> TraceResult:
    """Do one trace; raise TraceError with a structured error on any failure. `on_graph` gets the
    graph as soon as it is built, before the diagnostics (the loop sends it ahead of the result)."""
    timings: dict[str, float] = {}
    prep = prepare(request.function, request.args, phase, request.inputs)
    timings["load"] = prep.load_s
    if prep.made is not None:
        timings["inputs"] = prep.inputs_s
    target, fn = prep.target, prep.fn

    phase("trace")
    t1 = time.perf_counter()
    jax.clear_caches()  # a cached trace would hide the Python that runs while tracing
    _LAST.clear()  # the last program is replaced now: no collection below should rescan it
    recorder = Recorder() if request.record_flow else None
    watch = TraceWatch(target)
    traced, recorder = _trace_recorded(prep, recorder, watch)
    closed = traced.jaxpr
    timings["trace"] = time.perf_counter() - t1
    warnings = list(prep.warnings)
    if recorder is not None and recorder.stopped:
        warnings.append(
            f"{RECORDING_STOPPED} after {recorder.budget:,} Python calls (a big program; under a"
            " trace function, Python before 3.12, it traces ~2.5x slower while recorded): no control-flow marks"
        )
        recorder = None

    # Our own work on the traced program: with a 50k-equation jaxpr alive, every collection of the
    # cyclic GC rescans it, which took 0.6 s of gpt-50k's 1.6 s graph build (user code ran above).
    with gc_paused():
        phase("graph")
        t2 = time.perf_counter()
        graph, arg_names, result_paths = graph_of(closed, request.function.qualname, fn, prep.stateful)
        timings["graph"] = time.perf_counter() - t2
        if on_graph is not None:
            on_graph(graph)
        flow = None
        if recorder is not None:
            t4 = time.perf_counter()
            try:
                flow = mark_staged(recorder.report(), graph)
            except Exception as exc:  # a flow-analysis bug must not cost the user the graph
                warnings.append(f"control-flow recording failed: {type(exc).__name__}: {exc}")
            timings["flow"] = time.perf_counter() - t4
        diagnostics = _diagnosed(request, graph, closed, prep, watch, recorder, arg_names, warnings, timings)
        text = ""
        if request.jaxpr_text:
            t3 = time.perf_counter()
            text = jaxpr_text(closed)
            timings["jaxpr_text"] = time.perf_counter() - t3
    _LAST[:] = [(request.function, request.args, request.inputs), closed, graph]
    result = TraceResult(
        request=request,
        graph=graph,
        jaxpr_text=text,
        arg_names=arg_names,
        result_paths=result_paths,
        timings=timings,
        jax_version=jax.__version__,
        warnings=tuple(warnings),
        flow=flow,
        diagnostics=diagnostics,
        inputs=prep.made.leaves if prep.made is not None else (),
        input_source=prep.made.label if prep.made is not None else "",
    )
    return replace(result, source_hashes=source_hashes(user_files(result)))


def _trace_recorded(prep: Prepared, recorder: Recording | None, watch: TraceWatch) -> tuple[Any, Recording | None]:
    """The traced program, recorded by `recorder` where it can be (None when it gave up: the
    recursion it breaks off in would point at a `def` line, so the trace is made again unrecorded)."""
    args, kwargs = prep.args, prep.kwargs
    try:
        jitted = prep.jit()
        # The collector paused while JAX traces: tracing leaves no cyclic garbage (a 10k-equation
        # train step: 0 objects collected after it), yet its collections rescanned the growing
        # jaxpr, 0.1-0.5 s of a 1-1.5 s trace. The user's own cyclic garbage waits for the end.
        with watch, gc_paused():
            if recorder is not None:
                try:
                    with recorder:
                        traced = jitted.trace(*args, **kwargs)
                except RecursionError:
                    # The hook runs on the user's stack and breaks off inside its own 'call' event, so
                    # the error would point at a `def` line: trace again unrecorded for the real one.
                    recorder = None
                    jax.clear_caches()
                    traced = jitted.trace(*args, **kwargs)
            else:
                traced = jitted.trace(*args, **kwargs)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise trace_failure(exc) from None
    return traced, recorder


def _diagnosed(
    request: TraceRequest,
    graph: Graph,
    closed: Any,
    prep: Prepared,
    watch: TraceWatch,
    recorder: Recording | None,
    arg_names: Any,
    warnings: list[str],
    timings: dict[str, float],
) -> tuple[Diagnostic, ...]:
    """What the trace says about the JAX rules (`diagnose`), if asked; a bug of ours here costs a
    warning, never the graph."""
    if not request.diagnose:
        return ()
    target = prep.target
    diagnostics: tuple[Diagnostic, ...] = ()
    t5 = time.perf_counter()
    try:
        if recorder is not None:
            codes = {code for code, _ in recorder.calls}
        else:
            target_code = getattr(target, "__code__", None)
            codes = set() if target_code is None else {target_code}
        ran = recorder.hits() if recorder is not None else None
        diagnostics = tuple(diagnose(graph, closed, target, watch, codes, ran, arg_names))
    except Exception as exc:  # same rule: a diagnostics bug costs a warning, not the graph
        warnings.append(f"diagnostics failed: {type(exc).__name__}: {exc}")
    timings["diagnose"] = time.perf_counter() - t5
    return diagnostics


def source_hashes(paths: list[str]) -> dict[str, str]:
    """The digest of each user file of a trace: of the bytes the worker ran for the traced file,
    of the file as it is now for the others (modules it imported, the maker's file)."""
    out: dict[str, str] = {}
    for path in paths:
        known = SOURCE_HASHES.get(path)
        if known is None:
            try:
                known = digest(read_bytes(path, MAX_SOURCE_BYTES))
            except OSError:
                continue
        out[path] = known
    return out


def _check_arity(fn: Any, args: list[Any], kwargs: dict[str, Any], qualname: str, args_text: str) -> None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # builtins and some wrappers have no signature; let the call itself complain
    try:
        sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise TraceError(
            ErrorInfo(
                kind="spec",
                phase="args",
                message=f"{qualname}{sig} cannot be called with ({args_text}): {exc}",
                hint="give one spec per parameter (--args on the command line, the Specs field in the window), "
                "e.g. 'f32[8,128], training=True'; or inputs from a maker",
            )
        ) from None
