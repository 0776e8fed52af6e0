"""List the functions of a Python file with `ast`, never running it, and read its example inputs.

Example inputs follow one documented convention that needs no jaxscope import in the user's
file: a module-level literal dict from function name to call-argument text (spec.argspec)::

    JAXSCOPE_ARGS = {"predict": "f32[8,4], {'w': f32[4,3], 'b': f32[3]}", "step": "f32[8], training=True"}

Functions listed, in source order: top-level ``def``/``async def``, methods as ``Class.method``,
and top-level assignments wrapping an earlier def, like ``step = jax.jit(_step)``. When a name
is bound again (a second def, ``f = jax.jit(f)``), the later binding replaces the earlier entry,
as it does when the module runs.
"""

from __future__ import annotations

import ast
import codecs
import io
import os
import re
import tokenize
from dataclasses import dataclass, field

from jaxscope.schema.collector import gc_paused
from jaxscope.schema.errors import JaxscopeError
from jaxscope.schema.files import MAX_SOURCE_BYTES, NotAFileError, read_bytes
from jaxscope.targets.argspec import CallSpec, Spec

EXAMPLES_VAR = "JAXSCOPE_ARGS"
INPUTS_VAR = "JAXSCOPE_INPUTS"  # function name -> maker (a function returning the example inputs)
MAIN_VAR = "JAXSCOPE_MAIN"  # names the function to open when a file is opened without one

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True, slots=True)
class ParamInfo:
    """One parameter; `kind` is positional_only, positional, var_positional, keyword_only or var_keyword."""

    name: str
    kind: str
    default: str | None = None  # source text of the default
    annotation: str | None = None  # source text of the annotation


@dataclass(frozen=True, slots=True)
class FunctionInfo:
    """A function found in the file; `kind` is "def" or "assigned" (``f = jax.jit(g)``)."""

    name: str  # "predict", or "Class.method"
    line: int
    end_line: int
    params: tuple[ParamInfo, ...]
    decorators: tuple[str, ...]  # source text, outermost first, e.g. "jax.jit"
    doc: str  # the first docstring line, or ""
    example_args: str | None  # from JAXSCOPE_ARGS
    kind: str
    maker: str | None = None  # the source text of its JAXSCOPE_INPUTS entry ("make_inputs")
    # an assigned name whose function is not a def of this file, what it stands for (`jax.jit(step)`,
    # `from steps import step`): its parameters are unknown here, the worker (which runs the file) finds them
    refers: str = ""

    @property
    def has_inputs(self) -> bool:
        """A maker or an argument spec says what to call it with."""
        return self.maker is not None or self.example_args is not None

    @property
    def required(self) -> tuple[str, ...]:
        """The parameters a call must give (no default, not *args/**kwargs)."""
        return tuple(p.name for p in self.params if p.default is None and p.kind in ("positional_only", "positional", "keyword_only"))


@dataclass(frozen=True, slots=True)
class ModuleInfo:
    """What discovery found in one file: its functions, examples, and non-fatal warnings."""

    path: str
    doc: str  # the first line of the module docstring, or ""
    functions: tuple[FunctionInfo, ...]
    example_args: dict[str, str]
    warnings: tuple[str, ...]
    main: str = ""  # JAXSCOPE_MAIN, when it names a function of the file
    makers: dict[str, str] = field(default_factory=dict)  # JAXSCOPE_INPUTS: function name -> maker's source text
    inputs_table: bool = False  # the file assigns JAXSCOPE_INPUTS (maybe not as a literal dict)
    docstring: str = ""  # the whole module docstring (tutorials render it as their guide)

    def get(self, name: str) -> FunctionInfo | None:
        """The function listed under `name` ("f" or "Class.method"), or None."""
        return next((f for f in self.functions if f.name == name), None)


