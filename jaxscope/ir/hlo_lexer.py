"""Pygments lexers for the two IR texts the HLO view shows: StableHLO (MLIR) and XLA HLO.

Line-local like `jaxscope.ir.jaxpr_lexer`: every rule matches within one line (a state pushed
inside a ``loc(...)`` is reset at the newline), so a view may lex any single line on its own.
Debug information is lexed as comments so a style can dim it: MLIR ``loc(...)`` and the
``#locN = loc(...)`` alias lines, and HLO ``metadata={...}``. Nothing ever yields an Error
token: unknown characters are Text. Nothing is registered with Pygments; import the classes.

Linear in a line's length, even on junk: a string or ``/*`` comment that never ends runs to the end
of the line, and no rule that may fail after scanning a long run is tried again inside that run
(a rule retried from every character of a long line is quadratic: seconds on a 50 kB line).
"""

from __future__ import annotations

import re
import sys

from pygments.lexer import RegexLexer, bygroups
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
)

_STRING = r'"(?:[^"\\\n]|\\.)*"'
_OPEN_STRING = r'"(?:[^"\\\n]|\\.)*'  # a string that never ends: to the end of the line
_ID_START = r"(?<![\w$.\-])"  # not inside a run of name characters: scan each run once
_TO_ROOT = f"#pop:{sys.maxsize}"  # back to root at the newline, however many "(" the line opened
_NUMBER = r"-?(?:0x[0-9A-Fa-f]+|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)"
_ID = r"[A-Za-z_][\w$.\-]*"

# tensor<4x8xf32>, tensor<4xcomplex<f32>>, !stablehlo.token, i32, f32, bf16, f8E4M3FN, index
_MLIR_TYPE = r"(?:tensor|memref|vector|tuple|complex)<[^<>\n]*(?:<[^<>\n]*>[^<>\n]*)*>"
_MLIR_SCALAR = r"\b(?:[su]?i\d+|f\d+|bf16|f8E\w+|f4E\w+|index|none)\b"

# f32[4]{0}, f32[3,4]{1,0:T(8,128)}, pred[], s32[<=8], token[]
_HLO_DTYPES = r"(?:pred|[su](?:2|4|8|16|32|64)|f8e\w+|f4e\w+|f16|bf16|f32|f64|c64|c128|token|opaque)"
_HLO_TYPE = rf"\b{_HLO_DTYPES}\[[^\[\]\n]*\](?:\{{[^{{}}\n]*\}})?"


class StableHloLexer(RegexLexer):  # type: ignore[misc]  # pygments has no type stubs here: RegexLexer is Any
    """Tokens: ``%ssa`` values, ``@symbols``, ``dialect.op`` names, ``tensor<...>`` types,
    ``name = value`` attributes, ``dense<...>`` literals, and ``loc(...)`` as comments."""

    name = "StableHLO"
    aliases: list[str] = []  # not registered
    filenames: list[str] = []
    flags = re.MULTILINE

    tokens = {
        "root": [
            (r"\n", Whitespace),
            (r"[ \t]+", Whitespace),
            (r"//.*$", Comment.Single),
            # #loc12 = loc(...)   -- a location alias, all debug info
            (r"^(#[\w$.\-]*)([^\S\n]*)(=)([^\S\n]*)(?=loc\()", bygroups(Comment.Preproc, Whitespace, Comment.Preproc, Whitespace)),
            (r"\bloc\(", Comment.Special, "loc"),
            (r"%[\w$.\-]+(?:[:#]\d+)?", Name.Variable),
            (r"\^[\w$.\-]+", Name.Label),
            (rf"@(?:{_STRING}|[\w$.\-]+)", Name.Function),
            (_MLIR_TYPE, Keyword.Type),
            (r"![\w$.]+(?:<[^<>\n]*>)?", Keyword.Type),
            (rf"{_ID_START}({_ID})([^\S\n]*)(=)(?!=)", bygroups(Name.Attribute, Whitespace, Operator)),
            (r'"[a-z_]\w*\.[\w.]+"(?=\()', Name.Function),  # generic form: "stablehlo.case"(...)
            (r"\b[a-z_]\w*\.[a-z_][\w.]*", Name.Function),  # stablehlo.add, func.call
            (r"\b(?:module|func|return|call|attributes|public|private|nested|cond|do|to|x)\b", Keyword),
            (r"\b(?:dense|dense_resource|array|sparse|unknown)\b", Keyword.Pseudo),
            (r"\b(?:true|false|unit)\b", Keyword.Constant),
            (_MLIR_SCALAR, Keyword.Type),
            (r"#[\w$.\-]+", Name.Constant),  # attribute aliases: #stablehlo.comparison_direction
            (r"\b[A-Z][A-Z0-9_]*\b", Name.Constant),  # LT, SIGNED, DEFAULT
            (rf"(?<![\w.]){_NUMBER}(?![\w.])", Number),
            (r"\b(?:inf|nan)\b", Number),
            (_STRING, String),
            (_OPEN_STRING, String),
            (r"->", Operator),
            (_ID, Name),
            (r"[{}()\[\]<>,:;]", Punctuation),
            (r"[=+*/\-]", Operator),
            (r".", Text),
        ],
        "loc": [
            (r"\n", Whitespace, _TO_ROOT),
            (_STRING, Comment.Special),
            (r"\(", Comment.Special, "#push"),
            (r"\)", Comment.Special, "#pop"),
            (r'[^()"\n]+', Comment.Special),
            (_OPEN_STRING, Comment.Special),
        ],
    }


