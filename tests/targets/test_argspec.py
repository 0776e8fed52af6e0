"""Argument specs: parsing, canonical formatting, and errors that point at the bad token."""

from __future__ import annotations

import pickle

import pytest

from jaxscope.targets.argspec import (
    ACCEPTED_FORMS,
    ArraySpec,
    CallSpec,
    DictSpec,
    ListSpec,
    SpecError,
    StaticValue,
    TupleSpec,
    contains_array,
    format_call,
    format_spec,
    is_static,
    parse_call,
    parse_spec,
)

F32 = "float32"


def err(text: str, *, spec: bool = False) -> SpecError:
    with pytest.raises(SpecError) as info:
        (parse_spec if spec else parse_call)(text)
    return info.value


def assert_points(e: SpecError, text: str, token: str) -> None:
    """The error quotes `token`, and its offset is where `token` starts in `text`."""
    assert e.text == text
    assert e.token == token
    assert e.offset is not None and text[e.offset : e.offset + len(token)] == token


# ---------------------------------------------------------------------------- success


def test_the_documented_example():
    call = parse_call('f32[8,128], {"b": f32[128]}, 3, training=True')
    assert call.args == (
        ArraySpec(F32, (8, 128)),
        DictSpec((("b", ArraySpec(F32, (128,))),)),
        StaticValue(3),
    )
    assert call.kwargs == (("training", StaticValue(True)),)
    assert call.text == 'f32[8,128], {"b": f32[128]}, 3, training=True'


def test_empty_text_is_an_empty_call():
    assert parse_call("") == CallSpec((), (), "")
    assert parse_call("   ").args == () and parse_call("   ").kwargs == ()


@pytest.mark.parametrize(
    ("text", "dtype", "shape"),
    [
        ("f16[1]", "float16", (1,)),
        ("bf16[2,3]", "bfloat16", (2, 3)),
        ("f32[8,128]", "float32", (8, 128)),
        ("f64[0]", "float64", (0,)),
        ("i8[1]", "int8", (1,)),
        ("i16[1]", "int16", (1,)),
        ("i32[]", "int32", ()),
        ("i64[1]", "int64", (1,)),
        ("u8[1]", "uint8", (1,)),
        ("u16[1]", "uint16", (1,)),
        ("u32[2]", "uint32", (2,)),
        ("u64[1]", "uint64", (1,)),
        ("bool[4]", "bool", (4,)),
        ("c64[1]", "complex64", (1,)),
        ("c128[1]", "complex128", (1,)),
        ("key[]", "key", ()),
        ("key[2]", "key", (2,)),
        ("float32[3]", "float32", (3,)),
        ("bfloat16[]", "bfloat16", ()),
        ("uint64[1, 2]", "uint64", (1, 2)),
        ("complex128[1]", "complex128", (1,)),
        ("f32[ ]", "float32", ()),
        ("f32[()]", "float32", ()),
        ("f32[8,128,]", "float32", (8, 128)),
    ],
)
def test_array_specs(text: str, dtype: str, shape: tuple[int, ...]):
    assert parse_spec(text) == ArraySpec(dtype, shape)


@pytest.mark.parametrize(
    ("spec", "short"),
    [
        (ArraySpec("float32", (8, 128)), "f32[8,128]"),
        (ArraySpec("bool", (4,)), "bool[4]"),
        (ArraySpec("key", ()), "key[]"),
        (ArraySpec("bfloat16", ()), "bf16[]"),
        (ArraySpec("complex128", (1, 2, 3)), "c128[1,2,3]"),
    ],
)
def test_short_is_jaxpr_notation_and_round_trips(spec: ArraySpec, short: str):
    assert spec.short() == short
    assert parse_spec(short) == spec


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3", 3),
        ("-3", -3),
        ("2.5", 2.5),
        ("-1e-3", -1e-3),
        ("1e999", float("inf")),
        ("1+2j", 1 + 2j),
        ("'relu'", "relu"),
        ('"f32[]"', "f32[]"),  # the rewrite leaves string literals alone
        ("'a' 'b'", "ab"),
        ("b'x'", b"x"),
        ("True", True),
        ("None", None),
        ("(1, 2)", (1, 2)),
        ("()", ()),
        ("(1, (2, 'x'))", (1, (2, "x"))),
        ("[1, 2]", [1, 2]),
        ("{'lr': 0.1}", {"lr": 0.1}),
        ("{1, 2}", {1, 2}),
    ],
)
def test_literals_are_static_values(text: str, value: object):
    spec = parse_spec(text)
    assert spec == StaticValue(value)
    assert is_static(spec) and not contains_array(spec)


