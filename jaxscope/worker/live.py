"""Trace a live function object in the calling process, for the Python API (`jaxscope.api`).

The caller of ``jaxscope.export(fn, ...)`` already runs that code with jax imported, so loading it
again in a worker would only lose its state. The rules for arguments are those of a maker
(worker.makers): array leaves (a concrete array, a ``jax.ShapeDtypeStruct``, a spec string such as
``"f32[8,4]"``) are traced, every other leaf (``3``, ``"relu"``, an activation function) is static,
anywhere in a pytree; ``static_argnums``/``static_argnames`` make whole arguments static.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import jax

from jaxscope.schema.graph import Graph
from jaxscope.targets import argspec
from jaxscope.worker.makers import split
from jaxscope.worker.trace import graph_of, jaxpr_text, to_abstract, unwrap


@dataclass
class LiveTrace:
    """A traced live function: the Graph, plus what is needed for the jaxpr text and StableHLO."""

    graph: Graph
    traced: Any  # jax.stages.Traced

    def jaxpr_text(self) -> str:
        """The jaxpr with source lines, as ``jaxscope jaxpr`` prints it."""
        return jaxpr_text(self.traced.jaxpr).rstrip("\n") + "\n"

    def mlir_text(self) -> str:
        """StableHLO text (``jit(f).lower(...).as_text()``): opens in Model Explorer and Netron."""
        text = self.traced.lower().as_text()
        return text.rstrip("\n") + "\n"


def to_trace_value(value: Any) -> Any:
    """Spec strings (also inside dicts, lists and tuples) become ShapeDtypeStructs; the rest stays."""
    if isinstance(value, str):
        try:
            spec = argspec.parse_spec(value)
        except argspec.SpecError:
            return value  # a plain static string such as "relu"
        return to_abstract(spec) if argspec.contains_array(spec) else value
    if type(value) is dict:
        return {k: to_trace_value(v) for k, v in value.items()}
    if type(value) in (list, tuple):
        return type(value)(to_trace_value(v) for v in value)
    return value


def trace_live(
    fn: Any,
    args: Iterable[Any],
    kwargs: Mapping[str, Any],
    static_argnums: Iterable[int] = (),
    static_argnames: Iterable[str] = (),
) -> LiveTrace:
    """``jax.jit(fn).trace(...)`` with jaxscope's static rules; exceptions propagate unchanged."""
    target = unwrap(fn)
    values = [to_trace_value(a) for a in args]
    named = {k: to_trace_value(v) for k, v in kwargs.items()}
    made = split(function_name(target), values, named, target, static_argnums=static_argnums, static_argnames=static_argnames)
    traced = jax.jit(made.wrap(target)).trace(*made.args, **made.kwargs)
    graph, _names, _paths = graph_of(traced.jaxpr, function_name(target), fn)
    return LiveTrace(graph=graph, traced=traced)


def function_name(fn: Any) -> str:
    """The name the graph is titled with: the qualified name, or the name of a partial's function."""
    inner = inspect.unwrap(fn) if callable(fn) else fn
    inner = getattr(inner, "func", inner)  # functools.partial
    return str(getattr(inner, "__qualname__", None) or getattr(inner, "__name__", None) or type(fn).__name__)