class HloLexer(RegexLexer):  # type: ignore[misc]  # pygments has no type stubs here: RegexLexer is Any
    """Tokens: ``HloModule``/``ENTRY``/``ROOT``, computation and instruction names, shapes with
    layouts (``f32[4]{0}``), opcodes, ``name=value`` attributes, the stack-frame tables, and
    ``metadata={...}`` and ``/*index=5*/`` as comments."""

    name = "HLO"
    aliases: list[str] = []  # not registered
    filenames: list[str] = []
    flags = re.MULTILINE

    tokens = {
        "root": [
            (r"\n", Whitespace),
            (r"[ \t]+", Whitespace),
            (r"//.*$", Comment.Single),
            (r"/\*.*?(?:\*/|$)", Comment.Multiline),
            (r'\bmetadata=\{(?:[^{}"\n]|"(?:[^"\\\n]|\\.)*")*\}', Comment.Special),
            (r"^(HloModule)([^\S\n]+)([\w.\-]+)", bygroups(Keyword.Namespace, Whitespace, Name.Namespace)),
            (r"^(?:FileNames|FunctionNames|FileLocations|StackFrames)(?=[ \t]*$)", Keyword.Namespace),
            (r"^(ENTRY)([^\S\n]+)(%?[\w.\-]+)", bygroups(Keyword, Whitespace, Name.Label)),
            (r"^(%?[\w.\-]+)(?=[^\S\n]+\()", Name.Label),  # a computation header
            (r"\b(?:ENTRY|ROOT)\b", Keyword),
            (r"(%[\w.\-]+)([^\S\n]*)(=)(?!=)", bygroups(Name.Variable, Whitespace, Operator)),
            (_HLO_TYPE, Keyword.Type),
            (rf"\b{_HLO_DTYPES}\b", Keyword.Type),
            (r"\b[a-z][\w\-]*(?=\()", Name.Function),  # the opcode: add(...), get-tuple-element(...)
            (r"%[\w.\-]+", Name.Variable),
            (r"([a-z_][\w]*)(=)", bygroups(Name.Attribute, Operator)),
            (r"(?<![\w.\-])\b[\w.\-]+(?=:[^\S\n])", Name.Variable),  # a parameter in a computation header
            (r"\bk[A-Z]\w*\b", Name.Constant),  # kLoop, kInput, kOutput, kCustom
            (r"\b(?:true|false)\b", Keyword.Constant),
            (r"\b[A-Z][A-Z0-9_]*\b", Name.Constant),  # LT, SIGNED
            (r"-?\b(?:inf|nan)\b", Number),
            (rf"(?<![\w.]){_NUMBER}(?![\w.])", Number),
            (_STRING, String),
            (_OPEN_STRING, String),
            (r"->", Operator),
            (r"[A-Za-z_][\w.\-]*", Name),
            (r"[{}()\[\]<>,:;]", Punctuation),
            (r"[=+*/\-]", Operator),
            (r".", Text),
        ],
    }
