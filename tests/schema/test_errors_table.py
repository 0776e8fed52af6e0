"""Issue 61.4: every error jaxscope raises on purpose is in `schema/errors.py`'s table, under the
module that defines it, and the Python API raises the typed error a command line's failure was
made of (its fields kept), never the bare base class."""

from __future__ import annotations

import importlib
import pathlib
import pkgutil
import re

import pytest

import jaxscope
from jaxscope.schema import errors
from jaxscope.schema.errors import JaxscopeError

BASICS = str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "basics.py")  # (in-process traces move the cwd)


def _all_subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_all_subclasses(sub)}
    return found


def test_the_table_lists_every_error_class_where_it_is_defined() -> None:
    for info in pkgutil.walk_packages(jaxscope.__path__, "jaxscope."):
        if info.name.endswith("__main__") or info.name == "jaxscope.sphinx_ext":
            continue
        importlib.import_module(info.name)
    table = dict(re.findall(r"^\| `(\w+)` \| `([\w.]+)` \|", errors.__doc__ or "", re.M))
    defined = {cls.__name__: cls.__module__.removeprefix("jaxscope.") for cls in _all_subclasses(JaxscopeError)}
    assert defined == table


def test_the_api_raises_the_typed_error_with_its_fields() -> None:
    from jaxscope.runtime.worker_client import WorkerError
    from jaxscope.targets.argspec import SpecError

    with pytest.raises(SpecError) as bad_spec:
        jaxscope.graph(f"{BASICS}::predict", args_spec="f32[8, 4")
    assert bad_spec.value.offset == 3 and bad_spec.value.code == 2
    with pytest.raises(WorkerError) as failed:  # the user's code raised while tracing: its info, and the CLI's exit code
        jaxscope.graph(f"{BASICS}::predict", args_spec='{"w": f32[4, 3], "b": f32[3]}, f32[8, 5]')
    assert failed.value.info.kind == "user-code" and failed.value.code == 3, failed.value.info
    assert "basics.py:24" in str(failed.value) and failed.value.info.location  # where, as the CLI says it
