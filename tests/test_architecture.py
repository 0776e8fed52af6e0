"""The house stays as ARCHITECTURE.md draws it: the import contracts of pyproject.toml hold, no
module imports itself back (through any chain, imports inside functions and under TYPE_CHECKING
counted), modules and folders stay small, and the light layers load neither jax nor Qt."""

from __future__ import annotations

import ast
import pathlib
import shutil
import subprocess
import sys

import networkx as nx

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "jaxscope"
MAX_LINES = 600
MAX_MODULES_PER_FOLDER = 20


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> nx.DiGraph:
    """Module -> the jaxscope modules it imports, anywhere in it. `from pkg import name` counts as
    an import of `pkg.name` when that is a module, else of `pkg` itself."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module for a in node.names]
            for target in targets:
                if target in modules and target != name:
                    graph.add_edge(name, target)
    return graph


def test_the_import_contracts_hold():
    lint = shutil.which("lint-imports", path=str(pathlib.Path(sys.executable).parent))
    assert lint is not None, "import-linter is missing: install the test extras"
    proc = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_no_module_imports_itself_back():
    cycles = list(nx.simple_cycles(_import_graph()))
    assert cycles == [], "import cycles:\n" + "\n".join(" -> ".join([*c, c[0]]) for c in cycles[:20])


def test_modules_and_folders_stay_small():
    sizes = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines()) for p in PACKAGE.rglob("*.py")}
    long = {path: n for path, n in sizes.items() if n > MAX_LINES}
    assert long == {}, f"modules over {MAX_LINES} lines: split the second idea out"
    crowded = {
        str(d.relative_to(ROOT)): n
        for d in [PACKAGE, *PACKAGE.rglob("*")]
        if d.is_dir() and (n := len(list(d.glob("*.py")))) > MAX_MODULES_PER_FOLDER
    }
    assert crowded == {}, f"folders over {MAX_MODULES_PER_FOLDER} modules"


def _loaded_after(imports: str) -> list[str]:
    code = f"import sys; {imports}; print('\\n'.join(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_the_pure_layers_load_neither_jax_nor_qt():
    loaded = _loaded_after(
        "import jaxscope.schema.graph, jaxscope.schema.trace, jaxscope.targets.argspec, jaxscope.targets.discover,"
        " jaxscope.layout.engine, jaxscope.ir.linking, jaxscope.ir.hlo_links, jaxscope.analysis.flow_marks,"
        " jaxscope.render.svg, jaxscope.exporter, jaxscope.runtime.worker_client, jaxscope.runtime.layout_client,"
        " jaxscope.session, jaxscope.workbench, jaxscope.cli.main"
    )
    heavy = sorted(m for m in loaded if m.split(".")[0] in ("jax", "jaxlib", "PySide6", "shiboken6", "pygraphviz"))
    assert heavy == []


def test_the_api_does_not_load_the_cli():
    loaded = _loaded_after("import jaxscope.api")
    assert not [m for m in loaded if m == "jaxscope.cli" or m.startswith("jaxscope.cli.")]


def test_no_cli_command_imports_another():
    """Each `jaxscope` sub-command stands alone: what two share lives in `cli.common` (options),
    `cli.terminal` (printing), or below the CLI (`jaxscope.drawing`, `jaxscope.stages`)."""
    graph = _import_graph()
    shared = {"jaxscope.cli", "jaxscope.cli.common", "jaxscope.cli.terminal", "jaxscope.cli.main"}
    commands = [m for m in graph if m.startswith("jaxscope.cli.") and m not in shared]
    assert len(commands) >= 10
    crossing = {m: sorted(t for t in graph.successors(m) if t in commands) for m in commands}
    assert {m: t for m, t in crossing.items() if t} == {}
