"""Issue 58.1: libraries are told by where their modules come from, not by a path name. With JAX, flax
and optax on PYTHONPATH (as `pip install --target DIR` or a TPU image puts them; copied here from this
environment), no line or scope of theirs is the user's, and `save` copies only the user's file."""

from __future__ import annotations

import gzip
import json
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
STEP = ROOT / "tests" / "worker" / "corpus" / "nnx_mlp_step.py"


@pytest.mark.same_jax  # it copies this environment's JAX: a worker of another JAX cannot import it
def test_libraries_on_pythonpath_are_libraries(tmp_path: pathlib.Path) -> None:
    site = pathlib.Path(sysconfig.get_paths()["purelib"])
    target = tmp_path / "site"
    for name in ("jax", "flax", "optax"):
        shutil.copytree(site / name, target / name)
        for info in site.glob(f"{name}-*.dist-info"):
            if name != "jax":  # a TPU image's JAX has no metadata: hidden by name all the same
                shutil.copytree(info, target / info.name)
    project = tmp_path / "proj"
    project.mkdir()
    shutil.copy(STEP, project / "step.py")
    env = {**os.environ, "PYTHONPATH": str(target), "QT_QPA_PLATFORM": "offscreen"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-m", "jaxscope", *args], capture_output=True, text=True, timeout=300, cwd=project, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        return done

    probe = subprocess.run([sys.executable, "-c", "import optax; print(optax.__file__)"], capture_output=True, text=True, env=env)
    assert probe.stdout.startswith(str(target)), probe.stdout  # the copies are what the worker imports
    by_line = json.loads(cli("cost", "step.py::train_step", "--by", "line", "--json").stdout)
    lines = [r["name"] for r in by_line["rows"]]
    assert all(name.startswith("step.py:") or name.startswith("(") for name in lines), lines
    by_scope = json.loads(cli("cost", "step.py::train_step", "--by", "scope", "--json").stdout)
    scopes = " ".join(r["name"] for r in by_scope["rows"])
    assert "optax: " in scopes and "MLP.__call__/up" in scopes and "source_info_util" not in scopes and "api_boundary" not in scopes
    cli("save", "step.py::train_step", "--no-compile", "-o", str(tmp_path / "s.jaxscope"))
    doc = json.loads(gzip.decompress((tmp_path / "s.jaxscope").read_bytes()))
    assert list(doc["sources"]) == [str(project / "step.py")]
