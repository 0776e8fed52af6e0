"""serialize: the compiled codec gives exactly what the plain recursive definitions give."""

from __future__ import annotations

import collections
import dataclasses
import json
import pathlib
import sys
import threading
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Union, get_args, get_origin

import pytest

from jaxscope.layout.engine import compute_layout
from jaxscope.schema.codec import dumps, from_jsonable, loads, maker, to_jsonable
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.expansion import expanded_to_depth
from jaxscope.schema.graph import Graph, SourceLoc
from jaxscope.schema.layout import Layout, NodeBox
from jaxscope.schema.trace import ErrorInfo, Frame, TraceRequest, TraceResult
from tests.graphs import sample_graph

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
FIXTURE_FILES = sorted(p for p in FIXTURES.glob("*.json") if not p.name.startswith("run_"))  # run_*: RunResults


# --------------------------------------------------------------------- the reference definitions
# The generic implementation serialize used to have (one init=False change: such fields are not
# passed to the constructor). The compiled codec must agree with it on every input.


def ref_to_jsonable(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: ref_to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [ref_to_jsonable(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): ref_to_jsonable(v) for k, v in obj.items()}
    return obj


def ref_from_jsonable(tp: Any, data: Any) -> Any:
    if data is None:
        return None
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(tp) if a is not type(None)]
        if len(options) == 1:
            return ref_from_jsonable(options[0], data)
        for option in options:
            if _ref_matches(option, data):
                return ref_from_jsonable(option, data)
        return data
    if origin is tuple:
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(ref_from_jsonable(args[0], v) for v in data)
        return tuple(ref_from_jsonable(a, v) for a, v in zip(args, data, strict=False))
    if origin is list:
        (arg,) = get_args(tp)
        return [ref_from_jsonable(arg, v) for v in data]
    if origin is dict:
        _, val = get_args(tp)
        return {k: ref_from_jsonable(val, v) for k, v in data.items()}
    if origin is typing.Literal:
        return data
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            raise ValueError(f"expected an object for {tp.__name__}, got {type(data).__name__}")
        hints = typing.get_type_hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.init and f.name in data:
                kwargs[f.name] = ref_from_jsonable(hints[f.name], data[f.name])
        return tp(**kwargs)
    if tp is float and isinstance(data, int):
        return float(data)
    return data


def _ref_matches(tp: Any, data: Any) -> bool:
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return isinstance(data, dict)
    if get_origin(tp) in (tuple, list):
        return isinstance(data, list)
    if isinstance(tp, type):
        return isinstance(data, tp)
    return True


