"""The layers stay clean: core and the CLI import neither jax nor Qt; the worker never imports Qt."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1] / "jaxscope"


def test_core_and_cli_import_neither_jax_nor_qt():
    code = (
        "import sys, jaxscope.spec, jaxscope.layout, jaxscope.ir, jaxscope.analysis, jaxscope.render, jaxscope.cli,"
        " jaxscope.runtime.worker_client, jaxscope.schema.graph, jaxscope.schema.trace, jaxscope.schema.layout;"
        "import jaxscope.spec.argspec, jaxscope.spec.discover, jaxscope.layout.engine, jaxscope.render.svg, jaxscope.exporter;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib', 'PySide6', 'shiboken6', 'pygraphviz'));"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _imports(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _top(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names}


def test_import_rules_by_package():
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        names = _imports(path)
        tops = _top(names)
        if rel.split("/")[0] in ("schema", "spec", "layout", "ir", "analysis", "render", "runtime") or rel == "exporter.py":
            assert not tops & {"jax", "jaxlib", "PySide6", "shiboken6"}, rel
            allowed = {"jaxscope.qt.graph.raster"} if rel == "exporter.py" else set()  # the one lazy PNG/PDF import
            assert not any(n.startswith(("jaxscope.qt", "jaxscope.worker")) for n in names - allowed), rel
        if rel.startswith("worker/"):
            assert "PySide6" not in tops and not any(n.startswith("jaxscope.qt") for n in names), rel
        if rel.startswith("qt/"):
            assert not tops & {"jax", "jaxlib"}, rel
            assert not any(n.startswith("jaxscope.worker") for n in names), rel
