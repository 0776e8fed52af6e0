"""Which Python runs the user's code: jaxscope's own, or the user's project environment (``--python``).

As Jupyter runs a kernel, the worker can run in another interpreter, so users need not install
their whole stack (flax, their own packages, a CUDA jax) into jaxscope's environment. That
interpreter needs Python 3.11+ and jax in the range this jaxscope supports (numpy comes with it);
of jaxscope it needs nothing installed: the worker's packages (pure Python, no Qt, no Graphviz,
orjson optional) reach it through a folder holding one link to this package, its only entry on
PYTHONPATH (the checkout's root, or site-packages, would bring jaxscope's own jax along).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass

from jaxscope.about import PACKAGE_DIR
from jaxscope.runtime.sweep import TOKEN_VAR, new_token, sweep
from jaxscope.schema.errors import JaxscopeError

JAX_SUPPORTED = ((0, 10), (0, 13))  # [lowest, above highest) major.minor: pyproject's jax>=0.10,<0.13
PYTHON_LOWEST = (3, 11)
CHECK_TIMEOUT_S = 120.0  # importing jax on a cold disk (a command's --timeout bounds it instead)
MAX_CHECK_OUTPUT = 1 << 20  # what is read of the check's output: its answer is one line

CHECK_TAG = "jaxscope-check "  # the line `python -m jaxscope.worker --check` answers with

_lock = threading.Lock()
_link: list[str] = []
_checked: dict[str, Interpreter] = {}


def command(python: str, *args: str) -> list[str]:
    """The argv that runs `python` on `args` isolated from the current folder: `-P` (Python 3.11+)
    keeps the current folder (or a script's) off the front of `sys.path`, so a `jax.py`, `numpy.py`
    or `jaxscope.py` lying where the user stands is never imported by a helper process. Every child
    that runs Python goes through here; the worker puts a user file's folder on the path itself,
    on purpose, when it loads that file (`worker.load`)."""
    return [python, "-P", *args]


def pythonpath(*entries: str) -> str:
    """PYTHONPATH of `entries` (each possibly a PYTHONPATH itself), without empty items: an empty item
    means the current folder, the hole `-P` closes (`PYTHONPATH=$PYTHONPATH:x` with none set makes one)."""
    return os.pathsep.join(p for entry in entries for p in entry.split(os.pathsep) if p)


def helper_env(root: str) -> dict[str, str]:
    """The environment of jaxscope's helper processes (layout, parsing): ours, importable from
    `root`, and kept off every accelerator (JAX_PLATFORMS=cpu). They import no JAX; if anything they
    load ever did, it must not take a TPU, which admits one process, from the worker."""
    env = dict(os.environ)
    env["PYTHONPATH"] = pythonpath(root, env.get("PYTHONPATH", ""))
    env["JAX_PLATFORMS"] = "cpu"
    return env


class InterpreterError(JaxscopeError):
    """The Python given for the user's code (`--python`) cannot run jaxscope's worker: too old, no
    jax, or not a Python. The message says which; remedy: point at the project's environment that has jax."""


@dataclass(frozen=True)
class Interpreter:
    path: str
    python: str  # "3.12.1"
    jax: str  # "0.10.2"


def foreign(python: str | None) -> bool:
    """True for an interpreter other than the one running jaxscope. Paths are compared unresolved: a
    venv's python is a link to its base interpreter, yet runs with the venv's packages."""
    return bool(python) and os.path.abspath(shutil.which(python or "") or python or "") != os.path.abspath(sys.executable)


def package_path() -> str:
    """A private folder holding only a link named `jaxscope` to this package: in the user's cache, one
    per installed jaxscope, reused by every run (a temporary folder per run was left behind by a
    killed jaxscope); a temporary one where the cache cannot be written."""
    with _lock:
        if not _link:
            cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
            folder = os.path.join(cache, "jaxscope", "path-" + hashlib.sha256(PACKAGE_DIR.encode()).hexdigest()[:16])
            link = os.path.join(folder, "jaxscope")
            try:
                os.makedirs(folder, mode=0o700, exist_ok=True)
                if os.path.realpath(link) != os.path.realpath(PACKAGE_DIR):
                    tmp = f"{link}.{os.getpid()}.tmp"
                    os.symlink(PACKAGE_DIR, tmp)
                    os.replace(tmp, link)  # atomic: another jaxscope starting now sees the old link or this one
            except OSError:
                folder = tempfile.mkdtemp(prefix="jaxscope-path-")
                os.symlink(PACKAGE_DIR, os.path.join(folder, "jaxscope"))
                atexit.register(shutil.rmtree, folder, True)
            _link.append(folder)
        return _link[0]


def worker_pythonpath(python: str | None, root: str, current: str) -> str:
    """PYTHONPATH for a worker run by `python`: the package link first (another interpreter) or
    the folder holding the package (ours), then the user's own PYTHONPATH."""
    first = package_path() if foreign(python) else root
    return pythonpath(first, current)


def check(python: str, timeout: float | None = None) -> Interpreter:
    """Run `python` once (for at most `timeout` seconds, else CHECK_TIMEOUT_S): its version, its jax,
    and that the worker's packages import there; InterpreterError with the remedy otherwise.
    Remembered per path for this process."""
    found = shutil.which(python) or python
    if found in _checked:
        return _checked[found]
    if not os.path.isfile(found):
        raise InterpreterError(f"--python {python}: no such interpreter")
    if not os.access(found, os.X_OK):
        raise InterpreterError(f"--python {python}: not executable")
    env = {**os.environ, "PYTHONPATH": worker_pythonpath(found, "", os.environ.get("PYTHONPATH", ""))}
    try:
        done = run_check(found, env, timeout or CHECK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise InterpreterError(f"--python {python}: its check did not answer within {timeout or CHECK_TIMEOUT_S:g} s") from None
    except OSError as exc:
        raise InterpreterError(f"--python {python}: cannot run it ({exc})") from None
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith(CHECK_TAG)), "")
    if not line and "-P" in done.stderr and done.returncode == 2:  # "Unknown option: -P": before 3.11
        raise InterpreterError(
            f"--python {python} is older than Python {_v(PYTHON_LOWEST)}; jaxscope's worker needs Python {_v(PYTHON_LOWEST)} or newer"
        )
    if not line:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise InterpreterError(f"--python {python}: not a Python that runs jaxscope's check (exit {done.returncode}): " + " | ".join(tail))
    try:
        info = json.loads(line.split(" ", 1)[1])
        version = tuple(int(v) for v in info["version"])
        if not all(isinstance(info.get(key, ""), str) for key in ("python", "jax", "error")):
            raise TypeError("its versions are not text")
    except (ValueError, KeyError, TypeError) as exc:  # its sitecustomize (or anything it imports) printed over the line
        raise InterpreterError(
            f"--python {python}: its answer to jaxscope's check is garbled ({type(exc).__name__}: {str(exc)[:80]}): {line[:120]!r}"
        ) from None
    pip = f"{found} -m pip install 'jax>={_v(JAX_SUPPORTED[0])},<{_v(JAX_SUPPORTED[1])}'"
    if version < PYTHON_LOWEST:
        raise InterpreterError(f"--python {python} is Python {info['python']}; jaxscope's worker needs Python {_v(PYTHON_LOWEST)} or newer")
    if "jax" not in info:
        raise InterpreterError(
            f"--python {python} (Python {info['python']}) cannot import jax ({info.get('error', '?')}): install it there: {pip}"
        )
    jax_version = tuple(int(p) for p in info["jax"].split(".")[:2] if p.isdigit())
    if not JAX_SUPPORTED[0] <= jax_version < JAX_SUPPORTED[1]:
        raise InterpreterError(
            f"--python {python} has jax {info['jax']}; this jaxscope supports jax {_v(JAX_SUPPORTED[0])} to "
            f"{_v((JAX_SUPPORTED[1][0], JAX_SUPPORTED[1][1] - 1))} "
            f"(its worker uses that jax's internals): {pip}, or use a jaxscope made for jax {info['jax']}"
        )
    if "error" in info:
        raise InterpreterError(f"--python {python}: jaxscope's worker does not import there: {info['error']}")
    result = Interpreter(found, info["python"], info["jax"])
    _checked[found] = result
    return result


def run_check(found: str, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """`found -m jaxscope.worker --check`, its output into files rather than pipes: a process it
    leaves running in the background (holding them open) would keep a pipe reader waiting for its
    end. Whatever it started is ended with it (its own session, and by its token wherever it went);
    of its output the first MAX_CHECK_OUTPUT bytes are read."""
    argv = command(found, "-m", "jaxscope.worker", "--check")
    token = new_token()
    with tempfile.TemporaryFile("w+b") as out, tempfile.TemporaryFile("w+b") as err:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env={**env, TOKEN_VAR: token}, start_new_session=True
        )
        try:
            code = proc.wait(timeout=timeout)
        finally:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            sweep(token)
            proc.wait()
        texts = []
        for stream in (out, err):
            stream.seek(0)
            texts.append(stream.read(MAX_CHECK_OUTPUT).decode("utf-8", errors="replace"))
        return subprocess.CompletedProcess(argv, code, texts[0], texts[1])


def _v(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))
