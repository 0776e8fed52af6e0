"""The Python API: `jaxscope.export` / `graph` / `show` on live functions and on file references."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxscope
from jaxscope.exporter import highlight_paths, read_json
from jaxscope.schema.graph import resolve
from jaxscope.targets import argspec
from tests.conftest import MODELS, load_models

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SVG_NS = "{http://www.w3.org/2000/svg}"
SCALE = jnp.arange(3.0)  # a captured global: drawn as a constant named SCALE


def mlp(x, w, act="tanh"):
    h = x @ w + SCALE  # line of the dot_general and add
    return jnp.tanh(h) if act == "tanh" else jax.nn.relu(h)


LINE_H = mlp.__code__.co_firstlineno + 1


def _nodes(svg_text: str) -> dict[str, ET.Element]:
    root = ET.fromstring(svg_text)
    assert root.tag == f"{SVG_NS}svg"
    return {g.get("data-path"): g for g in root.iter(f"{SVG_NS}g") if "node" in (g.get("class") or "").split()}


def _highlighted(svg_text: str) -> set[str]:
    return {p for p, g in _nodes(svg_text).items() if g.find(f"{SVG_NS}rect[@class='highlight']") is not None}


def test_export_live_function_in_every_format(tmp_path):
    written = {}
    for name in ("g.svg", "g.png", "g.json", "g.jaxpr", "g.txt", "g.mlir"):
        written[name] = jaxscope.export(mlp, "f32[8,4]", "f32[4,3]", path=tmp_path / name)
    assert written == {"g.svg": "svg", "g.png": "png", "g.json": "json", "g.jaxpr": "jaxpr", "g.txt": "jaxpr", "g.mlir": "mlir"}
    svg = (tmp_path / "g.svg").read_text()
    labels = " ".join(ET.fromstring(svg).itertext())
    for word in ("dot_general", "tanh", "SCALE", "f32[8,3]", "x", "w"):
        assert word in labels
    assert (tmp_path / "g.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    graph, layout = read_json((tmp_path / "g.json").read_text())
    assert graph.function == "mlp" and layout is not None
    assert json.loads((tmp_path / "g.json").read_text())["schema_version"] >= 1
    jaxpr = (tmp_path / "g.jaxpr").read_text()
    assert "dot_general" in jaxpr and f"test_api.py:{LINE_H}" in jaxpr
    assert (tmp_path / "g.txt").read_text() == jaxpr
    mlir = (tmp_path / "g.mlir").read_text()
    assert "stablehlo.dot_general" in mlir and "func.func public @main" in mlir and "tensor<8x4xf32>" in mlir


def test_live_export_is_deterministic_and_arg_forms_agree(tmp_path):
    forms = {
        "spec": ("f32[8,4]", "f32[4,3]"),
        "sds": (jax.ShapeDtypeStruct((8, 4), jnp.float32), jax.ShapeDtypeStruct((4, 3), jnp.float32)),
        "concrete": (np.zeros((8, 4), np.float32), jnp.ones((4, 3))),
    }
    outputs = []
    for name, args in forms.items():
        for i in range(2 if name == "spec" else 1):
            path = tmp_path / f"{name}{i}.svg"
            jaxscope.export(mlp, *args, path=path, theme="dark", legend=True)
            outputs.append(path.read_bytes())
    assert all(out == outputs[0] for out in outputs)


def test_static_rules_follow_args_spec():
    # a literal is static: the Python `if` picks relu, whose `max` sits in a collapsed custom_jvp
    relu = jaxscope.graph(mlp, "f32[2,4]", "f32[4,3]", act="relu", collapse=9)
    prims = {n.label for b in relu.graph.bodies.values() for n in b.nodes if n.kind == "eqn"}
    assert "max" in prims and "tanh" not in prims

    def scaled(x, n):
        return x * n

    # a Python int is static (baked in as a literal); a spec string or an array is traced
    as_literal = jaxscope.graph(scaled, "f32[3]", 2)
    as_traced = jaxscope.graph(scaled, "f32[3]", "i32[]")
    assert [n.label for n in as_literal.graph.top.nodes if n.kind == "input"] == ["x"]
    assert [n.label for n in as_traced.graph.top.nodes if n.kind == "input"] == ["x", "n"]
    assert jaxscope.graph(scaled, jnp.ones(3), jnp.int32(2)).svg == as_traced.svg
    with pytest.raises(TypeError, match="not both"):
        jaxscope.graph(scaled, "f32[3]", args_spec="f32[3], 2")
    via_spec = jaxscope.graph(scaled, args_spec="f32[3], 2")
    assert via_spec.svg == as_literal.svg


def test_user_errors_propagate_from_live_functions():
    def bad(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(jax.errors.TracerBoolConversionError):
        jaxscope.graph(bad, "f32[3]")


def test_graph_image_displays_as_svg(tmp_path):
    image = jaxscope.graph(mlp, "f32[8,4]", "f32[4,3]", theme="transparent")
    svg = image._repr_svg_()
    assert svg.startswith("<svg ") and svg == image.svg
    bundle = image._repr_mimebundle_()
    assert bundle["image/svg+xml"] == svg and "mlp" in bundle["text/plain"]
    ET.fromstring(svg)
    assert image.save(tmp_path / "a.svg") == "svg"
    assert (tmp_path / "a.svg").read_text() == svg
    jaxscope.export(mlp, "f32[8,4]", "f32[4,3]", theme="transparent", path=tmp_path / "b.svg")
    assert (tmp_path / "b.svg").read_text() == svg
    assert image.save(tmp_path / "a.json") == "json"


def test_highlight_marks_the_matching_nodes(tmp_path):
    image = jaxscope.graph(mlp, "f32[8,4]", "f32[4,3]", highlight="tanh")
    marked = _highlighted(image.svg)
    assert marked and {resolve(image.graph, p)[1].label for p in marked} == {"tanh"}
    by_line = jaxscope.graph(mlp, "f32[8,4]", "f32[4,3]", highlight=str(LINE_H))
    on_line = {f"{n.id}" for n in by_line.graph.top.nodes if n.source is not None and n.source.line == LINE_H}
    assert _highlighted(by_line.svg) == on_line
    assert {resolve(by_line.graph, p)[1].label for p in on_line} >= {"dot_general", "add"}
    assert _highlighted(jaxscope.graph(mlp, "f32[8,4]", "f32[4,3]").svg) == set()
    # inside a collapsed sub-graph: its drawn owner is marked
    relu = jaxscope.graph(mlp, "f32[2,4]", "f32[4,3]", act="relu", collapse=0, highlight="max")
    assert {resolve(relu.graph, p)[1].label for p in _highlighted(relu.svg)} == {"custom_jvp_call"}
    assert highlight_paths(relu.graph, relu.layout, "max") == relu.highlight
    with pytest.raises(ValueError, match="matches no node"):
        jaxscope.graph(mlp, "f32[8,4]", "f32[4,3]", highlight="no_such_primitive")
    path = tmp_path / "h.svg"
    jaxscope.export(mlp, "f32[8,4]", "f32[4,3]", path=path, highlight="tanh")
    assert path.read_text() == image.svg


def test_export_file_references(tmp_path):
    predict = f"{EXAMPLES}/basics.py::predict"
    cli = subprocess.run(
        [sys.executable, "-m", "jaxscope", "export", predict, "-o", str(tmp_path / "cli.svg")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert cli.returncode == 0, cli.stderr
    image = jaxscope.graph(predict)  # the file's JAXSCOPE_ARGS, traced in a worker
    assert image.save(tmp_path / "api.svg") == "svg"
    assert (tmp_path / "api.svg").read_bytes() == (tmp_path / "cli.svg").read_bytes()  # the API and the CLI agree
    assert {resolve(image.graph, p)[1].label for p in highlight_paths(image.graph, image.layout, "tanh")} == {"tanh"}
    jaxpr = tmp_path / "prng.jaxpr"
    assert jaxscope.export(f"{EXAMPLES}/prng.py", path=jaxpr) == "jaxpr"  # its JAXSCOPE_MAIN function
    assert "random_split" in jaxpr.read_text() and "prng.py:" in jaxpr.read_text()


def test_file_reference_errors(tmp_path):
    with pytest.raises(ValueError, match="live function"):
        jaxscope.export(f"{EXAMPLES}/basics.py::predict", path=tmp_path / "x.mlir")
    with pytest.raises(ValueError, match="format"):
        jaxscope.export(f"{EXAMPLES}/basics.py::predict", path=tmp_path / "x.bmp")
    with pytest.raises(jaxscope.JaxscopeError) as err:
        jaxscope.export(f"{EXAMPLES}/control_flow.py::broken_traced_if", "f32[3]", path=tmp_path / "x.svg")
    assert err.value.code == 3 and "TracerBoolConversionError" in str(err.value)
    assert not (tmp_path / "x.svg").exists()


def test_show_builds_the_app_command():
    from jaxscope.api import show_argv

    argv = show_argv(mlp, np.zeros((8, 4), np.float32), jax.ShapeDtypeStruct((4, 3), jnp.bfloat16), act="relu")
    assert argv[:4] == [sys.executable, "-P", "-m", "jaxscope"]  # -P: no jaxscope.py of the notebook's folder runs
    argv = argv[1:]
    assert argv[3] == f"{os.path.abspath(__file__)}::mlp"
    assert argv[4] == "--args"
    call = argspec.parse_call(argv[5])
    assert call.args == (argspec.ArraySpec("float32", (8, 4)), argspec.ArraySpec("bfloat16", (4, 3)))
    assert call.kwargs == (("act", argspec.StaticValue("relu")),)
    assert show_argv(jax.jit(mlp), "f32[2,4]", {"w": jax.random.key(0)})[4:] == [
        f"{os.path.abspath(__file__)}::mlp",
        "--args",
        "f32[2,4], {'w': key[]}",
    ]
    assert show_argv("examples/basics.py::predict")[4:] == ["examples/basics.py::predict"]
    with pytest.raises(ValueError, match="module-level"):
        show_argv(lambda x: x, "f32[3]")
    namespace: dict[str, object] = {}
    exec("def cell(x):\n    return x\n", namespace)  # like a notebook cell: no file behind it
    with pytest.raises(ValueError, match="not defined in a file"):
        show_argv(namespace["cell"], "f32[3]")

    def local(x):
        return x

    with pytest.raises(ValueError, match="module-level"):
        show_argv(local)
    with pytest.raises(jaxscope.JaxscopeError, match="no --args form and cannot be handed"):
        show_argv(mlp, lambda: 0)  # not picklable


def test_pytree_inputs_live_and_through_a_worker(tmp_path):
    models = load_models()
    inputs = models.make_train_inputs()  # flax params, an optax chain's state (EmptyState, ScaleByAdamState), a batch
    live = jaxscope.graph(models.train_step, *inputs, flat=True)
    assert "dot_general" in live.svg and "opt_state[1][0].count" in live.svg
    fmt = jaxscope.export(f"{MODELS}::train_step", *inputs, path=tmp_path / "step.json")
    assert fmt == "json" and read_json((tmp_path / "step.json").read_text())[0].node_total == live.graph.node_total
    eqx_graph = jaxscope.graph(models.eqx_predict, *models.make_eqx_inputs())  # function leaves: static
    assert "xs" in eqx_graph.svg
    assert jaxscope.graph(f"{MODELS}::eqx_predict", inputs=f"{MODELS}::make_eqx_inputs").graph.node_total == eqx_graph.graph.node_total
    with pytest.raises(TypeError, match="one way"):
        jaxscope.graph(f"{MODELS}::eqx_predict", "f32[3]", inputs=f"{MODELS}::make_eqx_inputs")


def test_show_hands_pytree_values_to_the_app_through_a_maker():
    from jaxscope.api import show_argv

    models = load_models()
    argv = show_argv(f"{MODELS}::train_step", *models.make_train_inputs())[1:]  # without -P
    assert argv[4] == "--inputs" and argv[5].endswith("inputs.py::make_inputs")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "jaxscope", "jaxpr", argv[3], "--inputs", argv[5]], capture_output=True, text=True, timeout=180, cwd=ROOT
        )
    finally:
        import shutil

        shutil.rmtree(os.path.dirname(argv[5].rsplit("::", 1)[0]))  # show() leaves it for the app
    assert done.returncode == 0 and "dot_general" in done.stdout, done.stderr


def test_importing_jaxscope_stays_cheap():
    code = (
        "import sys, jaxscope, jaxscope.api; jaxscope.export; jaxscope.graph; jaxscope.show;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib', 'PySide6', 'networkx', 'pygraphviz'));"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_an_html_export_and_an_interactive_notebook_graph(tmp_path):
    """Issue 51: `export(path="x.html")` writes the page with each equation's jaxpr line and source
    lines; `graph(..., interactive=True)` shows that page in a notebook, in a sandboxed frame."""
    import html
    import json
    import re

    path = tmp_path / "g.html"
    assert jaxscope.export(f"{MODELS}::deep_step", path=path) == "html"
    data = json.loads(re.search(r'id="jaxscope-data">(.*?)</script>', path.read_text(encoding="utf-8"), re.S).group(1))
    assert data["stages"]["jaxpr"]["lines"] and any("dot_general" in t for t in data["stages"]["jaxpr"]["text"].values())
    assert any(f.endswith("models.py") for f in data["sources"])
    image = jaxscope.graph(f"{MODELS}::deep_step", interactive=True)
    shown = image._repr_mimebundle_()["text/html"]
    assert shown.startswith("<iframe srcdoc=") and 'sandbox="allow-scripts"' in shown
    assert html.unescape(shown).count('id="jaxscope-data"') == 1 and "image/svg+xml" in image._repr_mimebundle_()


def test_a_graphs_text_form_carries_no_control_character():
    """Issue 59.6: `GraphImage.__repr__` (a notebook's text/plain) carried a function name's NUL, RLO and ESC."""
    import jax.numpy as jnp

    import jaxscope

    def f(x):
        return jnp.sin(x)

    f.__name__ = f.__qualname__ = "f\x00\u202e\x1b[31m"
    image = jaxscope.graph(f, "f32[3]")
    assert "\x1b" in image.graph.function  # the name as the function has it
    shown = repr(image)
    assert not any(c in shown for c in "\x00\u202e\x1b") and shown.startswith("<jaxscope graph of f")
