"""Frozen dataclasses <-> plain JSON values.

JSON (never pickle) crosses every process boundary, so a result can be saved, attached to a bug
report and replayed as a test fixture. Unknown keys are ignored and missing keys take their
defaults, so an older reader survives a newer writer.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any, TypeVar, Union, get_args, get_origin

T = TypeVar("T")


def to_jsonable(obj: Any) -> Any:
    """Turn dataclasses, tuples and dicts into JSON-ready lists/dicts, recursively."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    return obj


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_jsonable(tp: Any, data: Any) -> Any:
    """Rebuild a value of type `tp` (a dataclass or a typing construct) from JSON data."""
    if data is None:
        return None
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(tp) if a is not type(None)]
        if len(options) == 1:
            return from_jsonable(options[0], data)
        for option in options:  # first structural match wins
            if _matches(option, data):
                return from_jsonable(option, data)
        return data
    if origin is tuple:
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_jsonable(args[0], v) for v in data)
        return tuple(from_jsonable(a, v) for a, v in zip(args, data, strict=False))
    if origin is list:
        (arg,) = get_args(tp)
        return [from_jsonable(arg, v) for v in data]
    if origin is dict:
        _, val = get_args(tp)
        return {k: from_jsonable(val, v) for k, v in data.items()}
    if origin is typing.Literal:
        return data
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            raise ValueError(f"expected an object for {tp.__name__}, got {type(data).__name__}")
        hints = _hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.name in data:
                kwargs[f.name] = from_jsonable(hints[f.name], data[f.name])
        return tp(**kwargs)
    if tp is float and isinstance(data, int):
        return float(data)
    return data


def _matches(tp: Any, data: Any) -> bool:
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return isinstance(data, dict)
    if get_origin(tp) in (tuple, list):
        return isinstance(data, list)
    if isinstance(tp, type):
        return isinstance(data, tp)
    return True
