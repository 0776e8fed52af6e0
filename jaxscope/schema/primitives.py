"""What jaxscope knows of each primitive, in one place: its family (what it is coloured by), how its
cost is counted, the params written on its box, the integer params the analyses read, the title of
its sub-programs and its part in PRNG key tracking. Supporting a new primitive is one entry here.

The worker reads `Primitive.numbers` from the equation's own params (plain tuples and ints, no jax
types are imported here) and sends them structured as `Node.numbers`: the analyses never parse
the display texts of `Node.params` back (those are cut at 160 characters and made for people).
A name with no entry gets a family by its prefix (`random_*`, `reduce_*`, `scatter*`, ...) and no
cost, no numbers and a generic body title.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

# How one run of an equation is priced (`analysis.cost`): "free" moves data only; "elementwise"
# one FLOP per output element; "transcendental" one transcendental per output element; "reduction"
# one per element folded in; "window" one per element of each output's window but the first (a
# pooling's); "cumulative" n − 1 per output element along an axis of n (jax lowers it, on CPU and
# GPU, to a reduce_window over the whole axis); "cumulative_lse" that many steps of jax's logaddexp
# (8 element-wise ops and 2 transcendentals each); "scatter" one per update element; "dot" 2·M·N·K;
# "conv" 2 · the kernel taps on the input; "integer_pow" its multiplies; "convert" none for a
# change of weak type only, else element-wise.
CostRule = Literal[
    "free",
    "elementwise",
    "transcendental",
    "reduction",
    "window",
    "cumulative",
    "cumulative_lse",
    "scatter",
    "dot",
    "conv",
    "integer_pow",
    "convert",
]
# How an equation's operands reach its sub-programs' inputs (the layout's ports, the key tracker's
# plan, a loop body's names): "operands" in order (a call: jit, a checkpoint); "branches" after the
# branch index (cond); "while" a cond's consts, then a body's consts, then the carry; "scan" the
# consts, the carry, then a slice of each xs; "" unknown (the readers then map nothing).
Ports = Literal["", "operands", "branches", "while", "scan"]
# A PRNG key's way through an equation (`worker.keyreuse`): "consumes" uses the key up (its
# first operand); "passes" hands its operands on unchanged; "derives" makes a value of its first
# operand that is the same key for the same static params (`keys[0]` twice).
KeyRole = Literal["", "consumes", "passes", "derives"]
Numbers = dict[str, tuple[int, ...]]
NumbersReader = Callable[[Mapping[str, Any]], Numbers]
# The title of the sub-program at `path` (its param, e.g. "branches[1]"), `index` of `count`.
BodyTitle = Callable[[str, str, int, int, Mapping[str, Any]], str]


@dataclass(frozen=True, slots=True)
class Primitive:
    family: str = "other"
    cost: CostRule = "free"
    shown: tuple[str, ...] = ()  # params written under its name on its box, e.g. ("axes",)
    numbers: NumbersReader | None = None  # the integer params an analysis reads, sent as Node.numbers
    body: BodyTitle | None = None  # the title of a sub-program; None: "<primitive> <path>"
    key: KeyRole = ""
    # runs its body once per trip (a scan over layers): the body is grouped by the modules inside
    # it and costed by them, each row counted with the trips
    loop: bool = False
    ports: Ports = ""  # how its operands map to its sub-programs' inputs
    call: bool = False  # its one sub-program is run once, as a call: stepped into by the replay, its outputs its body's
    checkpoint: bool = False  # a `jax.checkpoint` region: its backward runs its forward again


def _ints(value: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple; ValueError for anything else (bools are no ints)."""
    items = value if isinstance(value, (tuple, list)) else (value,)
    if not all((isinstance(v, int) and not isinstance(v, bool)) or type(v).__name__.startswith("int") for v in items):
        raise ValueError(f"not integers: {value!r}")
    return tuple(int(v) for v in items)


def _named(*names: str) -> NumbersReader:
    """A reader of integer params kept under their own names (`y`, `length`, `cond_nconsts`)."""
    return lambda params: {name: _ints(params[name]) for name in names if params.get(name) is not None}


def _dot_numbers(params: Mapping[str, Any]) -> Numbers:
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return {
        "lhs_contracting": _ints(lhs_contracting),
        "rhs_contracting": _ints(rhs_contracting),
        "lhs_batch": _ints(lhs_batch),
        "rhs_batch": _ints(rhs_batch),
    }


def _conv_numbers(params: Mapping[str, Any]) -> Numbers:
    """A ConvDimensionNumbers (lhs_spec, rhs_spec, out_spec) is a named tuple: read by position."""
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    return {
        "lhs_spec": _ints(lhs_spec),
        "rhs_spec": _ints(rhs_spec),
        "out_spec": _ints(out_spec),
        "padding": tuple(x for pair in params["padding"] for x in _ints(pair)),  # (lo, hi) per spatial dimension, flat
        **_named("window_strides", "lhs_dilation", "rhs_dilation", "feature_group_count", "batch_group_count")(params),
    }