class DiscoveryError(JaxscopeError):
    """The user's file cannot be read or parsed (missing, not UTF-8, a syntax error). `line` is
    1-based, `col` 0-based (as in the AST); remedy: fix the file at that place."""

    def __init__(self, message: str, path: str, line: int | None = None, col: int | None = None) -> None:
        super().__init__(message, path, line, col)  # all four, so the error pickles
        self.message = message
        self.path = path
        self.line = line
        self.col = col

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.message}"


# ---------------------------------------------------------------------------- reading


def discover_file(path: str) -> ModuleInfo:
    """Read and list `path` without executing it; DiscoveryError says why a file cannot be used."""
    if os.path.isdir(path):
        raise DiscoveryError("is a directory, not a Python file", path)
    try:
        data = read_bytes(path, MAX_SOURCE_BYTES)  # a FIFO, a device or gigabytes are refused, not read
    except NotAFileError as exc:
        raise DiscoveryError(f"{exc.strerror}: jaxscope reads Python source files", path) from None
    except (FileNotFoundError, NotADirectoryError):
        raise DiscoveryError("no such file", path) from None
    except PermissionError:
        raise DiscoveryError("permission denied: cannot read the file", path) from None
    except OSError as exc:
        raise DiscoveryError(f"cannot read the file: {exc.strerror or exc}", path) from None
    return discover_source(decode_source(data, path), path)


def decode_source(data: bytes, path: str) -> str:
    """Source bytes -> text by Python's own rules (PEP 263, 3120): UTF-8 unless a coding cookie says
    otherwise; what Python refuses to run is refused here, with the line and the remedy."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DiscoveryError(
            "is UTF-16 text (it starts with a UTF-16 byte-order mark); Python reads source files as UTF-8: save it as UTF-8", path, 1, 0
        )
    if b"\0" in data:
        line = data.count(b"\n", 0, data.index(b"\0")) + 1
        raise DiscoveryError(f"not a Python source file: binary data (a NUL byte on line {line})", path)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # an unknown coding cookie, a BOM that contradicts it, or bad UTF-8 on line 1-2
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            encoding = "utf-8"  # said below, with the byte and its line
        else:
            raise DiscoveryError(f"not a Python source file: {exc.msg}", path) from None
    try:
        return codecs.decode(data, encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        name = "UTF-8" if encoding in ("utf-8", "utf-8-sig") else encoding
        remedy = (
            ("; Python refuses it too: save the file as UTF-8, or declare its encoding on line 1 or 2 (# -*- coding: latin-1 -*-)")
            if name == "UTF-8"
            else ""
        )
        raise DiscoveryError(
            f"not valid {name} text: byte 0x{data[exc.start]:02x} on line {line} cannot be decoded{remedy}", path, line, 0
        ) from None


def too_deep(source: str) -> tuple[str, int]:
    """What to say of code nested too deeply for the parser (a 6,000-term sum), and the line to show:
    the longest one. Python itself cannot compile such a file (up to 3.12), so it is the code's fault."""
    lines = source.splitlines() or [""]
    line = max(range(len(lines)), key=lambda i: len(lines[i])) + 1
    return (
        f"the code is nested too deeply for Python's parser (longest line: {line}, {len(lines[line - 1]):,} characters); "
        "split the expression into steps (e.g. a loop or sum() over a list)",
        line,
    )


def parse_source(source: str, path: str = "<unknown>") -> ast.Module:
    """`ast.parse` with the cyclic GC paused: an AST is millions of objects for a big file, and
    collections while it was built tripled the parse. Raises as `ast.parse` does."""
    with gc_paused():
        return ast.parse(source, filename=path)


