"""Targets: ``path/to/file.py::name`` and ``pkg.module:name``."""

from __future__ import annotations

import pickle

import pytest

from jaxscope.schema.trace import FunctionRef
from jaxscope.targets.target import TargetError, parse_target


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("examples/basics.py::predict", FunctionRef(qualname="predict", path="examples/basics.py")),
        ("model.py::Model.__call__", FunctionRef(qualname="Model.__call__", path="model.py")),
        ("./a/../b.py::f", FunctionRef(qualname="f", path="./a/../b.py")),  # kept as given
        ("C:\\work\\m.py::f", FunctionRef(qualname="f", path="C:\\work\\m.py")),
        ("odd::dir/m.py::f", FunctionRef(qualname="f", path="odd::dir/m.py")),  # rightmost '::'
        ("script::f", FunctionRef(qualname="f", path="script")),
        ("pkg.module:name", FunctionRef(qualname="name", module="pkg.module")),
        ("mod:Class.method", FunctionRef(qualname="Class.method", module="mod")),
        ("_private_mod:_f", FunctionRef(qualname="_f", module="_private_mod")),
    ],
)
def test_accepted(text: str, ref: FunctionRef):
    assert parse_target(text) == ref


def test_display_round_trips():
    for text in ("a/b.py::C.m", "pkg.mod:f"):
        assert parse_target(text).display() == text


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("::f", "file path before '::' is empty"),
        ("m.py::", "function name is empty"),
        ("m.py::1f", "'1f' is not a valid function name"),
        ("m.py::A..b", "not a valid function name"),
        ("m.py::A.", "not a valid function name"),
        ("m.py::class", "not a valid function name"),
        ("m.py::f(x)", "not a valid function name"),
        ("m.py:: f", "not a valid function name"),
        ("m.py::a::", "function name is empty"),
        (":f", "module name is empty"),
        ("pkg.mod:", "function name is empty"),
        ("my-pkg:f", "'my-pkg' is not a valid module name"),
        ("pkg..mod:f", "not a valid module name"),
        ("a:b:c", "'b:c' is not a valid function name"),
        ("m.py:f", "looks like a file path"),
        ("dir/m:f", "looks like a file path"),
        ("m.py", "names no function"),
        ("predict", "names no function"),
    ],
)
def test_rejected(text: str, reason: str):
    with pytest.raises(TargetError) as exc:
        parse_target(text)
    message = str(exc.value)
    assert message.startswith(f"invalid target {text!r}: ")
    assert reason in message.splitlines()[0]
    assert "path/to/file.py::function" in message and "package.module:function" in message


def test_file_without_function_gets_a_hint():
    with pytest.raises(TargetError, match=r"did you mean m\.py::function\?"):
        parse_target("m.py")


def test_target_error_is_a_value_error_and_pickles():
    with pytest.raises(ValueError) as exc:
        parse_target("::f")
    again = pickle.loads(pickle.dumps(exc.value))
    assert str(again) == str(exc.value) and again.text == "::f"