def same(a: Any, b: Any) -> bool:
    """Equal, with the same types all the way down (1 == 1.0 == True, (1,) != [1] aside)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return a == b


def check_decode(tp: Any, data: Any) -> Any:
    """from_jsonable and loads agree with the reference (value, types, or the exception)."""
    try:
        expected = ref_from_jsonable(tp, data)
    except Exception as exc:
        with pytest.raises(type(exc)):
            from_jsonable(tp, data)
        return exc
    got = from_jsonable(tp, data)
    assert same(got, expected), (tp, data, got, expected)
    assert same(from_jsonable(tp, data), expected)  # the cached path
    try:
        text = json.dumps(data)
    except (TypeError, ValueError):
        return got
    assert same(loads(tp, text), ref_from_jsonable(tp, json.loads(text)))
    return got


def check_encode(obj: Any) -> Any:
    """to_jsonable and dumps agree with the reference."""
    expected = ref_to_jsonable(obj)
    got = to_jsonable(obj)
    assert same(got, expected), (obj, got, expected)
    assert same(to_jsonable(obj), expected)
    try:
        text = json.dumps(expected, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        with pytest.raises(type(exc)):
            dumps(obj)
    else:
        assert dumps(obj) == text
    return got


# --------------------------------------------------------------------- real data


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixtures_round_trip_byte_for_byte(path):
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    result = TraceResult.from_json(text)
    assert same(result, ref_from_jsonable(TraceResult, data))
    assert same(from_jsonable(TraceResult, data), result)
    assert same(loads(TraceResult, text), result)
    assert to_jsonable(result) == data
    assert same(to_jsonable(result), ref_to_jsonable(result))
    assert dumps(result) == result.to_json() == text


def test_fixtures_exist():
    assert len(FIXTURE_FILES) >= 4


def test_graph_and_layout():
    g = sample_graph()
    check_encode(g)
    data = to_jsonable(g)
    assert same(from_jsonable(Graph, data), g)
    check_decode(Graph, data)
    lay = compute_layout(g, expanded_to_depth(g, 2), engine="layered")
    assert lay.clusters and lay.edges
    check_encode(lay)
    check_decode(Layout, to_jsonable(lay))
    assert Layout.from_json(lay.to_json()) == lay
    assert lay.to_json() == json.dumps(ref_to_jsonable(lay), separators=(",", ":"))
    assert loads(Layout, dumps(lay)) == lay
    # an older writer: keys missing, an int where a float goes, keys this reader does not know
    sparse = to_jsonable(lay)
    del sparse["clusters"], sparse["edges"][0]["aval"], sparse["nodes"][0]["h"]
    sparse["width"] = 640
    sparse["edges"][0]["points"][0] = [1, 2]
    sparse["future"] = {"x": 1}
    sparse["nodes"][1]["future"] = 3
    with pytest.raises(TypeError):  # NodeBox.h has no default, as before
        from_jsonable(Layout, sparse)
    sparse["nodes"][0]["h"] = 7
    got = check_decode(Layout, sparse)
    assert got.width == 640.0 and type(got.width) is float and got.clusters == ()
    assert got.edges[0].points[0] == (1.0, 2.0) and type(got.edges[0].points[0][0]) is float


def test_error_info_and_request():
    info = ErrorInfo("user-code", "boom", "trace", "ValueError", SourceLoc("f.py", 3), (Frame("f.py", 3, "f", "x = 1"),), "", "h")
    check_encode(info)
    check_decode(ErrorInfo, to_jsonable(info))
    check_decode(ErrorInfo, {"kind": "crash", "message": "died", "location": None, "traceback": [], "extra": 1})
    check_decode(TraceRequest, {"function": {"qualname": "f", "path": "m.py"}, "args": "x=1"})
    with pytest.raises(ValueError, match="expected an object for ErrorInfo, got list"):
        from_jsonable(ErrorInfo, [1])
    assert from_jsonable(ErrorInfo, None) is None


# --------------------------------------------------------------------- hand-made types


@dataclass(frozen=True)
class Leaf:
    name: str
    weight: float = 1.0
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Other:
    code: int
    note: str = ""


Kind = Literal["a", "b", 3]


@dataclass(frozen=True)
class Everything:
    label: str
    leaf: Leaf
    maybe: Leaf | None = None
    either: Leaf | Other | int | None = None
    either_rev: Other | Leaf | None = None
    old_optional: Optional[float] = None  # noqa: UP045 - the typing spelling on purpose (the codec must read Optional[...] too)
    number_or_text: float | str = 0.0
    numbers: tuple[float, ...] = ()
    pair: tuple[float, float] = (0.0, 0.0)
    triple: tuple[int, str, Leaf] | None = None
    nested: tuple[tuple[str, str], ...] = ()
    leaves: tuple[Leaf, ...] = ()
    listed: list[Leaf] = field(default_factory=list)
    by_name: dict[str, Leaf] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)
    deep: dict[str, tuple[Leaf | None, ...]] = field(default_factory=dict)
    kind: Kind = "a"
    anything: Any = None
    flag: bool = False
    count: int = 0


def sample_everything() -> Everything:
    a, b = Leaf("a", 2.5, ("x", "y")), Leaf("b")
    return Everything(
        "all",
        a,
        maybe=b,
        either=a,
        either_rev=Other(7, "seven"),
        old_optional=0.5,
        number_or_text="text",
        numbers=(1.0, 2.5),
        pair=(3.0, 4.0),
        triple=(1, "one", b),
        nested=(("k", "v"), ("k2", "v2")),
        leaves=(a, b),
        listed=[b, a],
        by_name={"a": a, "b": b},
        scores={"x": 1.5},
        deep={"d": (a, None, b)},
        kind=3,
        anything={"free": [1, (2, 3)], 4: "four"},
        flag=True,
        count=5,
    )


def test_everything_round_trips():
    e = sample_everything()
    data = check_encode(e)
    assert json.loads(json.dumps(data)) == data  # plain JSON values only
    back = check_decode(Everything, data)
    assert back == dataclasses.replace(e, anything={"free": [1, [2, 3]], "4": "four"})
    assert check_decode(Everything, json.loads(dumps(e))) == back
    assert type(back.numbers) is tuple and type(back.listed) is list and type(back.nested[0]) is tuple


def test_defaults_unknown_keys_and_nulls():
    got = check_decode(Everything, {"label": "x", "leaf": {"name": "l", "unknown": 1}, "also_unknown": [1]})
    assert got == Everything("x", Leaf("l"))
    check_decode(Everything, {"label": "x", "leaf": {"name": "l"}, "maybe": None, "numbers": None, "by_name": None})
    check_decode(Everything, {"label": None, "leaf": None})
    for tp in (Everything, Leaf, tuple[Leaf, ...], dict[str, Leaf], list[int], float, Leaf | Other, Any):
        assert from_jsonable(tp, None) is None and loads(tp, "null") is None
    with pytest.raises(TypeError):  # a field without a default is missing
        from_jsonable(Everything, {"label": "x"})
    check_decode(Everything, {"label": "x"})


def test_floats_accept_ints():
    got = check_decode(
        Everything,
        {
            "label": "x",
            "leaf": {"name": "l", "weight": 3},
            "old_optional": 2,
            "numbers": [1, 2.5, True],
            "pair": [1, 2],
            "scores": {"s": 4},
            "number_or_text": 5,  # not a float instance, not a str: left as it is (first-fit union)
            "count": 2.0,  # an int field keeps what it is given
        },
    )
    assert got.leaf.weight == 3.0 and type(got.leaf.weight) is float
    assert [type(v) for v in got.numbers] == [float, float, float] and got.pair == (1.0, 2.0)
    assert type(got.number_or_text) is int and type(got.count) is float


def test_unions_first_fit_in_declared_order():
    leafish = {"name": "n", "code": 1}
    got = check_decode(Everything, {"label": "x", "leaf": leafish, "either": leafish, "either_rev": leafish})
    assert got.either == Leaf("n") and got.either_rev == Other(1)
    # A | B == B | A for typing, but the order decides: the cache must tell them apart
    for tp, want in ((Leaf | Other, Leaf), (Other | Leaf, Other), (tuple[Other | Leaf, ...], Other)):
        value = from_jsonable(tp, [leafish] if get_origin(tp) is tuple else leafish)
        assert type(value[0] if isinstance(value, tuple) else value) is want
    for tp in (tuple[Leaf | Other, ...], tuple[Other | Leaf, ...], int | float, float | int, float | dict[str, float]):
        for data in ([leafish], 1, 1.5, {"a": 1}, "s", [1]):
            check_decode(tp, data)
    assert from_jsonable(int | str, 2.5) == 2.5  # nothing fits: the data as it is
    assert check_decode(Everything, {"label": "x", "leaf": {"name": "l"}, "either": 4}).either == 4
    assert check_decode(Everything, {"label": "x", "leaf": {"name": "l"}, "either": "str"}).either == "str"


def test_tuples_of_every_shape():
    check_decode(tuple[float, float], [1, 2, 3])  # extra items dropped
    check_decode(tuple[float, float], [1])
    check_decode(tuple[float, float], (1, 2))  # a tuple (not JSON, but allowed)
    check_decode(tuple[int, str, Leaf], [1, "a", {"name": "l"}])
    check_decode(tuple[()], [1, 2])
    check_decode(typing.Tuple, [1, 2])  # noqa: UP006 - the bare typing alias on purpose: the codec reads it too
    check_decode(tuple[tuple[float, float], ...], [[1, 2], [3.5, 4], [5]])
    check_decode(tuple[str, ...], ["a", "b"])
    check_decode(list[tuple[int, ...]], [[1], [], [2, 3]])
    check_decode(dict[str, tuple[float, float]], {"p": [0, 1]})
    check_decode(tuple[Leaf, ...], [{"name": "a"}, None, {"name": "b", "weight": 2}])


def test_encode_follows_the_values_not_the_declared_types():
    lying = Everything(
        label=("not", "a", "str"),  # type: ignore[arg-type]
        leaf=Other(1),  # type: ignore[arg-type]
        numbers=[1, 2],  # type: ignore[arg-type]
        pair=(1, 2, 3),  # type: ignore[arg-type]
        nested=((Leaf("in"), {"k": 1}),),  # type: ignore[arg-type]
        by_name={1: Leaf("one"), None: Leaf("none"), 2.5: Leaf("f")},  # type: ignore[dict-item]
        scores={"x": Leaf("s")},  # type: ignore[dict-item]
        kind=Leaf("k"),  # type: ignore[arg-type]
        anything=collections.namedtuple("P", "x y")(1, Leaf("p")),
        flag=1,  # type: ignore[arg-type]
        count=True,
    )
    data = check_encode(lying)
    assert data["label"] == ["not", "a", "str"] and data["by_name"]["None"] == {"name": "none", "weight": 1.0, "tags": []}

    @dataclass(frozen=True)
    class Sub(Leaf):
        extra: int = 9

    check_encode(Everything("x", Sub("s"), maybe=Sub("m", extra=1), leaves=(Sub("t"), Leaf("u"))))
    check_encode({"plain": [Leaf("a"), (1, 2), {3: Sub("b")}], "set": 1})
    check_encode([Leaf, Everything, None, 1.5, "s"])  # classes themselves are not instances
    with pytest.raises(TypeError):
        dumps(Everything("x", Leaf("l"), anything={1, 2}))  # a set is not JSON, as with json.dumps


@dataclass(frozen=True)
class Tree:
    name: str
    children: tuple[Tree, ...] = ()
    parent: Tree | None = None


def test_recursive_types():
    t = Tree("root", (Tree("a", (Tree("a1"),)), Tree("b")), Tree("up"))
    data = check_encode(t)
    assert check_decode(Tree, data) == t
    check_decode(tuple[Tree, ...], [data, data])


@dataclass
class Special:
    a: int
    b: str = "b"
    derived: str = field(init=False, default="")
    _: dataclasses.KW_ONLY
    c: float = 0.0
    d: tuple[int, ...] = ()

    def __post_init__(self):
        self.derived = f"{self.a}{self.b}"


@dataclass
class CustomInit:
    x: int
    y: int

    def __init__(self, y: int, x: int) -> None:  # same names, other order: pass by keyword
        self.x, self.y = x, y


@dataclass
class Empty:
    pass


def test_kw_only_init_false_and_custom_init():
    s = Special(1, "z", c=2, d=(3,))
    data = check_encode(s)
    assert data == {"a": 1, "b": "z", "derived": "1z", "c": 2, "d": [3]}
    assert check_decode(Special, data) == s  # `derived` is written, and not passed back
    check_decode(Special, {"a": 2, "c": 1})
    assert check_decode(CustomInit, {"x": 1, "y": 2}) == CustomInit(y=2, x=1)
    assert check_decode(Empty, {"x": 1}) == Empty()


def test_odd_inputs_behave_as_before():
    for tp, data in [
        (Leaf, "text"),
        (Leaf, 3),
        (Leaf, collections.OrderedDict(name="od")),  # a dict subclass
        (Leaf, types.MappingProxyType({"name": "mp", "weight": 1.0, "tags": []})),  # a mapping, not a dict
        (Leaf, {"name": "n", "weight": "heavy", "tags": "ab"}),
        (Leaf, {"name": "n", "weight": None, "tags": None}),
        (tuple[float, float], ["a", None]),
        (tuple[float, ...], ["a", None, 1]),
        (Everything, {"label": "x", "leaf": {"name": "l"}, "pair": ["p", None], "old_optional": "q", "scores": {"s": None}}),
        (tuple[Leaf, ...], [1]),
        (list[Leaf], [{"name": "a"}, "b"]),
        (dict[str, float], {"a": 1, "b": "c"}),
        (dict[str, int], [["a", 1]]),
        (Literal["x"], "not x"),
        (float, True),
        (float, "1.5"),
        (str, 5),
        (Any, {"a": (1,)}),
        (tuple[Literal[[1]], ...], [[1], 2]),  # an unhashable type: not cached, still decoded
    ]:
        check_decode(tp, data)


def test_unresolvable_hints_fail_when_used_like_before(monkeypatch):
    mod = types.ModuleType("serialize_test_bad")
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    exec(
        "from __future__ import annotations\nfrom dataclasses import dataclass\n@dataclass\nclass Bad:\n    x: Missing\n    y: int = 0\n",
        mod.__dict__,
    )
    bad = mod.Bad
    assert from_jsonable(bad, None) is None
    with pytest.raises(ValueError):
        from_jsonable(bad, [1])
    with pytest.raises(NameError):
        from_jsonable(bad, {"x": 1})
    with pytest.raises(NameError):
        from_jsonable(tuple[bad, ...], [{"x": 1}])
    assert from_jsonable(tuple[bad, ...], []) == ()
    assert to_jsonable(bad(1)) == {"x": 1, "y": 0}  # encoding needs no hints
    mod.Missing = float  # resolvable now: decodes
    assert from_jsonable(bad, {"x": 1}) == bad(1.0) and type(from_jsonable(bad, {"x": 1}).x) is float
    assert from_jsonable(tuple[bad, ...], [{"x": 2}]) == (bad(2.0),)


def test_threads_share_the_cache():
    @dataclass(frozen=True)
    class Fresh:
        leaf: Leaf
        many: tuple[Tree, ...] = ()

    data = {"leaf": {"name": "l"}, "many": [{"name": "t", "children": [{"name": "c"}]}]}
    want = Fresh(Leaf("l"), (Tree("t", (Tree("c"),)),))
    encoded = ref_to_jsonable(want)
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def work():
        try:
            barrier.wait()
            for _ in range(50):
                assert from_jsonable(Fresh, data) == want
                assert to_jsonable(want) == encoded
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_gc_paused_nests_and_restores():
    import gc

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError
    assert gc.isenabled()
    to_jsonable(sample_everything())
    from_jsonable(Everything, to_jsonable(sample_everything()))
    assert gc.isenabled()


def test_gc_stays_paused_until_the_last_region_of_any_thread_ends():
    """The reader, IR and scene threads pause the collector at once: the first region to end must
    not let a collection into the others (a full one over a 50k graph held the GIL ~50 ms)."""
    import gc
    import threading

    inside, leave, left = threading.Event(), threading.Event(), threading.Event()

    def other() -> None:
        with gc_paused():
            inside.set()
            leave.wait(5)
        left.set()

    with gc_paused():
        thread = threading.Thread(target=other)
        thread.start()
        assert inside.wait(5)
    assert not gc.isenabled()  # this region ended first; the other thread's is still open
    leave.set()
    assert left.wait(5)
    thread.join()
    assert gc.isenabled()
    gc.disable()
    try:  # a collector off before the regions stays off after them
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_maker_builds_the_same_frozen_objects_faster():
    """`maker` fills a frozen slotted dataclass's slots directly: equal, hashable, still frozen."""
    make = maker(NodeBox)
    box = make("e1#0", 1.5, 2.0, 30.0, 20.0)
    assert box == NodeBox("e1#0", 1.5, 2.0, 30.0, 20.0) and hash(box) == hash(NodeBox("e1#0", 1.5, 2.0, 30.0, 20.0))
    assert type(box) is NodeBox
    with pytest.raises(dataclasses.FrozenInstanceError):
        box.x = 3.0  # type: ignore[misc]

    @dataclasses.dataclass(slots=True)
    class Loose:
        a: int

    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    for cls in (Loose, NoSlots):
        with pytest.raises(TypeError):
            maker(cls)
