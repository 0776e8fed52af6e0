"""Which frames belong to the user: not the stdlib, not site-packages, not jaxscope itself.

JAX's own notion of user code is private and cached by traceback content, so jaxscope keeps its
own predicate (shared by equation source locations and error tracebacks).
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


@functools.lru_cache(maxsize=4096)
def is_user_file(filename: str) -> bool:
    """True for the user's own source files (the traced file and the modules it imports)."""
    if not filename or filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    return not path.startswith(_EXCLUDED)


_PACKAGE_DIRS = ("site-packages", "dist-packages")
_NOT_SHOWN = frozenset({"jax", "jaxlib", "jax_plugins", "jaxscope", "jax_cuda12_plugin", "jax_cuda13_plugin"})


@functools.lru_cache(maxsize=4096)
def library_of(filename: str) -> str | None:
    """ "" for the user's code, a library's top package for code in site-packages ("flax"), and None
    for frames a call chain leaves out: JAX's own (its frames stand between every two others), the
    standard library's, jaxscope's and generated code's."""
    if is_user_file(filename):
        return ""
    if not filename or filename.startswith("<"):
        return None
    parts = os.path.abspath(filename).split(os.sep)
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] in _PACKAGE_DIRS:
            top = parts[i + 1].removesuffix(".py")
            return None if top in _NOT_SHOWN else top
    return None


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
