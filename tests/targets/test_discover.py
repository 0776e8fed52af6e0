"""Discovery lists functions and reads JAXSCOPE_ARGS with ast alone: the user's file never runs."""

from __future__ import annotations

import os
import pickle
import textwrap
from pathlib import Path

import pytest

from jaxscope.targets.discover import (
    EXAMPLES_VAR,
    DiscoveryError,
    FunctionInfo,
    ModuleInfo,
    ParamInfo,
    discover_file,
    discover_source,
)

SOURCE = textwrap.dedent(
    '''\
    """A tiny model.

    More words.
    """
    import functools
    from functools import partial

    import jax

    raise SystemExit("discovery must never run this file")


    @jax.jit
    def predict(params, x, *, training: bool = False):
        """Forward pass.

        Details.
        """
        return x


    @partial(jax.jit, static_argnames='n')
    async def fetch(a, /, b=1, *rest, n: int = 3, **extra) -> int:
        return a


    def _step(state, batch):
        return state


    step = jax.jit(_step)
    grad_step = jax.jit(jax.grad(_step), donate_argnums=0)
    not_wrapped = jax.jit(lambda x: x)
    unknown = jax.jit(undefined_fn)
    alias = _step


    class Model:
        def __call__(self, x):
            """Call it."""
            return x

        @staticmethod
        def init(key):
            return key

        class Inner:
            def deep(self):
                return 1


    JAXSCOPE_ARGS = {"predict": "f32[8,4], {'w': f32[4,3]}", "step": "f32[8], training=True", "Model.init": "key[]"}
    '''
)


@pytest.fixture(scope="module")
def info() -> ModuleInfo:
    return discover_source(SOURCE, "model.py")


def test_functions_in_source_order(info: ModuleInfo):
    names = [f.name for f in info.functions]
    assert names == ["predict", "fetch", "_step", "step", "grad_step", "Model.__call__", "Model.init", "Model.Inner.deep"]
    assert info.path == "model.py"
    assert info.doc == "A tiny model."
    assert info.warnings == ()


def test_def_details(info: ModuleInfo):
    predict = info.get("predict")
    assert predict == FunctionInfo(
        name="predict",
        line=14,
        end_line=19,
        params=(
            ParamInfo("params", "positional"),
            ParamInfo("x", "positional"),
            ParamInfo("training", "keyword_only", default="False", annotation="bool"),
        ),
        decorators=("jax.jit",),
        doc="Forward pass.",
        example_args="f32[8,4], {'w': f32[4,3]}",
        kind="def",
    )


def test_every_parameter_kind(info: ModuleInfo):
    fetch = info.get("fetch")
    assert fetch is not None and fetch.kind == "def"
    assert fetch.params == (
        ParamInfo("a", "positional_only"),
        ParamInfo("b", "positional", default="1"),
        ParamInfo("rest", "var_positional"),
        ParamInfo("n", "keyword_only", default="3", annotation="int"),
        ParamInfo("extra", "var_keyword"),
    )
    assert fetch.decorators == ("partial(jax.jit, static_argnames='n')",)
    assert fetch.doc == "" and fetch.example_args is None


def test_assigned_wrappers(info: ModuleInfo):
    step = info.get("step")
    assert step is not None
    assert (step.kind, step.line, step.end_line, step.decorators) == ("assigned", 31, 31, ("jax.jit",))
    assert step.params == info.get("_step").params  # type: ignore[union-attr]
    assert step.example_args == "f32[8], training=True"
    grad_step = info.get("grad_step")
    assert grad_step is not None and grad_step.decorators == ("jax.jit", "jax.grad")
    for name in ("not_wrapped", "unknown", "alias"):
        assert info.get(name) is None


def test_methods(info: ModuleInfo):
    call = info.get("Model.__call__")
    assert call is not None and call.kind == "def" and call.doc == "Call it."
    assert [p.name for p in call.params] == ["self", "x"]
    init = info.get("Model.init")
    assert init is not None and init.decorators == ("staticmethod",) and init.example_args == "key[]"


