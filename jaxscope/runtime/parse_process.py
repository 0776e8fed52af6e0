"""Argument text (and big source files) parsed in a child Python process, for texts long enough to stall a GUI.

`argspec.parse_call` starts with `ast.parse`, one C call that holds the GIL for all of it: for
mlp-50k's 52k characters of specs ~30 ms alone and 60-230 ms while other threads want the GIL,
so the window's GUI thread stood still that long even with the parse on a thread of its own. A
child process parses the text instead (~0.14 s of wall time, mostly its start); the caller pays
only for unpickling the result (~7 ms, in Python code that lets other threads run; a pickle,
not JSON: the child is jaxscope's own parser, given text only, and runs no user code). Imports
neither jax nor Qt, here or in the child.
"""

from __future__ import annotations

import pickle
import subprocess
import sys

from jaxscope.about import SOURCE_ROOT
from jaxscope.runtime.interpreter import command, helper_env
from jaxscope.targets import argspec
from jaxscope.targets.discover import DiscoveryError, ModuleInfo, discover_file, discover_source

BIG_SOURCE = 256 * 1024  # bytes: a bigger source is read (parsed with `ast`) in a child process

_CHILD = "from jaxscope.runtime.parse_process import child_main; child_main()"
_DISCOVER_CHILD = "from jaxscope.runtime.parse_process import discover_main; discover_main()"


def discover(path: str, apart: bool = False, timeout: float = 60.0, text: str | None = None) -> ModuleInfo | DiscoveryError:
    """`discover_file(path)` (`discover_source(text, path)` when `text` is given: a saved trace's copy),
    or its error as a value; `apart`: in a child process (a 50k-line file's `ast.parse` holds the GIL
    0.7 s), here after all when no child can run or it fails."""
    if apart:
        payload = path if text is None else f"{path}\0{text}"  # no path holds a NUL
        try:
            proc = subprocess.run(
                command(sys.executable, "-c", _DISCOVER_CHILD),
                input=payload.encode(),
                capture_output=True,
                env=helper_env(SOURCE_ROOT),
                timeout=timeout,
                check=True,
            )
            found = pickle.loads(proc.stdout)
            if isinstance(found, (ModuleInfo, DiscoveryError)):
                return found
        except (OSError, subprocess.SubprocessError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError):
            pass
    try:
        return discover_file(path) if text is None else discover_source(text, path)
    except DiscoveryError as exc:
        return exc


def discover_main() -> None:
    """The child: a path on stdin (and after a NUL the text to read as its source), the pickled
    ModuleInfo or DiscoveryError on stdout (no user code runs)."""
    path, sep, text = sys.stdin.buffer.read().decode().partition("\0")
    found = discover(path, text=text if sep else None)
    sys.stdout.buffer.write(pickle.dumps(found, protocol=pickle.HIGHEST_PROTOCOL))


def parse_call_apart(text: str, *, python: str | None = None, timeout: float = 60.0) -> argspec.CallSpec:
    """`argspec.parse_call(text)` (the same CallSpec, or the same SpecError raised) computed in a
    child process; parsed here after all when no child can run or it fails (never a wrong verdict)."""
    try:
        proc = subprocess.run(
            command(python or sys.executable, "-c", _CHILD),
            input=text.encode(),
            capture_output=True,
            env=helper_env(SOURCE_ROOT),
            timeout=timeout,
            check=True,
        )
        kind, value = pickle.loads(proc.stdout)
    except (OSError, subprocess.SubprocessError, pickle.UnpicklingError, EOFError, ValueError, TypeError):
        return argspec.parse_call(text)
    if kind == "error":
        message, offset, token = value
        raise argspec.SpecError(message, text, offset, token)
    assert isinstance(value, argspec.CallSpec)  # (the child pickles one, as `child_main` says)
    return value


def child_main() -> None:
    """The child: text on stdin, a pickled ("call", CallSpec) or ("error", (message, offset, token)) on stdout."""
    text = sys.stdin.buffer.read().decode()
    try:
        out: tuple[str, object] = ("call", argspec.parse_call(text))
    except argspec.SpecError as exc:
        out = ("error", (exc.message, exc.offset, exc.token))
    sys.stdout.buffer.write(pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL))
