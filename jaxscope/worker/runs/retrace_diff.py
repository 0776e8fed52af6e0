"""Where two traces of the same call gave different programs: the lines that read values at trace time.

A pure function traced twice with the same inputs gives the same jaxpr. One that reads a value at
trace time (numpy's or Python's random numbers, a counter it increments, the clock) bakes a new
constant or literal into each trace. Comparing the two programs equation by equation (primitive,
literal operands, params, sub-programs, captured constants) finds the first equation where they
part, inside sub-programs too, and the outputs it feeds: the trace-time cause's evidence.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxscope.schema.run import Site
from jaxscope.worker import jax_compat as jc

MAX_SITES = 8
_PREVIEW = 4


def retrace_sites(first: Any, second: Any, paths: list[str]) -> list[Site]:
    """The equations (or constants) of `first` that differ in `second`, each with the outputs it feeds."""
    j1, j2 = first.jaxpr, second.jaxpr
    cache = jc.ChainCache()
    found: list[tuple[Any, Site]] = []  # (the variables it taints, the site)
    if len(j1.constvars) != len(j2.constvars) or len(j1.eqns) != len(j2.eqns):
        diff = _first_difference(j1.eqns, j2.eqns, "", cache)
        if diff is not None:
            found.append((("eqn", diff[0]), diff[1]))
    else:
        for k, (var, a, b) in enumerate(zip(j1.constvars, first.consts, second.consts, strict=True)):
            if not _same(a, b):
                user = next(((i, e) for i, e in enumerate(j1.eqns) if any(v is var for v in e.invars)), None)
                detail = f"a constant captured at trace time changed: {_show(a)} on the first trace, {_show(b)} on the second"
                if user is None:
                    found.append((("var", var), Site(f"c{k}", "", None, detail)))
                else:
                    i, eqn = user
                    found.append((("var", var), Site(f"e{i}", eqn.primitive.name, jc.eqn_chain(eqn, cache)[1], detail)))
        for i, (e1, e2) in enumerate(zip(j1.eqns, j2.eqns, strict=True)):
            if len(found) >= MAX_SITES:
                break
            if _signature(e1) != _signature(e2):
                inner = _first_difference([e1], [e2], "", cache, top=i)
                if inner is not None:
                    found.append((("eqn", i), inner[1]))
    return [_with_feeds(j1, taint, site, paths) for taint, site in found]


def _first_difference(
    eqns1: list[Any], eqns2: list[Any], prefix: str, cache: jc.ChainCache, top: int | None = None
) -> tuple[int, Site] | None:
    """(index at this level, the innermost differing equation as a Site), or None if all agree."""
    for i, (e1, e2) in enumerate(zip(eqns1, eqns2, strict=False)):
        index = i if top is None else top
        if _signature(e1) == _signature(e2):
            continue
        path = f"{prefix}e{index}"
        subs1, subs2 = jc.subjaxprs(e1.params), jc.subjaxprs(e2.params)
        if e1.primitive is e2.primitive and _literals(e1) == _literals(e2) and len(subs1) == len(subs2):
            for k, ((_, s1, _), (_, s2, _)) in enumerate(zip(subs1, subs2, strict=True)):
                inner = _first_difference(s1.eqns, s2.eqns, f"{path}:{k}/", cache)
                if inner is not None:
                    return index, inner[1]
        return index, Site(path, e1.primitive.name, jc.eqn_chain(e1, cache)[1], _what_changed(e1, e2))
    if len(eqns1) != len(eqns2):
        at = min(len(eqns1), len(eqns2))
        e = eqns1[at] if at < len(eqns1) else eqns2[at]
        return at, Site(
            f"{prefix}e{at}", e.primitive.name, jc.eqn_chain(e, cache)[1], "the second trace has a different number of equations here"
        )
    return None


def _what_changed(e1: Any, e2: Any) -> str:
    if e1.primitive is not e2.primitive:
        return f"the second trace has {e2.primitive.name} here in place of {e1.primitive.name}"
    l1, l2 = _literals(e1), _literals(e2)
    if l1 != l2:
        pairs = [f"{a} then {b}" for a, b in zip(l1, l2, strict=False) if a != b]
        return "a literal read at trace time changed: " + ", ".join(pairs[:3])
    return "its parameters changed between the two traces"


def _signature(eqn: Any) -> tuple[Any, ...]:
    params: list[tuple[Any, ...]] = []
    for key in sorted(eqn.params):
        value = eqn.params[key]
        subs = jc.subjaxprs({key: value})
        if subs:
            params.append(
                (key, tuple(tuple(_signature(e) for e in s.eqns) for _, s, _ in subs), tuple(_show(c) for _, _, cs in subs for c in cs))
            )
        elif not jc.is_opaque(value):
            params.append((key, repr(value)[:400]))
    avals = tuple(jc.aval_str(v.aval) for v in eqn.invars)
    return (eqn.primitive.name, _literals(eqn), avals, tuple(params))


def _literals(eqn: Any) -> tuple[str, ...]:
    return tuple(_show(v.val) for v in eqn.invars if isinstance(v, jc.Literal))


def _same(a: Any, b: Any) -> bool:
    try:
        x, y = np.asarray(a), np.asarray(b)
    except Exception:
        return a is b
    return x.shape == y.shape and x.dtype == y.dtype and bool(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))


def _show(value: Any) -> str:
    try:
        x = np.asarray(value)
    except Exception:
        return type(value).__name__
    if x.ndim == 0:
        return repr(x.item())
    head = ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in x.ravel()[:_PREVIEW].tolist())
    return f"[{head}{', ...' if x.size > _PREVIEW else ''}]"


def _with_feeds(jaxpr: Any, taint: tuple[str, Any], site: Site, paths: list[str]) -> Site:
    """`site` with the outputs downstream of what it taints (a constant, or an equation's outputs)."""
    tainted: set[int] = set()
    kind, what = taint
    if kind == "var":
        tainted.add(id(what))
    for i, eqn in enumerate(jaxpr.eqns):
        if (kind == "eqn" and i == what) or any(id(v) in tainted for v in eqn.invars if not isinstance(v, jc.Literal)):
            tainted.update(id(v) for v in eqn.outvars)
    feeds = tuple(p for p, v in zip(paths, jaxpr.outvars, strict=True) if not isinstance(v, jc.Literal) and id(v) in tainted)
    return Site(site.path, site.primitive, site.source, site.detail, feeds)
