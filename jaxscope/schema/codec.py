"""Frozen dataclasses <-> plain JSON values.

Results cross the worker and layout process boundaries as JSON, so a result can be saved,
attached to a bug report and replayed as a test fixture. (One exception, not a result: the
argument-spec parse of `runtime.parse_process` comes back pickled from a child of our own, which
never runs user code.) Unknown keys are ignored and missing keys take their
defaults, so an older reader survives a newer writer.

`to_jsonable` / `from_jsonable` (and `dumps` / `loads`, the same with the JSON text step) do the
per-type work once: the first time a dataclass (or a typing construct) is seen, a function is
generated for it from its fields and their type hints, and cached by type. Asking `typing` about
every value instead cost seconds at 20k nodes. The generated functions give exactly what the
plain recursive definitions in the docstrings give; anything off the declared types (a subclass,
a list where a tuple is declared, an int for a float) takes the general path for that value.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import json
import threading
import types
import typing
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, Union, cast, get_args, get_origin

from jaxscope.schema.collector import gc_paused

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

DC = TypeVar("DC", bound="DataclassInstance")


# ------------------------------------------------------------------------------- public


def to_jsonable(obj: Any) -> Any:
    """Turn dataclasses, tuples and dicts into JSON-ready lists/dicts, recursively.

    The same as: a dataclass instance -> {field name: to_jsonable(value)} for every field, in
    order; a list or tuple -> [to_jsonable(v) ...]; a dict -> {str(k): to_jsonable(v)}; anything
    else as it is.
    """
    with gc_paused():
        return _encode(obj)


def from_jsonable(tp: Any, data: Any) -> Any:
    """Rebuild a value of type `tp` (a dataclass or a typing construct) from JSON data.

    None stays None. A dataclass needs an object: its keys that are fields (init=True) are decoded
    by their type hints, other keys are ignored and missing ones take the defaults. X | None is X;
    for a wider union the first option that fits (a dataclass: an object; a tuple or list: an
    array; a class: an instance) decodes, else the data stays as it is. tuple[X, ...], fixed
    tuple[A, B] (extra items dropped), list[X] and dict[K, V] (keys kept) decode their items; a
    float accepts an int (or bool); Literal and everything else is the data itself.
    """
    if data is None:
        return None
    dec = _decoder(tp)
    if dec is _IDENTITY:
        return data
    with gc_paused():
        return dec(data)


def dumps(obj: Any) -> str:
    """``json.dumps(to_jsonable(obj), separators=(",", ":"), ensure_ascii=False)``."""
    with gc_paused():
        return json.dumps(_encode(obj), separators=(",", ":"), ensure_ascii=False)


def loads(tp: Any, text: str | bytes) -> Any:
    """``from_jsonable(tp, json.loads(text))``; JSON too deeply nested for `json` is a ValueError too."""
    dec = _decoder(tp)
    with gc_paused():
        try:
            data = json.loads(text)
        except RecursionError:  # "[" * 100_000: not a crash, a bad text like any other
            raise ValueError("JSON text nested too deeply") from None
        return data if dec is _IDENTITY or data is None else dec(data)


# ------------------------------------------------------------------------------- internals
#
# Every compiled function is only ever published (put in _ENCODERS / _DECODERS) whole; it is built
# under _LOCK, so two threads never build (or half-see) the same one. Types that contain
# themselves are reached through `_encode` / `_decoder` at the recursive spot.

_LOCK = threading.RLock()
_IDENTITY = None  # decoder marker: the JSON value already is the Python value
_SCALARS = frozenset({str, int, float, bool, type(None)})
_ENCODERS: dict[type, Any] = {}  # dataclass -> instance -> JSON value
_DECODERS: dict[Any, Any] = {}  # _key(tp) -> JSON value -> value, or _IDENTITY
_BUILDING_ENC: set[type] = set()  # dataclasses whose encoder is being built (under _LOCK)
_BUILDING_DEC: set[Any] = set()  # keys whose decoder is being built (under _LOCK)


def _hints(cls: type) -> dict[str, Any] | None:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # an unresolvable annotation
        return None


def _is_dataclass_type(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _gen(src: str, env: dict[str, Any], name: str) -> Any:
    exec(src, env)  # generated from dataclass field names and cached helpers only
    return env[name]


def maker(cls: type[DC]) -> Callable[..., DC]:
    """A positional constructor for a frozen, slotted dataclass without a `__post_init__`, for the
    decoders that make tens of thousands of them: it fills the slots through their descriptors,
    where the frozen class's `__init__` goes through `object.__setattr__` field by field (a
    5-field NodeBox: 1.5 -> 0.7 µs). Every field must be given, in order; same objects."""
    names = [f.name for f in dataclasses.fields(cls)]
    params = getattr(cls, "__dataclass_params__")  # noqa: B009 - typeshed declares no __dataclass_params__
    if not params.frozen or "__slots__" not in vars(cls) or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} is not a frozen slotted dataclass without __post_init__")
    env: dict[str, Any] = {f"_s{k}": getattr(cls, name).__set__ for k, name in enumerate(names)}
    env.update(_new=object.__new__, _cls=cls)
    body = "".join(f"    _s{k}(o, {name})\n" for k, name in enumerate(names))
    src = f"def make({', '.join(names)}):\n    o = _new(_cls)\n{body}    return o\n"
    return cast("Callable[..., DC]", _gen(src, env, "make"))  # made by exec


# -- encoding


def _encode(obj: Any) -> Any:
    """to_jsonable without the GC pause."""
    cls = type(obj)
    if cls is str or cls is int or cls is float or cls is bool or obj is None:
        return obj
    enc = _ENCODERS.get(cls)
    if enc is not None:
        return enc(obj)
    if cls is tuple or cls is list:
        return [_encode(v) for v in obj]
    if cls is dict:
        return {str(k): _encode(v) for k, v in obj.items()}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _dataclass_encoder(cls)(obj)
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):  # list, tuple, or e.g. an EdgeTable
        return [_encode(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): _encode(v) for k, v in obj.items()}
    return obj


def _dataclass_encoder(cls: type) -> Any:
    enc = _ENCODERS.get(cls)
    if enc is None:
        with _LOCK:
            enc = _ENCODERS.get(cls)
            if enc is None:
                _BUILDING_ENC.add(cls)
                try:
                    enc = _compile_encoder(cls)
                finally:
                    _BUILDING_ENC.discard(cls)
                _ENCODERS[cls] = enc
    return enc


def _compile_encoder(cls: type) -> Any:
    """`obj -> {field: to_jsonable(value)}` for instances of exactly `cls`, as generated code that
    checks each value against its declared type and hands anything else to `_encode`."""
    hints = _hints(cls) or {}
    env: dict[str, Any] = {"_encode": _encode, "_type": type, "str": str, "tuple": tuple, "list": list, "dict": dict}
    env.update(int=int, float=float, bool=bool, _SC=_SCALARS, len=len)
    counter = itertools.count()
    lines = ["def enc(obj):"]
    items = []
    for k, f in enumerate(dataclasses.fields(cls)):
        lines.append(f"    v{k} = obj.{f.name}")
        expr = _enc_expr(hints[f.name], f"v{k}", env, counter) if f.name in hints else f"_encode(v{k})"
        items.append(f"{f.name!r}: {expr}")
    lines.append(f"    return {{{', '.join(items)}}}")
    return _gen("\n".join(lines) + "\n", env, "enc")


_SCALAR_NAMES = {str: "str", int: "int", float: "float", bool: "bool"}


def _enc_expr(tp: Any, v: str, env: dict[str, Any], counter: Any) -> str:
    """Python expression for `to_jsonable(<v>)`, fast when the value has type `tp`. `v` is a name
    or a pure, cheap expression (it may be evaluated more than once)."""
    fallback = f"_encode({v})"
    if isinstance(tp, type) and tp in _SCALAR_NAMES:
        return f"({v} if {v}.__class__ is {_SCALAR_NAMES[tp]} else {fallback})"
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is typing.Literal:
        if args and all(type(a) is str for a in args):
            return f"({v} if {v}.__class__ is str else {fallback})"
        return f"({v} if {v}.__class__ in _SC else {fallback})"
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:
            return f"(None if {v} is None else {_enc_expr(options[0], v, env, counter)})"
        return fallback
    if origin in (tuple, list) and args:
        container = "tuple" if origin is tuple else "list"
        if origin is list or (len(args) == 2 and args[1] is Ellipsis):
            x = f"x{next(counter)}"
            inner = _enc_expr(args[0], x, env, counter)
            return f"(([{inner} for {x} in {v}] if {v} else []) if {v}.__class__ is {container} else {fallback})"
        if Ellipsis in args or len(args) > 8:
            return fallback
        items = ", ".join(_enc_expr(a, f"{v}[{i}]", env, counter) for i, a in enumerate(args))
        return f"([{items}] if {v}.__class__ is tuple and len({v}) == {len(args)} else {fallback})"
    if origin is dict and len(args) == 2:
        k, x = f"k{next(counter)}", f"x{next(counter)}"
        inner = _enc_expr(args[1], x, env, counter)
        key = f"({k} if {k}.__class__ is str else str({k}))"
        return f"({{{key}: {inner} for {k}, {x} in {v}.items()}} if {v}.__class__ is dict else {fallback})"
    if _is_dataclass_type(tp) and tp not in _BUILDING_ENC:
        n = next(counter)
        env[f"C{n}"] = tp
        env[f"E{n}"] = _dataclass_encoder(tp)
        return f"(E{n}({v}) if _type({v}) is C{n} else {fallback})"
    return fallback


# -- decoding


def _key(tp: Any) -> Any:
    """A cache key for `tp` that tells unions apart by their order (``A | B == B | A``, but the
    first option that fits wins)."""
    args = get_args(tp)
    if not args:
        return tp
    origin = get_origin(tp)
    if origin is typing.Literal:
        return (origin, tuple((type(a), a) for a in args))
    return (origin, tuple(_key(a) for a in args))


def _decoder(tp: Any) -> Any:
    """The function JSON value -> value of type `tp` (None -> None), or _IDENTITY."""
    key = _key(tp)
    try:
        return _DECODERS[key]
    except KeyError:
        cacheable = True
    except TypeError:  # unhashable (an odd typing construct): built every time
        cacheable = False
    with _LOCK:
        if cacheable:
            if key in _DECODERS:
                return _DECODERS[key]
            if key in _BUILDING_DEC:  # a type that contains itself: look it up when called

                def recurse(data: Any, tp: Any = tp) -> Any:
                    dec = _decoder(tp)
                    return data if dec is _IDENTITY else dec(data)

                return recurse
            _BUILDING_DEC.add(key)
        try:
            dec = _compile_decoder(tp)
        finally:
            if cacheable:
                _BUILDING_DEC.discard(key)
        if dec is _DEFERRED:
            return _deferred(tp)
        if cacheable:
            _DECODERS[key] = dec
        return dec


def _float(data: Any) -> Any:
    return float(data) if isinstance(data, int) else data


_DEFERRED = object()  # a dataclass whose hints do not resolve (yet): fail when used, as typing does


def _deferred(tp: type) -> Any:
    def decode(data: Any) -> Any:
        if data is None:
            return None
        if not isinstance(data, dict):
            raise ValueError(f"expected an object for {tp.__name__}, got {type(data).__name__}")
        typing.get_type_hints(tp)  # raises (or the hints resolve now, and this compiles)
        dec = _decoder(tp)
        return dec(data)

    return decode


def _compile_decoder(tp: Any) -> Any:
    origin = get_origin(tp)
    args = get_args(tp)
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:
            return _decoder(options[0])  # every decoder maps None to None
        return _union_decoder(options)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            inner = _decoder(args[0])
            if inner is _IDENTITY:
                return lambda data: None if data is None else tuple(data)
            return lambda data: None if data is None else tuple([inner(v) for v in data])
        return _fixed_tuple_decoder(args)
    if origin is list:
        inner = _decoder(args[0]) if args else _IDENTITY
        if inner is _IDENTITY:
            return lambda data: None if data is None else list(data)
        return lambda data: None if data is None else [inner(v) for v in data]
    if origin is dict:
        inner = _decoder(args[1]) if len(args) == 2 else _IDENTITY
        if inner is _IDENTITY:
            return lambda data: None if data is None else dict(data.items())
        return lambda data: None if data is None else {k: inner(v) for k, v in data.items()}
    if _is_dataclass_type(tp):
        return _dataclass_decoder(tp)
    if tp is float:
        return _float
    return _IDENTITY


def _union_decoder(options: list[Any]) -> Any:
    choices = []
    for option in options:  # first structural match wins
        if _is_dataclass_type(option):
            accepts: Any = dict
        elif get_origin(option) in (tuple, list):
            accepts = list
        elif isinstance(option, type):
            accepts = option
        else:
            accepts = object
        choices.append((accepts, _decoder(option)))

    def decode(data: Any) -> Any:
        if data is None:
            return None
        for accepts, dec in choices:
            if isinstance(data, accepts):
                return data if dec is _IDENTITY else dec(data)
        return data

    return decode


def _fixed_tuple_decoder(args: tuple[Any, ...]) -> Any:
    decs = [_decoder(a) for a in args]

    def general(data: Any) -> Any:
        if data is None:
            return None
        return tuple([v if d is _IDENTITY else d(v) for d, v in zip(decs, data, strict=False)])

    if not args or len(args) > 8:
        return general
    env: dict[str, Any] = {"general": general, "_float": _float, "float": float, "list": list, "len": len}
    names = [f"a{i}" for i in range(len(args))]
    items = []
    for i, (name, dec) in enumerate(zip(names, decs, strict=True)):
        env[f"d{i}"] = dec
        items.append(_dec_expr(dec, name, f"d{i}"))
    src = (
        "def fixed(data):\n"
        f"    if data.__class__ is list and len(data) == {len(args)}:\n"
        f"        {', '.join(names)}, = data\n"
        f"        return ({', '.join(items)},)\n"
        "    return general(data)\n"
    )
    return _gen(src, env, "fixed")


def _dec_expr(dec: Any, v: str, name: str) -> str:
    if dec is _IDENTITY:
        return v
    if dec is _float:
        return f"({v} if {v}.__class__ is float else _float({v}))"
    return f"{name}({v})"


def _dataclass_decoder(cls: type) -> Any:
    hints = _hints(cls)
    if hints is None:
        return _DEFERRED
    fields = [(f.name, _decoder(hints[f.name])) for f in dataclasses.fields(cls) if f.init]

    def general(data: Any) -> Any:
        if data is None:
            return None
        if not isinstance(data, dict):
            raise ValueError(f"expected an object for {cls.__name__}, got {type(data).__name__}")
        kwargs = {}
        for name, dec in fields:
            if name in data:
                value = data[name]
                kwargs[name] = value if dec is _IDENTITY or value is None else dec(value)
        return cls(**kwargs)

    # The usual case, a plain dict with every field: one generated call. Anything else (a key
    # missing, not a dict, None) goes to `general`.
    n_pos = _positional_prefix(cls, [name for name, _ in fields])
    env: dict[str, Any] = {"cls": cls, "general": general, "_float": _float, "float": float, "dict": dict}
    reads, call = [], []
    for k, (name, dec) in enumerate(fields):
        env[f"d{k}"] = dec
        reads.append(f"            v{k} = data[{name!r}]")
        expr = _dec_expr(dec, f"v{k}", f"d{k}")
        call.append(expr if k < n_pos else f"{name}={expr}")
    src = "\n".join(
        [
            "def decode(data):",
            "    if data.__class__ is dict:",
            "        try:",
            *(reads or ["            pass"]),
            "        except KeyError:",
            "            return general(data)",
            f"        return cls({', '.join(call)})",
            "    return general(data)",
        ]
    )
    return _gen(src + "\n", env, "decode")


def _positional_prefix(cls: type, names: list[str]) -> int:
    """How many of `names` (the init fields, in order) `cls(...)` takes positionally, in order."""
    try:
        params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return 0
    n = 0
    for name, param in zip(names, params, strict=False):
        if param.name != name or param.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
            break
        n += 1
    return n