def discover_source(source: str, path: str = "<string>") -> ModuleInfo:
    """List the functions of `source` and read its JAXSCOPE_ARGS; raise DiscoveryError on a syntax error."""
    try:
        tree = parse_source(source, path)
    except SyntaxError as exc:
        line, col = exc.lineno, (exc.offset - 1 if exc.offset else None)
        where = f"line {line}, column {col + 1}" if line and col is not None else f"line {line}"
        raise DiscoveryError(f"syntax error at {where}: {exc.msg}", path, line, col) from None
    except ValueError as exc:  # NUL characters in a str source
        raise DiscoveryError(f"not a Python source file: {exc}", path) from None
    except (RecursionError, MemoryError):
        message, line = too_deep(source)
        raise DiscoveryError(message, path, line, 0) from None
    warnings: list[str] = []
    examples, lines = _read_examples(tree, warnings)
    collector = _Collector(source)
    found = collector.collect(tree)
    makers, table = _read_makers(tree, source)
    listed = {f.name for f in found}
    for name in [*makers, *examples]:  # declared targets bound otherwise than by a def: `from steps import step`
        info = None if name in listed else collector.referred(name)
        if info is not None:
            found.append(info)
            listed.add(name)
    for name in examples:
        if name not in listed:
            warnings.append(f"line {lines[name]}: {EXAMPLES_VAR} names {name!r}, which is not a function found in this file")
    functions = tuple(
        FunctionInfo(
            f.name,
            f.line,
            f.end_line,
            f.params,
            f.decorators,
            f.doc,
            examples.get(f.name),
            f.kind,
            makers.get(f.name, makers.get(f.name.rsplit(".", 1)[-1])),
            f.refers,
        )
        for f in found
    )
    main = _read_main(tree, listed, warnings)
    docstring = ast.get_docstring(tree) or ""
    return ModuleInfo(
        path, _first_line(docstring), functions, examples, tuple(warnings), main, makers=makers, inputs_table=table, docstring=docstring
    )


def default_function(info: ModuleInfo) -> FunctionInfo | None:
    """What `jaxscope FILE.py` opens: JAXSCOPE_MAIN, else the one function with example inputs, else the only function."""
    if info.main:
        return info.get(info.main)
    with_inputs = [f for f in info.functions if f.has_inputs]
    if len(with_inputs) == 1:
        return with_inputs[0]
    return info.functions[0] if len(info.functions) == 1 else None


def first_with_inputs(info: ModuleInfo) -> FunctionInfo | None:
    """What the window opens a file on: JAXSCOPE_MAIN, else the first function with inputs (a maker or
    specs), else the first that needs none; None when every function needs inputs nobody gave."""
    if info.main:
        return info.get(info.main)
    return next((f for f in info.functions if f.has_inputs), None) or next((f for f in info.functions if not f.required), None)


def _read_main(tree: ast.Module, listed: set[str], warnings: list[str]) -> str:
    main = ""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == MAIN_VAR for t in node.targets):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) and node.value.value in listed:
                main = node.value.value
            else:
                warnings.append(f"line {node.lineno}: {MAIN_VAR} must be the name of a function of this file, as a string; ignored")
                main = ""
    return main


# ---------------------------------------------------------------------------- functions


_TRANSFORMS = frozenset(
    {
        "jit",
        "filter_jit",
        "pjit",
        "grad",
        "value_and_grad",
        "filter_grad",
        "filter_value_and_grad",
        "vmap",
        "pmap",
        "partial",
        "checkpoint",
        "remat",
        "jacfwd",
        "jacrev",
        "hessian",
        "shard_map",
        "custom_jvp",
        "custom_vjp",
    }
)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")  # lines as the parser counts them (not at \f, \v, \u2028)


