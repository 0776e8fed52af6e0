"""Static PRNG key-reuse detection (worker.keyreuse) on real jax traces, no mocks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import pytest

from jaxscope.schema.graph import resolve
from jaxscope.worker.keyreuse import KeyReuse, find_key_reuse
from jaxscope.worker.to_graph import build_graph

random = jax.random

KEY = random.key(0)
RAW = random.PRNGKey(0)
XS = jnp.zeros(3)


def check(f: Callable[..., Any], *args: Any, names: tuple[str, ...] = ("key",)) -> list[KeyReuse]:
    """Findings for `f(*args)`; every reported path must resolve to an equation node of the graph."""
    closed = jax.make_jaxpr(f)(*args)
    findings = find_key_reuse(closed, names)
    graph = build_graph(closed, "f", names)
    for finding in findings:
        assert finding.uses and (finding.in_loop or len(finding.uses) >= 2)
        for path in finding.uses:
            _, node = resolve(graph, path)
            assert node.kind == "eqn", (path, node)
    return findings


def labels(f: Callable[..., Any], *args: Any) -> list[str]:
    closed = jax.make_jaxpr(f)(*args)
    graph = build_graph(closed, "f")
    return [resolve(graph, p)[1].label for r in find_key_reuse(closed) for p in r.uses]


def test_new_style_key_used_twice() -> None:
    findings = check(lambda key: random.normal(key) + random.uniform(key), KEY)
    assert findings == [KeyReuse("argument `key`", ("e0", "e1"))]


def test_raw_uint32_key_used_twice_through_random_wrap() -> None:
    findings = check(lambda key: random.normal(key) + random.uniform(key), RAW)
    assert len(findings) == 1
    assert findings[0].key == "argument `key`" and len(findings[0].uses) == 2
    assert labels(lambda key: random.normal(key) + random.uniform(key), RAW) == ["jit", "jit"]


def test_jit_trace_jaxpr_and_unnamed_argument() -> None:
    closed = jax.jit(lambda k: random.normal(k) * random.normal(k)).trace(KEY).jaxpr
    assert find_key_reuse(closed) == [KeyReuse("argument 0", ("e0", "e1"))]


@pytest.mark.parametrize("key", [KEY, RAW], ids=["new", "raw"])
def test_split_unpacked_is_fine(key: Any) -> None:
    def f(key: Any) -> Any:
        k1, k2 = random.split(key)
        return random.normal(k1) + random.normal(k2)

    assert check(f, key) == []


@pytest.mark.parametrize("key", [KEY, RAW], ids=["new", "raw"])
def test_split_indexed_distinct_is_fine_same_index_is_reuse(key: Any) -> None:
    def distinct(key: Any) -> Any:
        keys = random.split(key, 3)
        return random.normal(keys[0]) + random.normal(keys[1]) + random.normal(keys[2])

    def same(key: Any) -> Any:
        keys = random.split(key, 3)
        return random.normal(keys[1]) + random.normal(keys[1])

    assert check(distinct, key) == []
    [finding] = check(same, key)
    assert len(finding.uses) == 2 and "random_split" in finding.key


def test_fold_in_with_distinct_ints_is_fine() -> None:
    assert check(lambda key: random.normal(random.fold_in(key, 1)) + random.normal(random.fold_in(key, 2)), KEY) == []


def test_split_then_parent_used_again() -> None:
    def f(key: Any) -> Any:
        k1, _ = random.split(key)
        return random.normal(k1) + random.normal(key)

    [finding] = check(f, KEY)
    assert finding.key == "argument `key`" and finding.uses[0] == "e0"
    assert labels(f, KEY) == ["random_split", "jit"]


def test_reuse_inside_jitted_helper_reported_once() -> None:
    @jax.jit
    def helper(k: Any, x: Any) -> Any:
        return random.normal(k) + random.normal(k) + x

    def f(key: Any) -> Any:
        k1, k2 = random.split(key)
        return helper(k1, 1.0) + helper(k2, 2.0)

    findings = check(f, KEY)
    assert len(findings) == 1, findings
    finding = findings[0]
    assert finding.key == "argument `k` of helper" and not finding.in_loop
    assert len(finding.uses) == 2 and all(p.startswith(finding.uses[0].split("/")[0] + "/") for p in finding.uses)


def test_key_passed_to_nested_jit_and_used_outside() -> None:
    @jax.jit
    def inner(k: Any) -> Any:
        return random.normal(k)

    @jax.jit
    def outer(k: Any) -> Any:
        return inner(k) * 2.0

    [finding] = check(lambda key: outer(key) + random.uniform(key), KEY)
    assert finding.key == "argument `key`" and finding.uses == ("e0", "e1")


def test_key_used_once_in_each_cond_branch_is_fine() -> None:
    def f(key: Any, p: Any) -> Any:
        return jax.lax.cond(p, random.normal, random.uniform, key)

    assert check(f, KEY, True, names=("key", "p")) == []


def test_cond_consumption_counts_once_at_call_site() -> None:
    def f(key: Any, p: Any) -> Any:
        return jax.lax.cond(p, random.normal, random.uniform, key) + random.normal(key)

    [finding] = check(f, KEY, True, names=("key", "p"))
    assert finding.key == "argument `key`" and len(finding.uses) == 2


def test_scan_with_closed_over_key_is_in_loop() -> None:
    def f(key: Any, xs: Any) -> Any:
        return jax.lax.scan(lambda c, x: (c + random.normal(key), None), 0.0, xs)

    [finding] = check(f, KEY, XS, names=("key", "xs"))
    assert finding.in_loop and finding.key == "argument `key`"
    assert len(finding.uses) == 1 and finding.uses[0].startswith("e0:0/")


def test_scan_carrying_and_splitting_key_is_fine() -> None:
    def f(key: Any, xs: Any) -> Any:
        def body(k: Any, x: Any) -> Any:
            k, sub = random.split(k)
            return k, random.normal(sub) + x

        return jax.lax.scan(body, key, xs)

    assert check(f, KEY, XS, names=("key", "xs")) == []


def test_scan_over_split_keys_is_fine() -> None:
    def f(key: Any) -> Any:
        return jax.lax.scan(lambda c, k: (c + random.normal(k), None), 0.0, random.split(key, 4))

    assert check(f, KEY) == []


def test_while_with_closed_over_key_is_in_loop_and_carried_split_is_fine() -> None:
    def bad(key: Any) -> Any:
        return jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + random.normal(key)), (0, 0.0))

    def good(key: Any) -> Any:
        def body(c: Any) -> Any:
            k, sub = random.split(c[1])
            return c[0] + 1, k, c[2] + random.normal(sub)

        return jax.lax.while_loop(lambda c: c[0] < 3, body, (0, key, 0.0))

    [finding] = check(bad, KEY)
    assert finding.in_loop and finding.key == "argument `key`"
    assert check(good, KEY) == []


def test_captured_raw_key_constant() -> None:
    def f(x: Any) -> Any:
        return x + random.normal(RAW) + random.normal(RAW)

    closed = jax.make_jaxpr(f)(1.0)
    [finding] = find_key_reuse(closed, ("x",))
    assert len(finding.uses) == 2


def test_no_keys_no_findings() -> None:
    assert check(lambda x: jnp.sin(x) @ x.T, jnp.ones((3, 3)), names=("x",)) == []


def test_a_program_that_consumes_no_key_is_not_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing consumes a key (no `random_bits`, `random_split`, ... in any sub-jaxpr): no key can
    be reused, and the analysis, 1.2 s of a 50k-equation trace's diagnostics, is skipped. One
    consumer deep in a nested jit or a scan body is enough for the full walk."""
    from jaxscope.worker import keyreuse

    def walked(*args: Any) -> Any:
        raise AssertionError("walked")

    plain = jax.make_jaxpr(lambda x: jax.jit(lambda y: jnp.sin(y) * 2)(x) + x)(XS)
    with monkeypatch.context() as m:
        m.setattr(keyreuse._Finder, "body", walked)
        assert find_key_reuse(plain) == []
    deep = jax.make_jaxpr(lambda k: jax.lax.scan(lambda c, _: (c + jax.jit(lambda kk: random.normal(kk))(k), None), 0.0, XS)[0])(KEY)
    assert not keyreuse.consumes_keys(plain.jaxpr) and keyreuse.consumes_keys(deep.jaxpr)
    assert [r.in_loop for r in find_key_reuse(deep, ("key",))] == [True]


