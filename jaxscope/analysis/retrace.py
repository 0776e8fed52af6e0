"""Why jit would retrace: compare two calls the way jit's trace cache keys them.

jit reuses a trace when every traced argument keeps its shape and dtype, every static argument
compares equal, and the pytree structure is the same. `diff_calls` states each difference
between two argument specs in those terms; the worker then checks the verdict with JAX itself
(`RetraceResult.retraced`) and adds JAX's own cache-miss explanation.
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxscope.schema.trace import FunctionRef
from jaxscope.targets import argspec
from jaxscope.targets.discover import FunctionInfo, bind_call

ReasonKind = str  # "shape", "dtype", "static value", "static vs traced", "structure", "missing"


@dataclass(frozen=True, slots=True)
class RetraceRequest:
    """Trace `function` with `before`, then with `after` (call-argument texts), and compare."""

    function: FunctionRef
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class Reason:
    """One difference between the calls that changes jit's cache key."""

    where: str  # the argument path, e.g. "x", "params['w']", "n"
    kind: ReasonKind
    before: str
    after: str

    def text(self) -> str:
        what = {
            "shape": "shape changed",
            "dtype": "dtype changed",
            "static value": "static value changed",
            "static vs traced": "static in one call, traced in the other",
            "structure": "pytree structure changed",
            "missing": "given in only one call",
        }.get(self.kind, self.kind)
        return f"`{self.where}`: {what}: {self.before} → {self.after}"


@dataclass(frozen=True, slots=True)
class RetraceResult:
    """The verdict: did JAX trace the function again for `after`, and why."""

    request: RetraceRequest
    retraced: bool
    reasons: tuple[Reason, ...] = ()
    jax_says: str = ""  # JAX's cache-miss explanation (jax_explain_cache_misses), verbatim
    checked_by_jax: bool = True  # False when the calls cannot share one jit (static args differ)

    def summary(self) -> str:
        """Plain text for the CLI and the app."""
        verdict = "jit would RETRACE" if self.retraced else "jit would reuse the trace (cache hit)"
        lines = [f"{verdict}: ({self.request.before}) → ({self.request.after})"]
        lines += [f"  - {r.text()}" for r in self.reasons]
        if self.retraced and not self.reasons:
            lines.append("  - no difference in the specs: see JAX's explanation below")
        if not self.checked_by_jax:
            lines.append("  (not run through JAX: the static arguments differ, so the two calls need different jit wrappers)")
        if self.jax_says:
            lines += ["", "JAX says:", *("  " + ln for ln in self.jax_says.strip().splitlines())]
        return "\n".join(lines)


def diff_calls(fn: FunctionInfo | None, before: argspec.CallSpec, after: argspec.CallSpec) -> list[Reason]:
    """Every difference between two calls that changes jit's cache key, by parameter."""
    a, b = _bind(fn, before), _bind(fn, after)
    out: list[Reason] = []
    for name in dict.fromkeys([*a, *b]):
        if name not in a or name not in b:
            shown = argspec.format_spec(a.get(name) or b[name])
            out.append(Reason(name, "missing", shown if name in a else "(default)", shown if name in b else "(default)"))
            continue
        _diff(name, a[name], b[name], out)
    return out


def _bind(fn: FunctionInfo | None, call: argspec.CallSpec) -> dict[str, argspec.Spec]:
    if fn is not None:
        return bind_call(fn, call)
    return {**{f"arg{i}": s for i, s in enumerate(call.args)}, **dict(call.kwargs)}


def _diff(where: str, a: argspec.Spec, b: argspec.Spec, out: list[Reason]) -> None:
    fa, fb = argspec.format_spec(a), argspec.format_spec(b)
    if argspec.is_static(a) != argspec.is_static(b):
        out.append(Reason(where, "static vs traced", fa, fb))
    elif isinstance(a, argspec.StaticValue) and isinstance(b, argspec.StaticValue):
        if not _same_static(a.value, b.value):
            out.append(Reason(where, "static value", fa, fb))
    elif isinstance(a, argspec.ArraySpec) and isinstance(b, argspec.ArraySpec):
        if a.dtype != b.dtype:
            out.append(Reason(where, "dtype", fa, fb))
        if a.shape != b.shape:
            out.append(Reason(where, "shape", fa, fb))
    elif type(a) is not type(b):
        out.append(Reason(where, "structure", fa, fb))
    elif isinstance(a, argspec.DictSpec) and isinstance(b, argspec.DictSpec):
        ka, kb = dict(a.items), dict(b.items)
        if set(ka) != set(kb):
            out.append(Reason(where, "structure", "keys " + _keys(ka), "keys " + _keys(kb)))
            return
        for key in ka:
            _diff(f"{where}[{key!r}]", ka[key], kb[key], out)
    elif isinstance(a, (argspec.TupleSpec, argspec.ListSpec)) and isinstance(b, (argspec.TupleSpec, argspec.ListSpec)):
        if len(a.items) != len(b.items):
            out.append(Reason(where, "structure", f"{len(a.items)} items", f"{len(b.items)} items"))
            return
        for i, (x, y) in enumerate(zip(a.items, b.items, strict=True)):
            _diff(f"{where}[{i}]", x, y, out)


def _same_static(a: object, b: object) -> bool:
    """jit's trace cache tells static values apart by type as well as by == (2 and 2.0 retrace)."""
    try:
        return type(a) is type(b) and bool(a == b) and hash(a) == hash(b)
    except TypeError:
        return False


def _keys(d: dict[object, argspec.Spec]) -> str:
    return "{" + ", ".join(repr(k) for k in d) + "}"
