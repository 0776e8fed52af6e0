"""Which frames belong to the user: not the stdlib, not an installed library, not jaxscope itself.

JAX's own notion of user code is private and cached by traceback content, so jaxscope keeps its
own predicate (shared by equation source locations and error tracebacks).

A library is told by where its modules come from, not by a path name (issue 58): a file is a
library's when its top-level package is an installed distribution's (`importlib.metadata`:
site-packages, `pip install --target` on PYTHONPATH, an editable install, a TPU image's JAX),
or when it lies in site-packages; JAX and jaxlib are always hidden, even without metadata. The
user's project (the folder of the traced file, up to the nearest `pyproject.toml`, `setup.py` or
`.git`, and every package in it, installed editable or not) is the user's.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
import traceback
from types import CodeType, ModuleType, TracebackType

from jaxscope.about import PACKAGE_DIR
from jaxscope.schema.graph import SourceLoc
from jaxscope.schema.trace import Frame

_JAXSCOPE_DIR = PACKAGE_DIR + os.sep


def _excluded_prefixes() -> tuple[str, ...]:
    paths = {_JAXSCOPE_DIR}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            paths.add(os.path.abspath(p) + os.sep)
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix):
        paths.add(os.path.abspath(p) + os.sep)
    return tuple(sorted(paths))


_EXCLUDED = _excluded_prefixes()
_STDLIB = tuple(
    sorted({os.path.abspath(p) + os.sep for key in ("stdlib", "platstdlib") if (p := sysconfig.get_paths().get(key))} - {_JAXSCOPE_DIR})
)
_PACKAGE_DIRS = ("site-packages", "dist-packages")
_NOT_SHOWN = frozenset({"jax", "jaxlib", "jax_plugins", "jaxscope", "jax_cuda12_plugin", "jax_cuda13_plugin", "libtpu"})
_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
_project: str = ""  # the user's project root (`set_project`), with a trailing separator; "" before a file is loaded


def set_project(traced_file: str) -> None:
    """The traced file's project: its folder, up to the nearest folder that marks a project root
    (pyproject.toml, setup.py, setup.cfg, .git), where one is above it (else its own folder)."""
    global _project
    folder = os.path.dirname(os.path.abspath(traced_file))
    root, up = folder, folder
    while True:
        if any(os.path.exists(os.path.join(up, m)) for m in _PROJECT_MARKERS):
            root = up
            break
        parent = os.path.dirname(up)
        if parent == up:
            break
        up = parent
    if root in (os.path.dirname(root), os.path.expanduser("~")):  # a project is never the whole disk or home
        root = folder
    _project = root.rstrip(os.sep) + os.sep
    is_user_file.cache_clear()
    library_of.cache_clear()


@functools.lru_cache(maxsize=1)
def _distributed() -> frozenset[str]:
    """The top-level import names of every installed distribution (`importlib.metadata`)."""
    import importlib.metadata

    try:
        return frozenset(importlib.metadata.packages_distributions())
    except Exception:  # a broken distribution's metadata costs its names, not the trace
        return frozenset()


@functools.lru_cache(maxsize=4096)
def _top_package(path: str) -> str:
    """The top-level package (or module) a source file is imported as: the first part of its path
    under the deepest `sys.path` entry holding it (packages without `__init__.py` included); else
    by the `__init__.py`s above it."""
    best = ""
    for entry in sys.path:
        root = os.path.abspath(entry or os.curdir).rstrip(os.sep) + os.sep
        if path.startswith(root) and len(root) > len(best):
            best = root
    if best:
        return path[len(best) :].split(os.sep, 1)[0].removesuffix(".py")
    folder, name = os.path.split(path)
    top = name.removesuffix(".py")
    while os.path.exists(os.path.join(folder, "__init__.py")):
        folder, top = os.path.split(folder)
    return top


def _in_site_packages(path: str) -> str | None:
    parts = path.split(os.sep)
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] in _PACKAGE_DIRS:
            return parts[i + 1].removesuffix(".py")
    return None


@functools.lru_cache(maxsize=4096)
def is_user_file(filename: str) -> bool:
    """True for the user's own source files (the traced file, its project and the modules of theirs it imports)."""
    if not filename or filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    if path.startswith(_EXCLUDED) or _in_site_packages(path) is not None:  # the interpreter's own, jaxscope's
        return False
    if _project and path.startswith(_project):
        return True
    top = _top_package(path)
    return top not in _NOT_SHOWN and top not in _distributed()


@functools.lru_cache(maxsize=4096)
def library_of(filename: str) -> str | None:
    """ "" for the user's code, a library's top package for an installed library's code ("flax"),
    and None for frames a call chain leaves out: JAX's own (its frames stand between every two
    others), the standard library's, jaxscope's and generated code's."""
    if is_user_file(filename):
        return ""
    if not filename or filename.startswith("<"):
        return None
    path = os.path.abspath(filename)
    if path.startswith(_STDLIB) and _in_site_packages(path) is None:
        return None
    top = _in_site_packages(path) or _top_package(path)
    return None if top in _NOT_SHOWN or path.startswith(_JAXSCOPE_DIR) else top


def user_modules() -> list[ModuleType]:
    """The imported modules that are the user's files (the traced file and what it imports of theirs)."""
    out = []
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and is_user_file(path):
            out.append(module)
    return out


def user_frames(tb: TracebackType | None) -> list[Frame]:
    """The user's frames of an exception traceback, outermost first."""
    frames = []
    for fs in traceback.extract_tb(tb):
        if is_user_file(fs.filename):
            frames.append(Frame(file=fs.filename, line=fs.lineno or 0, function=fs.name, code=(fs.line or "").strip()))
    return frames


def innermost_location(tb: TracebackType | None) -> SourceLoc | None:
    """Where in the user's code an exception was raised (the innermost user frame)."""
    best = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if is_user_file(code.co_filename):
            best = (code, tb.tb_lasti, tb.tb_lineno)
        tb = tb.tb_next
    if best is None:
        return None
    code, lasti, lineno = best
    return _loc_from_code(code, lasti, lineno)


def _loc_from_code(code: CodeType, lasti: int, lineno: int) -> SourceLoc:
    line, col, end_line, end_col = lineno, 0, lineno, 0
    positions = list(code.co_positions()) if hasattr(code, "co_positions") else []
    index = lasti // 2
    if 0 <= index < len(positions):
        pl, pel, pc, pec = positions[index]
        if pl is not None:
            line, end_line = pl, pel or pl
            col, end_col = pc or 0, pec or 0
    return SourceLoc(
        file=code.co_filename,
        line=line,
        col=col,
        end_line=end_line,
        end_col=end_col,
        function=getattr(code, "co_qualname", code.co_name),
    )