def test_example_args(info: ModuleInfo):
    assert info.example_args == {
        "predict": "f32[8,4], {'w': f32[4,3]}",
        "step": "f32[8], training=True",
        "Model.init": "key[]",
    }
    assert EXAMPLES_VAR == "JAXSCOPE_ARGS"


def test_example_args_are_not_validated():
    info = discover_source("def f(x): pass\nJAXSCOPE_ARGS = {'f': 'f33[2], )('}\n")
    assert info.get("f").example_args == "f33[2], )("  # type: ignore[union-attr]
    assert info.warnings == ()


def test_annotated_example_args():
    info = discover_source("def f(x): pass\nJAXSCOPE_ARGS: dict[str, str] = {'f': 'f32[2]'}\n")
    assert info.example_args == {"f": "f32[2]"}


def test_last_example_assignment_wins():
    info = discover_source("def f(x): pass\nJAXSCOPE_ARGS = {'f': 'a'}\nJAXSCOPE_ARGS = {'f': 'b'}\n")
    assert info.example_args == {"f": "b"}


def test_non_literal_examples_are_ignored_with_a_warning():
    info = discover_source("def f(x): pass\nARGS = {}\nJAXSCOPE_ARGS = dict(f='f32[2]')\n")
    assert info.example_args == {}
    assert len(info.warnings) == 1 and "line 3" in info.warnings[0] and EXAMPLES_VAR in info.warnings[0]


def test_wrong_typed_entries_are_skipped_with_warnings():
    source = textwrap.dedent(
        """\
        def f(x): pass
        def g(x): pass
        def h(x): pass
        OTHER = {}
        JAXSCOPE_ARGS = {
            'f': 'f32[2]',
            'g': 3,
            1: 'f32[1]',
            'h': 'a' + 'b',
            **OTHER,
            'f': 'f32[3]',
        }
        """
    )
    info = discover_source(source)
    assert info.example_args == {"f": "f32[3]"}
    warnings = "\n".join(info.warnings)
    for line in (7, 8, 9, 10, 11):
        assert f"line {line}:" in warnings
    assert len(info.warnings) == 5


def test_examples_for_unknown_functions_warn():
    info = discover_source("def f(x): pass\nJAXSCOPE_ARGS = {'f': 'f32[2]', 'nope': 'f32[1]'}\n")
    assert info.example_args == {"f": "f32[2]", "nope": "f32[1]"}
    assert len(info.warnings) == 1 and "'nope'" in info.warnings[0] and "line 2" in info.warnings[0]


def test_rebinding_replaces_the_earlier_entry():
    source = "import jax\ndef f(x): pass\ndef g(x): pass\nf = jax.jit(f)\ndef g(y): pass\n"
    info = discover_source(source)
    assert [(fn.name, fn.kind, fn.line) for fn in info.functions] == [("f", "assigned", 4), ("g", "def", 5)]
    assert info.get("g").params == (ParamInfo("y", "positional"),)  # type: ignore[union-attr]


def test_only_earlier_defs_are_wrapped_and_nested_defs_are_not_listed():
    source = "import jax\nstep = jax.jit(_step)\ndef _step(x):\n    def inner(y): pass\n    return x\n"
    info = discover_source(source)
    assert [fn.name for fn in info.functions] == ["_step"]


def test_multiline_defaults_and_annotations_keep_their_source_text():
    info = discover_source("def f(x: 'jax.Array' = None, shape=(1,\n 2)):\n    pass\n")
    assert info.get("f").params == (  # type: ignore[union-attr]
        ParamInfo("x", "positional", default="None", annotation="'jax.Array'"),
        ParamInfo("shape", "positional", default="(1,\n 2)"),
    )


def test_empty_source():
    info = discover_source("")
    assert info.functions == () and info.example_args == {} and info.warnings == () and info.doc == ""
    assert info.get("anything") is None


def test_syntax_error_names_line_and_column():
    with pytest.raises(DiscoveryError) as exc:
        discover_source("def f(x):\n    return x +\n", "bad.py")
    e = exc.value
    assert (e.path, e.line) == ("bad.py", 2)
    assert e.col is not None and e.col >= 0
    assert f"line 2, column {e.col + 1}" in e.message
    assert str(e).startswith("bad.py:2: syntax error")


