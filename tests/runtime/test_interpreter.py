"""--python: the user's code in another interpreter, checked up front, with jaxscope reaching it
through a folder that holds only a link to the package."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from jaxscope.runtime import interpreter
from jaxscope.runtime.interpreter import InterpreterError, check

ROOT = pathlib.Path(__file__).resolve().parents[2]


def wrapper(tmp_path: pathlib.Path, target: str = sys.executable) -> str:
    """Another interpreter, as far as jaxscope can tell: a script that runs `target`."""
    path = tmp_path / "python"
    path.write_text(f'#!/bin/sh\nexec "{target}" "$@"\n')
    path.chmod(0o755)
    return str(path)


def test_the_package_link_holds_only_jaxscope():
    folder = interpreter.package_path()
    assert os.listdir(folder) == ["jaxscope"]
    assert os.path.realpath(os.path.join(folder, "jaxscope")) == os.path.realpath(ROOT / "jaxscope")


def test_a_python_with_jax_passes_and_runs_the_worker(tmp_path):
    python = wrapper(tmp_path)
    info = check(python)
    assert info.jax.startswith("0.") and info.python == sys.version.split()[0]
    cases = ROOT / "examples" / "basics.py"
    done = subprocess.run(
        [sys.executable, "-m", "jaxscope", "jaxpr", f"{cases}::predict", "--python", python], capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0 and "dot_general" in done.stdout, done.stderr


def test_a_python_without_jax_is_refused_with_the_remedy(tmp_path):
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    python = str(bare / "bin" / "python")
    with pytest.raises(InterpreterError) as err:
        check(python)
    assert "cannot import jax" in str(err.value) and "-m pip install 'jax>=0.10,<0.13'" in str(err.value)
    done = subprocess.run(
        [sys.executable, "-m", "jaxscope", "jaxpr", f"{ROOT / 'examples' / 'basics.py'}::predict", "--python", python],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 2 and "cannot import jax" in done.stderr


def test_missing_and_not_executable_interpreters(tmp_path):
    with pytest.raises(InterpreterError, match="no such interpreter"):
        check(str(tmp_path / "nowhere" / "python"))
    plain = tmp_path / "python3"
    plain.write_text("")
    with pytest.raises(InterpreterError, match="not executable"):
        check(str(plain))
    liar = wrapper(tmp_path, "/bin/false")
    with pytest.raises(InterpreterError, match="not a Python"):
        check(liar)


def fake_python(tmp_path: pathlib.Path, body: str) -> str:
    path = tmp_path / "python"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_a_garbled_check_answer_is_the_interpreters_fault(tmp_path):
    """Issue 46, 10: a --python whose check line is not JSON was 'internal error' (exit 5)."""
    python = fake_python(tmp_path, 'echo \'jaxscope-check {"python": "3.12.1", "version": [3,\'\n')
    with pytest.raises(InterpreterError, match="its answer to jaxscope's check is garbled"):
        check(python)


def test_a_background_child_holding_the_output_does_not_hold_the_check(tmp_path):
    """Issue 46, 11: a --python whose background child kept stdout open blocked 120 s (past
    --timeout) and the child lived on; the check waits for the interpreter only and ends its group."""
    marker = tmp_path / "child.pid"
    python = fake_python(tmp_path, f"sleep 60 &\necho $! > {marker}\necho 'jaxscope-check not json'\n")
    with pytest.raises(InterpreterError, match="garbled"):
        check(python)
    pid = int(marker.read_text())
    import time

    for _ in range(50):
        try:
            os.kill(pid, 0)
            if open(f"/proc/{pid}/stat").read().split()[2] == "Z":
                break
        except (ProcessLookupError, FileNotFoundError):
            break
        time.sleep(0.05)
    else:
        raise AssertionError(f"the background child {pid} still runs")


def _script(tmp_path: pathlib.Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_timeout_bounds_the_check_and_the_start_up_and_their_children_end(tmp_path):
    """Issue 59.3: a --python that hangs in its check, or passes it and hangs starting the worker, is given
    up within the command's --timeout (was 121 s each), and the children it left in sessions of their own end."""
    import time

    marker = f"jaxscope-test-{os.getpid()}"
    hangs = _script(tmp_path, "hangs", f"(setsid sh -c 'sleep 300' {marker} &)\nsleep 1000\n")  # $0 is the marker
    late = _script(tmp_path, "late", f'case "$*" in *--check*) exec "{sys.executable}" "$@";; esac\nsleep 1000\n')
    basics = ROOT / "examples" / "basics.py"
    for python, said in ((hangs, "its check did not answer within 10 s"), (late, "timeout")):
        t0 = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "jaxscope", "jaxpr", f"{basics}::predict", "--python", python, "--timeout", "10"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert time.monotonic() - t0 < 40 and done.returncode in (2, 4) and said in done.stderr, done.stderr[-1500:]
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    assert left == [], f"the check's children outlived it: {left}"


def test_a_check_that_prints_without_end_is_read_with_a_cap(tmp_path):
    python = _script(tmp_path, "chatty", "yes jaxscope | head -c 50000000\n")
    with pytest.raises(InterpreterError, match="not a Python that runs jaxscope's check"):
        check(python)
    assert len(interpreter.run_check(python, dict(os.environ), 30).stdout) <= interpreter.MAX_CHECK_OUTPUT


def test_a_newer_jax_is_refused_naming_the_supported_range(tmp_path):
    answer = '{"version": [3, 12, 0], "python": "3.12.0", "jax": "0.13.0"}'
    python = _script(tmp_path, "newer", f"echo 'jaxscope-check {answer}'\n")
    with pytest.raises(InterpreterError, match=r"has jax 0\.13\.0; this jaxscope supports jax 0\.10 to 0\.12"):
        check(python)
