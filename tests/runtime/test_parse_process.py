"""Long argument text parsed in a child process: the same verdict as parsing it here, no parse here."""

from __future__ import annotations

import pytest

from jaxscope.runtime.parse_process import parse_call_apart
from jaxscope.targets import argspec

LONG = "{'w': [" + ", ".join(["f32[64,64]"] * 800) + "], 'b': [" + ", ".join(["f32[64]"] * 800) + "]}, f32[8,16], n=3"


def _not_here(text: str) -> argspec.CallSpec:
    raise AssertionError("parsed in this process")


def test_a_child_parses_the_text_to_the_same_call(monkeypatch):
    expected = argspec.parse_call(LONG)
    monkeypatch.setattr(argspec, "parse_call", _not_here)
    got = parse_call_apart(LONG)
    assert got == expected
    assert got.kwargs == expected.kwargs and len(got.args[0].items[0][1].items) == 800


@pytest.mark.parametrize("bad", [LONG[:-1] + "(", LONG.replace("f32[64]", "f33[64]", 1), LONG + ", oops()"])
def test_a_childs_error_is_the_same_error_with_its_position(monkeypatch, bad: str):
    with pytest.raises(argspec.SpecError) as here:
        argspec.parse_call(bad)
    monkeypatch.setattr(argspec, "parse_call", _not_here)
    with pytest.raises(argspec.SpecError) as apart:
        parse_call_apart(bad)
    assert (apart.value.message, apart.value.offset, apart.value.token, apart.value.text) == (
        here.value.message,
        here.value.offset,
        here.value.token,
        bad,
    )
    assert str(apart.value) == str(here.value)


def test_without_a_child_the_text_is_parsed_here(tmp_path):
    missing = str(tmp_path / "no-python")
    assert parse_call_apart(LONG, python=missing) == argspec.parse_call(LONG)
    with pytest.raises(argspec.SpecError, match="unknown dtype"):
        parse_call_apart("f33[1]", python=missing)
    failing = tmp_path / "failing-python"
    failing.write_text("#!/bin/sh\nexit 3\n")
    failing.chmod(0o755)
    assert parse_call_apart(LONG, python=str(failing)) == argspec.parse_call(LONG)
