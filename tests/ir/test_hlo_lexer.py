"""Pygments lexers for StableHLO and HLO text (jaxscope.ir.hlo_lexer), on the golden texts."""

from __future__ import annotations

import pathlib

import pytest
from pygments.token import Comment, Error, Keyword, Name, Number, Operator, String, Token

from jaxscope.ir.hlo_lexer import HloLexer, StableHloLexer
from tests.conftest import merge_tokens

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "goldens" / "hlo"
STABLE = sorted(GOLDENS.glob("*.stablehlo.mlir"))
HLO = sorted(GOLDENS.glob("*.hlo.txt"))


def lex(lexer_cls, text: str) -> list[tuple[object, str]]:
    lexer = lexer_cls(stripnl=False, ensurenl=False)
    return [(t, v) for t, v in lexer.get_tokens(text)]


def kind(tokens: list[tuple[object, str]], value: str) -> object:
    """The token type of the first token whose text is `value`."""
    hits = [t for t, v in tokens if v == value]
    assert hits, (value, tokens)
    return hits[0]


def test_stablehlo_op_line():
    line = "    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x3xf32> loc(#loc24)"
    toks = lex(StableHloLexer, line)
    assert kind(toks, "%1") is Name.Variable and kind(toks, "%cst") is Name.Variable
    assert kind(toks, "stablehlo.broadcast_in_dim") is Name.Function
    assert kind(toks, "tensor<f32>") is Keyword.Type and kind(toks, "tensor<4x3xf32>") is Keyword.Type
    assert kind(toks, "dims") is Name.Attribute and kind(toks, "->") is Operator
    assert kind(toks, "loc(") in Comment and kind(toks, "#loc24") in Comment
    assert "".join(v for _, v in toks) == line


def test_stablehlo_module_func_constants_and_aliases():
    toks = lex(StableHloLexer, "module @jit_f attributes {mhlo.num_partitions = 1 : i32} {")
    assert kind(toks, "module") is Keyword and kind(toks, "@jit_f") is Name.Function
    assert kind(toks, "mhlo.num_partitions") is Name.Attribute and kind(toks, "i32") is Keyword.Type
    toks = lex(StableHloLexer, "    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32> loc(#loc16)")
    assert kind(toks, "dense") in Keyword and kind(toks, "2.000000e+00") is Number
    toks = lex(StableHloLexer, '    %2 = "stablehlo.case"(%1) ({')
    assert kind(toks, '"stablehlo.case"') is Name.Function
    toks = lex(StableHloLexer, "    %7 = stablehlo.compare  LT, %iterArg, %c_2,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>")
    assert kind(toks, "LT") is Name.Constant and kind(toks, "%iterArg") is Name.Variable
    toks = lex(StableHloLexer, '  func.func public @main(%arg0: tensor<4xf32> loc("x")) -> (tensor<4xf32> {jax.result_info = "result"}) {')
    assert kind(toks, "func.func") is Name.Function and kind(toks, '"x"') in Comment
    assert kind(toks, '"result"') is String
    toks = lex(StableHloLexer, "#loc27 = loc(callsite(#loc15 at #loc16))")
    assert kind(toks, "#loc27") in Comment and all(t in Comment or t in Token.Text for t, _ in toks)
    toks = lex(StableHloLexer, '#loc41 = loc("jit(f)/layer1/dot_general"(#loc27))')
    assert all(t in Comment or t in Token.Text for t, _ in toks)  # nested parens stay in the loc


def test_stablehlo_loc_state_ends_at_the_line():
    toks = lex(StableHloLexer, "%0 = stablehlo.sine %a loc(callsite(#a at\n%1 = stablehlo.cosine %0 : tensor<f32>")
    assert kind(toks, "stablehlo.cosine") is Name.Function and kind(toks, "%1") is Name.Variable


