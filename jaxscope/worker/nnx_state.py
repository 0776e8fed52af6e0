"""flax nnx's in-place updates as outputs, as `nnx.jit` traces them.

An nnx train step updates its inputs in place (`optimizer.update(model, grads)`, BatchNorm
statistics, RNG counts): Python side effects on the Module objects, not values the function
returns. Traced as it is written, the jaxpr's outputs are the loss alone, and XLA removes the
backward pass and the update as dead code (a ViT step lowered to 33 `dot_general`s where
`train_step.lower(...)` of the same `@nnx.jit` step has 99). `nnx.jit` returns the state of every
graph node of its arguments after the call beside the function's own outputs; so does the call
jaxscope traces (`makers.Made.wrap`), each argument that holds graph nodes an output named after
it. flax is imported only when the user's inputs came with it.
"""

from __future__ import annotations

import sys
from typing import Any

import jax


def state_output_name(path: str) -> str:
    """A result path of the call (`result[0]…`: the function's own; `result[1]['model']…`: an
    argument's state after it) as the user names it: `result…`, `model… (new)`."""
    if path.startswith("result[0]"):
        return "result" + path[len("result[0]") :]
    head, quote, rest = path.partition("['")
    name, _, tail = rest.partition("']")
    return f"{name}{tail} (new)" if head == "result[1]" and quote else path


def is_graph_node(x: Any) -> bool:
    """An nnx Module, Optimizer, Variable, Rngs... (False without flax.nnx loaded: none can exist)."""
    nnx = sys.modules.get("flax.nnx")
    if nnx is None:
        return False
    try:
        return bool(nnx.graph.is_graph_node(x)) or isinstance(x, nnx.Variable)
    except AttributeError:  # a flax without these names
        return False


def holds_graph_nodes(value: Any) -> bool:
    """Whether any nnx graph node is in the pytree `value`."""
    if "flax.nnx" not in sys.modules:
        return False
    return any(is_graph_node(leaf) for leaf in jax.tree_util.tree_leaves(value, is_leaf=is_graph_node))