def _cond_title(prim: str, path: str, index: int, count: int, params: Mapping[str, Any]) -> str:
    return f"cond branch {index} ({'true' if index else 'false'})" if count == 2 else f"switch branch {index}"


def _while_title(prim: str, path: str, index: int, count: int, params: Mapping[str, Any]) -> str:
    return {"cond_jaxpr": "while cond", "body_jaxpr": "while body"}.get(path, f"while {path}")


def _scan_title(prim: str, path: str, index: int, count: int, params: Mapping[str, Any]) -> str:
    length = params.get("length")
    return f"scan body (length {length})" if isinstance(length, int) else "scan body"


def _jit_title(prim: str, path: str, index: int, count: int, params: Mapping[str, Any]) -> str:
    return f"jit({params.get('name', '')})"


def _own_name(prim: str, path: str, index: int, count: int, params: Mapping[str, Any]) -> str:
    return prim.removesuffix("_call") if prim in ("custom_jvp_call", "custom_vjp_call") else prim


def _checkpoint_title(prim: str, path: str, index: int, count: int, params: Mapping[str, Any]) -> str:
    return "checkpoint"


_TABLE: dict[str, Primitive] = {}


def _add(names: str, entry: Primitive) -> None:
    """Enter each of `names` (space-separated); a name entered twice is a mistake in this table."""
    for name in names.split():
        assert name not in _TABLE, f"{name} is in the primitive table twice"
        _TABLE[name] = entry


# Element-wise maths.
_add(
    "add add_any sub mul div rem max min neg abs sign floor ceil round select_n clamp and or xor not eq ne lt"
    " le gt ge is_finite nextafter square reciprocal shift_left shift_right_logical shift_right_arithmetic"
    " population_count clz conj real imag complex copysign logaddexp",
    Primitive("elementwise", "elementwise"),
)
_add(
    "exp exp2 log log1p expm1 tanh logistic sin cos tan asin acos atan atan2 sinh cosh asinh acosh atanh sqrt"
    " rsqrt cbrt pow erf erfc erf_inv lgamma digamma igamma igammac bessel_i0e bessel_i1e random_gamma_grad",
    Primitive("elementwise", "transcendental"),
)
_add("igamma_grad_a polygamma regularized_incomplete_beta zeta stop_gradient", Primitive("elementwise"))
_add("reduce_precision", Primitive("elementwise"))  # a rounding of the mantissa: XLA counts no FLOP here either
_add("integer_pow", Primitive("elementwise", "integer_pow", shown=("y",), numbers=_named("y")))
# Reductions.
_add("reduce_sum reduce_max reduce_min reduce_prod argmax argmin", Primitive("reduction", "reduction", shown=("axes",)))
_add("reduce_and reduce_or reduce_xor", Primitive("reduction", "reduction"))
_add("reduce_window_sum reduce_window_max reduce_window_min", Primitive("reduction", "window", numbers=_named("window_dimensions")))
_add("reduce reduce_window", Primitive("reduction"))  # their own reduction: a sub-program XLA prices, not priced here
_add("cumsum", Primitive("reduction", "cumulative", shown=("axis",), numbers=_named("axis")))
_add("cumprod cummax cummin", Primitive("reduction", "cumulative", numbers=_named("axis")))
_add("cumlogsumexp", Primitive("reduction", "cumulative_lse", numbers=_named("axis")))
# Linear algebra.
_add("dot_general", Primitive("linalg", "dot", numbers=_dot_numbers))
_add("conv_general_dilated", Primitive("linalg", "conv", numbers=_conv_numbers))
_add(
    "ragged_dot ragged_dot_general cholesky cholesky_update triangular_solve eig eigh eigh_jacobi svd qr lu"
    " lu_pivots_to_permutation householder_product geqrf geqp3 schur hessenberg tridiagonal tridiagonal_solve fft",
    Primitive("linalg"),
)
# Indexing.
_add("scatter-add scatter_add scatter-mul scatter_mul", Primitive("indexing", "scatter"))
_add(
    "gather scatter scatter-min scatter_min scatter-max scatter_max scatter-sub scatter_sub scatter_apply dynamic_slice"
    " dynamic_update_slice pad split select_and_scatter_add select_and_scatter select_and_gather_add sort top_k",
    Primitive("indexing"),
)
_add("slice", Primitive("indexing", key="derives"))
_add("concatenate", Primitive("indexing", shown=("dimension",)))
# Shape and dtype.
_add("reshape", Primitive("shape", shown=("new_sizes",), key="derives"))
_add("squeeze", Primitive("shape", shown=("dimensions",), key="derives"))
_add("expand_dims", Primitive("shape", shown=("dimensions",)))
_add("transpose", Primitive("shape", shown=("permutation",)))
_add("iota", Primitive("shape", shown=("shape",)))
_add("convert_element_type", Primitive("shape", "convert", shown=("new_dtype",)))
_add("broadcast_in_dim broadcast bitcast_convert_type rev", Primitive("shape"))
_add("copy copy_p device_put", Primitive("shape", key="passes"))
# Control flow.
_add("cond", Primitive("control", body=_cond_title, ports="branches"))
_add("while", Primitive("control", numbers=_named("cond_nconsts", "body_nconsts"), body=_while_title, loop=True, ports="while"))
_add("scan", Primitive("control", shown=("length",), numbers=_named("length"), body=_scan_title, loop=True, ports="scan"))
_add("jit", Primitive("control", shown=("name",), body=_jit_title, ports="operands", call=True))
_add("remat2", Primitive("control", body=_checkpoint_title, ports="operands", call=True, checkpoint=True))
_add("checkpoint", Primitive("control", ports="operands", call=True, checkpoint=True))
_add("closed_call", Primitive("control", body=_own_name, ports="operands", call=True))
_add("pjit core_call", Primitive("control", ports="operands", call=True))
_add("shard_map", Primitive("control", body=_own_name, ports="operands"))
_add("optimization_barrier", Primitive("control", key="passes"))
_add("call remat custom_linear_solve xla_call xla_pmap pmap run_state for linear_call platform_index", Primitive("control"))
_add("composite", Primitive(body=_own_name))
# Custom differentiation rules.
_add("custom_jvp_call custom_vjp_call", Primitive("custom", shown=("name",), body=_own_name, ports="operands", call=True))
_add("custom_vmap_call", Primitive("custom", body=_own_name))
_add("custom_vjp_call_jaxpr custom_lin custom_transpose_call", Primitive("custom"))
# Random numbers.
_add("random_bits random_fold_in random_gamma random_poisson", Primitive("random", key="consumes"))  # poisson: jax 0.12.1
_add("random_split", Primitive("random", shown=("shape",), key="consumes"))
_add("random_wrap random_unwrap", Primitive("random", key="passes"))
_add("threefry2x32 rng_bit_generator rng_uniform random_seed random_key_data", Primitive("random"))
# Collectives and shardings.
_add("psum psum_invariant pmax pmin", Primitive("collective", shown=("axes",)))
_add("all_gather ppermute all_to_all reduce_scatter", Primitive("collective", shown=("axis_name",)))
_add(
    "pmean psum2 pvary pbroadcast all_gather_invariant ragged_all_to_all pshuffle pgather axis_index psum_scatter"
    " sharding_constraint mesh_cast reshard",
    Primitive("collective"),
)
# Effects.
_add("name", Primitive("effect", shown=("name",)))
_add("debug_print debug_callback pure_callback io_callback callback outside_call inspect_sharding", Primitive("effect"))