def test_hlo_instruction_line():
    line = (
        "  ROOT %sine_add_fusion = f32[4]{0} fusion(%x.1), kind=kLoop, calls=%fused_computation, "
        'metadata={op_name="jit(mixed)/jit(inner)/add" stack_frame_id=7}'
    )
    toks = lex(HloLexer, line)
    assert kind(toks, "ROOT") is Keyword and kind(toks, "%sine_add_fusion") is Name.Variable
    assert kind(toks, "f32[4]{0}") is Keyword.Type and kind(toks, "fusion") is Name.Function
    assert kind(toks, "kind") is Name.Attribute and kind(toks, "kLoop") is Name.Constant
    assert kind(toks, "%fused_computation") is Name.Variable
    assert kind(toks, 'metadata={op_name="jit(mixed)/jit(inner)/add" stack_frame_id=7}') in Comment
    assert "".join(v for _, v in toks) == line


def test_hlo_headers_tables_tuples_and_comments():
    toks = lex(HloLexer, "HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[8,16]{1,0})->f32[]}")
    assert kind(toks, "HloModule") is Keyword.Namespace and kind(toks, "jit_f") is Name.Namespace
    assert kind(toks, "true") is Keyword.Constant and kind(toks, "f32[8,16]{1,0}") is Keyword.Type
    toks = lex(HloLexer, "ENTRY %main.6 (x.1: f32[3,4]) -> (f32[4], f32[3,4]) {")
    assert kind(toks, "ENTRY") is Keyword and kind(toks, "%main.6") is Name.Label
    toks = lex(HloLexer, "%fused_computation (param_0: f32[3,4], param_1.1: s32[]) -> f32[3,4] {")
    assert kind(toks, "%fused_computation") is Name.Label and kind(toks, "s32[]") is Keyword.Type
    toks = lex(HloLexer, "StackFrames")
    assert toks == [(Keyword.Namespace, "StackFrames")]
    toks = lex(HloLexer, "1 {file_location_id=1 parent_frame_id=1}")
    assert kind(toks, "file_location_id") is Name.Attribute and kind(toks, "1") is Number
    toks = lex(HloLexer, "  %t = (s32[], f32[4]{0}) tuple(%a, /*index=1*/%b), index=0")
    assert kind(toks, "/*index=1*/") in Comment and kind(toks, "tuple") is Name.Function
    toks = lex(HloLexer, "  %lt.0 = pred[] compare(%p, %q), direction=LT")
    assert kind(toks, "pred[]") is Keyword.Type and kind(toks, "LT") is Name.Constant
    toks = lex(HloLexer, "  %c = f32[] constant(-inf)")
    assert kind(toks, "-inf") is Number


@pytest.mark.parametrize("path", STABLE + HLO, ids=lambda p: p.name)
def test_goldens_lex_without_errors_and_line_by_line_equals_whole(path):
    text = path.read_text(encoding="utf-8")
    cls = StableHloLexer if path.suffix == ".mlir" else HloLexer
    whole = lex(cls, text)
    assert "".join(v for _, v in whole) == text
    assert not [v for t, v in whole if t is Error]
    per_line = [tok for line in text.split("\n") for tok in lex(cls, line) + [(Token.Text.Whitespace, "\n")]][:-1]
    assert merge_tokens(per_line) == merge_tokens(whole)  # line-local: a view can lex any line on its own


def test_big_texts_and_junk_never_give_error_tokens():
    stable = "\n".join(p.read_text(encoding="utf-8") for p in STABLE) * 30
    hlo = "\n".join(p.read_text(encoding="utf-8") for p in HLO) * 30
    assert len(stable) + len(hlo) > 1_000_000
    for cls, text in ((StableHloLexer, stable), (HloLexer, hlo)):
        assert not any(t is Error for t, _ in lex(cls, text))
    junk = 'loc(( "unterminated \\ }{][ <<>> ~`!$^&|? é \x00 /* no end metadata={op_name="'
    for cls in (StableHloLexer, HloLexer):
        toks = lex(cls, junk)
        assert "".join(v for _, v in toks) == junk and not any(t is Error for t, _ in toks)
