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