def test_pytrees_keep_structure_and_order():
    spec = parse_spec("{'w': f32[4,3], 'b': f32[3], 'n': 2, 0: [f32[1], (i32[], None)]}")
    assert spec == DictSpec(
        (
            ("w", ArraySpec(F32, (4, 3))),
            ("b", ArraySpec(F32, (3,))),
            ("n", StaticValue(2)),
            (0, ListSpec((ArraySpec(F32, (1,)), TupleSpec((ArraySpec("int32", ()), StaticValue(None)))))),
        )
    )
    assert contains_array(spec) and not is_static(spec)
    assert parse_spec("(f32[2],)") == TupleSpec((ArraySpec(F32, (2,)),))


def test_static_only_when_no_array_inside():
    assert is_static(parse_spec("(1, [2, {'a': 'b'}])"))
    assert not is_static(parse_spec("(1, [2, {'a': f32[]}])"))
    assert contains_array(ArraySpec(F32, ()))
    assert not contains_array(TupleSpec((StaticValue(1),)))


def test_keywords_in_order_and_multiline_text_with_comments():
    text = "f32[2],  # x\n  i32[],\n  training=True, n=f32[] # the end"
    call = parse_call(text)
    assert call.args == (ArraySpec(F32, (2,)), ArraySpec("int32", ()))
    assert call.kwargs == (("training", StaticValue(True)), ("n", ArraySpec(F32, ())))


def test_trailing_comma_and_crlf():
    assert parse_call("f32[2],").args == (ArraySpec(F32, (2,)),)
    assert parse_call("f32[2],\r\ni32[]").args == (ArraySpec(F32, (2,)), ArraySpec("int32", ()))


@pytest.mark.parametrize(
    "text",
    [
        "f32[8,128], {'b': f32[128]}, 3, training=True",
        "i32[], key[], key[2], bool[4], u32[2], bf16[2,3]",
        "(f32[2],), [f32[1], 2], {'a': (1, f32[])}",
        "'f32[]', -1, 2.5, None, (1, 2), [1], {'k': 'v'}, 1e999, -1e999, 1j",
        "x=f32[3], y=(1, 2)",
        "",
    ],
)
def test_format_round_trips(text: str):
    call = parse_call(text)
    again = parse_call(format_call(call))
    assert (again.args, again.kwargs) == (call.args, call.kwargs)
    for spec in call.args:
        assert parse_spec(format_spec(spec)) == spec


def test_format_is_canonical():
    assert format_call(parse_call('f32[ 8 , 128 ],{"b":float32[128]},3,training=True')) == ("f32[8,128], {'b': f32[128]}, 3, training=True")
    assert format_spec(TupleSpec((ArraySpec(F32, (2,)),))) == "(f32[2],)"
    assert format_spec(StaticValue((1,))) == "(1,)"


# ---------------------------------------------------------------------------- errors


def test_unknown_dtype():
    e = err("f32[2], f33[2]")
    assert e.message == "unknown dtype 'f33' in 'f33[2]'"
    assert_points(e, "f32[2], f33[2]", "f33")


def test_unknown_dtype_with_empty_shape_quotes_the_users_text():
    e = err("1, f33[]")
    assert e.message == "unknown dtype 'f33' in 'f33[]'"  # not the rewritten 'f33[()]'
    assert_points(e, "1, f33[]", "f33")


def test_symbolic_dimension():
    e = err("f32[8, n]")
    assert "shape dimensions must be non-negative integers, got 'n'" in e.message
    assert "symbolic" in e.message and "not supported yet" in e.message
    assert_points(e, "f32[8, n]", "n")


@pytest.mark.parametrize(("text", "token"), [("f32[-1]", "-1"), ("f32[2.5]", "2.5"), ("f32[True]", "True"), ("f32['a']", "'a'")])
def test_bad_dimensions(text: str, token: str):
    e = err(text)
    assert e.message.startswith(f"shape dimensions must be non-negative integers, got {token!r}")
    assert "symbolic" not in e.message
    assert_points(e, text, token)


@pytest.mark.parametrize(
    ("text", "token"),
    [
        ("foo(3)", "foo(3)"),
        ("1, foo(f32[])", "foo(f32[])"),  # offsets map back through the f32[] rewrite
        ("x", "x"),
        ("jnp.float32[2]", "jnp.float32[2]"),
        ("lambda: 1", "lambda: 1"),
        ("1 + f32[2]", "1 + f32[2]"),
        ("{'a': f32[], 'b': g()}", "g()"),
        ("f'{x}'", "f'{x}'"),
    ],
)
def test_not_a_literal(text: str, token: str):
    e = err(text)
    assert e.message == f"{token!r} is not a literal or an array spec"
    assert_points(e, text, token)