# ---------------------------------------------------------------------------- files


def test_discover_file(tmp_path: Path):
    path = tmp_path / "m.py"
    path.write_text(SOURCE, encoding="utf-8")
    info = discover_file(str(path))
    assert info.path == str(path)
    assert [f.name for f in info.functions][:2] == ["predict", "fetch"]


def test_empty_file_is_fine(tmp_path: Path):
    path = tmp_path / "empty.py"
    path.write_bytes(b"")
    assert discover_file(str(path)).functions == ()


def test_coding_cookie_and_bom_are_honoured(tmp_path: Path):
    latin = tmp_path / "latin.py"
    latin.write_bytes("# -*- coding: latin-1 -*-\ndef caf\u00e9(x): pass\n".encode("latin-1"))
    assert [f.name for f in discover_file(str(latin)).functions] == ["caf\u00e9"]
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbfdef f(x): pass\n")
    assert [f.name for f in discover_file(str(bom)).functions] == ["f"]


def _file_error(path: str) -> DiscoveryError:
    with pytest.raises(DiscoveryError) as exc:
        discover_file(path)
    return exc.value


def test_missing_file(tmp_path: Path):
    path = str(tmp_path / "nope.py")
    e = _file_error(path)
    assert e.path == path and e.line is None
    assert str(e) == f"{path}: no such file"