PRIMITIVES: Mapping[str, Primitive] = MappingProxyType(_TABLE)

_PREFIXES = (
    ("random_", "random"),
    ("reduce_window", "reduction"),
    ("reduce_", "reduction"),
    ("scatter", "indexing"),
    ("cum", "reduction"),
    ("custom_", "custom"),
    ("debug_", "effect"),
)
_UNKNOWN = {family: Primitive(family) for _prefix, family in _PREFIXES} | {"other": Primitive()}


def primitive(name: str) -> Primitive:
    """The entry of `name`; for a name with none, a bare entry of the family its prefix says."""
    found = _TABLE.get(name)
    if found is not None:
        return found
    return _UNKNOWN[next((family for prefix, family in _PREFIXES if name.startswith(prefix)), "other")]


def read_numbers(name: str, params: Mapping[str, Any]) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """The integer params of an equation its entry names, sorted by name; () where it names none or
    the params are not of the form it reads (a jax that changed them: the analyses then say they
    do not know, never guess from text)."""
    reader = primitive(name).numbers
    if reader is None:
        return ()
    try:
        return tuple(sorted(reader(params).items()))
    except (KeyError, TypeError, ValueError, AttributeError):
        return ()


def body_title(name: str, path: str, index: int, count: int, params: Mapping[str, Any]) -> str:
    """A human title for the sub-program at `path` of a `name` equation."""
    title = primitive(name).body
    return title(name, path, index, count, params) if title is not None else f"{name} {path}"


def number(numbers: tuple[tuple[str, tuple[int, ...]], ...], name: str) -> tuple[int, ...] | None:
    """One of a node's numbers, None where it has none of that name."""
    return next((value for key, value in numbers if key == name), None)
