"""Load the user's file (or module) in a fresh namespace and find the function to trace."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from typing import Any

from jaxscope.schema.errors import JaxscopeError
from jaxscope.schema.files import digest
from jaxscope.schema.graph import SourceLoc
from jaxscope.schema.trace import ErrorInfo, FunctionRef
from jaxscope.targets.discover import DiscoveryError, decode_source, too_deep
from jaxscope.worker.errors import classify
from jaxscope.worker.userframes import set_project

RAN_USER_CODE = False  # once True, this worker's interpreter holds state from user code
SOURCE_HASHES: dict[str, str] = {}  # path -> digest of the bytes of the file this worker last ran


class LoadError(JaxscopeError):
    """A file, module or function that could not be loaded (no such function, an import that
    failed at the top of the user's file); its ErrorInfo names it and what the file does offer."""

    def __init__(self, info: ErrorInfo) -> None:
        super().__init__(info.message)
        self.info = info


def _module_name(path: str) -> str:
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem.isidentifier() and stem not in sys.modules:
        return stem
    return "__jaxscope_user__"


def load_module(ref: FunctionRef) -> types.ModuleType:
    """Execute the user's file like a script would run it: its directory on sys.path and as cwd."""
    global RAN_USER_CODE
    if ref.module:
        RAN_USER_CODE = True
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            return importlib.import_module(ref.module)
        except ModuleNotFoundError as exc:
            if exc.name and ref.module.startswith(exc.name):
                raise LoadError(ErrorInfo(kind="not-found", phase="load", message=f"no module named {ref.module!r}")) from None
            raise LoadError(classify(exc, "load")) from None
        except BaseException as exc:  # user code at import time may raise anything
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise LoadError(classify(exc, "load")) from None
    path = os.path.abspath(ref.path)
    if not os.path.exists(path):
        raise LoadError(ErrorInfo(kind="not-found", phase="load", message=f"no such file: {ref.path}"))
    if os.path.isdir(path):
        raise LoadError(ErrorInfo(kind="not-found", phase="load", message=f"{ref.path} is a directory, not a Python file"))
    try:
        with open(path, "rb") as fh:
            source = fh.read()
    except OSError as exc:
        raise LoadError(ErrorInfo(kind="not-found", phase="load", message=f"cannot read {ref.path}: {exc.strerror}")) from None
    SOURCE_HASHES[path] = digest(source)
    try:
        text = decode_source(source, path)  # by Python's own rules: what `python file.py` refuses is refused
    except DiscoveryError as exc:
        loc = SourceLoc(file=path, line=exc.line, col=exc.col or 0) if exc.line else None
        raise LoadError(ErrorInfo(kind="syntax", phase="load", message=exc.message, location=loc)) from None
    try:
        code = compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        loc = SourceLoc(file=path, line=exc.lineno or 0, col=max((exc.offset or 1) - 1, 0))
        raise LoadError(
            ErrorInfo(kind="syntax", phase="load", exc_type="SyntaxError", message=f"{exc.msg} (line {exc.lineno})", location=loc)
        ) from None
    except ValueError as exc:  # e.g. source code string cannot contain null bytes
        raise LoadError(ErrorInfo(kind="syntax", phase="load", message=f"{ref.path} is not a Python source file: {exc}")) from None
    except (RecursionError, MemoryError):
        message, line = too_deep(text)
        raise LoadError(ErrorInfo(kind="syntax", phase="load", message=message, location=SourceLoc(file=path, line=line, col=0))) from None
    directory = os.path.dirname(path)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    os.chdir(directory)
    set_project(path)  # its project's files are the user's, installed or not
    name = _module_name(path)
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module  # dataclasses and pickle look classes up here
    RAN_USER_CODE = True
    try:
        exec(code, module.__dict__)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise LoadError(classify(exc, "load")) from None
    return module


def find_function(module: types.ModuleType, ref: FunctionRef) -> Any:
    """Resolve a dotted qualname (`f`, `Model.step`) to a callable."""
    obj: Any = module
    for part in ref.qualname.split("."):
        if not hasattr(obj, part):
            names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_") and not isinstance(v, type(sys)))
            where = ref.path or ref.module
            raise LoadError(
                ErrorInfo(
                    kind="not-found",
                    phase="load",
                    message=f"{where} has no function {ref.qualname!r}",
                    hint=("functions defined there: " + ", ".join(names[:30])) if names else "",
                )
            )
        obj = getattr(obj, part)
    if not callable(obj):
        raise LoadError(ErrorInfo(kind="not-found", phase="load", message=f"{ref.qualname!r} is a {type(obj).__name__}, not a function"))
    return obj
