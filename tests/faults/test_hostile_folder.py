"""Modules lying in the current folder never run in jaxscope's helper processes (issue 46, 2): a
`jaxscope.py`, `numpy.py`, `jax.py` or `orjson.py` where the user stands was imported by the layout
process and the worker (`python -m` puts the current folder first on `sys.path`), also when only a
saved trace was read. Every child now starts with `-P` (`runtime.interpreter.command`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from jaxscope.schema.trace_file import encode
from tests.schema.test_document import _doc

PLANTED = ("jaxscope", "numpy", "jax", "orjson")
JAXSCOPE = str(Path(sys.executable).with_name("jaxscope"))  # the console script, as a user runs it


def plant(folder: Path) -> None:
    for name in PLANTED:
        (folder / f"{name}.py").write_text('import pathlib\npathlib.Path(__file__).with_name("RAN-" + __name__).write_text("ran")\n')


def ran(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("RAN-*"))


def run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": ""}  # an empty PYTHONPATH item is the current folder too
    return subprocess.run([JAXSCOPE, *args], capture_output=True, text=True, timeout=300, cwd=folder, env=env)


def test_a_saved_trace_exported_runs_no_module_of_the_current_folder(tmp_path: Path) -> None:
    plant(tmp_path)
    (tmp_path / "t.jaxscope").write_bytes(encode(_doc()))
    done = run(tmp_path, "export", "t.jaxscope", "-o", "t.svg")
    assert done.returncode == 0, done.stderr
    assert "layout worker failed" not in done.stderr  # the layout process ran, with its own modules
    assert ran(tmp_path) == []
    assert (tmp_path / "t.svg").read_text().startswith("<svg")


def test_a_live_trace_runs_the_users_file_not_the_folder_it_was_started_from(tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    plant(here)
    (there / "model.py").write_text("import jax.numpy as jnp\n\ndef f(x):\n    return jnp.sin(x) * 2\n")
    done = run(here, "jaxpr", str(there / "model.py::f"), "--args", "f32[3]")
    assert done.returncode == 0, done.stderr
    assert "sin" in done.stdout
    assert ran(here) == []