class _Collector:
    """Walks a module's top level and class bodies, in source order."""

    def __init__(self, source: str) -> None:
        self.source = source
        # ast.get_source_segment splits the whole source on every call: a 2,000-function file took
        # 17 s to list (quadratic); its lines are split once here, as the parser counts them.
        self.lines = _LINE.findall(source)
        self.found: dict[str, FunctionInfo] = {}  # insertion order is the listing order
        self.defs: dict[str, _FunctionNode] = {}  # top-level defs seen so far
        self.bound: dict[str, tuple[int, int, str]] = {}  # other top-level names: line, end line, what binds them

    def collect(self, tree: ast.Module) -> list[FunctionInfo]:
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.defs[node.name] = node
                self.add(self.function(node, node.name))
            elif isinstance(node, ast.ClassDef):
                self.methods(node, node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                self.assignment(node)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    name = (alias.asname or alias.name).split(".")[0]
                    self.bound[name] = (node.lineno, node.end_lineno or node.lineno, self.text(node))
        return list(self.found.values())

    def referred(self, name: str) -> FunctionInfo | None:
        """A name bound at the top level otherwise than by a def (an import, an assignment), as an
        assigned function of unknown parameters: for the names JAXSCOPE_INPUTS/ARGS declare targets."""
        if name not in self.bound:
            return None
        line, end, text = self.bound[name]
        return FunctionInfo(name, line, end, (), (), "", None, "assigned", refers=text)

    def add(self, info: FunctionInfo) -> None:
        self.found.pop(info.name, None)  # a later binding wins, and moves to where it happens
        self.found[info.name] = info

    def methods(self, cls: ast.ClassDef, prefix: str) -> None:
        for node in cls.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.add(self.function(node, f"{prefix}.{node.name}"))
            elif isinstance(node, ast.ClassDef):
                self.methods(node, f"{prefix}.{node.name}")

    def function(self, node: _FunctionNode, name: str) -> FunctionInfo:
        return FunctionInfo(
            name=name,
            line=node.lineno,
            end_line=node.end_lineno or node.lineno,
            params=self.params(node.args),
            decorators=tuple(self.text(d) for d in node.decorator_list),
            doc=_first_line(ast.get_docstring(node)),
            example_args=None,
            kind="def",
        )

    def assignment(self, node: ast.Assign | ast.AnnAssign) -> None:
        """``name = wrapper(fn, ...)`` (nesting allowed: ``jax.jit(jax.grad(loss))``) for an earlier def."""
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        wrappers: list[str] = []
        value = node.value
        while isinstance(value, ast.Call) and value.args:
            wrappers.append(self.text(value.func))
            value = value.args[0]
        for target in targets:
            if isinstance(target, ast.Name) and not (isinstance(value, ast.Name) and value.id == target.id):
                self.bound[target.id] = (node.lineno, node.end_lineno or node.lineno, self.text(node))
        if not wrappers or not isinstance(value, ast.Name) or value.id not in self.defs:
            known = isinstance(value, ast.Attribute) or (isinstance(value, ast.Name) and value.id in self.bound)  # imported, assigned
            if wrappers and wrappers[0].rsplit(".", 1)[-1] in _TRANSFORMS and known:
                for target in targets:  # `train_step = jax.jit(other.step)`: a function, of parameters unknown here
                    if isinstance(target, ast.Name):
                        self.add(
                            FunctionInfo(
                                target.id,
                                node.lineno,
                                node.end_lineno or node.lineno,
                                (),
                                tuple(wrappers),
                                "",
                                None,
                                "assigned",
                                refers=self.text(node.value) if node.value is not None else "",
                            )
                        )
            return
        wrapped = self.function(self.defs[value.id], value.id)
        for target in targets:
            if isinstance(target, ast.Name):
                self.add(
                    FunctionInfo(
                        name=target.id,
                        line=node.lineno,
                        end_line=node.end_lineno or node.lineno,
                        params=wrapped.params,
                        decorators=tuple(wrappers),
                        doc=wrapped.doc,
                        example_args=None,
                        kind="assigned",
                    )
                )

    def params(self, args: ast.arguments) -> tuple[ParamInfo, ...]:
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        out: list[ParamInfo] = []
        for i, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
            kind = "positional_only" if i < len(args.posonlyargs) else "positional"
            out.append(self.param(arg, kind, default))
        if args.vararg is not None:
            out.append(self.param(args.vararg, "var_positional", None))
        for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
            out.append(self.param(arg, "keyword_only", default))
        if args.kwarg is not None:
            out.append(self.param(args.kwarg, "var_keyword", None))
        return tuple(out)

    def param(self, arg: ast.arg, kind: str, default: ast.expr | None) -> ParamInfo:
        return ParamInfo(
            name=arg.arg,
            kind=kind,
            default=None if default is None else self.text(default),
            annotation=None if arg.annotation is None else self.text(arg.annotation),
        )

    def text(self, node: ast.AST) -> str:
        """The node's source text (as `ast.get_source_segment`, in time linear in its own lines)."""
        start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        first, last = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if start is None or end is None or first is None or last is None or end > len(self.lines):
            return ast.unparse(node)
        lines: list[bytes] = [str(ln).encode() for ln in self.lines[start - 1 : end]]
        if start == end:
            return lines[0][first:last].decode()
        lines[0], lines[-1] = lines[0][first:], lines[-1][:last]
        return b"".join(lines).decode() or ast.unparse(node)


def _first_line(doc: str | None) -> str:
    lines = (doc or "").strip().splitlines()
    return lines[0].strip() if lines else ""


# ---------------------------------------------------------------------------- examples


def _read_examples(tree: ast.Module, warnings: list[str]) -> tuple[dict[str, str], dict[str, int]]:
    """The last top-level ``JAXSCOPE_ARGS = {...}``: its literal str -> str entries, and their lines.

    Anything else (a non-literal value, a non-string key or value, ``**``) is left out with a warning.
    """
    examples: dict[str, str] = {}
    lines: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        else:
            continue
        if EXAMPLES_VAR not in names or node.value is None:
            continue
        where = f"line {node.lineno}"
        if not isinstance(node.value, ast.Dict):
            warnings.append(f"{where}: {EXAMPLES_VAR} is not a literal dict of function name -> argument text; ignored")
            continue
        examples, lines = {}, {}
        for key, value in zip(node.value.keys, node.value.values, strict=True):
            entry = f"line {(key or value).lineno}"
            if key is None:
                warnings.append(f"{entry}: ** in {EXAMPLES_VAR} is not read; only literal entries are")
            elif not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                warnings.append(f"{entry}: {EXAMPLES_VAR} keys must be function names as string literals; entry ignored")
            elif not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                warnings.append(f"{entry}: {EXAMPLES_VAR}[{key.value!r}] must be a string literal of call arguments; entry ignored")
            else:
                if key.value in examples:
                    warnings.append(f"{entry}: {EXAMPLES_VAR} has {key.value!r} twice; the last one is used")
                examples[key.value] = value.value
                lines[key.value] = key.lineno
    return examples, lines


def _read_makers(tree: ast.Module, source: str) -> tuple[dict[str, str], bool]:
    """JAXSCOPE_INPUTS's literal entries (name -> the maker's source text), and whether it is assigned at
    all: a table built otherwise is still looked up by the worker, which runs the file."""
    makers: dict[str, str] = {}
    assigned = False
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        assigned_value = getattr(node, "value", None)
        for t in targets:  # JAXSCOPE_INPUTS["step"] = make_step: an entry added later
            if (
                isinstance(t, ast.Subscript)
                and isinstance(t.value, ast.Name)
                and t.value.id == INPUTS_VAR
                and isinstance(t.slice, ast.Constant)
                and isinstance(t.slice.value, str)
                and assigned_value is not None
            ):
                makers[t.slice.value] = ast.get_source_segment(source, assigned_value) or "?"
        if not any(isinstance(t, ast.Name) and t.id == INPUTS_VAR for t in targets):
            continue
        assigned = True
        value = getattr(node, "value", None)
        if isinstance(value, ast.Dict):
            makers |= {
                key.value: ast.get_source_segment(source, item) or "?"
                for key, item in zip(value.keys, value.values, strict=True)
                if isinstance(key, ast.Constant) and isinstance(key.value, str)
            }
    return makers, assigned


def bind_call(fn: FunctionInfo, call: CallSpec) -> dict[str, Spec]:
    """Parameter name -> the spec the call gives it: positional arguments in order, then keywords."""
    positional = [p for p in fn.params if p.kind in ("positional_only", "positional")]
    bound: dict[str, Spec] = {p.name: spec for p, spec in zip(positional, call.args, strict=False)}
    bound.update(call.kwargs)
    return bound
