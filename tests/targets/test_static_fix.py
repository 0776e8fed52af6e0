"""The one-click "make this argument static" rewrite of call-argument text (core.static_fix)."""

from __future__ import annotations

import pytest

from jaxscope.targets.argspec import SpecError
from jaxscope.targets.discover import discover_source
from jaxscope.targets.static_fix import make_static, static_suggestion

SOURCE = """
def f(x, n, flag=True, *, scale=2.0, k=None):
    return x
"""
FN = discover_source(SOURCE).get("f")


@pytest.mark.parametrize(
    ("args", "param", "expected"),
    [
        ("f32[3], i32[]", "n", "1"),
        ("f32[3], f32[]", "n", "1.0"),
        ("f32[3], bf16[]", "n", "1.0"),
        ("f32[3], bool[]", "n", "True"),
        ("f32[3], 4, flag=bool[]", "flag", "True"),  # the Python default wins
        ("f32[3], 4, scale=f32[]", "scale", "2.0"),
        ("f32[3], i32[4]", "n", None),  # an array cannot be static
        ("f32[3], key[]", "n", None),
        ("f32[3], 4", "n", None),  # already static
        ("f32[3], i32[]", "params['n']", None),  # a pytree leaf: no simple rewrite
        ("f32[3], i32[", "n", None),  # the text does not parse
    ],
)
def test_suggestion(args: str, param: str, expected: str | None) -> None:
    assert static_suggestion(FN, args, param) == expected


def test_make_static_rewrites_positional_and_keyword_arguments() -> None:
    assert make_static(FN, "f32[3], i32[]", "n", "3") == "f32[3], 3"
    assert make_static(FN, "f32[3], 4, scale=f32[]", "scale", "0.5") == "f32[3], 4, scale=0.5"
    assert make_static(FN, "f32[3], n=i32[]", "n", "'relu'") == "f32[3], n='relu'"
    assert make_static(FN, "f32[3], 4", "k", "7") == "f32[3], 4, k=7"


def test_make_static_refuses_an_array_spec() -> None:
    with pytest.raises(SpecError):
        make_static(FN, "f32[3], i32[]", "n", "f32[2]")