def test_directory(tmp_path: Path):
    e = _file_error(str(tmp_path))
    assert "is a directory" in e.message and str(e).startswith(str(tmp_path))


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A file the user may not read. Root reads any file (CI runs as root): there the system's
    refusal is made by `os.open` itself, as it answers any other user."""
    path = tmp_path / "secret.py"
    path.write_text("def f(x): pass\n")
    path.chmod(0)
    if os.geteuid() == 0:
        real_open = os.open

        def refusing(name: object, *args: object, **kwargs: object) -> int:
            if os.fspath(name) == str(path):  # type: ignore[call-overload]
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(name, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "open", refusing)
    try:
        e = _file_error(str(path))
    finally:
        path.chmod(0o600)
    assert "permission denied" in e.message


def test_not_utf8(tmp_path: Path):
    path = tmp_path / "latin.py"
    path.write_bytes(b"def f(x):\n    return 'caf\xe9'\n")
    e = _file_error(str(path))
    assert "not valid UTF-8" in e.message and "0xe9" in e.message and "line 2" in e.message


def test_binary_file(tmp_path: Path):
    path = tmp_path / "blob.py"
    path.write_bytes(b"\x7fELF\x02\x01\x00\x00binary")
    e = _file_error(str(path))
    assert "not a Python source file" in e.message and "NUL" in e.message


def test_syntax_error_in_a_file(tmp_path: Path):
    path = tmp_path / "broken.py"
    path.write_text("x = 1\ndef f(:\n    pass\n")
    e = _file_error(str(path))
    assert e.line == 2 and e.col == 6
    assert "line 2, column 7" in e.message
    assert str(e).startswith(f"{path}:2: syntax error at line 2, column 7")


def test_discovery_error_pickles():
    e = DiscoveryError("syntax error", "a.py", 3, 4)
    again = pickle.loads(pickle.dumps(e))
    assert (again.message, again.path, again.line, again.col) == ("syntax error", "a.py", 3, 4)
    assert str(again) == "a.py:3: syntax error"


def test_main_function_and_the_default_for_a_file() -> None:
    from jaxscope.targets.discover import default_function

    info = discover_source("def f(x):\n    pass\n\n\ndef g(x):\n    pass\n\n\nJAXSCOPE_MAIN = 'g'\n")
    assert info.main == "g" and default_function(info).name == "g"
    info = discover_source("def f(x):\n    pass\n\n\ndef g(x):\n    pass\n\n\nJAXSCOPE_ARGS = {'f': 'f32[3]'}\n")
    assert info.main == "" and default_function(info).name == "f"  # the one function with inputs
    assert default_function(discover_source("def only(x):\n    pass\n")).name == "only"
    assert default_function(discover_source("def f(x):\n    pass\n\n\ndef g(x):\n    pass\n")) is None
    bad = discover_source("def f(x):\n    pass\n\n\nJAXSCOPE_MAIN = 'missing'\n")
    assert bad.main == "" and any("JAXSCOPE_MAIN" in w for w in bad.warnings)
    assert discover_source('"""Title.\n\nBody text."""\n').docstring == "Title.\n\nBody text."


def test_source_encodings_follow_pythons_rules(tmp_path: Path):
    """Issue 37.10: a UTF-16 file read as "binary data" (and ":0 ... (line None)" in the worker); a
    latin-1 comment: refused as Python refuses it, with the remedy; declared, it is read."""
    utf16 = tmp_path / "wide.py"
    utf16.write_bytes("def f(x):\n    return x\n".encode("utf-16"))
    e = _file_error(str(utf16))
    assert "UTF-16" in e.message and "save it as UTF-8" in e.message and e.line == 1
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# caf\xe9\ndef f(x):\n    return x\n")
    e = _file_error(str(latin))
    assert "Python refuses it too" in e.message and "coding: latin-1" in e.message and e.line == 1
    latin.write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\ndef f(x):\n    return x\n")
    assert [f.name for f in discover_file(str(latin)).functions] == ["f"]


def test_source_text_of_nodes_is_exact_and_linear(monkeypatch):
    """`ast.get_source_segment` splits the whole source on every call: listing a 2,000-function file
    took 17 s (4,000: 70 s). The collector cuts nodes out of lines split once, with the same result,
    also across CRLF, form feeds, a U+2028 inside a string and multi-byte characters."""
    import ast

    from jaxscope.targets.discover import _Collector

    source = 'x = 1\r\ny = "a\u2028b"\x0c\ndef f(a="é", *, b=(1,\n      2), **k) -> "ü":\n    """Doc."""\n    return a\n'
    collector = _Collector(source)
    for node in ast.walk(ast.parse(source)):
        if hasattr(node, "end_col_offset"):
            assert collector.text(node) == (ast.get_source_segment(source, node) or ast.unparse(node))
    monkeypatch.setattr(ast, "get_source_segment", lambda *a, **k: pytest.fail("quadratic helper used"))
    many = "".join(f"def g{i}(a, b={i}, *c: int) -> int:\n    return a\n" for i in range(300))
    info = discover_source(many, "many.py")
    assert len(info.functions) == 300 and info.functions[-1].params[1].default == "299"


def test_a_maker_entry_added_by_subscript_is_found():
    info = discover_source("def f(x):\n    return x\n\ndef make():\n    return (1,)\n\nJAXSCOPE_INPUTS = {}\nJAXSCOPE_INPUTS['f'] = make\n")
    assert info.get("f").maker == "make" and info.inputs_table


def test_targets_by_any_reference_are_listed_as_assigned():
    """Issue 47, 5: `train_step = jax.jit(other.step)`, an imported function a maker table names, and a
    partial of one: listed, marked assigned with what they stand for (their parameters are the worker's to find)."""
    source = (
        "import functools\nimport jax\nimport data\nimport steps\nfrom steps import loss\n\n"
        "train_step = jax.jit(steps.step)\nscaled = functools.partial(loss, scale=2)\nparams = steps.init(0)\n"
        "JAXSCOPE_INPUTS = {'train_step': data.make_inputs, 'loss': data.make_inputs}\n"
    )
    info = discover_source(source)
    assert [(f.name, f.kind, f.refers, f.maker) for f in info.functions] == [
        ("train_step", "assigned", "jax.jit(steps.step)", "data.make_inputs"),
        ("scaled", "assigned", "functools.partial(loss, scale=2)", None),
        ("loss", "assigned", "from steps import loss", "data.make_inputs"),
    ]
    assert info.get("train_step").required == ()  # type: ignore[union-attr]