def test_bare_dtype_needs_a_shape():
    e = err("f32[2], f32")
    assert "needs a shape" in e.message and "f32[]" in e.message
    assert_points(e, "f32[2], f32", "f32")
    assert e.offset == 8


def test_positional_after_keyword():
    text = "f32[2], training=True, i32[]"
    e = err(text)
    assert e.message == "positional argument follows keyword argument"
    assert_points(e, text, "i32[]")


def test_positional_after_keyword_on_another_line():
    text = "a=1,\n  (1, 2)"
    e = err(text)
    assert e.message == "positional argument follows keyword argument"
    assert_points(e, text, "(1, 2)")
    assert e.offset == 7


@pytest.mark.parametrize(("text", "token"), [("*xs", "*xs"), ("f32[2], *xs", "*xs"), ("**kw", "**kw"), ("f32[2], **kw", "**kw")])
def test_star_args_are_not_supported(text: str, token: str):
    e = err(text)
    assert e.message.startswith("*args/**kwargs are not supported")
    assert_points(e, text, token)


def test_star_inside_containers():
    e = err("(1, *xs)")
    assert "unpacking" in e.message
    assert_points(e, "(1, *xs)", "*xs")
    e = err("{'a': 1, **d}")
    assert "unpacking" in e.message
    assert_points(e, "{'a': 1, **d}", "**d")


def test_duplicate_keyword():
    text = "x=f32[2], y=1, x=2"
    e = err(text)
    assert e.message == "duplicate keyword argument 'x'"
    assert e.offset == 15 and e.token == "x"


@pytest.mark.parametrize(
    ("text", "offset", "token", "words"),
    [
        ("f32[2", 3, "[", "'[' is never closed"),
        ("{'a': f32[2]", 0, "{", "'{' is never closed"),
        ("f32[2]]", 6, "]", "']' closes nothing"),
        ("f32[2], 3)", 9, ")", "')' closes nothing"),
        ("(f32[2]]", 7, "]", "'(' closed by ']'"),
    ],
)
def test_unbalanced_brackets(text: str, offset: int, token: str, words: str):
    e = err(text)
    assert e.message.startswith("unbalanced brackets") and words in e.message
    assert (e.offset, e.token) == (offset, token)


def test_brackets_inside_strings_do_not_count():
    assert parse_call("'(', f32[2], ']['").args[0] == StaticValue("(")


def test_syntax_error_offsets_are_in_the_users_text():
    text = "i32[], f32[] f32[2]"  # two rewrites before the error: offsets must map back
    e = err(text)
    assert "invalid syntax" in e.message
    assert e.offset is not None and e.offset <= text.index("f32[2]")
    assert text[e.offset : e.offset + len(e.token)] == e.token


@pytest.mark.parametrize(("text", "offset", "token"), [("1, $", 3, "$"), ("'abc", 0, "'"), ("1, 2 3", 3, "2")])
def test_syntax_errors(text: str, offset: int, token: str):
    e = err(text)
    assert e.message.startswith("invalid syntax")
    assert (e.offset, e.token) == (offset, token)


def test_unicode_before_the_error():
    text = "'ééé', f33[1]"  # AST columns count bytes; offsets here count characters
    e = err(text)
    assert_points(e, text, "f33")
    assert e.offset == 7


def test_dict_key_errors():
    e = err("{f32[2]: 1}")
    assert "dict keys must be literals" in e.message
    assert_points(e, "{f32[2]: 1}", "f32[2]")
    e = err("{'a': f32[2], 'a': 1}")
    assert e.message == "duplicate dict key 'a'"
    assert e.offset == 14
    e = err("{[1]: f32[2]}")
    assert "hashable" in e.message
    assert_points(e, "{[1]: f32[2]}", "[1]")


def test_sets_cannot_hold_arrays():
    e = err("{1, f32[2]}")
    assert "set" in e.message
    assert e.offset == 0


def test_nul_character():
    e = err("f32[2],\0")
    assert "NUL" in e.message and e.offset == 7


def test_parse_spec_wants_one_value():
    e = err("", spec=True)
    assert e.message == "expected a value" and e.offset is None
    e = err("f32[2], i32[]", spec=True)
    assert e.message == "expected a single value, got 2 values"
    assert_points(e, "f32[2], i32[]", "i32[]")
    e = err("x=f32[2]", spec=True)
    assert e.message == "expected a single value, got a keyword argument"
    assert e.offset == 0


