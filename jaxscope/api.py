"""The Python API: export, display or open the graph of a JAX function from a script or notebook;
read a saved trace (`load`) and compare two traces (`diff`).

``fn_or_target`` is a live function object or a target string (``"file.py::func"``, ``"file.py"``
for its ``JAXSCOPE_MAIN`` function, ``"pkg.mod:func"``). A live function is traced in the calling
process (the caller already runs that code, with its state); a target string is traced in a
one-off worker process, exactly as ``jaxscope export`` does.

Example arguments are any pytrees, as a maker's (``jaxscope --help``): array leaves (a concrete
array, a ``jax.ShapeDtypeStruct``, a spec string such as ``"f32[8,4]"``) are traced, every other
leaf (``3``, ``"relu"``, an activation function) is static; ``static_argnums``/``static_argnames``
make whole arguments static. For a target string, ``args_spec`` may give the whole call as
``--args`` text instead (also the way to pass a keyword argument named like one of the options
below, as is ``functools.partial``), or ``inputs`` a maker (``"file.py::make_inputs"``); values
with no ``--args`` form reach the worker pickled. A relative target path is taken from the current
directory.

This module imports neither jax nor Qt: each function imports what it needs when called.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from jaxscope.schema.errors import JaxscopeError as JaxscopeError  # the one base of jaxscope's errors, public as jaxscope.JaxscopeError

if TYPE_CHECKING:
    from jaxscope.analysis.trace_diff import GraphDiff
    from jaxscope.drawing import Decorations, Direction, Drawing, DrawOptions
    from jaxscope.schema.graph import Graph
    from jaxscope.schema.layout import Layout
    from jaxscope.schema.trace import TraceResult
    from jaxscope.schema.trace_file import TraceDocument

TEXT_FORMATS = {".jaxpr": "jaxpr", ".txt": "jaxpr", ".mlir": "mlir"}


@dataclass
class _Traced:
    graph: Graph
    jaxpr_text: Callable[[], str]
    mlir_text: Callable[[], str] | None  # None: not available for a target string
    result: TraceResult | None = None  # a target string's trace, from a worker (its files' hashes with it)


def _trace(
    target: Any,
    args: Sequence[Any],
    kwargs: dict[str, Any],
    *,
    static_argnums: Sequence[int] = (),
    static_argnames: Sequence[str] = (),
    args_spec: str | None = None,
    timeout: float | None = None,
    want_text: bool = False,
    inputs: str | None = None,
) -> _Traced:
    """Trace `target` in-process (a live function) or in a worker (a target string)."""
    if isinstance(target, str):
        statics = bool(static_argnums or static_argnames)
        return _trace_target(target, args, kwargs, args_spec, timeout, statics, want_text, inputs)
    if not callable(target):
        raise TypeError(f"expected a function or a 'file.py::func' string, got {type(target).__qualname__}")
    if inputs is not None:
        raise TypeError("inputs= names a maker for a target string; for a live function, pass the values themselves")
    from jaxscope.worker.live import trace_live

    if args_spec is not None:
        args, kwargs = _parse_args_spec(args_spec, args, kwargs)
    live = trace_live(target, args, kwargs, static_argnums, static_argnames)
    return _Traced(live.graph, live.jaxpr_text, live.mlir_text)


def _parse_args_spec(text: str, args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    from jaxscope.targets import argspec
    from jaxscope.worker.trace import to_abstract

    if args or kwargs:
        raise TypeError("give the example arguments either as values or as args_spec text, not both")
    call = argspec.parse_call(text)
    return [to_abstract(s) for s in call.args], {k: to_abstract(s) for k, s in call.kwargs}


def _trace_target(
    target: str,
    args: Sequence[Any],
    kwargs: dict[str, Any],
    args_spec: str | None,
    timeout: float | None,
    statics: bool,
    want_text: bool,
    inputs: str | None,
) -> _Traced:
    import shutil

    from jaxscope.session import SessionError, trace

    if statics:
        raise TypeError(
            "static_argnums/static_argnames apply to live functions; for a target string, "
            "pass the static values as Python literals (they are static)"
        )
    if sum(x is not None for x in (args_spec, inputs, (*args, *kwargs) or None)) > 1:
        raise TypeError("give the example arguments one way: as values, as args_spec text, or as an inputs= maker")
    folder = None
    if args or kwargs:
        args_spec, inputs = _values_as_call(args, kwargs)
        folder = os.path.dirname(inputs.rsplit("::", 1)[0]) if inputs else None
    try:
        result = trace(target, args_spec, inputs=inputs, timeout=timeout, jaxpr_text=want_text)
    except SessionError as exc:
        exc.raise_typed()
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    return _Traced(result.graph, lambda: result.jaxpr_text.rstrip("\n") + "\n", None, result)


MAKER_SOURCE = '''"""Example inputs that jaxscope's Python API handed on to a worker (pickled beside this file)."""
import os
import pickle


