"""Regenerate the README screenshots: `.venv/bin/python resources/screenshots.py` (offscreen Qt, real worker)."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QCoreApplication, QPointF, QSettings, Qt
from PySide6.QtWidgets import QApplication

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
README_TRAIN = "README.md#train.py::train_step"  # the README's "first run" file, written to a temp dir
# (file name, target, theme, args, guide link to click, source line to click, bottom dock to raise)
SHOTS = [
    ("window-train-step-maker.png", README_TRAIN, "light", None, None, None, "problems"),
    ("window-prng-guide-light.png", "examples/prng.py", "light", None, "random_split", None, "diagnostics"),
    ("window-hidden-state-dark.png", "examples/hidden_state.py", "dark", None, "SCALE", None, "diagnostics"),
    ("window-control-flow-light.png", "examples/control_flow.py::step", "light", None, None, 21, "problems"),
    ("window-control-flow-dark.png", "examples/control_flow.py::step", "dark", None, None, 21, "problems"),
    ("window-basics-light.png", "examples/basics.py::predict", "light", None, None, 25, "problems"),
    ("window-basics-dark.png", "examples/basics.py::predict", "dark", None, None, 25, "problems"),
    ("window-run-light.png", "examples/train_step.py", "light", None, None, None, "run"),
]


BIG_GRAPH = "graph-gpt-10k-long-edges.png"  # the graph view alone, on the benchmark's 10k-equation GPT train step


def big_graph_shot(app: QApplication) -> None:
    """Its long edges drawn as their two ends, one box selected (its long edge whole), zoom 0.45."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import workloads

    from jaxscope.api import graph as traced_graph
    from jaxscope.qt.graph.view import QtGraphView

    w = workloads.make("gpt", "10k")
    path = w.write(tempfile.mkdtemp())
    image = traced_graph(f"{path}::{w.function}", args_spec=w.args)
    view = QtGraphView()
    view.resize(1400, 900)
    view.show()
    view.set_graph(image.graph, image.layout, "light")
    model = view.model
    long_at = model.long_edges_at()
    middle = model.nodes[len(model.nodes) // 2]
    view.zoom_to(0.45, QPointF(middle.x + middle.w / 2, middle.y))
    settle(app, 0.2)
    seen = view.mapToScene(view.viewport().rect()).boundingRect()
    aim = seen.center().x(), seen.center().y() - seen.height() * 0.25
    picks = [
        r
        for r in model.nodes
        if r.node is not None and r.node.kind == "eqn" and 1 <= len(long_at.get(r.base, ())) <= 3 and seen.contains(r.rect)
    ]
    pick = min(picks, key=lambda r: abs(r.x - aim[0]) + abs(r.y - aim[1]))
    view.select_paths([pick.base], center=False)
    settle(app, 0.5)
    view.viewport().grab().save(os.path.join(HERE, BIG_GRAPH))
    print("wrote", BIG_GRAPH, "-", len(model.nodes), "boxes,", len(model.long_edges), "long edges")
    view.close()


LINKS = "window-exact-links.png"  # the README's train step, a backward dot_general selected, flax's line opened


def links_shot(app: QApplication) -> None:
    """Its own jaxpr and StableHLO lines marked, its call chain over the source, flax's Dense shown read-only."""
    from jaxscope.ir.jaxpr_order import equations
    from jaxscope.qt.app.window import MainWindow

    w = MainWindow(theme="light")
    w.confirm_run = lambda path: True  # type: ignore[method-assign]  # the README's file: ours to run
    w.resize(1600, 1000)
    w.show()
    w.open_target(readme_file("train.py") + "::train_step")
    t0 = time.time()
    while "compiled" not in w.ir_side.links and time.time() - t0 < 180:
        settle(app, 0.05)
    assert w.doc.graph is not None
    path, node = next((p, n) for p, n in equations(w.doc.graph) if n.label == "dot_general" and n.name_stack.startswith("transpose("))
    w.selection.show_nodes([path])
    w.source_frames.open_frame(len(node.frames) - 1)
    w.ir.setCurrentIndex(1)  # StableHLO
    settle(app, 2.0)
    w.grab().save(os.path.join(HERE, LINKS))
    print("wrote", LINKS, "-", path, node.name_stack)
    w.close()


def gpt_window(app: QApplication) -> Any:
    """A window on the benchmark's 10k-equation GPT step (plain functions, a loop of blocks), its graph on screen."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import workloads

    from jaxscope.qt.app.window import MainWindow

    w = workloads.make("gpt", "10k")
    path = w.write(tempfile.mkdtemp())
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(f"\nJAXSCOPE_ARGS = {{{w.function!r}: {w.args!r}}}\n")
    win = MainWindow(theme="light")
    win.confirm_run = lambda path: True  # type: ignore[method-assign]  # our own benchmark file
    win.resize(1600, 1000)
    win.show()
    win.open_target(f"{path}::{w.function}")
    t0 = time.time()
    while win.doc.layout is None and time.time() - t0 < 180:
        settle(app, 0.05)
    return win


STRUCTURE = "window-model-structure.png"  # the benchmark's 10k-equation GPT step (plain functions, a loop of blocks)


def structure_shot(app: QApplication) -> None:
    """Its forward pass opened: 38 calls of `block`, each a group ("block #3 ×36"), one picked (the
    Node pane names its identical layers), the backward pass tinted below, the overview map."""
    win = gpt_window(app)
    t0 = time.time()
    assert win.doc.shown is not None
    forward = next(n.id for n in win.doc.shown.top.nodes if n.label.endswith("(forward)"))
    layout = win.doc.layout
    win.toggle_cluster(forward)
    while win.doc.layout is layout and time.time() - t0 < 180:
        settle(app, 0.05)
    body = win.doc.shown.bodies[next(n for n in win.doc.shown.top.nodes if n.id == forward).subgraphs[0].body]
    block = next(f"{forward}:0/{n.id}" for n in body.nodes if n.label.startswith("block #3"))
    win.docks["node"].raise_()
    win.resizeDocks([win.docks["node"]], [300], Qt.Orientation.Vertical)
    settle(app, 0.5)
    win.graph.select_paths([block])
    settle(app, 2.0)
    win.grab().save(os.path.join(HERE, STRUCTURE))
    print("wrote", STRUCTURE, "-", win.phase_label.text())
    win.close()


COST = "window-cost.png"  # the same GPT step coloured by FLOPs, its memory over the program


def cost_shot(app: QApplication) -> None:
    """The 10k GPT step by module, coloured by FLOPs; the Cost pane: totals, the memory in use over
    the program (activations kept through the forward pass, freed in the backward), the costliest."""
    win = gpt_window(app)
    t0 = time.time()
    win.docks["cost"].raise_()
    win.resizeDocks([win.docks["cost"]], [340], Qt.Orientation.Vertical)
    win.cost_panel.measure.setCurrentIndex(win.cost_panel.measure.findData("flops"))
    while win.structure.cost.figures is None and time.time() - t0 < 180:
        settle(app, 0.05)
    settle(app, 1.0)
    win.graph.fit_all()
    settle(app, 1.0)
    win.grab().save(os.path.join(HERE, COST))
    print("wrote", COST, "-", win.phase_label.text())
    win.close()


COMPARE = "window-compare.png"  # View -> Compare with: a flax MLP step with and without LayerNorm, side by side


def compare_shot(app: QApplication) -> None:
    """The step without LayerNorm (A) against the step with it (B): the LayerNorm group added, the
    equations it rewired changed; a changed equation picked on one side, its match on the other."""
    from jaxscope.qt.app.window import MainWindow

    path = os.path.join(ROOT, "tests", "worker", "corpus", "mlp_norm.py")
    win = MainWindow(theme="light")
    win.confirm_run = lambda path: True  # type: ignore[method-assign]  # our own test file
    win.show()
    win.open_target(f"{path}::step", inputs=f"{path}::make_plain")
    t0 = time.time()
    while win.doc.layout is None and time.time() - t0 < 120:
        settle(app, 0.05)
    win.compare.with_target(f"{path}::step", None, f"{path}::make_norm", after=True)
    while not win.compare.windows and time.time() - t0 < 240:
        settle(app, 0.05)
    compared = win.compare.windows[-1]
    compared.resize(1600, 950)
    settle(app, 3.0)
    changed = compared.diff.changed[0]
    compared.b.select([changed.b])
    settle(app, 1.0)
    compared.grab().save(os.path.join(HERE, COMPARE))
    print("wrote", COMPARE, "-", compared.diff.summary())
    compared.close()
    win.close()


SHARDING = "window-sharding.png"  # the sharding tutorial on 4 simulated CPU devices, partitioning shown


def sharding_shot(app: QApplication) -> None:
    """tensor_parallel compiled for a 2x2 mesh: each weight's split, each value's part per device, the
    all-reduce XLA inserted after the second matmul (View -> Show Partitioning)."""
    from jaxscope.qt.app.window import MainWindow

    win = MainWindow(theme="light")
    win.confirm_run = lambda path: True  # type: ignore[method-assign]  # our own tutorial
    win.resize(1600, 1000)
    win.show()
    win.controller.set_device_setup(4)
    win.open_target(os.path.join(ROOT, "examples", "sharding.py") + "::tensor_parallel")
    t0 = time.time()
    while "compiled" not in win.ir_side.links and time.time() - t0 < 180:
        settle(app, 0.05)
    layout = win.doc.layout
    assert win.structure.partition_action is not None
    win.structure.partition_action.setChecked(True)
    while win.doc.layout is layout and time.time() - t0 < 180:
        settle(app, 0.05)
    win.ir.setCurrentIndex(2)  # the compiled HLO
    settle(app, 2.0)
    win.grab().save(os.path.join(HERE, SHARDING))
    print("wrote", SHARDING, "-", win.phase_label.text())
    win.close()


def readme_file(name: str) -> str:
    """The README's code block that starts with `# NAME`, written to a temp dir: the screenshot shows
    exactly the code the README tells users to write."""
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    start = text.index(f"```python\n# {name}\n") + len("```python\n")
    path = os.path.join(tempfile.mkdtemp(), name)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text[start : text.index("```", start)])
    return path


def settle(app: QApplication, seconds: float) -> None:
    end = time.time() + seconds
    while time.time() < end:
        app.processEvents()
        time.sleep(0.02)


RUN_CAUSES = "window-run-causes.png"  # 1280x800: an Adam step's difference named as noise, with its cancellation


def run_causes_shot(app: QApplication) -> None:
    """The Run pane after a run whose only difference is explained: verdict, cause and table in view."""
    from jaxscope.qt.app.window import MainWindow

    w = MainWindow(theme="light")
    w.confirm_run = lambda path: True  # type: ignore[method-assign]  # our own test file
    w.set_theme("light")
    w.resize(1280, 800)
    w.show()
    w.open_target(os.path.join(ROOT, "tests/worker/corpus/run_cases.py::adam_zero_bias"), None)
    t0 = time.time()
    while w.doc.layout is None and time.time() - t0 < 120:
        settle(app, 0.05)
    w.docks["run"].raise_()
    w.jobs.run_function()
    while w.run_panel.verdict_state == "" and time.time() - t0 < 240:
        settle(app, 0.05)
    settle(app, 2.0)
    w.grab().save(os.path.join(HERE, RUN_CAUSES))
    print("wrote", RUN_CAUSES, "-", w.run_panel.verdict.text())
    w.close()


def main() -> int:
    app = QApplication([])
    QCoreApplication.setOrganizationName("jaxscope-screenshots")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tempfile.mkdtemp())
    from jaxscope.qt.app.window import MainWindow

    only = set(sys.argv[1:])
    if not only or BIG_GRAPH in only:
        big_graph_shot(app)
    if not only or LINKS in only:
        links_shot(app)
    if not only or STRUCTURE in only:
        structure_shot(app)
    if not only or COMPARE in only:
        compare_shot(app)
    if not only or COST in only:
        cost_shot(app)
    if not only or SHARDING in only:
        sharding_shot(app)
    if not only or RUN_CAUSES in only:
        run_causes_shot(app)
    for name, target, theme, args, query, line, dock in SHOTS:
        if only and name not in only:
            continue
        w = MainWindow(theme=theme)
        w.confirm_run = lambda path: True  # type: ignore[method-assign]  # the README's file: ours to run
        w.set_theme(theme)  # the application palette, as the app applies it at start
        w.resize(1600, 1000)
        w.show()
        if target.startswith("README.md#"):
            file, _, function = target.partition("#")[2].partition("::")
            target = f"{readme_file(file)}::{function}"
        w.open_target(os.path.join(ROOT, target), args)
        t0 = time.time()
        while w.doc.layout is None and time.time() - t0 < 120:
            settle(app, 0.05)
        settle(app, 1.0)
        w.docks[dock].raise_()
        if query:
            w.selection.show_query(query)
        if line:
            w.source.line_clicked.emit(line)
        if dock == "run":  # per-equation jit vs eager, then the values of the node that differs most
            w.run_panel.per_equation.setChecked(True)
            w.jobs.run_function()
            while w.run_panel.verdict_state == "" and time.time() - t0 < 240:
                settle(app, 0.05)
            if w.run_panel.divergence.rowCount():
                w.run_panel.divergence.cellClicked.emit(0, 0)
            w.resizeDocks([w.docks["run"]], [520], Qt.Orientation.Vertical)
        settle(app, 2.0)
        w.grab().save(os.path.join(HERE, name))
        print("wrote", name, "-", w.phase_label.text())
        w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
