"""The baseline: the straightforward script most people would write to draw a jaxpr.

    python benchmarks/naive.py FILE FUNCTION ARGS_EXPR OUT.svg

Walk the jaxpr (every sub-jaxpr too, each as a DOT cluster), emit every equation as a DOT node
labelled with its primitive and output shape, an edge from each operand's producer, and run
Graphviz dot to SVG with pygraphviz: ``AGraph(string=dot).draw(out, prog="dot")``. No collapsing,
no pruning, no process boundary, dot's default settings.

Prints JSON lines: ``{"ready": ...}`` once JAX is imported (the harness starts its timeout
there), then ``{"make_jaxpr_s", "dot_text_s", "graphviz_s", "total_s", "nodes", "edges"}``.
ARGS_EXPR is a Python expression of `S(shape, dtype)` (jax.ShapeDtypeStruct) values.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time

import jax
import jax.numpy as jnp
import pygraphviz


def sub_jaxprs(eqn):
    for value in eqn.params.values():
        for v in value if isinstance(value, (tuple, list)) else (value,):
            j = getattr(v, "jaxpr", v)
            if hasattr(j, "eqns") and hasattr(j, "invars"):
                yield j


def to_dot(closed) -> tuple[str, int, int]:
    lines = ["digraph jaxpr {", "  node [shape=box, fontname=monospace, fontsize=10];"]
    counter = [0, 0]  # nodes, edges

    def new_node(label: str, indent: str) -> str:
        name = f"n{counter[0]}"
        counter[0] += 1
        lines.append(f'{indent}{name} [label="{label}"];')
        return name

    def edge(a: str, b: str, indent: str) -> None:
        counter[1] += 1
        lines.append(f"{indent}{a} -> {b};")

    def walk(jaxpr, env: dict, indent: str, owner: str | None) -> None:
        for v in list(jaxpr.constvars) + list(jaxpr.invars):
            env[v] = new_node(f"{v}: {v.aval.str_short()}", indent)
            if owner is not None:
                edge(owner, env[v], indent)
        for eqn in jaxpr.eqns:
            shapes = ", ".join(o.aval.str_short() for o in eqn.outvars)
            node = new_node(f"{eqn.primitive.name}\\n{shapes}", indent)
            for x in eqn.invars:
                if type(x).__name__ != "Literal" and x in env:
                    edge(env[x], node, indent)
            for o in eqn.outvars:
                env[o] = node
            for k, sub in enumerate(sub_jaxprs(eqn)):
                lines.append(f"{indent}subgraph cluster_{node}_{k} {{")
                lines.append(f'{indent}  label="{eqn.primitive.name}";')
                walk(sub, {}, indent + "  ", node)
                lines.append(f"{indent}}}")

    walk(closed.jaxpr, {}, "  ", None)
    lines.append("}")
    return "\n".join(lines), counter[0], counter[1]


def main() -> int:
    path, fn_name, args_expr, out = sys.argv[1:5]
    spec = importlib.util.spec_from_file_location("bench_user", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    S = jax.ShapeDtypeStruct  # noqa: N806, F841 (used by args_expr)
    args = eval(args_expr)
    jax.make_jaxpr(lambda x: jnp.sin(x) + 1)(1.0)
    print(json.dumps({"ready": True}), flush=True)
    t0 = time.perf_counter()
    closed = jax.make_jaxpr(getattr(module, fn_name))(*args)
    t1 = time.perf_counter()
    dot, nodes, edges = to_dot(closed)
    t2 = time.perf_counter()
    pygraphviz.AGraph(string=dot).draw(out, prog="dot")
    t3 = time.perf_counter()
    result = {"make_jaxpr_s": t1 - t0, "dot_text_s": t2 - t1, "graphviz_s": t3 - t2, "total_s": t3 - t0, "nodes": nodes, "edges": edges}
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