def make_inputs():
    with open(os.path.join(os.path.dirname(__file__), "values.pickle"), "rb") as fh:
        args, kwargs = pickle.load(fh)
    return {"args": args, "kwargs": kwargs}
'''


def _values_as_call(args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[str | None, str | None]:
    """(--args text, None) for values that have one; else (None, a maker that unpickles them): optax
    states, flax and equinox modules reach the worker or the app as they are."""
    import pickle
    import tempfile

    from jaxscope.targets.argvalues import ArgValueError, call_text

    try:
        return call_text(args, kwargs), None
    except ArgValueError:
        pass
    try:
        data = pickle.dumps((tuple(args), dict(kwargs)), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # lambdas, open files, ...: pickle says which
        raise ArgValueError(
            f"the example inputs have no --args form and cannot be handed to another process ({type(exc).__name__}: {exc}); "
            "name a maker instead: inputs='file.py::make_inputs', a function that returns them"
        ) from exc
    folder = tempfile.mkdtemp(prefix="jaxscope-inputs-")
    with open(os.path.join(folder, "values.pickle"), "wb") as fh:
        fh.write(data)
    with open(os.path.join(folder, "inputs.py"), "w", encoding="utf-8") as fh:
        fh.write(MAKER_SOURCE)
    return None, os.path.join(folder, "inputs.py") + "::make_inputs"


def _draw(graph: Graph, options: DrawOptions, decorations: Decorations | None = None, *, page: bool = False) -> Drawing:
    """The drawing `options` ask for of `graph`, from the one drawer (`jaxscope.drawer`, loaded when drawn)."""
    from jaxscope.drawer import draw

    return draw(graph, options, decorations, page=page)


def _options(
    theme: str,
    collapse: int | None,
    direction: str,
    legend: bool,
    highlight: str,
    dpi: int,
    layout_budget: float,
    long_edges: str,
    scopes: bool,
    flat: bool,
    fmt: str = "svg",
) -> DrawOptions:
    """The drawing options for `fmt`, checked before a trace spends seconds (ValueError names the bad one)."""
    from jaxscope.drawing import DrawOptions, grouping_for

    return DrawOptions(
        theme=theme,
        direction=cast("Direction", direction),  # (a wrong one: `check` says so)
        collapse=collapse,
        grouping=grouping_for(fmt, scopes, flat),
        legend=legend,
        highlight=highlight,
        long_edges=long_edges,
        dpi=dpi,
        layout_budget=layout_budget,
    ).check()


def _text_format(path: str, fmt: str | None) -> str | None:
    if fmt is not None:
        return fmt.lower().lstrip(".") if fmt.lower().lstrip(".") in ("jaxpr", "mlir") else None
    return TEXT_FORMATS.get(os.path.splitext(path)[1].lower())


def export(
    fn_or_target: Callable[..., Any] | str,
    *example_args: Any,
    path: str | os.PathLike[str],
    static_argnums: Sequence[int] = (),
    static_argnames: Sequence[str] = (),
    theme: str = "light",
    collapse: int | None = None,
    direction: str = "TB",
    legend: bool = False,
    dpi: int = 96,
    highlight: str = "",
    fmt: str | None = None,
    args_spec: str | None = None,
    inputs: str | None = None,
    timeout: float | None = None,
    layout_budget: float = 5.0,
    long_edges: str = "auto",
    scopes: bool = False,
    flat: bool = False,
    **example_kwargs: Any,
) -> str:
    """Trace and write the graph to `path`; the suffix picks the format (svg png pdf dot json, or
    jaxpr text for ``.jaxpr``/``.txt`` and StableHLO for ``.mlir``). Returns the format written.

    The picture is the window's (`jaxscope.drawing`): a model grouped by module per pass, forward
    and backward apart, opened to its repeated blocks; a small plain function as it is. `flat`
    draws the program's own structure, `scopes` groups any program; `collapse` opens that many
    levels of sub-graphs (of groups, when grouped). JSON keeps the program's structure (flat).
    `highlight` is a graph search (a primitive, a name, a scope, ``:12`` or ``12`` for a line) whose nodes get
    an accent outline. `long_edges`: "auto" draws edges longer than 1200 x 800 px as their two ends
    where there are 64 or more (as the window does), "ends" always, "whole" never. Same input, same bytes.
    """
    from jaxscope.exporter import resolve_format, write_text

    path = os.fspath(path)
    text_fmt = _text_format(path, fmt)
    options, drawn = None, ""
    if text_fmt is None:  # a bad suffix or option fails before tracing
        drawn = resolve_format(path, fmt)
        options = _options(theme, collapse, direction, legend, highlight, dpi, layout_budget, long_edges, scopes, flat, drawn)
    elif text_fmt == "mlir" and isinstance(fn_or_target, str):
        raise ValueError("StableHLO (.mlir) export needs a live function object, not a target string")
    traced = _trace(
        fn_or_target,
        example_args,
        example_kwargs,
        static_argnums=static_argnums,
        static_argnames=static_argnames,
        args_spec=args_spec,
        timeout=timeout,
        want_text=text_fmt == "jaxpr" or drawn == "html",
        inputs=inputs,
    )
    if options is None:
        if text_fmt == "jaxpr":
            text = traced.jaxpr_text()
        else:
            assert traced.mlir_text is not None  # a live function (a target string was refused above)
            text = traced.mlir_text()
        write_text(path, text)
        return text_fmt or ""
    if drawn == "html":  # the page's panel: each equation's jaxpr line and its source lines
        return _draw(traced.graph, options, _page_texts(traced), page=True).write(path, fmt)
    return _draw(traced.graph, options).write(path, fmt)


def _page_texts(traced: _Traced) -> Decorations:
    """An HTML page's panel: each equation's jaxpr lines, and the user's files."""
    from jaxscope.drawing import Decorations
    from jaxscope.stages import jaxpr_entry

    return Decorations(links={"jaxpr": jaxpr_entry(traced.graph, traced.jaxpr_text())}, sources=_sources(traced))


def _sources(traced: _Traced) -> dict[str, str]:
    """The user's files for an HTML page: a worker's trace keeps those still as traced
    (`saved_traces.snapshot`); a function traced here reads its files as they are."""
    if traced.result is not None:
        from jaxscope.saved_traces import snapshot

        return snapshot(traced.result)
    from jaxscope.stages import source_texts

    return source_texts(traced.graph)


@dataclass(frozen=True)
class GraphImage:
    """A drawn graph that displays inline in Jupyter (SVG), and can be saved in any export format."""

    drawing: Drawing
    svg: str
    page: str = ""  # `graph(..., interactive=True)`: the interactive HTML page, shown in a notebook in a frame

    @property
    def graph(self) -> Graph:
        return self.drawing.graph

    @property
    def layout(self) -> Layout:
        return self.drawing.layout

    @property
    def highlight(self) -> frozenset[str]:
        return self.drawing.highlight

    @classmethod
    def of(cls, drawing: Drawing) -> GraphImage:
        """The drawing with its SVG (tooltips on: a notebook shows them)."""
        return cls(drawing, drawing.svg())

    def _repr_svg_(self) -> str:
        return self.svg

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        bundle = {"image/svg+xml": self.svg, "text/plain": repr(self)}
        if self.page:  # the page in its own frame: its script and style stay apart from the notebook's
            import html

            bundle["text/html"] = (
                f'<iframe srcdoc="{html.escape(self.page, quote=True)}" style="width:100%;height:640px;border:0" '
                'sandbox="allow-scripts"></iframe>'
            )
        return bundle

    def __repr__(self) -> str:
        from jaxscope.render.sanitize import clean_text  # a notebook's text/plain: no NUL, ESC or RLO of a name

        return f"<jaxscope graph of {clean_text(self.graph.function)}: {len(self.layout.nodes)} nodes drawn>"

    def save(self, path: str | os.PathLike[str], *, dpi: int = 96, fmt: str | None = None) -> str:
        """Write the graph (svg png pdf dot json html) as `export` would; returns the format written."""
        import dataclasses

        from jaxscope.exporter import resolve_format

        drawing = dataclasses.replace(self.drawing, options=dataclasses.replace(self.drawing.options, dpi=dpi).check())
        if drawing.bodies is None and resolve_format(os.fspath(path), fmt) == "html":  # a page lays out every body ahead
            from jaxscope.drawer import Drawer
            from jaxscope.drawing import DrawRequest

            with Drawer() as drawer:
                request = DrawRequest(drawing.view, drawing.options, drawing.decorations, layout=drawing.layout, page=True)
                drawing = drawer.draw(request)
        return drawing.write(os.fspath(path), fmt)


def graph(
    fn_or_target: Callable[..., Any] | str,
    *example_args: Any,
    static_argnums: Sequence[int] = (),
    static_argnames: Sequence[str] = (),
    theme: str = "light",
    collapse: int | None = None,
    direction: str = "TB",
    legend: bool = False,
    highlight: str = "",
    args_spec: str | None = None,
    inputs: str | None = None,
    timeout: float | None = None,
    layout_budget: float = 5.0,
    long_edges: str = "auto",
    scopes: bool = False,
    flat: bool = False,
    interactive: bool = False,
    **example_kwargs: Any,
) -> GraphImage:
    """Trace and lay out, for a notebook: the result shows as SVG in Jupyter (see `export` for the
    options); `interactive` shows the HTML page instead (expand, search, click a box for its source
    and jaxpr lines), as ``export(..., path="graph.html")`` writes it."""
    options = _options(theme, collapse, direction, legend, highlight, 96, layout_budget, long_edges, scopes, flat)
    traced = _trace(
        fn_or_target,
        example_args,
        example_kwargs,
        static_argnums=static_argnums,
        static_argnames=static_argnames,
        args_spec=args_spec,
        timeout=timeout,
        inputs=inputs,
        want_text=interactive,
    )
    drawing = _draw(traced.graph, options, _page_texts(traced) if interactive else None, page=interactive)
    image = GraphImage.of(drawing)
    return dataclasses.replace(image, page=drawing.page()) if interactive else image


def show_argv(
    fn_or_target: Callable[..., Any] | str,
    *example_args: Any,
    args_spec: str | None = None,
    inputs: str | None = None,
    **example_kwargs: Any,
) -> list[str]:
    """The command `show` runs: ``python -m jaxscope FILE::QUALNAME [--args SPEC | --inputs MAKER]``.

    A live function must be a module-level function (or ``Class.method``) of a file: the app loads
    that file afresh in its worker, so its arguments are passed as ``--args`` text, or, for values
    with no such form (optax states, flax and equinox modules), pickled behind a maker.
    """
    if isinstance(fn_or_target, str):
        target = fn_or_target
    else:
        target = _file_target(fn_or_target)
    if sum(x is not None for x in (args_spec, inputs, (*example_args, *example_kwargs) or None)) > 1:
        raise TypeError("give the example arguments one way: as values, as args_spec text, or as an inputs= maker")
    if example_args or example_kwargs:
        args_spec, inputs = _values_as_call(example_args, example_kwargs)
    from jaxscope.runtime.interpreter import command

    argv = command(sys.executable, "-m", "jaxscope", target)  # a jaxscope.py where the notebook runs is not imported
    if inputs is not None:
        return argv + ["--inputs", inputs]
    return argv + (["--args", args_spec] if args_spec is not None else [])


def _file_target(fn: Callable[..., Any]) -> str:
    inner = inspect.unwrap(fn)  # through jax.jit and functools.wraps to the Python function
    qualname = getattr(inner, "__qualname__", "")
    try:
        source = inspect.getsourcefile(inner)
    except TypeError:
        source = None
    if not source or not os.path.isfile(source):
        raise ValueError(
            f"cannot open {qualname or fn!r} in the app: it was not defined in a file "
            "(a notebook cell or the REPL); use jaxscope.graph(...) or jaxscope.export(...)"
        )
    if not qualname or "<locals>" in qualname or "<lambda>" in qualname:
        raise ValueError(
            f"cannot open {qualname or fn!r} in the app: only module-level functions and "
            "methods can be named as FILE::NAME; use jaxscope.graph(...) or jaxscope.export(...)"
        )
    return f"{os.path.abspath(source)}::{qualname}"


def show(
    fn_or_target: Callable[..., Any] | str,
    *example_args: Any,
    args_spec: str | None = None,
    inputs: str | None = None,
    **example_kwargs: Any,
) -> subprocess.Popen[bytes]:
    """Open the desktop app on the function (a separate process; nothing is written). Returns the Popen."""
    argv = show_argv(fn_or_target, *example_args, args_spec=args_spec, inputs=inputs, **example_kwargs)
    return subprocess.Popen(argv)


@dataclass(frozen=True)
class SavedTrace:
    """A trace saved by `jaxscope save` or File → Save Trace, read without the code that made it:
    its graph, jaxpr, IR texts, run and sources; displays as its graph in Jupyter."""

    path: str
    document: TraceDocument

    @property
    def graph(self) -> Graph:
        return self.document.trace.graph

    @property
    def jaxpr(self) -> str:
        return self.document.trace.jaxpr_text

    def hlo(self, stage: str = "stablehlo") -> str:
        """The StableHLO ("stablehlo") or compiled HLO ("compiled") text saved ("" when not)."""
        found = self.document.hlo(stage)
        return found.text if found is not None else ""

    def image(self, *, scopes: bool = True, collapse: int | None = None, theme: str = "light") -> GraphImage:
        """Its graph drawn as the window draws it (flat when `scopes` is False)."""
        from jaxscope.drawing import DrawOptions

        options = DrawOptions(theme=theme, collapse=collapse, grouping="auto" if scopes else "flat").check()
        return GraphImage.of(_draw(self.graph, options))

    def _repr_html_(self) -> str:
        import html

        doc = self.document
        head = f"<p><b>{html.escape(doc.target)}</b> — {self.graph.top.total_eqns} equations, saved {html.escape(doc.created)}</p>"
        return head + self.image().svg

    def __repr__(self) -> str:
        from jaxscope.render.sanitize import clean_text

        return f"<jaxscope saved trace {clean_text(self.path)}: {clean_text(self.document.target)}, {self.graph.top.total_eqns} equations>"


def load(path: str | os.PathLike[str]) -> SavedTrace:
    """Read a saved trace (NAME.jaxscope); a JaxscopeError says what is wrong with a bad one."""
    from jaxscope.saved_traces import load as read
    from jaxscope.session import SessionError

    try:
        return SavedTrace(os.fspath(path), read(os.fspath(path)))
    except SessionError as exc:
        exc.raise_typed()


@dataclass(frozen=True)
class TraceDiff:
    """Two traces compared equation by equation (as `jaxscope diff`): `counts()`, `summary()`, the
    report as `str()`, and in Jupyter the report over both graphs drawn as one, coloured."""

    names: tuple[str, str]
    a: Graph
    b: Graph
    found: GraphDiff

    def counts(self) -> dict[str, int]:
        return self.found.counts()

    def summary(self) -> str:
        return self.found.summary()

    def __str__(self) -> str:
        from jaxscope.analysis.diff_view import report

        return "\n".join(report(self.a, self.b, self.found, self.names))

    def image(self, theme: str = "light") -> GraphImage:
        """Both graphs as one (B's, with A's removed equations put back), coloured by the diff."""
        from jaxscope.analysis.diff_view import COLOURS, union
        from jaxscope.drawing import Categorised, Decorations, DrawOptions

        both = union(self.a, self.b, self.found)
        fill = Categorised("diff", both.status, COLOURS, caption=self.summary())
        return GraphImage.of(_draw(both.graph, DrawOptions(theme=theme, grouping="flat").check(), Decorations(fill=fill)))

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(str(self))}</pre>" + self.image().svg


def diff(
    a: SavedTrace | str,
    b: SavedTrace | str,
    *,
    args_a: str | None = None,
    args_b: str | None = None,
    inputs_a: str | None = None,
    inputs_b: str | None = None,
    timeout: float | None = None,
) -> TraceDiff:
    """Compare two traces: each a `load`ed trace, a NAME.jaxscope path or a target string (traced in a
    worker with its own `args_*` specs or `inputs_*` maker)."""
    from jaxscope.analysis.trace_diff import diff as compare
    from jaxscope.saved_traces import is_document
    from jaxscope.session import SessionError, trace

    def side(x: SavedTrace | str, args: str | None, inputs: str | None) -> tuple[Graph, str]:
        if isinstance(x, str) and is_document(x):
            x = load(x)
        if isinstance(x, SavedTrace):
            return x.graph, x.document.target
        try:
            result = trace(x, args, inputs=inputs, timeout=timeout, diagnose=False)
        except SessionError as exc:
            exc.raise_typed()
        request = result.request
        return result.graph, x + (f" --args {request.args!r}" if request.args else f" --inputs {request.inputs}" if request.inputs else "")

    (ga, na), (gb, nb) = side(a, args_a, inputs_a), side(b, args_b, inputs_b)
    return TraceDiff((na, nb), ga, gb, compare(ga, gb))