def test_fold_in_same_literal_twice_is_reuse() -> None:
    [finding] = check(lambda key: random.normal(random.fold_in(key, 3)) + random.normal(random.fold_in(key, 3)), KEY)
    assert finding.uses == ("e0", "e2")


def test_fold_in_with_loop_index_is_fine_with_constant_is_in_loop() -> None:
    def good(key: Any) -> Any:
        return jax.lax.fori_loop(0, 4, lambda i, c: c + random.normal(random.fold_in(key, i)), 0.0)

    def bad(key: Any, xs: Any) -> Any:
        return jax.lax.scan(lambda c, x: (c + random.normal(random.fold_in(key, 7)), None), 0.0, xs)

    assert check(good, KEY) == []
    [finding] = check(bad, KEY, XS, names=("key", "xs"))
    assert finding.in_loop


def test_scan_carrying_key_unchanged_is_in_loop() -> None:
    def f(key: Any, xs: Any) -> Any:
        return jax.lax.scan(lambda k, x: (k, random.normal(k) + x), key, xs)

    [finding] = check(f, KEY, XS, names=("key", "xs"))
    assert finding.in_loop and finding.key == "argument `key`"


def test_python_loop_reusing_key_is_reuse() -> None:
    def f(key: Any) -> Any:
        total = 0.0
        for _ in range(3):
            total = total + random.normal(key)
        return total

    [finding] = check(f, KEY)
    assert finding.uses == ("e0", "e2", "e4")  # the adds sit in between