def test_str_shows_the_text_a_caret_and_the_accepted_forms():
    e = err("f32[2], f33[4, 4]")
    lines = str(e).splitlines()
    assert lines[0] == "unknown dtype 'f33' in 'f33[4, 4]'"
    assert lines[1] == "  f32[2], f33[4, 4]"
    assert lines[2] == "          ^^^"
    assert str(e).endswith(ACCEPTED_FORMS)


def test_str_of_a_multiline_text_shows_the_offending_line():
    e = err("f32[2],\n  foo()")
    lines = str(e).splitlines()
    assert lines[1:3] == ["    foo()", "    ^^^^^"]


def test_accepted_forms_lists_examples():
    for example in ("f32[8,128]", "i32[]", "key[]", "bf16", "training=True", '{"w"'):
        assert example in ACCEPTED_FORMS


def test_spec_error_is_a_value_error_and_pickles():
    e = err("f33[2]")
    assert isinstance(e, ValueError)
    again = pickle.loads(pickle.dumps(e))
    assert (again.message, again.text, again.offset, again.token) == (e.message, e.text, e.offset, e.token)
    assert str(again) == str(e)


def test_fast_tokenizer_agrees_with_tokenize():
    """The regex tokenizer either declines a text or gives exactly `tokenize`'s tokens for it."""
    import random

    from jaxscope.targets.tokens import fast_tokens, python_tokens

    everyday = "{'w': [f32[16,16], f32[16]], 'b': (i32[], key<fry>[])}, f32[8, 3], n=3, lr=1e-3, eps=.5, *, flag=True"
    assert fast_tokens(everyday) == python_tokens(everyday)[0]
    triple = ("f32[3], s='''a', f32[3] 'b'''", 's="""a" i32[] "b"""', "x=''''")  # text inside is not code
    for declined in ("0x1F", "1j", "1_000", "b'x'", "007", "x  # note", "a\nb", "'\\n'", "x != y", "ñ", "a<>b", *triple):
        assert fast_tokens(declined) is None, declined
    rng = random.Random(1)
    alphabet = [*"af3_ 0.1e-[](){},:=*+-<>'\"\n.#bjx\\E\t", "f32", "key<fry>", "i32[]", "1e5", "0x", "**", "...", "'''", "<>"]
    agreed = 0
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        fast = fast_tokens(text)
        if fast is not None:
            assert (fast, False) == python_tokens(text), text
            agreed += 1
    assert agreed > 5_000  # the fast path is taken for most texts without line breaks or comments


@pytest.mark.parametrize(
    "broken",
    [
        "f32[4],, f32[2]",
        "f32[4]  f32[2]",
        "f32[4, , 3]",
        "{'a' f32[2]}",
        "{'a': }",
        "(1, 2 3)",
        "lambda: , 2",
        "1 if x else",
        "f32[2] # a note\n f32[3]",
        "{'w': [f32[2], ,]}",
        "n=3",
    ],
)
def test_a_syntax_error_in_a_long_list_is_located_like_in_a_short_one(broken: str):
    """CPython's parser gives up (RecursionError) on a syntax error in a long sequence: the error
    is then found item by item, with the message and place the same error has in a short list."""
    short, long = "[f32[1], " + broken + "]", "[" + "f32[1], " * 2000 + broken + "]"
    here, there = err(short), err(long)
    assert here.message.startswith("invalid syntax")
    assert (there.message, there.offset - len(long) + len(short), there.token) == (here.message, here.offset, here.token)


def test_deep_nesting_is_still_reported_as_such():
    assert err("-" * 3000 + "1").message == "the text is nested too deeply to parse"
    assert "too many nested parentheses" in err("[" * 300 + "]" * 300).message


@pytest.mark.parametrize(
    ("text", "fragment", "token"),
    [
        ("f32[99999999999999999999]", "beyond what XLA takes", "99999999999999999999"),
        ("x=f32[9223372036854775807]", "more than XLA can address", "f32[9223372036854775807]"),
        ("f32[0, 99999999999999999999999]", "beyond what XLA takes", "99999999999999999999999"),
    ],
)
def test_arrays_xla_cannot_address_are_refused_up_front(text, fragment, token):
    error = err(text)
    assert fragment in error.message
    assert_points(error, text, token)


def test_big_arrays_xla_can_address_are_kept():
    assert parse_spec("f32[100000, 100000]") == ArraySpec(F32, (100000, 100000))
    assert parse_spec("u8[9223372036854775807]") == ArraySpec("uint8", (2**63 - 1,))
