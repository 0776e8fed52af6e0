"""`make bench`: jaxscope's stages against bare `jax.make_jaxpr`, on unrolled MLP train steps.

Prints one table and writes benchmarks/results.json. Not a test: numbers vary with the machine.
Stages: worker trace + graph build (in the worker process, reported by it), transfer + decode,
layout (in the layout process), SVG export. Bare make_jaxpr runs in a fresh subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

from jaxscope.core.client import WorkerClient
from jaxscope.core.layout import auto_expanded
from jaxscope.core.layout_client import LayoutClient
from jaxscope.core.model import FunctionRef, TraceRequest
from jaxscope.core.svg import render_svg

WORKLOAD = textwrap.dedent('''
    import jax, jax.numpy as jnp

    def train_step(params, x, y, layers={layers}):
        def loss(params):
            h = x
            for i in range(layers):
                h = jax.nn.relu(h @ params["w"][i] + params["b"][i])
            return jnp.mean((h - y) ** 2)
        grads = jax.grad(loss)(params)
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)
''')


def args_for(layers: int) -> str:
    ws = ", ".join(["f32[16,16]"] * layers)
    bs = ", ".join(["f32[16]"] * layers)
    return f"{{'w': [{ws}], 'b': [{bs}]}}, f32[8,16], f32[8,16], layers={layers}"


def bare_make_jaxpr(path: str, layers: int) -> tuple[float, int]:
    code = textwrap.dedent(f'''
        import importlib.util, time, jax, jax.numpy as jnp
        spec = importlib.util.spec_from_file_location("w", {path!r}); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
        S = lambda *s: jax.ShapeDtypeStruct(s, jnp.float32)
        p = {{"w": [S(16, 16)] * {layers}, "b": [S(16)] * {layers}}}
        jax.make_jaxpr(lambda a: a + 1)(1.0)
        t = time.perf_counter(); cj = jax.make_jaxpr(m.train_step, static_argnums=3)(p, S(8, 16), S(8, 16), {layers}); dt = time.perf_counter() - t
        print(dt, len(cj.jaxpr.eqns))
    ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1])


def main() -> int:
    rows = []
    with tempfile.TemporaryDirectory() as tmp, WorkerClient(spare=False) as worker, LayoutClient() as layouts:
        worker.worker_info()  # wait for the worker: jax import is a one-off cost, not measured here
        for layers in (10, 100, 400):
            path = os.path.join(tmp, f"mlp{layers}.py")
            with open(path, "w") as fh:
                fh.write(WORKLOAD.replace("{layers}", str(layers)))
            bare, _ = bare_make_jaxpr(path, layers)
            t0 = time.perf_counter()
            result = worker.trace(TraceRequest(FunctionRef("train_step", path=path), args_for(layers), jaxpr_text=False, record_flow=False)).result()
            t1 = time.perf_counter()
            graph = result.graph
            layout = layouts.layout(graph, auto_expanded(graph))
            t2 = time.perf_counter()
            svg = render_svg(graph, layout)
            t3 = time.perf_counter()
            worker_side = result.timings.get("trace", 0) + result.timings.get("graph", 0)
            rows.append({
                "workload": f"mlp x{layers}", "eqns": graph.top.total_eqns, "make_jaxpr_s": bare,
                "worker_trace_graph_s": worker_side, "request_total_s": t1 - t0, "layout_s": t2 - t1,
                "engine": layout.engine, "svg_s": t3 - t2, "svg_mb": len(svg) / 1e6,
                "to_graph_s": t2 - t0, "ratio": (t2 - t0) / bare if bare else 0.0,
            })  # fmt: skip
    head = f"{'workload':<11} {'eqns':>6} {'make_jaxpr':>10} {'trace+graph':>11} {'request':>8} {'layout':>7} {'engine':>8} {'svg':>6} {'open->layout':>12} {'ratio':>6}"
    print(head)
    for r in rows:
        print(f"{r['workload']:<11} {r['eqns']:>6} {r['make_jaxpr_s']:>10.3f} {r['worker_trace_graph_s']:>11.3f} {r['request_total_s']:>8.3f} "
              f"{r['layout_s']:>7.3f} {r['engine']:>8} {r['svg_s']:>6.3f} {r['to_graph_s']:>12.3f} {r['ratio']:>6.1f}x")  # fmt: skip
    with open(os.path.join(os.path.dirname(__file__), "results.json"), "w") as fh:
        json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