@pytest.mark.parametrize("name", ["poisson", "binomial", "multinomial", "gamma", "permutation", "choice"])
@pytest.mark.parametrize("key", [KEY, RAW], ids=["new", "raw"])
def test_library_samplers_used_once_are_fine(name: str, key: Any) -> None:
    """poisson/binomial deliberately feed one key to two algorithms and select: not the user's reuse."""
    samplers: dict[str, Callable[[Any], Any]] = {
        "poisson": lambda k: random.poisson(k, 3.0, (3,)),
        "binomial": lambda k: random.binomial(k, 10.0, 0.3),
        "multinomial": lambda k: random.multinomial(k, 10.0, jnp.ones(3) / 3),
        "gamma": lambda k: random.gamma(k, 2.0, (3,)),
        "permutation": lambda k: random.permutation(k, 10),
        "choice": lambda k: random.choice(k, 10, (3,), replace=False),
    }
    assert check(samplers[name], key) == []


def test_library_sampler_then_user_reuse() -> None:
    [finding] = check(lambda key: random.poisson(key, 3.0) + random.normal(key), KEY)
    assert finding.key == "argument `key`" and len(finding.uses) == 2


@pytest.mark.parametrize("key", [KEY, RAW], ids=["new", "raw"])
def test_grad_through_checkpoint_replay_is_fine(key: Any) -> None:
    """The backward pass of `jax.checkpoint` replays the forward draw (remat2 differentiated=True)."""

    def loss(x: Any, k: Any) -> Any:
        return jax.checkpoint(lambda x, k: jnp.sin(x * random.normal(k, x.shape)).sum())(x, k)

    def scan_loss(x: Any, k: Any) -> Any:
        body = jax.checkpoint(lambda c, kk: (jnp.sin(c * random.normal(kk)), None))
        return jax.lax.scan(body, x, random.split(k, 4))[0]

    assert check(lambda k: jax.value_and_grad(loss)(jnp.ones(3), k), key) == []
    assert check(lambda k: jax.grad(scan_loss)(1.0, k), key) == []
    assert len(check(lambda k: jax.checkpoint(random.normal)(k) + random.normal(k), key)) == 1


def test_key_returned_by_jit_is_the_same_key() -> None:
    ident = jax.jit(lambda k, x: (k, x + 1.0))

    def f(key: Any) -> Any:
        k2, _ = ident(key, 1.0)
        return random.normal(k2) + random.normal(key)

    [finding] = check(f, KEY)
    assert finding.key == "argument `key`"


def _example(name: str) -> Any:
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_keyreuse_example_{name}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_examples() -> None:
    prng, transformer = _example("prng"), _example("transformer")
    x = jnp.ones((4, 8))
    assert check(prng.sample, KEY, x, 3, names=("key", "x", "step")) == []
    assert check(prng.fixed_key, KEY, x, names=("key", "x")) == []
    [finding] = check(prng.reused_key, KEY, x, names=("key", "x"))
    assert finding.key == "argument `key`" and finding.uses == ("e0", "e1")
    assert check(transformer.init, KEY) == []  # next(iter(split(key, n))): every slice distinct
